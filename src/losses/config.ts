/**
 * The policy-loss configuration algebra: ratio kind × surrogate × clip × aggregation × optional
 * truncated-IS correction × optional as-loss KL (docs/derivations/losses.md). Configs are inert,
 * readonly data; `validatePolicyLossConfig` checks them at call entry, in polgrad's rule order.
 */
import { Aggregation, checkAggregation } from "../aggregate/aggregation.js";
import { checkNormLen } from "../aggregate/effectiveTokenWeights.js";
import { EMPTY_ROWS, type EmptyRows } from "../aggregate/emptyRows.js";
import { fmtValue, mustBe } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { ConfigError } from "../errors.js";
import {
  checkKLEstimator,
  checkKlClamp,
  KL_GRADIENTS,
  KL_WEIGHTS,
  type KLLossConfig,
  type KLWeight,
} from "../kl/estimator.js";

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

function positiveFinite(fn: string, arg: string, x: unknown): number {
  if (typeof x !== "number" || !Number.isFinite(x) || x <= 0) {
    throw new ConfigError(fn, arg, mustBe(fn, arg, "a positive finite number", fmtValue(x)));
  }
  return x;
}

/**
 * Validate an IS correction, in field order (cap, level, lower, mode, logClamp), and resolve it.
 * Every bound is a positive finite number or null; lower ≤ cap when both are set.
 */
function resolveISCorrection(fn: string, c: ISCorrectionConfig): ResolvedISCorrection {
  const arg = "config.isCorrection";
  if (typeof c !== "object" || c === null) {
    throw new ConfigError(
      fn,
      arg,
      mustBe(fn, arg, "an ISCorrectionConfig object or null", fmtValue(c)),
    );
  }
  // cap is required, as in polgrad 0.2.0; null (given) means no upper bound.
  if (c.cap === undefined) {
    throw new ConfigError(
      fn,
      `${arg}.cap`,
      mustBe(fn, `${arg}.cap`, "a positive finite number, or null for no upper bound", "undefined"),
    );
  }
  const cap = c.cap === null ? null : positiveFinite(fn, `${arg}.cap`, c.cap);
  const level = oneOf(fn, `${arg}.level`, c.level, IS_LEVELS);
  const lower = isSet(c.lower) ? positiveFinite(fn, `${arg}.lower`, c.lower) : null;
  const mode = isSet(c.mode) ? oneOf(fn, `${arg}.mode`, c.mode, IS_MODES) : "truncate";
  const logClamp = isSet(c.logClamp) ? positiveFinite(fn, `${arg}.logClamp`, c.logClamp) : null;
  lowerAtMostCap(fn, arg, lower, cap);
  return {
    level,
    mode,
    lower: lower ?? 0,
    cap: cap ?? Number.POSITIVE_INFINITY,
    logClamp: logClamp ?? Number.POSITIVE_INFINITY,
    normalize: isSet(c.normalize) ? checkBoolean(fn, `${arg}.normalize`, c.normalize) : false,
    div: 1,
    rowMask: isSet(c.rowMask) ? resolveRowMask(fn, c.rowMask as ISRowMask) : null,
  };
}

/** A lower bound at most its upper one (named `upperName`: `cap`, or a rejection rule's `upper`). */
function lowerAtMostCap(
  fn: string,
  arg: string,
  lower: number | null,
  cap: number | null,
  upperName = "cap",
): void {
  if (lower !== null && cap !== null && lower > cap) {
    throw new ConfigError(
      fn,
      `${arg}.lower`,
      mustBe(fn, `${arg}.lower`, `at most ${arg}.${upperName} = ${cap}`, fmtValue(lower)),
    );
  }
}

