/**
 * The safetensors writer (docs/io.md#safetensors): tensors laid out contiguously in the order
 * given, header padded with spaces so the byte buffer starts at a multiple of 8, values encoded
 * little-endian in the requested dtype (float64 → F32/F16/BF16 rounds to nearest, ties to even).
 */

import { encodeBf16, encodeF16 } from "../core/halfFloat.js";
import { fmtShape, fmtValue, mustBe } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { isNumericTypedArray } from "../core/tensor.js";
import { describeInput, requireObject, requirePath } from "../core/validate.js";
import { ConfigError, fail, IoError, ShapeError } from "../errors.js";
import { LITTLE_ENDIAN_HOST } from "./_internal/endian.js";
import { openReplacement, writeFileChunks } from "./_internal/writeFile.js";
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
    throw fail(ConfigError, fn, `tensors.${name}`, rule, `${fmtValue(v)} at flat index ${i}`);
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

/**
 * {@link checkValue} over a tensor's data; a typed array of floats needs no check for a float
 * dtype (every element is a number), and a Uint8Array for BOOL only the 0/1 test.
 */
function checkValues(fn: string, name: string, dtype: TensorDtype, data: ArrayLike<number>): void {
  const isFloat = dtype === "F64" || dtype === "F32" || dtype === "F16" || dtype === "BF16";
  if (isFloat && isNumericTypedArray(data)) return;
  if (dtype === "BOOL" && data instanceof Uint8Array) {
    for (let i = 0; i < data.length; i++)
      if ((data[i] as number) > 1) checkValue(fn, name, dtype, data[i] as number, i);
    return;
  }
  for (let i = 0; i < data.length; i++) checkValue(fn, name, dtype, data[i] as number, i);
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

/** A validated file: its header bytes (length prefix included) and the tensors in layout order. */
interface PlannedFile {
  readonly head: Uint8Array;
  readonly list: readonly (readonly [string, TensorToWrite])[];
  /** Bytes of the whole file. */
  readonly size: number;
}

function planFile(
  fn: string,
  tensors: TensorsToWrite,
  metadata: Readonly<Record<string, string>> | undefined,
  reserve?: Readonly<Record<string, string>>,
): PlannedFile {
  if (!(tensors instanceof Map))
    requireObject(
      fn,
      "tensors",
      tensors,
      "a Map or an object of tensor name → {dtype, shape, data}",
    );
  if (metadata !== undefined) requireObject(fn, "metadata", metadata, "an object of string values");
  const list: [string, TensorToWrite][] =
    tensors instanceof Map
      ? [...tensors]
      : Object.entries(tensors as Readonly<Record<string, TensorToWrite>>);
  const header: Record<string, unknown> = {};
  if (metadata !== undefined) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== "string") {
        throw fail(
          ConfigError,
          fn,
          "metadata",
          "a map of string values",
          `${fmtValue(v)} at key ${JSON.stringify(k)}`,
        );
      }
    }
    header.__metadata__ = metadata;
  }
  for (const [name, t] of list) {
    const arg = `tensors.${name}`;
    checkName(fn, name);
    requireObject(fn, arg, t, "a tensor {dtype, shape, data}", ["dtype", "shape", "data"]);
    const d: unknown = t.data;
    if (!isNumericTypedArray(d) && !Array.isArray(d))
      throw fail(
        ShapeError,
        fn,
        `${arg}.data`,
        "an array or typed array of numbers",
        describeInput(d),
      );
    const dtype = oneOf(fn, `${arg}.dtype`, t.dtype, TENSOR_DTYPES);
    const shape = checkShape(fn, arg, t.shape);
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
    checkValues(fn, name, dtype, t.data);
  }
  const { head, size } = layoutOf(
    list.map(([name, t]) => [name, t.dtype, t.shape] as const),
    header,
    reserve,
  );
  return { head, list, size };
}

/** Whether `shape` lists integers ≥ 0 at every index (a hole is not one). */
function isSizeList(shape: unknown): boolean {
  if (!Array.isArray(shape)) return false;
  for (let i = 0; i < shape.length; i++) {
    const d: unknown = shape[i];
    if (!Number.isSafeInteger(d) || (d as number) < 0) return false;
  }
  return true;
}

function checkName(fn: string, name: string): void {
  if (name === "__metadata__") {
    throw new ConfigError(
      fn,
      `tensors.${name}`,
      mustBe(fn, "tensor name", "anything but the reserved key __metadata__", JSON.stringify(name)),
    );
  }
}

function checkShape(fn: string, arg: string, shape: readonly number[]): readonly number[] {
  if (!isSizeList(shape)) {
    throw new ShapeError(
      fn,
      arg,
      mustBe(fn, `${arg}.shape`, "a list of non-negative integers", fmtValue(shape)),
    );
  }
  return shape;
}

