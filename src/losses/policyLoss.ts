import { maskedDot } from "../aggregate/aggregate.js";
import { fillTokenWeights } from "../aggregate/effectiveTokenWeights.js";
import { mustBe } from "../core/message.js";
import {
  type Mask,
  type MaskLike,
  type Matrix,
  type MatrixLike,
  rowLengths,
  type VectorLike,
} from "../core/tensor.js";
import {
  broadcastAdvantages,
  checkFiniteAt,
  checkSameShape,
  toMask,
  toMatrix,
} from "../core/validate.js";
import { ConfigError } from "../errors.js";
import { klPointwise } from "../kl/estimator.js";
import { type PolicyLossConfig, validatePolicyLossConfig } from "./config.js";
import { tisWeights } from "./isCorrection.js";
import { ratioBackward, ratioForward } from "./ratio.js";
import { cispoWeight, pgClipPoint } from "./surrogates.js";

/** The tensors a policy loss reads. `[B, T]` unless noted; padding may hold anything. */
export interface PolicyLossInputs {
  /** Current-policy logprobs of the sampled tokens — the only differentiable stream. */
  readonly logprobs: MatrixLike;
  /** Behaviour-policy logprobs recomputed by the trainer (constant). */
  readonly oldLogprobs: MatrixLike;
  /** `[B]` per-sequence or `[B, T]` per-token advantages (constant). */
  readonly advantages: VectorLike | MatrixLike;
  /** 1 at response tokens, 0 at padding; every row needs at least one response token. */
  readonly responseMask: MaskLike;
  /** Reference-policy logprobs; required iff `config.kl` is set. */
  readonly refLogprobs?: MatrixLike | null;
  /** Logprobs reported by the rollout engine; required iff `config.isCorrection` is set. */
  readonly rolloutLogprobs?: MatrixLike | null;
}

/** Result of {@link policyLoss}. Every `[B, T]` field follows the masked-position contract. */
export interface PolicyLossResult {
  /** The scalar loss to minimise: aggregate(perTokenObjective) + coef·klLoss. */
  readonly loss: number;
  /** ∂loss/∂logprobs in closed form, `[B, T]`, exactly 0 at padding. */
  readonly gradLogprobs: Matrix;
  /** Per-token surrogate after TIS, before KL, `[B, T]`, 0 at padding. */
  readonly perTokenObjective: Matrix;
  /** The surrogate's ratio (sg), `[B, T]`, exactly 1 at padding; all ones for reinforce. */
  readonly ratio: Matrix;
  /** Tokens whose ratio sits below the band on the side that binds (false at padding). */
  readonly clippedLow: Mask;
  /** Tokens whose ratio sits above the band on the side that binds, or above the dual-clip cap. */
  readonly clippedHigh: Mask;
  /** The unscaled as-loss KL term, or null without `config.kl`. */
  readonly klLoss: number | null;
}

function zeroFilled(x: Matrix, m: Uint8Array): Float64Array {
  const out = new Float64Array(x.data.length);
  for (let i = 0; i < out.length; i++) if (m[i] === 1) out[i] = x.data[i] as number;
  return out;
}

function requireStream(
  fn: string,
  arg: string,
  x: MatrixLike | null | undefined,
  why: string,
): MatrixLike {
  if (x === null || x === undefined)
    throw new ConfigError(fn, arg, mustBe(fn, arg, `given when ${why}`, String(x)));
  return x;
}

