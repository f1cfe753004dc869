/**
 * The per-token PPO clip loss as verl's `compute_policy_loss_vanilla` and OpenRLHF's
 * `PolicyLoss(ppo)` both compute it: the log-ratio clamped to ±20 before exp, then
 * −min(r·A, clip(r, 1 − ε_lo, 1 + ε_hi)·A) with an optional dual-clip cap c for A < 0
 * (docs/conformance/frameworks.md). Shared so the two models cannot drift apart.
 * @internal
 */
import { pgClipPoint } from "../../losses/surrogates.js";
import { type FrameworkBatch, ones } from "./batch.js";

/** Log-ratio clamp of both frameworks' PPO path. */
export const LOG_RATIO_CLAMP = 20;

/**
 * Per-token loss ℓ_t, its derivative ∂ℓ_t/∂lp_t = (∂ℓ_t/∂r)·r and the ratio. A clamped log-ratio,
 * a saturated clip or the dual-clip cap passes no gradient (exactly +0). `dEllDr` = ∂ℓ_t/∂r lets
 * the caller form w·∂ℓ/∂r·r in the stable order when w·(∂ℓ/∂r·r) overflows.
 * @internal
 */
export function clampedPpoTokens(
  batch: FrameworkBatch,
  epsLow: number,
  epsHigh: number,
  dualClip: number | null,
): { ell: Float64Array; dEll: Float64Array; dEllDr: Float64Array; ratio: Float64Array } {
  const { m, lp, old, adv } = batch;
  const n = lp.length;
  const ell = new Float64Array(n);
  const dEll = new Float64Array(n);
  const dEllDr = new Float64Array(n);
  const ratio = ones(batch);
  for (let i = 0; i < n; i++) {
    if (m[i] !== 1) continue;
    const z = (lp[i] as number) - (old[i] as number);
    const r = Math.exp(Math.min(Math.max(z, -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP));
    const a = adv[i] as number;
    const pt = pgClipPoint(r, a, 1 - epsLow, 1 + epsHigh, dualClip);
    ratio[i] = r;
    ell[i] = -pt.obj;
    const pass = z >= -LOG_RATIO_CLAMP && z <= LOG_RATIO_CLAMP && pt.slope !== 0;
    dEllDr[i] = pass ? -(a * pt.slope) : 0;
    dEll[i] = pass ? -(a * pt.slope) * r : 0;
  }
  return { ell, dEll, dEllDr, ratio };
}

/**
 * ∂loss/∂lp_t = w_t·∂ℓ_t/∂lp_t in the frameworks' order, or (w_t·∂ℓ_t/∂r)·r when that product
 * overflows while the exact gradient is representable (advantages near 1.8e308).
 * @internal
 */
export function clampedPpoGrad(
  batch: FrameworkBatch,
  weights: Float64Array,
  tokens: { dEll: Float64Array; dEllDr: Float64Array; ratio: Float64Array },
): Float64Array {
  const { m } = batch;
  const grad = new Float64Array(m.length);
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 1) continue;
    const w = weights[i] as number;
    const g = w * (tokens.dEll[i] as number);
    grad[i] = Number.isFinite(g)
      ? g
      : w * (tokens.dEllDr[i] as number) * (tokens.ratio[i] as number);
  }
  return grad;
}
