/**
 * The policy-loss configuration algebra: ratio kind × surrogate × clip × aggregation × optional
 * truncated-IS correction × optional as-loss KL (docs/derivations/losses.md). Configs are inert,
 * readonly data. Their fields are listed once, in losses/configFields.ts; `validatePolicyLossConfig`
 * (losses/configValidate.ts) checks them at call entry.
 */
import type { Aggregation } from "../aggregate/aggregation.js";
import type { EmptyRows } from "../aggregate/emptyRows.js";
import type { KLLossConfig, KLWeight } from "../kl/estimator.js";

/** How the importance ratio is formed (docs/derivations/losses.md#ratios). */
export const RatioKind = {
  TOKEN: "token",
  SEQUENCE: "sequence",
  SEQUENCE_TOKEN: "sequence_token",
} as const;
/** One of the ratio kind strings. */
export type RatioKind = (typeof RatioKind)[keyof typeof RatioKind];
/** Every ratio kind. */
export const RATIO_KINDS: readonly RatioKind[] = Object.values(RatioKind);

/** The per-token surrogate (docs/derivations/losses.md#surrogates). */
export const SurrogateKind = {
  PG_CLIP: "pg_clip",
  PG: "pg",
  REINFORCE: "reinforce",
  CISPO: "cispo",
  SAPO: "sapo",
  DRO: "dro",
  DPPO: "dppo",
  VESPO: "vespo",
  IPO: "ipo",
} as const;
/** One of the surrogate kind strings. */
export type SurrogateKind = (typeof SurrogateKind)[keyof typeof SurrogateKind];
/** Every surrogate kind. */
export const SURROGATE_KINDS: readonly SurrogateKind[] = Object.values(SurrogateKind);

/** Clip widths: band [1 − epsLow, 1 + epsHigh]; `ratioCap` c > 1 enables dual clip (pg_clip only). */
export interface ClipConfig {
  readonly epsLow: number | null;
  readonly epsHigh: number | null;
  readonly ratioCap?: number | null;
}

/**
 * Importance-sampling correction between the trainer's old policy and the rollout engine's
 * (docs/derivations/losses.md#importance-sampling-correction): a weight sg[w] on each response
 * token's objective, from log ρ = old − rollout at a level (`token`: per token; `sequence`: the
 * row's sum, ρ_b = exp(Σ_t log ρ_t), the product of the token weights; `geometric`: the row's
 * mean, exp(mean_t log ρ_t)), optionally clamped to [−logClamp, logClamp] before exp, then
 * constrained: `truncate` clamps ρ into [lower, cap]; `mask` keeps ρ inside [lower, cap] and
 * makes it 0 outside (IcePop; masked IS). A bound left null is absent. The weight never changes a
 * denominator: a masked token still counts in its aggregation (rejection sampling, which removes
 * tokens from the mask, is another thing).
 *
 * `{ level: "token", cap: c }` is polgrad 0.2.0's truncated IS, min(exp(old − rollout), c).
 */
export interface ISCorrectionConfig {
  /** Upper bound C_max (null: none). */
  readonly cap: number | null;
  /** `token`, `sequence` (the row product) or `geometric` (the row's geometric mean). */
  readonly level: ISLevel;
  /** Lower bound C_min (null or absent: none). */
  readonly lower?: number | null;
  /** `truncate` (default) clamps into [lower, cap]; `mask` sets the weight to 0 outside it. */
  readonly mode?: ISMode;
  /** |log ρ| at the chosen level is clamped to this before exp (verl: 20); null or absent: none. */
  readonly logClamp?: number | null;
  /**
   * A row filter on the same log ρ: a row whose weight at `rowMask.level` (the product or the
   * geometric mean, unclamped) lies outside [lower, cap] gets weight 0 on every token; the
   * others keep their weights (OpenRLHF's seq-mask-tis: the geometric mean filters, the token
   * weights stay untruncated). Null or absent: none.
   */
  readonly rowMask?: ISRowMask | null;
  /**
   * Rescale the weights to mean 1 over the batch (verl's `rollout_is_batch_normalize`): token
   * level over the response tokens, row levels over the rows with a response token; divided only
   * when the mean exceeds 1e-8 (verl's rule, as written). Absent or false: no rescaling.
   */
  readonly normalize?: boolean;
}

/** The row filter of an {@link ISCorrectionConfig}: at least one bound. */
export interface ISRowMask {
  readonly level: "sequence" | "geometric";
  readonly lower?: number | null;
  readonly cap: number | null;
}

