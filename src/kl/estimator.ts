/**
 * KL estimators of KL(π‖ref) = E_π[log π − log ref] from sampled-token logprobs, with
 * δ = ref_logprobs − logprobs (docs/derivations/kl.md):
 *
 * | kind | value | ∂/∂logprobs | E_π[value] |
 * | --- | --- | --- | --- |
 * | k1 | −δ | 1 | KL |
 * | k2 | δ²/2 | −δ = lp − ref | KL + O(δ³) bias |
 * | k3 | expm1(δ) − δ (its Taylor series for |δ| < 2^-8) | −expm1(δ) = 1 − e^δ | KL |
 * | abs | abs(δ) | −sign(δ) (0 at δ = 0) | ≥ KL, not an estimator |
 */

import type { Aggregation } from "../aggregate/aggregation.js";
import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { checkPositive } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";

/** The KL estimator kinds, with polgrad's string values. */
export const KLEstimator = { K1: "k1", K2: "k2", K3: "k3", ABS: "abs" } as const;

/** One of the KL estimator kind strings. */
export type KLEstimator = (typeof KLEstimator)[keyof typeof KLEstimator];

/** Every KL estimator kind. */
export const KL_ESTIMATORS: readonly KLEstimator[] = Object.values(KLEstimator);

/** Validate an estimator name (throws UnknownNameError with suggestions). */
export function checkKLEstimator(fn: string, arg: string, kind: unknown): KLEstimator {
  return oneOf(fn, arg, kind, KL_ESTIMATORS);
}

/**
 * An as-loss KL term: `coef · kl_loss(kind, aggregation, normLen)`. `aggregation` and `normLen`
 * left null inherit the enclosing policy-loss config's values. Inert data, validated at call time.
 */
export interface KLLossConfig {
  readonly kind: KLEstimator;
  readonly coef: number;
  readonly aggregation?: Aggregation | null;
  readonly normLen?: number | null;
  /**
   * Clamps as frameworks apply them (docs/derivations/kl.md#clamps-and-straight-through):
   * `delta` clamps δ = ref − lp to [−delta, delta] before the estimator (verl: 20), `value`
   * clamps the estimate to [−value, value] (verl's k3: 10; OpenRLHF: 10 for every estimator).
   * A clamp passes gradient where its input lies inside (inclusive), none outside. Null or
   * absent: none.
   */
  readonly clamp?: KLClamp | null;
  /**
   * `pathwise` (default): the gradient of the (clamped) estimate. `straight_through`: the value
   * of the estimate, the gradient of ½δ² unclamped (verl's `k1+`, `k3+`, … forms).
   */
  readonly gradient?: KLGradient;
  /**
   * `ratio`: each term times the surrogate's importance ratio r (TRL's `use_bias_correction_kl`:
   * k·exp(lp − old), or the sequence ratio s_b), the gradient flowing through r as well;
   * `ratio_detached`: times sg[r]. Null or absent: none.
   */
  readonly weight?: KLWeight | null;
}

/** How the KL term's tokens are weighted. */
export type KLWeight = "ratio" | "ratio_detached";
/** Every KL weight. */
export const KL_WEIGHTS: readonly KLWeight[] = ["ratio", "ratio_detached"];

/** The clamps of a {@link KLLossConfig}. */
export interface KLClamp {
  readonly delta?: number | null;
  readonly value?: number | null;
}

/**
 * Validate a {@link KLClamp} (`arg` names it, e.g. `config.kl.clamp`): an object, each bound a
 * positive finite number or null/absent. Returns the bounds, +∞ for an absent one. @internal
 */
export function checkKlClamp(
  fn: string,
  arg: string,
  clamp: unknown,
): { readonly delta: number; readonly value: number } {
  if (typeof clamp !== "object" || clamp === null) {
    throw fail(ConfigError, fn, arg, "a KLClamp object or null", fmtValue(clamp));
  }
  const c = clamp as KLClamp;
  const bound = (k: "delta" | "value"): number => {
    const x = c[k];
    if (x === null || x === undefined) return Number.POSITIVE_INFINITY;
    return checkPositive(fn, `${arg}.${k}`, x);
  };
  const delta = bound("delta");
  return { delta, value: bound("value") };
}

/**
 * k(clamp(δ, ±cd)) clamped to ±cv (each +∞ when absent): the value of a clamped KL term, as the
 * policy-loss kernel and klInReward compute it. @internal
 */
