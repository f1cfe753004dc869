/** `polgrad loss`: evaluate one policy-loss configuration on a batch file. */

import type { GlobalNormalizer } from "../../aggregate/effectiveTokenWeights.js";
import { fmtValue, safeText } from "../../core/message.js";
import { ConfigError, UsageError } from "../../errors.js";
import type { PerceptionJson } from "../../io/configJson.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { PapoConfig } from "../../losses/papoConfig.js";
import type { AlgorithmSpec } from "../../registry/spec.js";
import { renderFrameworkLossText, renderPapoLossText } from "../../report/lossCommandText.js";
import { NAME_OPTIONS, readCliBatch, sourceDocument } from "../batchInput.js";
import type { Command, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";
import { checkOneStdin, readConfigValue } from "./configOption.js";
import { WORLD_OPTIONS } from "./frameworkConfigOption.js";

/** What `--config` or a non-PAPO `--algorithm` resolves to. */
type Resolved =
  | { readonly kind: "policy"; readonly config: PolicyLossConfig; readonly source: string }
  | {
      readonly kind: "papo";
      readonly config: PapoConfig;
      readonly perception: PerceptionJson;
      readonly source: string;
    };

async function resolveConfig(
  values: OptionValues,
  io: Parameters<Command["run"]>[2],
): Promise<Resolved> {
  const fn = "polgrad loss";
  const hasConfig = typeof values.config === "string";
  const hasAlgo = typeof values.algorithm === "string";
  if (hasConfig === hasAlgo) {
    throw new UsageError(
      fn,
      "--config",
      `${fn}: exactly one of --config, --algorithm and --framework must be given; got ${hasConfig ? "both --config and --algorithm" : "none"}`,
    );
  }
  if (hasAlgo) {
    const { getAlgorithm } = await import("../../registry/index.js");
    const spec = getAlgorithm(values.algorithm as string);
    return { kind: "policy", config: spec.loss, source: `algorithm ${spec.name}` };
  }
  const { json, source } = await readConfigValue(fn, values.config as string, io);
  const { parseLossConfig, parsePolicyLossConfig } = await import("../../io/configJson.js");
  // A config with a perception block is a PAPO config; without one, exactly the policy-loss
  // parse that readConfigOption applies.
  if (typeof json === "object" && json !== null && Object.hasOwn(json, "perception")) {
    const parsed = parseLossConfig(json, source);
    if (parsed.papo !== null && parsed.perception !== null)
      return { kind: "papo", config: parsed.papo, perception: parsed.perception, source };
    return { kind: "policy", config: parsed.policy, source };
  }
  return { kind: "policy", config: parsePolicyLossConfig(json, source), source };
}

/** The `loss` command. */
export const lossCommand: Command = {
  name: "loss",
  summary: "Evaluate a policy loss and its closed-form gradient on a batch file.",
  usage:
    "loss (--config JSON|@file.json|- | --algorithm NAME | --framework ID [--mask-dtype DTYPE]) --batch FILE|DIR|- [--names MAP] [--norm-len N] [--global-tokens N] [--global-rows N] [--dp-size D] [--threads N] [--out FILE.safetensors] [--json]",
  options: {
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
    json: { type: "boolean", description: "print one JSON document with every result field" },
  },
  async run(values, _p, io) {
    const fn = "polgrad loss";
    checkOneStdin(fn, values);
    if (
      typeof values.framework === "string" &&
      (values["framework-config"] !== undefined ||
        /^(trl|verl|openrlhf)@[^:]+$/i.test(values.framework))
    )
      return runFrameworkConfig(values, io);
    if (values["mask-dtype"] !== undefined && typeof values.framework !== "string")
      throw new UsageError(
        fn,
        "--mask-dtype",
        `${fn}: --mask-dtype must come with --framework ID (a framework model); got --mask-dtype without --framework`,
      );
    for (const k of ["framework-config", "num-processes", "num-items-in-batch"])
      if (values[k] !== undefined)
        throw new UsageError(
          fn,
          `--${k}`,
          `${fn}: --${k} must come with --framework REF (a release such as trl@v1.9.0); got --${k} ${typeof values.framework === "string" ? `with the model id ${fmtValue(values.framework)}` : "without --framework"}`,
        );
    if (typeof values.framework === "string") return runFramework(values, io);
    if (typeof values.algorithm === "string") {
      const { getAlgorithm } = await import("../../registry/index.js");
      const spec = getAlgorithm(values.algorithm);
      if (spec.papo !== undefined) return runPapo(values, io, spec);
    }
    if (values["papo-form"] !== undefined) {
      throw new UsageError(
        fn,
        "--papo-form",
        `${fn}: --papo-form must come with --algorithm papo_g or papo_d; got --papo-form without a PAPO algorithm`,
      );
    }
    const resolved = await resolveConfig(values, io);
    if (resolved.kind === "papo")
      return evaluatePapo(values, io, {
        label: `config ${resolved.source}`,
        algorithm: null,
        config: resolved.config,
        perception: resolved.perception,
      });
    const { config: base, source } = resolved;
    const normLen = intOption(values, "norm-len", "loss");
    const config: PolicyLossConfig = normLen === undefined ? base : { ...base, normLen };
    const threads = intOption(values, "threads", "loss");
    const { policyLoss } = await import("../../losses/policyLoss.js");
    await import("../../node/registerThreads.js");
    const global = globalOption(values);
    if (
      typeof values.out === "string" &&
      (threads ?? 1) === 1 &&
      typeof values.batch === "string" &&
      values.batch !== "-"
    ) {
      // A safetensors file never whole in memory: read, evaluated and written by row blocks
      // (src/cli/lossOut.ts); null for any other file, and whenever the whole read must judge.
      const { lossOutStreamed } = await import("../lossOut.js");
      const { nameOptionsOf } = await import("../batchInput.js");
      const names = await nameOptionsOf(fn, values);
      const code = await asFlags(() =>
        lossOutStreamed(
          values,
          io,
          config,
          source,
          values.batch as string,
          names,
          values.out as string,
          global,
        ),
      );
      if (code !== null) return code;
    }
    const batch = await readCliBatch(fn, values, io);
    if (typeof values.out === "string" && (threads ?? 1) === 1) {
      // The result straight to the tensor file by row blocks, never whole (src/cli/lossOut.ts).
      const { lossOutByRows } = await import("../lossOut.js");
      const code = await asFlags(() =>
        lossOutByRows(values, io, config, source, batch, values.out as string, global),
      );
      if (code !== null) return code;
    }
    // One thread unless asked (docs/performance.md#threads).
    const result = await asFlags(async () =>
      policyLoss(config, batch, {
        threads: threads ?? 1,
        ...(global === undefined ? {} : { global }),
      }),
    );
    const { policyLossConfigToJson } = await import("../../io/configJson.js");
    const { renderLossText } = await import("../../report/lossText.js");
    return emit(
      values,
      io,
      { config: policyLossConfigToJson(config), ...result, source: sourceDocument(batch.source) },
      () => renderLossText(config, source, batch.source.path, result, batch.responseMask),
    );
  },
};

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
async function asFlags<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (!(e instanceof ConfigError) || e.arg === undefined) throw e;
    const flag = GLOBAL_FLAGS[e.arg];
    if (flag === undefined) throw e;
    const fn = "polgrad loss";
    const rule = e.message.slice(e.message.indexOf(e.arg) + e.arg.length);
    throw new UsageError(fn, flag, `${fn}: ${flag}${rule}`);
  }
}

