/**
 * polgrad's snake_case config JSON ↔ the camelCase {@link PolicyLossConfig}
 * (docs/io.md#config-json). Parsing checks keys and JSON types (and mode names, so the result is
 * well typed); value rules (eps > 0, norm_len a positive integer, …) are left to the losses'
 * validation at call entry, exactly as for a config built in code.
 */
import { AGGREGATIONS, type Aggregation } from "../aggregate/aggregation.js";
import { fmtValue, mustBe } from "../core/message.js";
import { closestNames, didYouMean, oneOf } from "../core/names.js";
import { requireObject, requireString } from "../core/validate.js";
import { ConfigError, UnknownNameError } from "../errors.js";
import {
  KL_ESTIMATORS,
  KL_GRADIENTS,
  KL_WEIGHTS,
  type KLClamp,
  type KLLossConfig,
} from "../kl/estimator.js";
import {
  type CispoConfig,
  type ClipConfig,
  type DppoConfig,
  type DroConfig,
  EMPTY_ROWS,
  type EntropyBonusConfig,
  type IpoConfig,
  IS_LEVELS,
  IS_MODES,
  type ISCorrectionConfig,
  type ISRowMask,
  type OffPolicyMaskConfig,
  type PolicyLossConfig,
  RATIO_KINDS,
  type RatioClampConfig,
  type RejectionRule,
  type SapoConfig,
  SURROGATE_KINDS,
  type VespoConfig,
} from "../losses/config.js";
import {
  type DoubleEntropyConfig,
  PAPO_FORMS,
  PAPO_PRESET_NAMES,
  PAPO_PRESETS,
  type PapoConfig,
  type PapoForm,
  type PapoPreset,
  type PapoSettings,
  withPapoSettings,
} from "../losses/papoConfig.js";

/** The JSON form of a {@link PolicyLossConfig}: polgrad's snake_case keys, nulls explicit. */
export interface PolicyLossConfigJson {
  readonly ratio: string;
  readonly surrogate: string;
  readonly clip: {
    readonly eps_low: number | null;
    readonly eps_high: number | null;
    readonly ratio_cap: number | null;
  } | null;
  readonly aggregation: string;
  readonly norm_len: number | null;
  readonly is_correction: {
    readonly cap: number | null;
    readonly level: string;
    readonly lower?: number;
    readonly mode?: string;
    readonly log_clamp?: number;
    readonly normalize?: boolean;
    readonly row_mask?: {
      readonly level: string;
      readonly lower: number | null;
      readonly cap: number | null;
    };
  } | null;
  readonly kl: {
    readonly kind: string;
    readonly coef: number;
    readonly aggregation: string | null;
    readonly norm_len: number | null;
    readonly clamp?: { readonly delta: number | null; readonly value: number | null };
    readonly gradient?: string;
    readonly weight?: string;
  } | null;
  readonly empty_rows?: string;
  readonly ratio_clamp?: {
    readonly level: string;
    readonly lower: number | null;
    readonly upper: number | null;
    readonly sign_aware?: boolean;
  };
  readonly cispo?: { readonly cap: number };
  readonly vespo?: {
    readonly k_pos: number | null;
    readonly lambda_pos: number | null;
    readonly k_neg: number | null;
    readonly lambda_neg: number | null;
  };
  readonly off_policy_mask?: { readonly threshold: number; readonly sampling: string };
  readonly sapo?: { readonly tau_pos: number | null; readonly tau_neg: number | null };
  readonly dro?: { readonly beta: number };
  readonly dppo?: {
    readonly divergence: string;
    readonly low: number;
    readonly high: number;
    readonly truncation: number | null;
  };
  readonly ipo?: { readonly threshold: number };
  readonly row_epsilon?: number;
  readonly top_entropy_quantile?: number;
  readonly entropy_bonus?: {
    readonly coef: number;
    readonly aggregation: string | null;
    readonly norm_len: number | null;
  };
  readonly rejection?: readonly {
    readonly statistic: string;
    readonly estimator: string;
    readonly lower: number | null;
    readonly upper: number;
    readonly log_clamp: number | null;
  }[];
}

type Obj = Record<string, unknown>;

class Reader {
  constructor(
    readonly fn: string,
    readonly source: string,
  ) {}

  fail(arg: string, rule: string, actual: unknown): ConfigError {
    return this.failText(
      arg,
      rule,
      actual === undefined ? "nothing (the key is missing)" : fmtValue(actual),
    );
  }

  /** As {@link fail}, with the actual value already rendered. */
  failText(arg: string, rule: string, actual: string): ConfigError {
    return new ConfigError(
      this.fn,
      arg,
      `${mustBe(this.fn, arg, rule, actual)} (in ${this.source})`,
    );
  }

