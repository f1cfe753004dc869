/**
 * The per-step scalars a run diagnosis keeps, in one fused pass over the step's tensors
 * (docs/diagnostics/run.md#one-pass-per-step). diagnoseRun keeps nine numbers of each step's
 * five reports (the ESS ratio, the gap std and the catastrophic tokens, the entropy estimate,
 * the killed fraction, the length-bias slope and interval); computing the whole reports (every
 * quantile, four KL means, per-row arrays) and validating the mask and each stream once per
 * detector cost most of a run's time. This pass reads every stream once and computes exactly
 * those numbers, each by the same arithmetic in the same order as its detector (so bitwise the
 * same), on the plain case: typed `[B, T]` streams, a 0/1 mask without empty rows, every value
 * read finite and at most 1e100 in magnitude, |old − rollout| ≤ 600, non-negative entropies,
 * valid options and a length design the HC3 fit accepts. On that case no detector can raise
 * (no sum, square or exponential can leave float64), so the report's values are the only
 * output. Anything else returns null and the caller runs diagnoseBatch, which gives every skip
 * reason and error exactly.
 */

import { checkAggregation } from "../aggregate/aggregation.js";
import { checkNormLen, rowTokenWeights } from "../aggregate/effectiveTokenWeights.js";
import { sampleMoments } from "../core/quantile.js";
import { mulPow2 } from "../core/scale.js";
import { twoSumError } from "../core/sum.js";
import { isMask, isMatrix, type Matrix } from "../core/tensor.js";
import { PolgradError } from "../errors.js";
import type { PartialBatch } from "../io/batch.js";
import { checkClip } from "./clipping.js";
import {
  type BatchDiagnosis,
  DEFAULT_CLIP,
  type DiagnoseOptions,
  needs,
  type SkippedDetector,
} from "./diagnoseBatch.js";
import { essKernel } from "./ess.js";
import { Z_975 } from "./lengthBias.js";
import { DEFAULT_CATASTROPHIC_GAP } from "./mismatch.js";
import { designDefect, olsHc3Scaled } from "./ols.js";
import type { RunStep } from "./runSteps.js";

/** The largest |value| the fused pass accepts: sums of 2^53 such terms stay far below 2^1024. */
const BOUND = 1e100;
/** The largest |old − rollout| it accepts: e^600·2^53 is finite, so every KL mean of the gaps is. */
const GAP_BOUND = 600;
/** Catastrophic positions kept per step (RunStep.catastrophicIndices). */
const KEPT_INDICES = 10;

/** The scalars of one step (RunStep's, without its step and file; null where a detector was skipped). */
export interface StepSummary
  extends Omit<RunStep, "step" | "file" | "klRef" | "rewardMean" | "rewardStd" | "truncationRate"> {
  /** The detectors skipped, with diagnoseBatch's reasons, in its order. */
  readonly skipped: readonly SkippedDetector[];
  /** Whether the mismatch detector overflowed (a gap beyond 709 nats: an alarm in a run). */
  readonly mismatchOverflow: boolean;
}

/**
 * The scalars of a step from diagnoseBatch's reports (the path for steps outside the plain case).
 * @internal
 */
export function summaryOf(d: BatchDiagnosis): StepSummary {
  return {
    essRatio: d.ess?.essRatio ?? null,
    mismatchGapStd: d.mismatch?.gapStd ?? null,
    catastrophicCount: d.mismatch?.catastrophicCount ?? null,
    catastrophicIndices: (d.mismatch?.catastrophicIndices ?? []).slice(0, KEPT_INDICES),
    entropy: d.entropy?.entropyEstimate ?? null,
    clipKilledFrac: d.clip?.clipKilledFrac ?? null,
    zeroAdvFrac: d.clip?.zeroAdvantageFrac ?? null,
    clipPosHighFrac: d.clip?.fracPosAdvClippedHigh ?? null,
    clipPosLowFrac: d.clip?.fracPosAdvClippedLow ?? null,
    clipNegLowFrac: d.clip?.fracNegAdvClippedLow ?? null,
    clipNegHighFrac: d.clip?.fracNegAdvClippedHigh ?? null,
    lengthSlope: d.lengthBias?.slope ?? null,
    lengthCiLow: d.lengthBias?.ciLow ?? null,
    lengthCiHigh: d.lengthBias?.ciHigh ?? null,
    skipped: d.skipped,
    mismatchOverflow: d.alarms.some((a) => a.code === "mismatch_overflow"),
  };
}

/** Scratch for the gaps, reused from step to step (the pass is synchronous and not re-entered). */
let gapScratch = new Float64Array(0);

/** A `[B, T]` float stream of the batch, or undefined; null when it is not a plain typed one. */
function plain(x: Matrix | undefined, B: number, T: number): Float64Array | undefined | null {
  if (x === undefined) return undefined;
  return isMatrix(x) && x.rows === B && x.cols === T && x.data.length === B * T ? x.data : null;
}

