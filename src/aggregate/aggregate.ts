import { finiteOr } from "../core/finite.js";
import { CompensatedSum, robustSum } from "../core/sum.js";
import type { Mask, MaskLike, MatrixLike } from "../core/tensor.js";
import { checkFiniteAt, toMatrix } from "../core/validate.js";
import { type Aggregation, checkAggregation } from "./aggregation.js";
import {
  type AggregationOptions,
  aggregationMask,
  checkNormLen,
  checkOptions,
  fillContextWeights,
} from "./effectiveTokenWeights.js";

/**
 * Compensated inner product Σ_{b,t} w[b,t]·x[b,t] over response positions in row-major order;
 * padding is skipped, never multiplied (so junk there, even NaN, cannot leak). When the running sum
 * overflows while every product is finite (values near 1.8e308 whose weighted sum is still
 * representable), the sum is recomputed by {@link robustSum}'s scaled pass over the same terms in
 * the same order, so the result is ±Infinity only when the exact sum exceeds float64.
 * @internal
 */
export function maskedDot(w: Float64Array, x: Float64Array, mask: Mask): number {
  const acc = new CompensatedSum();
  const m = mask.data;
  for (let i = 0; i < m.length; i++) if (m[i] === 1) acc.add((w[i] as number) * (x[i] as number));
  const plain = acc.value();
  if (Number.isFinite(plain) || Number.isNaN(plain)) return plain;
  const at: number[] = [];
  for (let i = 0; i < m.length; i++) if (m[i] === 1) at.push(i);
  return robustSum(at.length, (k) => {
    const i = at[k] as number;
    return (w[i] as number) * (x[i] as number);
  });
}

/**
 * Aggregate a `[B, T]` per-token quantity to a scalar under one of the five modes.
 *
 * Formula: L = Σ_{b,t} w[b,t]·x[b,t] with w = effectiveTokenWeights(mask, mode) — implemented *as*
 * that inner product (compensated, row-major), so the identity holds bitwise by construction.
 * Gradient / stop-gradient: ∂L/∂x[b,t] = w[b,t] exactly, 0 at padding.
 *
 * @param perToken - The `[B, T]` per-token values; padding may hold anything (NaN, ±Inf).
 * @param responseMask - The `[B, T]` response mask; every row needs at least one response token.
 * @param mode - The aggregation mode.
 * @param options - `normLen`: the budget ℓ, required iff mode is `token_sum_norm`; `global` and
 *   `emptyRows` as {@link effectiveTokenWeights} (docs/derivations/aggregation.md#rows-with-no-response-token).
 * @returns The scalar aggregate: finite, computed stably (a scaled second pass) when a partial sum
 *   overflows but the aggregate itself is representable.
 * @throws {ShapeError} E_SHAPE when perToken is not 2-D or the mask shape differs.
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has an empty row under emptyRows reject.
 * @throws {ConfigError} E_CONFIG when `normLen` is missing or invalid for token_sum_norm, or
 *   `options` is not an object.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown mode.
 * @throws {NonFiniteError} E_NONFINITE when perToken is NaN or ±Infinity at a response position.
 * @throws {OverflowError} E_OVERFLOW (quantity `value`) when the exact aggregate exceeds float64.
 * @derivation docs/derivations/aggregation.md#aggregate
 * @enforcedBy test/aggregate/aggregate.test.ts > aggregate > identity: equals the inner product with effectiveTokenWeights bitwise
 * @enforcedBy test/aggregate/hardening.test.ts > aggregate > rejects: nan or infinity at a response position with E_NONFINITE
 * @enforcedBy test/aggregate/hardening.test.ts > aggregate > golden: a sum whose partial sums overflow but whose value is representable is finite and exact
 * @enforcedBy test/aggregate/emptyRowsAndGlobal.test.ts > effectiveTokenWeights and aggregate with empty rows and a global context > golden: seq_mean_token_mean over rows of lengths [2, 0, 1]: count divides by 3 rows, drop by 2, a context by its own
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
  const mask = aggregationMask(fn, responseMask, options, {
    rows: x.rows,
    cols: x.cols,
    arg: "perToken",
  });
  const opts = checkOptions(fn, options);
  const normLen = checkNormLen(fn, agg, opts.normLen);
  checkFiniteAt(fn, "perToken", x, mask);
  const w = new Float64Array(x.rows * x.cols);
  fillContextWeights(fn, mask, agg, normLen, opts, w);
  return finiteOr(fn, "value", maskedDot(w, x.data, mask), undefined, "Σ w·x exceeds float64");
}
