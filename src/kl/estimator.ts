/**
 * KL estimators of KL(π‖ref) = E_π[log π − log ref] from sampled-token logprobs, with
 * δ = ref_logprobs − logprobs (docs/derivations/kl.md):
 *
 * | kind | value | ∂/∂logprobs | E_π[value] |
 * | --- | --- | --- | --- |
 * | k1 | −δ | 1 | KL |
 * | k2 | δ²/2 | −δ = lp − ref | KL + O(δ³) bias |
 * | k3 | expm1(δ) − δ | −expm1(δ) = 1 − e^δ | KL |
 * | abs | abs(δ) | −sign(δ) (0 at δ = 0) | ≥ KL, not an estimator |
 */

import type { Aggregation } from "../aggregate/aggregation.js";
import { oneOf } from "../core/names.js";

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
}

/**
 * Value and derivative ∂k/∂logprobs of one estimator at one response position, given
 * δ = ref − lp (already zero-filled at padding by the caller).
 * @internal
 */
export function klPointwise(kind: KLEstimator, delta: number): { value: number; dLogprob: number } {
  switch (kind) {
    case "k1":
      return { value: -delta, dLogprob: 1 };
    case "k2":
      // d(δ²/2)/dlp = δ·(−1); written as −δ so it equals lp − ref bitwise.
      return { value: (delta * delta) / 2, dLogprob: -delta };
    case "k3": {
      const e = Math.expm1(delta);
      return { value: e - delta, dLogprob: -e };
    }
    case "abs":
      return { value: Math.abs(delta), dLogprob: delta > 0 ? -1 : delta < 0 ? 1 : 0 };
  }
}
