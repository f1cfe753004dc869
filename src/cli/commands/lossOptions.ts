/**
 * The options of `polgrad loss` and their rules across its input kinds (a policy-loss config or
 * registered algorithm, a framework model, a framework release's config, PAPO): which flags go
 * with which kind (usage errors naming the flag), the shard's global context, `--mask-dtype` and
 * `--papo-form`. The command (loss.ts) dispatches on them.
 */
import type { GlobalNormalizer } from "../../aggregate/effectiveTokenWeights.js";
import { fmtValue } from "../../core/message.js";
import { closestNames, didYouMean } from "../../core/names.js";
import { ConfigError, UsageError } from "../../errors.js";
import { POLICY_LOSS_FIELDS, type PolicyLossField } from "../../losses/fields.js";
import { snakeCase } from "../../report/wire.js";
import { NAME_OPTIONS } from "../batchInput.js";
import type { OptionSpec, OptionValues } from "../command.js";
import { intOption } from "../output.js";
import { WORLD_OPTIONS } from "./frameworkConfigOption.js";

const FN = "polgrad loss";

/** The option table of `polgrad loss`. */
export const LOSS_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  config: {
    type: "string",
    role: "input",
    argument: "JSON|@file.json|-",
    description:
      "policy-loss config (- reads stdin) in polgrad's snake_case JSON; a perception block makes it PAPO (alone, or with --algorithm papo_g/papo_d)",
  },
  algorithm: {
    type: "string",
    argument: "NAME",
    description: "use a registered algorithm's loss (see 'polgrad algorithms')",
  },
  "papo-form": {
    type: "string",
    argument: "trl|official",
    description: "PAPO form for --algorithm papo_g/papo_d (needs masked_logprobs in the batch)",
    default: "official",
  },
  framework: {
    type: "string",
    argument: "ID|REF",
    description:
      "evaluate a framework model, e.g. verl@1dda039b:seq-mean-token-mean (see 'polgrad frameworks'), or a release, e.g. trl@v1.9.0, with --framework-config (default: the release's defaults)",
  },
  "mask-dtype": {
    type: "string",
    argument: "DTYPE",
    description:
      "with --framework ID: the mask dtype the model assumes, float64 (polgrad 0.2.0's recordings, where verl's and OpenRLHF's L + 1e-8 row ε survives) or the framework's own (bool for verl, long for OpenRLHF and TRL); the same as the id suffix [mask_dtype=DTYPE]",
    default: "the framework's own",
  },
  "framework-config": {
    type: "string",
    role: "input",
    argument: "FILE|-",
    description:
      "the framework's own config (TRL GRPOConfig YAML/JSON or arguments, verl Hydra YAML or overrides, OpenRLHF arguments) resolved against the --framework release (see 'polgrad explain')",
  },
  ...WORLD_OPTIONS,
  batch: {
    type: "string",
    role: "input",
    argument: "FILE|DIR|-",
    description:
      "batch file (.safetensors, .json, .npy, .npz, .pt), a folder of tensor files, or - for stdin, with logprobs, old_logprobs, advantages, response_mask (any framework's names)",
  },
  "norm-len": {
    type: "string",
    argument: "N",
    description: "set the config's norm_len (the token_sum_norm budget, e.g. for dr_grpo)",
  },
  ...NAME_OPTIONS,
  threads: {
    type: "string",
    argument: "N",
    description:
      "threads for the policy loss (default 1: a one-shot process does not win back a worker's start; every count gives the same bits)",
  },
  "global-tokens": {
    type: "string",
    argument: "N",
    description:
      "the batch is a shard: response tokens of the global batch (verl's global token count, TRL's num_items_in_batch, OpenRLHF's batch_num_tokens)",
  },
  "global-rows": {
    type: "string",
    argument: "N",
    description: "the batch is a shard: rows of the global batch (OpenRLHF's global_batch_size)",
  },
  "dp-size": {
    type: "string",
    argument: "D",
    description:
      "the data-parallel size the shard's loss is multiplied by (verl/OpenRLHF dp_size, TRL num_processes)",
  },
  out: {
    type: "string",
    role: "output",
    argument: "FILE.safetensors",
    description:
      "write the [B, T] results (gradients, per-token objective, ratios, clip flags) to a safetensors file; --json then keeps the scalars and names the file",
  },
  fields: {
    type: "string",
    argument: "F,...",
    description: `with --json or --out, a policy loss's result fields to compute and give, and no others (${POLICY_LOSS_FIELDS.map(snakeCase).join(", ")})`,
  },
  json: { type: "boolean", description: "print one JSON document with every result field" },
};

