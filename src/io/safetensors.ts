/**
 * A from-scratch reader of the safetensors format (docs/io.md#safetensors): an 8-byte
 * little-endian u64 header length N, N bytes of UTF-8 JSON header
 * `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: {str: str}}`, then the
 * byte buffer (little-endian, row-major; offsets relative to its start). The file is hostile until
 * proven otherwise: every length is checked against the bytes that exist before it is used, the
 * tensors must tile the buffer exactly (no hole, no overlap), and every failure is an IoError.
 * Pure (no `node:` import): the file reader is ./readSafetensors.ts.
 */

import { bf16DecodeTable, f16DecodeTable } from "../core/halfFloat.js";
import { fmtShape, fmtValue } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { requireBytes, requireString } from "../core/validate.js";
import type { IoError } from "../errors.js";
import { LITTLE_ENDIAN_HOST } from "./_internal/endian.js";
import { decodeUtf8, fmtBytes, ioError } from "./_internal/ioError.js";
import {
  checkTopLevelKeys,
  elementBudget,
  takeElements,
  tooManyTensors,
} from "./_internal/limits.js";
import { parseStrictJson } from "./_internal/strictJson.js";
import {
  DEFAULT_MAX_ELEMENTS,
  DTYPE_BYTES,
  MAX_FILE_TENSORS,
  MAX_SAFETENSORS_HEADER_BYTES,
  type NamedTensor,
  TENSOR_DTYPES,
  type TensorDtype,
  type TensorSet,
} from "./tensorTypes.js";

/** The extensions the reader registry reads as safetensors (./readers.ts). @internal */
export const SAFETENSORS_EXTENSIONS: readonly string[] = Object.freeze([".safetensors"]);

interface Entry {
  readonly name: string;
  readonly dtype: TensorDtype;
  readonly shape: readonly number[];
  readonly count: number;
  readonly begin: number;
  readonly end: number;
}

/** A validated header: the entries in header order and the metadata. @internal */
export interface Header {
  readonly entries: readonly Entry[];
  readonly metadata: Readonly<Record<string, string>>;
}

/** Builds the IoError of one rule. @internal */
export type Fail = (arg: string, rule: string, actual: string) => IoError;

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function isIndex(x: unknown): x is number {
  return typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
}

/** Validate the 8-byte header length against the file size; returns N. @internal */
export function headerLength(fail: Fail, first8: Uint8Array, fileSize: number): number {
  const n = new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true);
  const room = fileSize - 8;
  if (n > BigInt(MAX_SAFETENSORS_HEADER_BYTES)) {
    throw fail(
      "header length",
      `at most ${MAX_SAFETENSORS_HEADER_BYTES} bytes (100 MB)`,
      `${n} bytes`,
    );
  }
  if (n > BigInt(room)) {
    throw fail("header length", `at most the file size − 8 = ${room} bytes`, `${n} bytes`);
  }
  if (n < 2n) throw fail("header length", "at least 2 bytes (the JSON object {})", `${n} bytes`);
  return Number(n);
}

