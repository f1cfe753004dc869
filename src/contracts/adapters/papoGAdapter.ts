/**
 * The built-in `papo-g-adapter` contract: the PAPO-G adapter authors' contract module, verbatim
 * (issue 10): the pinned v0.29.1 `papo_trainer.py`, the adapter version label, and the two parent-API
 * rules with the authors' failure messages. polgrad's stricter checks are listed apart, under
 * `stricter` (docs/conformance/adapters.md#the-built-in-papo-g-adapter).
 */
import type { AdapterContract } from "../adapterTypes.js";

const GRPO = "trl/trainer/grpo_trainer.py";
const PAPO = "trl/experimental/papo/papo_trainer.py";
const LOGPS = "GRPOTrainer._get_per_token_logps_and_entropies";

/** The PAPO-G adapter's contract as its authors wrote it, plus polgrad's labelled stricter checks. */
export const PAPO_G_ADAPTER: AdapterContract = Object.freeze<AdapterContract>({
  name: "papo-g-adapter",
  version: "trl_0.29.1_papo_g_on_trl_1.9.1_v1",
  framework: "trl",
  description:
    "TRL v0.29.1's PAPO-G trainer, vendored, run as a local adapter on a newer TRL (the authors' contract module)",
  methods: [
    {
      name: "GRPOTrainer._compute_loss",
      path: GRPO,
      exact: ["self", "model", "inputs"],
      requires: null,
      forbids: null,
      returns: null,
      messages: { exact: "unsupported GRPOTrainer._compute_loss signature: {signature}" },
    },
    {
      name: LOGPS,
      path: GRPO,
      exact: null,
      requires: [
        "self",
        "model",
        "input_ids",
        "attention_mask",
        "logits_to_keep",
        "compute_entropy",
        "compute_aux_loss",
        "pixel_values",
        "image_grid_thw",
        "spatial_shapes",
        "image_position_ids",
      ],
      forbids: null,
      returns: null,
      messages: { requires: "unsupported GRPOTrainer log-probability API; missing {missing}" },
    },
  ],
  files: [
    {
      path: PAPO,
      sha256: "9836f4505f7026c90cd5ca5b97151dd14c1bc27bcd2bc5a8fca6626c68279175",
      ref: "v0.29.1",
    },
  ],
  stricter: [
    { kind: "unpacking", method: LOGPS, caller: PAPO },
    { kind: "keywords", method: LOGPS, caller: PAPO },
  ],
});
