/** `polgrad which`: the disagreement table on the built-in batch or on the user's batch. */

import { NAME_OPTIONS, readCliBatch } from "../batchInput.js";
import type { Command } from "../command.js";
import { intOption, writeJson } from "../output.js";
import { WORLD_OPTIONS } from "./frameworkConfigOption.js";

/** The `which` command. */
export const whichCommand: Command = {
  name: "which",
  summary:
    "Show how the losses that share the name GRPO disagree on one batch (loss and per-sequence gradient mass).",
  usage:
    "which [--batch FILE|DIR|-] [--names MAP] [--norm-len N] [--framework REF [--framework-config FILE]] [--json]",
  options: {
    batch: {
      type: "string",
      role: "input",
      argument: "FILE|DIR|-",
      description:
        "batch file (.safetensors, .json, .npy, .npz, .pt), a folder of tensor files, or - for stdin",
      default: "the built-in ragged batch",
    },
    ...NAME_OPTIONS,
    "norm-len": {
      type: "string",
      argument: "N",
      description: "Dr.GRPO budget of the token-sum-norm row",
      default: "the padded width T",
    },
    framework: {
      type: "string",
      argument: "REF",
      description:
        "add a row: this release's loss (trl@v1.9.0, verl@1dda039b, ...) under --framework-config",
    },
    "framework-config": {
      type: "string",
      role: "input",
      argument: "FILE|-",
      description:
        "the framework config of the added row (default: the release's defaults; see 'polgrad explain')",
    },
    ...WORLD_OPTIONS,
    json: { type: "boolean", description: "print one JSON document instead of the table" },
  },
  async run(values, _positionals, io) {
    const { whichTable, BUILTIN_BATCH } = await import("../../which/index.js");
    const normLen = intOption(values, "norm-len", "which");
    let batch = BUILTIN_BATCH;
    if (typeof values.batch === "string") batch = await readCliBatch("polgrad which", values, io);
    const { frameworkConfigRow } = await import("./frameworkConfigOption.js");
    const row = await frameworkConfigRow(
      "polgrad which",
      values,
      io,
      typeof values.batch !== "string",
    );
    const extraRows = row === null ? [] : [row];
    // On the built-in batch, a framework config that reads more than it holds (rollout logprobs,
    // entropies) or splits it otherwise gets the batch fitted to it, for every row alike.
    let notes: readonly string[] = [];
    if (row !== null && typeof values.batch !== "string") {
      const { builtinBatchFor } = await import(
        "../../conformance/frameworkConfig/evaluationBatch.js"
      );
      const fitted = builtinBatchFor(BUILTIN_BATCH, [row.resolution]);
      if (!("tooLarge" in fitted)) {
        batch = fitted.inputs;
        notes = fitted.notes;
      }
    }
    const report = whichTable(batch, { normLen: normLen ?? null, extraRows });
    if (values.json)
      writeJson(io, "which", notes.length === 0 ? report : { ...report, batchNotes: notes });
    else {
      const { renderWhichText } = await import("../../report/whichText.js");
      io.stdout(renderWhichText(report, io.width));
      if (notes.length > 0) io.stdout(`The built-in batch: ${notes.join("; ")}\n`);
    }
    return 0;
  },
};
