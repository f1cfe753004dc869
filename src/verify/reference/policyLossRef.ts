/**
 * Reference for `policyLoss`, written plainly from the published equations (PPO clip with dual
 * clip, GSPO sequence and token ratios, CISPO, REINFORCE, truncated IS, as-loss KL) over the
 * autodiff scalar, and differentiated by reverse mode (docs/derivations/reference.md#policy-loss).
 * Imports only types from src/losses and src/kl: the closed forms are never consulted.
 */

import type { GlobalNormalizer } from "../../aggregate/effectiveTokenWeights.js";
import type { MaskLike, Matrix, MatrixLike, VectorLike } from "../../core/tensor.js";
import { requireObject } from "../../core/validate.js";
import type { KLLossConfig } from "../../kl/estimator.js";
import { type ISCorrectionConfig, type PolicyLossConfig, settingOf } from "../../losses/config.js";
import {
  add,
  clamp,
  div,
  exp,
  grad,
  max,
  min,
  mul,
  type Node,
  neg,
  type Scalar,
  sg,
  sub,
  sum,
} from "../autodiff.js";
import { checkRefConfig, checkRefInputs } from "./entry.js";
import {
  advantageAt,
  aggregationWeightsRef,
  maskRowsOf,
  matrixOf,
  responsePositions,
  rowsOf,
} from "./inputs.js";
import { klEstimatorRef, type ReferenceResult, scatter } from "./klLossRef.js";

/**
 * The inputs of {@link policyLossRef}, as for `policyLoss`.
 * @since 0.1.0
 */
export interface PolicyLossRefInputs {
  readonly logprobs: MatrixLike;
  readonly oldLogprobs: MatrixLike;
  readonly advantages: VectorLike | MatrixLike;
  readonly responseMask: MaskLike;
  readonly refLogprobs?: MatrixLike | null;
  readonly rolloutLogprobs?: MatrixLike | null;
  readonly entropies?: MatrixLike | null;
}

/**
 * What {@link policyLossRef} returns: the loss, its gradient and the forward quantities.
 * @since 0.1.0
 */
export interface PolicyLossReference extends ReferenceResult {
  /** Per-token objective ℓ (post-TIS, pre-KL), 0 at padding. */
  readonly perTokenObjective: Matrix;
  /** The ratio value used by the surrogate, 1 at padding (all ones for reinforce). */
  readonly ratio: Matrix;
  /** The unscaled KL term Σ w_kl·k(δ), or null without a KL config. */
  readonly klLoss: number | null;
  /** The entropy bonus's aggregate Σ w^H·H over the kept tokens, or null without one. */
  readonly entropyLoss: number | null;
  /** ∂loss/∂entropies by reverse mode, or null without an entropy bonus. */
  readonly gradEntropies: Matrix | null;
}

/**
 * Reference value and gradient of the policy loss.
 *
 * Formula, per response token (z = lp − old, A the advantage, [lo, hi] = [1 − ε_lo, 1 + ε_hi]):
 * ratio r = e^z (token); s_b = exp(Σ_t z / L_b) (sequence); sg[s_b]·r/sg[r] (sequence_token).
 * ℓ = −min(r·A, clamp(r, lo, hi)·A), then −max(−ℓ, c·A) when A < 0 and ratio_cap c is set
 * (pg_clip); −r·A (pg); −A·lp (reinforce); −sg[ŵ]·A·lp with ŵ = min(r, hi) one-sided or
 * clamp(r, lo, hi) two-sided (cispo). TIS (formed on the mask as given, before rejection) multiplies ℓ by sg[min(exp(old − rollout), cap)] (token)
 * or sg[min(exp(Σ_t (old − rollout)), cap)] (sequence, un-normalised sum). Loss = Σ w·ℓ, plus
 * coef·Σ w_kl·k(ref − lp) when `kl` is set (aggregation and normLen inherited when null).
 * Gradient / stop-gradient: ∂loss/∂logprobs by reverse-mode autodiff; sg[·] as marked.
 *
 * @param config - A valid policy-loss config (not validated here).
 * @param inputs - The logprob streams, advantages (`[B]` or `[B, T]`) and response mask.
 * @returns The loss, ∂loss/∂logprobs, the per-token objective, the ratio and the unscaled KL term.
 * @derivation docs/derivations/reference.md#policy-loss
 * @enforcedBy test/verify/reference.golden.test.ts > policyLossRef > golden: the six pg_clip goldens of the spec
 * @enforcedBy test/verify/closedForm.finiteDifference.test.ts > policyLossRef > gradient: matches central differences of the sg-frozen equivalent
 * @since 0.1.0
 */
