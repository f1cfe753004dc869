/** `polgrad deviations`: the deviation registry with each deviation measured now. */
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `deviations` command. */
export const deviationsCommand: Command = {
  name: "deviations",
  summary:
    "List where verl, OpenRLHF and TRL deviate from the published equations, each measured now on seeded batches.",
  usage: "deviations [--pairs] [--json]",
  options: {
    pairs: {
      type: "boolean",
      description:
        "measure the registered pairs instead: each framework model against the paper configuration (polgrad's deviation_report)",
    },
    json: { type: "boolean", description: "print one JSON document" },
  },
  async run(values, _p, io) {
    if (values.pairs === true) {
      const { measureDeviationPairs, deviationReportSummary } = await import(
        "../../conformance/deviationPairs.js"
      );
      const { policyLossConfigToJson } = await import("../../io/configJson.js");
      const measured = measureDeviationPairs();
      if (values.json) {
        writeJson(io, "deviations", {
          pairs: measured.map(({ options: _o, paper, ...p }) => ({
            ...p,
            paper: policyLossConfigToJson(paper),
          })),
        });
        return 0;
      }
      const lines: string[] = [];
      for (const p of measured) {
        lines.push(`[${p.title}]`);
        lines.push(
          `expected: ${p.expected}${p.deviation === null ? "" : ` (deviation ${p.deviation})`}; ${p.holds ? "holds" : "DOES NOT HOLD"}: ${p.reading}`,
        );
        lines.push(deviationReportSummary(p.report));
        lines.push("");
      }
      const broken = measured.filter((p) => !p.holds).length;
      lines.push(
        `${measured.length} pairs, ${broken === 0 ? "each as registered" : `${broken} not as registered`}`,
      );
      io.stdout(`${lines.join("\n")}\n`);
      return 0;
    }
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
