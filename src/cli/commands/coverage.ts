/** `polgrad coverage`: which framework semantics we express, which are out of scope, which pending. */
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `coverage` command. */
export const coverageCommand: Command = {
  name: "coverage",
  summary:
    "Print the coverage table: each verl / OpenRLHF / TRL semantic, the config that expresses it, or why not.",
  usage: "coverage [--json | --markdown]",
  options: {
    json: { type: "boolean", description: "print one JSON document" },
    markdown: { type: "boolean", description: "print docs/coverage.md (the generated Markdown)" },
  },
  async run(values, _p, io) {
    const { COVERAGE } = await import("../../conformance/coverage.js");
    const { coverageCounts, renderCoverageMarkdown, renderCoverageText } = await import(
      "../../report/coverageText.js"
    );
    const { policyLossConfigToJson } = await import("../../io/configJson.js");
    if (values.json && values.markdown) {
      const { fail, UsageError } = await import("../../errors.js");
      const fn = "polgrad coverage";
      throw fail(UsageError, fn, "--markdown", "used without --json", "both");
    }
    if (values.json) {
      writeJson(io, "coverage", {
        counts: coverageCounts(),
        rows: COVERAGE.map((r) => ({
          id: r.id,
          section: r.section,
          semantic: r.semantic,
          frameworks: r.frameworks,
          status: r.status,
          how: r.how ?? null,
          config: r.config === undefined ? null : policyLossConfigToJson(r.config),
          enforced_by: r.enforcedBy ?? null,
          reason: r.reason ?? null,
        })),
      });
      return 0;
    }
    io.stdout(values.markdown ? renderCoverageMarkdown() : renderCoverageText());
    return 0;
  },
};
