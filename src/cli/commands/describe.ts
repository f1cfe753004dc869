/** `polgrad describe NAME`: one algorithm's configuration, constants, citation and notes. */
import { UsageError } from "../../errors.js";
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `describe` command. */
export const describeCommand: Command = {
  name: "describe",
  summary:
    "Describe one algorithm: loss configuration, KL placement, advantage estimator, citation, notes.",
  usage: "describe NAME [--json]",
  positionals: 1,
  options: {
    json: { type: "boolean", description: "print one JSON document (the algorithm spec)" },
  },
  async run(values, positionals, io) {
    const name = positionals[0];
    if (name === undefined || positionals.length > 1) {
      throw new UsageError(
        "polgrad describe",
        "NAME",
        `polgrad describe: NAME must be exactly one algorithm name; got ${positionals.length} arguments`,
      );
    }
    const { describeAlgorithm, getAlgorithm } = await import("../../registry/index.js");
    const spec = getAlgorithm(name);
    if (values.json) {
      const { policyLossConfigToJson } = await import("../../io/configJson.js");
      writeJson(io, "describe", {
        ...spec,
        loss: policyLossConfigToJson(spec.loss),
        description: describeAlgorithm(name),
      });
    } else io.stdout(`${describeAlgorithm(name)}\n`);
    return 0;
  },
};