/** `--global-tokens`, `--global-rows`, `--dp-size`: the shard's global context, if any given. */
function globalOption(values: OptionValues): GlobalNormalizer | undefined {
  const tokens = intOption(values, "global-tokens", "loss");
  const rows = intOption(values, "global-rows", "loss");
  const dpSize = intOption(values, "dp-size", "loss");
  if (tokens === undefined && rows === undefined && dpSize === undefined) return undefined;
  return { tokens: tokens ?? null, rows: rows ?? null, dpSize: dpSize ?? null };
}

/** `--threads` runs policyLoss's row blocks and `--global-*` shape its aggregation; the other evaluations have neither. */
function policyOnly(values: OptionValues, what: string): void {
  const fn = "polgrad loss";
  // --global-* and --dp-size too: a framework model's normaliser is frozen at its pin, and PAPO
  // has no global context yet; silently ignoring them would print a loss they did not shape.
  for (const flag of ["threads", "global-tokens", "global-rows", "dp-size"]) {
    if (values[flag] === undefined) continue;
    throw new UsageError(
      fn,
      `--${flag}`,
      `${fn}: --${flag} applies to a policy loss (--config or a registered algorithm); got --${flag} with ${what}`,
    );
  }
}

/** `--framework` brings its own settings: `--config`, `--algorithm` and `--norm-len` are usage errors. */
function noSettingsWith(values: OptionValues, rule: string): void {
  const fn = "polgrad loss";
  const given = ["config", "algorithm", "norm-len"].filter((k) => values[k] !== undefined);
  if (given.length > 0)
    throw new UsageError(
      fn,
      "--framework",
      `${fn}: --framework ${rule}; got ${given.map((g) => `--${g}`).join(" and ")}`,
    );
}

