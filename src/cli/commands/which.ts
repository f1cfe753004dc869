/** `polgrad which`: the disagreement table on the built-in batch or on the user's batch. */
import type { Command } from "../command.js";
import { intOption, writeJson } from "../output.js";

/** The `which` command. */
export const whichCommand: Command = {
  name: "which",
  summary:
    "Show how the losses that share the name GRPO disagree on one batch (loss and per-sequence gradient mass).",
  usage: "which [--batch FILE] [--norm-len N] [--json]",
  options: {
    batch: {
      type: "string",
      argument: "FILE",
      description: "batch file (.safetensors or .json)",
      default: "the built-in ragged batch",
    },
    "norm-len": {
      type: "string",
      argument: "N",
      description: "Dr.GRPO budget of the token-sum-norm row",
      default: "the padded width T",
    },
    json: { type: "boolean", description: "print one JSON document instead of the table" },
  },
  async run(values, _positionals, io) {
    const { whichTable, BUILTIN_BATCH } = await import("../../which/index.js");
    const normLen = intOption(values, "norm-len", "which");
    let batch = BUILTIN_BATCH;
    if (typeof values.batch === "string") {
      const { readBatch } = await import("../../io/index.js");
      batch = readBatch(values.batch);
    }
    const report = whichTable(batch, { normLen: normLen ?? null });
    if (values.json) writeJson(io, "which", report);
    else {
      const { renderWhichText } = await import("../../report/whichText.js");
      io.stdout(renderWhichText(report));
    }
    return 0;
  },
};
