/**
 * Rollout↔trainer logprob mismatch: the inference engine and the trainer score the same sampled
 * tokens under the same weights, so their logprobs should agree; the gap Δ = trainer − rollout is
 * numeric pathology (kernels, precision, tokenization). Reports its distribution, the KL it
 * implies in the estimable direction KL(rollout‖trainer), and catastrophic tokens
 * (docs/diagnostics/mismatch.md).
 */

import { finiteOr, overflowError } from "../core/finite.js";
import { fmtValue } from "../core/message.js";
import { checkFiniteReport, quantilesOf, sampleMoments } from "../core/quantile.js";
import { robustSum } from "../core/sum.js";
import type { MaskLike, MatrixLike } from "../core/tensor.js";
import { checkFiniteAt, checkObject, checkSameShape, toMask, toMatrix } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import type { KLEstimator } from "../kl/estimator.js";
import { k3Value, klPointInto } from "../kl/estimator.js";

/** The levels of {@link MismatchReport.gapQuantiles}: 1%, 5%, 25%, 50%, 75%, 95%, 99%. */
export const MISMATCH_QUANTILE_LEVELS: readonly number[] = Object.freeze([
  0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99,
]);

/** The default catastrophic threshold on |Δ|: e^5 ≈ 148 in probability. */
export const DEFAULT_CATASTROPHIC_GAP: number = 5;

/** Options of {@link logprobMismatch}. */
export interface LogprobMismatchOptions {
  /** A token is catastrophic when |Δ| > catastrophicGap (strict); > 0, default 5. */
  readonly catastrophicGap?: number;
}

/** The distribution of the rollout↔trainer gap Δ = trainer − rollout over response tokens. */
export interface MismatchReport {
  /** N, the number of response tokens. */
  readonly nTokens: number;
  readonly gapMean: number;
  /** Bessel standard deviation; 0 when N = 1. */
  readonly gapStd: number;
  readonly gapAbsMax: number;
  /** Quantiles of Δ at {@link MISMATCH_QUANTILE_LEVELS} (linear interpolation, float64). */
  readonly gapQuantiles: readonly number[];
  /** Mean of k1 = −Δ: estimates KL(rollout‖trainer); always equals −gapMean. */
  readonly klK1: number;
  /** Mean of k2 = Δ²/2 (≥ 0; biased upward by O(Δ³)). */
  readonly klK2: number;
  /** Mean of k3 = e^Δ − 1 − Δ (≥ 0; unbiased for KL(rollout‖trainer)). */
  readonly klK3: number;
  /** Mean of e^−Δ − 1 + Δ, roles swapped; expectation χ²(rollout‖trainer) − KL(rollout‖trainer). */
  readonly klK3TrainerRollout: number;
  /** Mean over rows of the sequence log-ratio Σ_t m·Δ. */
  readonly seqLogRatioMean: number;
  /** Bessel standard deviation over rows; 0 when B = 1. */
  readonly seqLogRatioStd: number;
  readonly seqLogRatioAbsMax: number;
  /** Number of response tokens with |Δ| > catastrophicGap. */
  readonly catastrophicCount: number;
  /** Their (b, t) positions in row-major order. */
  readonly catastrophicIndices: readonly (readonly [b: number, t: number])[];
  /** exp(−gapMean) = PPL_trainer/PPL_rollout (< 1: the trainer finds the tokens more likely). */
  readonly pplRatio: number;
}

/**
 * Mean over response positions (row-major, compensated) of a `[B, T]` matrix; robustSum keeps it
 * finite when partial sums overflow but the mean does not (bitwise the plain mean otherwise).
 */
/** The rank of flat index i among the mask's response positions (its index in the gap list). */
function rank(m: Uint8Array, i: number): number {
  let r = 0;
  for (let j = 0; j < i; j++) r += m[j] as number;
  return r;
}

