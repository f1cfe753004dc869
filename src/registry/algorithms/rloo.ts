import { Aggregation } from "../../aggregate/aggregation.js";
import { KLEstimator } from "../../kl/estimator.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * RLOO: unclipped REINFORCE on the whole completion (seq_mean_token_sum with `[B]` leave-one-out
 * advantages), k1 KL in the reward at β = 0.03. The `ratio` field is the required `"token"`
 * placeholder (REINFORCE ignores it).
 *
 * @derivation docs/derivations/variants.md#rloo
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: rloo ships unclipped reinforce with k1 in the reward at 0.03
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: rloo notes record the anthropic-hh beta 0.10
 * @see arXiv 2402.14740 Sec. 2–3 (estimator), Appendix C (β)
 * @since 0.1.0
 */
export const rloo: AlgorithmSpec = defineAlgorithm({
  name: "rloo",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.REINFORCE,
    clip: null,
    aggregation: Aggregation.SEQ_MEAN_TOKEN_SUM,
    normLen: null,
    isCorrection: null,
    kl: null,
  },
  advantage: "rloo",
  advantageConfig: null,
  klPlacement: "reward",
  klReward: { kind: KLEstimator.K1, coef: 0.03, aggregation: null, normLen: null },
  citation: {
    title:
      "Back to Basics: Revisiting REINFORCE Style Optimization for Learning from Human Feedback in LLMs",
    arxiv: "2402.14740",
    url: "https://arxiv.org/abs/2402.14740",
    notes:
      "RLOO estimator: Sec. 2 and 3 (leave-one-out baseline over k samples, the whole completion " +
      "treated as one action); KL-shaped reward R = r_φ − β·log(π/π_ref); β values in Appendix C.",
  },
  notes:
    "Aggregation: the completion is one action, so the surrogate is −A_i·log π(y_i|x) = " +
    "−A_i·Σ_t logprobs averaged over sequences: reinforce with [B] advantages under " +
    "seq_mean_token_sum. " +
    "Clip: none. The paper drops PPO clipping (it fired on under 5% of each batch and is rarely " +
    "necessary in RLHF) and uses the plain REINFORCE gradient; the ratio field holds the required " +
    "token placeholder. " +
    "KL: in the reward. The sequence log-ratio equals the token sum of k1 evaluated at the " +
    "sampling policy, i.e. klInReward with kind k1. β is 0.03 for TL;DR and 0.10 for Anthropic-HH " +
    "(Appendix C), swept over {0.1, 0.25, 0.5, 1.0} in Sec. 5.2.2; 0.03 is shipped, but the value " +
    "depends on the dataset, so replace it to match. " +
    "Advantage: leave-one-out baseline A_i = r_i − mean_{j≠i} r_j over the k samples of a prompt " +
    "(k ∈ {2, 4} in the paper); the estimator takes no config. " +
    "The paper has no token-level aggregation (the single-action view has none) and no std " +
    "normalisation of advantages.",
});
