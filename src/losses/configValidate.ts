/**
 * Validate a {@link PolicyLossConfig} and resolve its defaults for the kernel: one generic walk over
 * the field table (losses/config.ts: each value's kind and rule, each default, each
 * surrogate's settings only with that surrogate), then the named rules that tie fields together
 * (docs/derivations/losses.md#config-validation).
 */
import { Aggregation, checkAggregation } from "../aggregate/aggregation.js";
import { checkNormLen } from "../aggregate/effectiveTokenWeights.js";
import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { ConfigError, fail } from "../errors.js";
import type { KLLossConfig } from "../kl/estimator.js";
import {
  type ISLevel,
  type ISMode,
  NUMBER_RULES,
  type ObjectSpec,
  POLICY_LOSS_FIELD_KEYS,
  POLICY_LOSS_FIELDS,
  type PolicyLossConfig,
  type PolicyLossField,
  type RatioKind,
  type RejectionRule,
  type ResolvedISCorrection,
  type ResolvedPolicyLossConfig,
  type SubField,
  type SurrogateKind,
  type ValueSpec,
} from "./config.js";
import { SURROGATES } from "./kernel/points.js";

type Obj = Readonly<Record<string, unknown>>;

const isSet = (x: unknown): boolean => x !== null && x !== undefined;

/** A set value checked against its spec; objects come back with every sub-field's default filled. */
function checkValue(fn: string, arg: string, spec: ValueSpec, v: unknown): unknown {
  switch (spec.kind) {
    case "name":
      return oneOf(fn, arg, v, spec.names);
    case "number": {
      const rule = NUMBER_RULES[spec.rule];
      if (typeof v !== "number" || !rule.ok(v))
        throw fail(ConfigError, fn, arg, rule.text, fmtValue(v));
      return v;
    }
    case "boolean":
      if (typeof v !== "boolean") throw fail(ConfigError, fn, arg, "true or false", fmtValue(v));
      return v;
    case "object":
      return checkObject(fn, arg, spec, v, `${spec.what} or null`);
    case "list": {
      if (!Array.isArray(v) || v.length === 0)
        throw fail(ConfigError, fn, arg, `${spec.what} or null`, fmtValue(v));
      return v.map((x, j) => checkObject(fn, `${arg}[${j}]`, spec.item, x, spec.item.what));
    }
  }
}

function checkObject(fn: string, arg: string, spec: ObjectSpec, v: unknown, what: string): Obj {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw fail(ConfigError, fn, arg, what, fmtValue(v));
  const o = v as Obj;
  const out: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(spec.fields)) out[k] = checkSub(fn, `${arg}.${k}`, f, o[k]);
  return out;
}

/** A field's value, or its default; a required one (or a nullable one left out) is an error. */
function checkSub(fn: string, arg: string, f: SubField, x: unknown): unknown {
  if (isSet(x)) return checkValue(fn, arg, f.value, x);
  if (f.presence === "required") {
    if (f.value.kind === "name") return oneOf(fn, arg, x, f.value.names);
    const rule = f.value.kind === "number" ? NUMBER_RULES[f.value.rule].text : "given";
    throw fail(ConfigError, fn, arg, rule, fmtValue(x));
  }
  if (f.presence === "nullable" && x === undefined) {
    const rule = f.value.kind === "number" ? NUMBER_RULES[f.value.rule].text : "given";
    throw fail(ConfigError, fn, arg, `${rule}, or null for no bound`, "undefined");
  }
  return f.default;
}

/**
 * The generic walk: every field of the table, in wire order, checked by its spec (a surrogate's
 * settings only with that surrogate, and filled with their defaults when it runs without them).
 */
