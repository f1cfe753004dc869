/**
 * The registry of framework models: every (framework, pinned commit, variant) with its default
 * settings, keyed by id `<framework>@<label>:<variant>` (docs/conformance/frameworks.md#registry).
 */
import { fmtValue, mustBe } from "../../core/message.js";
import { closestNames, didYouMean } from "../../core/names.js";
import { requireString } from "../../core/validate.js";
import { ConfigError, fail, UnknownNameError } from "../../errors.js";
import { type OverrideKey, parseOverrideSuffix } from "./batch.js";
import type { FrameworkModel } from "./model.js";
import {
  OPENRLHF_OVERRIDE_KEYS,
  OPENRLHF_VARIANTS,
  type OpenRlhfLabel,
  openRlhfModel,
} from "./openrlhf.js";
import { TRL_OVERRIDE_KEYS, TRL_VARIANTS, type TrlLabel, trlModel } from "./trl.js";
import { VERL_OVERRIDE_KEYS, VERL_VARIANTS, type VerlLabel, verlModel } from "./verl.js";

function build(): Readonly<Record<string, FrameworkModel>> {
  const out: Record<string, FrameworkModel> = {};
  const add = (m: FrameworkModel): void => {
    out[m.id] = m;
  };
  for (const label of Object.keys(VERL_VARIANTS) as VerlLabel[])
    for (const v of VERL_VARIANTS[label]) add(verlModel(label, v));
  for (const label of Object.keys(OPENRLHF_VARIANTS) as OpenRlhfLabel[])
    for (const v of OPENRLHF_VARIANTS[label]) add(openRlhfModel(label, v));
  for (const label of Object.keys(TRL_VARIANTS) as TrlLabel[])
    for (const v of TRL_VARIANTS[label]) add(trlModel(label, v));
  return Object.freeze(out);
}

/**
 * Every framework model with its framework defaults, keyed by id.
 * @enforcedBy test/conformance/frameworks/registry.test.ts > FRAMEWORK_MODELS > identity: ids, pins and variants are consistent
 */
export const FRAMEWORK_MODELS: Readonly<Record<string, FrameworkModel>> = build();

/**
 * The registered ids in registry order (verl, OpenRLHF, TRL; pin before head).
 * @enforcedBy test/conformance/frameworks/registry.test.ts > FRAMEWORK_MODELS > identity: ids, pins and variants are consistent
 */
export const FRAMEWORK_MODEL_IDS: readonly string[] = Object.freeze(Object.keys(FRAMEWORK_MODELS));

const VERL_AGG = new Set([
  "token-mean",
  "seq-mean-token-sum",
  "seq-mean-token-sum-norm",
  "seq-mean-token-mean",
  "token-sum",
]);
const TRL_LOSS = new Set(["grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo"]);

/**
 * Complete a short id with the framework's default qualifier: verl `<agg mode>` →
 * `vanilla:<agg mode>` and `vanilla` → `vanilla:token-mean`; OpenRLHF `ppo` → `ppo:token`;
 * TRL `<loss_type>` → `<loss_type>:token`. Any other id is returned unchanged.
 *
 * @param id - A model id, possibly in short form.
 * @returns The canonical id (registered or not).
 * @derivation docs/conformance/frameworks.md#registry
 * @enforcedBy test/conformance/frameworks/registry.test.ts > getFrameworkModel > golden: short forms map to their canonical ids
 * @since 0.1.0
 */
export function canonicalFrameworkModelId(id: string): string {
  requireString("canonicalFrameworkModelId", "id", id);
  const m = /^(verl|openrlhf|trl)@([^:]+):(.+)$/.exec(id);
  if (m === null) return id;
  const [, fw, label, variant] = m as unknown as [string, string, string, string];
  let v = variant;
  if (fw === "verl" && VERL_AGG.has(variant)) v = `vanilla:${variant}`;
  else if (fw === "verl" && variant === "vanilla") v = "vanilla:token-mean";
  else if (fw === "openrlhf" && variant === "ppo") v = "ppo:token";
  else if (fw === "trl" && TRL_LOSS.has(variant)) v = `${variant}:token`;
  return `${fw}@${label}:${v}`;
}

