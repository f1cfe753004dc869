/** `polgrad loss`: evaluate one policy-loss configuration on a batch file. */
import { UsageError } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
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
    if (spec.name.startsWith("papo_")) {
      // spec.loss is only PAPO's parent: evaluating it here would silently drop the perception term.
      throw new UsageError(
        fn,
        "--algorithm",
        `${fn}: --algorithm must name a loss the CLI evaluates from logprob streams alone; got "${spec.name}", whose perception term needs masked-image logprobs (use papoLoss from the library, or 'polgrad contract reduce ${spec.name}_to_${spec.name === "papo_g" ? "grpo" : "dapo"}')`,
      );
    }
    return { config: spec.loss, source: `algorithm ${spec.name}` };
  }
  const { parsePolicyLossConfig, readJsonFile } = await import("../../io/configJson.js");
  const raw = values.config as string;
  if (raw.startsWith("@")) {
    const path = raw.slice(1);
    return { config: parsePolicyLossConfig(readJsonFile(path, fn), path), source: path };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new UsageError(
      fn,
      "--config",
      `${fn}: --config must be a JSON object or @file.json; got invalid JSON (${(e as Error).message})`,
    );
  }
  return { config: parsePolicyLossConfig(json, "--config"), source: "--config" };
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
