/** `polgrad history FRAMEWORK --key KEY`: a config key's default and its meaning per recorded release (docs/cli.md#history). */
import { fmtValue } from "../../core/message.js";
import { fail, UsageError } from "../../errors.js";
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `history` command. */
export const historyCommand: Command = {
  name: "history",
  summary:
    "Print a framework config key's default per recorded release (TRL, verl, OpenRLHF) and what the default computes, with provenance; without --key, list the releases.",
  usage: "history trl|verl|openrlhf [--key KEY] [--json]",
  positionals: 1,
  options: {
    key: {
      type: "string",
      argument: "KEY",
      description:
        "the key in the framework's spelling (TRL loss_type; verl actor_rollout_ref.actor.loss_agg_mode; OpenRLHF --advantage_estimator)",
    },
    json: { type: "boolean", description: "print one JSON document" },
  },
  async run(values, positionals, io) {
    const fn = "polgrad history";
    const fw = positionals[0];
    if (fw !== "trl" && fw !== "verl" && fw !== "openrlhf")
      throw fail(UsageError, fn, "framework", "trl, verl or openrlhf", fmtValue(fw ?? "nothing"));
    if (typeof values.key !== "string") {
      const { RELEASE_FACTS } = await import("../../conformance/frameworkConfig/releases.js");
      const facts = RELEASE_FACTS[fw];
      const rows = facts.releases.map((r) => ({
        ref: `${fw}@${r.label}`,
        tag: r.tag,
        commit: r.commit,
        date: r.date,
        keys: r.keys.length,
        files: r.files,
      }));
      if (values.json)
        writeJson(io, "history", { framework: fw, repo: facts.repo, releases: rows });
      else
        io.stdout(
          `${[`${fw}: ${facts.repo}, ${rows.length} recorded releases (${facts.recordedBy.tool})`, ...rows.map((r) => `  ${r.ref.padEnd(22)} ${r.date}  ${r.commit.slice(0, 12)}  ${r.keys} keys`)].join("\n")}\n`,
        );
      return 0;
    }
    const { keyHistory } = await import("../../conformance/frameworkConfig/history.js");
    const h = keyHistory(fw, values.key);
    if (values.json) writeJson(io, "history", h);
    else {
      const { renderHistoryText } = await import("../../report/explainText.js");
      io.stdout(renderHistoryText(h));
    }
    return 0;
  },
};
