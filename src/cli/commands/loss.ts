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
      `${fn}: exactly one of --config and --algorithm must be given; got ${hasConfig ? "both" : "neither"}`,
    );
  }
  if (hasAlgo) {
    const { getAlgorithm } = await import("../../registry/index.js");
    const spec = getAlgorithm(values.algorithm as string);
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
  usage: "loss (--config JSON|@file.json | --algorithm NAME) --batch FILE [--norm-len N] [--json]",
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