function walkFields(
  fn: string,
  config: PolicyLossConfig,
): Readonly<Record<PolicyLossField, unknown>> {
  const out = {} as Record<PolicyLossField, unknown>;
  const surrogate = oneOf(fn, "config.surrogate", config.surrogate, SURROGATE_NAMES);
  for (const k of POLICY_LOSS_FIELD_KEYS) {
    const f = POLICY_LOSS_FIELDS[k];
    const arg = `config.${k}`;
    const v: unknown = config[k];
    if (f.owner !== "all" && f.owner !== surrogate) {
      if (isSet(v))
        throw fail(
          ConfigError,
          fn,
          arg,
          `null when surrogate is "${surrogate}" (it is "${f.owner}"'s)`,
          fmtValue(v),
        );
      out[k] = null;
      continue;
    }
    if (f.owner !== "all" && !isSet(v)) {
      if (f.requiredWithOwner === true)
        throw fail(
          ConfigError,
          fn,
          arg,
          `${(f.value as ObjectSpec).what} when surrogate is "${f.owner}"`,
          fmtValue(v),
        );
      const all = Object.values((f.value as ObjectSpec).fields).every(
        (s) => s.presence === "optional",
      );
      out[k] = all ? checkObject(fn, arg, f.value as ObjectSpec, {}, "") : null;
      continue;
    }
    out[k] = checkSub(fn, arg, f, v);
  }
  return out;
}

const SURROGATE_NAMES = (POLICY_LOSS_FIELDS.surrogate.value as { names: readonly SurrogateKind[] })
  .names;

/**
 * The clip band per surrogate (polgrad's rules): pg_clip needs both ε; cispo needs ε_high and no
 * dual clip, or `config.cispo`'s absolute cap and no clip; every other surrogate, no clip.
 */
function clipBand(
  fn: string,
  surrogate: SurrogateKind,
  clip: Obj | null,
  cispo: Obj | null,
): Pick<ResolvedPolicyLossConfig, "lo" | "hi" | "cap" | "oneSided"> {
  const lo = clip !== null && isSet(clip.epsLow) ? 1 - (clip.epsLow as number) : 0;
  const hi = clip !== null && isSet(clip.epsHigh) ? 1 + (clip.epsHigh as number) : 0;
  if (surrogate === "pg_clip") {
    if (clip === null || !isSet(clip.epsLow) || !isSet(clip.epsHigh))
      throw fail(
        ConfigError,
        fn,
        "config.clip",
        'a ClipConfig with epsLow and epsHigh set when surrogate is "pg_clip"',
        fmtValue(clip),
      );
    return {
      lo,
      hi,
      cap: isSet(clip.ratioCap) ? (clip.ratioCap as number) : null,
      oneSided: false,
    };
  }
  if (surrogate === "cispo" && cispo !== null) {
    // TRL's loss_type="cispo": the weight is min(r, ε_max) with ε_max absolute (its default,
    // epsilon_high = epsilon = 0.2, caps every weight at 0.2): not 1 + ε of a clip band.
    if (clip !== null)
      throw fail(
        ConfigError,
        fn,
        "config.clip",
        "null when config.cispo sets the absolute cap",
        fmtValue(clip),
      );
    return { lo: 0, hi: cispo.cap as number, cap: null, oneSided: true };
  }
  if (surrogate === "cispo") {
    if (clip === null || !isSet(clip.epsHigh))
      throw fail(
        ConfigError,
        fn,
        "config.clip",
        'a ClipConfig with epsHigh set when surrogate is "cispo"',
        fmtValue(clip),
      );
    if (isSet(clip.ratioCap))
      throw fail(
        ConfigError,
        fn,
        "config.clip.ratioCap",
        'null when surrogate is "cispo" (CISPO has no dual clip)',
        fmtValue(clip.ratioCap),
      );
    return { lo, hi, cap: null, oneSided: !isSet(clip.epsLow) };
  }
  if (clip !== null)
    throw fail(
      ConfigError,
      fn,
      "config.clip",
      `null when surrogate is "${surrogate}"`,
      fmtValue(clip),
    );
  return { lo: 0, hi: 0, cap: null, oneSided: false };
}

