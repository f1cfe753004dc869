/**
 * The safetensors writer (docs/io.md#safetensors): tensors laid out contiguously in the order
 * given, header padded with spaces so the byte buffer starts at a multiple of 8, values encoded
 * little-endian in the requested dtype (float64 → F32/F16/BF16 rounds to nearest, ties to even).
 */

import { encodeBf16, encodeF16 } from "../core/halfFloat.js";
import { fmtShape, fmtValue, mustBe } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { ConfigError, ShapeError } from "../errors.js";
import { writeFileBytes } from "./_internal/files.js";
import { DTYPE_BYTES, TENSOR_DTYPES, type TensorDtype } from "./tensorTypes.js";

/** A tensor to write: a dtype, a shape and row-major values (booleans as 0/1). */
export interface TensorToWrite {
  /** The storage dtype. */
  readonly dtype: TensorDtype;
  /** The shape, outermost dimension first. */
  readonly shape: readonly number[];
  /** Row-major values; length must equal the product of `shape`. */
  readonly data: ArrayLike<number>;
}

/** Tensors to write, by name, in layout order (a Map, e.g. from a reader, or a plain object). */
export type TensorsToWrite =
  | ReadonlyMap<string, TensorToWrite>
  | Readonly<Record<string, TensorToWrite>>;

/** The value range of the narrow and unsigned integer dtypes (U64 within 2^53: exact in float64). */
const INT_RANGE = {
  I16: [-(2 ** 15), 2 ** 15 - 1],
  I8: [-128, 127],
  U64: [0, 2 ** 53],
  U32: [0, 2 ** 32 - 1],
  U16: [0, 2 ** 16 - 1],
} as const;

function checkValue(fn: string, name: string, dtype: TensorDtype, v: number, i: number): void {
  const bad = (rule: string): never => {
    throw new ConfigError(
      fn,
      `tensors.${name}`,
      mustBe(fn, `tensors.${name}`, rule, `${fmtValue(v)} at flat index ${i}`),
    );
  };
  if (typeof v !== "number") bad("numbers");
  switch (dtype) {
    case "BOOL":
      if (v !== 0 && v !== 1) bad("0 or 1 for dtype BOOL");
      break;
    case "U8":
      if (!Number.isInteger(v) || v < 0 || v > 255) bad("integers in [0, 255] for dtype U8");
      break;
    case "I32":
      if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31)
        bad("integers in [−2^31, 2^31) for dtype I32");
      break;
    case "I64":
      if (!Number.isInteger(v) || Math.abs(v) > 2 ** 53) bad("integers within ±2^53 for dtype I64");
      break;
    case "I16":
    case "I8":
    case "U64":
    case "U32":
    case "U16": {
      const [lo, hi] = INT_RANGE[dtype];
      if (!Number.isInteger(v) || v < lo || v > hi)
        bad(`integers in [${lo}, ${hi}] for dtype ${dtype}`);
      break;
    }
    default:
  }
}

function put(view: DataView, dtype: TensorDtype, off: number, v: number): void {
  switch (dtype) {
    case "F64":
      view.setFloat64(off, v, true);
      break;
    case "F32":
      view.setFloat32(off, v, true);
      break;
    case "F16":
      view.setUint16(off, encodeF16(v), true);
      break;
    case "BF16":
      view.setUint16(off, encodeBf16(v), true);
      break;
    case "BOOL":
    case "U8":
      view.setUint8(off, v);
      break;
    case "I32":
      view.setInt32(off, v, true);
      break;
    case "I64":
      view.setBigInt64(off, BigInt(v), true);
      break;
    case "I16":
      view.setInt16(off, v, true);
      break;
    case "I8":
      view.setInt8(off, v);
      break;
    case "U64":
      view.setBigUint64(off, BigInt(v), true);
      break;
    case "U32":
      view.setUint32(off, v, true);
      break;
    case "U16":
      view.setUint16(off, v, true);
      break;
  }
}

/**
 * Encode tensors as the bytes of a safetensors file.
 *
 * Format: u64 LE header length N · N bytes of JSON header (space-padded so 8 + N ≡ 0 mod 8) ·
 * the tensors' bytes, contiguous in the order given.
 *
 * @param tensors - The tensors by name; `__metadata__` is reserved.
 * @param metadata - Optional string map stored as `__metadata__`.
 * @returns The file bytes.
 * @throws {ShapeError} E_SHAPE when a shape is not a list of non-negative integers or the data
 *   length differs from its product.
 * @throws {ConfigError} E_CONFIG when a name is reserved, a metadata value is not a string, or a
 *   value does not fit an integer/BOOL dtype.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown dtype.
 * @derivation docs/io.md#safetensors
 * @enforcedBy test/io/safetensors.roundtrip.test.ts > encodeSafetensors > golden: byte layout of a one-tensor file
 * @since 0.1.0
 */