async function runFramework(
  values: OptionValues,
  io: Parameters<Command["run"]>[2],
): Promise<number> {
  const fn = "polgrad loss";
  noSettingsWith(
    values,
    "takes no --config, --algorithm or --norm-len (a model's settings are frozen at its pin)",
  );
  policyOnly(values, "a framework model");
  const { getFrameworkModel } = await import("../../conformance/frameworks/registry.js");
  const model = getFrameworkModel(await withMaskDtype(values));
  const batch = await readCliBatch(fn, values, io);
  const r = model.evaluate(batch);
  const doc = {
    framework: {
      id: model.id,
      pin: model.pin,
      settings: model.settings,
      description: model.description,
    },
    ...r,
    source: sourceDocument(batch.source),
  };
  return emit(
    values,
    io,
    doc,
    () =>
      `framework model ${model.id}\n  ${model.pin.repo} @ ${model.pin.commit} ${model.pin.path}::${model.pin.function}\n` +
      `batch ${batch.source.path}\nloss          ${r.loss}\n(use --json for the gradient and per-token fields at full precision)\n`,
  );
}

/**
 * The `--framework` id with `--mask-dtype` as its `mask_dtype` override (a usage error naming the
 * flag for a value the framework does not take, or for an id that already sets it).
 */
async function withMaskDtype(values: OptionValues): Promise<string> {
  const fn = "polgrad loss";
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
      fn,
      "--mask-dtype",
      `${fn}: --mask-dtype must be ${allowed.length > 0 ? `one of ${allowed.join(", ")} for ${fw}` : "used with a verl, openrlhf or trl model id"}; got ${fmtValue(dtype)}`,
    );
  if (/\bmask_dtype=/.test(id))
    throw new UsageError(
      fn,
      "--mask-dtype",
      `${fn}: --mask-dtype must not repeat the id's own mask_dtype; got both`,
    );
  return id.endsWith("]")
    ? `${id.slice(0, -1)},mask_dtype=${dtype}]`
    : `${id}[mask_dtype=${dtype}]`;
}

/** `--framework REF [--framework-config FILE]`: a framework config resolved against a release (docs/conformance/explain.md). */
async function runFrameworkConfig(
  values: OptionValues,
  io: Parameters<Command["run"]>[2],
): Promise<number> {
  const fn = "polgrad loss";
  noSettingsWith(
    values,
    "with a release takes its settings from --framework-config, not from --config, --algorithm or --norm-len",
  );
  policyOnly(values, "a framework config");
  if (values["mask-dtype"] !== undefined)
    throw new UsageError(
      fn,
      "--mask-dtype",
      `${fn}: --mask-dtype must come with a framework model id such as verl@74a718a4:gspo (a release's config fixes its own mask); got it with ${fmtValue(values.framework)}`,
    );
  const { resolveCliFrameworkConfig } = await import("./frameworkConfigOption.js");
  const res = await resolveCliFrameworkConfig(fn, values, [], io, {
    configOption: "framework-config",
  });
  const { evaluateResolution } = await import("../../conformance/frameworkConfig/resolution.js");
  const batch = await readCliBatch(fn, values, io);
  const r = evaluateResolution(res, batch);
  const { policyLossConfigToJson } = await import("../../io/configJson.js");
  const doc = {
    framework: {
      ref: res.ref,
      repo: res.repo,
      release: res.release,
      settings: res.settings
        .filter((x) => x.source !== "default")
        .map((x) => ({ key: x.key, value: x.value, source: x.source })),
      warnings: res.warnings,
      batchMeaning: res.plan.batchMeaning,
    },
    config: policyLossConfigToJson(res.plan.config),
    loss: r.loss,
    gradLogprobs: r.gradLogprobs,
    perTokenObjective: r.perTokenObjective,
    ratio: r.ratio,
    microBatches: r.microBatches,
    terms: r.terms.map(({ gradLogprobs: _g, ...t }) => t),
    source: sourceDocument(batch.source),
  };
  return emit(values, io, doc, () =>
    renderFrameworkLossText(
      res,
      typeof values["framework-config"] === "string"
        ? values["framework-config"]
        : "the release's defaults",
      batch.source.path,
      r,
    ),
  );
}

