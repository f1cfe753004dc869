/**
 * The arithmetic of the verl models: `agg_loss` as a row reduction and the per-token kernels of
 * `compute_policy_loss_vanilla`, `compute_policy_loss_gspo`, `compute_policy_loss_cispo` and
 * `kl_penalty`, each returning value and closed-form gradient (docs/conformance/frameworks.md#verl).
 * @internal
 */

import { pgClipPoint } from "../../losses/surrogates.js";
import {
  constantRows,
  type FrameworkBatch,
  frameworkResult,
  ones,
  type Reduction,
  reduceRows,
  rowMeans,
  rowsFromLengths,
} from "./batch.js";
import { clampedPpoGrad, clampedPpoTokens } from "./clampedPpo.js";
import type { FrameworkResult } from "./model.js";

/** `agg_loss` modes; `token-sum` exists only at `1dda039b`. */
export type VerlAggMode =
  | "token-mean"
  | "seq-mean-token-sum"
  | "seq-mean-token-sum-norm"
  | "seq-mean-token-mean"
  | "token-sum";

/** `kl_penalty` kinds modelled. */
export type VerlKlKind = "k1" | "k2" | "k3" | "abs" | "k3+";

/** Settings a caller may override to demonstrate normaliser provenance (all unset by default). */
export interface VerlOverrides {
  /** `loss_scale_factor` of `seq-mean-token-sum-norm` (default: the padded width T). */
  readonly lossScaleFactor?: number;
  /** `global_batch_size` of the seq-mean modes (default: rows with at least one token). */
  readonly globalBatchSize?: number;
  /** `batch_num_tokens` of `token-mean` (default: Σ mask of the batch). */
  readonly batchNumTokens?: number;
}

/** ActorConfig defaults: clip_ratio_low/high and clip_ratio_c. */
export const CLIP_LOW = 0.2;
export const CLIP_HIGH = 0.2;
export const CLIP_C = 3;
/** The log-ratio clamp of vanilla, cispo and k3. */
export const LOG_RATIO_CLAMP = 20;
/** GSPO's clamp on the combined log-ratio. */
export const GSPO_LOG_CLAMP_MAX = 10;
const ROW_EPS = 1e-8;

/**
 * The seq-mean-token-mean row divisor L_b + 1e-8 as verl evaluates it with the bool mask its
 * engine passes: L_b is an int64 count, so L_b + 1e-8 is a float32 tensor, which equals L_b
 * exactly for every L_b ≥ 1 (the 1e-8 is below half an ulp).
 */
function rowDivisorBoolMask(len: number): number {
  return Math.fround(Math.fround(len) + Math.fround(ROW_EPS));
}

/** `agg_loss(loss_mat, loss_mask, mode, dp_size=1, …)` as a row reduction. */
export function verlAggregation(
  mode: VerlAggMode,
  batch: FrameworkBatch,
  o: VerlOverrides,
): Reduction {
  const { B, T, L, N, nonEmpty } = batch;
  const gbs = o.globalBatchSize ?? nonEmpty;
  const gbsName = o.globalBatchSize === undefined ? "rows with L > 0" : "global_batch_size";
  switch (mode) {
    case "token-mean":
      return {
        rowDivisor: constantRows(B, 1),
        divisor: o.batchNumTokens ?? N,
        divisorName: o.batchNumTokens === undefined ? "Σ mask" : "batch_num_tokens",
      };
    case "token-sum":
      return { rowDivisor: constantRows(B, 1), divisor: 1, divisorName: "dp_size" };
    case "seq-mean-token-sum":
      return { rowDivisor: constantRows(B, 1), divisor: gbs, divisorName: gbsName };
    case "seq-mean-token-sum-norm":
      return {
        rowDivisor: constantRows(B, 1),
        divisor: gbs * (o.lossScaleFactor ?? T),
        divisorName: gbsName,
      };
    case "seq-mean-token-mean":
      return {
        rowDivisor: rowsFromLengths(L, rowDivisorBoolMask),
        divisor: gbs,
        divisorName: gbsName,
      };
  }
}

/** vanilla: ℓ = where(A<0, min(−A·c, max(−A·r, −A·clamp(r))), max(…)), r = exp(clamp(z, ±20)). */
export function verlVanilla(
  fn: string,
  batch: FrameworkBatch,
  red: (b: FrameworkBatch) => Reduction,
): FrameworkResult {
  const tokens = clampedPpoTokens(batch, CLIP_LOW, CLIP_HIGH, CLIP_C);
  const { loss, weights } = reduceRows(fn, batch, tokens.ell, red(batch));
  const grad = clampedPpoGrad(batch, weights, tokens);
  return frameworkResult(batch, loss, grad, tokens.ell, tokens.ratio);
}

/**
 * gspo (GSPO-token): log s = lp − sg[lp] + sg[mean_t m·z] clamped at max 10, s = exp(log s);
 * ℓ = max(−A·s, −A·clamp(s, 0.8, 1.2)); always seq-mean-token-mean.
 */
