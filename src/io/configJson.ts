/**
 * polgrad's snake_case config JSON ↔ the camelCase {@link PolicyLossConfig}
 * (docs/io.md#config-json). Parsing checks keys and JSON types (and mode names, so the result is
 * well typed); value rules (eps > 0, norm_len a positive integer, …) are left to the losses'
 * validation at call entry, exactly as for a config built in code.
 */
import { AGGREGATIONS, type Aggregation } from "../aggregate/aggregation.js";
import { fmtValue, mustBe } from "../core/message.js";
import { closestNames, didYouMean, oneOf } from "../core/names.js";
import { ConfigError, UnknownNameError } from "../errors.js";
import { KL_ESTIMATORS, type KLLossConfig } from "../kl/estimator.js";
import {
  type ClipConfig,
  type ISCorrectionConfig,
  type PolicyLossConfig,
  RATIO_KINDS,
  SURROGATE_KINDS,
} from "../losses/config.js";

export { readJsonFile } from "./readJsonFile.js";

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
  readonly is_correction: { readonly cap: number; readonly level: string } | null;
  readonly kl: {
    readonly kind: string;
    readonly coef: number;
    readonly aggregation: string | null;
    readonly norm_len: number | null;
  } | null;
}

type Obj = Record<string, unknown>;

class Reader {
  constructor(
    readonly fn: string,
    readonly source: string,
  ) {}

  fail(arg: string, rule: string, actual: unknown): ConfigError {
    return new ConfigError(
      this.fn,
      arg,
      `${mustBe(this.fn, arg, rule, actual === undefined ? "nothing (the key is missing)" : fmtValue(actual))} (in ${this.source})`,
    );
  }

  object(arg: string, v: unknown, keys: readonly string[]): Obj {
    if (typeof v !== "object" || v === null || Array.isArray(v))
      throw this.fail(arg, "a JSON object", v);
    for (const k of Object.keys(v)) {
      if (keys.includes(k)) continue;
      const near = closestNames(k, keys);
      const hint = didYouMean(near);
      throw new ConfigError(
        this.fn,
        `${arg}.${k}`,
        `${mustBe(this.fn, arg, `an object with keys among ${keys.join(", ")}`, `unknown key ${JSON.stringify(k)}${hint}`)} (in ${this.source})`,
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
  const c = r.object("config.is_correction", v, ["cap", "level"]);
  const level =
    c.level === undefined
      ? "token"
      : r.name("config.is_correction.level", c.level, ["token", "sequence"] as const);
  return Object.freeze({ cap: r.number("config.is_correction.cap", c.cap), level });
}

function klOf(r: Reader, v: unknown): KLLossConfig | null {
  if (v === undefined || v === null) return null;
  const c = r.object("config.kl", v, ["kind", "coef", "aggregation", "norm_len"]);
  const aggregation: Aggregation | null =
    c.aggregation === undefined || c.aggregation === null
      ? null
      : r.name("config.kl.aggregation", c.aggregation, AGGREGATIONS);
  return Object.freeze({
    kind: r.name("config.kl.kind", c.kind, KL_ESTIMATORS),
    coef: r.number("config.kl.coef", c.coef),
    aggregation,
    normLen: r.numberOrNull("config.kl.norm_len", c.norm_len),
  });
}

/**
 * Map polgrad's snake_case config JSON to a {@link PolicyLossConfig}.
 *
 * Format: `{ratio, surrogate, clip: {eps_low, eps_high, ratio_cap} | null, aggregation,
 * norm_len, is_correction: {cap, level} | null, kl: {kind, coef, aggregation, norm_len} | null}`;
 * nullable fields may be omitted (→ null; `is_correction.level` → "token").
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
  const r = new Reader("parsePolicyLossConfig", source);
  const c = r.object("config", json, [
    "ratio",
    "surrogate",
    "clip",
    "aggregation",
    "norm_len",
    "is_correction",
    "kl",
  ]);
  return Object.freeze({
    ratio: r.name("config.ratio", c.ratio, RATIO_KINDS),
    surrogate: r.name("config.surrogate", c.surrogate, SURROGATE_KINDS),
    clip: clipOf(r, c.clip),
    aggregation: r.name("config.aggregation", c.aggregation, AGGREGATIONS),
    normLen: r.numberOrNull("config.norm_len", c.norm_len),
    isCorrection: isCorrectionOf(r, c.is_correction),
    kl: klOf(r, c.kl),
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
    is_correction:
      isCorrection === null ? null : { cap: isCorrection.cap, level: isCorrection.level },
    kl:
      kl === null
        ? null
        : {
            kind: kl.kind,
            coef: kl.coef,
            aggregation: kl.aggregation ?? null,
            norm_len: kl.normLen ?? null,
          },
  };
}