  object(
    arg: string,
    v: unknown,
    keys: readonly string[],
    opts: { readonly aliases?: Readonly<Record<string, string>>; readonly note?: string } = {},
  ): Obj {
    const aliases = opts.aliases ?? {};
    if (typeof v !== "object" || v === null || Array.isArray(v))
      throw this.fail(arg, "a JSON object", v);
    for (const k of Object.keys(v)) {
      if (keys.includes(k)) continue;
      const alias = Object.hasOwn(aliases, k) ? aliases[k] : undefined;
      const near = alias !== undefined ? [alias] : closestNames(k, keys);
      const hint = didYouMean(near);
      throw new ConfigError(
        this.fn,
        `${arg}.${k}`,
        `${mustBe(this.fn, arg, `an object with keys among ${keys.join(", ")}${opts.note ?? ""}`, `unknown key ${JSON.stringify(k)}${hint}`)} (in ${this.source})`,
      );
    }
    return v as Obj;
  }

  name<T extends string>(arg: string, v: unknown, known: readonly T[]): T {
    if (typeof v !== "string") throw this.fail(arg, "a string", v);
    try {
      return oneOf(this.fn, arg, v, known);
    } catch (e) {
      if (!(e instanceof UnknownNameError)) throw e;
      throw new UnknownNameError(e.fn, arg, `${e.message} (in ${this.source})`, e.suggestions);
    }
  }

  number(arg: string, v: unknown): number {
    if (typeof v !== "number") throw this.fail(arg, "a number", v);
    return v;
  }

  /** A finite number ≥ 0 (`orNull`: or null); `rule` names what null means. */
  nonNegative(arg: string, v: unknown, orNull: string | null = null): number | null {
    if (orNull !== null && v === null) return null;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
      throw this.fail(
        arg,
        `a finite number >= 0${orNull === null ? "" : ` or null (${orNull})`}`,
        v,
      );
    return v;
  }

  numberOrNull(arg: string, v: unknown): number | null {
    if (v === undefined || v === null) return null;
    if (typeof v !== "number") throw this.fail(arg, "a number or null", v);
    return v;
  }
}

function clipOf(r: Reader, v: unknown): ClipConfig | null {
  if (v === undefined || v === null) return null;
  const c = r.object("config.clip", v, ["eps_low", "eps_high", "ratio_cap"]);
  return Object.freeze({
    epsLow: r.numberOrNull("config.clip.eps_low", c.eps_low),
    epsHigh: r.numberOrNull("config.clip.eps_high", c.eps_high),
    ratioCap: r.numberOrNull("config.clip.ratio_cap", c.ratio_cap),
  });
}

function isCorrectionOf(r: Reader, v: unknown): ISCorrectionConfig | null {
  if (v === undefined || v === null) return null;
  const c = r.object("config.is_correction", v, [
    "cap",
    "level",
    "lower",
    "mode",
    "log_clamp",
    "row_mask",
    "normalize",
  ]);
  const level =
    c.level === undefined ? "token" : r.name("config.is_correction.level", c.level, IS_LEVELS);
  // cap is required (a number, or null for no upper bound); the others may be omitted.
  const cap = c.cap === null ? null : r.number("config.is_correction.cap", c.cap);
  const out: ISCorrectionConfig = { cap, level };
  const lower = r.numberOrNull("config.is_correction.lower", c.lower);
  const mode = c.mode === undefined ? null : r.name("config.is_correction.mode", c.mode, IS_MODES);
  const logClamp = r.numberOrNull("config.is_correction.log_clamp", c.log_clamp);
  const rowMask = rowMaskOf(r, c.row_mask);
  if (c.normalize !== undefined && c.normalize !== null && typeof c.normalize !== "boolean") {
    throw r.fail("config.is_correction.normalize", "true or false", c.normalize);
  }
  const normalize = c.normalize === true;
  return Object.freeze({
    ...out,
    ...(lower === null ? {} : { lower }),
    ...(mode === null ? {} : { mode }),
    ...(logClamp === null ? {} : { logClamp }),
    ...(rowMask === null ? {} : { rowMask }),
    ...(normalize ? { normalize } : {}),
  });
}

function rowMaskOf(r: Reader, v: unknown): ISRowMask | null {
  if (v === undefined || v === null) return null;
  const c = r.object("config.is_correction.row_mask", v, ["level", "lower", "cap"]);
  return Object.freeze({
    level: r.name("config.is_correction.row_mask.level", c.level, [
      "sequence",
      "geometric",
    ] as const),
    lower: r.numberOrNull("config.is_correction.row_mask.lower", c.lower),
    cap: r.numberOrNull("config.is_correction.row_mask.cap", c.cap),
  });
}

/**
 * The wire form of an IS correction: `cap` and `level` always (polgrad 0.2.0's two fields), the
 * others only when they say something (a lower bound, mask mode, a log clamp), so a config
 * polgrad 0.2.0 can express prints as polgrad prints it.
 */