/** A lower bound at most its upper one (`upperName`: `cap`, or a rejection rule's `upper`). */
function lowerAtMost(
  fn: string,
  arg: string,
  lower: unknown,
  upper: unknown,
  upperName = "cap",
): void {
  if (isSet(lower) && isSet(upper) && (lower as number) > (upper as number))
    throw fail(
      ConfigError,
      fn,
      `${arg}.lower`,
      `at most ${arg}.${upperName} = ${upper}`,
      fmtValue(lower),
    );
}

/** The IS correction, resolved: lower ≤ cap; a row mask with a bound at least. */
function resolveIS(fn: string, c: Obj): ResolvedISCorrection {
  const arg = "config.isCorrection";
  lowerAtMost(fn, arg, c.lower, c.cap);
  let rowMask: ResolvedISCorrection["rowMask"] = null;
  if (c.rowMask !== null) {
    const r = c.rowMask as Obj;
    const at = `${arg}.rowMask`;
    if (!isSet(r.cap) && !isSet(r.lower))
      throw fail(
        ConfigError,
        fn,
        `${at}.cap`,
        "set, or lower set (a row mask with neither bound masks nothing)",
        "null",
      );
    lowerAtMost(fn, at, r.lower, r.cap);
    rowMask = {
      level: r.level as "sequence" | "geometric",
      lower: (r.lower as number | null) ?? 0,
      cap: (r.cap as number | null) ?? Number.POSITIVE_INFINITY,
    };
  }
  return {
    level: c.level as ISLevel,
    mode: c.mode as ISMode,
    lower: (c.lower as number | null) ?? 0,
    cap: (c.cap as number | null) ?? Number.POSITIVE_INFINITY,
    logClamp: (c.logClamp as number | null) ?? Number.POSITIVE_INFINITY,
    normalize: c.normalize as boolean,
    div: 1,
    rowMask,
  };
}

/** Rejection rules: k1 compares ratio bounds in log space (both needed), k2 and k3 an upper only. */
function resolveRejection(
  fn: string,
  rules: readonly Obj[],
): ResolvedPolicyLossConfig["rejection"] {
  return rules.map((r, j) => {
    const at = `config.rejection[${j}]`;
    const estimator = r.estimator as RejectionRule["estimator"];
    if (estimator === "k1") {
      if (!isSet(r.lower))
        throw fail(ConfigError, fn, `${at}.lower`, NUMBER_RULES.positive.text, fmtValue(r.lower));
      lowerAtMost(fn, at, r.lower, r.upper, "upper");
    } else if (isSet(r.lower)) {
      throw fail(
        ConfigError,
        fn,
        `${at}.lower`,
        `null for ${estimator} (an upper bound only)`,
        fmtValue(r.lower),
      );
    }
    if (r.statistic === "seq_max" && estimator === "k1")
      throw fail(ConfigError, fn, `${at}.estimator`, "k2 or k3 with seq_max", "k1");
    return {
      statistic: r.statistic as RejectionRule["statistic"],
      estimator,
      lower: estimator === "k1" ? (r.lower as number) : 0,
      upper: r.upper as number,
      logClamp: (r.logClamp as number | null) ?? Number.POSITIVE_INFINITY,
    };
  });
}

/** A ratio clamp: a bound at least, lower < upper, row level with a sequence ratio, sign-aware per token. */
function resolveRatioClamp(
  fn: string,
  c: Obj,
  ratio: RatioKind,
): NonNullable<ResolvedPolicyLossConfig["ratioClamp"]> {
  const arg = "config.ratioClamp";
  const lower = c.lower as number | null;
  const upper = c.upper as number | null;
  if (lower === null && upper === null)
    throw fail(ConfigError, fn, arg, "a clamp with a lower or an upper bound", "neither");
  if (lower !== null && upper !== null && !(lower < upper))
    throw fail(ConfigError, fn, `${arg}.upper`, `above ${arg}.lower = ${lower}`, fmtValue(upper));
  if (c.level === "row" && ratio === "token")
    throw fail(
      ConfigError,
      fn,
      `${arg}.level`,
      '"token" when config.ratio is "token" (a token ratio has no row log-ratio)',
      '"row"',
    );
  if (c.signAware === true && c.level === "row")
    throw fail(
      ConfigError,
      fn,
      `${arg}.signAware`,
      'false when the level is "row" (the sign is a token\'s advantage)',
      "true",
    );
  return {
    level: c.level as "token" | "row",
    lower: lower ?? Number.NEGATIVE_INFINITY,
    upper: upper ?? Number.POSITIVE_INFINITY,
    signAware: c.signAware as boolean,
  };
}