/** The row filter: level sequence or geometric, bounds as the weight's, at least one of them. */
function resolveRowMask(fn: string, r: ISRowMask): NonNullable<ResolvedISCorrection["rowMask"]> {
  const arg = "config.isCorrection.rowMask";
  if (typeof r !== "object" || r === null) {
    throw new ConfigError(fn, arg, mustBe(fn, arg, "an ISRowMask object or null", fmtValue(r)));
  }
  const level = oneOf(fn, `${arg}.level`, r.level, ["sequence", "geometric"] as const);
  const cap = isSet(r.cap) ? positiveFinite(fn, `${arg}.cap`, r.cap) : null;
  const lower = isSet(r.lower) ? positiveFinite(fn, `${arg}.lower`, r.lower) : null;
  if (cap === null && lower === null) {
    throw new ConfigError(
      fn,
      `${arg}.cap`,
      mustBe(
        fn,
        `${arg}.cap`,
        "set, or lower set (a row mask with neither bound masks nothing)",
        "null",
      ),
    );
  }
  lowerAtMostCap(fn, arg, lower, cap);
  return { level, lower: lower ?? 0, cap: cap ?? Number.POSITIVE_INFINITY };
}

function resolveRejection(fn: string, rules: unknown): ResolvedPolicyLossConfig["rejection"] {
  const arg = "config.rejection";
  if (!Array.isArray(rules) || rules.length === 0) {
    throw new ConfigError(
      fn,
      arg,
      mustBe(fn, arg, "a non-empty list of RejectionRule or null", fmtValue(rules)),
    );
  }
  return rules.map((r: RejectionRule, j) => {
    const at = `${arg}[${j}]`;
    if (typeof r !== "object" || r === null) {
      throw new ConfigError(fn, at, mustBe(fn, at, "a RejectionRule object", fmtValue(r)));
    }
    const statistic = oneOf(fn, `${at}.statistic`, r.statistic, [
      "token",
      "seq_sum",
      "seq_mean",
      "seq_max",
    ] as const);
    const estimator = oneOf(fn, `${at}.estimator`, r.estimator, ["k1", "k2", "k3"] as const);
    const upper = positiveFinite(fn, `${at}.upper`, r.upper);
    let lower = 0;
    if (estimator === "k1") {
      // k1 compares in log space against ratio bounds: both needed (verl's "lower_upper").
      lower = positiveFinite(fn, `${at}.lower`, r.lower);
      lowerAtMostCap(fn, at, lower, upper, "upper");
    } else if (isSet(r.lower)) {
      throw new ConfigError(
        fn,
        `${at}.lower`,
        mustBe(fn, `${at}.lower`, `null for ${estimator} (an upper bound only)`, fmtValue(r.lower)),
      );
    }
    if (statistic === "seq_max" && estimator === "k1") {
      throw new ConfigError(
        fn,
        `${at}.estimator`,
        mustBe(fn, `${at}.estimator`, "k2 or k3 with seq_max", "k1"),
      );
    }
    const logClamp = isSet(r.logClamp)
      ? positiveFinite(fn, `${at}.logClamp`, r.logClamp)
      : Number.POSITIVE_INFINITY;
    return { statistic, estimator, lower, upper, logClamp };
  });
}

function checkBoolean(fn: string, arg: string, x: unknown): boolean {
  if (typeof x !== "boolean")
    throw new ConfigError(fn, arg, mustBe(fn, arg, "true or false", fmtValue(x)));
  return x;
}

function isSet(x: unknown): boolean {
  return x !== null && x !== undefined;
}

/**
 * Validate a policy-loss config and resolve its defaults, in polgrad's order: pg_clip needs both
 * eps (ratioCap finite > 1 if set); cispo needs epsHigh and no ratioCap; pg and reinforce need
 * clip = null; reinforce needs ratio = token; every eps finite > 0 and epsLow < 1 (a stricter rule
 * than polgrad's: 1 − epsLow ≤ 0 is a non-positive lower bound); IS cap finite > 0 and level
 * token|sequence; then aggregation/normLen and the KL term (which inherits aggregation/normLen).
 * @internal
 */
