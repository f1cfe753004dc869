/**
 * The policy-loss configuration algebra: ratio kind × surrogate × clip × aggregation × optional
 * truncated-IS correction × optional as-loss KL (docs/derivations/losses.md). Configs are inert,
 * readonly data; `validatePolicyLossConfig` (losses/configValidate.ts) checks them at call entry.
 *
 * This module is also the one table of {@link PolicyLossConfig}'s fields ({@link POLICY_LOSS_FIELDS},
 * CONTRIBUTING.md, recipe 1): for each field its snake_case wire key, the kind and rule of its
 * value (and of each sub-field), its default, whether the wire form always carries it, the
 * surrogate or component it belongs to, its words in text output, its place in explain's
 * comparison, and whether the dtype emulation models it. Everything that lists the config's fields
 * reads the table: the validator (losses/configValidate.ts), JSON parse and emit and the policy-loss
 * part of the JSON Schema (io/configJson.ts), the loss text (report/lossText.ts), describe
 * (registry/describe.ts), explain's comparison (conformance/frameworkConfig/explain.ts), gradcheck
 * (verify/gradcheckLoss.ts), the dtype emulation's refusal (contracts/_internal/emulatePolicyLoss.ts)
 * and the defaults the autodiff reference applies (verify/reference/policyLossRef.ts). The table's
 * type has an entry for every key of PolicyLossConfig: a field without one does not compile.
 */