/** The KL term: its aggregation and normLen inherited from the loss when absent. */
function resolveKl(
  fn: string,
  k: Obj,
  config: PolicyLossConfig,
  aggregation: Aggregation,
): ResolvedPolicyLossConfig["kl"] {
  const klAgg = isSet(k.aggregation) ? (k.aggregation as Aggregation) : aggregation;
  const normLen = checkNormLen(
    fn,
    klAgg,
    isSet(k.normLen) ? k.normLen : config.normLen,
    "config.kl.normLen",
  );
  const clamp = k.clamp as Obj | null;
  return {
    kind: k.kind as KLLossConfig["kind"],
    coef: k.coef as number,
    aggregation: klAgg,
    normLen,
    clampDelta: (clamp?.delta as number | null | undefined) ?? Number.POSITIVE_INFINITY,
    clampValue: (clamp?.value as number | null | undefined) ?? Number.POSITIVE_INFINITY,
    straight: k.gradient === "straight_through",
    weight: (k.weight as KLLossConfig["weight"]) ?? "none",
  };
}

/** The row ε: only where a row divisor exists (seq_mean_token_mean in the loss or its KL term). */
function resolveRowEpsilon(
  fn: string,
  e: number,
  aggregation: Aggregation,
  kl: ResolvedPolicyLossConfig["kl"],
): number {
  if (
    e !== 0 &&
    aggregation !== Aggregation.SEQ_MEAN_TOKEN_MEAN &&
    kl?.aggregation !== Aggregation.SEQ_MEAN_TOKEN_MEAN
  )
    throw fail(
      ConfigError,
      fn,
      "config.rowEpsilon",
      "0 or null unless the loss or its KL term aggregates seq_mean_token_mean (the only mode with a row divisor)",
      fmtValue(e),
    );
  return e;
}

/**
 * The chosen surrogate's settings block (the table's field it owns, checked, defaults filled), and
 * VESPO's row-weight constants (λ floored at 1e-4, as TRL does) for the kernel's row stage.
 */
function surrogateSettings(
  surrogate: SurrogateKind,
  f: Readonly<Record<PolicyLossField, unknown>>,
): Pick<ResolvedPolicyLossConfig, "settings" | "vespo"> {
  const owned = POLICY_LOSS_FIELD_KEYS.find((k) => POLICY_LOSS_FIELDS[k].owner === surrogate);
  const settings = owned === undefined ? null : (f[owned] as Obj | null);
  const vespo = surrogate === "vespo" ? (settings as Obj) : null;
  return {
    settings,
    vespo:
      vespo === null
        ? null
        : {
            kPos: vespo.kPos as number,
            lambdaPos: Math.max(vespo.lambdaPos as number, 1e-4),
            kNeg: vespo.kNeg as number,
            lambdaNeg: Math.max(vespo.lambdaNeg as number, 1e-4),
          },
  };
}

/** The rules between two resolved parts: no ratio clamp under a ratio-weighted KL term; VESPO's IS per token. */
function pairRules(
  fn: string,
  config: PolicyLossConfig,
  surrogate: SurrogateKind,
  kl: ResolvedPolicyLossConfig["kl"],
  isCorrection: ResolvedISCorrection | null,
  ratioClamp: ResolvedPolicyLossConfig["ratioClamp"],
): void {
  if (ratioClamp !== null && kl !== null && kl.weight !== "none")
    throw fail(
      ConfigError,
      fn,
      "config.ratioClamp",
      "null when config.kl.weight is set (the KL weight's ratio is the unclamped exp(lp − old))",
      fmtValue(config.ratioClamp),
    );
  if (surrogate === "vespo" && isCorrection !== null && isCorrection.level !== "token")
    throw fail(
      ConfigError,
      fn,
      "config.isCorrection.level",
      '"token" when surrogate is "vespo" (TRL folds its per-token IS ratio into the gamma weight)',
      fmtValue(isCorrection.level),
    );
}