function isCorrectionJson(
  c: ISCorrectionConfig,
): NonNullable<PolicyLossConfigJson["is_correction"]> {
  return {
    cap: c.cap,
    level: c.level,
    ...(c.lower === undefined || c.lower === null ? {} : { lower: c.lower }),
    ...(c.mode === undefined || c.mode === "truncate" ? {} : { mode: c.mode }),
    ...(c.logClamp === undefined || c.logClamp === null ? {} : { log_clamp: c.logClamp }),
    ...(c.rowMask === undefined || c.rowMask === null
      ? {}
      : {
          row_mask: {
            level: c.rowMask.level,
            lower: c.rowMask.lower ?? null,
            cap: c.rowMask.cap,
          },
        }),
    ...(c.normalize === true ? { normalize: true } : {}),
  };
}

function klOf(r: Reader, v: unknown): KLLossConfig | null {
  if (v === undefined || v === null) return null;
  const c = r.object("config.kl", v, [
    "kind",
    "coef",
    "aggregation",
    "norm_len",
    "clamp",
    "gradient",
    "weight",
  ]);
  const aggregation: Aggregation | null =
    c.aggregation === undefined || c.aggregation === null
      ? null
      : r.name("config.kl.aggregation", c.aggregation, AGGREGATIONS);
  let clamp: KLClamp | null = null;
  if (c.clamp !== undefined && c.clamp !== null) {
    const k = r.object("config.kl.clamp", c.clamp, ["delta", "value"]);
    clamp = Object.freeze({
      delta: r.numberOrNull("config.kl.clamp.delta", k.delta),
      value: r.numberOrNull("config.kl.clamp.value", k.value),
    });
  }
  const gradient =
    c.gradient === undefined || c.gradient === null
      ? null
      : r.name("config.kl.gradient", c.gradient, KL_GRADIENTS);
  return Object.freeze({
    kind: r.name("config.kl.kind", c.kind, KL_ESTIMATORS),
    coef: r.number("config.kl.coef", c.coef),
    aggregation,
    normLen: r.numberOrNull("config.kl.norm_len", c.norm_len),
    ...(clamp === null ? {} : { clamp }),
    ...(gradient === null ? {} : { gradient }),
    ...(c.weight === undefined || c.weight === null
      ? {}
      : { weight: r.name("config.kl.weight", c.weight, KL_WEIGHTS) }),
  });
}

/**
 * Map polgrad's snake_case config JSON to a {@link PolicyLossConfig}.
 *
 * Format: `{ratio, surrogate, clip: {eps_low, eps_high, ratio_cap} | null, aggregation,
 * norm_len, is_correction: {cap, level, lower?, mode?, log_clamp?} | null, kl: {kind, coef,
 * aggregation, norm_len} | null}` (is_correction.row_mask: {level, lower, cap}); nullable fields may be omitted (→ null; `is_correction.level` →
 * "token", `is_correction.mode` → "truncate"); `is_correction.cap` is required (null: no bound).
 *
 * @param json - The parsed JSON value (e.g. from {@link readJsonFile}).
 * @param source - Where it came from (a path, `--config`), quoted in error messages.
 * @returns A frozen config with every field explicit (value rules not yet checked).
 * @throws {ConfigError} E_CONFIG for an unknown key (with a did-you-mean suggestion), a missing
 *   required key, or a wrong JSON type, naming the field path (e.g. `config.clip.eps_high`).
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown ratio, surrogate, aggregation, KL kind
 *   or IS level.
 * @derivation docs/io.md#config-json
 * @enforcedBy test/io/configJson.test.ts > parsePolicyLossConfig > golden: the example config maps to camelCase
 * @enforcedBy test/io/configJson.test.ts > parsePolicyLossConfig > rejects: an unknown key with a suggestion
 * @enforcedBy test/io/configJson.test.ts > parsePolicyLossConfig > rejects: a wrong json type naming the field path
 * @enforcedBy test/hardening/bounded.test.ts > deep json > regression: parsePolicyLossConfig rejects json nested 1e5 deep in memory with a typed error
 * @since 0.1.0
 */
export function parsePolicyLossConfig(json: unknown, source: string): PolicyLossConfig {
  requireString("parsePolicyLossConfig", "source", source);
  const r = new Reader("parsePolicyLossConfig", source);
  return policyOf(r, r.object("config", json, POLICY_KEYS));
}

const POLICY_KEYS = [
  "ratio",
  "surrogate",
  "clip",
  "aggregation",
  "norm_len",
  "is_correction",
  "kl",
  "empty_rows",
  "rejection",
  "ratio_clamp",
  "off_policy_mask",
  "cispo",
  "vespo",
  "sapo",
  "dro",
  "dppo",
  "ipo",
  "row_epsilon",
  "top_entropy_quantile",
  "entropy_bonus",
] as const;

