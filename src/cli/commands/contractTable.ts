/**
 * `polgrad contract table --git DIR [--contract NAME|FILE] [--refs a,b,…] [--vendored FILE]`: an
 * adapter contract on every tag of a git directory (bare repositories and mirrors included), one
 * row per ref (docs/conformance/adapters.md#every-tag-at-once). Exit 0 when the authors' rule
 * passes at some ref, 1 when it passes at none, 2 on bad input.
 */
import { fmtValue } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import { writeJson } from "../output.js";
import { loadContractOption } from "./contractCheck.js";
import { ADAPTER_CONTRACT_OPTIONS, type ContractSubcommand } from "./contractSubcommand.js";

const CMD = "polgrad contract table";

function usage(arg: string, rule: string, got: string): UsageError {
  return new UsageError(CMD, arg, `${CMD}: ${arg} must be ${rule}; got ${got}`);
}

/** The `contract table` subcommand. */
export const contractTable: ContractSubcommand = {
  name: "table",
  usage:
    "contract table --git DIR [--contract papo-g-adapter|FILE] [--refs a,b,...] [--vendored FILE] [--json]",
  options: {
    git: {
      type: "string",
      argument: "DIR",
      description: "table: a git directory (.git, bare repository or mirror); no checkout needed",
    },
    refs: {
      type: "string",
      argument: "a,b,...",
      description:
        "table: the refs to check, in this order (default: every tag by version, then HEAD)",
    },
    ...ADAPTER_CONTRACT_OPTIONS,
  },
  async run(values, args, io) {
    if (args.length !== 0)
      throw usage("ARGS", "none (the git directory is --git DIR)", fmtValue(args.join(" ")));
    if (typeof values.git !== "string" || values.git === "")
      throw usage("--git", "a git directory", "nothing");
    let refs: string[] | undefined;
    if (values.refs !== undefined) {
      const raw = values.refs;
      refs = typeof raw === "string" ? raw.split(",").map((r) => r.trim()) : [];
      if (refs.length === 0 || refs.some((r) => r === ""))
        throw usage("--refs", "a comma-separated list of refs", fmtValue(raw));
    }
    const vendored = values.vendored;
    if (vendored !== undefined && (typeof vendored !== "string" || vendored === ""))
      throw usage("--vendored", "a file", fmtValue(vendored));
    const contract = await loadContractOption(CMD, values.contract);
    const { adapterTable } = await import("../../contracts/adapterTable.js");
    const table = await adapterTable(contract, values.git, {
      ...(refs === undefined ? {} : { refs }),
      ...(vendored === undefined ? {} : { vendored }),
    });
    if (values.json) writeJson(io, "contract table", table, table.authors.firstPassing !== null);
    else {
      const { renderAdapterTableText } = await import("../../contracts/adapterText.js");
      io.stdout(renderAdapterTableText(table));
    }
    return table.authors.firstPassing === null ? 1 : 0;
  },
};
