/**
 * polgrad's snake_case config JSON ↔ the camelCase {@link PolicyLossConfig}
 * (docs/io.md#config-json). Parsing checks keys and JSON types (and mode names, so the result is
 * well typed); value rules (eps > 0, norm_len a positive integer, …) are left to the losses'
 * validation at call entry, exactly as for a config built in code.
 */
import { fmtValue, mustBe } from "../core/message.js";
import { closestNames, didYouMean, oneOf } from "../core/names.js";
import { requireObject, requireString } from "../core/validate.js";
import { ConfigError, UnknownNameError } from "../errors.js";
import {
  isSetField,
  type ObjectSpec,
  POLICY_LOSS_FIELD_KEYS,
  POLICY_LOSS_FIELDS,
  type PolicyLossConfig,
  type SubField,
  type ValueSpec,
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

/** A camelCase key in snake_case (`isCorrection` → `is_correction`). */
type Snake<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<T>}`
  : S;

/** A config value in its wire form: objects with snake_case keys, arrays item by item. */
type Wire<T> = T extends readonly (infer I)[]
  ? readonly Wire<I>[]
  : T extends object
    ? { readonly [K in keyof T as Snake<K & string>]: Wire<T[K]> }
    : T;

/**
 * The JSON form of a {@link PolicyLossConfig}: polgrad's snake_case keys (each field's key in the
 * field table, losses/config.ts; test/io/configSchema.test.ts checks the two agree), nulls
 * explicit where the wire always carries a field.
 */
export type PolicyLossConfigJson = Wire<PolicyLossConfig>;

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

/** A set value parsed by its spec: names checked, numbers and booleans typed, objects recursed. */
function parseValue(r: Reader, arg: string, spec: ValueSpec, v: unknown): unknown {
  switch (spec.kind) {
    case "name":
      return r.name(arg, v, spec.names);
    case "number":
      return r.number(arg, v);
    case "boolean":
      if (typeof v !== "boolean") throw r.fail(arg, "true or false", v);
      return v;
    case "object":
      return parseObject(r, arg, spec, v);
    case "list":
      if (!Array.isArray(v)) throw r.fail(arg, `${spec.what} or null`, v);
      return v.map((x, j) => parseObject(r, `${arg}[${j}]`, spec.item, x));
  }
}

/**
 * An object by its spec: unknown keys refused (did-you-mean), each sub-field parsed; an absent
 * one is its default where the wire always carries it, and left out otherwise.
 */
function parseObject(r: Reader, arg: string, spec: ObjectSpec, v: unknown): Obj {
  const c = r.object(
    arg,
    v,
    Object.values(spec.fields).map((f) => f.snake),
  );
  const out: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(spec.fields)) {
    const x = parseField(r, `${arg}.${f.snake}`, f, c[f.snake]);
    if (x !== undefined) out[k] = x;
  }
  return Object.freeze(out);
}

function parseField(r: Reader, arg: string, f: SubField, x: unknown): unknown {
  if (x !== undefined && x !== null) return parseValue(r, arg, f.value, x);
  if (f.presence === "required" || (f.presence === "nullable" && x === undefined)) {
    // The JSON type the key must have: a missing one is named as missing.
    if (f.value.kind === "name") return r.name(arg, x, f.value.names);
    throw r.fail(arg, f.value.kind === "number" ? "a number" : "given", x);
  }
  if (f.presence === "nullable") return null;
  return f.wire === "always" ? f.default : undefined;
}

/** A value in its wire form: objects by their specs, snake_case keys. */
function emitValue(spec: ValueSpec, v: unknown): unknown {
  if (spec.kind === "object") return emitObject(spec, v as Obj);
  if (spec.kind === "list") return (v as readonly Obj[]).map((x) => emitObject(spec.item, x));
  return v;
}

/** An object's wire form: `always` sub-fields (their default when absent), the others when set. */
function emitObject(spec: ObjectSpec, v: Obj): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(spec.fields)) {
    const x = v[k];
    const set = x !== undefined && x !== null;
    if (f.wire === "always") out[f.snake] = set ? emitValue(f.value, x) : f.default;
    else if (set && x !== f.default) out[f.snake] = emitValue(f.value, x);
  }
  return out;
}

/**
 * The JSON Schema of a value's wire form (docs/schemas/defs.schema.json, `policyLossConfigFields`,
 * is this, generated: test/io/configSchema.test.ts compares the committed file with it).
 */
function valueSchema(spec: ValueSpec, nullable: boolean): Record<string, unknown> {
  const ref = (x: string) => ({
    $ref: `#/$defs/${nullable ? `nullable${x[0]?.toUpperCase()}${x.slice(1)}` : x}`,
  });
  switch (spec.kind) {
    case "name":
      return ref("text");
    case "number":
      return ref(spec.rule === "count" ? "count" : "number");
    case "boolean":
      return { type: nullable ? ["boolean", "null"] : "boolean" };
    case "object":
      return objectSchema(spec, nullable);
    case "list":
      return {
        type: nullable ? ["array", "null"] : "array",
        items: objectSchema(spec.item, false),
      };
  }
}

function objectSchema(spec: ObjectSpec, nullable: boolean): Record<string, unknown> {
  const fields = Object.values(spec.fields);
  return {
    type: nullable ? ["object", "null"] : "object",
    required: fields.filter((f) => f.wire === "always").map((f) => f.snake),
    additionalProperties: false,
    properties: Object.fromEntries(fields.map((f) => [f.snake, fieldSchema(f)])),
  };
}

/** A field's schema: nullable when its wire form can be null. */
function fieldSchema(f: SubField): Record<string, unknown> {
  const nullable =
    f.presence === "nullable" ||
    (f.presence === "optional" && f.default === null && f.wire === "always");
  return valueSchema(f.value, nullable);
}

/**
 * The JSON Schema of the policy-loss config's wire form, from the field table: the required keys
 * and each field's kind (`$defs` references into defs.schema.json). @internal
 */
export function policyLossConfigSchema(): Record<string, unknown> {
  const fields = POLICY_LOSS_FIELD_KEYS.map((k) => POLICY_LOSS_FIELDS[k] as SubField);
  return {
    type: "object",
    required: fields.filter((f) => f.presence === "required").map((f) => f.snake),
    properties: Object.fromEntries(fields.map((f) => [f.snake, fieldSchema(f)])),
  };
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

const POLICY_KEYS: readonly string[] = POLICY_LOSS_FIELD_KEYS.map(
  (k) => POLICY_LOSS_FIELDS[k].snake,
);

/** The whole config from its checked top-level object, field by field in table order. */
function policyOf(r: Reader, c: Obj): PolicyLossConfig {
  const out: Record<string, unknown> = {};
  for (const k of POLICY_LOSS_FIELD_KEYS) {
    const f = POLICY_LOSS_FIELDS[k] as SubField;
    const x = parseField(r, `config.${f.snake}`, f, c[f.snake]);
    if (x !== undefined) out[k] = x;
  }
  return Object.freeze(out) as unknown as PolicyLossConfig;
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
  const out: Record<string, unknown> = {};
  for (const k of POLICY_LOSS_FIELD_KEYS) {
    const f = POLICY_LOSS_FIELDS[k] as SubField;
    const x: unknown = config[k];
    if (f.wire === "always")
      out[f.snake] = x === undefined || x === null ? f.default : emitValue(f.value, x);
    else if (isSetField(k, x)) out[f.snake] = emitValue(f.value, x);
  }
  return out as unknown as PolicyLossConfigJson;
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