export function verlGspo(fn: string, batch: FrameworkBatch, o: VerlOverrides): FrameworkResult {
  const { B, T, m, lp, old, adv } = batch;
  const n = lp.length;
  const z = new Float64Array(n);
  for (let i = 0; i < n; i++) if (m[i] === 1) z[i] = (lp[i] as number) - (old[i] as number);
  // sg[mean_t m·z]: the sequence weight is a constant; lp − sg[lp] is exactly 0 in value, 1 in slope.
  const ns = rowMeans(batch, z);
  const ell = new Float64Array(n);
  const dEll = new Float64Array(n);
  const dEllDr = new Float64Array(n);
  const ratio = ones(batch);
  for (let b = 0; b < B; b++) {
    const nb = ns[b] as number;
    const s = Math.exp(Math.min(nb, GSPO_LOG_CLAMP_MAX));
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (m[i] !== 1) continue;
      const a = adv[i] as number;
      const pt = pgClipPoint(s, a, 1 - CLIP_LOW, 1 + CLIP_HIGH, null);
      ratio[i] = s;
      ell[i] = -pt.obj;
      const pass = nb <= GSPO_LOG_CLAMP_MAX && pt.slope !== 0;
      dEllDr[i] = pass ? -(a * pt.slope) : 0;
      dEll[i] = pass ? -(a * pt.slope) * s : 0;
    }
  }
  const { loss, weights } = reduceRows(
    fn,
    batch,
    ell,
    verlAggregation("seq-mean-token-mean", batch, o),
  );
  const grad = clampedPpoGrad(batch, weights, { dEll, dEllDr, ratio });
  return frameworkResult(batch, loss, grad, ell, ratio);
}

/** cispo: ℓ = −sg[clamp(r, 0.8, 1.2)]·A·lp with r = exp(clamp(z, ±20)); token-mean. */
export function verlCispo(fn: string, batch: FrameworkBatch, o: VerlOverrides): FrameworkResult {
  const { m, lp, old, adv } = batch;
  const n = lp.length;
  const ell = new Float64Array(n);
  const coef = new Float64Array(n);
  const ratio = ones(batch);
  for (let i = 0; i < n; i++) {
    if (m[i] !== 1) continue;
    const z = (lp[i] as number) - (old[i] as number);
    const r = Math.exp(Math.min(Math.max(z, -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP));
    // sg[clamp(r)]: CISPO holds the clipped IS weight constant; only lp carries gradient.
    const w = Math.min(Math.max(r, 1 - CLIP_LOW), 1 + CLIP_HIGH);
    ratio[i] = r;
    coef[i] = -w * (adv[i] as number);
    ell[i] = (coef[i] as number) * (lp[i] as number);
  }
  const { loss, weights } = reduceRows(fn, batch, ell, verlAggregation("token-mean", batch, o));
  const grad = new Float64Array(n);
  for (let i = 0; i < n; i++)
    if (m[i] === 1) grad[i] = (weights[i] as number) * (coef[i] as number);
  return frameworkResult(batch, loss, grad, ell, ratio);
}

/** One `kl_penalty` value and its ∂/∂lp (straight-through `+`: value of the base, slope of k2). */
export function verlKlPoint(
  kind: VerlKlKind,
  lp: number,
  ref: number,
): { value: number; dLogprob: number } {
  const d = lp - ref;
  switch (kind) {
    case "k1":
      return { value: d, dLogprob: 1 };
    case "abs":
      return { value: Math.abs(d), dLogprob: d > 0 ? 1 : d < 0 ? -1 : 0 };
    case "k2":
      return { value: 0.5 * (d * d), dLogprob: d };
    case "k3":
    case "k3+": {
      const x0 = ref - lp;
      const x = Math.min(Math.max(x0, -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP);
      const e = Math.exp(x);
      const kld = e - x - 1;
      const value = Math.min(Math.max(kld, -10), 10);
      if (kind === "k3+") return { value, dLogprob: d };
      const pass = x0 >= -LOG_RATIO_CLAMP && x0 <= LOG_RATIO_CLAMP && kld >= -10 && kld <= 10;
      return { value, dLogprob: pass ? 1 - e : 0 };
    }
  }
}

export function verlKl(
  fn: string,
  kind: VerlKlKind,
  batch: FrameworkBatch,
  o: VerlOverrides,
): FrameworkResult {
  const { m, lp, ref } = batch;
  const n = lp.length;
  const k = new Float64Array(n);
  const dk = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (m[i] !== 1) continue;
    const pt = verlKlPoint(kind, lp[i] as number, ref[i] as number);
    k[i] = pt.value;
    dk[i] = pt.dLogprob;
  }
  const { loss, weights } = reduceRows(fn, batch, k, verlAggregation("token-mean", batch, o));
  const grad = new Float64Array(n);
  for (let i = 0; i < n; i++) if (m[i] === 1) grad[i] = (weights[i] as number) * (dk[i] as number);
  return frameworkResult(batch, loss, grad, k, ones(batch));
}
