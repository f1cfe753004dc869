import { Aggregation } from "../../aggregate/aggregation.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * Dr.GRPO: pg_clip on the token ratio, ε = 0.2, token_sum_norm with `normLen` left null on purpose
 * (the generation budget is deployment-specific; set it before calling policyLoss), centred
 * advantages without the std division, no KL.
 *
 * @derivation docs/derivations/variants.md#dr_grpo
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: dr_grpo ships the paper constants with normlen null
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > rejects: dr_grpo's shipped loss until normlen is set
 * @see arXiv 2503.20783 (objective without 1/|o_i| and std; Table 6 settings)
 * @since 0.1.0
 */
export const drGrpo: AlgorithmSpec = defineAlgorithm({
  name: "dr_grpo",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.PG_CLIP,
    clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
    aggregation: Aggregation.TOKEN_SUM_NORM,
    normLen: null,
    isCorrection: null,
    kl: null,
  },
  advantage: "grpo",
  advantageConfig: { center: true, scale: "none", eps: 1e-4, unbiased: true },
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "Understanding R1-Zero-Like Training: A Critical Perspective",
    arxiv: "2503.20783",
    url: "https://arxiv.org/abs/2503.20783",
    notes:
      "Dr.GRPO drops GRPO's 1/|o_i| length normalisation and its std division; the released code " +
      "divides masked token sums by a constant generation budget (MAX_TOKENS); run settings in " +
      "Table 6.",
  },
  notes:
    "Aggregation: token sums divided by a constant generation budget rather than by |o_i| (the " +
    "released code divides by the global constant MAX_TOKENS), i.e. token_sum_norm with norm_len = " +
    "budget. The entry ships norm_len = null on purpose because the budget depends on the " +
    "deployment: set it ({ ...spec.loss, normLen: budget }) before calling policyLoss, which throws " +
    "until then. The paper's runs use a 3000-token maximum response length and 8 responses per " +
    "question (Table 6). Read literally, before the budget trick, the objective (1/G) Σ_i Σ_t is " +
    "seq_mean_token_sum; the two differ by the uniform factor 1/norm_len. " +
    "Clip: 0.2 on both sides (Table 6). " +
    "KL: none; the paper assumes β = 0 throughout and Table 6 lists both KL coefficients as 0.0. " +
    "Advantage: group-mean centring without the std division (scale none), Dr.GRPO's fix for the " +
    "question-difficulty bias. Sampling temperature 1.0; the released code pins a std eps of 1e-8 " +
    "(train_zero_math.py), unused here because scale is none.",
});
