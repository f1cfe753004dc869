/**
 * Every recorded non-pattern metric name the name maps leave unmapped, with why (a category), per
 * framework. test/diagnostics/logs/nameMaps.test.ts checks this list against the recording both
 * ways, so a newly recorded name must be mapped or listed here.
 */
import type { MetricFramework } from "../../../src/diagnostics/logs/metricNames.js";

/** Why a recorded name carries no log quantity. */
export type UnmappedCategory =
  | "loss value"
  | "coefficient"
  | "learning rate"
  | "timing"
  | "throughput or memory"
  | "step counter"
  | "length statistic other than the mean"
  | "prompt statistic"
  | "reward detail"
  | "critic or value"
  | "eval"
  | "clip detail"
  | "rollout-correction detail"
  | "mismatch in another space"
  | "algorithm-specific"
  | "tools or multi-turn"
  | "rollout engine";

const group = (category: UnmappedCategory, names: string): [string, UnmappedCategory][] =>
  names
    .split(/\s+/)
    .filter((n) => n !== "")
    .map((n) => [n, category]);

/** Framework → unmapped name → category. */
export const UNMAPPED: Readonly<Record<MetricFramework, ReadonlyMap<string, UnmappedCategory>>> = {
  trl: new Map([
    ...group("loss value", "loss policy_loss aux_loss"),
    ...group("coefficient", "entropy_coef"),
    ...group("learning rate", "learning_rate"),
    ...group("timing", "step_time"),
    ...group("step counter", "epoch num_input_tokens_seen num_tokens"),
    ...group(
      "length statistic other than the mean",
      "completions/max_length completions/min_length completions/mean_terminated_length completions/max_terminated_length completions/min_terminated_length",
    ),
    // clip_ratio/low_min and high_max are the min/max over processes of the per-process fractions.
    ...group("clip detail", "clip_ratio/low_min clip_ratio/high_max"),
    // cispo_clip_ratio: CISPO's masked-token fraction; vespo/phi_seq_mean: VESPO's sequence weight.
    ...group("algorithm-specific", "cispo_clip_ratio vespo/phi_seq_mean"),
    ...group("tools or multi-turn", "tools/call_frequency tools/failure_frequency"),
  ]),
  verl: new Map([
    ...group("loss value", "actor/pg_loss actor/loss actor/entropy_loss critic/vf_loss"),
    // actor/pg_clipfrac_lower is the dual-clip fraction (ratio above clip_ratio_c with A < 0), not the low-side clip.
    ...group("clip detail", "actor/pg_clipfrac_lower"),
    ...group("coefficient", "actor/kl_coef actor/reward_kl_penalty_coeff"),
    ...group("learning rate", "actor/lr critic/lr"),
    ...group(
      "critic or value",
      "critic/advantages/max critic/advantages/mean critic/advantages/min critic/returns/max critic/returns/mean critic/returns/min critic/values/max critic/values/mean critic/values/min critic/vf_clipfrac critic/vf_explained_var critic/vpred_mean",
    ),
    // critic/rewards/* are after the in-reward KL penalty; score max/min are extremes.
    ...group(
      "reward detail",
      "critic/rewards/max critic/rewards/mean critic/rewards/min critic/score/max critic/score/min",
    ),
    ...group(
      "timing",
      "generation_timing/max generation_timing/min generation_timing/topk_ratio perf/time_per_step",
    ),
    ...group(
      "throughput or memory",
      "perf/cpu_memory_used_gb perf/max_memory_allocated_gb perf/max_memory_reserved_gb perf/mfu/actor perf/mfu/actor_infer perf/mfu/critic perf/throughput perf/total_num_tokens",
    ),
    ...group("step counter", "training/epoch training/global_step"),
    ...group(
      "prompt statistic",
      "prompt_length/clip_ratio prompt_length/max prompt_length/mean prompt_length/min",
    ),
    // response_length_non_aborted/*: the same statistics over non-aborted responses only.
    ...group(
      "length statistic other than the mean",
      "response_length/max response_length/min response/aborted_ratio response_length_non_aborted/clip_ratio response_length_non_aborted/max response_length_non_aborted/mean response_length_non_aborted/min",
    ),
    ...group(
      "tools or multi-turn",
      "num_turns/max num_turns/mean num_turns/min tool_call_counts/max tool_call_counts/mean tool_call_counts/min",
    ),
    ...group("eval", "val-aux/num_turns/max val-aux/num_turns/mean val-aux/num_turns/min"),
    ...group(
      "rollout engine",
      "rollout/moe/routed_expert_assignments rollout/moe/routed_experts_found rollout/spec_accept_length rollout/spec_accept_rate",
    ),
    ...group(
      "algorithm-specific",
      "variance_proxy/expected_a_squared variance_proxy/expected_w variance_proxy/proxy1_signal_strength variance_proxy/proxy2_total_power variance_proxy/proxy3_pure_noise",
    ),
    // training/rollout_probs_diff_*: |p_rollout − p_actor| in probability space; rollout_corr/kl, k3_kl,
    // *ppl*, chi2_*: sequence/perplexity or KL estimates, not a per-token mean |Δ log p|.
    ...group(
      "mismatch in another space",
      "training/rollout_probs_diff_max training/rollout_probs_diff_mean training/rollout_probs_diff_std training/rollout_probs_diff_valid training/rollout_actor_probs_pearson_corr rollout_corr/kl rollout_corr/k3_kl rollout_corr/chi2_seq rollout_corr/chi2_token rollout_corr/log_ppl_abs_diff rollout_corr/log_ppl_diff rollout_corr/log_ppl_diff_max rollout_corr/log_ppl_diff_min rollout_corr/ppl_ratio rollout_corr/rollout_log_ppl rollout_corr/rollout_ppl rollout_corr/training_log_ppl rollout_corr/training_ppl",
    ),
    ...group(
      "rollout-correction detail",
      "rollout_corr/rollout_is_batch_norm_factor rollout_corr/rollout_is_catastrophic_token_fraction rollout_corr/rollout_is_eff_sample_size rollout_corr/rollout_is_oob_ratio rollout_corr/rollout_is_ratio_fraction_high rollout_corr/rollout_is_ratio_fraction_low rollout_corr/rollout_is_seq_fraction_high rollout_corr/rollout_is_seq_fraction_low rollout_corr/rollout_is_seq_max rollout_corr/rollout_is_seq_max_deviation rollout_corr/rollout_is_seq_mean rollout_corr/rollout_is_seq_min rollout_corr/rollout_is_seq_std rollout_corr/rollout_is_std rollout_corr/rollout_is_veto_fraction rollout_corr/rollout_rs_eff_sample_size rollout_corr/rollout_rs_masked_fraction rollout_corr/rollout_rs_max rollout_corr/rollout_rs_mean rollout_corr/rollout_rs_min rollout_corr/rollout_rs_ratio_fraction_high rollout_corr/rollout_rs_ratio_fraction_low rollout_corr/rollout_rs_seq_fraction_high rollout_corr/rollout_rs_seq_fraction_low rollout_corr/rollout_rs_seq_masked_fraction rollout_corr/rollout_rs_seq_max rollout_corr/rollout_rs_seq_max_deviation rollout_corr/rollout_rs_seq_mean rollout_corr/rollout_rs_seq_min rollout_corr/rollout_rs_seq_std rollout_corr/rollout_rs_std",
    ),
  ]),
  openrlhf: new Map([
    ...group("loss value", "policy_loss critic_loss"),
    ...group("learning rate", "actor_lr critic_lr"),
    ...group("critic or value", "critic_grad_norm values return"),
    ...group(
      "timing",
      "timing/broadcast timing/generation timing/make_experience timing/ppo_train timing/step_total",
    ),
    ...group("step counter", "rollout/num_samples"),
    ...group("length statistic other than the mean", "total_length truncated"),
    // group_reward_std: per-sample std of its prompt group, averaged (not the batch std); score: the
    // raw reward-model score; dynamic_filtering_pass_rate: DAPO-style group filter.
    ...group("reward detail", "group_reward_std score dynamic_filtering_pass_rate"),
    ...group("eval", "eval_num_samples eval_response_length_mean eval_truncated_rate"),
    // vllm_kl: signed mean of log p_rollout − log p_old; logprobs_diff: signed mean actor − reference.
    ...group("mismatch in another space", "vllm_kl logprobs_diff"),
  ]),
};
