import { maskedDot } from "../aggregate/aggregate.js";
import { fillTokenWeights } from "../aggregate/effectiveTokenWeights.js";
import { checkFiniteOutput, finiteOr, overflowError } from "../core/finite.js";
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
  requireRecord,
  toMask,
  toMatrix,
} from "../core/validate.js";
import { ConfigError, type OverflowError } from "../errors.js";
import { klPointwise } from "../kl/estimator.js";
import {
  type PolicyLossConfig,
  type ResolvedPolicyLossConfig,
  validatePolicyLossConfig,
} from "./config.js";
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
  /**
   * The surrogate's ratio (sg), `[B, T]`, exactly 1 at padding; all ones for reinforce. A ratio
   * whose exp overflows where the loss stays finite (clipped high, dual-clip cap, CISPO, A = 0) is
   * reported saturated, as Number.MAX_VALUE.
   */
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

/** The description of the inputs object in messages. */
export const POLICY_LOSS_INPUTS =
  "a PolicyLossInputs object { logprobs, oldLogprobs, advantages, responseMask, … }";

/** Why a per-token objective is not finite: the surrogate term and, for ratios, the log-ratio. */
function objectiveWhy(
  cfg: ResolvedPolicyLossConfig,
  logRatio: number,
  r: number,
  a: number,
  lp: number,
): string {
  const which = cfg.ratio === "token" ? "log-ratio lp − old" : "mean log-ratio of the row";
  switch (cfg.surrogate) {
    case "reinforce":
      return `−A·lp with A = ${a}, lp = ${lp} exceeds float64`;
    case "cispo":
      return `−sg[ŵ]·A·lp with A = ${a}, lp = ${lp} exceeds float64`;
    default:
      return r === Number.POSITIVE_INFINITY
        ? `${which} = ${logRatio}: exp overflows and the ratio enters the loss unclipped with A = ${a}`
        : `${which} = ${logRatio}: r·A = ${r}·${a} exceeds float64`;
  }
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
 * @throws {OverflowError} E_OVERFLOW when a result is not representable for finite input, naming
 *   the quantity (`perTokenObjective`, `klLoss`, `gradLogprobs`, `loss`) and the position: an
 *   overflowing ratio on the unclipped branch (pg; pg_clip with A < 0 and no binding cap), r·A or
 *   A·lp past 1.8e308, a k3 term e^δ with δ ≥ 710. A clipped token whose ratio overflows is finite
 *   with gradient exactly 0 (docs/conventions.md#numeric-policy).
 * @derivation docs/derivations/losses.md#policy-loss
 * @enforcedBy test/losses/policyLoss.golden.test.ts > policyLoss > golden: pg_clip inside the band
 * @enforcedBy test/losses/policyLoss.golden.test.ts > policyLoss > golden: 2x2 ragged batch
 * @enforcedBy test/losses/policyLoss.fixtures.test.ts > policyLoss > conformance: matches polgrad 0.2.0 (pytorch autograd) on every recorded case
 * @enforcedBy test/hardening/losses.test.ts > hardening: overflowing ratios > golden: a clipped token whose ratio overflows has a finite objective and gradient exactly 0
 * @enforcedBy test/hardening/losses.test.ts > hardening: extreme inputs > property: every algorithm and every ratio × surrogate × aggregation is finite or throws OverflowError, and equals the reference where that is finite
 * @see arXiv 1707.06347 eq. 7 (PPO), 2507.18071 eqs. 7 and 14 (GSPO), 2506.13585 eq. 4 (CISPO)
 * @since 0.1.0
 */
export function policyLoss(config: PolicyLossConfig, inputs: PolicyLossInputs): PolicyLossResult {
  return policyLossAs("policyLoss", config, inputs);
}

/**
 * {@link policyLoss} under the name of the public function that calls it (papoLoss), so that its
 * errors name that function. @internal
 */
export function policyLossAs(
  fn: string,
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
): PolicyLossResult {
  const cfg = validatePolicyLossConfig(fn, config);
  requireRecord(fn, "inputs", inputs, POLICY_LOSS_INPUTS);
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
  // Response positions read the inputs directly; padding is never read (no zero-filled copies).
  const lp = logprobs.data;
  const w = new Float64Array(n);
  fillTokenWeights(mask, cfg.aggregation, cfg.normLen, w);
  // sg[ρ]: TIS weights are data (old vs rollout), constant w.r.t. θ.
  const rho =
    rollout !== null && cfg.isCorrection !== null
      ? tisWeights(cfg.isCorrection, zeroFilled(old, m), zeroFilled(rollout, m), mask)
      : null;

  const reinforce = cfg.surrogate === "reinforce";
  const z = new Float64Array(n);
  // z = lp − old at response positions, exactly +0 at padding (as 0 − 0 of zero-filled copies).
  const od = old.data;
  for (let i = 0; i < n; i++) if (m[i] === 1) z[i] = (lp[i] as number) - (od[i] as number);
  const fwd = ratioForward(cfg.ratio, z, mask, L);
  const objective = new Float64Array(n);
  const grad = new Float64Array(n);
  const dr = new Float64Array(n);
  const low = new Uint8Array(n);
  const high = new Uint8Array(n);
  const overflowAt = (i: number, q: string, v: number, why: string): OverflowError =>
    overflowError(fn, q, v, [Math.floor(i / T), i % T], why);
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
        // A = ±0: the term is ±0 whatever the ratio (r·A is bitwise A for finite r ≥ 0; no ∞·0).
        ell = -(a === 0 ? a : r * a);
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
    if (!Number.isFinite(ell)) {
      const lr = cfg.ratio === "token" ? (z[i] as number) : (fwd.mz[Math.floor(i / T)] as number);
      throw overflowAt(i, "perTokenObjective", ell, objectiveWhy(cfg, lr, r, a, lp[i] as number));
    }
    objective[i] = rho === null ? ell : ell * p;
    if (!Number.isFinite(objective[i] as number)) {
      throw overflowAt(i, "perTokenObjective", objective[i] as number, `TIS weight ${p} × ${ell}`);
    }
  }
  if (cfg.surrogate === "pg" || cfg.surrogate === "pg_clip")
    ratioBackward(cfg.ratio, fwd, dr, mask, L, grad);
  let loss = finiteOr(
    fn,
    "loss",
    maskedDot(w, objective, mask),
    undefined,
    "Σ w·ℓ exceeds float64",
  );

  let klLoss: number | null = null;
  if (cfg.kl !== null && ref !== null) {
    const wk = new Float64Array(n);
    fillTokenWeights(mask, cfg.kl.aggregation, cfg.kl.normLen, wk);
    const k = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (m[i] !== 1) continue;
      const d = (ref.data[i] as number) - (lp[i] as number);
      const pt = klPointwise(cfg.kl.kind, d);
      if (!Number.isFinite(pt.value) || !Number.isFinite(pt.dLogprob)) {
        const v = Number.isFinite(pt.value) ? pt.dLogprob : pt.value;
        const why = `the ${cfg.kl.kind} term at δ = ref − lp = ${d} exceeds float64`;
        throw overflowAt(i, "klLoss", v, why);
      }
      k[i] = pt.value;
      grad[i] = (grad[i] as number) + cfg.kl.coef * (wk[i] as number) * pt.dLogprob;
    }
    klLoss = finiteOr(fn, "klLoss", maskedDot(wk, k, mask), undefined, "Σ w·k exceeds float64");
    loss = finiteOr(fn, "loss", loss + cfg.kl.coef * klLoss, undefined, "surrogate + coef·klLoss");
  }
  checkFiniteOutput(fn, "gradLogprobs", grad, T, m, "∂loss/∂logprobs exceeds float64");
  let ratio: Float64Array;
  if (reinforce) ratio = new Float64Array(n).fill(1);
  else {
    // Saturate: an overflowed ratio whose loss is finite (clipped, capped, CISPO, A = 0) is
    // reported as the largest float64, never Infinity (docs/conventions.md#numeric-policy).
    ratio = fwd.r;
    for (let i = 0; i < n; i++)
      if (ratio[i] === Number.POSITIVE_INFINITY) ratio[i] = Number.MAX_VALUE;
  }
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