/**
 * Measure the gap between the trainer's and the inference engine's logprobs of the same tokens.
 *
 * Formula: Δ = trainer − rollout at the N response positions (row-major). klK* = mean of
 * klEstimate(logprobs = rollout, ref = trainer, kind): k1 = −Δ, k2 = Δ²/2, k3 = e^Δ − 1 − Δ, all
 * estimating KL(rollout‖trainer) because the tokens were sampled by the rollout engine;
 * klK3TrainerRollout = mean(e^−Δ − 1 + Δ); sequence log-ratio s_b = Σ_t m·Δ; catastrophic iff
 * |Δ| > catastrophicGap (strict); pplRatio = exp(−mean Δ).
 * Null distribution: identical streams ⇒ every Δ = 0, every KL 0, pplRatio 1, no catastrophes;
 * tokens from p scored by q ⇒ E[k1] = E[k3] = KL(p‖q) (and E[k1] would be −KL(p‖q) had the
 * direction been mislabelled).
 *
 * @param trainerLogprobs - `[B, T]` logprobs recomputed by the trainer.
 * @param rolloutLogprobs - `[B, T]` logprobs reported by the inference engine for the same tokens.
 * @param responseMask - `[B, T]` response mask, ≥ 1 token per row.
 * @param options - `catastrophicGap`: the |Δ| threshold, > 0 (default 5; Infinity flags nothing).
 * @returns The {@link MismatchReport}; padding never influences it, whatever it holds.
 * @throws {ShapeError} E_SHAPE when a stream is not 2-D or the shapes differ.
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has a row without response tokens.
 * @throws {NonFiniteError} E_NONFINITE when a stream is NaN/±Infinity at a response position.
 * @throws {ConfigError} E_CONFIG when catastrophicGap is not a number > 0 (NaN included) or options
 *   is not an object.
 * @throws {OverflowError} E_OVERFLOW when a quantity of the report exceeds float64 for finite
 *   input: a gap Δ or a sequence log-ratio, a k2 mean past |Δ| ≈ 1.9e154, a k3 mean past
 *   |Δ| ≈ 709.78 (e^Δ is not representable), or pplRatio = exp(−mean Δ) past mean Δ ≈ −709.78.
 * @derivation docs/diagnostics/mismatch.md#gaps
 * @enforcedBy test/diagnostics/mismatch.test.ts > logprobMismatch > golden: gaps [0.2, -0.6, 1.0] with catastrophic gap 0.7
 * @enforcedBy test/diagnostics/mismatch.test.ts > logprobMismatch > identity: identical streams give zero gaps, ppl ratio 1 and no catastrophes
 * @enforcedBy test/diagnostics/mismatch.calibration.test.ts > logprobMismatch > calibration: k1 and k3 estimate kl(rollout || trainer), not the reverse or its negative
 * @enforcedBy test/diagnostics/mismatch.test.ts > logprobMismatch > mask invariance: nan and infinite junk at padding never reaches the report
 * @enforcedBy test/diagnostics/hardening.test.ts > logprobMismatch > regression: gaps of 1e300 and -1000 are OverflowErrors naming the estimate, not NaN
 * @since 0.1.0
 */