export function validatePolicyLossConfig(
  fn: string,
  config: PolicyLossConfig,
): ResolvedPolicyLossConfig {
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new ConfigError(
      fn,
      "config",
      mustBe(fn, "config", "a PolicyLossConfig object", fmtValue(config)),
    );
  }
  const ratio = oneOf(fn, "config.ratio", config.ratio, RATIO_KINDS);
  const surrogate = oneOf(fn, "config.surrogate", config.surrogate, SURROGATE_KINDS);
  const clip = config.clip ?? null;
  let lo = 0;
  let hi = 0;
  let cap: number | null = null;
  let oneSided = false;
  if (surrogate === "pg_clip") {
    if (clip === null || !isSet(clip.epsLow) || !isSet(clip.epsHigh)) {
      throw new ConfigError(
        fn,
        "config.clip",
        mustBe(
          fn,
          "config.clip",
          'a ClipConfig with epsLow and epsHigh set when surrogate is "pg_clip"',
          fmtValue(clip),
        ),
      );
    }
    if (isSet(clip.ratioCap)) {
      const c = clip.ratioCap;
      if (typeof c !== "number" || !Number.isFinite(c) || c <= 1) {
        throw new ConfigError(
          fn,
          "config.clip.ratioCap",
          mustBe(
            fn,
            "config.clip.ratioCap",
            "a finite number > 1 (dual clip) or null",
            fmtValue(c),
          ),
        );
      }
      cap = c;
    }
  } else if (surrogate === "cispo" && isSet(config.cispo)) {
    // TRL's loss_type="cispo": the weight is min(r, ε_max) with ε_max absolute (its default,
    // epsilon_high = epsilon = 0.2, caps every weight at 0.2): not 1 + ε of a clip band.
    if (clip !== null) {
      throw new ConfigError(
        fn,
        "config.clip",
        mustBe(fn, "config.clip", "null when config.cispo sets the absolute cap", fmtValue(clip)),
      );
    }
    const c = config.cispo as CispoConfig;
    if (typeof c !== "object" || c === null) {
      throw new ConfigError(
        fn,
        "config.cispo",
        mustBe(fn, "config.cispo", "a CispoConfig {cap} or null", fmtValue(c)),
      );
    }
    hi = positiveFinite(fn, "config.cispo.cap", c.cap);
    oneSided = true;
  } else if (surrogate === "cispo") {
    if (clip === null || !isSet(clip.epsHigh)) {
      throw new ConfigError(
        fn,
        "config.clip",
        mustBe(
          fn,
          "config.clip",
          'a ClipConfig with epsHigh set when surrogate is "cispo"',
          fmtValue(clip),
        ),
      );
    }
    if (isSet(clip.ratioCap)) {
      throw new ConfigError(
        fn,
        "config.clip.ratioCap",
        mustBe(
          fn,
          "config.clip.ratioCap",
          'null when surrogate is "cispo" (CISPO has no dual clip)',
          fmtValue(clip.ratioCap),
        ),
      );
    }
    oneSided = !isSet(clip.epsLow);
  } else if (clip !== null) {
    throw new ConfigError(
      fn,
      "config.clip",
      mustBe(fn, "config.clip", `null when surrogate is "${surrogate}"`, fmtValue(clip)),
    );
  }
  if (
    (surrogate === "reinforce" ||
      surrogate === "dro" ||
      surrogate === "dppo" ||
      surrogate === "ipo" ||
      surrogate === "vespo") &&
    ratio !== "token"
  ) {
    const why =
      surrogate === "dppo"
        ? "DPPO's detached ratio and probabilities are per token"
        : surrogate === "ipo"
          ? "IPO's probabilities are per token"
          : "the ratio is unused";
    throw new ConfigError(
      fn,
      "config.ratio",
      mustBe(
        fn,
        "config.ratio",
        `"token" when surrogate is "${surrogate}" (${why})`,
        fmtValue(ratio),
      ),
    );
  }
  const params = resolveSurrogateParams(fn, surrogate, config);
  if (clip !== null) {
    if (isSet(clip.epsLow)) {
      const e = positiveFinite(fn, "config.clip.epsLow", clip.epsLow);
      // 1 − ε_lo ≤ 0 would make the lower clip bound non-positive: a ratio is always > 0, so the
      // band's lower side could never bind and the config silently means something else.
      if (e >= 1) {
        throw new ConfigError(
          fn,
          "config.clip.epsLow",
          mustBe(fn, "config.clip.epsLow", "in (0, 1) (lower bound 1 − epsLow > 0)", fmtValue(e)),
        );
      }
      lo = 1 - e;
    }
    if (isSet(clip.epsHigh)) hi = 1 + positiveFinite(fn, "config.clip.epsHigh", clip.epsHigh);
  }
  const isCorrection = isSet(config.isCorrection)
    ? resolveISCorrection(fn, config.isCorrection as ISCorrectionConfig)
    : null;
  const aggregation = checkAggregation(fn, "config.aggregation", config.aggregation);
  const normLen = checkNormLen(fn, aggregation, config.normLen, "config.normLen");
  let kl: ResolvedPolicyLossConfig["kl"] = null;
  if (isSet(config.kl)) {
    const k = config.kl as KLLossConfig;
    const kind = checkKLEstimator(fn, "config.kl.kind", k.kind);
    if (typeof k.coef !== "number" || !Number.isFinite(k.coef)) {
      throw new ConfigError(
        fn,
        "config.kl.coef",
        mustBe(fn, "config.kl.coef", "a finite number", fmtValue(k.coef)),
      );
    }
    const klAgg = isSet(k.aggregation)
      ? checkAggregation(fn, "config.kl.aggregation", k.aggregation)
      : aggregation;
    const klNormRaw = isSet(k.normLen) ? k.normLen : config.normLen;
    const normLenKl = checkNormLen(fn, klAgg, klNormRaw, "config.kl.normLen");
    const clamp = isSet(k.clamp) ? checkKlClamp(fn, "config.kl.clamp", k.clamp) : null;
    const clampDelta = clamp?.delta ?? Number.POSITIVE_INFINITY;
    const clampValue = clamp?.value ?? Number.POSITIVE_INFINITY;
    const gradient = isSet(k.gradient)
      ? oneOf(fn, "config.kl.gradient", k.gradient, KL_GRADIENTS)
      : "pathwise";
    const weight = isSet(k.weight) ? oneOf(fn, "config.kl.weight", k.weight, KL_WEIGHTS) : "none";
    kl = {
      kind,
      coef: k.coef,
      aggregation: klAgg,
      normLen: normLenKl,
      clampDelta,
      clampValue,
      straight: gradient === "straight_through",
      weight,
    };
  }
  const emptyRows = isSet(config.emptyRows)
    ? oneOf(fn, "config.emptyRows", config.emptyRows, EMPTY_ROWS)
    : "reject";
  const rejection = isSet(config.rejection) ? resolveRejection(fn, config.rejection) : null;
  const ratioClamp = isSet(config.ratioClamp)
    ? resolveRatioClamp(fn, config.ratioClamp as RatioClampConfig, ratio)
    : null;
  if (ratioClamp !== null && kl !== null && kl.weight !== "none") {
    throw new ConfigError(
      fn,
      "config.ratioClamp",
      mustBe(
        fn,
        "config.ratioClamp",
        "null when config.kl.weight is set (the KL weight's ratio is the unclamped exp(lp − old))",
        fmtValue(config.ratioClamp),
      ),
    );
  }
  if (surrogate === "vespo" && isCorrection !== null && isCorrection.level !== "token") {
    throw new ConfigError(
      fn,
      "config.isCorrection.level",
      mustBe(
        fn,
        "config.isCorrection.level",
        '"token" when surrogate is "vespo" (TRL folds its per-token IS ratio into the gamma weight)',
        fmtValue(isCorrection.level),
      ),
    );
  }
  let offPolicyMask: ResolvedPolicyLossConfig["offPolicyMask"] = null;
  if (isSet(config.offPolicyMask)) {
    const o = config.offPolicyMask as OffPolicyMaskConfig;
    if (typeof o !== "object") {
      throw new ConfigError(
        fn,
        "config.offPolicyMask",
        mustBe(
          fn,
          "config.offPolicyMask",
          "an OffPolicyMaskConfig {threshold, sampling} or null",
          fmtValue(o),
        ),
      );
    }
    if (typeof o.threshold !== "number" || !Number.isFinite(o.threshold)) {
      throw new ConfigError(
        fn,
        "config.offPolicyMask.threshold",
        mustBe(fn, "config.offPolicyMask.threshold", "a finite number", fmtValue(o.threshold)),
      );
    }
    offPolicyMask = {
      threshold: o.threshold,
      sampling: isSet(o.sampling)
        ? oneOf(fn, "config.offPolicyMask.sampling", o.sampling, ["old", "rollout"] as const)
        : "old",
    };
  }
  let rowEpsilon = 0;
  if (isSet(config.rowEpsilon)) {
    const e = config.rowEpsilon;
    if (typeof e !== "number" || !Number.isFinite(e) || e < 0) {
      throw new ConfigError(
        fn,
        "config.rowEpsilon",
        mustBe(fn, "config.rowEpsilon", "a finite number ≥ 0", fmtValue(e)),
      );
    }
    if (
      e !== 0 &&
      aggregation !== Aggregation.SEQ_MEAN_TOKEN_MEAN &&
      kl?.aggregation !== Aggregation.SEQ_MEAN_TOKEN_MEAN
    ) {
      throw new ConfigError(
        fn,
        "config.rowEpsilon",
        mustBe(
          fn,
          "config.rowEpsilon",
          "0 or null unless the loss or its KL term aggregates seq_mean_token_mean (the only mode with a row divisor)",
          fmtValue(e),
        ),
      );
    }
    rowEpsilon = e;
  }
  let topEntropyQuantile: number | null = null;
  if (isSet(config.topEntropyQuantile)) {
    const q = config.topEntropyQuantile;
    if (typeof q !== "number" || !(q >= 0 && q <= 1)) {
      throw new ConfigError(
        fn,
        "config.topEntropyQuantile",
        mustBe(fn, "config.topEntropyQuantile", "a number in [0, 1]", fmtValue(q)),
      );
    }
    topEntropyQuantile = q;
  }
  let entropyBonus: ResolvedPolicyLossConfig["entropyBonus"] = null;
  if (isSet(config.entropyBonus)) {
    const e = config.entropyBonus as EntropyBonusConfig;
    if (typeof e !== "object" || Array.isArray(e)) {
      throw new ConfigError(
        fn,
        "config.entropyBonus",
        mustBe(
          fn,
          "config.entropyBonus",
          "an EntropyBonusConfig {coef, aggregation, normLen} or null",
          fmtValue(e),
        ),
      );
    }
    if (typeof e.coef !== "number" || !Number.isFinite(e.coef)) {
      throw new ConfigError(
        fn,
        "config.entropyBonus.coef",
        mustBe(fn, "config.entropyBonus.coef", "a finite number", fmtValue(e.coef)),
      );
    }
    const agg = isSet(e.aggregation)
      ? checkAggregation(fn, "config.entropyBonus.aggregation", e.aggregation)
      : Aggregation.TOKEN_MEAN;
    const nl = checkNormLen(
      fn,
      agg,
      isSet(e.normLen) ? e.normLen : config.normLen,
      "config.entropyBonus.normLen",
    );
    entropyBonus = { coef: e.coef, aggregation: agg, normLen: nl };
  }
  return {
    ratio,
    surrogate,
    lo,
    hi,
    cap,
    oneSided,
    aggregation,
    normLen,
    isCorrection,
    emptyRows,
    rejection,
    offPolicyMask,
    ratioClamp,
    rowEpsilon,
    topEntropyQuantile,
    entropyBonus,
    ...params,
    kl,
  };
}