export function policyLossRef(
  config: PolicyLossConfig,
  inputs: PolicyLossRefInputs,
  options: { readonly global?: GlobalNormalizer } = {},
): PolicyLossReference {
  checkRefConfig("policyLossRef", config, ["ratio", "surrogate", "aggregation"]);
  checkRefInputs("policyLossRef", inputs, []);
  requireObject("policyLossRef", "options", options, "an options object");
  const lp = rowsOf(inputs.logprobs);
  const old = rowsOf(inputs.oldLogprobs);
  const A = advantageAt(inputs.advantages);
  const rollout = inputs.rolloutLogprobs == null ? null : rowsOf(inputs.rolloutLogprobs);
  // Rejection sampling first: the tokens and rows it takes out are padding from here on, except
  // for the IS weights, which are formed on the mask as given (verl forms them before rejecting).
  const given = maskRowsOf(inputs.responseMask);
  const mask = rejectRef(config, given, old, rollout);
  const ref = inputs.refLogprobs == null ? null : rowsOf(inputs.refLogprobs);
  const B = mask.length;
  const L = mask.map((row) => row.filter(Boolean).length);
  const pos = responsePositions(mask);
  // emptyRows "drop": the row means' B counts only rows with a response token (unless the global
  // context names the rows); "count" and "reject" count every row.
  const nonEmpty = mask.filter((row) => row.some(Boolean)).length;
  const global =
    config.emptyRows === "drop" && (options.global?.rows ?? null) === null
      ? { ...options.global, rows: nonEmpty }
      : options.global;
  const rowEps = config.rowEpsilon ?? 0;
  const w = aggregationWeightsRef(mask, config.aggregation, config.normLen, global, rowEps);
  const clip = config.clip;
  const lo = clip?.epsLow == null ? null : 1 - clip.epsLow;
  // CISPO's absolute cap (TRL's ε_max) stands for 1 + ε_hi.
  const hi =
    config.cispo != null ? config.cispo.cap : clip?.epsHigh == null ? null : 1 + clip.epsHigh;
  const cap = clip?.ratioCap ?? null;
  const tis = config.isCorrection ?? null;
  // The top-entropy mask: H ≥ the (1 − ρ) quantile of the response tokens' entropies, by linear
  // interpolation between the sorted sample's ⌊h⌋-th and ⌈h⌉-th values at h = (1 − ρ)(n − 1).
  const H = inputs.entropies == null ? null : rowsOf(inputs.entropies);
  const rho = config.topEntropyQuantile ?? null;
  let threshold = Number.NEGATIVE_INFINITY;
  if (rho !== null && H !== null && pos.length > 0) {
    const sorted = pos.map(([b, t]) => H[b][t]).sort((x, y) => x - y);
    const h = (1 - rho) * (sorted.length - 1);
    const lo = Math.floor(h);
    const hi = Math.min(lo + 1, sorted.length - 1);
    threshold = sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
  }
  const keptByEntropy = (b: number, t: number): boolean =>
    rho === null || H === null || H[b][t] >= threshold;
  const objective = mask.map((row) => row.map(() => 0));
  const ratio = mask.map((row) => row.map(() => 1));
  let klLoss: number | null = null;

  const f = (x: readonly Node[]): Scalar => {
    // node[b][t]: the variable lp[b, t] at a response position (padding never becomes a node).
    const node: Node[][] = mask.map(() => []);
    pos.forEach(([b, t], k) => {
      node[b][t] = x[k];
    });
    const cols = (b: number): number[] => pos.filter(([bb]) => bb === b).map(([, t]) => t);

    // The log-ratio clamp (docs/derivations/losses.md#ratio-clamps). Token level: each
    // z = lp − old clamped to [lower, upper]; sign-aware (GMPO): sgn(A)·min(sgn(A)·z,
    // sgn(A)·clamp(z)). Row level: the row's mean log-ratio clamped.
    const rcl = config.ratioClamp ?? null;
    const loC = rcl?.lower ?? Number.NEGATIVE_INFINITY;
    const hiC = rcl?.upper ?? Number.POSITIVE_INFINITY;
    const logRatio = (b: number, t: number): Scalar => {
      const z = sub(node[b][t], old[b][t]);
      if (rcl === null || rcl.level !== "token") return z;
      if (rcl.signAware !== true) return clamp(z, loC, hiC);
      const a = A(b, t);
      const sgn = a > 0 ? 1 : a < 0 ? -1 : 0;
      return mul(sgn, min(mul(sgn, z), mul(sgn, clamp(z, loC, hiC))));
    };
    const rowClamp = (x: Scalar): Scalar =>
      rcl !== null && rcl.level === "row" ? clamp(x, loC, hiC) : x;
    // The GSPO sequence ratio s_b = exp(masked mean of the log-ratio), differentiable in every token.
    const seqLog: Scalar[] = [];
    const seqRatio: Scalar[] = [];
    for (let b = 0; b < B; b++) {
      const zs = cols(b).map((t) => logRatio(b, t));
      seqLog.push(div(sum(zs), L[b]));
      seqRatio.push(exp(rowClamp(seqLog[b])));
    }
    // The row-level IS weight: exp of the sum (sequence) or the mean (geometric) of old − rollout;
    // and the row filter: 1 where the row's product or geometric-mean weight is inside its bounds.
    const seqTis: number[] = [];
    const rowIn: number[] = [];
    if (rollout !== null && tis !== null) {
      for (let b = 0; b < B; b++) {
        const givenCols = given[b].flatMap((x, t) => (x ? [t] : []));
        const gap = sum(givenCols.map((t) => sub(old[b][t], rollout[b][t])));
        const Lg = givenCols.length;
        // sg[w]: the IS weight corrects the sampler; a constant.
        const level = tis.level === "geometric" ? div(gap, Lg) : gap;
        seqTis.push(sg(isWeightRef(level, tis)));
        const rm = tis.rowMask ?? null;
        if (rm === null) rowIn.push(1);
        else {
          const w = Math.exp(sg(rm.level === "geometric" ? div(gap, Lg) : gap));
          const inside = (rm.lower == null || w >= rm.lower) && (rm.cap === null || w <= rm.cap);
          rowIn.push(inside ? 1 : 0);
        }
      }
    }
    // verl's batch normalisation: the weights' mean over the response tokens (token level) or over
    // the rows with a token (row levels), of the mask as given, divided out only when it exceeds
    // 1e-8.
    const weightAt = (b: number, t: number): number => {
      if (tis === null || rollout === null) return 1;
      const w =
        tis.level === "token" ? sg(isWeightRef(sub(old[b][t], rollout[b][t]), tis)) : seqTis[b];
      return rowIn[b] === 1 ? w : 0;
    };
    let isDiv = 1;
    if (tis !== null && rollout !== null && tis.normalize === true) {
      const xs =
        tis.level === "token"
          ? responsePositions(given).map(([b, t]) => weightAt(b, t))
          : given.flatMap((row, b) => (row.some(Boolean) ? [rowIn[b] === 1 ? seqTis[b] : 0] : []));
      const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
      if (mean > 1e-8) isDiv = mean;
    }

    // The off-policy sequence mask: the row's mean of sampling − lp (lp as data) against δ.
    const opsm = config.offPolicyMask ?? null;
    const keepRow = mask.map((_, b) => {
      if (opsm === null) return true;
      const samp = opsm.sampling === "rollout" ? (rollout as number[][]) : old;
      const ts = cols(b);
      const mean = ts.reduce((acc, t) => acc + (samp[b][t] - sg(node[b][t])), 0) / ts.length;
      return mean <= opsm.threshold;
    });
    // The importance ratio of token (b, t), a node: the surrogate's and the weighted KL term's.
    const ratioAt = (b: number, t: number): Scalar => {
      if (config.ratio === "token") return exp(logRatio(b, t));
      if (config.ratio === "sequence") return seqRatio[b];
      if (rcl !== null && rcl.level === "row") {
        // log s = clamp(lp − sg[lp] + sg[z_b]): the value is clamp(z_b); the gradient is
        // token-local, and 0 where the clamp binds.
        const l = node[b][t];
        return exp(rowClamp(add(sub(l, sg(l)), sg(seqLog[b]))));
      }
      const rt = exp(sub(node[b][t], old[b][t]));
      // sg[s]·(r/sg[r]): the value is s exactly; the gradient is token-local s·∇lp.
      return mul(sg(seqRatio[b]), div(rt, sg(rt)));
    };
    const terms: Scalar[] = pos.map(([b, t]) => {
      const l = node[b][t];
      const a = A(b, t);
      const r = ratioAt(b, t);
      let ell: Scalar;
      switch (config.surrogate) {
        case "pg_clip": {
          let o = min(mul(r, a), mul(clamp(r, lo as number, hi as number), a));
          if (cap !== null && a < 0) o = max(o, cap * a);
          ell = neg(o);
          break;
        }
        case "pg":
          ell = neg(mul(r, a));
          break;
        case "reinforce":
          ell = neg(mul(a, l));
          break;
        case "cispo": {
          // sg[ŵ]: CISPO holds the clipped importance weight constant.
          const wHat = sg(lo === null ? min(r, hi as number) : clamp(r, lo, hi as number));
          ell = neg(mul(mul(wHat, a), l));
          break;
        }
        case "sapo": {
          // The soft gate σ(τ(r − 1))·4/τ, τ by the sign of A (Gao et al. 2025).
          const tau = settingOf(config, "sapo", a > 0 ? "tauPos" : "tauNeg") as number;
          const sigma = div(1, add(1, exp(neg(mul(tau, sub(r, 1))))));
          ell = neg(mul(mul(sigma, 4 / tau), a));
          break;
        }
        case "dro": {
          // −(lp·A − ½β(lp − old)²).
          const beta = config.dro?.beta as number;
          const z = sub(l, old[b][t]);
          ell = neg(sub(mul(l, a), mul(0.5 * beta, mul(z, z))));
          break;
        }
        case "vespo": {
          // −sg[φ]·A·lp with TRL's gamma weight φ = exp(λ + k·lw − λ·e^lw) of the row's clamped
          // log-ratio sum lw = clamp(Σ_t clamp(lp − old, ±20), ln 1e-8, 20); (k, λ) by A ≥ 0.
          const ts = cols(b);
          const zsum = ts.reduce(
            (acc, u) => acc + Math.min(Math.max(sg(node[b][u]) - old[b][u], -20), 20),
            0,
          );
          // With a token IS correction, TRL adds Σ_t clamp(log ρ_t, ln 1e-8, 20) of the IS weights.
          const isSum =
            tis === null || rollout === null
              ? 0
              : ts.reduce(
                  (acc, u) =>
                    acc + Math.min(Math.max(Math.log(weightAt(b, u) / isDiv), Math.log(1e-8)), 20),
                  0,
                );
          const lw = Math.min(Math.max(zsum + isSum, Math.log(1e-8)), 20);
          const pos = a >= 0;
          const k = settingOf(config, "vespo", pos ? "kPos" : "kNeg") as number;
          const lam = Math.max(
            settingOf(config, "vespo", pos ? "lambdaPos" : "lambdaNeg") as number,
            1e-4,
          );
          const phi = Math.exp(lam + k * lw - lam * Math.exp(lw));
          ell = mul(neg(mul(a, l)), Number.isFinite(phi) ? phi : 0);
          break;
        }
        case "ipo": {
          // −A·r where |e^lp − e^old| ≤ ε, 0 outside (a detached mask): prime-rl's ipo_loss_fn.
          const eps = settingOf(config, "ipo", "threshold") as number;
          const inside = Math.abs(Math.exp(sg(l)) - Math.exp(old[b][t])) <= eps;
          ell = inside ? neg(mul(r, a)) : 0;
          break;
        }
        case "dppo": {
          // −A·sg[min(r, C)]·lp inside the binary-divergence trust region, 0 outside (sg).
          const d = config.dppo as NonNullable<typeof config.dppo>;
          const p = Math.exp(sg(l));
          const po = Math.exp(old[b][t]);
          const lv = sg(l);
          const binaryKl =
            po * (old[b][t] - lv) + (1 - po) * Math.log((1 - po + 1e-8) / (1 - p + 1e-8));
          const inside =
            d.divergence === "tv"
              ? a > 0
                ? p - po <= d.high
                : p - po >= -d.low
              : a > 0
                ? binaryKl <= d.high || p <= po
                : binaryKl <= d.low || p >= po;
          const tr = sg(min(r, d.truncation ?? Number.POSITIVE_INFINITY));
          ell = inside ? neg(mul(mul(a, tr), l)) : 0;
          break;
        }
      }
      if (tis !== null && rollout !== null && config.surrogate !== "vespo") {
        // sg[w(old − rollout)]: the token IS weight is a constant (VESPO folds it into φ instead).
        ell = mul(ell, weightAt(b, t) / isDiv);
      }
      if (opsm !== null && !keepRow[b] && a < 0) {
        // OPSM: the row's mean of sampling − sg[lp] is above δ: its negative-advantage tokens drop.
        ell = mul(ell, 0);
      }
      // The top-entropy mask: a token below the threshold drops out of the policy term (sg).
      if (!keptByEntropy(b, t)) ell = mul(ell, 0);
      objective[b][t] = sg(ell);
      ratio[b][t] =
        config.surrogate === "reinforce" ||
        config.surrogate === "dro" ||
        config.surrogate === "vespo"
          ? 1
          : sg(r);
      return mul(w[b][t], ell);
    });
    const surrogate = sum(terms);
    const kl = config.kl ?? null;
    if (kl === null || ref === null) return surrogate;
    const wKl = aggregationWeightsRef(
      mask,
      kl.aggregation ?? config.aggregation,
      kl.normLen ?? config.normLen,
      global,
      rowEps,
    );
    // TRL's bias-corrected KL: each term times the ratio (exp(lp − old) for the token ratio,
    // as coef_1), through it or detached.
    const weightOf = (b: number, t: number): Scalar => {
      const w = kl.weight ?? null;
      if (w === null) return 1;
      const r = config.ratio === "token" ? exp(sub(node[b][t], old[b][t])) : ratioAt(b, t);
      return w === "ratio" ? r : sg(r);
    };
    const klTerm = sum(
      pos.map(([b, t]) =>
        mul(wKl[b][t], mul(klTermRef(kl, sub(ref[b][t], node[b][t])), weightOf(b, t))),
      ),
    );
    klLoss = sg(klTerm);
    return add(surrogate, mul(kl.coef, klTerm));
  };

  const out = grad(
    f,
    pos.map(([b, t]) => lp[b][t]),
  );
  // The entropy bonus −coef·Σ w^H·H over the kept tokens, w^H the bonus aggregation's weights over
  // them (the global context's token count when it gives one), differentiated in the entropies.
  const bonus = config.entropyBonus ?? null;
  let entropyLoss: number | null = null;
  let gradEntropies: Matrix | null = null;
  let loss = out.value;
  if (bonus !== null && H !== null) {
    const kept = mask.map((row, b) => row.map((on, t) => on && keptByEntropy(b, t)));
    const keptPos = responsePositions(kept);
    const wH = aggregationWeightsRef(
      kept,
      bonus.aggregation ?? "token_mean",
      bonus.normLen ?? config.normLen,
      global === undefined ? undefined : { ...global, tokens: options.global?.tokens ?? null },
      rowEps,
    );
    const e = grad(
      (h) => mul(-bonus.coef, sum(keptPos.map(([b, t], k) => mul(wH[b][t], h[k])))),
      keptPos.map(([b, t]) => H[b][t]),
    );
    entropyLoss = keptPos.reduce((acc, [b, t]) => acc + wH[b][t] * H[b][t], 0);
    loss = out.value - bonus.coef * entropyLoss;
    gradEntropies = scatter(kept, keptPos, e.grad);
  }
  return {
    loss,
    grad: scatter(mask, pos, out.grad),
    perTokenObjective: matrixOf(objective),
    ratio: matrixOf(ratio),
    klLoss,
    entropyLoss,
    gradEntropies,
  };
}

