/** `polgrad contracts`: list the registered reduction contracts. */
import type { Command } from "../command.js";
import { writeJson } from "../output.js";

/** The `contracts` command. */
export const contractsCommand: Command = {
  name: "contracts",
  summary:
    "List the reduction contracts: each child configuration, its parent, and where they coincide.",
  usage: "contracts [--json]",
  options: { json: { type: "boolean", description: "print one JSON document (the contracts)" } },
  async run(values, _p, io) {
    const { REDUCTIONS, REDUCTION_NAMES } = await import("../../contracts/reductions.js");
    const contracts = REDUCTION_NAMES.map((n) => REDUCTIONS[n]);
    if (values.json) {
      writeJson(io, "contracts", contracts);
      return 0;
    }
    const { renderContractsText } = await import("../../contracts/text.js");
    io.stdout(renderContractsText(contracts));
    return 0;
  },
};
