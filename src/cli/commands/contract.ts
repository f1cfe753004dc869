/**
 * `polgrad contract`: two subcommands. `contract check` checks a local framework checkout against
 * a pinned signature contract (docs/conformance/drift.md#signature-contracts); `contract reduce`
 * checks a reduction contract on a batch (./contractReduce.ts). Exit 0 ok, 1 broken, 2 bad input.
 */
import { fmtValue } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import type { Command, OptionSpec, OptionValues } from "../command.js";
import { writeJson } from "../output.js";
import { CONTRACT_REDUCE_OPTIONS, CONTRACT_REDUCE_USAGE } from "./contractReduce.js";

const CHECK_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  checkout: {
    type: "string",
    argument: "PATH",
    description: "check: work tree of the framework",
  },
  pin: {
    type: "string",
    argument: "NAME",
    description: "check: signature contract to check against, trl@<tag>",
    default: "trl@v0.29.1",
  },
};

function usage(arg: string, rule: string, got: string): UsageError {
  return new UsageError(
    "polgrad contract",
    arg,
    `polgrad contract: ${arg} must be ${rule}; got ${got}`,
  );
}

/** Reject options that belong to the other subcommand. */
function onlyOwnOptions(values: OptionValues, sub: string, others: readonly string[]): void {
  const other = sub === "check" ? "reduce" : "check";
  for (const name of others) {
    if (name !== "json" && values[name] !== undefined)
      throw usage(`--${name}`, `used with 'contract ${other}' only`, `it with 'contract ${sub}'`);
  }
}

/** The `contract` command (`check` and `reduce`). */
export const contractCommand: Command = {
  name: "contract",
  summary:
    "Check a checkout's pinned private-method signatures and file hashes (check), or a reduction contract on a batch (reduce).",
  usage: `contract check --checkout PATH [--pin trl@v0.29.1] [--json]\n   or: polgrad ${CONTRACT_REDUCE_USAGE}`,
  positionals: 2,
  options: {
    ...CHECK_OPTIONS,
    ...CONTRACT_REDUCE_OPTIONS,
    json: {
      type: "boolean",
      description: "print one JSON document (the contract report or the reduction check)",
    },
  },
  async run(values, positionals, io) {
    const sub = positionals[0];
    if (sub === "reduce") {
      onlyOwnOptions(values, "reduce", Object.keys(CHECK_OPTIONS));
      const { runContractReduce } = await import("./contractReduce.js");
      return runContractReduce(values, positionals, io);
    }
    if (sub !== "check" || positionals.length !== 1) {
      const got = positionals.length === 0 ? "nothing" : fmtValue(positionals.join(" "));
      throw usage("SUBCOMMAND", "'check' or 'reduce NAME'", got);
    }
    onlyOwnOptions(values, "check", Object.keys(CONTRACT_REDUCE_OPTIONS));
    if (typeof values.checkout !== "string" || values.checkout === "")
      throw usage("--checkout", "given", "nothing");
    const { checkContract, renderContractText } = await import("../../contracts/signature.js");
    const pin = typeof values.pin === "string" ? values.pin : "trl@v0.29.1";
    const report = await checkContract(values.checkout, pin);
    if (values.json) writeJson(io, "contract check", report);
    else io.stdout(renderContractText(report));
    return report.ok ? 0 : 1;
  },
};