/** The census's ratio exp(g), clamped into [MIN_VALUE, MAX_VALUE] as clipCensusOfLogprobs clamps it. */
function exactRatio(g: number): number {
  const e = Math.exp(g);
  return e > Number.MAX_VALUE ? Number.MAX_VALUE : e === 0 ? Number.MIN_VALUE : e;
}

/** The options the detectors would read, validated as they validate them; null when invalid. */
function stepOptions(batch: PartialBatch, options: DiagnoseOptions) {
  try {
    const clip = checkClip("clipReport", options.clip ?? DEFAULT_CLIP);
    const gap = options.catastrophicGap ?? DEFAULT_CATASTROPHIC_GAP;
    if (typeof gap !== "number" || !(gap > 0)) return null;
    if (batch.advantages === undefined) return { clip, gap, mode: null, normLen: 0 };
    const mode = checkAggregation(
      "lengthBiasProbe",
      "aggMode",
      options.aggregation ?? "seq_mean_token_mean",
    );
    const normLen = checkNormLen("lengthBiasProbe", mode, options.normLen ?? null);
    return { clip, gap, mode, normLen };
  } catch (e) {
    if (e instanceof PolgradError) return null;
    throw e;
  }
}

/**
 * The step's RunStep scalars from one fused pass, or null when the step is not the plain case
 * (the caller then runs diagnoseBatch).
 *
 * Formula: as each detector (diagnoseBatch): essRatio = ESS(lw)/B with lw_b = Σ_t m·(lp − old);
 * mismatchGapStd = Bessel std of Δ = old − rollout over response tokens, catastrophic iff
 * |Δ| > catastrophicGap; entropy = Σ m·h / N with h = entropies, else −(old ?? rollout ?? lp);
 * clipKilledFrac = (tokens whose PG_CLIP gradient is zero)/N on r = exp(lp − old); the
 * length-bias slope and its HC3 95 % interval of y_b = Σ_t |A|·w_b on L_b. Every sum is the
 * compensated one its detector computes, term by term in row-major order.
 *
 * @param batch - The step's partial batch.
 * @param options - diagnoseBatch's options.
 * @returns The scalars, or null.
 * @derivation docs/diagnostics/run.md#one-pass-per-step
 * @enforcedBy test/diagnostics/stepSummary.test.ts > stepSummary > identity: equals the scalars diagnoseBatch reports, bitwise, on random steps with and without every stream
 * @enforcedBy test/diagnostics/stepSummary.test.ts > stepSummary > regression: steps outside the plain case return null, so diagnoseBatch gives their skips and errors
 * @internal
 */
