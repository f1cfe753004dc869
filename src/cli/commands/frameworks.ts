/** `polgrad frameworks`: list the labelled framework models and their pins. */
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `frameworks` command. */
export const frameworksCommand: Command = {
  name: "frameworks",
  summary:
    "List the framework models (verl, OpenRLHF, TRL at their pinned commits) usable with 'polgrad loss --framework'.",
  usage: "frameworks [--json]",
  options: { json: { type: "boolean", description: "print one JSON document" } },
  async run(values, _p, io) {
    const { FRAMEWORK_MODELS, FRAMEWORK_MODEL_IDS } = await import(
      "../../conformance/frameworks/registry.js"
    );
    const models = FRAMEWORK_MODEL_IDS.map(
      (id) => FRAMEWORK_MODELS[id] as NonNullable<(typeof FRAMEWORK_MODELS)[string]>,
    );
    if (values.json) {
      writeJson(
        io,
        "frameworks",
        models.map((m) => ({
          id: m.id,
          framework: m.framework,
          variant: m.variant,
          pin: m.pin,
          settings: m.settings,
          needs: m.needs,
          description: m.description,
        })),
      );
      return 0;
    }
    const w = Math.max(...models.map((m) => m.id.length));
    let last = "";
    const lines: string[] = [];
    for (const m of models) {
      const head = `${m.framework}@${m.pin.label}`;
      if (head !== last) {
        lines.push(
          `${last === "" ? "" : "\n"}${head}: ${m.pin.repo} @ ${m.pin.commit.slice(0, 12)}, ${m.pin.path} (sha256 ${m.pin.sha256.slice(0, 12)}…)`,
        );
        last = head;
      }
      lines.push(
        `  ${m.id.padEnd(w)}  ${m.pin.function}${m.needs.length > 0 ? ` (needs ${m.needs.join(", ")})` : ""}`,
      );
    }
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  },
};