export function logprobMismatch(
  trainerLogprobs: MatrixLike,
  rolloutLogprobs: MatrixLike,
  responseMask: MaskLike,
  options: LogprobMismatchOptions = {},
): MismatchReport {
  const fn = "logprobMismatch";
  const trainer = toMatrix(fn, "trainerLogprobs", trainerLogprobs);
  const rollout = toMatrix(fn, "rolloutLogprobs", rolloutLogprobs);
  checkSameShape(fn, "trainerLogprobs", trainer, "rolloutLogprobs", rollout);
  const mask = toMask(fn, responseMask, {
    rows: trainer.rows,
    cols: trainer.cols,
    arg: "trainerLogprobs",
  });
  checkFiniteAt(fn, "trainerLogprobs", trainer, mask);
  checkFiniteAt(fn, "rolloutLogprobs", rollout, mask);
  const opts = checkObject(fn, "options", options);
  const gap = opts.catastrophicGap ?? DEFAULT_CATASTROPHIC_GAP;
  if (typeof gap !== "number" || !(gap > 0)) {
    throw fail(ConfigError, fn, "catastrophicGap", "> 0", fmtValue(gap));
  }

  const { rows, cols } = trainer;
  const m = mask.data;
  let n = 0;
  for (let i = 0; i < m.length; i++) n += m[i] as number;
  // One pass, row-major: the gaps Δ, each row's compensated Σ_t Δ, and the four KL estimates with
  // δ = Δ (KL(rollout‖trainer): the tokens are samples of the rollout policy, so it plays
  // "logprobs" and the trainer "ref") and δ = −Δ (roles swapped), each summed as robustSum sums
  // (Neumaier, in the same order), so the means are bitwise those of the estimator arrays.
  const gaps = new Float64Array(n);
  const seq = new Float64Array(rows);
  const catastrophic: (readonly [number, number])[] = [];
  const sums = new Float64Array(8); // [s, c] for k1, k2, k3, k3 swapped
  const firstBad = [-1, -1, -1, -1];
  const badValue = [0, 0, 0, 0];
  const pt = new Float64Array(2);
  const kinds: readonly KLEstimator[] = ["k1", "k2", "k3", "k3"];
  // Neumaier-add v to sums[j], sums[j + 1]; a non-finite v (or derivative: k3's is −expm1,
  // non-finite exactly when the value is) records estimator e's first overflow instead.
  const add = (acc: Float64Array, j: number, v: number, i: number, e: number): void => {
    if (!Number.isFinite(v)) {
      if (firstBad[e] === -1) {
        firstBad[e] = i;
        badValue[e] = v;
      }
      return;
    }
    const S = acc[j] as number;
    const y = S + v;
    if (Math.abs(S) >= Math.abs(v)) acc[j + 1] = (acc[j + 1] as number) + (S - y + v);
    else acc[j + 1] = (acc[j + 1] as number) + (v - y + S);
    acc[j] = y;
  };
  let k = 0;
  for (let b = 0; b < rows; b++) {
    const start = k;
    let s = 0;
    let c = 0;
    for (let t = 0; t < cols; t++) {
      const i = b * cols + t;
      // Padding is skipped (never multiplied by 0), so NaN/±Inf junk there cannot leak.
      if (m[i] !== 1) continue;
      const d = (trainer.data[i] as number) - (rollout.data[i] as number);
      if (!Number.isFinite(d)) {
        throw overflowError(fn, "trainerLogprobs - rolloutLogprobs", d, [b, t]);
      }
      gaps[k++] = d;
      if (Math.abs(d) > gap) catastrophic.push([b, t]);
      const x = s + d;
      if (Math.abs(s) >= Math.abs(d)) c += s - x + d;
      else c += d - x + s;
      s = x;
      // The four estimates (klPointInto's values: k1 −δ, k2 ½δ², k3 with its series), δ = Δ and,
      // roles swapped, δ = −Δ (rollout − trainer is −Δ bitwise: IEEE subtraction is antisymmetric).
      const e3 = Math.expm1(d);
      const e4 = Math.expm1(-d);
      add(sums, 0, -d, i, 0);
      add(sums, 2, 0.5 * d * d, i, 1);
      add(sums, 4, Number.isFinite(e3) ? k3Value(d, e3) : e3, i, 2);
      add(sums, 6, Number.isFinite(e4) ? k3Value(-d, e4) : e4, i, 3);
    }
    // Compensated in row order; finite whenever the exact row sum is (robustSum).
    const plain = Number.isFinite(s) ? s + c : s;
    const total =
      Number.isFinite(plain) || Number.isNaN(plain)
        ? plain
        : robustSum(k - start, (j) => gaps[start + j] as number);
    seq[b] = finiteOr(fn, "sequence log-ratio", total, [b], "Σ_t Δ exceeds float64");
  }
  const g = sampleMoments(gaps);
  const s = sampleMoments(seq);
  // The estimates' errors in the order klK1, klK2, klK3, klK3TrainerRollout were computed.
  for (let e = 0; e < 4; e++) {
    const i = firstBad[e] as number;
    if (i < 0) continue;
    const delta = e === 3 ? -(gaps[rank(m, i)] as number) : (gaps[rank(m, i)] as number);
    throw overflowError(
      fn,
      `${kinds[e]} estimate`,
      badValue[e] as number,
      [Math.floor(i / cols), i % cols],
      `the exact value at delta = ${String(delta)} exceeds float64`,
    );
  }
  const mean = (e: number): number => {
    const S = sums[2 * e] as number;
    const plain = Number.isFinite(S) ? S + (sums[2 * e + 1] as number) : S;
    if (Number.isFinite(plain) || Number.isNaN(plain)) return plain / n;
    return robustSum(
      n,
      (j) => {
        klPointInto(
          kinds[e] as KLEstimator,
          e === 3 ? -(gaps[j] as number) : (gaps[j] as number),
          pt,
        );
        return pt[0] as number;
      },
      n,
    );
  };
  return checkFiniteReport(fn, {
    nTokens: n,
    gapMean: g.mean,
    gapStd: g.std,
    gapAbsMax: g.absMax,
    gapQuantiles: quantilesOf(gaps, MISMATCH_QUANTILE_LEVELS),
    klK1: mean(0),
    klK2: mean(1),
    klK3: mean(2),
    klK3TrainerRollout: mean(3),
    seqLogRatioMean: s.mean,
    seqLogRatioStd: s.std,
    seqLogRatioAbsMax: s.absMax,
    catastrophicCount: catastrophic.length,
    catastrophicIndices: catastrophic,
    pplRatio: Math.exp(-g.mean),
  });
}
