import { checkFiniteOutput } from "../core/finite.js";
import type { MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import { checkFiniteAt, checkFiniteNumber, checkSameShape, toMatrix } from "../core/validate.js";
import { checkKlClamp, clampedKlValue, type KLClamp, type KLEstimator } from "./estimator.js";
import { klOptions, klPoints } from "./klEstimate.js";

/**
 * Subtract a KL penalty from per-token rewards (PPO-RLHF reward shaping).
 *
 * Formula: r'_t = r_t − coef·k(ref − old)_t, with the estimator evaluated at the *sampling*
 * policy's logprobs `oldLogprobs`; 0 at padding. With `clamp` {delta: c_δ, value: c_k}:
 * k′ = clamp(k(clamp(δ, ±c_δ)), ±c_k), the clamps frameworks apply in the reward as in the loss
 * (verl's `low_var_kl`: 20 and 10; OpenRLHF: value 10).
 * Gradient / stop-gradient: none — the output is data (a reward), detached from every input.
 *
 * @param tokenRewards - `[B, T]` per-token rewards.
 * @param oldLogprobs - `[B, T]` logprobs of the policy that sampled the tokens.
 * @param refLogprobs - `[B, T]` reference-policy logprobs.
 * @param kind - The estimator.
 * @param coef - The KL coefficient β.
 * @param options - `responseMask`, the `[B, T]` mask; `clamp` (a KLClamp, or null: none).
 * @returns `[B, T]` shaped rewards, exactly 0 at padding.
 * @throws {ShapeError} E_SHAPE when shapes differ or a stream is not 2-D.
 * @throws {MaskError} E_MASK when the mask is invalid.
 * @throws {NonFiniteError} E_NONFINITE when a stream is not finite at a response position.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown estimator.
 * @throws {ConfigError} E_CONFIG when coef is not a finite number, a clamp bound is not a positive
 *   finite number, or options is not an object.
 * @throws {OverflowError} E_OVERFLOW when ref − old, an estimate or a shaped reward exceeds
 *   float64, naming the quantity and (b, t).
 * @derivation docs/derivations/kl.md#kl-in-reward
 * @enforcedBy test/kl/klInReward.test.ts > klInReward > golden: k1 and k3 shaped rewards with coef 0.5
 * @enforcedBy test/hardening/stats.test.ts > klInReward > rejects: a non-finite coef with a ConfigError, and an unrepresentable shaped reward
 * @enforcedBy test/kl/klInReward.test.ts > klInReward > golden: verl's low_var_kl clamps (20, 10) in the reward on δ = 25, −30, 1
 * @enforcedBy test/kl/klInReward.test.ts > klInReward > identity: the clamped reward KL is the KL term policyLoss computes with the same clamp, every estimator
 * @since 0.1.0
 */
export function klInReward(
  tokenRewards: MatrixLike,
  oldLogprobs: MatrixLike,
  refLogprobs: MatrixLike,
  kind: KLEstimator,
  coef: number,
  options: { readonly responseMask: MaskLike; readonly clamp?: KLClamp | null },
): Matrix {
  const fn = "klInReward";
  const rewards = toMatrix(fn, "tokenRewards", tokenRewards);
  const old = toMatrix(fn, "oldLogprobs", oldLogprobs);
  checkSameShape(fn, "tokenRewards", rewards, "oldLogprobs", old);
  const opts = klOptions(fn, options);
  const { value, mask } = klPoints(fn, old, refLogprobs, kind, opts.responseMask, "oldLogprobs");
  checkFiniteAt(fn, "tokenRewards", rewards, mask);
  checkFiniteNumber(fn, "coef", coef);
  const clamp =
    opts.clamp === null || opts.clamp === undefined
      ? null
      : checkKlClamp(fn, "options.clamp", opts.clamp);
  const out = new Float64Array(value.data.length);
  if (clamp === null) {
    for (let i = 0; i < out.length; i++) {
      if (mask.data[i] === 1)
        out[i] = (rewards.data[i] as number) - coef * (value.data[i] as number);
    }
  } else {
    // The clamped estimate from δ = ref − old itself (klPoints checked both streams finite and δ
    // representable); the unclamped path above keeps the estimator arrays' bits.
    const ref = toMatrix(fn, "refLogprobs", refLogprobs);
    const pt = new Float64Array(2);
    for (let i = 0; i < out.length; i++) {
      if (mask.data[i] !== 1) continue;
      const d = (ref.data[i] as number) - (old.data[i] as number);
      const k = clampedKlValue(kind, d, clamp.delta, clamp.value, pt);
      out[i] = (rewards.data[i] as number) - coef * k;
    }
  }
  checkFiniteOutput(fn, "shaped reward", out, value.cols, mask.data, "r − coef·k exceeds float64");
  return { rows: value.rows, cols: value.cols, data: out };
}
