import { Aggregation } from "../../aggregate/aggregation.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * PPO with the clipped surrogate: pg_clip on the token ratio, ε = 0.2 on both sides, token_mean,
 * GAE(γ = 0.99, λ = 0.95) advantages, no KL.
 *
 * @derivation docs/derivations/variants.md#ppo
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: ppo ships the paper constants
 * @see arXiv 1707.06347 eq. 7 (clipped surrogate), eq. 11–12 (GAE), Tables 3–5
 * @since 0.1.0
 */
export const ppo: AlgorithmSpec = defineAlgorithm({
  name: "ppo",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.PG_CLIP,
    clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
    aggregation: Aggregation.TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: null,
  },
  advantage: "gae",
  advantageConfig: { gamma: 0.99, lam: 0.95 },
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "Proximal Policy Optimization Algorithms",
    arxiv: "1707.06347",
    url: "https://arxiv.org/abs/1707.06347",
    notes:
      "Clipped surrogate objective: eq. 7, with ε introduced in Sec. 3 as 'say, ε = 0.2' and 0.2 " +
      "the best clipping setting of Table 1. GAE γ = 0.99, λ = 0.95: Tables 3–5. Adaptive-KL " +
      "alternative: eq. 8 (Sec. 4).",
  },
  notes:
    "Aggregation: the empirical expectation of eq. 7 runs over every timestep in the batch, so " +
    "the loss is token_mean. " +
    "Clip: ε = 0.2 on both sides (Sec. 3; the best clipping row of Table 1). " +
    "KL: none. Clipping takes the place of a KL penalty, and the adaptive-KL variant (eq. 8) did " +
    "worse than the clipped objective in Sec. 4. RLHF deployments often put a KL-in-reward penalty " +
    "back and set γ = λ = 1 (verl's ppo_trainer.yaml defaults: gamma 1.0, lam 1.0, kl_coef 0.001 " +
    "with use_kl_in_reward False); neither belongs to the paper's objective, so neither is shipped. " +
    "Advantage: GAE (eq. 11–12) with γ = 0.99 and λ = 0.95 from the paper's MuJoCo/Atari tables " +
    "(Tables 3–5). The paper predates LLM post-training: it fixes no token aggregation for " +
    "variable-length responses and no advantage whitening (see whiten). " +
    "Value side: pair with valueLoss and this GAE config. The paper's L^VF (eq. 9) is an unclipped " +
    "squared error, so value clipping and the ½ factor are implementation conventions (the Atari " +
    "Table 5 uses c1 = 1 and entropy coefficient c2 = 0.01).",
});
