/**
 * Dense float64 tensors of polgrad: `[B, T]` matrices (row-major), `[B, T]` 0/1 masks and `[B]`
 * vectors, plus constructors from nested arrays. All arithmetic in polgrad is float64; float32
 * and half-precision inputs are upcast on read (docs/conventions.md#dtype).
 */
import { fail, MaskError, ShapeError } from "../errors.js";
import { fmtValue } from "./message.js";

/** A `[rows, cols]` float64 matrix in row-major order: element (b, t) is `data[b * cols + t]`. */
export interface Matrix {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;
}

/** A `[rows, cols]` mask in row-major order; 1 marks a response token, 0 padding. */
export interface Mask {
  readonly rows: number;
  readonly cols: number;
  readonly data: Uint8Array;
}

/** Any typed array of numbers (what PyTorch/NumPy bridges and binary readers hand over). */
export type NumericTypedArray =
  | Float64Array
  | Float32Array
  | Int32Array
  | Int16Array
  | Int8Array
  | Uint32Array
  | Uint16Array
  | Uint8Array
  | Uint8ClampedArray;

/** One row of numbers: a plain array or a typed array. */
export type NumberRow = readonly number[] | NumericTypedArray;

/**
 * A dense `[rows, cols]` tensor in row-major order with any numeric data (a Float32Array, a plain
 * array, 0/1 numbers or booleans for a mask); converted to float64 (or 0/1 bytes) on entry. Build
 * one with {@link matrix} or {@link mask}.
 */
export interface DenseLike {
  readonly rows: number;
  readonly cols: number;
  readonly data: NumericTypedArray | readonly number[] | readonly boolean[];
}

/** A matrix given as a {@link Matrix}, a {@link DenseLike} or nested rows (arrays or typed arrays). */
export type MatrixLike = Matrix | DenseLike | readonly NumberRow[];

/** A mask given as a {@link Mask}, a {@link DenseLike} of 0/1, or nested rows of booleans or 0/1. */
export type MaskLike =
  | Mask
  | DenseLike
  | readonly (readonly (boolean | number)[] | NumericTypedArray)[];

/** A `[B]` vector given as a typed array or a plain array of numbers. */
export type VectorLike = NumericTypedArray | readonly number[];

/** True for a typed array of numbers (not a DataView, not a BigInt64Array). */
export function isNumericTypedArray(x: unknown): x is NumericTypedArray {
  return (
    ArrayBuffer.isView(x) &&
    !(x instanceof DataView) &&
    !(x instanceof BigInt64Array) &&
    !(x instanceof BigUint64Array)
  );
}

/** True for a {@link DenseLike}: integer rows and cols and an array-like `data`. */
export function isDenseLike(x: unknown): x is DenseLike {
  if (typeof x !== "object" || x === null || Array.isArray(x) || ArrayBuffer.isView(x))
    return false;
  const d = x as { rows?: unknown; cols?: unknown; data?: unknown };
  return (
    typeof d.rows === "number" &&
    typeof d.cols === "number" &&
    (Array.isArray(d.data) || isNumericTypedArray(d.data))
  );
}

/** Allocate a zero-filled `[rows, cols]` matrix. */
export function zeros(rows: number, cols: number): Matrix {
  return { rows, cols, data: new Float64Array(rows * cols) };
}

/** Allocate a `[rows, cols]` matrix filled with `value`. */
export function full(rows: number, cols: number, value: number): Matrix {
  return { rows, cols, data: new Float64Array(rows * cols).fill(value) };
}

/** Allocate an all-false `[rows, cols]` mask. */
export function falseMask(rows: number, cols: number): Mask {
  return { rows, cols, data: new Uint8Array(rows * cols) };
}

/** Return true if `x` is a {@link Matrix} (as opposed to nested arrays). */
export function isMatrix(x: unknown): x is Matrix {
  return (
    typeof x === "object" &&
    x !== null &&
    "data" in x &&
    (x as { data: unknown }).data instanceof Float64Array
  );
}

/** Return true if `x` is a {@link Mask} (as opposed to nested arrays). */
export function isMask(x: unknown): x is Mask {
  return (
    typeof x === "object" &&
    x !== null &&
    "data" in x &&
    (x as { data: unknown }).data instanceof Uint8Array
  );
}

/**
 * Build a `[rows, cols]` matrix from flat row-major data (a Float32Array from a tensor bridge, a
 * Float64Array, a plain array): values are copied into float64 exactly (a Float64Array is used
 * as is).
 *
 * Format: element (b, t) is `data[b * cols + t]`.
 *
 * @param rows - B ≥ 1.
 * @param cols - T ≥ 1.
 * @param data - rows·cols numbers.
 * @returns The matrix.
 * @throws {ShapeError} E_SHAPE when rows or cols is not a positive integer or data's length is not rows·cols, or a value is not a number.
 * @derivation docs/conventions.md#shapes
 * @enforcedBy test/core/inputs.test.ts > matrix > golden: flat float32, float64 and plain data become a float64 matrix
 * @since 0.1.0
 */
export function matrix(
  rows: number,
  cols: number,
  data: NumericTypedArray | readonly number[],
): Matrix {
  const fn = "matrix";
  checkDims(fn, rows, cols, data);
  if (data instanceof Float64Array) return { rows, cols, data };
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < out.length; i++) {
    const v = data[i];
    if (typeof v !== "number") {
      throw fail(ShapeError, fn, "data", "numbers", `${fmtValue(v)} at flat index ${i}`);
    }
    out[i] = v;
  }
  return { rows, cols, data: out };
}

