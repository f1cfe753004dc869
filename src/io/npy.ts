/**
 * A from-scratch reader of NumPy's `.npy` format (docs/io.md#npy): the magic `\x93NUMPY`, a
 * version (1.0, 2.0 or 3.0), a little-endian header length (u16 for 1.0, u32 otherwise), a header
 * that is a Python dict literal `{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }`
 * (latin-1, or UTF-8 for 3.0), then the raw array data. The header is read by a small strict
 * parser of exactly that literal grammar (never `eval`, never recursion); the data must be exactly
 * product(shape) × itemsize bytes. Fortran-ordered data is transposed to row-major. Pure (no
 * `node:` import).
 */

import { f16DecodeTable } from "../core/halfFloat.js";
import { fmtShape, fmtValue } from "../core/message.js";
import { requireBytes, requireString } from "../core/validate.js";
import type { IoError } from "../errors.js";
import { LITTLE_ENDIAN_HOST } from "./_internal/endian.js";
import { decodeUtf8, fmtBytes, ioError } from "./_internal/ioError.js";
import { type ElementBudget, elementBudget, takeElements } from "./_internal/limits.js";
import type { TensorReader } from "./tensorTypes.js";
import {
  DTYPE_BYTES,
  lazyTensor,
  type NamedTensor,
  type TensorDtype,
  type TensorSet,
} from "./tensorTypes.js";

/** Largest `.npy` header accepted: 1 MiB (a simple dtype and a rank-64 shape take < 2 KB). */
export const MAX_NPY_HEADER_BYTES: number = 2 ** 20;

/** Largest rank accepted: 64 (NumPy 2's own maximum; NumPy 1 allows 32). */
export const MAX_NPY_RANK = 64;

/** Default size limit of a `.npy` file: 4 GiB. */
export const DEFAULT_MAX_NPY_BYTES: number = 4 * 2 ** 30;

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93 N U M P Y

/** The descr kinds and sizes read, with the dtype each becomes. */
const DESCR_DTYPES: Readonly<Record<string, TensorDtype>> = {
  f2: "F16",
  f4: "F32",
  f8: "F64",
  i1: "I8",
  i2: "I16",
  i4: "I32",
  i8: "I64",
  u1: "U8",
  u2: "U16",
  u4: "U32",
  u8: "U64",
  b1: "BOOL",
};

/** Builds the IoError of one rule. */
type Fail = (arg: string, rule: string, actual: string) => IoError;

interface NpyHeader {
  readonly descr: string;
  readonly fortranOrder: boolean;
  readonly shape: readonly number[];
}

/**
 * The strict parser of the header literal: `{` key `:` value (`,` key `:` value)* `,`? `}` with
 * keys exactly `descr` (a string), `fortran_order` (True/False) and `shape` (a tuple of
 * non-negative integers: `()`, `(5,)`, `(4, 6)`), strings in single or double quotes without
 * escapes, blanks between tokens. Iterative: the grammar has no nesting beyond the one tuple.
 */
