/**
 * `polgrad contract <subcommand>`: a dispatcher over {@link SUBCOMMANDS}, each in its own file —
 * `contract check` (signature and adapter contracts of a checkout, ./contractCheck.ts),
 * `contract reduce` (a reduction contract on a batch or an observed run, ./contractReduce.ts),
 * `contract table` (an adapter contract on every tag of a git directory, ./contractTable.ts) and
 * `contract liveness` (the PAPO liveness probe over a folder of dumps, ./contractLiveness.ts). Exit 0 ok, 1 broken, 2 bad input.
 * An option belongs to the subcommands that list it; given to another one it is a usage error.
 */
import { fmtValue } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import type { Command, OptionSpec } from "../command.js";
import { contractCheck } from "./contractCheck.js";
import { contractLiveness } from "./contractLiveness.js";
import { contractReduce } from "./contractReduce.js";
import type { ContractSubcommand } from "./contractSubcommand.js";
import { contractTable } from "./contractTable.js";

/** Every `contract` subcommand, in help order. A new one is one file and one entry here. */
export const SUBCOMMANDS: readonly ContractSubcommand[] = [
  contractCheck,
  contractReduce,
  contractLiveness,
  contractTable,
];

function usage(arg: string, rule: string, got: string): UsageError {
  return new UsageError(
    "polgrad contract",
    arg,
    `polgrad contract: ${arg} must be ${rule}; got ${got}`,
  );
}

/** The union of every subcommand's options, plus the shared `--json`. */
function allOptions(): Record<string, OptionSpec> {
  const out: Record<string, OptionSpec> = {};
  for (const s of SUBCOMMANDS) Object.assign(out, s.options);
  out.json = { type: "boolean", description: "print one JSON document (the subcommand's report)" };
  return out;
}

/** The `contract` command. */
export const contractCommand: Command = {
  name: "contract",
  summary: `Check contracts: ${SUBCOMMANDS.map((s) => s.name).join(", ")} (see docs/contracts.md).`,
  usage: SUBCOMMANDS.map((s) => s.usage).join("\n   or: polgrad "),
  positionals: 2,
  options: allOptions(),
  async run(values, positionals, io) {
    const [word, ...args] = positionals;
    const sub = SUBCOMMANDS.find((s) => s.name === word);
    if (sub === undefined) {
      const got = word === undefined ? "nothing" : fmtValue(word);
      throw usage("SUBCOMMAND", `one of ${SUBCOMMANDS.map((s) => `'${s.name}'`).join(", ")}`, got);
    }
    for (const [name, v] of Object.entries(values)) {
      if (name === "json" || v === undefined || name in sub.options) continue;
      const owners = SUBCOMMANDS.filter((s) => name in s.options).map(
        (s) => `'contract ${s.name}'`,
      );
      throw usage(
        `--${name}`,
        `used with ${owners.join(" or ")} only`,
        `it with 'contract ${sub.name}'`,
      );
    }
    return sub.run(values, args, io);
  },
};
