import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";
import { grpo } from "./grpo.js";

/**
 * GRPO plus the token-level truncated importance-sampling correction of verl PR #2953,
 * w_t = min(exp(old − rollout), 10), applied as data. Its loss equals grpo's with `isCorrection`
 * added; it needs rollout logprobs at call time.
 *
 * @derivation docs/derivations/variants.md#grpo_tis
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: grpo_tis's loss is grpo's plus a token-level cap-10 correction
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: grpo_tis notes record the shipped -1 cap and cite pr 2953
 * @see https://github.com/volcengine/verl/pull/2953
 * @since 0.1.0
 */
export const grpoTis: AlgorithmSpec = defineAlgorithm({
  name: "grpo_tis",
  loss: { ...grpo.loss, isCorrection: { cap: 10, level: "token" } },
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "loss",
  klReward: null,
  citation: {
    title: "verl PR #2953: add Rollout-Training Mismatch Fix - Truncated importance sampling",
    arxiv: null,
    url: "https://github.com/volcengine/verl/pull/2953",
    notes:
      "Merged 2025-08-26. In compute_policy_loss_vanilla the token-level weight " +
      "exp(old_log_prob − rollout_log_probs) is clamped at tis_imp_ratio_cap and multiplied into " +
      "pg_losses. GRPO base: arXiv 2402.03300 (the grpo entry).",
  },
  notes:
    "The grpo entry (seq_mean_token_mean, clip 0.2 / 0.2, as-loss k3 KL at 0.04) plus verl PR " +
    "#2953's truncated importance-sampling correction for the gap between rollout-engine and " +
    "trainer logprobs: w_t = min(exp(old_logprobs_t − rollout_logprobs_t), C), computed per token " +
    "and multiplied into the per-token loss as data (sg[w]). " +
    "Cap: the PR as merged ships tis_imp_ratio_cap: -1 (TIS off) and no tuned value; its usage " +
    "example turns TIS on with C = 10.0 (behav_imp_weight_cap=10.0), the cap shipped here, so " +
    "replace it to match your setup. verl later folded this into its rollout_is family " +
    "(precomputed rollout_is_weights, defaults rollout_is_threshold: 2.0, rollout_is: null, " +
    "rollout_is_batch_normalize: false). The PR links the motivating blog post 'Your Efficient RL " +
    "Framework Secretly Brings You Off-Policy RL Training'. " +
    "Needs rollout logprobs at call time; when they equal old_logprobs the correction is a no-op.",
});