/**
 * The IS weight of a log-ratio x (data: the weight is detached, so plain numbers), from its
 * definition (docs/derivations/losses.md#importance-sampling-correction): x clamped to
 * [−logClamp, logClamp] when set, ρ = e^x, then truncate: ρ raised to `lower` and lowered to `cap`
 * where they are set; mask: ρ where lower ≤ ρ ≤ cap (each where set), else 0.
 */
function isWeightRef(x: Scalar, tis: ISCorrectionConfig): number {
  const c = tis.logClamp ?? null;
  let z = sg(x);
  if (c !== null) z = z < -c ? -c : z > c ? c : z;
  const rho = Math.exp(z);
  const lower = tis.lower ?? null;
  const cap = tis.cap;
  if (tis.mode === "mask") {
    const inside = (lower === null || rho >= lower) && (cap === null || rho <= cap);
    return inside ? rho : 0;
  }
  let w = rho;
  if (lower !== null && w < lower) w = lower;
  if (cap !== null && w > cap) w = cap;
  return w;
}

/**
 * One KL term from its definition (docs/derivations/kl.md#clamps-and-straight-through): δ clamped
 * to ±clamp.delta, the estimator, its value clamped to ±clamp.value (each clamp passing gradient
 * where its input is inside, autodiff's clamp); straight-through: sg[k] + ½δ² − sg[½δ²], the
 * value of k with the gradient of ½δ² (δ unclamped).
 */
