/** `polgrad demo-run DIR`: write the synthetic run with injected pathologies. */
import { fmtValue } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import type { Command } from "../command.js";
import { intOption, writeJson } from "../output.js";
import { progressBar } from "../progress.js";

/** The `demo-run` command. */
export const demoRunCommand: Command = {
  name: "demo-run",
  summary:
    "Write a synthetic run (per-step batch files) with injected drift, stale-policy ESS decay, an entropy collapse, catastrophic tokens and growing length bias.",
  usage:
    "demo-run DIR [--steps N] [--batch-size B] [--width T] [--seed N] [--f32] [--force] [--json]",
  positionals: 1,
  positionalRoles: ["output"],
  options: {
    steps: {
      type: "string",
      argument: "N",
      description: "number of steps (2..10000)",
      default: "200",
    },
    "batch-size": {
      type: "string",
      argument: "B",
      description: "rows per step (3..4096; B·T <= 1048576)",
      default: "32",
    },
    width: { type: "string", argument: "T", description: "padded width (2..4096)", default: "24" },
    seed: { type: "string", argument: "N", description: "seed", default: "0" },
    f32: { type: "boolean", description: "store float streams as F32 (half the disk)" },
    force: {
      type: "boolean",
      description:
        "write into a folder that is not empty: replace an earlier demo run's step files there (never a file demo-run did not write)",
    },
    json: { type: "boolean", description: "print the plan as one JSON document" },
  },
  async run(values, positionals, io) {
    const dir = positionals[0];
    if (dir === undefined || positionals.length > 1) {
      throw new UsageError(
        "polgrad demo-run",
        "DIR",
        `polgrad demo-run: DIR must be exactly one directory; got ${positionals.length} arguments`,
      );
    }
    if (dir.trim() === "") {
      throw new UsageError(
        "polgrad demo-run",
        "DIR",
        `polgrad demo-run: DIR must be a non-empty directory path; got ${fmtValue(dir)}`,
      );
    }
    const { writeDemoRun } = await import("../../demo/demoRun.js");
    const options = {
      ...(values.steps !== undefined
        ? { steps: intOption(values, "steps", "demo-run") as number }
        : {}),
      ...(values["batch-size"] !== undefined
        ? { batchSize: intOption(values, "batch-size", "demo-run") as number }
        : {}),
      ...(values.width !== undefined
        ? { width: intOption(values, "width", "demo-run") as number }
        : {}),
      ...(values.seed !== undefined
        ? { seed: intOption(values, "seed", "demo-run", 0) as number }
        : {}),
      dtype: values.f32 ? ("F32" as const) : ("F64" as const),
      ...(values.force === true ? { force: true } : {}),
    };
    const bar = progressBar(io, "writing", io.stderrIsTTY === true && !values.json);
    const { plan } = writeDemoRun(dir, options, (s, n) => bar.tick(s + 1, n));
    bar.finish();
    if (values.json) writeJson(io, "demo-run", { dir, ...plan });
    else {
      io.stdout(
        `wrote ${plan.steps} steps (B=${plan.batchSize}, T=${plan.width}, ${plan.dtype}, seed ${plan.seed}) to ${dir}\n` +
          `injected: entropy drop at step ${plan.changepointStep}; catastrophic tokens (0, 0) and (1, 1) from step ${plan.catastrophicFrom}; ` +
          "mismatch spread, policy drift (ESS decay) and length bias growing over the run\n" +
          `next: polgrad diagnose ${dir}\n`,
      );
    }
    return 0;
  },
};