import { AGGREGATIONS, type Aggregation } from "../aggregate/aggregation.js";
import { EMPTY_ROWS, type EmptyRows } from "../aggregate/emptyRows.js";
import {
  KL_ESTIMATORS,
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
  /**
   * The surrogate's settings block (the field of the table it owns: `sapo`, `dro`, …), checked,
   * every default filled; null when the surrogate has none or runs without it. The kernel reads
   * its constants through the surrogate's entry (kernel/points.ts, SURROGATES).
   */
  readonly settings: Readonly<Record<string, unknown>> | null;
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

/**
 * How a number is checked. `count`: a positive integer; `any`: any number (its rule depends on
 * another field and is a named rule of the validator, e.g. `normLen` against the aggregation).
 */
export type NumberRule =
  | "any"
  | "finite"
  | "positive"
  | "nonNegative"
  | "unit"
  | "count"
  | "epsLow"
  | "dualClip";

/** A number rule: its words in errors and its test. */
export interface NumberRuleSpec {
  readonly text: string;
  readonly ok: (x: number) => boolean;
}

/** Every number rule. @internal */
export const NUMBER_RULES: Readonly<Record<NumberRule, NumberRuleSpec>> = {
  any: { text: "a number", ok: (_x: number) => true },
  finite: { text: "a finite number", ok: (x: number) => Number.isFinite(x) },
  positive: { text: "a positive finite number", ok: (x: number) => Number.isFinite(x) && x > 0 },
  nonNegative: { text: "a finite number ≥ 0", ok: (x: number) => Number.isFinite(x) && x >= 0 },
  unit: { text: "a number in [0, 1]", ok: (x: number) => x >= 0 && x <= 1 },
  count: { text: "a positive integer", ok: (x: number) => Number.isInteger(x) && x >= 1 },
  // polgrad 0.2.0's rule: finite and > 0. epsLow ≥ 1 puts the lower bound 1 − epsLow at or
  // below 0, where no ratio exp(·) > 0 reaches it: no lower clip (verl's CISPO recipe,
  // clip_ratio_low=10), computed exactly as upstream computes the clamp.
  epsLow: {
    text: "a positive finite number (epsLow ≥ 1: the lower bound 1 − epsLow ≤ 0 never binds)",
    ok: (x: number) => Number.isFinite(x) && x > 0,
  },
  dualClip: {
    text: "a finite number > 1 (dual clip) or null",
    ok: (x: number) => Number.isFinite(x) && x > 1,
  },
};

/** The kind of a value, and its rule. */
export type ValueSpec =
  | { readonly kind: "name"; readonly names: readonly string[] }
  | { readonly kind: "number"; readonly rule: NumberRule }
  | { readonly kind: "boolean" }
  | ObjectSpec
  | { readonly kind: "list"; readonly what: string; readonly item: ObjectSpec };

/** An object value: its sub-fields by camelCase key, and how errors name it. */
export interface ObjectSpec {
  readonly kind: "object";
  /** What the object is, in errors: `an ISCorrectionConfig object`. */
  readonly what: string;
  readonly fields: Readonly<Record<string, SubField>>;
}

/**
 * Whether a key must be given: `required` (a value, not null), `nullable` (the key, null allowed:
 * `is_correction.cap`, null meaning no bound), or `optional` (absent or null: the default).
 */
export type Presence = "required" | "nullable" | "optional";

/**
 * On the wire: `always` (emitted even when absent, as its default, null for most) or `whenSet`
 * (emitted only when it differs from its default).
 */
export type Wire = "always" | "whenSet";

/** A field of an object value. */
export interface SubField {
  readonly snake: string;
  readonly value: ValueSpec;
  readonly presence: Presence;
  /** What absent or null means (null: nothing). */
  readonly default: unknown;
  readonly wire: Wire;
  /** polgrad 0.2.0 has it (its wire key is polgrad's), or it is ours. */
  readonly polgrad?: boolean;
}

/** One of explain's components. */
export type ExplainComponent =
  | "ratio"
  | "surrogate"
  | "surrogate_settings"
  | "clip"
  | "aggregation"
  | "kl"
  | "is_correction"
  | "entropy"
  | "masks"
  | "ratio_clamp";

/**
 * The components explain compares (docs/conformance/explain.md#nearest-algorithm): each one's
 * weight in the distance, and how its fields' words join: `head` (the first field's words, the
 * others after it in parentheses: `cispo (cap 5)`, `token_sum_norm (norm_len 4096)`) or `list`
 * (comma-separated, `none` when no field says anything).
 */
export const EXPLAIN_COMPONENTS: Readonly<
  Record<ExplainComponent, { readonly weight: number; readonly join: "head" | "list" }>
> = {
  ratio: { weight: 3, join: "head" },
  surrogate: { weight: 3, join: "head" },
  surrogate_settings: { weight: 1, join: "list" },
  clip: { weight: 1, join: "head" },
  aggregation: { weight: 2, join: "head" },
  kl: { weight: 1, join: "head" },
  is_correction: { weight: 1, join: "head" },
  entropy: { weight: 1, join: "list" },
  masks: { weight: 1, join: "list" },
  ratio_clamp: { weight: 1, join: "head" },
};

/** Who a field belongs to: a surrogate (set only with it), or every config (`all`). */
export type Owner = SurrogateKind | "all";

/** One top-level field of {@link PolicyLossConfig}. */
export interface FieldSpec<V> extends SubField {
  /** A surrogate's settings are set only with that surrogate. */
  readonly owner: Owner;
  /** polgrad 0.2.0 has the field (its wire key is polgrad's), or it is ours. */
  readonly polgrad: boolean;
  /**
   * The field's words in the loss text (`polgrad loss`) and in describe, from its value (set,
   * not null) and the whole config; null: nothing to say (e.g. the default).
   */
  readonly text: (v: NonNullable<V>, c: PolicyLossConfig) => string | null;
  /**
   * Its place in explain's comparison: the component and its words there (null: says nothing);
   * `paper: false` for a field a paper's config does not define (then only the comparison of two
   * run configs sees it).
   */
  readonly explain: {
    readonly component: ExplainComponent;
    readonly words: (v: V | null | undefined, c: PolicyLossConfig) => string | null;
    readonly paper?: false;
  };
  /** The dtype emulation models it: always, never, or for these values (a surrogate). */
  readonly emulated: boolean | readonly string[];
  /** A surrogate's settings that the surrogate cannot run without (DRO's β, DPPO's region). */
  readonly requiredWithOwner?: true;
}

/** The value of a number or null, in words (`none`). */
const num = (x: number | null | undefined): string =>
  x === null || x === undefined ? "none" : String(x);

/** Each set sub-field as `snake=value` (with its default where absent), space-separated. */
function settings(spec: ObjectSpec, v: Readonly<Record<string, unknown>>, sep = " "): string {
  return Object.entries(spec.fields)
    .map(([k, f]) => `${f.snake}=${wordsOf(v[k] ?? f.default)}`)
    .join(sep);
}

/** The words that are not null, in parentheses after a space (nothing when all are null). */
function parens(words: readonly (string | null)[]): string {
  const w = words.filter((x) => x !== null);
  return w.length === 0 ? "" : ` (${w.join(", ")})`;
}

function wordsOf(x: unknown): string {
  return x === null || x === undefined ? "none" : String(x);
}

const nullableNumber = (snake: string, rule: NumberRule, wire: Wire = "always"): SubField => ({
  snake,
  value: { kind: "number", rule },
  presence: "optional",
  default: null,
  wire,
});
const requiredNumber = (snake: string, rule: NumberRule): SubField => ({
  snake,
  value: { kind: "number", rule },
  presence: "required",
  default: null,
  wire: "always",
});
const numberWithDefault = (snake: string, rule: NumberRule, d: number): SubField => ({
  snake,
  value: { kind: "number", rule },
  presence: "optional",
  default: d,
  wire: "always",
});
const name = (snake: string, names: readonly string[], d: string | null = null): SubField => ({
  snake,
  value: { kind: "name", names },
  presence: d === null ? "required" : "optional",
  default: d,
  wire: "always",
});
const flag = (snake: string): SubField => ({
  snake,
  value: { kind: "boolean" },
  presence: "optional",
  default: false,
  wire: "whenSet",
});

const CLIP: ObjectSpec = {
  kind: "object",
  what: "a ClipConfig object",
  fields: {
    epsLow: { ...nullableNumber("eps_low", "epsLow"), polgrad: true },
    epsHigh: { ...nullableNumber("eps_high", "positive"), polgrad: true },
    ratioCap: { ...nullableNumber("ratio_cap", "dualClip"), polgrad: true },
  },
};

const ROW_MASK: ObjectSpec = {
  kind: "object",
  what: "an ISRowMask object",
  fields: {
    level: name("level", ["sequence", "geometric"]),
    lower: nullableNumber("lower", "positive"),
    cap: nullableNumber("cap", "positive"),
  },
};

const IS_CORRECTION: ObjectSpec = {
  kind: "object",
  what: "an ISCorrectionConfig object",
  fields: {
    cap: {
      snake: "cap",
      value: { kind: "number", rule: "positive" },
      presence: "nullable",
      default: null,
      wire: "always",
      polgrad: true,
    },
    level: { ...name("level", IS_LEVELS, "token"), polgrad: true },
    lower: nullableNumber("lower", "positive", "whenSet"),
    mode: { ...name("mode", IS_MODES, "truncate"), wire: "whenSet" },
    logClamp: nullableNumber("log_clamp", "positive", "whenSet"),
    rowMask: {
      snake: "row_mask",
      value: ROW_MASK,
      presence: "optional",
      default: null,
      wire: "whenSet",
    },
    normalize: flag("normalize"),
  },
};

const KL: ObjectSpec = {
  kind: "object",
  what: "a KLLossConfig object",
  fields: {
    kind: { ...name("kind", KL_ESTIMATORS), polgrad: true },
    coef: { ...requiredNumber("coef", "finite"), polgrad: true },
    aggregation: { ...name("aggregation", AGGREGATIONS), presence: "optional", polgrad: true },
    normLen: { ...nullableNumber("norm_len", "any"), polgrad: true },
    clamp: {
      snake: "clamp",
      value: {
        kind: "object",
        what: "a KLClamp object",
        fields: {
          delta: nullableNumber("delta", "positive"),
          value: nullableNumber("value", "positive"),
        },
      },
      presence: "optional",
      default: null,
      wire: "whenSet",
    },
    gradient: { ...name("gradient", KL_GRADIENTS, "pathwise"), wire: "whenSet" },
    weight: { ...name("weight", KL_WEIGHTS), presence: "optional", wire: "whenSet" },
  },
};

const REJECTION_RULE: ObjectSpec = {
  kind: "object",
  what: "a RejectionRule object",
  fields: {
    statistic: name("statistic", ["token", "seq_sum", "seq_mean", "seq_max"]),
    estimator: name("estimator", ["k1", "k2", "k3"]),
    lower: nullableNumber("lower", "positive"),
    upper: requiredNumber("upper", "positive"),
    logClamp: nullableNumber("log_clamp", "positive"),
  },
};

const object = (what: string, fields: Record<string, SubField>): ObjectSpec => ({
  kind: "object",
  what,
  fields,
});

const SAPO = object("a SapoConfig object", {
  tauPos: numberWithDefault("tau_pos", "positive", 1),
  tauNeg: numberWithDefault("tau_neg", "positive", 1.05),
});
const VESPO = object("a VespoConfig object", {
  kPos: numberWithDefault("k_pos", "finite", 2),
  lambdaPos: numberWithDefault("lambda_pos", "finite", 3),
  kNeg: numberWithDefault("k_neg", "finite", 3),
  lambdaNeg: numberWithDefault("lambda_neg", "finite", 2),
});
const CISPO = object("a CispoConfig {cap}", { cap: requiredNumber("cap", "positive") });
const DRO = object("a DroConfig {beta}", { beta: requiredNumber("beta", "positive") });
const IPO = object("an IpoConfig {threshold}", {
  threshold: numberWithDefault("threshold", "nonNegative", 0.1),
});
const DPPO = object("a DppoConfig {divergence, low, high, truncation}", {
  divergence: name("divergence", ["tv", "kl"]),
  low: requiredNumber("low", "positive"),
  high: requiredNumber("high", "positive"),
  truncation: nullableNumber("truncation", "positive"),
});
const OFF_POLICY_MASK = object("an OffPolicyMaskConfig {threshold, sampling}", {
  threshold: requiredNumber("threshold", "finite"),
  sampling: name("sampling", ["old", "rollout"], "old"),
});
const RATIO_CLAMP = object("a RatioClampConfig object", {
  level: name("level", ["token", "row"]),
  lower: nullableNumber("lower", "finite"),
  upper: nullableNumber("upper", "finite"),
  signAware: flag("sign_aware"),
});
const ENTROPY_BONUS = object("an EntropyBonusConfig {coef, aggregation, normLen}", {
  coef: requiredNumber("coef", "finite"),
  aggregation: { ...name("aggregation", AGGREGATIONS), presence: "optional" },
  normLen: nullableNumber("norm_len", "any"),
});

/** A field that is an optional object, null when absent, written only when set. */
function optionalObject(
  snake: string,
  value: ObjectSpec,
  wire: Wire = "whenSet",
): Pick<SubField, "snake" | "value" | "presence" | "default" | "wire"> {
  return { snake, value, presence: "optional", default: null, wire };
}

/** A surrogate's settings block, compared by explain as part of the surrogate. */
function surrogateSettings<K extends "cispo" | "sapo" | "vespo" | "dro" | "dppo" | "ipo">(
  key: K,
  value: ObjectSpec,
  words: (v: Readonly<Record<string, unknown>>) => string,
  requiredWithOwner = false,
): FieldSpec<PolicyLossConfig[K]> {
  return {
    ...optionalObject(key, value),
    ...(requiredWithOwner ? { requiredWithOwner: true as const } : {}),
    owner: key,
    polgrad: false,
    text: (v) => `${key} ${settings(value, v as Readonly<Record<string, unknown>>)}`,
    explain: {
      component: "surrogate_settings",
      // The settings the surrogate runs with: its defaults where they exist, when absent.
      words: (v, c) => {
        if (c.surrogate !== key) return null;
        if (v !== null && v !== undefined) return words(v as Readonly<Record<string, unknown>>);
        const allDefault = Object.values(value.fields).every((f) => f.presence === "optional");
        return allDefault ? words({}) : null;
      },
    },
    // CISPO's absolute cap is the band the emulation models; the others are refused with their surrogate.
    emulated: key === "cispo",
  };
}

/** `key value` for each sub-field, its default where absent, comma-separated (explain's words). */
const spaced =
  (spec: ObjectSpec) =>
  (v: Readonly<Record<string, unknown>>): string =>
    Object.entries(spec.fields)
      .map(([k, f]) => `${f.snake} ${wordsOf(v[k] ?? f.default)}`)
      .join(", ");

/** A field's camelCase key. */
export type PolicyLossField = keyof PolicyLossConfig;

/** The field table's type: an entry for every field of {@link PolicyLossConfig}, or no compile. */
export type PolicyLossFieldTable = {
  readonly [K in PolicyLossField]-?: FieldSpec<PolicyLossConfig[K]>;
};

/**
 * The fields of {@link PolicyLossConfig}, in wire order (polgrad 0.2.0's seven first, then ours).
 * @internal
 */
export const POLICY_LOSS_FIELDS: PolicyLossFieldTable = {
  ratio: {
    ...name("ratio", RATIO_KINDS),
    owner: "all",
    polgrad: true,
    text: () => null, // the loss text's header: "<surrogate> on <ratio> ratio"
    explain: { component: "ratio", words: (v) => String(v) },
    emulated: true,
  },
  surrogate: {
    ...name("surrogate", SURROGATE_KINDS),
    owner: "all",
    polgrad: true,
    text: () => null,
    explain: { component: "surrogate", words: (v) => String(v) },
    emulated: ["pg_clip", "pg", "reinforce", "cispo"],
  },
  clip: {
    ...optionalObject("clip", CLIP, "always"),
    owner: "all",
    polgrad: true,
    text: (v) =>
      `clip eps_low=${num(v.epsLow)} eps_high=${num(v.epsHigh)} ratio_cap=${num(v.ratioCap)}`,
    explain: {
      component: "clip",
      words: (v) =>
        v === null || v === undefined
          ? "none"
          : `ε_low ${num(v.epsLow)}, ε_high ${num(v.epsHigh)}${v.ratioCap == null ? "" : `, dual clip ${v.ratioCap}`}`,
    },
    emulated: true,
  },
  aggregation: {
    ...name("aggregation", AGGREGATIONS),
    owner: "all",
    polgrad: true,
    text: () => null, // in the header
    explain: { component: "aggregation", words: (v) => String(v) },
    emulated: true,
  },
  normLen: {
    ...nullableNumber("norm_len", "any"),
    owner: "all",
    polgrad: true,
    text: () => null, // in the header, after the aggregation
    explain: {
      component: "aggregation",
      words: (v, c) => (c.aggregation === "token_sum_norm" ? `norm_len ${num(v)}` : null),
    },
    emulated: true,
  },
  isCorrection: {
    ...optionalObject("is_correction", IS_CORRECTION, "always"),
    owner: "all",
    polgrad: true,
    text: (c) => {
      const mask = c.mode === "mask";
      const extra = [
        c.lower == null ? "" : ` lower=${c.lower}`,
        mask ? " mode=mask" : "",
        c.logClamp == null ? "" : ` log_clamp=${c.logClamp}`,
        c.rowMask == null
          ? ""
          : ` row_mask=${c.rowMask.level}[${num(c.rowMask.lower)}, ${num(c.rowMask.cap)}]`,
        c.normalize === true ? " normalize" : "",
      ].join("");
      return `${mask ? "IS" : "TIS"} ${c.level}-level cap=${num(c.cap)}${extra}`;
    },
    explain: {
      component: "is_correction",
      words: (v) => {
        if (v === null || v === undefined) return "none";
        const extra = [
          v.lower == null ? "" : `, lower ${v.lower}`,
          v.logClamp == null ? "" : `, log clamp ${v.logClamp}`,
          v.rowMask == null
            ? ""
            : `, row mask ${v.rowMask.level} [${num(v.rowMask.lower)}, ${num(v.rowMask.cap)}]`,
          v.normalize === true ? ", batch-normalised" : "",
        ].join("");
        return `${v.level} ${v.mode ?? "truncate"}, cap ${num(v.cap)}${extra}`;
      },
    },
    // Batch-normalised weights are refused by the emulation's own rule (emulatePolicyLoss).
    emulated: true,
  },
  kl: {
    ...optionalObject("kl", KL, "always"),
    owner: "all",
    polgrad: true,
    text: (v) => `KL ${v.kind} coef=${v.coef}`,
    explain: {
      component: "kl",
      words: (v) => {
        if (v === null || v === undefined) return "none";
        const agg = v.aggregation == null ? "" : `, aggregated ${v.aggregation}`;
        const nl = v.normLen == null ? "" : ` (norm_len ${v.normLen})`;
        const clamp =
          v.clamp == null ? "" : `, clamped (δ ${num(v.clamp.delta)}, value ${num(v.clamp.value)})`;
        const grad = v.gradient === "straight_through" ? ", straight-through gradient" : "";
        return `${v.kind} × ${v.coef} in the loss${v.weight == null ? "" : `, weighted by ${v.weight}`}${clamp}${agg}${nl}${grad}`;
      },
    },
    // Clamps, straight-through gradients and weights are refused by the emulation's own rule.
    emulated: true,
  },
  emptyRows: {
    ...name("empty_rows", EMPTY_ROWS, "reject"),
    wire: "whenSet",
    owner: "all",
    polgrad: false,
    text: (v) => (v === "reject" ? null : `empty_rows=${v}`),
    explain: {
      component: "aggregation",
      words: (v) => (v == null || v === "reject" ? null : `empty rows ${v}`),
      // A paper's config leaves rows without a response token undefined (polgrad rejects them);
      // each framework's rule is stated in its resolution's algebra.
      paper: false,
    },
    emulated: false,
  },
  rejection: {
    snake: "rejection",
    value: { kind: "list", what: "a non-empty list of RejectionRule", item: REJECTION_RULE },
    presence: "optional",
    default: null,
    wire: "whenSet",
    owner: "all",
    polgrad: false,
    text: (v) =>
      `rejection ${v.map((r) => `${r.estimator}/${r.statistic}[${num(r.lower)}, ${r.upper}]${r.logClamp == null ? "" : ` log_clamp=${r.logClamp}`}`).join(" and ")}`,
    explain: {
      component: "masks",
      words: (v) =>
        v == null || v.length === 0
          ? null
          : `${v.length} rejection rule(s): ${v.map((r) => `${r.estimator} ${r.statistic} [${num(r.lower)}, ${r.upper}]${r.logClamp == null ? "" : ` log clamp ${r.logClamp}`}`).join("; ")}`,
    },
    emulated: false,
  },
  ratioClamp: {
    ...optionalObject("ratio_clamp", RATIO_CLAMP),
    owner: "all",
    polgrad: false,
    text: (rc) =>
      `ratio_clamp ${rc.level} [${num(rc.lower)}, ${num(rc.upper)}]${rc.signAware === true ? " sign-aware" : ""}`,
    explain: {
      component: "ratio_clamp",
      words: (v) =>
        v == null
          ? "none"
          : `${v.level} [${num(v.lower)}, ${num(v.upper)}]${v.signAware === true ? ", sign-aware" : ""}`,
    },
    emulated: false,
  },
  offPolicyMask: {
    ...optionalObject("off_policy_mask", OFF_POLICY_MASK),
    owner: "all",
    polgrad: false,
    text: (o) =>
      `off_policy_mask ${settings(OFF_POLICY_MASK, o as unknown as Readonly<Record<string, unknown>>)}`,
    explain: {
      component: "masks",
      words: (v) =>
        v == null
          ? null
          : `off-policy mask ${v.threshold}${(v.sampling ?? "old") === "old" ? "" : ` (sampling ${v.sampling})`}`,
    },
    emulated: false,
  },
  cispo: surrogateSettings("cispo", CISPO, (v) => `cap ${wordsOf(v.cap)}`),
  vespo: surrogateSettings("vespo", VESPO, spaced(VESPO)),
  sapo: surrogateSettings(
    "sapo",
    SAPO,
    (v) =>
      `τ+ ${wordsOf(v.tauPos ?? SAPO.fields.tauPos?.default)}, τ− ${wordsOf(v.tauNeg ?? SAPO.fields.tauNeg?.default)}`,
  ),
  dro: surrogateSettings("dro", DRO, spaced(DRO), true),
  dppo: surrogateSettings("dppo", DPPO, spaced(DPPO), true),
  ipo: surrogateSettings("ipo", IPO, spaced(IPO)),
  rowEpsilon: {
    ...nullableNumber("row_epsilon", "nonNegative", "whenSet"),
    default: 0,
    owner: "all",
    polgrad: false,
    text: (v) => (v === 0 ? null : `row_epsilon ${v}`),
    explain: {
      component: "aggregation",
      words: (v) => (v == null || v === 0 ? null : `row ε ${v}`),
    },
    // Not modelled: the emulation divides by L_b.
    emulated: false,
  },
  topEntropyQuantile: {
    ...nullableNumber("top_entropy_quantile", "unit", "whenSet"),
    owner: "all",
    polgrad: false,
    text: (v) => `top_entropy_quantile ${v}`,
    explain: {
      component: "entropy",
      words: (v) => (v == null ? null : `top-entropy mask ρ = ${v}`),
    },
    emulated: false,
  },
  entropyBonus: {
    ...optionalObject("entropy_bonus", ENTROPY_BONUS),
    owner: "all",
    polgrad: false,
    text: (e) =>
      `entropy_bonus coef=${e.coef} ${e.aggregation ?? "token_mean"}${e.normLen == null ? "" : ` norm_len=${e.normLen}`}`,
    explain: {
      component: "entropy",
      words: (v) =>
        v == null
          ? null
          : `entropy bonus ${v.coef}${parens([v.aggregation ?? null, v.normLen == null ? null : `norm_len ${v.normLen}`])}`,
    },
    emulated: false,
  },
};

/** Every field's camelCase key, in wire order. @internal */
export const POLICY_LOSS_FIELD_KEYS: readonly PolicyLossField[] = Object.keys(
  POLICY_LOSS_FIELDS,
) as PolicyLossField[];

/** The settings blocks of the surrogates (each set only with its owner), by key. @internal */
export const SURROGATE_SETTING_FIELDS: readonly PolicyLossField[] = POLICY_LOSS_FIELD_KEYS.filter(
  (k) => POLICY_LOSS_FIELDS[k].owner !== "all",
);

/** A field's value says something: set, and not its default. @internal */
export function isSetField(k: PolicyLossField, v: unknown): boolean {
  if (v === null || v === undefined) return false;
  const d = POLICY_LOSS_FIELDS[k].default;
  return d === null || v !== d;
}

/**
 * The default of a sub-field of an object field (`subDefault("sapo", "tauNeg")` is 1.05), read by
 * the validator and the autodiff reference alike. @internal
 */
export function subDefault(field: PolicyLossField, sub: string): unknown {
  const spec = POLICY_LOSS_FIELDS[field].value as ValueSpec;
  const f = spec.kind === "object" ? spec.fields[sub] : undefined;
  if (f === undefined) throw new Error(`subDefault: ${field}.${sub} is not in the field table`);
  return f.default;
}

/**
 * A setting of a config's object field, or its default when absent (`settingOf(c, "sapo",
 * "tauNeg")` is 1.05 for a SAPO config without settings). @internal
 */
export function settingOf(c: PolicyLossConfig, field: PolicyLossField, sub: string): unknown {
  const v = (c[field] as Readonly<Record<string, unknown>> | null | undefined)?.[sub];
  return v === undefined || v === null ? subDefault(field, sub) : v;
}

/**
 * The config's words in text output: each field that says something, in wire order, by its
 * `text` renderer (the loss text's and describe's extension lines read it). @internal
 */
export function fieldTexts(
  c: PolicyLossConfig,
): { readonly key: PolicyLossField; readonly snake: string; readonly text: string }[] {
  const out: { key: PolicyLossField; snake: string; text: string }[] = [];
  for (const k of POLICY_LOSS_FIELD_KEYS) {
    const v = c[k];
    if (!isSetField(k, v)) continue;
    const spec = POLICY_LOSS_FIELDS[k] as FieldSpec<unknown>;
    const text = spec.text(v as NonNullable<unknown>, c);
    if (text !== null) out.push({ key: k, snake: spec.snake, text });
  }
  return out;
}
