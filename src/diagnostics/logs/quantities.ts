/**
 * The quantities the detectors on logged scalars read (docs/diagnostics/logs.md#quantities): what
 * a framework's metric names are mapped to. A metric no map names is listed as unmapped, never
 * guessed. Pure: no `node:` import.
 */

/** One quantity a run's logged metrics can carry. */
export type LogQuantity =
  /** Mean token entropy of the policy (nats). */
  | "entropy"
  /** Fraction of tokens clipped on the low side (ratio below 1 − ε, A < 0). */
  | "clip_low"
  /** Fraction of tokens clipped on the high side (ratio above 1 + ε, A > 0). */
  | "clip_high"
  /** Fraction of tokens clipped on either side, or the fraction outside the band. */
  | "clip_total"
  /** KL between the policy and the reference policy. */
  | "kl_ref"
  /** KL between the policy and the old (behaviour) policy of the step. */
  | "kl_old"
  /** Mean importance ratio between the trainer's and the rollout engine's probabilities. */
  | "is_ratio_mean"
  /** Largest such ratio in the step. */
  | "is_ratio_max"
  /** Smallest such ratio in the step. */
  | "is_ratio_min"
  /** Mean |trainer − rollout| log-probability difference per token. */
  | "logp_diff_mean"
  /** Largest |trainer − rollout| log-probability difference per token. */
  | "logp_diff_max"
  /** Mean response length (tokens). */
  | "response_length"
  /** Fraction of responses cut at the length limit. */
  | "truncation_rate"
  /** Mean reward (or score) of the step's samples. */
  | "reward_mean"
  /** Standard deviation of the step's rewards. */
  | "reward_std"
  /** Fraction of prompt groups whose rewards all agree (zero std: no GRPO gradient). */
  | "zero_std_frac"
  /** Gradient norm before clipping. */
  | "grad_norm";

/** Every quantity, in the order reports list them. */
export const LOG_QUANTITIES: readonly LogQuantity[] = [
  "entropy",
  "clip_low",
  "clip_high",
  "clip_total",
  "kl_ref",
  "kl_old",
  "is_ratio_mean",
  "is_ratio_max",
  "is_ratio_min",
  "logp_diff_mean",
  "logp_diff_max",
  "response_length",
  "truncation_rate",
  "reward_mean",
  "reward_std",
  "zero_std_frac",
  "grad_norm",
];
