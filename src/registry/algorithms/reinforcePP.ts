import { Aggregation } from "../../aggregate/aggregation.js";
import { KLEstimator } from "../../kl/estimator.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * REINFORCE++: pg_clip on the token ratio at ε = 0.2, seq_mean_token_mean, k1 KL in the reward at
 * β = 0.001, globally batch-normalised advantages (a per-sequence simplification of eq. 10).
 *
 * @derivation docs/derivations/variants.md#reinforce_pp
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: reinforce_pp ships clip 0.2 and k1 in the reward at 0.001
 * @see arXiv 2501.03262 eq. 1 (objective), eq. 8–9 (KL in reward), eq. 10 (normalisation), Sec. 4.2.3
 * @since 0.1.0
 */
export const reinforcePP: AlgorithmSpec = defineAlgorithm({
  name: "reinforce_pp",
  loss: {
    ratio: RatioKind.TOKEN,
    surrogate: SurrogateKind.PG_CLIP,
    clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
    aggregation: Aggregation.SEQ_MEAN_TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: null,
  },
  advantage: "reinforce_pp",
  advantageConfig: { batchNorm: true, eps: 1e-8 },
  klPlacement: "reward",
  klReward: { kind: KLEstimator.K1, coef: 0.001, aggregation: null, normLen: null },
  citation: {
    title:
      "REINFORCE++: Stabilizing Critic-Free Policy Optimization with Global Advantage Normalization",
    arxiv: "2501.03262",
    url: "https://arxiv.org/abs/2501.03262",
    notes:
      "PPO-clip objective: eq. 1; token-level KL in the reward: eq. 8–9; global advantage " +
      "normalisation: eq. 10; group-baseline variant: Appendix A; hyperparameters in Sec. 4.2.3 " +
      "(ε = 0.2, β = 0.001, γ = 1.0). Equation numbers follow v2.",
  },
  notes:
    "Aggregation: eq. 1 takes the token mean inside each sequence under an expectation over " +
    "sequences: seq_mean_token_mean. " +
    "Clip: PPO clipping at 0.2 on both sides (Sec. 4.2.3). " +
    "KL: in the reward, per token (eq. 8), with KL(t) = log(π_old/π_SFT) (eq. 9), which is k1 at " +
    "the sampling policy, β = 0.001; apply it with klInReward, then form returns at γ = 1.0 " +
    "(Sec. 4.2.3). " +
    "Advantage: eq. 10 z-normalises token-level advantages over the whole global batch (OpenRLHF " +
    "flattens the masked [B, T] tensor), so the paper-faithful pipeline is klInReward(k1, 0.001), " +
    "then reward-to-go at γ = 1, then whiten(returns, mask) with the mean shifted; that differs " +
    "from OpenRLHF only in the variance convention (Bessel correction with eps inside the square " +
    "root versus population std with a 1e-8 clamp). The shipped estimator (no group ids, " +
    "batch_norm = true) is a per-sequence simplification that matches eq. 10 only when T = 1. The " +
    "REINFORCE++-baseline variant (Appendix A) subtracts per-group means: pass group ids. That " +
    "variant uses k2 for the KL, but this entry keeps the main text's k1. eps = 1e-8 is polgrad's " +
    "division guard; the paper states none.",
});