function policyOf(r: Reader, c: Obj): PolicyLossConfig {
  return Object.freeze({
    ratio: r.name("config.ratio", c.ratio, RATIO_KINDS),
    surrogate: r.name("config.surrogate", c.surrogate, SURROGATE_KINDS),
    clip: clipOf(r, c.clip),
    aggregation: r.name("config.aggregation", c.aggregation, AGGREGATIONS),
    normLen: r.numberOrNull("config.norm_len", c.norm_len),
    isCorrection: isCorrectionOf(r, c.is_correction),
    kl: klOf(r, c.kl),
    ...(c.empty_rows === undefined || c.empty_rows === null
      ? {}
      : { emptyRows: r.name("config.empty_rows", c.empty_rows, EMPTY_ROWS) }),
    ...(c.rejection === undefined || c.rejection === null
      ? {}
      : { rejection: rejectionOf(r, c.rejection) }),
    ...newerSurrogateFieldsOf(r, c),
  });
}

/** The ratio clamp and the new surrogates' settings blocks (each absent or null: not set). */
function newerSurrogateFieldsOf(r: Reader, c: Obj): Partial<PolicyLossConfig> {
  const out: {
    ratioClamp?: RatioClampConfig;
    offPolicyMask?: OffPolicyMaskConfig;
    cispo?: CispoConfig;
    vespo?: VespoConfig;
    sapo?: SapoConfig;
    dro?: DroConfig;
    dppo?: DppoConfig;
    ipo?: IpoConfig;
    rowEpsilon?: number;
    topEntropyQuantile?: number;
    entropyBonus?: EntropyBonusConfig;
  } = {};
  const set = (v: unknown): boolean => v !== undefined && v !== null;
  if (set(c.ratio_clamp)) {
    const k = r.object("config.ratio_clamp", c.ratio_clamp, [
      "level",
      "lower",
      "upper",
      "sign_aware",
    ]);
    if (set(k.sign_aware) && typeof k.sign_aware !== "boolean")
      throw r.fail("config.ratio_clamp.sign_aware", "true or false", k.sign_aware);
    out.ratioClamp = Object.freeze({
      level: r.name("config.ratio_clamp.level", k.level, ["token", "row"] as const),
      lower: r.numberOrNull("config.ratio_clamp.lower", k.lower),
      upper: r.numberOrNull("config.ratio_clamp.upper", k.upper),
      ...(k.sign_aware === true ? { signAware: true } : {}),
    });
  }
  if (set(c.off_policy_mask)) {
    const k = r.object("config.off_policy_mask", c.off_policy_mask, ["threshold", "sampling"]);
    out.offPolicyMask = Object.freeze({
      threshold: r.number("config.off_policy_mask.threshold", k.threshold),
      ...(set(k.sampling)
        ? {
            sampling: r.name("config.off_policy_mask.sampling", k.sampling, [
              "old",
              "rollout",
            ] as const),
          }
        : {}),
    });
  }
  if (set(c.vespo)) {
    const k = r.object("config.vespo", c.vespo, ["k_pos", "lambda_pos", "k_neg", "lambda_neg"]);
    const opt = (name: string, key: keyof VespoConfig, x: unknown) => {
      const n = r.numberOrNull(`config.vespo.${name}`, x);
      return n === null ? {} : { [key]: n };
    };
    out.vespo = Object.freeze({
      ...opt("k_pos", "kPos", k.k_pos),
      ...opt("lambda_pos", "lambdaPos", k.lambda_pos),
      ...opt("k_neg", "kNeg", k.k_neg),
      ...opt("lambda_neg", "lambdaNeg", k.lambda_neg),
    });
  }
  if (set(c.cispo)) {
    const k = r.object("config.cispo", c.cispo, ["cap"]);
    out.cispo = Object.freeze({ cap: r.number("config.cispo.cap", k.cap) });
  }
  if (set(c.sapo)) {
    const k = r.object("config.sapo", c.sapo, ["tau_pos", "tau_neg"]);
    const pos = r.numberOrNull("config.sapo.tau_pos", k.tau_pos);
    const neg = r.numberOrNull("config.sapo.tau_neg", k.tau_neg);
    out.sapo = Object.freeze({
      ...(pos === null ? {} : { tauPos: pos }),
      ...(neg === null ? {} : { tauNeg: neg }),
    });
  }
  if (set(c.dro)) {
    const k = r.object("config.dro", c.dro, ["beta"]);
    out.dro = Object.freeze({ beta: r.number("config.dro.beta", k.beta) });
  }
  if (set(c.dppo)) {
    const k = r.object("config.dppo", c.dppo, ["divergence", "low", "high", "truncation"]);
    out.dppo = Object.freeze({
      divergence: r.name("config.dppo.divergence", k.divergence, ["tv", "kl"] as const),
      low: r.number("config.dppo.low", k.low),
      high: r.number("config.dppo.high", k.high),
      truncation: r.numberOrNull("config.dppo.truncation", k.truncation),
    });
  }
  if (set(c.ipo)) {
    const k = r.object("config.ipo", c.ipo, ["threshold"]);
    out.ipo = Object.freeze({ threshold: r.number("config.ipo.threshold", k.threshold) });
  }
  if (set(c.row_epsilon)) out.rowEpsilon = r.number("config.row_epsilon", c.row_epsilon);
  if (set(c.top_entropy_quantile)) {
    out.topEntropyQuantile = r.number("config.top_entropy_quantile", c.top_entropy_quantile);
  }
  if (set(c.entropy_bonus)) {
    const k = r.object("config.entropy_bonus", c.entropy_bonus, [
      "coef",
      "aggregation",
      "norm_len",
    ]);
    const agg = set(k.aggregation)
      ? r.name("config.entropy_bonus.aggregation", k.aggregation, AGGREGATIONS)
      : null;
    const nl = r.numberOrNull("config.entropy_bonus.norm_len", k.norm_len);
    out.entropyBonus = Object.freeze({
      coef: r.number("config.entropy_bonus.coef", k.coef),
      ...(agg === null ? {} : { aggregation: agg }),
      ...(nl === null ? {} : { normLen: nl }),
    });
  }
  return out;
}