/** The entropy bonus: token_mean unless it says otherwise, normLen inherited from the loss. */
function resolveEntropyBonus(
  fn: string,
  bonus: Obj | null,
  config: PolicyLossConfig,
): ResolvedPolicyLossConfig["entropyBonus"] {
  if (bonus === null) return null;
  const aggregation = (bonus.aggregation as Aggregation | null) ?? Aggregation.TOKEN_MEAN;
  const normLen = isSet(bonus.normLen) ? bonus.normLen : config.normLen;
  return {
    coef: bonus.coef as number,
    aggregation,
    normLen: checkNormLen(fn, aggregation, normLen, "config.entropyBonus.normLen"),
  };
}

/**
 * Validate a policy-loss config and resolve its defaults: the field table's walk (kinds, rules,
 * defaults, each surrogate's settings only with it), then the named rules — the clip band per
 * surrogate, token-only surrogates, bounds in order, the ratio clamp's level, normLen against the
 * aggregation, the KL term's inherited aggregation, the row ε's aggregation, VESPO's token-level
 * IS, and no ratio clamp under a ratio-weighted KL term.
 * @internal
 */
export function validatePolicyLossConfig(
  fn: string,
  config: PolicyLossConfig,
): ResolvedPolicyLossConfig {
  if (typeof config !== "object" || config === null || Array.isArray(config))
    throw fail(ConfigError, fn, "config", "a PolicyLossConfig object", fmtValue(config));
  const ratio = oneOf(
    fn,
    "config.ratio",
    config.ratio,
    (POLICY_LOSS_FIELDS.ratio.value as { names: readonly RatioKind[] }).names,
  );
  const f = walkFields(fn, config);
  const surrogate = f.surrogate as SurrogateKind;
  const band = clipBand(fn, surrogate, f.clip as Obj | null, f.cispo as Obj | null);
  const why = SURROGATES[surrogate].tokenRatioOnly;
  if (why !== null && ratio !== "token")
    throw fail(
      ConfigError,
      fn,
      "config.ratio",
      `"token" when surrogate is "${surrogate}" (${why})`,
      fmtValue(ratio),
    );
  const aggregation = checkAggregation(fn, "config.aggregation", f.aggregation);
  const normLen = checkNormLen(fn, aggregation, config.normLen, "config.normLen");
  const kl = f.kl === null ? null : resolveKl(fn, f.kl as Obj, config, aggregation);
  const isCorrection = f.isCorrection === null ? null : resolveIS(fn, f.isCorrection as Obj);
  const ratioClamp =
    f.ratioClamp === null ? null : resolveRatioClamp(fn, f.ratioClamp as Obj, ratio);
  pairRules(fn, config, surrogate, kl, isCorrection, ratioClamp);
  const opm = f.offPolicyMask as Obj | null;
  return {
    ratio,
    surrogate,
    ...band,
    aggregation,
    normLen,
    isCorrection,
    emptyRows: f.emptyRows as ResolvedPolicyLossConfig["emptyRows"],
    rejection: f.rejection === null ? null : resolveRejection(fn, f.rejection as Obj[]),
    offPolicyMask:
      opm === null
        ? null
        : { threshold: opm.threshold as number, sampling: opm.sampling as "old" | "rollout" },
    ratioClamp,
    rowEpsilon: resolveRowEpsilon(fn, f.rowEpsilon as number, aggregation, kl),
    topEntropyQuantile: f.topEntropyQuantile as number | null,
    entropyBonus: resolveEntropyBonus(fn, f.entropyBonus as Obj | null, config),
    ...surrogateSettings(surrogate, f),
    kl,
  };
}