function parseMetadata(fail: Fail, v: unknown): Record<string, string> {
  if (!isPlainObject(v)) throw fail("__metadata__", "an object of string values", fmtValue(v));
  const out: Record<string, string> = {};
  for (const [k, s] of Object.entries(v)) {
    if (typeof s !== "string") {
      throw fail(
        "__metadata__",
        "an object of string values",
        `${fmtValue(s)} at key ${JSON.stringify(k)}`,
      );
    }
    Object.defineProperty(out, k, {
      value: s,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

const ENTRY_KEYS = ["dtype", "shape", "data_offsets"];

function parseEntry(fail: Fail, name: string, v: unknown, bufferLength: number): Entry {
  if (!isPlainObject(v)) {
    throw fail(name, "an object {dtype, shape, data_offsets}", fmtValue(v));
  }
  const keys = Object.keys(v);
  const extra = keys.filter((k) => !ENTRY_KEYS.includes(k));
  const missing = ENTRY_KEYS.filter((k) => !keys.includes(k));
  if (extra.length > 0 || missing.length > 0) {
    throw fail(
      name,
      "an object with exactly the keys dtype, shape, data_offsets",
      `keys ${fmtValue(keys)}`,
    );
  }
  const dt = v.dtype;
  if (typeof dt !== "string" || !(TENSOR_DTYPES as readonly string[]).includes(dt)) {
    const near = typeof dt === "string" ? closestNames(dt, TENSOR_DTYPES) : [];
    const hint = didYouMean(near);
    throw fail(
      `${name}.dtype`,
      `one of the supported dtypes ${TENSOR_DTYPES.join(", ")}`,
      `${fmtValue(dt)}${hint}`,
    );
  }
  const dtype = dt as TensorDtype;
  const shape = v.shape;
  if (!Array.isArray(shape) || !shape.every(isIndex)) {
    throw fail(`${name}.shape`, "a list of non-negative integers", fmtValue(shape));
  }
  const offsets = v.data_offsets;
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isIndex)) {
    throw fail(
      `${name}.data_offsets`,
      "a pair [begin, end] of non-negative integers",
      fmtValue(offsets),
    );
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) {
    throw fail(`${name}.data_offsets`, "increasing (begin ≤ end)", `[${begin}, ${end}]`);
  }
  if (end > bufferLength) {
    throw fail(
      `${name}.data_offsets`,
      `within the byte buffer of ${bufferLength} bytes`,
      `[${begin}, ${end}]`,
    );
  }
  // Element count with an overflow guard: stop as soon as the bytes exceed the span.
  const size = DTYPE_BYTES[dtype];
  let count = shape.includes(0) ? 0 : 1;
  for (const d of shape as number[]) {
    if (count === 0) break;
    count *= d;
    if (count * size > end - begin) {
      throw fail(
        `${name}.shape`,
        `a shape whose ${dtype} bytes equal end − begin = ${end - begin}`,
        `shape ${fmtShape(shape)} (more bytes)`,
      );
    }
  }
  if (count * size !== end - begin) {
    throw fail(
      `${name}.shape`,
      `a shape whose ${dtype} bytes (${size} each) equal end − begin = ${end - begin}`,
      `shape ${fmtShape(shape)} (${count * size} bytes)`,
    );
  }
  return { name, dtype, shape: shape as number[], count, begin, end };
}

/**
 * Parse and check the header; `bufferLength` is the byte count after the header. The entries are
 * counted over the raw bytes first (at most {@link MAX_FILE_TENSORS}; `keysCounted` when the
 * caller counted them while reading), and their elements drawn from `maxElements` before any
 * tensor is decoded. @internal
 */
export function parseHeader(
  fail: Fail,
  fn: string,
  path: string,
  bytes: Uint8Array,
  bufferLength: number,
  maxElements: number = DEFAULT_MAX_ELEMENTS,
  keysCounted = false,
): Header {
  if (bytes[0] !== 0x7b) {
    throw fail(
      "header",
      "a JSON object (starting with '{')",
      `first byte 0x${(bytes[0] ?? 0).toString(16).padStart(2, "0")}`,
    );
  }
  if (!keysCounted) checkTopLevelKeys(fail, "header", bytes);
  const text = decodeUtf8(fn, path, "header", bytes);
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    throw fail(
      "header",
      "valid JSON with distinct tensor names",
      `${parsed.reason} at line ${parsed.line}, column ${parsed.column}`,
    );
  }
  if (!isPlainObject(parsed.value)) throw fail("header", "a JSON object", fmtValue(parsed.value));
  const entries: Entry[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, v] of Object.entries(parsed.value)) {
    if (name === "__metadata__") metadata = parseMetadata(fail, v);
    else entries.push(parseEntry(fail, name, v, bufferLength));
  }
  if (entries.length > MAX_FILE_TENSORS) throw tooManyTensors(fail, "header", entries.length);
  const budget = elementBudget(maxElements);
  for (const e of entries)
    takeElements(fail, budget, e.name, e.count, `shape ${fmtShape(e.shape)}`);
  // The tensors must tile the buffer: sorted by offset, each starts where the previous ends.
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  let prev = "the buffer start";
  for (const e of sorted) {
    if (e.begin !== at) {
      const what =
        e.begin > at ? `a hole of ${e.begin - at} bytes` : `an overlap of ${at - e.begin} bytes`;
      throw fail(
        `${e.name}.data_offsets`,
        `to begin where ${prev} ends, at byte ${at} (no holes, no overlaps)`,
        `begin ${e.begin}: ${what}`,
      );
    }
    at = e.end;
    prev = `tensor ${JSON.stringify(e.name)}`;
  }
  if (at !== bufferLength) {
    throw fail(
      "byte buffer",
      `fully covered by the tensors (${at} bytes)`,
      `${bufferLength} bytes: ${bufferLength - at} trailing bytes`,
    );
  }
  return { entries, metadata };
}

/** The first index holding a byte above 1, or −1 (a plain loop: findIndex's callback cost 5×). */
function firstAbove1(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] as number) > 1) return i;
  return -1;
}