function rejectionOf(r: Reader, v: unknown): RejectionRule[] {
  if (!Array.isArray(v)) throw r.fail("config.rejection", "a list of rules or null", v);
  return v.map((x, j) => {
    const arg = `config.rejection[${j}]`;
    const c = r.object(arg, x, ["statistic", "estimator", "lower", "upper", "log_clamp"]);
    return Object.freeze({
      statistic: r.name(`${arg}.statistic`, c.statistic, [
        "token",
        "seq_sum",
        "seq_mean",
        "seq_max",
      ] as const),
      estimator: r.name(`${arg}.estimator`, c.estimator, ["k1", "k2", "k3"] as const),
      lower: r.numberOrNull(`${arg}.lower`, c.lower),
      upper: r.number(`${arg}.upper`, c.upper),
      logClamp: r.numberOrNull(`${arg}.log_clamp`, c.log_clamp),
    });
  });
}

/**
 * Map a {@link PolicyLossConfig} to polgrad's snake_case config JSON, every nullable field
 * explicit (the inverse of {@link parsePolicyLossConfig}).
 *
 * Format: as {@link parsePolicyLossConfig}; omitted optional fields become `null`.
 *
 * @param config - The config (not validated; values are copied as they are).
 * @returns A plain JSON-ready object.
 * @derivation docs/io.md#config-json
 * @enforcedBy test/io/configJson.test.ts > policyLossConfigToJson > identity: parse after toJson returns the config
 * @since 0.1.0
 */
