import { freezePapoConfig, type PapoConfig, PapoForm } from "../../losses/papoConfig.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";
import { dapo } from "./dapo.js";

/**
 * The default PAPO-D loss config: the dapo parent with the official form's constants
 * (γ = 0.01, no clip, double entropy η1 = η2 = 0.03 via the MC estimator).
 *
 * @derivation docs/derivations/papo.md#papo_g-and-papo_d
 * @enforcedBy test/losses/papo.registry.test.ts > papo registry > golden: papo_d ships the dapo parent with the official constants and double entropy
 * @since 0.1.0
 */
export const papoDLoss: PapoConfig = freezePapoConfig({
  ...dapo.loss,
  perception: { gamma: 0.01, clip: null, form: PapoForm.OFFICIAL },
  doubleEntropy: { eta1: 0.03, eta2: 0.03 },
});

/**
 * PAPO-D in TRL v0.29.1's form: the dapo parent with PAPOConfig's defaults (γ = 0.1, clamp
 * [0, 0.2], η1 = η2 = 0.03).
 *
 * @derivation docs/derivations/papo.md#papo_g-and-papo_d
 * @enforcedBy test/losses/papo.trlFixture.test.ts > papoLoss > conformance: the trl form reproduces the real trl v0.29.1 _compute_loss on every recorded case
 * @since 0.1.0
 */
export const papoDTrlLoss: PapoConfig = freezePapoConfig({
  ...dapo.loss,
  perception: { gamma: 0.1, clip: 0.2, form: PapoForm.TRL },
  doubleEntropy: { eta1: 0.03, eta2: 0.03 },
});

/**
 * PAPO-D: the registered `dapo` loss as parent, plus PAPO's implicit perception term and double
 * entropy term. The spec's `loss` is the parent; the PAPO terms are {@link papoDLoss} (default,
 * official form) and {@link papoDTrlLoss} (TRL v0.29.1 form).
 *
 * @derivation docs/derivations/papo.md#papo_g-and-papo_d
 * @enforcedBy test/losses/papo.registry.test.ts > papo registry > golden: papo_d ships the dapo parent with the official constants and double entropy
 * @see arXiv 2507.06448 (PAPO), Sec. 3 (implicit perception loss, double entropy loss)
 * @since 0.1.0
 */
export const papoD: AlgorithmSpec = defineAlgorithm({
  name: "papo_d",
  loss: dapo.loss,
  advantage: "grpo",
  advantageConfig: dapo.advantageConfig,
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "Perception-Aware Policy Optimization for Multimodal Reasoning",
    arxiv: "2507.06448",
    url: "https://arxiv.org/abs/2507.06448",
    notes:
      "Implicit perception loss KL_prcp subtracted with weight γ, plus the double entropy loss " +
      "η1·H(original) + η2·H(masked). Official code: github.com/MikeWangWZHL/PAPO @ fb63bf45, " +
      "verl/workers/actor/dp_actor.py (sha256 0a936be8…09f0), " +
      "examples/papo_dapo/qwen2_5_vl_{3b,7b}_dapo_papo.sh; TRL port: huggingface/trl v0.29.1 " +
      "(617406a4), trl/experimental/papo/papo_trainer.py (sha256 9836f450…9175).",
  },
  notes:
    "Parent: the registered dapo loss (pg_clip 0.2/0.28, token_mean, no KL; the official " +
    "dapo_papo scripts pass clip_ratio_low 0.2 / clip_ratio_high 0.28). PAPO terms (papoDLoss, " +
    "the default, official form): γ = kl_prcp_coef 0.01, no clip, k3 of sg[masked] − lp with " +
    "verl's ±20 / ±10 clamps aggregated like the parent, double entropy via the Monte-Carlo " +
    "estimator −mean(logp) of each view at η1 = η2 = 0.03 (use_ori/aug_entropy_loss true in the " +
    "dapo_papo scripts); the masked view is precomputed, so only the original-view entropy " +
    "carries gradient. papoDTrlLoss: TRL v0.29.1 PAPOConfig defaults, γ 0.1, clamp [0, 0.2], " +
    "η1 = η2 = 0.03 on full-vocabulary entropies without gradient, mean over all B×T positions; " +
    "TRL's epsilon_high defaults to epsilon (0.2), so set epsilon_high = 0.28 to run this parent. " +
    "Dynamic sampling (online_filtering in the official scripts) acts on the data, not the loss. " +
    "Default form: official, the authors' reference implementation.",
  papo: { official: papoDLoss, trl: papoDTrlLoss },
});