function parseHeaderLiteral(fail: Fail, arg: string, descrArg: string, s: string): NpyHeader {
  let i = 0;
  const where = (): string =>
    i >= s.length ? "the end of the header" : `${fmtValue(s[i])} at column ${i + 1}`;
  const bad = (expected: string): IoError =>
    fail(
      arg,
      "a Python dict literal {'descr': str, 'fortran_order': bool, 'shape': tuple}",
      `${expected} expected, found ${where()}`,
    );
  const blanks = (): void => {
    while (i < s.length && (s[i] === " " || s[i] === "\t" || s[i] === "\n" || s[i] === "\r")) i++;
  };
  const expect = (c: string, what: string): void => {
    blanks();
    if (s[i] !== c) throw bad(what);
    i++;
  };
  const str = (): string => {
    blanks();
    const q = s[i];
    if (q !== "'" && q !== '"') throw bad("a quoted string");
    const start = ++i;
    while (i < s.length && s[i] !== q) {
      if (s[i] === "\\" || s[i] === "\n") throw bad(`a string without escapes or newlines`);
      i++;
    }
    if (i >= s.length) throw bad(`a closing ${q}`);
    return s.slice(start, i++);
  };
  const int = (): number => {
    blanks();
    const start = i;
    while (i < s.length && (s[i] as string) >= "0" && (s[i] as string) <= "9") i++;
    const digits = s.slice(start, i);
    if (digits === "") throw bad("a non-negative integer");
    if (digits.length > 1 && digits[0] === "0") {
      i = start;
      throw bad("an integer without leading zeros");
    }
    const v = Number(digits);
    if (!Number.isSafeInteger(v)) {
      i = start;
      throw bad("an integer below 2^53");
    }
    return v;
  };
  const tuple = (): number[] => {
    expect("(", "a tuple of integers such as (4, 6)");
    const out: number[] = [];
    blanks();
    if (s[i] === ")") {
      i++;
      return out;
    }
    for (;;) {
      if (out.length >= MAX_NPY_RANK) throw bad(`at most ${MAX_NPY_RANK} dimensions`);
      out.push(int());
      blanks();
      if (s[i] === ")") {
        if (out.length === 1) throw bad("',' after the only element of a tuple, as in (5,)");
        i++;
        return out;
      }
      expect(",", "',' or ')'");
      blanks();
      if (s[i] === ")") {
        i++;
        return out;
      }
    }
  };
  const bool = (): boolean => {
    blanks();
    if (s.startsWith("True", i)) {
      i += 4;
      return true;
    }
    if (s.startsWith("False", i)) {
      i += 5;
      return false;
    }
    throw bad("True or False");
  };

  let descr: string | undefined;
  let fortranOrder: boolean | undefined;
  let shape: number[] | undefined;
  expect("{", "'{'");
  for (;;) {
    blanks();
    if (s[i] === "}") break;
    const keyAt = i;
    const key = str();
    expect(":", "':'");
    const dup =
      (key === "descr" && descr !== undefined) ||
      (key === "fortran_order" && fortranOrder !== undefined) ||
      (key === "shape" && shape !== undefined);
    if (dup) {
      i = keyAt;
      throw bad(`distinct keys (${fmtValue(key)} twice)`);
    }
    if (key === "descr") {
      blanks();
      if (s[i] === "[") {
        throw fail(
          descrArg,
          "a simple dtype string such as '<f4' (structured dtypes are not read)",
          "a list (a structured dtype)",
        );
      }
      descr = str();
    } else if (key === "fortran_order") fortranOrder = bool();
    else if (key === "shape") shape = tuple();
    else {
      i = keyAt;
      throw bad("one of the keys 'descr', 'fortran_order', 'shape'");
    }
    blanks();
    if (s[i] === ",") {
      i++;
      continue;
    }
    if (s[i] === "}") break;
    throw bad("',' or '}'");
  }
  i++;
  blanks();
  if (i < s.length) throw bad("only blanks after the closing '}'");
  if (descr === undefined || fortranOrder === undefined || shape === undefined) {
    const missing = [
      descr === undefined ? "'descr'" : "",
      fortranOrder === undefined ? "'fortran_order'" : "",
      shape === undefined ? "'shape'" : "",
    ].filter((k) => k !== "");
    throw fail(
      arg,
      "a Python dict literal {'descr': str, 'fortran_order': bool, 'shape': tuple}",
      `no key ${missing.join(", ")}`,
    );
  }
  return { descr, fortranOrder, shape };
}

interface Descr {
  readonly dtype: TensorDtype;
  readonly size: number;
  readonly little: boolean;
}

const DESCR_KINDS: Readonly<Record<string, string>> = {
  c: "complex",
  O: "object (pickled Python objects)",
  M: "datetime",
  m: "timedelta",
  S: "byte string",
  a: "byte string",
  U: "unicode string",
  V: "void (raw or structured)",
};