/**
 * Print a loss result: `--json` (every field, or with `--out FILE.safetensors` the scalars and
 * `tensors_file`), else the text; with `--out` the `[B, T]` fields go to the tensor file.
 */
async function emit(
  values: OptionValues,
  io: Parameters<Command["run"]>[2],
  doc: Readonly<Record<string, unknown>>,
  text: () => string,
): Promise<number> {
  const out = values.out;
  if (typeof out !== "string") {
    if (values.json) writeJson(io, "loss", doc);
    else io.stdout(text());
    return 0;
  }
  const { splitTensorsOut } = await import("../tensorsOut.js");
  const loss = typeof doc.loss === "number" ? String(doc.loss) : "";
  const { kept, file } = await splitTensorsOut(out, doc, { polgrad_command: "loss", loss });
  if (values.json) writeJson(io, "loss", { ...kept, tensorsFile: file });
  else
    io.stdout(
      `${text().replace(/\(use --json[^)]*\)\n$/, "")}tensors ${Object.keys(file.tensors).join(", ")} written to ${safeText(out)}\n`,
    );
  return 0;
}

/** `--algorithm papo_g|papo_d`: the registered PAPO config, or the parent with a perception block. */
async function runPapo(
  values: OptionValues,
  io: Parameters<Command["run"]>[2],
  spec: AlgorithmSpec,
): Promise<number> {
  const fn = "polgrad loss";
  const papo = spec.papo as NonNullable<AlgorithmSpec["papo"]>;
  if (typeof values.config === "string") {
    if (values["papo-form"] !== undefined)
      throw new UsageError(
        fn,
        "--papo-form",
        `${fn}: --papo-form must not come with --config (the perception block's form or preset chooses the form); got both`,
      );
    const { json, source } = await readConfigValue(fn, values.config, io);
    const { parseLossConfig } = await import("../../io/configJson.js");
    const parsed = parseLossConfig(json, source, { config: spec.loss, name: spec.name });
    return evaluatePapo(values, io, {
      label: `algorithm ${spec.name} with ${source}`,
      algorithm: spec.name,
      config: parsed.papo as PapoConfig,
      perception: parsed.perception as PerceptionJson,
    });
  }
  const form = values["papo-form"] ?? "official";
  if (form !== "official" && form !== "trl")
    throw new UsageError(
      fn,
      "--papo-form",
      `${fn}: --papo-form must be "trl" or "official"; got ${fmtValue(form)}`,
    );
  const config = papo[form];
  const { perceptionToJson } = await import("../../io/configJson.js");
  return evaluatePapo(values, io, {
    label: `algorithm ${spec.name}`,
    algorithm: spec.name,
    config,
    perception: perceptionToJson(
      { perception: config.perception, doubleEntropy: config.doubleEntropy, beta: null },
      null,
    ),
  });
}

/** Evaluate papoLoss on `--batch` and print the result (text, or the PAPO `--json` shape). */
async function evaluatePapo(
  values: OptionValues,
  io: Parameters<Command["run"]>[2],
  run: {
    readonly label: string;
    readonly algorithm: string | null;
    readonly config: PapoConfig;
    readonly perception: PerceptionJson;
  },
): Promise<number> {
  const fn = "polgrad loss";
  policyOnly(values, "a PAPO loss");
  const normLen = intOption(values, "norm-len", "loss");
  const config = normLen === undefined ? run.config : { ...run.config, normLen };
  const form = config.perception.form;
  const batch = await readCliBatch(fn, values, io, ["masked_logprobs"]);
  const { papoLoss } = await import("../../losses/papo.js");
  const r = papoLoss(config, {
    ...batch,
    maskedLogprobs: batch.maskedLogprobs as NonNullable<typeof batch.maskedLogprobs>,
    entropies: batch.entropies ?? null,
    maskedEntropies: batch.maskedEntropies ?? null,
  });
  const { policyLossConfigToJson } = await import("../../io/configJson.js");
  const { perception: _p, doubleEntropy: _d, ...parent } = config;
  const doc = {
    ...(run.algorithm === null ? {} : { algorithm: run.algorithm }),
    form,
    config: policyLossConfigToJson(parent),
    perception: run.perception,
    ...r,
    source: sourceDocument(batch.source),
  };
  return emit(values, io, doc, () =>
    renderPapoLossText(
      `${run.label} (${form} form)`,
      batch.source.path,
      run.perception,
      parent.kl ?? null,
      r,
    ),
  );
}