/** The keys each new surrogate's settings object may have, and the surrogate each belongs to. */
const SURROGATE_SETTINGS = {
  cispo: "cispo",
  sapo: "sapo",
  dro: "dro",
  dppo: "dppo",
  vespo: "vespo",
  ipo: "ipo",
} as const;

/**
 * Validate the new surrogates' settings: each settings field only with its surrogate; SAPO's τ
 * positive finite (defaults 1 and 1.05); DRO's β positive finite (required); VESPO's k, λ finite
 * (TRL's defaults, λ floored at 1e-4); DPPO's divergence tv|kl, bounds positive finite, truncation
 * positive finite or null (required object).
 */
function resolveSurrogateParams(
  fn: string,
  surrogate: SurrogateKind,
  config: PolicyLossConfig,
): Pick<
  ResolvedPolicyLossConfig,
  "tauPos" | "tauNeg" | "beta" | "dppo" | "vespo" | "ipoThreshold"
> {
  for (const [key, owner] of Object.entries(SURROGATE_SETTINGS)) {
    const v = (config as unknown as Record<string, unknown>)[key];
    if (isSet(v) && surrogate !== owner) {
      throw new ConfigError(
        fn,
        `config.${key}`,
        mustBe(
          fn,
          `config.${key}`,
          `null when surrogate is "${surrogate}" (it is "${owner}"'s)`,
          fmtValue(v),
        ),
      );
    }
  }
  const out = {
    tauPos: Number.NaN,
    tauNeg: Number.NaN,
    beta: Number.NaN,
    dppo: null,
    vespo: null,
    ipoThreshold: Number.NaN,
  } as {
    tauPos: number;
    tauNeg: number;
    beta: number;
    dppo: ResolvedPolicyLossConfig["dppo"];
    vespo: ResolvedPolicyLossConfig["vespo"];
    ipoThreshold: number;
  };
  const object = (arg: string, v: unknown): Record<string, unknown> => {
    if (typeof v !== "object" || v === null || Array.isArray(v))
      throw new ConfigError(fn, arg, mustBe(fn, arg, "an object", fmtValue(v)));
    return v as Record<string, unknown>;
  };
  if (surrogate === "sapo") {
    const c = isSet(config.sapo) ? object("config.sapo", config.sapo) : {};
    out.tauPos = isSet(c.tauPos) ? positiveFinite(fn, "config.sapo.tauPos", c.tauPos) : 1;
    out.tauNeg = isSet(c.tauNeg) ? positiveFinite(fn, "config.sapo.tauNeg", c.tauNeg) : 1.05;
  } else if (surrogate === "dro") {
    if (!isSet(config.dro)) {
      throw new ConfigError(
        fn,
        "config.dro",
        mustBe(
          fn,
          "config.dro",
          'a DroConfig {beta} when surrogate is "dro"',
          fmtValue(config.dro),
        ),
      );
    }
    out.beta = positiveFinite(fn, "config.dro.beta", object("config.dro", config.dro).beta);
  } else if (surrogate === "vespo") {
    // TRL's defaults; λ floored at 1e-4 as TRL does.
    const c = isSet(config.vespo) ? object("config.vespo", config.vespo) : {};
    const fin = (k: keyof VespoConfig, d: number): number => {
      const x = c[k];
      if (!isSet(x)) return d;
      if (typeof x !== "number" || !Number.isFinite(x))
        throw new ConfigError(
          fn,
          `config.vespo.${k}`,
          mustBe(fn, `config.vespo.${k}`, "a finite number", fmtValue(x)),
        );
      return x;
    };
    out.vespo = {
      kPos: fin("kPos", 2),
      lambdaPos: Math.max(fin("lambdaPos", 3), 1e-4),
      kNeg: fin("kNeg", 3),
      lambdaNeg: Math.max(fin("lambdaNeg", 2), 1e-4),
    };
  } else if (surrogate === "ipo") {
    // prime-rl's IPOLossConfig: ipo_threshold = Field(0.1, ge=0).
    const c = isSet(config.ipo) ? object("config.ipo", config.ipo) : {};
    const t = isSet(c.threshold) ? c.threshold : 0.1;
    if (typeof t !== "number" || !Number.isFinite(t) || t < 0) {
      throw new ConfigError(
        fn,
        "config.ipo.threshold",
        mustBe(fn, "config.ipo.threshold", "a finite number ≥ 0", fmtValue(t)),
      );
    }
    out.ipoThreshold = t;
  } else if (surrogate === "dppo") {
    if (!isSet(config.dppo)) {
      throw new ConfigError(
        fn,
        "config.dppo",
        mustBe(
          fn,
          "config.dppo",
          'a DppoConfig {divergence, low, high, truncation} when surrogate is "dppo"',
          fmtValue(config.dppo),
        ),
      );
    }
    const c = object("config.dppo", config.dppo);
    out.dppo = {
      divergence: oneOf(fn, "config.dppo.divergence", c.divergence, ["tv", "kl"] as const),
      low: positiveFinite(fn, "config.dppo.low", c.low),
      high: positiveFinite(fn, "config.dppo.high", c.high),
      truncation: isSet(c.truncation)
        ? positiveFinite(fn, "config.dppo.truncation", c.truncation)
        : Number.POSITIVE_INFINITY,
    };
  }
  return out;
}