export function clampedKlValue(
  kind: KLEstimator,
  delta: number,
  cd: number,
  cv: number,
  pt: Float64Array,
): number {
  KL_POINT_FNS[kind](delta < -cd ? -cd : delta > cd ? cd : delta, pt);
  const v = pt[0] as number;
  return v > cv ? cv : v < -cv ? -cv : v;
}

/** How the KL term's gradient is formed. */
export type KLGradient = "pathwise" | "straight_through";
/** Every KL gradient form. */
export const KL_GRADIENTS: readonly KLGradient[] = ["pathwise", "straight_through"];

/** Below this |δ| the k3 value is summed as its Taylor series (expm1(δ) − δ would cancel). */
export const K3_SERIES_BELOW: number = 2 ** -8;

/**
 * e^δ − 1 − δ = δ²·(1/2 + δ/6 + δ²/24 + … + δ⁶/40320) for |δ| < 2^-8, by Horner's rule: the next
 * term is < 2^-57 of the sum, so the value is exact to about one ulp, where expm1(δ) − δ loses
 * about log2(2/|δ|) bits to cancellation (10 bits at δ = 1e-3, 40 at δ = 1e-12).
 */
function k3Series(d: number): number {
  const p =
    1 / 2 + d * (1 / 6 + d * (1 / 24 + d * (1 / 120 + d * (1 / 720 + d * (1 / 5040 + d / 40320)))));
  return d * d * p;
}

/**
 * Value and derivative ∂k/∂logprobs of one estimator at one response position, given
 * δ = ref − lp (already zero-filled at padding by the caller). For finite δ both are finite or
 * ±Infinity, never NaN: k2's value is +Infinity past |δ| ≈ 1.9e154 and k3's value (+Infinity) and
 * derivative (−Infinity) overflow past δ ≈ 709.78; callers turn those into OverflowError.
 * @internal
 */
export function klPointwise(kind: KLEstimator, delta: number): { value: number; dLogprob: number } {
  klPointInto(kind, delta, KL_POINT);
  return { value: KL_POINT[0] as number, dLogprob: KL_POINT[1] as number };
}

const KL_POINT = new Float64Array(2);

/**
 * The k3 value e^δ − 1 − δ given e = expm1(δ): its Taylor series for |δ| < 2^-8, else e − δ.
 * For δ → −∞, expm1(δ) → −1 and the value −1 − δ stays finite; for δ > 709.78 both overflow.
 * @internal
 */
export function k3Value(delta: number, e: number): number {
  return Math.abs(delta) < K3_SERIES_BELOW ? k3Series(delta) : e - delta;
}

/**
 * ∂k3/∂logprobs = −(e^δ − 1) given e = expm1(δ) (δ = ref − lp: ∂δ/∂lp = −1). @internal
 */
export function k3DLogprob(e: number): number {
  return -e;
}

/**
 * {@link klPointwise} into `out` (out[0] ← value, out[1] ← ∂k/∂logprobs), allocation-free, for the
 * fused kernel. @internal
 */
export function klPointInto(kind: KLEstimator, delta: number, out: Float64Array): void {
  KL_POINT_FNS[kind](delta, out);
}

/**
 * The estimators' point functions, one small function each (so that a kernel calling the one its
 * config names can inline it): value and ∂k/∂logprobs at δ = ref − lp. @internal
 */
export const KL_POINT_FNS: Readonly<
  Record<KLEstimator, (delta: number, out: Float64Array) => void>
> = Object.freeze({
  k1: (delta: number, out: Float64Array): void => {
    out[0] = -delta;
    out[1] = 1;
  },
  // (δ/2)·δ is round(δ²)/2 bitwise wherever δ² is finite, and stays finite up to
  // |δ| = √(2·1.8e308) instead of √(1.8e308). d(δ²/2)/dlp = δ·(−1); written as −δ so it equals
  // lp − ref bitwise.
  k2: (delta: number, out: Float64Array): void => {
    out[0] = 0.5 * delta * delta;
    out[1] = -delta;
  },
  k3: (delta: number, out: Float64Array): void => {
    const e = Math.expm1(delta);
    out[0] = k3Value(delta, e);
    out[1] = k3DLogprob(e);
  },
  abs: (delta: number, out: Float64Array): void => {
    out[0] = Math.abs(delta);
    out[1] = delta > 0 ? -1 : delta < 0 ? 1 : 0;
  },
});
