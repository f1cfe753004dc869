import { Aggregation } from "../../aggregate/aggregation.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

const GROUP_NORM = { center: true, scale: "std", eps: 1e-4, unbiased: true } as const;

/**
 * LUSPO: GSPO's clipped surrogate on the length-normalised sequence ratio, each sequence's loss
 * scaled by its length and averaged over sequences (mean_b(L_b·ℓ_b) = seq_mean_token_sum, ℓ
 * constant along a row), group mean/std advantages, no KL.
 *
 * @derivation docs/derivations/variants.md#luspo
 * @enforcedBy test/registry/newAlgorithms.test.ts > new registry algorithms > golden: luspo, vespo and top_entropy ship TRL's constants
 * @see arXiv 2602.05261
 * @since 0.3.0
 */
export const luspo: AlgorithmSpec = defineAlgorithm({
  name: "luspo",
  loss: {
    ratio: RatioKind.SEQUENCE,
    surrogate: SurrogateKind.PG_CLIP,
    clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
    aggregation: Aggregation.SEQ_MEAN_TOKEN_SUM,
    normLen: null,
    isCorrection: null,
    kl: null,
  },
  advantage: "grpo",
  advantageConfig: GROUP_NORM,
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "Length-Unbiased Sequence Policy Optimization (LUSPO)",
    arxiv: "2602.05261",
    url: "https://arxiv.org/abs/2602.05261",
    notes:
      "TRL's GRPOConfig cites this paper for loss_type='luspo' ('a sequence-level loss that scales " +
      "each sequence's loss by its length; a modification of GSPO; requires " +
      "importance_sampling_level=\"sequence\"'); the code read is TRL's GRPOTrainer._compute_loss " +
      "at f2cd5771.",
  },
  notes:
    "Loss: (per_token_loss · L_b).mean() over rows at sequence level, which is seq_mean_token_sum " +
    "(the clipped term is constant along a row on the sequence ratio). " +
    "Clip: TRL's GRPOConfig defaults, epsilon 0.2 and epsilon_high None (= epsilon); the paper's " +
    "own widths were not read, so the shipped ones are TRL's. " +
    "At importance_sampling_level 'token' TRL's mean runs over all B×T entries, padding included: " +
    "a deviation (trl-luspo-token-padding, modelled by trlLuspoTokenLoss), not this entry. " +
    "Advantage: GRPO group normalisation; KL: none (TRL's beta default 0).",
});

/**
 * VESPO: −sg[φ]·A·lp with the gamma weight φ(w) = e^λ·w^k·e^(−λw) of the row's sequence ratio
 * w = exp(Σ_t clamp(lp − old, ±20)) (clamped to [1e-8, e^20]), (k, λ) = (2, 3) for A ≥ 0 and (3, 2)
 * otherwise, token_mean, group mean/std advantages, no KL.
 *
 * @derivation docs/derivations/variants.md#vespo
 * @enforcedBy test/registry/newAlgorithms.test.ts > new registry algorithms > golden: luspo, vespo and top_entropy ship TRL's constants
 * @see arXiv 2602.10693
 * @since 0.3.0
 */
export const vespo: AlgorithmSpec = defineAlgorithm({
  name: "vespo",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.VESPO,
    clip: null,
    aggregation: Aggregation.TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: null,
    vespo: { kPos: 2, lambdaPos: 3, kNeg: 3, lambdaNeg: 2 },
  },
  advantage: "grpo",
  advantageConfig: GROUP_NORM,
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "VESPO: Variational Sequence-Level Soft Policy Optimization",
    arxiv: "2602.10693",
    url: "https://arxiv.org/abs/2602.10693",
    notes:
      "TRL's GRPOConfig cites this paper for loss_type='vespo' (a smooth, asymmetric Gamma " +
      "weighting of sequence-level importance weights in place of hard clipping); the code read " +
      "is TRL's GRPOTrainer.get_gamma_weights at f2cd5771.",
  },
  notes:
    "Constants: TRL's GRPOConfig defaults vespo_k_pos 2, vespo_lambda_pos 3, vespo_k_neg 3, " +
    "vespo_lambda_neg 2 (λ floored at 1e-4); get_gamma_weights' comment says the ln 1e-8 lower " +
    "clamp matches the original implementation. φ(1) = 1. " +
    "Aggregation: TRL divides vespo like dapo, by num_items_in_batch (token_mean). " +
    "With the vLLM IS ratio TRL folds Σ clamp(log ρ, ln 1e-8, 20) into w (a token-level IS " +
    "correction); its sum over padding is deviation trl-vespo-is-padding. " +
    "Advantage: GRPO group normalisation; KL: none.",
});

/**
 * DAPO with the top-entropy token mask: only the 20 % highest-entropy tokens of the batch keep
 * their policy-gradient term (needs per-token entropies).
 *
 * @derivation docs/derivations/variants.md#top_entropy
 * @enforcedBy test/registry/newAlgorithms.test.ts > new registry algorithms > golden: luspo, vespo and top_entropy ship TRL's constants
 * @see arXiv 2506.01939
 * @since 0.3.0
 */
export const topEntropy: AlgorithmSpec = defineAlgorithm({
  name: "top_entropy",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.PG_CLIP,
    clip: { epsLow: 0.2, epsHigh: 0.28, ratioCap: null },
    aggregation: Aggregation.TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: null,
    topEntropyQuantile: 0.2,
  },
  advantage: "grpo",
  advantageConfig: GROUP_NORM,
  klPlacement: "none",
  klReward: null,
  citation: {
    title:
      "Beyond the 80/20 Rule: High-Entropy Minority Tokens Drive Effective Reinforcement Learning for LLM Reasoning",
    arxiv: "2506.01939",
    url: "https://arxiv.org/abs/2506.01939",
    notes:
      "TRL's top_entropy_quantile ρ cites this paper: 'keeps in the policy loss term only the " +
      "top-ρ quantile of tokens by entropy ... The paper recommends a value of 0.2'; the code read " +
      "is TRL's get_high_entropy_mask at f2cd5771.",
  },
  notes:
    "Mask: ρ = 0.2, the value TRL's GRPOConfig help attributes to the paper; the threshold is the " +
    "0.8 quantile of the batch's response-token entropies, and dropped tokens stay in the " +
    "denominator. The paper builds on DAPO, so the rest is the dapo entry's: Clip-Higher " +
    "0.2 / 0.28, token_mean, GRPO group normalisation, no KL. Needs an entropies stream.",
});
