/**
 * `polgrad contract check --checkout PATH [--pin trl@v0.29.1]`: check a local framework checkout
 * against a pinned signature contract (docs/conformance/drift.md#signature-contracts).
 * Exit 0 when it holds, 1 when it is broken, 2 on bad input.
 */
import { fmtValue } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import { writeJson } from "../output.js";
import type { ContractSubcommand } from "./contractSubcommand.js";

const CMD = "polgrad contract check";

/** The `contract check` subcommand. */
export const contractCheck: ContractSubcommand = {
  name: "check",
  usage: "contract check --checkout PATH [--pin trl@v0.29.1] [--json]",
  options: {
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
  },
  async run(values, args, io) {
    if (args.length !== 0)
      throw new UsageError(
        CMD,
        "ARGS",
        `${CMD}: ARGS must be none (the checkout is --checkout PATH); got ${fmtValue(args.join(" "))}`,
      );
    if (typeof values.checkout !== "string" || values.checkout === "")
      throw new UsageError(CMD, "--checkout", `${CMD}: --checkout must be given; got nothing`);
    const { checkContract, renderContractText } = await import("../../contracts/signature.js");
    const pin = typeof values.pin === "string" ? values.pin : "trl@v0.29.1";
    const report = await checkContract(values.checkout, pin);
    if (values.json) writeJson(io, "contract check", report);
    else io.stdout(renderContractText(report));
    return report.ok ? 0 : 1;
  },
};