function parseDescr(fail: Fail, arg: string, descr: string): Descr {
  const supported = "'<f2' '<f4' '<f8' '<i1'…'<i8' '<u1'…'<u8' '|b1' (byte order <, > or =)";
  const reject = (why: string): IoError =>
    fail(arg, `a dtype ${supported}`, `${fmtValue(descr)} (${why})`);
  const m = /^([<>|=]?)([a-zA-Z])(\d*)(.*)$/s.exec(descr);
  if (m === null) throw reject("not a simple numeric dtype");
  const [, order, kind, sizeText, rest] = m as unknown as [string, string, string, string, string];
  const named = DESCR_KINDS[kind];
  if (named !== undefined) throw reject(named);
  if (order === "") throw reject("no byte order");
  if (rest !== "" || sizeText === "") throw reject("not a simple numeric dtype");
  const dtype = DESCR_DTYPES[`${kind}${sizeText}`];
  if (dtype === undefined) {
    throw reject(kind === "f" ? `a float of ${sizeText} bytes` : "unsupported");
  }
  const size = Number(sizeText);
  if (order === "|" && size > 1) {
    throw fail(arg, `a byte order < or > for a ${size}-byte dtype`, `${fmtValue(descr)}`);
  }
  // '=' is the writer's native order; NumPy itself never writes it, and every platform that
  // writes .npy files today is little-endian.
  return { dtype, size, little: order !== ">" };
}

/**
 * How many first bytes of a `.npy` file hold its magic, version, header-length field and header,
 * read from those first bytes (the version gives the field's width, 2 bytes for 1.0, else 4);
 * +Infinity when the header is longer than {@link MAX_NPY_HEADER_BYTES}, which decodeNpy refuses
 * from the field alone. Checks nothing else: decodeNpy does. @internal
 */
export function npyHeaderEnd(head: Uint8Array): number {
  const width = head[6] === 1 ? 2 : 4;
  if (head.length < 8 + width) return head.length;
  const n = lengthField(head, 8, width);
  return n > MAX_NPY_HEADER_BYTES ? Number.POSITIVE_INFINITY : 8 + width + n;
}

/** Read a little-endian u16/u32 length field. */
function lengthField(bytes: Uint8Array, at: number, width: 2 | 4): number {
  let v = 0;
  for (let k = width - 1; k >= 0; k--) v = v * 256 + (bytes[at + k] as number);
  return v;
}

function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let at = 0; at < bytes.length; at += 8192) {
    out += String.fromCharCode(...bytes.subarray(at, Math.min(bytes.length, at + 8192)));
  }
  return out;
}

/**
 * Decode one `.npy` byte string into a tensor. `prefix` is put before the part names in errors
 * (`""` for a `.npy` file, `"x."` for the member `x.npy` of an `.npz`); the elements are drawn
 * from `budget` (options.maxElements, shared by an archive's members) before allocating. @internal
 */
