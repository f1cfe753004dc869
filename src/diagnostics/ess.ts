/**
 * Importance effective sample size (Kish): how many equally weighted samples a batch of
 * importance weights w = π_new/π_old is worth. ESS/n = 1 on-policy and falls as the policies
 * drift apart; under Gaussian log-weight drift N(0, σ²) it tends to exp(−σ²)
 * (docs/diagnostics/ess.md).
 */

import { finiteOr, overflowError } from "../core/finite.js";
import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { checkFiniteReport, checkSample, sampleMoments } from "../core/quantile.js";
import { CompensatedSum, robustSum } from "../core/sum.js";
import type { Mask, MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import {
  checkFiniteAll,
  checkFiniteAt,
  checkObject,
  checkSameShape,
  toMask,
  toMatrix,
} from "../core/validate.js";
import { ConfigError, fail, ShapeError } from "../errors.js";

/** The level at which importance weights are formed: one per token, or one per sequence. */
export type ESSLevel = "token" | "sequence";

/** Every ESS level. */
export const ESS_LEVELS: readonly ESSLevel[] = ["token", "sequence"];

/** Options of {@link importanceEss}. */
export interface ImportanceEssOptions {
  /** `"sequence"` (default): one un-normalised log-weight per row; `"token"`: one per token. */
  readonly level?: ESSLevel;
}

/** Options of {@link slidingEss}. */
export interface SlidingEssOptions {
  /** Rows per window, an integer in [2, B]. */
  readonly window: number;
  /** Rows between window starts, an integer ≥ 1 (default 1). */
  readonly step?: number;
}

/** The importance ESS of a batch and the distribution of its log-weights. */
export interface ESSReport {
  readonly level: ESSLevel;
  /** Number of weights: B at sequence level, N (response tokens) at token level. */
  readonly n: number;
  /** (Σw)²/Σw², in [1, n]. */
  readonly ess: number;
  /** ESS/n, in (0, 1]; exactly 1 when all weights are equal. */
  readonly essRatio: number;
  readonly logWeightMean: number;
  /** Bessel standard deviation of the log-weights; 0 when n = 1. */
  readonly logWeightStd: number;
  readonly logWeightMin: number;
  readonly logWeightMax: number;
}

/**
 * Kish ESS of the log-weights lw[start, end), computed as (Σw')²/Σw'² with w' = exp(lw − max lw).
 * Unchecked kernel: finite values, end > start.
 * @internal
 */
export function essKernel(lw: ArrayLike<number>, start: number, end: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = start; i < end; i++) if ((lw[i] as number) > max) max = lw[i] as number;
  const s1 = new CompensatedSum();
  const s2 = new CompensatedSum();
  for (let i = start; i < end; i++) {
    // ESS is invariant to a common scale of the weights: shifting by max keeps every w' ≤ 1
    // (no overflow) and the largest w' exactly 1 (no total underflow).
    const w = Math.exp((lw[i] as number) - max);
    s1.add(w);
    s2.add(w * w);
  }
  const a = s1.value();
  return (a * a) / s2.value();
}

/**
 * Compute the Kish effective sample size of importance weights given by their logarithms.
 *
 * Formula: w'_i = exp(lw_i − max_j lw_j); ESS = (Σ w'_i)² / Σ w'_i² (invariant to a common shift
 * of the lw, so the shift is exact algebra, not an approximation). 1 ≤ ESS ≤ n; ESS = n exactly
 * when all lw are equal.
 * Null distribution: lw iid N(μ, σ²) ⇒ ESS/n → exp(−σ²) as n → ∞.
 *
 * @param logWeights - The n ≥ 1 log-weights, all finite (e.g. the staleness gaps of a queue).
 * @returns The ESS (divide by n for the ratio).
 * @throws {ShapeError} E_SHAPE when `logWeights` is empty or not a 1-D array of numbers.
 * @throws {NonFiniteError} E_NONFINITE when a log-weight is NaN or infinite.
 * @derivation docs/diagnostics/ess.md#effective-sample-size
 * @enforcedBy test/diagnostics/ess.test.ts > essFromLogWeights > golden: weights 1 and 2 give 9/5
 * @enforcedBy test/diagnostics/ess.test.ts > essFromLogWeights > rejects: an empty or non-finite vector
 * @enforcedBy test/diagnostics/hardening.test.ts > essFromLogWeights > identity: ess is invariant under a common shift of the log-weights (bitwise)
 * @since 0.1.0
 */
