/**
 * The length-bias probe: does the weight a sequence's advantages carry in the aggregated loss grow
 * with its length? Regresses each sequence's total advantage weight on its length by OLS, with an
 * HC3 robust confidence interval (docs/diagnostics/length-bias.md).
 */

import { type Aggregation, checkAggregation } from "../aggregate/aggregation.js";
import { checkNormLen, fillTokenWeights } from "../aggregate/effectiveTokenWeights.js";
import { finiteOr } from "../core/finite.js";
import { fmtIndices } from "../core/message.js";
import { checkFiniteReport } from "../core/quantile.js";
import { mulPow2 } from "../core/scale.js";
import { CompensatedSum, robustSum } from "../core/sum.js";
import { type MaskLike, type MatrixLike, rowLengths, type VectorLike } from "../core/tensor.js";
import { broadcastAdvantages, checkObject, toMask } from "../core/validate.js";
import { fail, MaskError, ShapeError } from "../errors.js";
import { designDefect, normalQuantile, olsHc3Scaled } from "./ols.js";

/** Options of {@link lengthBiasProbe}. */
export interface LengthBiasOptions {
  /** The aggregation whose token weights w define each sequence's total weight. */
  readonly aggMode: Aggregation;
  /** Generation budget ℓ, required iff `aggMode` is `token_sum_norm`, ignored otherwise. */
  readonly normLen?: number | null | undefined;
}

/** The result of {@link lengthBiasProbe}: plain readonly data (render with renderLengthBiasText). */
export interface LengthBiasReport {
  /** OLS slope β̂ of y_i = Σ_t |A|·w on L_i (weight per extra response token). */
  readonly slope: number;
  /** HC3 robust standard error of the slope. */
  readonly slopeSe: number;
  /** slope − z·slopeSe, z = Φ⁻¹(0.975). */
  readonly ciLow: number;
  /** slope + z·slopeSe. */
  readonly ciHigh: number;
  /** OLS intercept α̂ = ȳ − β̂·L̄. */
  readonly intercept: number;
  /** The number of sequences B. */
  readonly n: number;
  /** `[B]` Σ_t w[b, t]: each sequence's total token weight under the aggregation. */
  readonly perSeqWeightSum: Float64Array;
  /** `[B]` response lengths L_b. */
  readonly perSeqLength: Int32Array;
}

/** z = Φ⁻¹(0.975), computed once (AS 241; 1.9599639845400536, one ulp from the exact value). */
export const Z_975: number = normalQuantile(0.975);

/**
 * Regress each sequence's total advantage weight in the loss on its length, with a 95 % HC3 interval.
 *
 * Formula: w = effectiveTokenWeights(mask, aggMode, normLen); y_i = Σ_t |A[i, t]|·w[i, t] over
 * response positions; x_i = L_i; OLS slope β̂ = Σ(x − x̄)(y − ȳ)/Sxx, intercept ȳ − β̂x̄; HC3 se
 * √(Σ (e_i/(1 − h_i))² (x_i − x̄)² / Sxx²) with h_i = 1/n + (x_i − x̄)²/Sxx; CI β̂ ± Φ⁻¹(0.975)·se.
 * With |A| ≡ 1 the slope is structural: seq_mean_token_mean 0, token_mean 1/N, seq_mean_token_sum
 * 1/B, token_sum_norm 1/(B·ℓ), with zero residuals.
 * Null distribution: when E[y_i | L_i] does not depend on L_i (independent draws, any
 * heteroskedasticity), (β̂ − 0)/se → N(0, 1), so the CI covers 0 with probability ≈ 0.95; under
 * seq_mean_token_mean a CI excluding 0 is data-level bias (|A| correlates with length).
 * Gradient / stop-gradient: none (a read-only diagnostic of constants).
 *
 * @param advantages - The `[B]` or `[B, T]` advantages; finite at response positions (a `[B]`
 *   vector everywhere). Padding may hold anything and is never read.
 * @param responseMask - The `[B, T]` response mask: ≥ 1 token per row, B ≥ 3, at least two distinct
 *   lengths, and not exactly two distinct lengths with one of them held by a single row.
 * @param options - `aggMode` (required) and `normLen` (required iff `token_sum_norm`).
 * @returns The report; `perSeqWeightSum` and `perSeqLength` are fresh arrays.
 * @throws {MaskError} E_MASK when the mask is not 0/1, has an empty row, has constant lengths, or a
 *   single row holds one of exactly two distinct lengths (leverage 1).
 * @throws {ShapeError} E_SHAPE when the mask is not 2-D, the advantages are not `[B]` or `[B, T]`
 *   matching the mask, or B < 3.
 * @throws {NonFiniteError} E_NONFINITE when an advantage is NaN or ±Inf at a response position.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when aggMode is not an aggregation mode.
 * @throws {ConfigError} E_CONFIG when normLen is missing or not a positive integer for token_sum_norm,
 *   or options is not an object.
 * @throws {OverflowError} E_OVERFLOW when a per-sequence weight Σ_t |A|·w, the slope, its se or the
 *   CI exceeds float64 (the regression itself runs rescaled by a power of two).
 * @derivation docs/diagnostics/length-bias.md#the-probe
 * @enforcedBy test/diagnostics/lengthBias.test.ts > lengthBiasProbe > golden: lengths [1, 2, 3] with y = [1, 2, 4] give slope 3/2, intercept −2/3 and hc3 se 1/√2
 * @enforcedBy test/diagnostics/lengthBias.test.ts > lengthBiasProbe > golden: structural slopes with |A| ≡ 1 on lengths [1, 2, 3, 3]
 * @enforcedBy test/diagnostics/lengthBias.test.ts > lengthBiasProbe > mask invariance: non-finite junk at padding leaves the report bitwise unchanged
 * @enforcedBy test/diagnostics/lengthBias.calibration.test.ts > lengthBiasProbe > calibration: the hc3 95% interval covers the true slope 0.5 in 92–98% of 400 heteroskedastic runs
 * @enforcedBy test/diagnostics/hardening.test.ts > lengthBiasProbe > identity: slope, se and intercept scale with advantages × 2^k (bitwise)
 * @since 0.1.0
 */