export function policyLossConfigToJson(config: PolicyLossConfig): PolicyLossConfigJson {
  requireObject("policyLossConfigToJson", "config", config, "a PolicyLossConfig", [
    "ratio",
    "surrogate",
    "aggregation",
  ]);
  const { clip = null, isCorrection = null, kl = null } = config;
  return {
    ratio: config.ratio,
    surrogate: config.surrogate,
    clip:
      clip === null
        ? null
        : {
            eps_low: clip.epsLow ?? null,
            eps_high: clip.epsHigh ?? null,
            ratio_cap: clip.ratioCap ?? null,
          },
    aggregation: config.aggregation,
    norm_len: config.normLen ?? null,
    is_correction: isCorrection === null ? null : isCorrectionJson(isCorrection),
    kl:
      kl === null
        ? null
        : {
            kind: kl.kind,
            coef: kl.coef,
            aggregation: kl.aggregation ?? null,
            norm_len: kl.normLen ?? null,
            // Ours (polgrad 0.2.0 has neither): written only when they say something.
            ...(kl.clamp === undefined || kl.clamp === null
              ? {}
              : { clamp: { delta: kl.clamp.delta ?? null, value: kl.clamp.value ?? null } }),
            ...(kl.gradient === undefined || kl.gradient === "pathwise"
              ? {}
              : { gradient: kl.gradient }),
            ...(kl.weight === undefined || kl.weight === null ? {} : { weight: kl.weight }),
          },
    // Ours (polgrad 0.2.0 rejects such rows): written only when it is not the default.
    ...(config.emptyRows === undefined || config.emptyRows === "reject"
      ? {}
      : { empty_rows: config.emptyRows }),
    ...(config.rejection === undefined || config.rejection === null
      ? {}
      : {
          rejection: config.rejection.map((x) => ({
            statistic: x.statistic,
            estimator: x.estimator,
            lower: x.lower ?? null,
            upper: x.upper,
            log_clamp: x.logClamp ?? null,
          })),
        }),
    // Ours: the log-ratio clamp and the newer surrogates' settings, written only when set.
    ...(config.ratioClamp === undefined || config.ratioClamp === null
      ? {}
      : {
          ratio_clamp: {
            level: config.ratioClamp.level,
            lower: config.ratioClamp.lower ?? null,
            upper: config.ratioClamp.upper ?? null,
            ...(config.ratioClamp.signAware === true ? { sign_aware: true } : {}),
          },
        }),
    ...(config.offPolicyMask === undefined || config.offPolicyMask === null
      ? {}
      : {
          off_policy_mask: {
            threshold: config.offPolicyMask.threshold,
            sampling: config.offPolicyMask.sampling ?? "old",
          },
        }),
    ...(config.cispo === undefined || config.cispo === null
      ? {}
      : { cispo: { cap: config.cispo.cap } }),
    ...(config.vespo === undefined || config.vespo === null
      ? {}
      : {
          vespo: {
            k_pos: config.vespo.kPos ?? null,
            lambda_pos: config.vespo.lambdaPos ?? null,
            k_neg: config.vespo.kNeg ?? null,
            lambda_neg: config.vespo.lambdaNeg ?? null,
          },
        }),
    ...(config.sapo === undefined || config.sapo === null
      ? {}
      : { sapo: { tau_pos: config.sapo.tauPos ?? null, tau_neg: config.sapo.tauNeg ?? null } }),
    ...(config.dro === undefined || config.dro === null ? {} : { dro: { beta: config.dro.beta } }),
    ...(config.dppo === undefined || config.dppo === null
      ? {}
      : {
          dppo: {
            divergence: config.dppo.divergence,
            low: config.dppo.low,
            high: config.dppo.high,
            truncation: config.dppo.truncation ?? null,
          },
        }),
    ...(config.ipo === undefined || config.ipo === null
      ? {}
      : { ipo: { threshold: config.ipo.threshold } }),
    ...(config.rowEpsilon === undefined || config.rowEpsilon === null
      ? {}
      : { row_epsilon: config.rowEpsilon }),
    ...(config.topEntropyQuantile === undefined || config.topEntropyQuantile === null
      ? {}
      : { top_entropy_quantile: config.topEntropyQuantile }),
    ...(config.entropyBonus === undefined || config.entropyBonus === null
      ? {}
      : {
          entropy_bonus: {
            coef: config.entropyBonus.coef,
            aggregation: config.entropyBonus.aggregation ?? null,
            norm_len: config.entropyBonus.normLen ?? null,
          },
        }),
  };
}

/**
 * The JSON form of PAPO settings, the `perception` block of a loss config, with TRL's
 * `PAPOConfig` / `GRPOConfig` field names (docs/porting.md#papo-settings maps them to the
 * official code's and to {@link PapoSettings}).
 */
export interface PerceptionJson {
  /** The preset the block started from, or null. */
  readonly preset: PapoPreset | null;
  /** `"trl"` or `"official"`. */
  readonly form: PapoForm;
  /** γ. */
  readonly perception_loss_weight: number;
  /** The upper clamp of the per-token k3, or null for none. */
  readonly perception_kl_clip: number | null;
  /** η1, or null (with η2) for no double-entropy term. */
  readonly der_loss_weight1: number | null;
  /** η2, or null (with η1) for no double-entropy term. */
  readonly der_loss_weight2: number | null;
  /** β, or null: the parent's KL term is kept as it is. */
  readonly beta: number | null;
}

/** What {@link parseLossConfig} returns. */
export interface LossConfigFromJson {
  /** The parent policy-loss config, with β applied when the perception block sets it. */
  readonly policy: PolicyLossConfig;
  /** The PAPO config, or null when there is no perception block. */
  readonly papo: PapoConfig | null;
  /** The perception block as resolved (preset, then explicit fields), or null. */
  readonly perception: PerceptionJson | null;
}

const PERCEPTION_KEYS = [
  "preset",
  "form",
  "perception_loss_weight",
  "perception_kl_clip",
  "der_loss_weight1",
  "der_loss_weight2",
  "beta",
] as const;

/** Names users bring from the papers, the official code or polgrad's camelCase config. */
const PERCEPTION_ALIASES: Readonly<Record<string, string>> = {
  gamma: "perception_loss_weight",
  kl_prcp_coef: "perception_loss_weight",
  clip: "perception_kl_clip",
  use_kl_prcp_clipping: "perception_kl_clip",
  eta1: "der_loss_weight1",
  eta2: "der_loss_weight2",
  kl_coef: "beta",
  kl_loss_coef: "beta",
};

