/**
 * The unfused policy loss: the stage-by-stage evaluation policyLoss ran before the fused kernel
 * (src/losses/policyLoss.ts at commit c31727c, with its ratio.ts and isCorrection.ts): validate
 * every stream, broadcast the advantages, fill the weights, compute the ratio, run the surrogate
 * token by token, back-propagate, then add the KL term, each a full pass over [B, T]. Kept frozen
 * here as a test oracle: the fused kernel must give bitwise its outputs and its errors
 * (test/losses/policyLoss.kernel.test.ts). Test code only; nothing in src/ imports it.
 */
import { maskedDot } from "../../src/aggregate/aggregate.js";
import { fillTokenWeights } from "../../src/aggregate/effectiveTokenWeights.js";
import { checkFiniteOutput, finiteOr, overflowError } from "../../src/core/finite.js";
import { mustBe } from "../../src/core/message.js";
import { CompensatedSum, robustSum } from "../../src/core/sum.js";
import { type Mask, type Matrix, type MatrixLike, rowLengths } from "../../src/core/tensor.js";
import {
  broadcastAdvantages,
  checkFiniteAt,
  checkSameShape,
  requireRecord,
  toMask,
  toMatrix,
} from "../../src/core/validate.js";
import { ConfigError, type OverflowError } from "../../src/errors.js";
import { klPointwise } from "../../src/kl/estimator.js";
import type {
  PolicyLossConfig,
  RatioKind,
  ResolvedISCorrection,
  ResolvedPolicyLossConfig,
} from "../../src/losses/config.js";
import { validatePolicyLossConfig } from "../../src/losses/configValidate.js";
import type { PolicyLossInputs, PolicyLossResult } from "../../src/losses/policyLoss.js";
import { POLICY_LOSS_INPUTS } from "../../src/losses/policyLoss.js";
import { cispoWeight, pgClipPoint } from "../../src/losses/surrogates.js";

/** Forward state of a ratio: per-token ratio values plus what the backward pass needs. */
interface RatioForward {
  /** Ratio at every response position (1 at padding). */
  readonly r: Float64Array;
  /** Per-row sequence ratio s_b (sequence and sequence_token kinds), else empty. */
  readonly s: Float64Array;
  /** Per-row mean log-ratio log s_b = Σ_t z_t / L_b (sequence kinds), else empty. */
  readonly mz: Float64Array;
}

/**
 * Compute the ratio of `kind` from zero-filled log-ratios `z`:
 * token r_t = exp(z_t); sequence r_t = s_b = exp(Σ_t z_t / L_b);
 * sequence_token r_t = sg[s_b]·(exp(z_t)/sg[exp(z_t)]), whose value is s_b exactly (x/x = 1 for
 * finite non-zero x, the order polgrad evaluates it in), so it is stored as s_b: an exp(z_t) that
 * overflows (z_t ≥ 709.79) or underflows (z_t ≤ −745.14) would give ∞/∞ or 0/0 = NaN.
 * Ratios may be +Infinity (overflow) or 0 (underflow, exact); the caller decides (docs/conventions.md#numeric-policy).
 * The row mean Σ_t z_t / L_b is robust to a partial sum that overflows.
 *
 */
function ratioForward(kind: RatioKind, z: Float64Array, mask: Mask, L: Int32Array): RatioForward {
  const { rows: B, cols: T, data: m } = mask;
  const r = new Float64Array(B * T).fill(1);
  if (kind === "token") {
    for (let i = 0; i < r.length; i++) if (m[i] === 1) r[i] = Math.exp(z[i] as number);
    return { r, s: new Float64Array(0), mz: new Float64Array(0) };
  }
  const s = new Float64Array(B);
  const mz = sequenceLogRatios(z, mask, L);
  for (let b = 0; b < B; b++) {
    const sb = Math.exp(mz[b] as number);
    s[b] = sb;
    // sequence_token: sg[s_b]·(exp z_t / sg[exp z_t]) has the value s_b bitwise.
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) r[b * T + t] = sb;
  }
  return { r, s, mz };
}