export function essFromLogWeights(logWeights: ArrayLike<number>): number {
  const fn = "essFromLogWeights";
  checkSample(fn, "logWeights", logWeights);
  if (logWeights.length < 1) {
    throw fail(ShapeError, fn, "logWeights", "non-empty", "length 0");
  }
  checkFiniteAll(fn, "logWeights", logWeights);
  return essKernel(logWeights, 0, logWeights.length);
}

/** Validate the two logprob streams and the mask of an ESS call. */
function checkStreams(
  fn: string,
  logprobsNew: MatrixLike,
  logprobsOld: MatrixLike,
  responseMask: MaskLike,
): { lpNew: Matrix; lpOld: Matrix; mask: Mask } {
  const lpNew = toMatrix(fn, "logprobsNew", logprobsNew);
  const lpOld = toMatrix(fn, "logprobsOld", logprobsOld);
  checkSameShape(fn, "logprobsNew", lpNew, "logprobsOld", lpOld);
  const mask = toMask(fn, responseMask, { rows: lpNew.rows, cols: lpNew.cols, arg: "logprobsNew" });
  checkFiniteAt(fn, "logprobsNew", lpNew, mask);
  checkFiniteAt(fn, "logprobsOld", lpOld, mask);
  return { lpNew, lpOld, mask };
}

/** The log-ratio new − old at flat index i, or OverflowError when it exceeds float64. */
function gapAt(fn: string, lpNew: Matrix, lpOld: Matrix, i: number): number {
  const g = (lpNew.data[i] as number) - (lpOld.data[i] as number);
  if (Number.isFinite(g)) return g;
  throw overflowError(
    fn,
    "logprobsNew - logprobsOld",
    g,
    [Math.floor(i / lpNew.cols), i % lpNew.cols],
    "the exact log-ratio exceeds float64",
  );
}

/** Un-normalised sequence log-weights lw_b = Σ_t m·(new − old), padding skipped. */
function sequenceLogWeights(fn: string, lpNew: Matrix, lpOld: Matrix, mask: Mask): Float64Array {
  const { rows, cols } = lpNew;
  const lw = new Float64Array(rows);
  for (let b = 0; b < rows; b++) {
    const idx: number[] = [];
    // Padding is skipped, never multiplied by 0: inf − inf junk there cannot leak.
    for (let i = b * cols; i < (b + 1) * cols; i++) if (mask.data[i] === 1) idx.push(i);
    // Compensated, row order; robustSum equals the plain compensated sum whenever that is finite
    // and survives partial sums that overflow when the total does not.
    const total = robustSum(idx.length, (k) => gapAt(fn, lpNew, lpOld, idx[k] as number));
    lw[b] = finiteOr(fn, "sequence log-weight", total, [b], "Σ_t (new − old) exceeds float64");
  }
  return lw;
}

/** Token log-weights: the gaps new − old at response positions, in row-major order. */
function tokenLogWeights(fn: string, lpNew: Matrix, lpOld: Matrix, mask: Mask): Float64Array {
  const out: number[] = [];
  for (let i = 0; i < mask.data.length; i++) {
    if (mask.data[i] === 1) out.push(gapAt(fn, lpNew, lpOld, i));
  }
  return Float64Array.from(out);
}

