/** `polgrad deviations`: the deviation registry with each deviation measured now. */
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `deviations` command. */
export const deviationsCommand: Command = {
  name: "deviations",
  summary:
    "List where verl, OpenRLHF and TRL deviate from the published equations, each measured now on seeded batches.",
  usage: "deviations [--json]",
  options: { json: { type: "boolean", description: "print one JSON document" } },
  async run(values, _p, io) {
    const { DEVIATIONS } = await import("../../conformance/deviations.js");
    const rows = DEVIATIONS.map((d) => ({ ...d, measurement: d.measure() }));
    if (values.json) {
      writeJson(
        io,
        "deviations",
        rows.map(({ measure: _m, ...rest }) => rest),
      );
      return 0;
    }
    const lines: string[] = [];
    for (const d of rows) {
      lines.push(`[${d.framework}] ${d.id}: ${d.component}`);
      lines.push(`  pinned at: ${d.version}`);
      lines.push(`  ${d.description}`);
      lines.push(`  measured: ${d.measurement.summary}`);
      lines.push(`  demonstrated by: ${d.demonstratedBy}`);
      lines.push("");
    }
    lines.push(`${rows.length} deviations`);
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  },
};