/** TRL `PAPOConfig` fields that shape the masked images, not the loss. */
const IMAGE_KEYS: readonly string[] = ["mask_ratio", "mask_type"];

function perceptionOf(
  r: Reader,
  v: unknown,
  kl: { readonly given: boolean; readonly value: unknown },
): PerceptionJson {
  const arg = "config.perception";
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    const image = Object.keys(v).find((k) => IMAGE_KEYS.includes(k));
    if (image !== undefined) {
      throw r.fail(
        `${arg}.${image}`,
        `absent: ${image} shapes the masked images, which the batch's masked_logprobs already reflect; it is no loss setting`,
        (v as Obj)[image],
      );
    }
  }
  const c = r.object(arg, v, PERCEPTION_KEYS, { aliases: PERCEPTION_ALIASES });
  const preset =
    c.preset === undefined || c.preset === null
      ? null
      : r.name(`${arg}.preset`, c.preset, PAPO_PRESET_NAMES);
  const base: PapoSettings | null = preset === null ? null : PAPO_PRESETS[preset];
  const required = (key: string): never => {
    throw r.fail(`${arg}.${key}`, "given (it is required without a preset)", undefined);
  };
  const form: PapoForm =
    c.form !== undefined
      ? r.name(`${arg}.form`, c.form, PAPO_FORMS)
      : (base?.perception.form ?? required("form"));
  const gamma =
    c.perception_loss_weight !== undefined
      ? (r.nonNegative(`${arg}.perception_loss_weight`, c.perception_loss_weight) as number)
      : (base?.perception.gamma ?? required("perception_loss_weight"));
  let clip = base?.perception.clip ?? null;
  if (c.perception_kl_clip !== undefined) {
    const x = c.perception_kl_clip;
    if (x !== null && (typeof x !== "number" || !Number.isFinite(x) || x <= 0))
      throw r.fail(`${arg}.perception_kl_clip`, "a finite number > 0 or null (no clamp)", x);
    clip = x;
  }
  const eta = (key: "der_loss_weight1" | "der_loss_weight2", preset: number | null) =>
    c[key] !== undefined
      ? r.nonNegative(`${arg}.${key}`, c[key], "no double-entropy term")
      : preset;
  const eta1 = eta("der_loss_weight1", base?.doubleEntropy?.eta1 ?? null);
  const eta2 = eta("der_loss_weight2", base?.doubleEntropy?.eta2 ?? null);
  if ((eta1 === null) !== (eta2 === null)) {
    const [missing, other] =
      eta1 === null
        ? ["der_loss_weight1", "der_loss_weight2"]
        : ["der_loss_weight2", "der_loss_weight1"];
    throw r.failText(
      `${arg}.${missing}`,
      `a finite number >= 0 when ${other} is set (the double-entropy term has both weights; null for both turns it off)`,
      c[missing] === undefined
        ? `nothing${preset === null ? "" : ` (preset ${preset} has none)`}`
        : fmtValue(c[missing]),
    );
  }
  let beta = base?.beta ?? null;
  if (c.beta !== undefined) {
    beta = r.nonNegative(`${arg}.beta`, c.beta, "keep the parent's KL term");
    if (beta !== null && kl.given) {
      throw r.failText(
        `${arg}.beta`,
        "absent when config.kl is given (β is the coefficient of the k3 KL term that config.kl describes; give it once)",
        `beta ${fmtValue(beta)} and kl ${fmtValue(kl.value)}`,
      );
    }
  } else if (kl.given) {
    // An explicit config.kl outranks a preset's β.
    beta = null;
  }
  return {
    preset,
    form,
    perception_loss_weight: gamma,
    perception_kl_clip: clip,
    der_loss_weight1: eta1,
    der_loss_weight2: eta2,
    beta,
  };
}

/**
 * The {@link PapoSettings} a resolved perception block stands for.
 *
 * @derivation docs/io.md#perception-block
 * @enforcedBy test/io/configJson.perception.test.ts > parseLossConfig > golden: each preset's constants land in the papo config
 * @since 0.3.0
 */
export function perceptionSettings(p: PerceptionJson): PapoSettings {
  requireObject("perceptionSettings", "p", p, "a perception block (PerceptionJson)", [
    "form",
    "perception_loss_weight",
    "beta",
  ]);
  const doubleEntropy: DoubleEntropyConfig | null =
    p.der_loss_weight1 === null || p.der_loss_weight2 === null
      ? null
      : { eta1: p.der_loss_weight1, eta2: p.der_loss_weight2 };
  return {
    perception: { gamma: p.perception_loss_weight, clip: p.perception_kl_clip, form: p.form },
    doubleEntropy,
    beta: p.beta,
  };
}