/**
 * `--fields F,...`: the result fields asked for, by their wire names (docs/cli.md#fields), or
 * undefined without the flag. A usage error without --json or --out (the text summary reads the
 * ratio, the clip flags and the gradient), for an unknown name (with did-you-mean) or an empty list.
 */
export function fieldsOption(values: OptionValues): ReadonlySet<PolicyLossField> | undefined {
  const v = values.fields;
  if (v === undefined) return undefined;
  if (values.json !== true && values.out === undefined)
    throw new UsageError(
      FN,
      "--fields",
      `${FN}: --fields chooses the fields of --json and --out (the text summary reads the ratio, the clip flags and the gradient); got --fields without either`,
    );
  const wire = POLICY_LOSS_FIELDS.map(snakeCase);
  const names = String(v)
    .split(",")
    .map((x) => x.trim());
  const set = new Set<PolicyLossField>();
  for (const name of names) {
    const at = wire.indexOf(name);
    if (at < 0)
      throw new UsageError(
        FN,
        "--fields",
        `${FN}: --fields must list result fields (${wire.join(", ")}); got ${fmtValue(name)}${didYouMean(closestNames(name, wire))}`,
      );
    set.add(POLICY_LOSS_FIELDS[at] as PolicyLossField);
  }
  return set;
}

/** Whether `--framework` names a release (a bare REF, or with `--framework-config`): a framework config. */
export function isReleaseRun(values: OptionValues): boolean {
  return (
    typeof values.framework === "string" &&
    (values["framework-config"] !== undefined ||
      /^(trl|verl|openrlhf)@[^:]+$/i.test(values.framework))
  );
}

/** Without a release: `--mask-dtype` needs a framework model, the release's flags are usage errors. */
export function checkNoReleaseFlags(values: OptionValues): void {
  if (values["mask-dtype"] !== undefined && typeof values.framework !== "string")
    throw new UsageError(
      FN,
      "--mask-dtype",
      `${FN}: --mask-dtype must come with --framework ID (a framework model); got --mask-dtype without --framework`,
    );
  for (const k of ["framework-config", "num-processes", "num-items-in-batch"])
    if (values[k] !== undefined)
      throw new UsageError(
        FN,
        `--${k}`,
        `${FN}: --${k} must come with --framework REF (a release such as trl@v1.9.0); got --${k} ${typeof values.framework === "string" ? `with the model id ${fmtValue(values.framework)}` : "without --framework"}`,
      );
}

/** Exactly one of `--config` and `--algorithm` (when `--framework` is not given). */
export function checkOneSettingsSource(values: OptionValues): void {
  const hasConfig = typeof values.config === "string";
  if (hasConfig === (typeof values.algorithm === "string")) {
    throw new UsageError(
      FN,
      "--config",
      `${FN}: exactly one of --config, --algorithm and --framework must be given; got ${hasConfig ? "both --config and --algorithm" : "none"}`,
    );
  }
}

/** `--threads` runs policyLoss's row blocks, `--global-*` shape its aggregation and `--fields` picks its result fields; the other evaluations have none of them. */
export function policyOnly(values: OptionValues, what: string): void {
  // --global-* and --dp-size too: a framework model's normaliser is frozen at its pin, and PAPO
  // has no global context yet; silently ignoring them would print a loss they did not shape.
  for (const flag of ["threads", "global-tokens", "global-rows", "dp-size", "fields"]) {
    if (values[flag] === undefined) continue;
    throw new UsageError(
      FN,
      `--${flag}`,
      `${FN}: --${flag} applies to a policy loss (--config or a registered algorithm); got --${flag} with ${what}`,
    );
  }
}

/** `--framework` brings its own settings: `--config`, `--algorithm` and `--norm-len` are usage errors. */
export function noSettingsWith(values: OptionValues, rule: string): void {
  const given = ["config", "algorithm", "norm-len"].filter((k) => values[k] !== undefined);
  if (given.length > 0)
    throw new UsageError(
      FN,
      "--framework",
      `${FN}: --framework ${rule}; got ${given.map((g) => `--${g}`).join(" and ")}`,
    );
}