export function decodeNpy(
  fn: string,
  path: string,
  bytes: Uint8Array,
  prefix: string,
  budget: ElementBudget = elementBudget(),
  lazy = false,
  whole?: { readonly size: number; readonly read: () => Uint8Array },
): NamedTensor {
  const fail: Fail = (arg, rule, actual) => ioError(fn, path, arg, rule, actual);
  const a = (part: string): string => `${prefix}${part}`;
  if (bytes.length < 10 || MAGIC.some((b, k) => bytes[k] !== b)) {
    throw fail(
      a("magic"),
      "the .npy magic \\x93NUMPY followed by a version and a header length (10 bytes or more)",
      bytes.length < 10 ? fmtBytes(bytes.length) : "other first bytes",
    );
  }
  const major = bytes[6] as number;
  const minor = bytes[7] as number;
  if ((major !== 1 && major !== 2 && major !== 3) || minor !== 0) {
    throw fail(a("version"), "1.0, 2.0 or 3.0", `${major}.${minor}`);
  }
  const width = major === 1 ? 2 : 4;
  const start = 8 + width;
  if (bytes.length < start) {
    throw fail(
      a("header length"),
      `a ${width}-byte field after the version`,
      fmtBytes(bytes.length),
    );
  }
  const n = lengthField(bytes, 8, width);
  if (n > MAX_NPY_HEADER_BYTES) {
    throw fail(a("header length"), `at most ${fmtBytes(MAX_NPY_HEADER_BYTES)}`, fmtBytes(n));
  }
  if (start + n > bytes.length) {
    throw fail(
      a("header length"),
      `at most the ${bytes.length - start} bytes after the length field`,
      fmtBytes(n),
    );
  }
  const raw = bytes.subarray(start, start + n);
  const text = major === 3 ? decodeUtf8(fn, path, a("header"), raw) : latin1(raw);
  const header = parseHeaderLiteral(fail, a("header"), a("descr"), text);
  const { dtype, size, little } = parseDescr(fail, a("descr"), header.descr);
  const shape = header.shape;
  // `whole`: `bytes` is the file's head (an .npz member's first bytes); the body is the rest of
  // a file of `whole.size` bytes, read (inflated, CRC-checked) when the values are.
  const bodyLength = whole === undefined ? bytes.length - (start + n) : whole.size - (start + n);

  // Element count, exact in BigInt (rank ≤ 64, dimensions < 2^53): no overflow, no allocation
  // before the byte count matches.
  const product = shape.reduce((p, d) => p * BigInt(d), 1n);
  const need = product * BigInt(size);
  if (need !== BigInt(bodyLength)) {
    const diff = BigInt(bodyLength) - need;
    throw fail(
      a("data"),
      `exactly product(shape) × itemsize = ${product} × ${size} = ${need} bytes after the header (shape ${fmtShape(shape)})`,
      `${fmtBytes(bodyLength)} (${diff > 0n ? `${diff} trailing bytes` : `${-diff} bytes short`})`,
    );
  }
  const count = Number(product);
  takeElements(fail, budget, a("data"), count, `shape ${fmtShape(shape)}`);
  const body = () => (whole === undefined ? bytes : whole.read()).subarray(start + n);
  const decode = () =>
    decodeData(fail, a("data"), body(), dtype, little, shape, count, header.fortranOrder);
  return lazy || whole !== undefined ? lazyTensor(dtype, shape, () => decode().data) : decode();
}

/**
 * For each row-major position r, the element index in the file: r itself for C order; for
 * Fortran order the column-major offset Σ_j i_j · Π_{k<j} d_k, walked with an odometer.
 */
function fileOrder(shape: readonly number[], count: number, fortran: boolean): Float64Array | null {
  if (!fortran || shape.length < 2 || count === 0) return null;
  const rank = shape.length;
  const stride = new Array<number>(rank);
  let s = 1;
  for (let j = 0; j < rank; j++) {
    stride[j] = s;
    s *= shape[j] as number;
  }
  const idx = new Array<number>(rank).fill(0);
  const order = new Float64Array(count);
  let f = 0;
  for (let r = 0; r < count; r++) {
    order[r] = f;
    let j = rank - 1;
    idx[j] = (idx[j] as number) + 1;
    f += stride[j] as number;
    while (j > 0 && idx[j] === shape[j]) {
      f -= (shape[j] as number) * (stride[j] as number);
      idx[j] = 0;
      j--;
      idx[j] = (idx[j] as number) + 1;
      f += stride[j] as number;
    }
  }
  return order;
}

type View =
  | Float64Array
  | Float32Array
  | Int32Array
  | Int16Array
  | Int8Array
  | Uint32Array
  | Uint16Array;

const VIEWS: Partial<Record<TensorDtype, new (b: ArrayBufferLike, at: number, n: number) => View>> =
  {
    F64: Float64Array,
    F32: Float32Array,
    F16: Uint16Array,
    I32: Int32Array,
    I16: Int16Array,
    I8: Int8Array,
    U32: Uint32Array,
    U16: Uint16Array,
  };