/**
 * Measure the importance effective sample size of a batch scored by two policies.
 *
 * Formula: sequence level lw_b = Σ_t m_{b,t}·(new − old)_{b,t} (the exact, un-normalised sequence
 * importance weight — not GSPO's length-normalised mean), n = B; token level lw = the gaps
 * (new − old) at the N response positions, n = N. ESS = (Σw)²/Σw² via {@link essFromLogWeights}'s
 * stable form; essRatio = ESS/n.
 * Null distribution: identical policies ⇒ every w = 1 ⇒ essRatio exactly 1; lw iid N(0, σ²) ⇒
 * essRatio → exp(−σ²) (lognormal moments E[w]²/E[w²]).
 *
 * @param logprobsNew - `[B, T]` logprobs of the sampled tokens under the new (target) policy.
 * @param logprobsOld - `[B, T]` logprobs under the old (behaviour) policy.
 * @param responseMask - `[B, T]` response mask, ≥ 1 token per row.
 * @param options - `level`: `"sequence"` (default) or `"token"`.
 * @returns The {@link ESSReport}; padding never influences it, whatever it holds.
 * @throws {ShapeError} E_SHAPE when a stream is not 2-D or the shapes differ.
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has a row without response tokens.
 * @throws {NonFiniteError} E_NONFINITE when a stream is NaN/±Infinity at a response position.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when `level` is not "token" or "sequence".
 * @throws {ConfigError} E_CONFIG when options is not an object.
 * @throws {OverflowError} E_OVERFLOW when a log-ratio new − old, a sequence log-weight or a
 *   log-weight statistic exceeds float64 (the ESS itself is computed max-shifted and never does).
 * @derivation docs/diagnostics/ess.md#log-weights
 * @enforcedBy test/diagnostics/ess.test.ts > importanceEss > golden: sequence level on [[0.5, -0.5], [ln2, pad]]
 * @enforcedBy test/diagnostics/ess.test.ts > importanceEss > golden: token level on [[0.5, -0.5], [ln2, pad]]
 * @enforcedBy test/diagnostics/ess.test.ts > importanceEss > identity: identical policies give an ess ratio of exactly 1
 * @enforcedBy test/diagnostics/ess.calibration.test.ts > importanceEss > calibration: gaussian log-weights give ess/n near exp(-sigma^2)
 * @enforcedBy test/diagnostics/ess.test.ts > importanceEss > mask invariance: nan and infinite junk at padding never reaches the report
 * @enforcedBy test/diagnostics/hardening.test.ts > importanceEss > regression: sequence log-weights whose partial sums overflow give the exact ess, not NaN
 * @since 0.1.0
 */
export function importanceEss(
  logprobsNew: MatrixLike,
  logprobsOld: MatrixLike,
  responseMask: MaskLike,
  options: ImportanceEssOptions = {},
): ESSReport {
  const fn = "importanceEss";
  const { lpNew, lpOld, mask } = checkStreams(fn, logprobsNew, logprobsOld, responseMask);
  const opts = checkObject(fn, "options", options);
  const level = oneOf(fn, "level", opts.level ?? "sequence", ESS_LEVELS);
  const lw =
    level === "sequence"
      ? sequenceLogWeights(fn, lpNew, lpOld, mask)
      : tokenLogWeights(fn, lpNew, lpOld, mask);
  const n = lw.length;
  const ess = essKernel(lw, 0, n);
  const m = sampleMoments(lw);
  return checkFiniteReport(fn, {
    level,
    n,
    ess,
    essRatio: ess / n,
    logWeightMean: m.mean,
    logWeightStd: m.std,
    logWeightMin: m.min,
    logWeightMax: m.max,
  });
}

/** The most log-weights {@link slidingEss} reads in all its windows together (about a second). */
export const MAX_SLIDING_WORK = 1e8;

