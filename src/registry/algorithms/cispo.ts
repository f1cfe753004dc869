import { Aggregation } from "../../aggregate/aggregation.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * CISPO: the clipped, detached importance-weight surrogate on the token ratio, one-sided
 * (`epsLow` null, `epsHigh` 0.2 taken from verl because the paper does not disclose its value),
 * token_mean, group mean/std advantages, no KL.
 *
 * @derivation docs/derivations/variants.md#cispo
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: cispo ships a one-sided 0.2 upper bound
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: cispo notes say the paper does not disclose eps_high and name verl
 * @see arXiv 2506.13585 eq. 4 (objective), eq. 5 (clipped IS weight)
 * @since 0.1.0
 */
export const cispo: AlgorithmSpec = defineAlgorithm({
  name: "cispo",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.CISPO,
    clip: { epsLow: null, epsHigh: 0.2, ratioCap: null },
    aggregation: Aggregation.TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: null,
  },
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "MiniMax-M1: Scaling Test-Time Compute Efficiently with Lightning Attention",
    arxiv: "2506.13585",
    url: "https://arxiv.org/abs/2506.13585",
    notes:
      "CISPO objective: eq. 4, with the clipped, stop-gradient importance-sampling weight of " +
      "eq. 5; the one-sided clipping is stated in the experiments discussion.",
  },
  notes:
    "Aggregation: eq. 4 divides by the total token count, 1/Σ_i |o_i|, which is token_mean. " +
    "Clip: CISPO clips the importance-sampling weight, not the update, and only from above: the " +
    "paper imposes no lower bound and tunes only ε_high, so eps_low is null. The paper does not " +
    "disclose the tuned ε_high anywhere (checked against v1, appendices included). The shipped 0.2 " +
    "is the default upper bound of verl's compute_policy_loss_cispo (clip_ratio_high: 0.2 in " +
    "actor.yaml; clip_ratio_low is 0.2 too, so verl clamps on both sides, and its fallback to " +
    "clip_ratio never fires under the defaults). Replace it to match a tuned run. " +
    "KL: none; the paper states CISPO has no KL penalty. " +
    "Advantage: GRPO group normalisation adopted from GRPO, silent on the +ε guard and the Bessel " +
    "correction (group-norm defaults apply). " +
    "The clipped weight is detached (sg[ŵ]); gradient flows only through the logprob factor. " +
    'Beware TRL\'s loss_type="cispo": it clamps the ratio at the absolute value epsilon_high, not ' +
    "at 1 + ε, so configs do not carry over between the two.",
});