/** The level an importance weight is formed at. */
export type ISLevel = "token" | "sequence" | "geometric";
/** Every IS level. */
export const IS_LEVELS: readonly ISLevel[] = ["token", "sequence", "geometric"];
/** How the bounds constrain an importance weight. */
export type ISMode = "truncate" | "mask";
/** Every IS mode. */
export const IS_MODES: readonly ISMode[] = ["truncate", "mask"];

/**
 * An IS correction with every field resolved, for the kernel: absent bounds become the bounds
 * that constrain nothing (lower 0, cap and logClamp +∞), so min(max(ρ, lower), cap) is bitwise
 * min(ρ, cap) and clamping a finite log ρ to ±∞ leaves it as it is. @internal
 */
export interface ResolvedISCorrection {
  readonly level: ISLevel;
  readonly mode: ISMode;
  readonly lower: number;
  readonly cap: number;
  readonly logClamp: number;
  /** Rescale to mean 1 (see {@link ISCorrectionConfig.normalize}). */
  readonly normalize: boolean;
  /** What every weight is divided by: 1, or the batch mean a call computed for `normalize`. */
  readonly div: number;
  /** The row filter with absent bounds resolved (lower 0, cap +∞), or null. */
  readonly rowMask: {
    readonly level: "sequence" | "geometric";
    readonly lower: number;
    readonly cap: number;
  } | null;
}

/**
 * A clamp of the policy's log-ratio z = lp − old (docs/derivations/losses.md#ratio-clamps):
 * `token` clamps each z_t before exp (token ratio) or before the row mean (sequence kinds: GMPO's
 * log-space clip); `row` clamps the row's mean log-ratio z_b before exp (sequence kinds: verl's
 * GSPO-token `max=10`). The gradient passes where the clamp does not bind (torch's inclusive
 * convention). `signAware` (token level) is GMPO's sign-aware clip as verl computes it:
 * sgn(A)·min(sgn(A)·z, sgn(A)·clamp(z)), i.e. min(z, upper) for A > 0, max(z, lower) for A < 0,
 * and 0 (no gradient) for A = 0.
 */
export interface RatioClampConfig {
  readonly level: "token" | "row";
  /** z ≥ lower (null or absent: none). */
  readonly lower?: number | null;
  /** z ≤ upper (null or absent: none). */
  readonly upper?: number | null;
  /** GMPO's sign-aware clip (token level only). @defaultValue false */
  readonly signAware?: boolean;
}

/** VESPO's gamma weights (docs/derivations/losses.md#vespo): k and λ by the advantage's sign. */
export interface VespoConfig {
  /** k for A ≥ 0. @defaultValue 2 (TRL) */
  readonly kPos?: number;
  /** λ for A ≥ 0. @defaultValue 3 (TRL) */
  readonly lambdaPos?: number;
  /** k for A < 0. @defaultValue 3 (TRL) */
  readonly kNeg?: number;
  /** λ for A < 0. @defaultValue 2 (TRL) */
  readonly lambdaNeg?: number;
}

/** The off-policy sequence mask (docs/derivations/losses.md#off-policy-sequence-mask). */
export interface OffPolicyMaskConfig {
  /** δ: rows whose mean sampling − lp exceeds it drop their negative-advantage tokens. */
  readonly threshold: number;
  /** Which logprobs sampled the tokens: `old` (default) or `rollout`. */
  readonly sampling?: "old" | "rollout";
}

/** SAPO's gate temperatures (docs/derivations/losses.md#sapo). */
export interface SapoConfig {
  /** τ for A > 0. @defaultValue 1 (verl, TRL) */
  readonly tauPos?: number;
  /** τ for A ≤ 0. @defaultValue 1.05 (verl, TRL) */
  readonly tauNeg?: number;
}

/** CISPO with an absolute cap (TRL's `epsilon_high` as ε_max; docs/derivations/losses.md#surrogates). */
export interface CispoConfig {
  /** ŵ = min(r, cap), cap > 0. */
  readonly cap: number;
}

/** DRO's quadratic penalty (docs/derivations/losses.md#dro). */
export interface DroConfig {
  /** β > 0 of −(lp·A − ½β·(lp − old)²); required (verl raises without it). */
  readonly beta: number;
}

/** IPO's absolute-probability trust region (docs/derivations/losses.md#ipo). */
export interface IpoConfig {
  /** ε ≥ 0: a token whose probability moved by more than ε, |e^lp − e^old| > ε, is masked (prime-rl: 0.1). */
  readonly threshold: number;
}