function decodeEntry(fail: Fail, e: Entry, body: Uint8Array, owned: boolean): NamedTensor {
  const view = new DataView(body.buffer, body.byteOffset + e.begin, e.end - e.begin);
  const n = e.count;
  if (e.dtype === "BOOL" || e.dtype === "U8") {
    const bytes = owned ? body.subarray(e.begin, e.end) : body.slice(e.begin, e.end);
    if (e.dtype === "BOOL") {
      const bad = firstAbove1(bytes);
      if (bad >= 0) throw fail(e.name, "BOOL bytes 0 or 1", `${bytes[bad]} at flat index ${bad}`);
    }
    return { dtype: e.dtype, shape: e.shape, data: bytes };
  }
  const at = body.byteOffset + e.begin;
  // Bytes the reader read itself (a file): an aligned F64 tensor is a view of them, no copy.
  if (owned && e.dtype === "F64" && LITTLE_ENDIAN_HOST && at % 8 === 0) {
    return { dtype: e.dtype, shape: e.shape, data: new Float64Array(body.buffer, at, n) };
  }
  let out: Float64Array;
  try {
    out = new Float64Array(n);
  } catch {
    throw fail(e.name, "small enough to hold as float64 in memory", `${n} elements`);
  }
  switch (e.dtype) {
    case "F64":
      // Aligned on a little-endian host: one copy of the bytes (a view would alias the input).
      if (LITTLE_ENDIAN_HOST && at % 8 === 0) out.set(new Float64Array(body.buffer, at, n));
      else for (let i = 0; i < n; i++) out[i] = view.getFloat64(8 * i, true);
      break;
    case "F32":
      if (LITTLE_ENDIAN_HOST && at % 4 === 0) out.set(new Float32Array(body.buffer, at, n));
      else for (let i = 0; i < n; i++) out[i] = view.getFloat32(4 * i, true);
      break;
    case "F16":
    case "BF16": {
      const table = e.dtype === "F16" ? f16DecodeTable() : bf16DecodeTable();
      for (let i = 0; i < n; i++) out[i] = table[view.getUint16(2 * i, true)] as number;
      break;
    }
    case "I32":
      for (let i = 0; i < n; i++) out[i] = view.getInt32(4 * i, true);
      break;
    case "I16":
      for (let i = 0; i < n; i++) out[i] = view.getInt16(2 * i, true);
      break;
    case "I8":
      for (let i = 0; i < n; i++) out[i] = view.getInt8(i);
      break;
    case "U32":
      for (let i = 0; i < n; i++) out[i] = view.getUint32(4 * i, true);
      break;
    case "U16":
      for (let i = 0; i < n; i++) out[i] = view.getUint16(2 * i, true);
      break;
    case "I64":
    case "U64": {
      const limit = 2n ** 53n;
      for (let i = 0; i < n; i++) {
        const v =
          e.dtype === "I64" ? view.getBigInt64(8 * i, true) : view.getBigUint64(8 * i, true);
        if (v > limit || v < -limit) {
          throw fail(
            e.name,
            `${e.dtype} values within ±2^53 (exact in float64)`,
            `${v} at flat index ${i}`,
          );
        }
        out[i] = Number(v);
      }
      break;
    }
  }
  return { dtype: e.dtype, shape: e.shape, data: out };
}

/**
 * Decode every entry of a validated header from the byte buffer. `owned`: the bytes were read by
 * the reader itself (a file), so aligned F64 tensors and BOOL/U8 tensors may be views of them
 * instead of copies (the tensors then share one `.buffer`; each view's offset and length delimit
 * its data); bytes a caller handed over are always copied. @internal
 */
export function assemble(
  path: string,
  header: Header,
  fail: Fail,
  body: Uint8Array,
  owned = false,
): TensorSet {
  const tensors = new Map<string, NamedTensor>();
  for (const e of header.entries) tensors.set(e.name, decodeEntry(fail, e, body, owned));
  return { path, format: "safetensors", tensors, metadata: header.metadata };
}

/**
 * Parse the bytes of a safetensors file held in memory.
 *
 * Format: u64 LE header length N · N bytes UTF-8 JSON header · byte buffer tiled exactly by the
 * tensors' `data_offsets`. Floats are upcast to float64 exactly; I32/I64 become float64 integers;
 * BOOL/U8 stay bytes. NaN and ±Inf in the data are kept (padding may hold junk).
 *
 * @param bytes - The whole file.
 * @param path - The name to report in errors (default `"<bytes>"`).
 * @returns Every tensor by name, in header order, with the `__metadata__` map.
 * @throws {IoError} E_IO when the bytes break any rule of docs/io.md#safetensors (short file,
 *   header length, UTF-8/JSON, dtype, shape, offsets, holes, overlaps, duplicate names, values;
 *   more than 65536 entries, counted before the header is parsed).
 * @derivation docs/io.md#safetensors
 * @enforcedBy test/io/safetensors.hostile.test.ts > parseSafetensors > rejects: overlapping tensors
 * @enforcedBy test/io/safetensors.property.test.ts > parseSafetensors > property: mutated or truncated files parse or throw IoError
 * @since 0.1.0
 */
export function parseSafetensors(bytes: Uint8Array, path = "<bytes>"): TensorSet {
  requireBytes("parseSafetensors", "bytes", bytes);
  requireString("parseSafetensors", "path", path);
  return parseSafetensorsAs("parseSafetensors", bytes, path);
}

/** {@link parseSafetensors} reporting errors as `fn`. @internal */
export function parseSafetensorsAs(
  fn: string,
  bytes: Uint8Array,
  path: string,
  maxElements: number = DEFAULT_MAX_ELEMENTS,
): TensorSet {
  const fail: Fail = (arg, rule, actual) => ioError(fn, path, arg, rule, actual);
  if (bytes.length < 8)
    throw fail("file", "at least 8 bytes (the header length)", fmtBytes(bytes.length));
  const n = headerLength(fail, bytes.subarray(0, 8), bytes.length);
  const bufferLength = bytes.length - 8 - n;
  const header = parseHeader(fail, fn, path, bytes.subarray(8, 8 + n), bufferLength, maxElements);
  return assemble(path, header, fail, bytes.subarray(8 + n));
}