/**
 * The perception block of given PAPO settings (the inverse of {@link perceptionSettings}).
 *
 * @derivation docs/io.md#perception-block
 * @enforcedBy test/io/configJson.perception.test.ts > parseLossConfig > identity: the resolved block parses back to the same papo config
 * @since 0.3.0
 */
export function perceptionToJson(
  settings: PapoSettings,
  preset: PapoPreset | null,
): PerceptionJson {
  requireObject(
    "perceptionToJson",
    "settings",
    settings,
    "PapoSettings {perception, doubleEntropy, beta}",
    ["perception", "beta"],
  );
  requireObject(
    "perceptionToJson",
    "settings.perception",
    settings.perception,
    "{gamma, clip, form}",
    ["gamma", "form"],
  );
  if (preset !== null) requireString("perceptionToJson", "preset", preset, "a preset name or null");
  return {
    preset,
    form: settings.perception.form,
    perception_loss_weight: settings.perception.gamma,
    perception_kl_clip: settings.perception.clip ?? null,
    der_loss_weight1: settings.doubleEntropy?.eta1 ?? null,
    der_loss_weight2: settings.doubleEntropy?.eta2 ?? null,
    beta: settings.beta,
  };
}

/**
 * Map a loss config JSON, optionally with a `perception` block, to a policy-loss config and, with
 * the block, a {@link PapoConfig} (docs/io.md#perception-block).
 *
 * Format without `parent`: the keys of {@link parsePolicyLossConfig} plus `perception`. With
 * `parent` (from `--algorithm papo_g|papo_d`): `{perception}` only. The block
 * `{preset?, form, perception_loss_weight, perception_kl_clip?, der_loss_weight1?,
 * der_loss_weight2?, beta?}` starts from the preset's settings (PAPO_PRESETS) and each key given
 * overrides it; without a preset `form` and `perception_loss_weight` are required, the others
 * default to null. β replaces the parent's KL term (withPapoSettings); an explicit `config.kl`
 * outranks a preset's β, and `beta` together with `config.kl` is an error. Values are checked
 * here (γ, η, β finite ≥ 0; the clamp finite > 0 or null; η1 and η2 both set or both null).
 *
 * @param json - The parsed JSON value.
 * @param source - Where it came from, quoted in error messages.
 * @param parent - The parent config and its algorithm's name, when the parent comes from the
 *   registry; the JSON then holds only the perception block.
 * @returns The parent (β applied), the PAPO config (or null) and the resolved block (or null).
 * @throws {ConfigError} E_CONFIG for an unknown key (did-you-mean, also for the official code's
 *   and the paper's names), a missing required key, a wrong JSON type, a value out of range, an
 *   image-masking key, or β given twice, naming the field path.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown preset, form, or policy-loss name.
 * @derivation docs/io.md#perception-block
 * @enforcedBy test/io/configJson.perception.test.ts > parseLossConfig > golden: each preset's constants land in the papo config
 * @enforcedBy test/io/configJson.perception.test.ts > parseLossConfig > golden: explicit fields override the preset
 * @enforcedBy test/io/configJson.perception.test.ts > parseLossConfig > rejects: unknown keys with a suggestion, including the official and paper names
 * @enforcedBy test/io/configJson.perception.test.ts > parseLossConfig > rejects: ill-typed and out-of-range values naming the field path
 * @since 0.3.0
 */
export function parseLossConfig(
  json: unknown,
  source: string,
  parent?: { readonly config: PolicyLossConfig; readonly name: string },
): LossConfigFromJson {
  requireString("parseLossConfig", "source", source);
  if (parent !== undefined) {
    requireObject("parseLossConfig", "parent", parent, "{config, name}", ["config", "name"]);
    requireString("parseLossConfig", "parent.name", parent.name);
  }
  const r = new Reader("parseLossConfig", source);
  let policy: PolicyLossConfig;
  let block: unknown;
  let kl: { given: boolean; value: unknown } = { given: false, value: undefined };
  if (parent !== undefined) {
    const c = r.object("config", json, ["perception"], {
      note: ` (the parent's settings come from ${parent.name})`,
    });
    if (c.perception === undefined || c.perception === null)
      throw r.fail("config.perception", `a perception block (with ${parent.name})`, c.perception);
    policy = parent.config;
    block = c.perception;
  } else {
    const c = r.object("config", json, [...POLICY_KEYS, "perception"]);
    policy = policyOf(r, c);
    if (c.perception === undefined || c.perception === null)
      return { policy, papo: null, perception: null };
    block = c.perception;
    kl = { given: Object.hasOwn(c, "kl"), value: c.kl };
  }
  const perception = perceptionOf(r, block, kl);
  const papo = withPapoSettings(policy, perceptionSettings(perception));
  const { perception: _p, doubleEntropy: _d, ...parentFields } = papo;
  return { policy: Object.freeze(parentFields), papo, perception: Object.freeze(perception) };
}
