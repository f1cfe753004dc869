/** `polgrad algorithms`: list the registered algorithms. */
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `algorithms` command. */
export const algorithmsCommand: Command = {
  name: "algorithms",
  summary: "List the registered algorithms with their loss configuration and citation.",
  usage: "algorithms [--json]",
  options: { json: { type: "boolean", description: "print one JSON document" } },
  async run(values, _p, io) {
    const { ALGORITHMS, ALGORITHM_NAMES } = await import("../../registry/index.js");
    const { policyLossConfigToJson } = await import("../../io/configJson.js");
    const specs = ALGORITHM_NAMES.map((n) => ALGORITHMS[n as keyof typeof ALGORITHMS]);
    if (values.json) {
      writeJson(
        io,
        "algorithms",
        specs.map((s) => ({
          name: s.name,
          loss: policyLossConfigToJson(s.loss),
          advantage: s.advantage,
          klPlacement: s.klPlacement,
          citation: s.citation,
        })),
      );
      return 0;
    }
    const w = Math.max(...specs.map((s) => s.name.length));
    const lines = specs.map(
      (s) =>
        `${s.name.padEnd(w)}  ${s.loss.surrogate} on ${s.loss.ratio} ratio, ${s.loss.aggregation}; advantage ${s.advantage}; ${s.citation.arxiv ? `arXiv ${s.citation.arxiv}` : (s.citation.url ?? "")}`,
    );
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  },
};
