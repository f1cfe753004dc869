/**
 * The configuration grid of the closed-form sweep: ratio × surrogate variant × aggregation × TIS ×
 * KL, plus the sg-frozen equivalent used for finite differences (finite differences see through
 * stop-gradients, so sg-carrying losses are checked through a detach-free function with the same
 * gradient at lp₀, as polgrad's gradcheck does).
 */
import type { Aggregation } from "../../src/aggregate/aggregation.js";
import type { KLEstimator, KLLossConfig } from "../../src/kl/estimator.js";
import type {
  ClipConfig,
  ISCorrectionConfig,
  PolicyLossConfig,
  RatioKind,
  SurrogateKind,
} from "../../src/losses/config.js";
import type { LogprobBatch } from "./arbitraries.js";

export const RATIOS: readonly RatioKind[] = ["token", "sequence", "sequence_token"];
export const AGGREGATIONS: readonly Aggregation[] = [
  "token_mean",
  "seq_mean_token_mean",
  "seq_mean_token_sum",
  "token_sum_norm",
];
export const KL_KINDS: readonly KLEstimator[] = ["k1", "k2", "k3", "abs"];

/** One surrogate with its clip settings. */
export interface SurrogateVariant {
  readonly name: string;
  readonly surrogate: SurrogateKind;
  readonly clip: ClipConfig | null;
}

/** pg_clip, pg_clip with ratioCap 3, pg, reinforce, cispo one-sided, cispo two-sided. */
export const SURROGATES: readonly SurrogateVariant[] = [
  { name: "pg_clip", surrogate: "pg_clip", clip: { epsLow: 0.2, epsHigh: 0.28 } },
  { name: "pg_clip+cap3", surrogate: "pg_clip", clip: { epsLow: 0.2, epsHigh: 0.28, ratioCap: 3 } },
  { name: "pg", surrogate: "pg", clip: null },
  { name: "reinforce", surrogate: "reinforce", clip: null },
  { name: "cispo-one-sided", surrogate: "cispo", clip: { epsLow: null, epsHigh: 0.28 } },
  { name: "cispo-two-sided", surrogate: "cispo", clip: { epsLow: 0.2, epsHigh: 0.28 } },
];

/** TIS: none, token cap 2, sequence cap 1.5. */
export const TIS_VARIANTS: readonly (ISCorrectionConfig | null)[] = [
  null,
  { cap: 2, level: "token" },
  { cap: 1.5, level: "sequence" },
];

/**
 * The generalised IS corrections (docs/derivations/losses.md#importance-sampling-correction), each
 * a framework's setting: OpenRLHF's two-sided token TIS [0.5, 5] and IcePop; TRL's default
 * sequence_mask (cap 3) and its two-sided sequence_truncate; a geometric-mean mask; verl-style
 * log clamps (small here, so that they bind on the kit's batches: rollout = old ± 2); untruncated
 * row weights. Not in {@link TIS_VARIANTS}: the frozen unfused oracle knows only polgrad 0.2.0's.
 */
export const IS_VARIANTS: readonly ISCorrectionConfig[] = [
  { level: "token", cap: 5, lower: 0.5 },
  { level: "token", cap: 5, lower: 0.5, mode: "mask" },
  { level: "token", cap: 1.5, mode: "mask" },
  { level: "sequence", cap: 3, mode: "mask" },
  { level: "sequence", cap: 3, lower: 0.5 },
  { level: "geometric", cap: 1.5, lower: 0.7, mode: "mask" },
  { level: "geometric", cap: null },
  { level: "token", cap: 2, logClamp: 0.3 },
  { level: "sequence", cap: null, logClamp: 0.5 },
  { level: "geometric", cap: 1.2, lower: 0.9, logClamp: 0.1 },
  // OpenRLHF's seq-mask-tis: the geometric mean filters rows, the token weights stay raw.
  { level: "token", cap: null, rowMask: { level: "geometric", lower: 0.8, cap: 1.25 } },
  { level: "sequence", cap: 3, mode: "mask", rowMask: { level: "sequence", cap: 2 } },
  // verl's rollout_is_batch_normalize: the weights rescaled to mean 1.
  { level: "token", cap: 2, logClamp: 20, normalize: true },
  { level: "sequence", cap: 2, logClamp: 20, normalize: true },
  { level: "token", cap: 1.5, lower: 0.5, mode: "mask", normalize: true },
];

/** KL: none, or each estimator with coefficient 0.07 (aggregation and normLen inherited). */
export const KL_VARIANTS: readonly (KLLossConfig | null)[] = [
  null,
  ...KL_KINDS.map((kind) => ({ kind, coef: 0.07 })),
];