/** Validate a ratio clamp: level token|row (row needs a sequence kind), a finite bound at least, lower < upper. */
function resolveRatioClamp(
  fn: string,
  c: RatioClampConfig,
  ratio: RatioKind,
): NonNullable<ResolvedPolicyLossConfig["ratioClamp"]> {
  const arg = "config.ratioClamp";
  if (typeof c !== "object" || c === null || Array.isArray(c)) {
    throw new ConfigError(
      fn,
      arg,
      mustBe(fn, arg, "a RatioClampConfig object or null", fmtValue(c)),
    );
  }
  const level = oneOf(fn, `${arg}.level`, c.level, ["token", "row"] as const);
  const finiteOrNull = (k: "lower" | "upper"): number | null => {
    const v = c[k];
    if (!isSet(v)) return null;
    if (typeof v !== "number" || !Number.isFinite(v))
      throw new ConfigError(
        fn,
        `${arg}.${k}`,
        mustBe(fn, `${arg}.${k}`, "a finite number or null", fmtValue(v)),
      );
    return v;
  };
  const lower = finiteOrNull("lower");
  const upper = finiteOrNull("upper");
  if (lower === null && upper === null) {
    throw new ConfigError(
      fn,
      arg,
      mustBe(fn, arg, "a clamp with a lower or an upper bound", "neither"),
    );
  }
  if (lower !== null && upper !== null && !(lower < upper)) {
    throw new ConfigError(
      fn,
      `${arg}.upper`,
      mustBe(fn, `${arg}.upper`, `above ${arg}.lower = ${lower}`, fmtValue(upper)),
    );
  }
  const signAware = isSet(c.signAware) ? checkBoolean(fn, `${arg}.signAware`, c.signAware) : false;
  if (level === "row" && ratio === "token") {
    throw new ConfigError(
      fn,
      `${arg}.level`,
      mustBe(
        fn,
        `${arg}.level`,
        '"token" when config.ratio is "token" (a token ratio has no row log-ratio)',
        '"row"',
      ),
    );
  }
  if (signAware && level === "row") {
    throw new ConfigError(
      fn,
      `${arg}.signAware`,
      mustBe(
        fn,
        `${arg}.signAware`,
        'false when the level is "row" (the sign is a token\'s advantage)',
        "true",
      ),
    );
  }
  return {
    level,
    lower: lower ?? Number.NEGATIVE_INFINITY,
    upper: upper ?? Number.POSITIVE_INFINITY,
    signAware,
  };
}