/** A file's layout: the header bytes, each tensor's byte offset in the file, the file's size. */
interface Layout {
  readonly head: Uint8Array;
  readonly at: ReadonlyMap<string, number>;
  readonly size: number;
}

/**
 * The header of tensors laid out in order (dtypes and shapes already checked), after the
 * `__metadata__` entry of `header` if any. With `reserve`, the header is padded with spaces to the
 * length it would have with `reserve` as its metadata (when that is longer): a writer that learns
 * a metadata value only after the tensors' bytes (the loss of `loss --out`) then knows where they
 * go before it has the value, and a writer that knows it from the start gives the same bytes.
 */
function layoutOf(
  list: readonly (readonly [string, TensorDtype, readonly number[]])[],
  header: Record<string, unknown>,
  reserve: Readonly<Record<string, string>> | undefined,
): Layout {
  let offset = 0;
  const at = new Map<string, number>();
  for (const [name, dtype, shape] of list) {
    const count = shape.reduce((p: number, d: number) => p * d, 1);
    const end = offset + count * DTYPE_BYTES[dtype];
    Object.defineProperty(header, name, {
      value: { dtype, shape: [...shape], data_offsets: [offset, end] },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    at.set(name, offset);
    offset = end;
  }
  let json = JSON.stringify(header);
  if (reserve !== undefined) {
    const wide = JSON.stringify({ ...header, __metadata__: reserve }).length;
    if (wide > json.length) json += " ".repeat(wide - json.length);
  }
  let headerBytes = new TextEncoder().encode(json);
  const pad = (8 - ((8 + headerBytes.length) % 8)) % 8;
  if (pad > 0) {
    json += " ".repeat(pad);
    headerBytes = new TextEncoder().encode(json);
  }
  const head = new Uint8Array(8 + headerBytes.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  head.set(headerBytes, 8);
  const base = head.length;
  return { head, at: new Map([...at].map(([k, v]) => [k, base + v])), size: base + offset };
}

/**
 * The typed-array classes whose bytes are a dtype's file bytes on a little-endian machine: data of
 * that class is written as it lies in memory, without a per-element encode.
 */
const SAME_BYTES: Partial<
  Record<TensorDtype, readonly (new (...a: never[]) => ArrayBufferView)[]>
> = {
  F64: [Float64Array],
  F32: [Float32Array],
  I32: [Int32Array],
  I16: [Int16Array],
  I8: [Int8Array],
  U32: [Uint32Array],
  U16: [Uint16Array],
  U8: [Uint8Array],
  BOOL: [Uint8Array],
};

/** The file bytes of `t` as a view of its own memory, or null when they need encoding. */
function sameBytes(t: TensorToWrite): Uint8Array | null {
  if (!LITTLE_ENDIAN_HOST) return null;
  const classes = SAME_BYTES[t.dtype] ?? [];
  const d = t.data as unknown as ArrayBufferView;
  if (!classes.some((C) => d instanceof C)) return null;
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/** Elements encoded per chunk when a tensor's bytes need encoding (a 1 MiB–8 MiB buffer). */
const CHUNK = 1 << 20;

/**
 * The tensors' bytes, in layout order, as a sequence of chunks: a tensor whose memory already
 * holds its file bytes is one view of it; any other is encoded CHUNK elements at a time into one
 * reused buffer (so each chunk must be consumed before the next is asked for). A float64 array
 * written as F32 goes through a Float32Array (the same round-to-nearest-even as setFloat32).
 */
function* tensorChunks(list: PlannedFile["list"]): Generator<Uint8Array> {
  let buf = new Uint8Array(0);
  for (const [, t] of list) {
    const direct = sameBytes(t);
    if (direct !== null) {
      yield direct;
      continue;
    }
    const size = DTYPE_BYTES[t.dtype];
    const n = t.data.length;
    for (let from = 0; from < n; from += CHUNK) {
      const count = Math.min(CHUNK, n - from);
      if (buf.length < count * size) buf = new Uint8Array(CHUNK * 8);
      const bytes = buf.subarray(0, count * size);
      if (t.dtype === "F32" && LITTLE_ENDIAN_HOST) {
        const f32 = new Float32Array(bytes.buffer, bytes.byteOffset, count);
        for (let i = 0; i < count; i++) f32[i] = t.data[from + i] as number;
      } else {
        const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        for (let i = 0; i < count; i++) put(view, t.dtype, i * size, t.data[from + i] as number);
      }
      yield bytes;
    }
  }
}

function encodeAs(
  fn: string,
  tensors: TensorsToWrite,
  metadata: Readonly<Record<string, string>> | undefined,
): Uint8Array {
  const file = planFile(fn, tensors, metadata);
  const out = new Uint8Array(file.size);
  out.set(file.head, 0);
  let at = file.head.length;
  for (const chunk of tensorChunks(file.list)) {
    out.set(chunk, at);
    at += chunk.length;
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
 * @param options - `reserveMetadata`: pad the header to the length it would have with this
 *   metadata (same keys, the widest values), so that the tensors start where a
 *   {@link openSafetensorsRows} writer reserving the same puts them.
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
  options: WriteSafetensorsOptions = {},
): void {
  requirePath("writeSafetensors", "path", path);
  requireObject("writeSafetensors", "options", options, "an options object");
  const fn = "writeSafetensors";
  // Streamed: the header, then each tensor's bytes straight from its memory (or encoded a chunk
  // at a time), never the whole file in memory.
  const file = planFile(fn, tensors, metadata, checkReserve(fn, options, metadata));
  writeFileChunks(
    fn,
    path,
    (function* () {
      yield file.head;
      yield* tensorChunks(file.list);
    })(),
  );
}

/** Options of {@link writeSafetensors}. */
export interface WriteSafetensorsOptions {
  /** Metadata whose header length to reserve (see {@link layoutOf}). */
  readonly reserveMetadata?: Readonly<Record<string, string>>;
}

function checkReserve(
  fn: string,
  options: WriteSafetensorsOptions,
  metadata: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  const r = options.reserveMetadata;
  if (r === undefined) return undefined;
  const keys = Object.keys(metadata ?? {});
  const same =
    keys.length === Object.keys(r).length &&
    keys.every((k) => typeof r[k] === "string" && Object.hasOwn(r, k));
  if (!same) {
    throw fail(
      ConfigError,
      fn,
      "options.reserveMetadata",
      "a map of string values with the metadata's keys",
      fmtValue(Object.keys(r)),
    );
  }
  return r;
}

/** A `[rows, cols]` F64 or BOOL tensor of a file written by rows. */
export interface RowTensorLayout {
  readonly dtype: "F64" | "BOOL";
  readonly shape: readonly [number, number];
}

/** A safetensors file written a block of rows at a time ({@link openSafetensorsRows}). */
export interface SafetensorsRowsWriter {
  /**
   * Write rows [firstRow, firstRow + data.length / cols) of tensor `name`: a Float64Array for F64,
   * a Uint8Array of 0/1 for BOOL (the bytes as they lie in memory).
   */
  writeRows(name: string, firstRow: number, data: Float64Array | Uint8Array): void;
  /** Write the header with `metadata` (within the reserved length) and move the file into place. */
  finish(metadata: Readonly<Record<string, string>>): void;
  /** Delete the partial file; the path keeps what it held. */
  abort(): void;
}

/**
 * Open a safetensors file whose `[rows, cols]` tensors are written a block of rows at a time, in
 * any order, and whose metadata comes last: the layout is fixed up front with the header's length
 * reserved for `reserveMetadata` (as {@link writeSafetensors} with the same option lays it out, so
 * both give the same bytes), the rows go to their offsets, and `finish` writes the header and
 * renames the file onto `path` (openReplacement: an error or `abort` leaves `path` as it was).
 * Memory: the caller's blocks only, never the whole file. @internal
 *
 * @throws {IoError} E_IO when `path` is not a regular file path or cannot be written.
 */
export function openSafetensorsRows(
  path: string,
  layout: Readonly<Record<string, RowTensorLayout>>,
  reserveMetadata: Readonly<Record<string, string>>,
): SafetensorsRowsWriter {
  const fn = "writeSafetensors";
  if (!LITTLE_ENDIAN_HOST) {
    throw new IoError(fn, "path", `${fn}: row writing needs a little-endian machine`);
  }
  const list = Object.entries(layout).map(([name, t]) => [name, t.dtype, t.shape] as const);
  for (const [name, , shape] of list) {
    checkName(fn, name);
    checkShape(fn, `tensors.${name}`, shape);
  }
  const fixed = layoutOf(list, {}, reserveMetadata);
  const file = openReplacement(fn, path);
  return {
    writeRows(name, firstRow, data) {
      const t = layout[name] as RowTensorLayout;
      const at = (fixed.at.get(name) as number) + firstRow * t.shape[1] * DTYPE_BYTES[t.dtype];
      file.write(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    },
    finish(metadata) {
      const head = layoutOf(list, { __metadata__: metadata }, reserveMetadata).head;
      if (head.length !== fixed.head.length) {
        file.abort();
        throw new Error(`${fn}: internal error: the metadata outgrew the reserved header`);
      }
      file.write(head, 0);
      file.commit();
    },
    abort() {
      file.abort();
    },
  };
}