/**
 * The data as a typed array of its own dtype (F16 as its bit patterns) when that reads the same
 * values as the DataView loop: no reordering (C order, or Fortran order of rank < 2), the host's
 * byte order, aligned; else null.
 */
function typedView(
  body: Uint8Array,
  dtype: TensorDtype,
  little: boolean,
  n: number,
  reordered: boolean,
): View | null {
  const View = VIEWS[dtype];
  if (View === undefined || reordered || little !== LITTLE_ENDIAN_HOST) return null;
  return body.byteOffset % DTYPE_BYTES[dtype] === 0
    ? new View(body.buffer, body.byteOffset, n)
    : null;
}

function decodeData(
  fail: Fail,
  arg: string,
  body: Uint8Array,
  dtype: TensorDtype,
  little: boolean,
  shape: readonly number[],
  n: number,
  fortran: boolean,
): NamedTensor {
  let order: Float64Array | null;
  let out: Float64Array | Uint8Array;
  try {
    order = fileOrder(shape, n, fortran);
    out = dtype === "BOOL" || dtype === "U8" ? new Uint8Array(n) : new Float64Array(n);
  } catch {
    throw fail(arg, "small enough to hold in memory", `${n} elements`);
  }
  const at = (r: number): number => (order === null ? r : (order[r] as number));
  const view = new DataView(body.buffer, body.byteOffset, body.length);
  if (out instanceof Uint8Array) {
    for (let r = 0; r < n; r++) {
      const b = body[at(r)] as number;
      if (dtype === "BOOL" && b > 1) {
        throw fail(arg, "BOOL bytes 0 or 1", `${b} at flat index ${r} (row-major)`);
      }
      out[r] = b;
    }
    return { dtype, shape, data: out };
  }
  const o = out;
  // C order in the host's byte order, aligned: one typed-array pass (the F16 table per element).
  const typed = typedView(body, dtype, little, n, order !== null);
  if (typed !== null) {
    if (dtype === "F16") {
      const table = f16DecodeTable();
      for (let r = 0; r < n; r++) o[r] = table[typed[r] as number] as number;
    } else o.set(typed);
    return { dtype, shape, data: o };
  }
  switch (dtype) {
    case "F64":
      for (let r = 0; r < n; r++) o[r] = view.getFloat64(8 * at(r), little);
      break;
    case "F32":
      for (let r = 0; r < n; r++) o[r] = view.getFloat32(4 * at(r), little);
      break;
    case "F16": {
      const table = f16DecodeTable();
      for (let r = 0; r < n; r++) o[r] = table[view.getUint16(2 * at(r), little)] as number;
      break;
    }
    case "I32":
      for (let r = 0; r < n; r++) o[r] = view.getInt32(4 * at(r), little);
      break;
    case "I16":
      for (let r = 0; r < n; r++) o[r] = view.getInt16(2 * at(r), little);
      break;
    case "I8":
      for (let r = 0; r < n; r++) o[r] = view.getInt8(at(r));
      break;
    case "U32":
      for (let r = 0; r < n; r++) o[r] = view.getUint32(4 * at(r), little);
      break;
    case "U16":
      for (let r = 0; r < n; r++) o[r] = view.getUint16(2 * at(r), little);
      break;
    default: {
      // I64 / U64: exact in float64 only within ±2^53.
      const limit = 2n ** 53n;
      for (let r = 0; r < n; r++) {
        const v =
          dtype === "I64"
            ? view.getBigInt64(8 * at(r), little)
            : view.getBigUint64(8 * at(r), little);
        if (v > limit || v < -limit) {
          throw fail(
            arg,
            `${dtype} values within ±2^53 (exact in float64)`,
            `${v} at flat index ${r} (row-major)`,
          );
        }
        o[r] = Number(v);
      }
    }
  }
  return { dtype, shape, data: o };
}

