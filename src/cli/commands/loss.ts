/** `polgrad loss`: evaluate one policy-loss configuration on a batch file. */
import { fmtValue } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { AlgorithmSpec } from "../../registry/spec.js";
import type { Command, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";

async function resolveConfig(
  values: OptionValues,
): Promise<{ config: PolicyLossConfig; source: string }> {
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
    return { config: spec.loss, source: `algorithm ${spec.name}` };
  }
  const { readConfigOption } = await import("./configOption.js");
  return readConfigOption(fn, values.config as string);
}

/** The `loss` command. */
export const lossCommand: Command = {
  name: "loss",
  summary: "Evaluate a policy loss and its closed-form gradient on a batch file.",
  usage:
    "loss (--config JSON|@file.json | --algorithm NAME | --framework ID) --batch FILE [--norm-len N] [--json]",
  options: {
    config: {
      type: "string",
      argument: "JSON|@file.json",
      description: "policy-loss config in polgrad's snake_case JSON",
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
      argument: "ID",
      description:
        "evaluate a framework model, e.g. verl@1dda039b:seq-mean-token-mean (see 'polgrad frameworks')",
    },
    batch: {
      type: "string",
      argument: "FILE",
      description:
        "batch file (.safetensors or .json) with logprobs, old_logprobs, advantages, response_mask",
    },
    "norm-len": {
      type: "string",
      argument: "N",
      description: "set the config's norm_len (the token_sum_norm budget, e.g. for dr_grpo)",
    },
    json: { type: "boolean", description: "print one JSON document with every result field" },
  },
  async run(values, _p, io) {
    const fn = "polgrad loss";
    if (typeof values.framework === "string") return runFramework(values, io);
    if (typeof values.algorithm === "string") {
      const { getAlgorithm } = await import("../../registry/index.js");
      const spec = getAlgorithm(values.algorithm);
      if (spec.papo !== undefined) return runPapo(values, io, spec.name, spec.papo);
    }
    if (values["papo-form"] !== undefined) {
      throw new UsageError(
        fn,
        "--papo-form",
        `${fn}: --papo-form must come with --algorithm papo_g or papo_d; got --papo-form without a PAPO algorithm`,
      );
    }
    const { config: base, source } = await resolveConfig(values);
    const normLen = intOption(values, "norm-len", "loss");
    const config: PolicyLossConfig = normLen === undefined ? base : { ...base, normLen };
    if (typeof values.batch !== "string") {
      throw new UsageError(
        fn,
        "--batch",
        `${fn}: --batch must be a batch file (.safetensors or .json); got nothing`,
      );
    }
    const { readBatch } = await import("../../io/index.js");
    const { policyLoss } = await import("../../losses/policyLoss.js");
    const batch = readBatch(values.batch);
    const result = policyLoss(config, batch);
    if (values.json) {
      const { policyLossConfigToJson } = await import("../../io/configJson.js");
      writeJson(io, "loss", { config: policyLossConfigToJson(config), ...result });
      return 0;
    }
    const { renderLossText } = await import("../../report/lossText.js");
    io.stdout(renderLossText(config, source, values.batch, result, batch.responseMask));
    return 0;
  },
};

async function runFramework(
  values: OptionValues,
  io: Parameters<Command["run"]>[2],
): Promise<number> {
  const fn = "polgrad loss";
  const given = ["config", "algorithm"].filter((k) => values[k] !== undefined);
  if (given.length > 0 || values["norm-len"] !== undefined) {
    throw new UsageError(
      fn,
      "--framework",
      `${fn}: --framework takes no --config, --algorithm or --norm-len (a model's settings are frozen at its pin); got ${[...given, ...(values["norm-len"] !== undefined ? ["norm-len"] : [])].map((g) => `--${g}`).join(" and ")}`,
    );
  }
  if (typeof values.batch !== "string")
    throw new UsageError(
      fn,
      "--batch",
      `${fn}: --batch must be a batch file (.safetensors or .json); got nothing`,
    );
  const { getFrameworkModel } = await import("../../conformance/frameworks/registry.js");
  const { readBatch } = await import("../../io/index.js");
  const model = getFrameworkModel(values.framework as string);
  const batch = readBatch(values.batch);
  const r = model.evaluate(batch);
  if (values.json) {
    writeJson(io, "loss", {
      framework: {
        id: model.id,
        pin: model.pin,
        settings: model.settings,
        description: model.description,
      },
      ...r,
    });
    return 0;
  }
  io.stdout(
    `framework model ${model.id}\n  ${model.pin.repo} @ ${model.pin.commit} ${model.pin.path}::${model.pin.function}\n` +
      `batch ${values.batch}\nloss          ${r.loss}\n(use --json for the gradient and per-token fields at full precision)\n`,
  );
  return 0;
}

async function runPapo(
  values: OptionValues,
  io: Parameters<Command["run"]>[2],
  name: string,
  papo: NonNullable<AlgorithmSpec["papo"]>,
): Promise<number> {
  const fn = "polgrad loss";
  if (typeof values.batch !== "string")
    throw new UsageError(
      fn,
      "--batch",
      `${fn}: --batch must be a batch file (.safetensors or .json); got nothing`,
    );
  const form = values["papo-form"] ?? "official";
  if (form !== "official" && form !== "trl")
    throw new UsageError(
      fn,
      "--papo-form",
      `${fn}: --papo-form must be "trl" or "official"; got ${fmtValue(form)}`,
    );
  const base = papo[form];
  const normLen = intOption(values, "norm-len", "loss");
  const config = normLen === undefined ? base : { ...base, normLen };
  const { readBatch } = await import("../../io/index.js");
  const batch = readBatch(values.batch, { require: ["masked_logprobs"] });
  const { papoLoss } = await import("../../losses/papo.js");
  const r = papoLoss(config, {
    ...batch,
    maskedLogprobs: batch.maskedLogprobs as NonNullable<typeof batch.maskedLogprobs>,
    entropies: batch.entropies ?? null,
    maskedEntropies: batch.maskedEntropies ?? null,
  });
  if (values.json) {
    writeJson(io, "loss", { algorithm: name, form, ...r });
    return 0;
  }
  io.stdout(
    `algorithm ${name} (${form} form), batch ${values.batch}\n` +
      `loss             ${r.loss}\n` +
      `policy loss      ${r.policyLoss} (the parent's)\n` +
      `perception term  ${r.perceptionTerm} (subtracted)\n` +
      `entropy term     ${r.entropyTerm ?? "none"}\n` +
      "(use --json for the gradients w.r.t. logprobs and masked_logprobs at full precision)\n",
  );
  return 0;
}
