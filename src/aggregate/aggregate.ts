import { CompensatedSum } from "../core/sum.js";
import type { Mask, MaskLike, MatrixLike } from "../core/tensor.js";
import { toMask, toMatrix } from "../core/validate.js";
import { type Aggregation, checkAggregation } from "./aggregation.js";
import {
  type AggregationOptions,
  checkNormLen,
  fillTokenWeights,
} from "./effectiveTokenWeights.js";

/**
 * Compensated inner product Σ_{b,t} w[b,t]·x[b,t] over response positions in row-major order;
 * padding is skipped, never multiplied (so junk there, even NaN, cannot leak).
 * @internal
 */
export function maskedDot(w: Float64Array, x: Float64Array, mask: Mask): number {
  const acc = new CompensatedSum();
  const m = mask.data;
  for (let i = 0; i < m.length; i++) if (m[i] === 1) acc.add((w[i] as number) * (x[i] as number));
  return acc.value();
}

/**
 * Aggregate a `[B, T]` per-token quantity to a scalar under one of the four modes.
 *
 * Formula: L = Σ_{b,t} w[b,t]·x[b,t] with w = effectiveTokenWeights(mask, mode) — implemented *as*
 * that inner product (compensated, row-major), so the identity holds bitwise by construction.
 * Gradient / stop-gradient: ∂L/∂x[b,t] = w[b,t] exactly, 0 at padding.
 *
 * @param perToken - The `[B, T]` per-token values; padding may hold anything (NaN, ±Inf).
 * @param responseMask - The `[B, T]` response mask; every row needs at least one response token.
 * @param mode - The aggregation mode.
 * @param options - `normLen`: the budget ℓ, required iff mode is `token_sum_norm`.
 * @returns The scalar aggregate (finite when the response positions are finite).
 * @throws {ShapeError} E_SHAPE when perToken is not 2-D or the mask shape differs.
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has an empty row.
 * @throws {ConfigError} E_CONFIG when `normLen` is missing or invalid for token_sum_norm.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown mode.
 * @derivation docs/derivations/aggregation.md#aggregate
 * @enforcedBy test/aggregate/aggregate.test.ts > aggregate > identity: equals the inner product with effectiveTokenWeights bitwise
 * @since 0.1.0
 */
export function aggregate(
  perToken: MatrixLike,
  responseMask: MaskLike,
  mode: Aggregation,
  options: AggregationOptions = {},
): number {
  const fn = "aggregate";
  const agg = checkAggregation(fn, "mode", mode);
  const x = toMatrix(fn, "perToken", perToken);
  const mask = toMask(fn, responseMask, { rows: x.rows, cols: x.cols, arg: "perToken" });
  const normLen = checkNormLen(fn, agg, options.normLen);
  const w = new Float64Array(x.rows * x.cols);
  fillTokenWeights(mask, agg, normLen, w);
  return maskedDot(w, x.data, mask);
}