/** A release's config fixes its own mask: `--mask-dtype` is a usage error with a release. */
export function noMaskDtypeWithRelease(values: OptionValues): void {
  if (values["mask-dtype"] !== undefined)
    throw new UsageError(
      FN,
      "--mask-dtype",
      `${FN}: --mask-dtype must come with a framework model id such as verl@74a718a4:gspo (a release's config fixes its own mask); got it with ${fmtValue(values.framework)}`,
    );
}

/**
 * The `--framework` id with `--mask-dtype` as its `mask_dtype` override (a usage error naming the
 * flag for a value the framework does not take, or for an id that already sets it).
 */
export async function withMaskDtype(values: OptionValues): Promise<string> {
  const id = values.framework as string;
  const dtype = values["mask-dtype"];
  if (dtype === undefined) return id;
  const { frameworkOverrideKeys } = await import("../../conformance/frameworks/registry.js");
  const fw = /^(verl|openrlhf|trl)@/.exec(id)?.[1] as "verl" | "openrlhf" | "trl" | undefined;
  const allowed =
    fw === undefined
      ? []
      : (frameworkOverrideKeys(fw).find((k) => k.key === "mask_dtype")?.values ?? []);
  if (typeof dtype !== "string" || !allowed.includes(dtype))
    throw new UsageError(
      FN,
      "--mask-dtype",
      `${FN}: --mask-dtype must be ${allowed.length > 0 ? `one of ${allowed.join(", ")} for ${fw}` : "used with a verl, openrlhf or trl model id"}; got ${fmtValue(dtype)}`,
    );
  if (/\bmask_dtype=/.test(id))
    throw new UsageError(
      FN,
      "--mask-dtype",
      `${FN}: --mask-dtype must not repeat the id's own mask_dtype; got both`,
    );
  return id.endsWith("]")
    ? `${id.slice(0, -1)},mask_dtype=${dtype}]`
    : `${id}[mask_dtype=${dtype}]`;
}

/** `--papo-form` goes only with a registered PAPO algorithm: a usage error for any other loss. */
export function noPapoForm(values: OptionValues): void {
  if (values["papo-form"] !== undefined) {
    throw new UsageError(
      FN,
      "--papo-form",
      `${FN}: --papo-form must come with --algorithm papo_g or papo_d; got --papo-form without a PAPO algorithm`,
    );
  }
}

/** `--papo-form` of a registered PAPO algorithm: "official" (the default) or "trl"; never with `--config`. */
export function papoFormOf(values: OptionValues): "official" | "trl" {
  if (typeof values.config === "string" && values["papo-form"] !== undefined)
    throw new UsageError(
      FN,
      "--papo-form",
      `${FN}: --papo-form must not come with --config (the perception block's form or preset chooses the form); got both`,
    );
  const form = values["papo-form"] ?? "official";
  if (form !== "official" && form !== "trl")
    throw new UsageError(
      FN,
      "--papo-form",
      `${FN}: --papo-form must be "trl" or "official"; got ${fmtValue(form)}`,
    );
  return form;
}

/** The flag each field of `options.global` comes from. */
const GLOBAL_FLAGS: Readonly<Record<string, string>> = {
  "options.global.tokens": "--global-tokens",
  "options.global.rows": "--global-rows",
  "options.global.dpSize": "--dp-size",
};

/**
 * Run `f`; a rule broken by a field of the global context is reported against its flag (the
 * library names `options.global.tokens`; the user typed `--global-tokens`).
 */
export async function asFlags<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (!(e instanceof ConfigError) || e.arg === undefined) throw e;
    const flag = GLOBAL_FLAGS[e.arg];
    if (flag === undefined) throw e;
    const rule = e.message.slice(e.message.indexOf(e.arg) + e.arg.length);
    throw new UsageError(FN, flag, `${FN}: ${flag}${rule}`);
  }
}

/** `--global-tokens`, `--global-rows`, `--dp-size`: the shard's global context, if any given. */
export function globalOption(values: OptionValues): GlobalNormalizer | undefined {
  const tokens = intOption(values, "global-tokens", "loss");
  const rows = intOption(values, "global-rows", "loss");
  const dpSize = intOption(values, "dp-size", "loss");
  if (tokens === undefined && rows === undefined && dpSize === undefined) return undefined;
  return { tokens: tokens ?? null, rows: rows ?? null, dpSize: dpSize ?? null };
}