function klTermRef(kl: KLLossConfig, delta: Scalar): Scalar {
  const cd = kl.clamp?.delta ?? null;
  const cv = kl.clamp?.value ?? null;
  const d = cd === null ? delta : clamp(delta, -cd, cd);
  const raw = klEstimatorRef(kl.kind, d);
  const k = cv === null ? raw : clamp(raw, -cv, cv);
  if (kl.gradient !== "straight_through") return k;
  const q = div(mul(delta, delta), 2);
  return add(sg(k), sub(q, sg(q)));
}

/**
 * The mask after `config.rejection` (docs/derivations/losses.md#rejection-sampling), from the
 * rules' definition: lr = old − rollout clamped to ±logClamp; per token k1 = −lr, k2 = lr²/2,
 * k3 = e^lr − 1 − lr (as expm1(lr) − lr); k1 keeps ln(lower) ≤ s ≤ ln(upper), k2/k3 keep s ≤
 * upper; row rules take the sum, the mean or the max over the row's given tokens; every rule must
 * pass.
 */
function rejectRef(
  config: PolicyLossConfig,
  mask: boolean[][],
  old: readonly (readonly number[])[],
  rollout: readonly (readonly number[])[] | null,
): boolean[][] {
  const rules = config.rejection ?? null;
  if (rules === null || rollout === null) return mask;
  const keep = mask.map((row) => [...row]);
  mask.forEach((row, b) => {
    let rowOk = true;
    for (const r of rules) {
      const c = r.logClamp ?? Number.POSITIVE_INFINITY;
      // The estimators as the KL reference defines them (k1 −δ, k2 δ²/2, k3 expm1(δ) − δ), at lr.
      const s = (t: number): number =>
        sg(klEstimatorRef(r.estimator, Math.min(Math.max(old[b][t] - rollout[b][t], -c), c)));
      const ok = (x: number): boolean =>
        r.estimator === "k1"
          ? x >= Math.log(r.lower as number) && x <= Math.log(r.upper)
          : x <= r.upper;
      const ts = row.map((on, t) => (on ? t : -1)).filter((t) => t >= 0);
      if (r.statistic === "token") {
        for (const t of ts) if (!ok(s(t))) keep[b][t] = false;
        continue;
      }
      if (ts.length === 0) continue;
      const xs = ts.map(s);
      const total = xs.reduce((a, x) => a + x, 0);
      const value =
        r.statistic === "seq_sum"
          ? total
          : r.statistic === "seq_mean"
            ? total / xs.length
            : Math.max(...xs);
      if (!ok(value)) rowOk = false;
    }
    if (!rowOk) keep[b] = keep[b].map(() => false);
  });
  return keep;
}