/**
 * The tensor name of a `.npy` file: its base name without the extension
 * (`/a/b/old_log_probs.npy` → `old_log_probs`), `array` for a label such as `<bytes>` or
 * `<stdin>` or an empty base name.
 * @internal
 */
export function npyTensorName(path: string): string {
  const p = String(path);
  if (/^<[^<>]*>$/.test(p)) return "array";
  const base = p.slice(Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\")) + 1);
  const dot = base.lastIndexOf(".");
  const name = dot > 0 ? base.slice(0, dot) : base;
  return name === "" ? "array" : name;
}

/**
 * Parse the bytes of a NumPy `.npy` file held in memory: one array, named after the file.
 *
 * Format: `\x93NUMPY` · major · minor (1.0, 2.0, 3.0) · header length (u16 LE for 1.0, u32 LE
 * otherwise) · header `{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }` (latin-1;
 * UTF-8 for 3.0; at most 1 MiB) · exactly product(shape) × itemsize data bytes. descr `f2 f4 f8`
 * → F16 F32 F64, `i1…i8` → I8…I64, `u1…u8` → U8…U64, `b1` → BOOL, either byte order; values
 * upcast to float64 exactly (BOOL and U8 stay bytes), Fortran order transposed to row-major.
 * NumPy has no bfloat16: a bf16 tensor saved through NumPy is usually `<u2` (read as U16) or
 * `<f4`.
 *
 * @param bytes - The whole file.
 * @param path - The name to report in errors and to name the tensor (default `"<bytes>"`, whose
 *   tensor is named `array`).
 * @returns A tensor set holding one tensor, named after the file's base name without extension.
 * @throws {IoError} E_IO when the bytes break any rule of docs/io.md#npy (magic, version, header
 *   length, header literal, descr, data length, BOOL bytes, I64/U64 beyond ±2^53).
 * @derivation docs/io.md#npy
 * @enforcedBy test/io/npy.test.ts > parseNpy > golden: every recorded numpy file decodes bitwise to the values numpy printed
 * @enforcedBy test/io/npy.test.ts > parseNpy > rejects: data shorter or longer than product(shape) × itemsize
 * @since 0.1.0
 */
export function parseNpy(bytes: Uint8Array, path = "<bytes>"): TensorSet {
  requireBytes("parseNpy", "bytes", bytes);
  requireString("parseNpy", "path", path);
  return parseNpyAs("parseNpy", bytes, path, npyTensorName(path));
}

/** {@link parseNpy} reporting errors as `fn`, naming the tensor `name`. @internal */
export function parseNpyAs(
  fn: string,
  bytes: Uint8Array,
  path: string,
  name: string,
  maxElements?: number,
  lazy = false,
): TensorSet {
  const tensor = decodeNpy(fn, path, bytes, "", elementBudget(maxElements), lazy);
  return { path, format: "npy", tensors: new Map([[name, tensor]]), metadata: {} };
}

function sniffNpy(head: Uint8Array): boolean {
  return head.length >= 6 && MAGIC.every((b, k) => head[k] === b);
}

/**
 * The registry entry of `.npy` files (docs/io.md#npy): format `npy`, extension `.npy`, sniffed by
 * the magic `\x93NUMPY`, 4 GiB default size limit.
 *
 * Format: see {@link parseNpy}.
 *
 * @derivation docs/io.md#npy
 * @enforcedBy test/io/npy.test.ts > NPY_READER > golden: the entry sniffs the magic and names the tensor after the file
 * @since 0.1.0
 */
export const NPY_READER: TensorReader = Object.freeze({
  format: "npy",
  extensions: Object.freeze([".npy"]),
  defaultMaxBytes: DEFAULT_MAX_NPY_BYTES,
  sniff: sniffNpy,
  parse: (fn: string, bytes: Uint8Array, path: string, maxElements?: number, lazy?: boolean) =>
    parseNpyAs(fn, bytes, path, npyTensorName(path), maxElements, lazy),
});
