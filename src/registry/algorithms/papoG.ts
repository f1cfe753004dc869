import { freezePapoConfig, type PapoConfig, PapoForm } from "../../losses/papoConfig.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";
import { grpo } from "./grpo.js";

/**
 * The default PAPO-G loss config: the grpo parent with the official form's constants
 * (γ = 0.01, no clip, no double entropy).
 *
 * @derivation docs/derivations/papo.md#papo_g-and-papo_d
 * @enforcedBy test/losses/papo.registry.test.ts > papo registry > golden: papo_g ships the grpo parent with the official constants
 * @since 0.1.0
 */
export const papoGLoss: PapoConfig = freezePapoConfig({
  ...grpo.loss,
  perception: { gamma: 0.01, clip: null, form: PapoForm.OFFICIAL },
  doubleEntropy: null,
});

/**
 * PAPO-G in TRL v0.29.1's form: the grpo parent with PAPOConfig's defaults (γ = 0.1, clamp
 * [0, 0.2], η1 = η2 = 0.03).
 *
 * @derivation docs/derivations/papo.md#papo_g-and-papo_d
 * @enforcedBy test/losses/papo.trlFixture.test.ts > papoLoss > conformance: the trl form reproduces the real trl v0.29.1 _compute_loss on every recorded case
 * @since 0.1.0
 */
export const papoGTrlLoss: PapoConfig = freezePapoConfig({
  ...grpo.loss,
  perception: { gamma: 0.1, clip: 0.2, form: PapoForm.TRL },
  doubleEntropy: { eta1: 0.03, eta2: 0.03 },
});

/**
 * PAPO-G: the registered `grpo` loss as parent, plus PAPO's implicit perception term. The spec's
 * `loss` is the parent; the PAPO terms are {@link papoGLoss} (default, official form) and
 * {@link papoGTrlLoss} (TRL v0.29.1 form).
 *
 * @derivation docs/derivations/papo.md#papo_g-and-papo_d
 * @enforcedBy test/losses/papo.registry.test.ts > papo registry > golden: papo_g ships the grpo parent with the official constants
 * @see arXiv 2507.06448 (PAPO), Sec. 3 (implicit perception loss)
 * @since 0.1.0
 */
export const papoG: AlgorithmSpec = defineAlgorithm({
  name: "papo_g",
  loss: grpo.loss,
  advantage: "grpo",
  advantageConfig: grpo.advantageConfig,
  klPlacement: "loss",
  klReward: null,
  citation: {
    title: "Perception-Aware Policy Optimization for Multimodal Reasoning",
    arxiv: "2507.06448",
    url: "https://arxiv.org/abs/2507.06448",
    notes:
      "Implicit perception loss KL_prcp between the policy on the original and on the masked " +
      "image, subtracted with weight γ; double entropy loss for PAPO-D. Official code: " +
      "github.com/MikeWangWZHL/PAPO @ fb63bf45, verl/workers/actor/dp_actor.py (sha256 " +
      "0a936be8…09f0); TRL port: huggingface/trl v0.29.1 (617406a4), " +
      "trl/experimental/papo/papo_trainer.py (sha256 9836f450…9175).",
  },
  notes:
    "Parent: the registered grpo loss (pg_clip 0.2/0.2, seq_mean_token_mean, k3 KL 0.04 in the " +
    "loss). PAPO terms (papoGLoss, the default, official form): γ = kl_prcp_coef 0.01 " +
    "(examples/configs/config_grpo_papo.yaml; the 3B/7B grpo_papo scripts use 0.02, the " +
    "'PAPO-H' checkpoints), no clip (use_kl_prcp_clipping false), k3 of sg[masked] − lp with " +
    "verl's ±20 / ±10 clamps, aggregated like the parent, no double entropy (the 7B script " +
    "enables it at 0.05). The official runs use EasyR1's loss_avg_mode token, clip_ratio_high " +
    "0.3 and dual clip 3.0 for the GRPO part, which is the parent's business, not PAPO's. " +
    "papoGTrlLoss: TRL v0.29.1 PAPOConfig defaults, γ 0.1, clamp [0, 0.2], η1 = η2 = 0.03, " +
    "mean over all B×T positions, entropies without gradient; TRL's beta defaults to 0, so " +
    "set beta = 0.04 to run this parent. Default form: official, because it is the authors' " +
    "reference implementation behind the paper's numbers; the TRL form is a port whose " +
    "differences are registered deviations.",
  papo: { official: papoGLoss, trl: papoGTrlLoss },
});