export function encodeSafetensors(
  tensors: TensorsToWrite,
  metadata?: Readonly<Record<string, string>>,
): Uint8Array {
  return encodeAs("encodeSafetensors", tensors, metadata);
}

function encodeAs(
  fn: string,
  tensors: TensorsToWrite,
  metadata: Readonly<Record<string, string>> | undefined,
): Uint8Array {
  const list: [string, TensorToWrite][] =
    tensors instanceof Map
      ? [...tensors]
      : Object.entries(tensors as Readonly<Record<string, TensorToWrite>>);
  const header: Record<string, unknown> = {};
  if (metadata !== undefined) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== "string") {
        throw new ConfigError(
          fn,
          "metadata",
          mustBe(
            fn,
            "metadata",
            "a map of string values",
            `${fmtValue(v)} at key ${JSON.stringify(k)}`,
          ),
        );
      }
    }
    header.__metadata__ = metadata;
  }
  let offset = 0;
  for (const [name, t] of list) {
    const arg = `tensors.${name}`;
    if (name === "__metadata__") {
      throw new ConfigError(
        fn,
        arg,
        mustBe(
          fn,
          "tensor name",
          "anything but the reserved key __metadata__",
          JSON.stringify(name),
        ),
      );
    }
    const dtype = oneOf(fn, `${arg}.dtype`, t.dtype, TENSOR_DTYPES);
    const shape = t.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new ShapeError(
        fn,
        arg,
        mustBe(fn, `${arg}.shape`, "a list of non-negative integers", fmtValue(shape)),
      );
    }
    const count = shape.reduce((p: number, d: number) => p * d, 1);
    if (t.data.length !== count) {
      throw new ShapeError(
        fn,
        arg,
        mustBe(
          fn,
          `${arg}.data`,
          `of length ${count} (the product of shape ${fmtShape(shape)})`,
          `length ${t.data.length}`,
        ),
      );
    }
    for (let i = 0; i < count; i++) checkValue(fn, name, dtype, t.data[i] as number, i);
    const end = offset + count * DTYPE_BYTES[dtype];
    Object.defineProperty(header, name, {
      value: { dtype, shape: [...shape], data_offsets: [offset, end] },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    offset = end;
  }
  let json = JSON.stringify(header);
  let headerBytes = new TextEncoder().encode(json);
  const pad = (8 - ((8 + headerBytes.length) % 8)) % 8;
  if (pad > 0) {
    json += " ".repeat(pad);
    headerBytes = new TextEncoder().encode(json);
  }
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const [, t] of list) {
    const size = DTYPE_BYTES[t.dtype];
    for (let i = 0; i < t.data.length; i++) put(view, t.dtype, at + i * size, t.data[i] as number);
    at += t.data.length * size;
  }
  return out;
}

/**
 * Write tensors to a safetensors file (overwriting it), readable by {@link readSafetensors} and by
 * the reference `safetensors` library.
 *
 * Format: as {@link encodeSafetensors}. Supported dtypes: F64, F32, BF16, F16, BOOL, U8, I64, I32.
 *
 * @param path - The file to write; its directory must exist.
 * @param tensors - The tensors by name, in layout order; `__metadata__` is reserved.
 * @param metadata - Optional string map stored as `__metadata__`.
 * @returns Nothing; the file holds the encoded tensors.
 * @throws {ShapeError} E_SHAPE when a data length differs from the product of its shape.
 * @throws {ConfigError} E_CONFIG when a name is reserved, metadata is not strings, or a value
 *   does not fit an integer/BOOL dtype.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown dtype.
 * @throws {IoError} E_IO when the file cannot be written, or `path` is not a regular file (an
 *   existing FIFO, device or directory is rejected without blocking).
 * @derivation docs/io.md#safetensors
 * @enforcedBy test/io/safetensors.roundtrip.test.ts > readSafetensors > golden: every dtype round-trips through writeSafetensors
 * @enforcedBy test/io/safetensors.roundtrip.test.ts > writeSafetensors > rejects: a data length that differs from the shape
 * @since 0.1.0
 */
export function writeSafetensors(
  path: string,
  tensors: TensorsToWrite,
  metadata?: Readonly<Record<string, string>>,
): void {
  const fn = "writeSafetensors";
  writeFileBytes(fn, path, encodeAs(fn, tensors, metadata));
}