/**
 * Compute a policy-gradient loss and its closed-form gradient w.r.t. `logprobs` in one pass.
 *
 * Formula: L = Σ_{b,t} w_{b,t}·ρ_{b,t}·ℓ_{b,t} + coef·Σ_{b,t} w^kl_{b,t}·k(ref − lp), with w the
 * aggregation weights, ρ the TIS weight and ℓ the surrogate: pg −r·A; pg_clip −min(r·A,
 * clamp(r, 1−ε_lo, 1+ε_hi)·A) (dual clip: −max(·, c·A) for A < 0); reinforce −A·lp;
 * cispo −sg[ŵ]·A·lp. The ratio r is token exp(lp − old), sequence exp(Σ_t (lp − old)/L_b), or
 * sequence_token sg[s_b]·exp(lp − old)/sg[exp(lp − old)].
 * Gradient / stop-gradient: ∂L/∂lp in closed form; constants are old, ref, rollout, A, sg[ρ]
 * (TIS weights are data), sg[ŵ] (CISPO holds the clipped weight constant), sg[s_b] and
 * sg[exp(lp − old)] in the sequence_token ratio (token-local gradient by construction).
 *
 * @param config - The loss configuration; validated at call entry.
 * @param inputs - The batch (`[B, T]` streams, `[B]` or `[B, T]` advantages, mask).
 * @returns The loss, its gradient and per-token diagnostics; at padding gradient and objective
 *   are 0, ratio is 1 and the clip flags are false.
 * @throws {ConfigError} E_CONFIG when the config breaks a rule or a required stream is missing.
 * @throws {ShapeError} E_SHAPE when a stream or the advantages have the wrong shape.
 * @throws {MaskError} E_MASK when the mask is not 0/1, misshaped, or has an empty row.
 * @throws {NonFiniteError} E_NONFINITE when a stream is not finite at a response position.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown ratio, surrogate, mode or estimator.
 * @derivation docs/derivations/losses.md#policy-loss
 * @enforcedBy test/losses/policyLoss.golden.test.ts > policyLoss > golden: pg_clip inside the band
 * @enforcedBy test/losses/policyLoss.golden.test.ts > policyLoss > golden: 2x2 ragged batch
 * @enforcedBy test/losses/policyLoss.fixtures.test.ts > policyLoss > conformance: matches polgrad 0.2.0 (pytorch autograd) on every recorded case
 * @see arXiv 1707.06347 eq. 7 (PPO), 2507.18071 eqs. 7 and 14 (GSPO), 2506.13585 eq. 4 (CISPO)
 * @since 0.1.0
 */