export function stepSummary(batch: PartialBatch, options: DiagnoseOptions): StepSummary | null {
  const mask = batch.responseMask;
  if (!isMask(mask)) return null;
  const { rows: B, cols: T, data: m } = mask;
  if (m.length !== B * T) return null;
  const opts = stepOptions(batch, options);
  if (opts === null) return null;
  const lp = plain(batch.logprobs, B, T);
  const old = plain(batch.oldLogprobs, B, T);
  const roll = plain(batch.rolloutLogprobs, B, T);
  const ent = plain(batch.entropies, B, T);
  if (lp === null || old === null || roll === null || ent === null) return null;
  const A = batch.advantages;
  let advRow: Float64Array | null = null;
  let advTok: Float64Array | null = null;
  if (A instanceof Float64Array) {
    if (A.length !== B) return null;
    for (let b = 0; b < B; b++) if (!(Math.abs(A[b] as number) <= BOUND)) return null;
    advRow = A;
  } else if (A !== undefined) {
    const d = plain(A, B, T);
    if (d === null || d === undefined) return null;
    advTok = d;
  }

  // Row lengths and the 0/1 check: the weights of the length-bias probe need them first.
  const L = new Int32Array(B);
  let N = 0;
  for (let b = 0; b < B; b++) {
    let n = 0;
    for (let i = b * T; i < (b + 1) * T; i++) {
      const v = m[i] as number;
      if (v > 1) return null;
      n += v;
    }
    if (n === 0) return null;
    L[b] = n;
    N += n;
  }
  const doEss = lp !== undefined && old !== undefined;
  const doMis = old !== undefined && roll !== undefined;
  const doClip = doEss && A !== undefined;
  const sampling = ent ?? old ?? roll ?? lp;
  const exact = ent !== undefined;
  const doLen = A !== undefined;
  const w = doLen ? rowTokenWeights(opts.mode as never, opts.normLen, L, N) : null;
  const lo = 1 - opts.clip.epsLow;
  const hi = 1 + opts.clip.epsHigh;
  const cap = opts.clip.cap;
  const gapLimit = opts.gap;

  if (doMis && gapScratch.length < N) gapScratch = new Float64Array(N);
  const gaps = gapScratch;
  const lw = new Float64Array(B);
  const y = new Float64Array(B);
  const kept: [number, number][] = [];
  let catastrophic = 0;
  // The census' quadrants, as clipReport's bits: A > 0 above / below the band, A < 0 above / below.
  let posHigh = 0;
  let posLow = 0;
  let negHigh = 0;
  let negLow = 0;
  let capKilled = 0;
  let zeroAdv = 0;
  let k = 0;
  let hs = 0;
  let hc = 0;
  for (let b = 0; b < B; b++) {
    const o = b * T;
    let ls = 0;
    let lc = 0;
    let ys = 0;
    let yc = 0;
    const wb = w === null ? 0 : (w[b] as number);
    const ab = advRow === null ? 0 : (advRow[b] as number);
    for (let t = 0; t < T; t++) {
      const i = o + t;
      if (m[i] === 0) continue;
      if (doEss) {
        const x = (lp as Float64Array)[i] as number;
        const z = (old as Float64Array)[i] as number;
        if (!(Math.abs(x) <= BOUND && Math.abs(z) <= BOUND)) return null;
        const g = x - z;
        const s = ls + g;
        lc += twoSumError(ls, g, s);
        ls = s;
        if (doClip) {
          const r = exactRatio(g);
          const a = advTok === null ? ab : (advTok[i] as number);
          if (!(Math.abs(a) <= BOUND)) return null;
          // One branch tree for the quadrants and gradientKilled's cases (lo < hi, so a token is
          // above or below the band, not both): killed = A > 0 above + A < 0 below + A = 0 + the
          // A < 0 tokens past the dual-clip cap that are not below the band.
          if (a > 0) {
            if (r > hi) posHigh++;
            else if (r < lo) posLow++;
          } else if (a < 0) {
            if (r > hi) negHigh++;
            if (r < lo) negLow++;
            else if (cap !== null && r > cap) capKilled++;
          } else zeroAdv++;
        }
      }
      if (doMis) {
        const z = (old as Float64Array)[i] as number;
        const q = (roll as Float64Array)[i] as number;
        if (!(Math.abs(z) <= BOUND && Math.abs(q) <= BOUND)) return null;
        const d = z - q;
        if (!(Math.abs(d) <= GAP_BOUND)) return null;
        gaps[k++] = d;
        if (Math.abs(d) > gapLimit) {
          if (catastrophic < KEPT_INDICES) kept.push([b, t]);
          catastrophic++;
        }
      }
      if (sampling !== undefined) {
        const v = sampling[i] as number;
        if (!(Math.abs(v) <= BOUND) || (exact && v < 0)) return null;
        const h = exact ? v : -v;
        const s = hs + h;
        hc += twoSumError(hs, h, s);
        hs = s;
      }
      if (doLen) {
        const a = advTok === null ? ab : (advTok[i] as number);
        if (!(Math.abs(a) <= BOUND)) return null;
        const v = Math.abs(a) * wb;
        const s = ys + v;
        yc += twoSumError(ys, v, s);
        ys = s;
      }
    }
    lw[b] = ls + lc;
    y[b] = ys + yc;
  }

  let lengthSlope: number | null = null;
  let lengthCiLow: number | null = null;
  let lengthCiHigh: number | null = null;
  if (doLen) {
    if (designDefect(L) !== null) return null;
    const { fit, ex, ey } = olsHc3Scaled(L, y);
    const slope = mulPow2(fit.slope, ex - ey);
    const zSe = Z_975 * mulPow2(fit.slopeSe, ex - ey);
    lengthSlope = slope;
    lengthCiLow = slope - zSe;
    lengthCiHigh = slope + zSe;
    const intercept = mulPow2(fit.intercept, -ey);
    if (![slope, zSe, lengthCiLow, lengthCiHigh, intercept].every(Number.isFinite)) return null;
  }
  const skipped: SkippedDetector[] = [];
  const skip = (detector: SkippedDetector["detector"], names: (keyof PartialBatch)[]) => {
    const reason = needs(batch, names);
    if (reason !== null) skipped.push({ detector, reason, code: null });
  };
  skip("ess", ["logprobs", "oldLogprobs"]);
  skip("mismatch", ["oldLogprobs", "rolloutLogprobs"]);
  skip("clip", ["logprobs", "oldLogprobs", "advantages"]);
  if (sampling === undefined)
    skipped.push({
      detector: "entropy",
      reason: "needs entropies or a sampled-token logprob stream",
      code: null,
    });
  skip("length_bias", ["advantages"]);
  return {
    essRatio: doEss ? essKernel(lw, 0, B) / B : null,
    mismatchGapStd: doMis ? sampleMoments(gaps.subarray(0, N)).std : null,
    catastrophicCount: doMis ? catastrophic : null,
    catastrophicIndices: kept,
    entropy: sampling === undefined ? null : (hs + hc) / N,
    clipKilledFrac: doClip ? (posHigh + negLow + capKilled) / N : null,
    zeroAdvFrac: doClip ? zeroAdv / N : null,
    clipPosHighFrac: doClip ? posHigh / N : null,
    clipPosLowFrac: doClip ? posLow / N : null,
    clipNegLowFrac: doClip ? negLow / N : null,
    clipNegHighFrac: doClip ? negHigh / N : null,
    lengthSlope,
    lengthCiLow,
    lengthCiHigh,
    skipped,
    mismatchOverflow: false,
  };
}
