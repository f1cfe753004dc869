import { Aggregation } from "../../aggregate/aggregation.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * SAPO: the soft adaptive gate σ(τ(r − 1))·4/τ on the token ratio in place of the clip, τ+ = 1
 * for A > 0 and τ− = 1.05 otherwise, seq_mean_token_mean, group mean/std advantages, no KL.
 *
 * @derivation docs/derivations/variants.md#sapo
 * @enforcedBy test/registry/newAlgorithms.test.ts > new registry algorithms > golden: sapo ships the soft gate at τ+ 1 and τ− 1.05 on the token ratio
 * @see arXiv 2511.20347
 * @since 0.3.0
 */
export const sapo: AlgorithmSpec = defineAlgorithm({
  name: "sapo",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.SAPO,
    clip: null,
    aggregation: Aggregation.SEQ_MEAN_TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: null,
    sapo: { tauPos: 1, tauNeg: 1.05 },
  },
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "Soft Adaptive Policy Optimization",
    arxiv: "2511.20347",
    url: "https://arxiv.org/abs/2511.20347",
    notes:
      "The gate f(r) = σ(τ(r − 1))·4/τ with a temperature per advantage sign; verl cites this " +
      "paper for its sapo policy loss (docs/blog/v0.7.md) and TRL ships it as loss_type='sapo'.",
  },
  notes:
    "Temperatures: τ+ = 1.0 and τ− = 1.05 are the defaults of verl's actor config (tau_pos, " +
    "tau_neg) and of TRL's GRPOConfig (sapo_temperature_pos / _neg), which agree; TRL holds them " +
    "as float32 (1.05 runs as 1.0499999523162842). " +
    "The gate is 2/τ at r = 1 with slope 1 there, so it matches r·A to first order and decays " +
    "smoothly instead of clipping. " +
    "Ratio: token, exp(lp − old). verl clamps the log-ratio to ±20 before exp (ratio_clamp " +
    "{level: token, lower: −20, upper: 20}); TRL does not; the paper form here has no clamp. " +
    "Aggregation: verl hard-codes seq-mean-token-mean for sapo whatever loss_agg_mode says; TRL's " +
    "sapo uses its grpo normaliser (the same, with max(L_b, 1)). " +
    "Advantage: GRPO group normalisation; KL: none.",
});
