/**
 * Dense float64 tensors of polgrad: `[B, T]` matrices (row-major), `[B, T]` 0/1 masks and `[B]`
 * vectors, plus constructors from nested arrays. All arithmetic in polgrad is float64; float32
 * and half-precision inputs are upcast on read (docs/conventions.md#dtype).
 */

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

/** A matrix given either as a {@link Matrix} or as nested rows of numbers. */
export type MatrixLike = Matrix | readonly (readonly number[])[];

/** A mask given either as a {@link Mask} or as nested rows of booleans (or 0/1). */
export type MaskLike = Mask | readonly (readonly (boolean | number)[])[];

/** A `[B]` vector given as a Float64Array or a plain array of numbers. */
export type VectorLike = Float64Array | readonly number[];

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
