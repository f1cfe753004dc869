/**
 * Token entropy: the per-token estimate from sampled-token logprobs (Monte Carlo, on-policy only)
 * or from exact per-token entropies, and the trend/changepoint test of its per-step trace
 * (docs/diagnostics/entropy.md).
 */

import { fmtValue } from "../core/message.js";
import { checkFiniteReport } from "../core/quantile.js";
import { robustSum } from "../core/sum.js";
import type { MaskLike, MatrixLike, VectorLike } from "../core/tensor.js";
import { checkFiniteAt, checkObject, toMask, toMatrix } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import { checkEntropiesAt } from "../losses/entropyMask.js";
import { type TrendOptions, type TrendReport, trendTest } from "./trend.js";

/**
 * Options of {@link tokenEntropyEstimate}.
 * @since 0.1.0
 */
export interface EntropyOptions {
  /**
   * `[B, T]` exact per-token entropies H_t = logsumexp(z) − Σ softmax(z)·z from full logits; when
   * given they are used instead of the logprobs. @defaultValue null
   */
  readonly entropies?: MatrixLike | null;
}

/**
 * What {@link tokenEntropyEstimate} returns.
 * @since 0.1.0
 */
export interface EntropyReport {
  /** N, the number of response tokens. */
  readonly nTokens: number;
  /** Mean of the per-token stream over response tokens, in nats. */
  readonly entropyEstimate: number;
  /** `[B]`: row means of the per-token stream over each row's response tokens. */
  readonly perSeqEntropy: Float64Array;
  /** "exact" (given entropies) or "mc_cross_entropy" (−logprobs of sampled tokens). */
  readonly estimator: "exact" | "mc_cross_entropy";
}

/**
 * Estimate the policy's per-token entropy over the response tokens of a batch.
 *
 * Formula: with h_{b,t} = −logprobs_{b,t} ("mc_cross_entropy") or entropies_{b,t} ("exact"),
 * entropyEstimate = Σ_{b,t} m·h / N and perSeqEntropy_b = Σ_t m·h / L_b (so the pooled estimate is
 * the L_b-weighted mean of the per-sequence ones).
 * Null distribution: if the tokens were sampled from π and logprobs are π's, E[−log π(Y)] = H(π)
 * (unbiased, variance Var[−log π(Y)]/N for independent tokens); if they were sampled from μ ≠ π,
 * E_μ[−log π(Y)] = H(μ) + KL(μ‖π), the cross-entropy. The exact path has no sampling variance.
 *
 * @param logprobs - `[B, T]` sampled-token logprobs; required unless `entropies` is given, in
 *   which case it is ignored (and may be null).
 * @param responseMask - `[B, T]`, 1 at response tokens, every row non-empty.
 * @param options - `entropies`: exact per-token entropies, finite and ≥ 0 at response positions.
 * @returns The token count, the pooled and per-sequence estimates and the estimator used.
 * @throws {ConfigError} E_CONFIG when both logprobs and entropies are missing, or an entropy at a
 *   response position is negative.
 * @throws {ShapeError} E_SHAPE when logprobs or entropies are not `[B, T]`.
 * @throws {MaskError} E_MASK when the mask is not 0/1, misshaped, or has an empty row.
 * @throws {NonFiniteError} E_NONFINITE when the stream is not finite at a response position.
 * @throws {ConfigError} E_CONFIG when options is not an object.
 * @derivation docs/diagnostics/entropy.md#estimate
 * @enforcedBy test/diagnostics/entropy.test.ts > tokenEntropyEstimate > golden: mc path gives 7/3 pooled and [1.5, 4] per sequence
 * @enforcedBy test/diagnostics/entropy.test.ts > tokenEntropyEstimate > golden: exact path averages the given entropies
 * @enforcedBy test/diagnostics/entropy.calibration.test.ts > tokenEntropyEstimate > calibration: on-policy mc estimate is within 4 clt sd of the exact entropy
 * @enforcedBy test/diagnostics/hardening.test.ts > tokenEntropyEstimate > regression: a mean of entropies near 1.8e308 is finite
 * @since 0.1.0
 */
