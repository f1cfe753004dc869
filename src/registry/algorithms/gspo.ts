import { Aggregation } from "../../aggregate/aggregation.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * GSPO: pg_clip on the length-normalised sequence ratio, clip ranges 3e-4 / 4e-4,
 * seq_mean_token_mean, group mean/std advantages, no KL.
 *
 * @derivation docs/derivations/variants.md#gspo-and-gspo_token
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: gspo ships the 3e-4 / 4e-4 sequence clip
 * @see arXiv 2507.18071 eq. 5 (objective), eq. 7 (sequence ratio)
 * @since 0.1.0
 */
export const gspo: AlgorithmSpec = defineAlgorithm({
  name: "gspo",
  loss: {
    ratio: RatioKind.SEQUENCE,
    surrogate: SurrogateKind.PG_CLIP,
    clip: { epsLow: 3e-4, epsHigh: 4e-4, ratioCap: null },
    aggregation: Aggregation.SEQ_MEAN_TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: null,
  },
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "Group Sequence Policy Optimization",
    arxiv: "2507.18071",
    url: "https://arxiv.org/abs/2507.18071",
    notes:
      "GSPO objective: eq. 5; length-normalised sequence importance ratio: eq. 7; clipping ranges " +
      "3e-4 (left) and 4e-4 (right), stated in the experiments section.",
  },
  notes:
    "Aggregation: eq. 5 averages per-sequence terms, (1/G) Σ_i; since the sequence ratio and the " +
    "advantage are constant along a row, seq_mean_token_mean over the broadcast per-token values " +
    "reproduces it exactly. " +
    "Clip: 3e-4 / 4e-4, roughly 600–700 times (nearly three orders of magnitude) narrower than the " +
    "0.2 / 0.27 of the same paper's GRPO baseline (0.2/3e-4 ≈ 667, 0.27/4e-4 = 675), because the " +
    "length-normalised sequence ratio concentrates near 1; the paper's 'two orders of magnitude' " +
    "remark is about the fraction of clipped tokens, not about clip widths. " +
    "KL: none in the objective. " +
    "Advantage: GRPO group normalisation (eq. 6), silent on the +ε guard and the Bessel " +
    "correction (group-norm defaults apply). " +
    "Ratio: sequence, s_i = exp((1/|y_i|) Σ_t log-ratio), with gradient through every response " +
    "token of the row.",
});