/** The valid (ratio, surrogate variant) pairs: reinforce only with the token ratio. */
export const RATIO_SURROGATE_PAIRS: readonly (readonly [RatioKind, SurrogateVariant])[] =
  RATIOS.flatMap((r) =>
    SURROGATES.filter((s) => s.surrogate !== "reinforce" || r === "token").map(
      (s) => [r, s] as const,
    ),
  );

/** Build a config; token_sum_norm gets normLen = T + 1 (T the padded width). */
export function buildConfig(
  ratio: RatioKind,
  variant: SurrogateVariant,
  aggregation: Aggregation,
  T: number,
  {
    isCorrection = null,
    kl = null,
  }: { isCorrection?: ISCorrectionConfig | null; kl?: KLLossConfig | null } = {},
): PolicyLossConfig {
  return {
    ratio,
    surrogate: variant.surrogate,
    clip: variant.clip,
    aggregation,
    normLen: aggregation === "token_sum_norm" ? T + 1 : null,
    isCorrection,
    kl,
  };
}

/** A readable label of a TIS / KL variant. */
export function variantLabel(
  isCorrection: ISCorrectionConfig | null,
  kl: KLLossConfig | null,
): string {
  const tis = isCorrection === null ? "none" : `${isCorrection.level}(${isCorrection.cap})`;
  return `tis=${tis} kl=${kl === null ? "none" : kl.kind}`;
}

/** The inputs `policyLoss` takes, from a batch (ref/rollout passed only when the config needs them). */
export function policyInputs(
  config: PolicyLossConfig,
  batch: LogprobBatch,
): {
  logprobs: number[][];
  oldLogprobs: number[][];
  advantages: number[] | number[][];
  responseMask: boolean[][];
  refLogprobs: number[][] | null;
  rolloutLogprobs: number[][] | null;
} {
  return {
    logprobs: batch.logprobs,
    oldLogprobs: batch.oldLogprobs,
    advantages: batch.advantages,
    responseMask: batch.responseMask,
    refLogprobs: config.kl == null ? null : batch.refLogprobs,
    rolloutLogprobs: config.isCorrection == null ? null : batch.rolloutLogprobs,
  };
}

/**
 * The detach-free equivalent of `config` at lp₀ = batch.logprobs, whose gradient at lp₀ equals the
 * gradient of `config` there: cispo → reinforce (token ratio, no clip) on advantages sg[ŵ(lp₀)]·A;
 * sequence_token → token ratio against old' = lp₀ − log s_b(lp₀) (so e^{lp₀ − old'} = s_b), with
 * rollout shifted alike so the TIS weight exp(old − rollout) is unchanged;
 * anything else unchanged. `ratio` is the surrogate ratio at lp₀ (1 at padding).
 */
export function sgFrozen(
  config: PolicyLossConfig,
  batch: LogprobBatch,
  ratio: readonly (readonly number[])[],
): { config: PolicyLossConfig; batch: LogprobBatch } {
  const m = batch.responseMask;
  const A = (b: number, t: number): number =>
    Array.isArray(batch.advantages[b])
      ? (batch.advantages[b] as number[])[t]
      : (batch.advantages[b] as number);
  if (config.surrogate === "cispo") {
    const clip = config.clip as ClipConfig;
    const hi = 1 + (clip.epsHigh as number);
    const what = (r: number): number =>
      clip.epsLow == null ? Math.min(r, hi) : Math.min(Math.max(r, 1 - clip.epsLow), hi);
    return {
      config: { ...config, ratio: "token", surrogate: "reinforce", clip: null },
      batch: {
        ...batch,
        advantages: m.map((row, b) =>
          row.map((on, t) => (on ? what(ratio[b][t]) * A(b, t) : batch.junk)),
        ),
      },
    };
  }
  if (config.ratio === "sequence_token") {
    // old' = lp₀ − log s; rollout shifts with it so that the TIS weight exp(old − rollout) is kept.
    const shift = (b: number, t: number): number =>
      batch.logprobs[b][t] - Math.log(ratio[b][t]) - batch.oldLogprobs[b][t];
    const shifted = (x: number[][]) =>
      m.map((row, b) => row.map((on, t) => (on ? x[b][t] + shift(b, t) : batch.junk)));
    return {
      config: { ...config, ratio: "token" },
      batch: {
        ...batch,
        oldLogprobs: shifted(batch.oldLogprobs),
        rolloutLogprobs: shifted(batch.rolloutLogprobs),
      },
    };
  }
  return { config, batch };
}