/** DPPO's binary-divergence trust region (docs/derivations/losses.md#dppo). */
export interface DppoConfig {
  /** `tv`: |p − p_old| bounds; `kl`: the binary KL of the sampled token's probability. */
  readonly divergence: "tv" | "kl";
  /** The divergence bound for A ≤ 0 (verl: clip_ratio_low). */
  readonly low: number;
  /** The divergence bound for A > 0 (verl: clip_ratio_high). */
  readonly high: number;
  /** The detached ratio is truncated at this (verl: clip_ratio_c, 3 as ActorConfig ships it); null or absent: none. */
  readonly truncation?: number | null;
}

/**
 * The entropy bonus (docs/derivations/losses.md#entropy-bonus): the loss gains −coef·Σ w^H·H over
 * the response tokens the top-entropy mask keeps (all of them without one), w^H the weights of
 * `aggregation` over those tokens. H is an input (per-token entropies of the policy, computed by
 * the caller from its logits), so the bonus has no gradient in logprobs; its gradient in the
 * entropies is returned (`gradEntropies`).
 */
export interface EntropyBonusConfig {
  /** c, finite: verl `entropy_coeff`, OpenRLHF `--entropy_loss_coef`, TRL `entropy_coef`. */
  readonly coef: number;
  /**
   * The bonus's aggregation (default `token_mean`: TRL's mean per-token entropy and OpenRLHF's
   * token-level mean; verl aggregates it with the loss's `loss_agg_mode`).
   */
  readonly aggregation?: Aggregation | null;
  /** normLen of a `seq_mean_token_sum_norm` bonus (default: the loss's). */
  readonly normLen?: number | null;
}

/** A complete policy-loss configuration (polgrad's PolicyLossConfig). */
export interface PolicyLossConfig {
  readonly ratio: RatioKind;
  readonly surrogate: SurrogateKind;
  readonly clip: ClipConfig | null;
  readonly aggregation: Aggregation;
  readonly normLen?: number | null;
  readonly isCorrection?: ISCorrectionConfig | null;
  readonly kl?: KLLossConfig | null;
  /**
   * Rows with no response token (docs/derivations/aggregation.md#rows-with-no-response-token):
   * `reject` (default: a MaskError naming them, polgrad 0.2.0's rule), `count` (the row counts in
   * the row means' B and contributes 0: verl, TRL and OpenRLHF), or `drop` (the row is left out
   * of B too).
   */
  readonly emptyRows?: EmptyRows;
  /**
   * Rejection sampling (docs/derivations/losses.md#rejection-sampling): response tokens or whole
   * rows whose divergence between the old policy and the rollout engine breaks a rule are taken
   * out of the mask before anything is aggregated (verl's `rollout_rs`): they leave every
   * denominator and get the padding contract. Every rule must pass (logical AND). A row emptied
   * this way is an empty row (`emptyRows`). Null or absent: none.
   */
  readonly rejection?: readonly RejectionRule[] | null;
  /**
   * The off-policy sequence mask (DeepSeek-V3.2's OPSM, TRL's `off_policy_mask_threshold`): a token
   * with A < 0 in a row whose mean of sampling − lp (lp as data) exceeds `threshold` gets weight 0
   * (sg; the row still counts in every denominator). `sampling` is the old stream or the rollout
   * stream (TRL: vLLM's logprobs when it has them, else the old ones). Null or absent: none.
   */
  readonly offPolicyMask?: OffPolicyMaskConfig | null;
  /** A clamp of the policy log-ratio (verl's ±20 before exp, GMPO's log-space clip); null or absent: none. */
  readonly ratioClamp?: RatioClampConfig | null;
  /** CISPO's absolute weight cap min(r, cap) (TRL's ε_max), in place of clip (surrogate `cispo` only). */
  readonly cispo?: CispoConfig | null;
  /** SAPO's temperatures (surrogate `sapo` only; absent: τ+ = 1, τ− = 1.05). */
  readonly sapo?: SapoConfig | null;
  /** VESPO's gamma weights (surrogate `vespo` only; absent: TRL's k±, λ± = 2, 3 / 3, 2). */
  readonly vespo?: VespoConfig | null;
  /** DRO's β (surrogate `dro`, required). */
  readonly dro?: DroConfig | null;
  /** DPPO's trust region (surrogate `dppo`, required). */
  readonly dppo?: DppoConfig | null;
  /** IPO's trust region (surrogate `ipo`; absent: prime-rl's threshold 0.1). */
  readonly ipo?: IpoConfig | null;
  /**
   * ρ ∈ [0, 1] of the top-entropy-quantile token mask (Wang et al. 2025, "Beyond the 80/20
   * rule"; TRL's `top_entropy_quantile`): a response token keeps its policy term iff its entropy
   * is at least the (1 − ρ) quantile (linear interpolation) of the batch's response-token
   * entropies; the others get weight 0 (sg; they stay in every denominator, and the KL term is
   * not masked). Needs `entropies`. Null or absent: none.
   */
  readonly topEntropyQuantile?: number | null;
  /** The entropy bonus (needs `entropies`); null or absent: none. */
  readonly entropyBonus?: EntropyBonusConfig | null;
  /**
   * ε ≥ 0 added to each row's length in seq_mean_token_mean (the loss's and the KL term's):
   * Σ_t m·ℓ / (L_b + ε). verl's and OpenRLHF's row divisor is L_b + 1e-8, which equals L_b under
   * the bool/long masks their engines pass and survives only under a float64 mask
   * (docs/derivations/aggregation.md#row-epsilon). Null or absent: 0.
   */
  readonly rowEpsilon?: number | null;
}

