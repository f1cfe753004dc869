import { RatioKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";
import { gspo } from "./gspo.js";

/**
 * GSPO-token: the gspo entry with the stop-gradient sequence_token ratio; same clip ranges,
 * aggregation and advantages, no KL. Its loss equals gspo's with only `ratio` replaced.
 *
 * @derivation docs/derivations/variants.md#gspo-and-gspo_token
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: gspo_token's loss is gspo's with the sequence_token ratio
 * @see arXiv 2507.18071 eq. 13 (objective), eq. 14 (stop-gradient token ratio)
 * @since 0.1.0
 */
export const gspoToken: AlgorithmSpec = defineAlgorithm({
  name: "gspo_token",
  loss: { ...gspo.loss, ratio: RatioKind.SEQUENCE_TOKEN },
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "Group Sequence Policy Optimization",
    arxiv: "2507.18071",
    url: "https://arxiv.org/abs/2507.18071",
    notes:
      "GSPO-token: eq. 13, with the stop-gradient token ratio of eq. 14, " +
      "s_{i,t} = sg[s_i]·π_θ(y_{i,t}|…)/sg[π_θ(y_{i,t}|…)].",
  },
  notes:
    "Aggregation: eq. 13 is (1/G) Σ_i (1/|y_i|) Σ_t, i.e. seq_mean_token_mean. " +
    "Clip: the same 3e-4 / 4e-4 as gspo; the paper gives no separate values for the token variant. " +
    "KL: none, as in gspo. " +
    "Advantage: GRPO group normalisation (eq. 6); the variant exists so that advantages may vary " +
    "per token. With per-sequence advantages the loss value and the clip state equal gspo's " +
    "exactly and only the gradient decomposition differs (token-local sg[s_i]·∇logprob_t). " +
    "Silent knobs as in the gspo entry (std eps guard, Bessel correction).",
});
