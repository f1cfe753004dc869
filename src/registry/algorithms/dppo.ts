import { Aggregation } from "../../aggregate/aggregation.js";
import { type PolicyLossConfig, RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

const CITATION = {
  title: "Rethinking the Trust Region in LLM Reinforcement Learning",
  arxiv: "2602.04879",
  url: "https://arxiv.org/abs/2602.04879",
  notes:
    "DPPO-Binary-TV and DPPO-Binary-KL: a trust region on the binary divergence of the sampled " +
    "token's probability instead of PPO's ratio clip, with a truncated, detached IS ratio; the " +
    "authors' verl integration (docs/algo/dppo.md, examples/dppo_trainer) is the code read.",
} as const;

const NOTES =
  "Surrogate: −A·sg[min(r, C)]·lp·sg[valid], the token kept when its probability p = e^lp stays " +
  "in the region around p_old = e^old on the side of its advantage. " +
  "Constants: the authors' example script (examples/dppo_trainer/run_qwen3_30b_a3b_megatron.sh) " +
  "sets the thresholds 0.15 (TV) and 0.05 (KL) through clip_ratio_low/high, clip_ratio_c = " +
  "10000 (so the truncation never binds in practice), and loss_agg_mode seq-mean-token-sum-norm " +
  "(token_sum_norm here; set norm_len to the generation budget). Without the script's override " +
  "verl's ActorConfig clip_ratio_c of 3 truncates the ratio at 3. " +
  "Ratio: verl clamps the log-ratio to ±20 before exp (ratio_clamp). " +
  "Advantage: GRPO group normalisation; KL: none.";

const loss = (divergence: "tv" | "kl", delta: number): PolicyLossConfig => ({
  ratio: RatioKind.TOKEN,
  surrogate: SurrogateKind.DPPO,
  clip: null,
  aggregation: Aggregation.TOKEN_SUM_NORM,
  normLen: null,
  isCorrection: null,
  kl: null,
  ratioClamp: { level: "token", lower: -20, upper: 20 },
  dppo: { divergence, low: delta, high: delta, truncation: 10000 },
});

/**
 * DPPO-Binary-TV: the token is kept while p − p_old ≤ 0.15 (A > 0) or ≥ −0.15 (A ≤ 0).
 *
 * @derivation docs/derivations/variants.md#dppo
 * @enforcedBy test/registry/newAlgorithms.test.ts > new registry algorithms > golden: dppo_tv and dppo_kl ship the authors' thresholds 0.15 and 0.05
 * @see arXiv 2602.04879
 * @since 0.3.0
 */
export const dppoTv: AlgorithmSpec = defineAlgorithm({
  name: "dppo_tv",
  loss: loss("tv", 0.15),
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "none",
  klReward: null,
  citation: CITATION,
  notes: NOTES,
});

/**
 * DPPO-Binary-KL: the token is kept while the binary KL of its probability is ≤ 0.05 or it moved
 * against its advantage's direction.
 *
 * @derivation docs/derivations/variants.md#dppo
 * @enforcedBy test/registry/newAlgorithms.test.ts > new registry algorithms > golden: dppo_tv and dppo_kl ship the authors' thresholds 0.15 and 0.05
 * @see arXiv 2602.04879
 * @since 0.3.0
 */
export const dppoKl: AlgorithmSpec = defineAlgorithm({
  name: "dppo_kl",
  loss: loss("kl", 0.05),
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "none",
  klReward: null,
  citation: CITATION,
  notes: NOTES,
});
