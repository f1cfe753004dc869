/**
 * Plain readers for the reference implementations: `[B, T]` inputs as nested rows, the mask as
 * booleans, advantages as a function of (b, t), and the aggregation weights written directly from
 * the mask. Nothing here validates: the references assume inputs that the closed forms accept.
 * Deliberately independent of `src/core/validate.ts` and `src/aggregate/*` (only types are shared).
 */
import type { Aggregation } from "../../aggregate/aggregation.js";
import type { MaskLike, Matrix, MatrixLike, VectorLike } from "../../core/tensor.js";

/** Nested rows of a `[B, T]` matrix given as a Matrix or as rows. @internal */
export function rowsOf(x: MatrixLike): readonly (readonly number[])[] {
  if (!("data" in x)) return x.map((row) => Array.from(row));
  const out: number[][] = [];
  for (let b = 0; b < x.rows; b++)
    out.push(Array.from(x.data.slice(b * x.cols, (b + 1) * x.cols), Number));
  return out;
}

/** Nested boolean rows of a mask given as a Mask or as rows. @internal */
export function maskRowsOf(m: MaskLike): boolean[][] {
  if ("data" in m) {
    const out: boolean[][] = [];
    for (let b = 0; b < m.rows; b++) {
      const row: boolean[] = [];
      for (let t = 0; t < m.cols; t++) row.push(m.data[b * m.cols + t] === 1);
      out.push(row);
    }
    return out;
  }
  return m.map((row) =>
    Array.from(row as ArrayLike<number | boolean>, (v) => v === true || v === 1),
  );
}

/** Advantage A[b, t] from `[B]` (broadcast along the row) or `[B, T]` advantages. @internal */
export function advantageAt(adv: VectorLike | MatrixLike): (b: number, t: number) => number {
  if (ArrayBuffer.isView(adv)) return (b) => (adv as ArrayLike<number>)[b] as number;
  if (Array.isArray(adv) && typeof adv[0] === "number") {
    const v = adv as readonly number[];
    return (b) => v[b];
  }
  const rows = rowsOf(adv as MatrixLike);
  return (b, t) => rows[b][t];
}

/**
 * Aggregation weights written from the definitions: token_mean 1/N, seq_mean_token_mean
 * 1/(B·L_b), seq_mean_token_sum 1/B, token_sum_norm 1/(B·ℓ), token_sum 1; 0 at padding. @internal
 */
export function aggregationWeightsRef(
  mask: readonly (readonly boolean[])[],
  mode: Aggregation,
  normLen: number | null | undefined,
  global?: {
    readonly tokens?: number | null;
    readonly rows?: number | null;
    readonly dpSize?: number | null;
  },
  rowEps = 0,
): number[][] {
  // A shard of a global batch divides by the global counts and multiplies by the data-parallel
  // size D (docs/derivations/aggregation.md#global-normalisers); without one, the shard's own.
  const L = mask.map((row) => row.filter(Boolean).length);
  const B = global?.rows ?? mask.length;
  const N = global?.tokens ?? L.reduce((a, l) => a + l, 0);
  const D = global?.dpSize ?? 1;
  const weight = (b: number): number => {
    switch (mode) {
      case "token_mean":
        return D / N;
      case "seq_mean_token_mean":
        return D / (B * (L[b] + rowEps));
      case "seq_mean_token_sum":
        return D / B;
      case "token_sum_norm":
        return D / (B * (normLen as number));
      case "token_sum":
        return D;
    }
  };
  return mask.map((row, b) => row.map((on) => (on ? weight(b) : 0)));
}

/** A `[B, T]` matrix from nested rows. @internal */
export function matrixOf(rows: readonly (readonly number[])[]): Matrix {
  const B = rows.length;
  const T = rows[0].length;
  const data = new Float64Array(B * T);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) data[b * T + t] = rows[b][t];
  return { rows: B, cols: T, data };
}

/** Response positions (b, t) in row-major order. @internal */
export function responsePositions(mask: readonly (readonly boolean[])[]): [number, number][] {
  const out: [number, number][] = [];
  mask.forEach((row, b) => {
    row.forEach((on, t) => {
      if (on) out.push([b, t]);
    });
  });
  return out;
}