export function policyLoss(config: PolicyLossConfig, inputs: PolicyLossInputs): PolicyLossResult {
  const fn = "policyLoss";
  const cfg = validatePolicyLossConfig(fn, config);
  const logprobs = toMatrix(fn, "logprobs", inputs.logprobs);
  const old = toMatrix(fn, "oldLogprobs", inputs.oldLogprobs);
  checkSameShape(fn, "logprobs", logprobs, "oldLogprobs", old);
  const mask = toMask(fn, inputs.responseMask, {
    rows: logprobs.rows,
    cols: logprobs.cols,
    arg: "logprobs",
  });
  checkFiniteAt(fn, "logprobs", logprobs, mask);
  checkFiniteAt(fn, "oldLogprobs", old, mask);
  let rollout: Matrix | null = null;
  let ref: Matrix | null = null;
  if (cfg.isCorrection !== null) {
    rollout = toMatrix(
      fn,
      "rolloutLogprobs",
      requireStream(fn, "rolloutLogprobs", inputs.rolloutLogprobs, "config.isCorrection is set"),
    );
    checkSameShape(fn, "logprobs", logprobs, "rolloutLogprobs", rollout);
    checkFiniteAt(fn, "rolloutLogprobs", rollout, mask);
  }
  if (cfg.kl !== null) {
    ref = toMatrix(
      fn,
      "refLogprobs",
      requireStream(fn, "refLogprobs", inputs.refLogprobs, "config.kl is set"),
    );
    checkSameShape(fn, "logprobs", logprobs, "refLogprobs", ref);
    checkFiniteAt(fn, "refLogprobs", ref, mask);
  }
  const A = broadcastAdvantages(fn, inputs.advantages, logprobs, "logprobs", mask).data;

  const { rows: B, cols: T } = logprobs;
  const n = B * T;
  const m = mask.data;
  const L = rowLengths(mask);
  const lp = zeroFilled(logprobs, m);
  const olp = zeroFilled(old, m);
  const w = new Float64Array(n);
  fillTokenWeights(mask, cfg.aggregation, cfg.normLen, w);
  // sg[ρ]: TIS weights are data (old vs rollout), constant w.r.t. θ.
  const rho =
    rollout !== null && cfg.isCorrection !== null
      ? tisWeights(cfg.isCorrection, olp, zeroFilled(rollout, m), mask)
      : null;

  const reinforce = cfg.surrogate === "reinforce";
  const z = new Float64Array(n);
  for (let i = 0; i < n; i++) z[i] = (lp[i] as number) - (olp[i] as number);
  const fwd = ratioForward(cfg.ratio, z, mask, L);
  const objective = new Float64Array(n);
  const grad = new Float64Array(n);
  const dr = new Float64Array(n);
  const low = new Uint8Array(n);
  const high = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (m[i] !== 1) continue;
    const a = A[i] as number;
    const r = fwd.r[i] as number;
    const p = rho === null ? 1 : (rho[i] as number);
    // Upstream ∂L/∂ℓ_t = w_t·ρ_t; ℓ = −obj, so ∂L/∂obj = −(w_t·ρ_t).
    const g = -((w[i] as number) * p);
    let ell: number;
    switch (cfg.surrogate) {
      case "pg":
        ell = -(r * a);
        dr[i] = g * a;
        break;
      case "pg_clip": {
        const pt = pgClipPoint(r, a, cfg.lo, cfg.hi, cfg.cap);
        ell = -pt.obj;
        // A saturated clamp or the cap passes no gradient: exactly +0, as autograd's masking gives.
        dr[i] = pt.slope === 1 ? g * a : pt.slope === 0 ? 0 : g * a * pt.slope;
        if (pt.high) high[i] = 1;
        if (pt.low) low[i] = 1;
        break;
      }
      case "reinforce":
        ell = -(a * (lp[i] as number));
        grad[i] = g * a;
        break;
      case "cispo": {
        // sg[ŵ]: CISPO holds the clipped IS weight constant; only lp carries gradient.
        const coefA = cispoWeight(r, cfg.lo, cfg.hi, cfg.oneSided) * a;
        ell = -(coefA * (lp[i] as number));
        grad[i] = g * coefA;
        if (r > cfg.hi) high[i] = 1;
        if (!cfg.oneSided && r < cfg.lo) low[i] = 1;
        break;
      }
    }
    objective[i] = rho === null ? ell : ell * p;
  }
  if (cfg.surrogate === "pg" || cfg.surrogate === "pg_clip")
    ratioBackward(cfg.ratio, fwd, dr, mask, L, grad);
  let loss = maskedDot(w, objective, mask);

  let klLoss: number | null = null;
  if (cfg.kl !== null && ref !== null) {
    const wk = new Float64Array(n);
    fillTokenWeights(mask, cfg.kl.aggregation, cfg.kl.normLen, wk);
    const k = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (m[i] !== 1) continue;
      const pt = klPointwise(cfg.kl.kind, (ref.data[i] as number) - (lp[i] as number));
      k[i] = pt.value;
      grad[i] = (grad[i] as number) + cfg.kl.coef * (wk[i] as number) * pt.dLogprob;
    }
    klLoss = maskedDot(wk, k, mask);
    loss = loss + cfg.kl.coef * klLoss;
  }
  const ratio = reinforce ? new Float64Array(n).fill(1) : fwd.r;
  return {
    loss,
    gradLogprobs: { rows: B, cols: T, data: grad },
    perTokenObjective: { rows: B, cols: T, data: objective },
    ratio: { rows: B, cols: T, data: ratio },
    clippedLow: { rows: B, cols: T, data: low },
    clippedHigh: { rows: B, cols: T, data: high },
    klLoss,
  };
}
