import { Aggregation } from "../../aggregate/aggregation.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * DAPO: pg_clip on the token ratio with Clip-Higher (ε_low = 0.2, ε_high = 0.28), token_mean,
 * group mean/std advantages, no KL.
 *
 * @derivation docs/derivations/variants.md#dapo
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: dapo ships clip-higher 0.2 / 0.28
 * @see arXiv 2503.14476 eq. 8 (Clip-Higher), eq. 9 (advantage), eq. 12 (token-level loss)
 * @since 0.1.0
 */
export const dapo: AlgorithmSpec = defineAlgorithm({
  name: "dapo",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.PG_CLIP,
    clip: { epsLow: 0.2, epsHigh: 0.28, ratioCap: null },
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
    title: "DAPO: An Open-Source LLM Reinforcement Learning System at Scale",
    arxiv: "2503.14476",
    url: "https://arxiv.org/abs/2503.14476",
    notes:
      "Token-level policy-gradient objective: eq. 12 (the full objective with Clip-Higher is " +
      "eq. 8); ε_low 0.2 and ε_high 0.28 are stated with Clip-Higher; advantage normalisation: " +
      "eq. 9.",
  },
  notes:
    "Aggregation: eq. 12 divides by the total token count, 1/Σ_i |o_i|, which is token_mean (the " +
    "token-level policy-gradient loss). " +
    "Clip: Clip-Higher, eps_low 0.2 and eps_high 0.28. " +
    "KL: none; the paper leaves the KL term out of its algorithm. " +
    "Advantage: GRPO group normalisation kept (eq. 9, (r − mean)/std); the paper is silent on the " +
    "+ε guard and the Bessel correction, so the group-norm defaults apply. " +
    "Dynamic sampling (dropping groups whose answers are all right or all wrong) and overlong " +
    "reward shaping act on the data and the reward, upstream of the loss; no loss config can " +
    "express them, so they are not shipped.",
});