export function lengthBiasProbe(
  advantages: VectorLike | MatrixLike,
  responseMask: MaskLike,
  options: LengthBiasOptions,
): LengthBiasReport {
  const fn = "lengthBiasProbe";
  const arg = "responseMask";
  const mask = toMask(fn, responseMask);
  const { rows: B, cols: T } = mask;
  const like = { rows: B, cols: T, data: new Float64Array(0) };
  const adv = broadcastAdvantages(fn, advantages, like, arg, mask).data;
  const L = rowLengths(mask);
  const defect = designDefect(L);
  if (defect === "too-few") {
    throw fail(
      ShapeError,
      fn,
      arg,
      "a [B, T] mask with B >= 3 (two regression parameters leave n − 2 residual degrees of freedom)",
      `B = ${B}`,
    );
  }
  if (defect === "constant") {
    throw fail(
      MaskError,
      fn,
      arg,
      "a mask with at least two distinct row lengths (the length-bias slope is undefined otherwise)",
      `constant lengths: every sequence has ${L[0]} response tokens`,
    );
  }
  if (defect === "leverage-one") {
    throw fail(
      MaskError,
      fn,
      arg,
      "a mask whose row lengths are not exactly two values with one held by a single row (HC3 is undefined at leverage h = 1)",
      `per-sequence lengths ${fmtIndices(Array.from(L), 20)}`,
    );
  }
  const opts = checkObject(fn, "options", options);
  const mode = checkAggregation(fn, "aggMode", opts.aggMode);
  const normLen = checkNormLen(fn, mode, opts.normLen);
  const w = new Float64Array(B * T);
  fillTokenWeights(mask, mode, normLen, w);
  const y = new Float64Array(B);
  const perSeqWeightSum = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    const idx: number[] = [];
    for (let t = 0; t < T; t++) if (mask.data[b * T + t] === 1) idx.push(b * T + t); // padding is never read
    // Compensated in row order; robustSum keeps y_b finite when partial sums overflow but y_b does
    // not (bitwise the plain sum otherwise).
    const yb = robustSum(idx.length, (k) => {
      const i = idx[k] as number;
      return Math.abs(adv[i] as number) * (w[i] as number);
    });
    y[b] = finiteOr(fn, "perSeqAdvantageWeight", yb, [b], "Σ_t |A|·w exceeds float64");
    const ws = new CompensatedSum();
    for (const i of idx) ws.add(w[i] as number);
    perSeqWeightSum[b] = ws.value();
  }
  // The fit runs on y rescaled by a power of two 2^ey (1 on moderate y, bitwise the plain fit), so
  // |A| near 1.8e308 does not overflow its sums and squares; slope, se and intercept scale by 2^-ey.
  const { fit, ex, ey } = olsHc3Scaled(L, y);
  const slope = mulPow2(fit.slope, ex - ey);
  const slopeSe = mulPow2(fit.slopeSe, ex - ey);
  const zSe = Z_975 * slopeSe;
  return checkFiniteReport(fn, {
    slope,
    slopeSe,
    ciLow: slope - zSe,
    ciHigh: slope + zSe,
    intercept: mulPow2(fit.intercept, -ey),
    n: B,
    perSeqWeightSum,
    perSeqLength: L,
  });
}
