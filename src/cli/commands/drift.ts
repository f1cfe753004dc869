/** `polgrad drift`: compare a local framework checkout with polgrad's pinned definitions. */
import { UsageError } from "../../errors.js";
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `drift` command. */
export const driftCommand: Command = {
  name: "drift",
  summary:
    "Report which pinned upstream definitions changed in a local checkout (exit 1 on drift).",
  usage: "drift --checkout PATH --framework verl|openrlhf|trl [--json]",
  options: {
    checkout: { type: "string", argument: "PATH", description: "work tree of the framework" },
    framework: { type: "string", argument: "NAME", description: "verl, openrlhf or trl" },
    json: { type: "boolean", description: "print one JSON document instead of the text report" },
  },
  async run(values, _positionals, io) {
    for (const name of ["checkout", "framework"] as const) {
      if (typeof values[name] !== "string" || values[name] === "") {
        throw new UsageError(
          "polgrad drift",
          `--${name}`,
          `polgrad drift: --${name} must be given; got nothing`,
        );
      }
    }
    const { driftCheck, renderDriftText } = await import("../../conformance/drift.js");
    const report = await driftCheck(values.checkout as string, values.framework as string);
    if (values.json) writeJson(io, "drift", report, !report.driftDetected);
    else io.stdout(renderDriftText(report));
    return report.driftDetected ? 1 : 0;
  },
};