/**
 * Build a `[rows, cols]` mask from flat row-major data: 0/1 numbers of any typed array, or booleans.
 *
 * Format: element (b, t) is `data[b * cols + t]`; 1 (true) marks a response token.
 *
 * @param rows - B ≥ 1.
 * @param cols - T ≥ 1.
 * @param data - rows·cols values, each 0, 1, false or true.
 * @returns The mask (a Uint8Array of 0/1 is used as is).
 * @throws {ShapeError} E_SHAPE for bad dimensions or length; {@link MaskError} E_MASK for a value other than 0/1.
 * @derivation docs/conventions.md#masks
 * @enforcedBy test/core/inputs.test.ts > mask > golden: uint8, float64 0/1 and boolean data become a mask
 * @since 0.1.0
 */
export function mask(
  rows: number,
  cols: number,
  data: NumericTypedArray | readonly number[] | readonly boolean[],
): Mask {
  const fn = "mask";
  checkDims(fn, rows, cols, data);
  const out = data instanceof Uint8Array ? data : new Uint8Array(rows * cols);
  for (let i = 0; i < rows * cols; i++) {
    const v = data[i];
    if (v === 1 || v === true) out[i] = 1;
    else if (v === 0 || v === false) out[i] = 0;
    else {
      throw fail(
        MaskError,
        fn,
        "data",
        "0/1 valued (or booleans)",
        `${fmtValue(v)} at flat index ${i}`,
      );
    }
  }
  return { rows, cols, data: out };
}

function checkDims(fn: string, rows: unknown, cols: unknown, data: { length: number }): void {
  for (const [arg, v] of [
    ["rows", rows],
    ["cols", cols],
  ] as const) {
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) {
      throw fail(ShapeError, fn, arg, "a positive integer", fmtValue(v));
    }
  }
  if (
    typeof data !== "object" ||
    data === null ||
    data.length !== (rows as number) * (cols as number)
  ) {
    throw fail(
      ShapeError,
      fn,
      "data",
      `rows × cols = ${(rows as number) * (cols as number)} values`,
      typeof data === "object" && data !== null ? `${data.length} values` : fmtValue(data),
    );
  }
}

/**
 * Require `m` (of the kind `kind` says) to hold rows·cols values, rows and cols integers ≥ 0,
 * before a loop over its rows: `{rows: 1e9, …}` is a ShapeError, not a loop. @internal
 */
function checkDenseOf(fn: string, arg: string, m: unknown, kind: boolean, what: string): void {
  const d = m as { rows: unknown; cols: unknown; data: { length: number } };
  if (
    !kind ||
    !Number.isSafeInteger(d.rows) ||
    !Number.isSafeInteger(d.cols) ||
    (d.rows as number) < 0 ||
    (d.cols as number) < 0 ||
    (d.rows as number) * (d.cols as number) !== d.data.length
  )
    throw fail(ShapeError, fn, arg, `${what} holding rows·cols values`, fmtValue(m));
}

/** Element (b, t) of a matrix. */
export function at(m: Matrix, b: number, t: number): number {
  return m.data[b * m.cols + t] as number;
}

/**
 * Convert a matrix to nested rows (for JSON output and tests).
 * @derivation docs/conventions.md#shapes
 * @enforcedBy test/core/tensor.test.ts > toRows > golden: row-major data becomes nested rows
 */
export function toRows(m: Matrix): number[][] {
  checkDenseOf("toRows", "m", m, isMatrix(m), "a Matrix {rows, cols, data: Float64Array}");
  const out: number[][] = [];
  for (let b = 0; b < m.rows; b++)
    out.push(Array.from(m.data.subarray(b * m.cols, (b + 1) * m.cols)));
  return out;
}

/**
 * Convert a mask to nested rows of booleans (for JSON output and tests).
 * @derivation docs/conventions.md#masks
 * @enforcedBy test/core/tensor.test.ts > maskToRows > golden: 0/1 bytes become nested booleans
 */
export function maskToRows(m: Mask): boolean[][] {
  checkDenseOf("maskToRows", "m", m, isMask(m), "a Mask {rows, cols, data: Uint8Array}");
  const out: boolean[][] = [];
  for (let b = 0; b < m.rows; b++) {
    const row: boolean[] = [];
    for (let t = 0; t < m.cols; t++) row.push(m.data[b * m.cols + t] === 1);
    out.push(row);
  }
  return out;
}

/** Row lengths `L_b = Σ_t m[b, t]` of a mask. */
export function rowLengths(mask: Mask): Int32Array {
  const L = new Int32Array(mask.rows);
  const { cols, data } = mask;
  for (let b = 0; b < mask.rows; b++) {
    let n = 0;
    for (let t = 0; t < cols; t++) n += data[b * cols + t] as number;
    L[b] = n;
  }
  return L;
}

/**
 * The row lengths L_b of a mask, their sum N and the count of rows with a response token (the
 * counts an aggregation's weights and an empty-row policy read).
 */
export function maskCounts(mask: Mask): {
  readonly L: Int32Array;
  readonly N: number;
  readonly nonEmpty: number;
} {
  const L = rowLengths(mask);
  let N = 0;
  let nonEmpty = 0;
  for (let b = 0; b < L.length; b++) {
    N += L[b] as number;
    if ((L[b] as number) > 0) nonEmpty++;
  }
  return { L, N, nonEmpty };
}