export function tokenEntropyEstimate(
  logprobs: MatrixLike | null,
  responseMask: MaskLike,
  options: EntropyOptions = {},
): EntropyReport {
  const fn = "tokenEntropyEstimate";
  const entropies = checkObject(fn, "options", options).entropies ?? null;
  const exact = entropies !== null;
  let source: MatrixLike;
  if (exact) source = entropies;
  else if (logprobs === null || logprobs === undefined) {
    throw fail(
      ConfigError,
      fn,
      "logprobs",
      "given when options.entropies is not (sampled-token logprobs for the MC estimate, or exact per-token entropies via options.entropies)",
      fmtValue(logprobs),
    );
  } else source = logprobs;
  const arg = exact ? "entropies" : "logprobs";
  const x = toMatrix(fn, arg, source);
  const mask = toMask(fn, responseMask, { rows: x.rows, cols: x.cols, arg });
  checkFiniteAt(fn, arg, x, mask);
  const { rows: B, cols: T } = x;
  const m = mask.data;
  if (exact) checkEntropiesAt(fn, x, mask);
  // h at the response positions, row-major; every mean is robustSum's compensated mean, bitwise
  // the plain one unless a partial sum overflows while the mean does not (|h| near 1.8e308).
  const h: number[] = [];
  const perSeq = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    const start = h.length;
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (m[i] !== 1) continue;
      const v = x.data[i] as number;
      h.push(exact ? v : -v);
    }
    const L = h.length - start;
    perSeq[b] = robustSum(L, (k) => h[start + k] as number, L);
  }
  const n = h.length;
  return checkFiniteReport(fn, {
    nTokens: n,
    entropyEstimate: robustSum(n, (k) => h[k] as number, n),
    perSeqEntropy: perSeq,
    estimator: exact ? "exact" : "mc_cross_entropy",
  });
}

/**
 * Test the trailing window of a per-step entropy trace for a trend and a collapse (mean shift).
 *
 * Formula: {@link trendTest} on the series: Theil–Sen slope of the last `window` values; CUSUM
 * statistic max_k |Σ_{i≤k} (x_i − x̄)| against the m-th largest of nPerm permuted statistics,
 * m = ⌊α·(nPerm + 1)⌋; changepointIndex = (S − window) + argmax_k |S_k| iff stat > threshold.
 * Null distribution: for an exchangeable window, P(changepoint reported) = m/(nPerm + 1) ≤ α
 * exactly (no ties), whatever the distribution of the values.
 *
 * @param entropyPerStep - `[S]` per-step entropy estimates, finite everywhere.
 * @param options - window (2 ≤ window ≤ S), nPerm (default 999), alpha (default 0.05), rng.
 * @returns The slope, the CUSUM statistic and threshold, and the changepoint index or null.
 * @throws {ShapeError} E_SHAPE when the series is not a 1-D array of numbers.
 * @throws {NonFiniteError} E_NONFINITE when a value of the series is NaN or infinite.
 * @throws {ConfigError} E_CONFIG when window, nPerm, alpha or rng break their rules, including
 *   an alpha too small for nPerm (⌊α·(nPerm + 1)⌋ = 0) and the caps window ≤ 4096, nPerm ≤ 1e6,
 *   nPerm·window ≤ 1e8.
 * @throws {OverflowError} E_OVERFLOW when the exact slope, statistic or threshold exceeds float64.
 * @derivation docs/diagnostics/entropy.md#trend
 * @enforcedBy test/diagnostics/entropy.test.ts > entropyTrend > golden: a level shift 3 to 1 at step 30 is located at global index 29 for windows 60 and 40
 * @enforcedBy test/diagnostics/entropy.test.ts > entropyTrend > golden: exact linear series 5 - 0.1t recovers slope -0.1
 * @enforcedBy test/diagnostics/entropy.calibration.test.ts > entropyTrend > calibration: false-positive rate on 500 iid gaussian windows is alpha within 4 binomial sd
 * @since 0.1.0
 */
export function entropyTrend(entropyPerStep: VectorLike, options: TrendOptions): TrendReport {
  return trendTest(entropyPerStep, options, { fn: "entropyTrend", arg: "entropyPerStep" });
}
