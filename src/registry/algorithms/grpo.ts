import { Aggregation } from "../../aggregate/aggregation.js";
import { KLEstimator } from "../../kl/estimator.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * GRPO as written in DeepSeekMath: pg_clip on the token ratio, ε = 0.2 (not stated by the paper),
 * seq_mean_token_mean, k3 KL in the loss at 0.04, group mean/std advantages.
 *
 * @derivation docs/derivations/variants.md#grpo
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: grpo ships the deepseekmath constants
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: grpo notes say the paper never states its clip value
 * @see arXiv 2402.03300 eq. 3 (objective), eq. 4 (KL estimator), Sec. 4.2 (β = 0.04)
 * @since 0.1.0
 */
export const grpo: AlgorithmSpec = defineAlgorithm({
  name: "grpo",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.PG_CLIP,
    clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
    aggregation: Aggregation.SEQ_MEAN_TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: { kind: KLEstimator.K3, coef: 0.04, aggregation: null, normLen: null },
  },
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "loss",
  klReward: null,
  citation: {
    title: "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models",
    arxiv: "2402.03300",
    url: "https://arxiv.org/abs/2402.03300",
    notes:
      "GRPO objective: eq. 3. KL estimator: eq. 4, the unbiased estimator that equals Schulman's " +
      "k3. RL hyperparameters in Sec. 4.2: KL coefficient 0.04, G = 64 sampled outputs per question.",
  },
  notes:
    "Aggregation: eq. 3 takes the token mean of each output and then the mean over the G outputs, " +
    "(1/G) Σ_i (1/|o_i|) Σ_t, which is seq_mean_token_mean. " +
    "Clip: ε appears in eq. 3 but the paper never states its value; the shipped 0.2 is the PPO " +
    "paper's value (arXiv 1707.06347 Sec. 3), TRL's GRPOConfig default (epsilon=0.2) and the " +
    "setting of the Dr.GRPO reproduction (arXiv 2503.20783 Table 6). " +
    "KL: in the loss, not in the reward, with the eq. 4 estimator π_ref/π − log(π_ref/π) − 1, " +
    "which is k3, and coefficient 0.04 (Sec. 4.2); the KL term sits inside the same double sum, " +
    "so it inherits the policy aggregation. " +
    "Advantage: group-normalised outcome rewards, (r − mean)/std. The paper does not specify the " +
    "+ε guard on the std or the Bessel correction, so the group-norm defaults apply: eps 1e-4 as " +
    "in TRL (verl uses 1e-6, the released Dr.GRPO code 1e-8) and unbiased = true, the torch " +
    ".std() default those codebases call. " +
    "Current TRL defaults beta to 0 (KL off), which departs from the paper.",
});