function checkInteger(fn: string, arg: string, x: number, rule: string, ok: boolean): void {
  if (typeof x !== "number" || !Number.isInteger(x) || !ok) {
    throw fail(ConfigError, fn, arg, rule, `${arg}=${fmtValue(x)}`);
  }
}

/**
 * Track the sequence-level importance ESS ratio over sliding windows of rows (e.g. a batch in
 * arrival order, to localise where the behaviour policy went stale).
 *
 * Formula: lw_b = Σ_t m_{b,t}·(new − old)_{b,t}; for k = 0 … ⌊(B − window)/step⌋ the window
 * rows [k·step, k·step + window) give out_k = ESS(lw_window)/window. A single window covering the
 * batch equals importanceEss(...).essRatio bitwise.
 * Null distribution: identical policies ⇒ every entry exactly 1.
 *
 * @param logprobsNew - `[B, T]` logprobs under the new policy.
 * @param logprobsOld - `[B, T]` logprobs under the old policy.
 * @param responseMask - `[B, T]` response mask, ≥ 1 token per row.
 * @param options - `window`: rows per window, an integer in [2, B]; `step`: an integer ≥ 1 (default 1).
 * @returns `[⌊(B − window)/step⌋ + 1]` ESS ratios, one per window in order.
 * @throws {ShapeError} E_SHAPE when a stream is not 2-D or the shapes differ.
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has a row without response tokens.
 * @throws {NonFiniteError} E_NONFINITE when a stream is NaN/±Infinity at a response position.
 * @throws {ConfigError} E_CONFIG when window < 2, window > B, step < 1, either is not an integer,
 *   or (number of windows)·window exceeds {@link MAX_SLIDING_WORK}.
 * @throws {OverflowError} E_OVERFLOW when a log-ratio or a sequence log-weight exceeds float64.
 * @derivation docs/diagnostics/ess.md#sliding-windows
 * @enforcedBy test/diagnostics/ess.test.ts > slidingEss > golden: weights [1, 2, 1, 2] under three window and step choices
 * @enforcedBy test/diagnostics/ess.test.ts > slidingEss > identity: one window covering the batch equals the importance ess ratio bitwise
 * @enforcedBy test/diagnostics/ess.test.ts > slidingEss > rejects: window below 2 or above b and step below 1
 * @enforcedBy test/diagnostics/hardening.test.ts > slidingEss > rejects: window and step whose total work passes the cap with a ConfigError
 * @since 0.1.0
 */
export function slidingEss(
  logprobsNew: MatrixLike,
  logprobsOld: MatrixLike,
  responseMask: MaskLike,
  options: SlidingEssOptions,
): Float64Array {
  const fn = "slidingEss";
  const { lpNew, lpOld, mask } = checkStreams(fn, logprobsNew, logprobsOld, responseMask);
  const B = lpNew.rows;
  const opts = checkObject(fn, "options", options);
  const { window } = opts;
  const step = opts.step ?? 1;
  // typeof first: comparing an array to a number would join it (new Array(1e9): RangeError).
  const num = (x: unknown): x is number => typeof x === "number";
  checkInteger(fn, "window", window, "an integer >= 2", num(window) && window >= 2);
  checkInteger(fn, "window", window, `<= batch size B=${B}`, window <= B);
  checkInteger(fn, "step", step, "an integer >= 1", num(step) && step >= 1);
  const count = Math.floor((B - window) / step) + 1;
  if (count * window > MAX_SLIDING_WORK) {
    throw fail(
      ConfigError,
      fn,
      "window",
      `such that (number of windows) × window <= ${MAX_SLIDING_WORK} (the work cap; raise step)`,
      `${count} windows × ${window} = ${count * window}`,
    );
  }
  const lw = sequenceLogWeights(fn, lpNew, lpOld, mask);
  const out = new Float64Array(count);
  for (let k = 0; k < out.length; k++) {
    out[k] = essKernel(lw, k * step, k * step + window) / window;
  }
  return out;
}