/** `<registered id>[key=value,…]`: a model with overridden settings. */
const OVERRIDES = /^(.+)\[([^\]]*)\]$/;

/** Each framework's model builder and the overrides its ids may carry. */
const BUILDERS: Readonly<
  Record<
    FrameworkModel["framework"],
    {
      readonly keys: readonly OverrideKey[];
      readonly build: (label: string, variant: string, o: object) => FrameworkModel;
    }
  >
> = {
  verl: { keys: VERL_OVERRIDE_KEYS, build: (l, v, o) => verlModel(l as VerlLabel, v, o) },
  openrlhf: {
    keys: OPENRLHF_OVERRIDE_KEYS,
    build: (l, v, o) => openRlhfModel(l as OpenRlhfLabel, v, o),
  },
  trl: { keys: TRL_OVERRIDE_KEYS, build: (l, v, o) => trlModel(l as TrlLabel, v, o) },
};

/**
 * The overrides a framework model id may carry in its `[key=value,…]` suffix, by framework
 * (docs/conformance/frameworks.md#overrides).
 *
 * @param framework - verl, openrlhf or trl.
 * @returns The framework's table: each key, and its values when it is not a positive number.
 * @derivation docs/conformance/frameworks.md#overrides
 * @enforcedBy test/conformance/frameworks/registry.test.ts > getFrameworkModel > golden: an id with overrides builds the model with those settings and round-trips
 * @since 0.1.0
 */
export function frameworkOverrideKeys(
  framework: FrameworkModel["framework"],
): readonly OverrideKey[] {
  if (typeof framework !== "string" || !Object.hasOwn(BUILDERS, framework))
    throw fail(
      ConfigError,
      "frameworkOverrideKeys",
      "framework",
      `one of ${Object.keys(BUILDERS).join(", ")}`,
      fmtValue(framework),
    );
  return BUILDERS[framework].keys;
}

/**
 * Look up a framework model by id, accepting the short forms of {@link canonicalFrameworkModelId}.
 *
 * Formula: FRAMEWORK_MODELS[canonical(id)].
 *
 * @param id - A registered id such as `verl@1dda039b:vanilla:seq-mean-token-mean`, or a short form
 *   such as `verl@1dda039b:seq-mean-token-mean`, optionally followed by overrides in brackets,
 *   `verl@74a718a4:vanilla:seq-mean-token-mean[mask_dtype=float64]` (the id such a model reports).
 * @returns The model.
 * @throws {UnknownNameError} E_UNKNOWN_NAME with the closest registered ids when none matches.
 * @derivation docs/conformance/frameworks.md#registry
 * @enforcedBy test/conformance/frameworks/registry.test.ts > getFrameworkModel > golden: short forms map to their canonical ids
 * @enforcedBy test/conformance/frameworks/registry.test.ts > getFrameworkModel > rejects: an unknown id with did-you-mean suggestions
 * @since 0.1.0
 */
export function getFrameworkModel(id: string): FrameworkModel {
  const fn = "getFrameworkModel";
  // A registered id, optionally with overrides: `verl@74a718a4:gspo[mask_dtype=float64]`.
  const m = typeof id === "string" ? OVERRIDES.exec(id) : null;
  const base = m === null ? (typeof id === "string" ? id : "") : (m[1] as string);
  const key = canonicalFrameworkModelId(base);
  const model = Object.hasOwn(FRAMEWORK_MODELS, key) ? FRAMEWORK_MODELS[key] : undefined;
  if (model !== undefined && m === null) return model;
  if (model !== undefined) {
    const b = BUILDERS[model.framework];
    return b.build(model.pin.label, model.variant, parseOverrideSuffix(fn, m?.[2] ?? "", b.keys));
  }
  // Did-you-mean only for a name of plausible length: a 1 MB id gets no edit-distance search.
  const suggestions =
    typeof id === "string" && base.length <= 200
      ? closestNames(base, FRAMEWORK_MODEL_IDS).slice(0, 3)
      : [];
  const hint = didYouMean(suggestions);
  throw new UnknownNameError(
    fn,
    "id",
    `${mustBe(fn, "id", "a registered framework model id (see FRAMEWORK_MODEL_IDS)", fmtValue(id))}${hint}`,
    suggestions,
  );
}