/**
 * The row means Σ_t m·z / L_b of zero-filled log-ratios (the log of the sequence ratio), robust to
 * a partial sum that overflows. @internal
 */
function sequenceLogRatios(z: Float64Array, mask: Mask, L: Int32Array): Float64Array {
  const { rows: B, cols: T, data: m } = mask;
  const out = new Float64Array(B);
  const at: number[] = [];
  for (let b = 0; b < B; b++) {
    at.length = 0;
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) at.push(b * T + t);
    out[b] = robustSum(at.length, (k) => z[at[k] as number] as number, L[b] as number);
  }
  return out;
}

/** d·r, but exactly d when d = ±0: a zero upstream gradient stays 0 at an overflowed r = ∞. */
function times(d: number, r: number): number {
  return d === 0 ? d : d * r;
}

/**
 * Back-propagate ∂L/∂r (per token, zero at padding) to ∂L/∂lp, assigning into `out` (assigning,
 * not adding into a zero-filled buffer, keeps the sign of a zero gradient, e.g. −0 for A = +0):
 * token ∂lp_t = ∂r_t·r_t; sequence_token ∂lp_t = ∂r_t·s_b (sg[s] and sg[exp z] are constants, so
 * only the numerator exp(z_t) carries gradient); sequence ∂lp_t = (Σ_τ ∂r_τ)·s_b / L_b for every
 * response token t of row b (the masked mean couples the row). A zero ∂r passes as exactly that
 * zero (bitwise d·r for finite r ≥ 0), so a clipped token with an overflowed ratio has gradient 0,
 * not 0·∞ = NaN.
 *
 */
function ratioBackward(
  kind: RatioKind,
  fwd: RatioForward,
  dr: Float64Array,
  mask: Mask,
  L: Int32Array,
  out: Float64Array,
): void {
  const { rows: B, cols: T, data: m } = mask;
  if (kind === "token") {
    for (let i = 0; i < dr.length; i++)
      if (m[i] === 1) out[i] = times(dr[i] as number, fwd.r[i] as number);
    return;
  }
  for (let b = 0; b < B; b++) {
    const sb = fwd.s[b] as number;
    if (kind === "sequence_token") {
      for (let t = 0; t < T; t++) {
        const i = b * T + t;
        if (m[i] === 1) out[i] = times(dr[i] as number, sb);
      }
      continue;
    }
    const acc = new CompensatedSum();
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) acc.add(dr[b * T + t] as number);
    const g = times(acc.value(), sb) / (L[b] as number);
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (m[i] === 1) out[i] = g;
    }
  }
}
function tisWeights(
  cfg: ResolvedISCorrection,
  olp: Float64Array,
  rlp: Float64Array,
  mask: Mask,
): Float64Array {
  const { rows: B, cols: T, data: m } = mask;
  const rho = new Float64Array(B * T).fill(1);
  if (cfg.level === "token") {
    for (let i = 0; i < rho.length; i++) {
      if (m[i] === 1) rho[i] = Math.min(Math.exp((olp[i] as number) - (rlp[i] as number)), cfg.cap);
    }
    return rho;
  }
  for (let b = 0; b < B; b++) {
    const acc = new CompensatedSum();
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (m[i] === 1) acc.add((olp[i] as number) - (rlp[i] as number));
    }
    const w = Math.min(Math.exp(acc.value()), cfg.cap);
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) rho[b * T + t] = w;
  }
  return rho;
}
function zeroFilled(x: Matrix, m: Uint8Array): Float64Array {
  const out = new Float64Array(x.data.length);
  for (let i = 0; i < out.length; i++) if (m[i] === 1) out[i] = x.data[i] as number;
  return out;
}
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
export function unfusedPolicyLoss(
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
      default:
        // Frozen at c31727c: the surrogates added since have no unfused form to compare with.
        throw new Error(`unfusedPolicyLoss: no unfused form of surrogate ${cfg.surrogate}`);
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
    entropyLoss: null,
    gradEntropies: null,
    clippedHigh: { rows: B, cols: T, data: high },
    klLoss,
  };
}