/**
 * One rejection rule on lr = clamp(old − rollout, ±logClamp): the statistic of `estimator` (k1 = −lr,
 * k2 = lr²/2, k3 = e^lr − 1 − lr) per token, or its sum, mean or max over the row. k1 keeps
 * ln(lower) ≤ statistic ≤ ln(upper) (ratio bounds, compared in log space, both required); k2 and
 * k3 keep statistic ≤ upper. Bounds inclusive.
 */
export interface RejectionRule {
  readonly statistic: "token" | "seq_sum" | "seq_mean" | "seq_max";
  readonly estimator: "k1" | "k2" | "k3";
  readonly lower?: number | null;
  readonly upper: number;
  /** |lr| clamp before the statistic (verl: 20); null or absent: none. */
  readonly logClamp?: number | null;
}

export { EMPTY_ROWS, type EmptyRows } from "../aggregate/emptyRows.js";

/** A config after validation: every optional field resolved. @internal */
export interface ResolvedPolicyLossConfig {
  readonly ratio: RatioKind;
  readonly surrogate: SurrogateKind;
  readonly lo: number;
  readonly hi: number;
  readonly cap: number | null;
  readonly oneSided: boolean;
  readonly aggregation: Aggregation;
  readonly normLen: number;
  readonly isCorrection: ResolvedISCorrection | null;
  readonly emptyRows: EmptyRows;
  /** The rejection rules, validated (lower, logClamp resolved: 0 and +∞ when absent), or null. */
  readonly rejection:
    | readonly {
        readonly statistic: RejectionRule["statistic"];
        readonly estimator: RejectionRule["estimator"];
        readonly lower: number;
        readonly upper: number;
        readonly logClamp: number;
      }[]
    | null;
  /** VESPO's constants, resolved (λ floored at 1e-4 as TRL does), or null. */
  readonly vespo: {
    readonly kPos: number;
    readonly lambdaPos: number;
    readonly kNeg: number;
    readonly lambdaNeg: number;
  } | null;
  /** The off-policy sequence mask, resolved, or null. */
  readonly offPolicyMask: {
    readonly threshold: number;
    readonly sampling: "old" | "rollout";
  } | null;
  /** The ratio clamp with absent bounds resolved (−∞, +∞), or null. */
  readonly ratioClamp: {
    readonly level: "token" | "row";
    readonly lower: number;
    readonly upper: number;
    readonly signAware: boolean;
  } | null;
  /** The row-length ε of seq_mean_token_mean (0: none). */
  readonly rowEpsilon: number;
  /** ρ of the top-entropy-quantile mask, or null. */
  readonly topEntropyQuantile: number | null;
  /** The entropy bonus, resolved (aggregation and normLen inherited when absent), or null. */
  readonly entropyBonus: {
    readonly coef: number;
    readonly aggregation: Aggregation;
    readonly normLen: number;
  } | null;
  /** The new surrogates' constants (NaN where unused, so every config has one shape). */
  readonly tauPos: number;
  readonly tauNeg: number;
  readonly beta: number;
  readonly dppo: {
    readonly divergence: "tv" | "kl";
    readonly low: number;
    readonly high: number;
    readonly truncation: number;
  } | null;
  /** IPO's ε (NaN unless the surrogate is `ipo`). */
  readonly ipoThreshold: number;
  readonly kl: {
    kind: KLLossConfig["kind"];
    coef: number;
    aggregation: Aggregation;
    normLen: number;
    /** |δ| clamp (+∞: none). */
    clampDelta: number;
    /** |k| clamp (+∞: none). */
    clampValue: number;
    /** Straight-through gradient (−δ, unclamped). */
    straight: boolean;
    /** The ratio weight of each term ("none" without one). */
    weight: KLWeight | "none";
  } | null;
}
