/**
 * `polgrad contract check`: check a local framework checkout against an adapter contract
 * (`--contract papo-g-adapter|FILE [--vendored FILE]`, docs/conformance/adapters.md) or against a
 * pinned exact-signature contract (`--pin trl@v0.29.1`, docs/conformance/drift.md#signature-contracts;
 * the default when neither is given). Exit 0 when it holds, 1 when it is broken, 2 on bad input.
 */
import { fmtValue } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import type { OptionValues } from "../command.js";
import { writeJson } from "../output.js";
import { ADAPTER_CONTRACT_OPTIONS, type ContractSubcommand } from "./contractSubcommand.js";

const CMD = "polgrad contract check";

/**
 * The adapter contract an option names: a built-in name, else a contract file (JSON).
 * @internal
 */
export async function loadContractOption(
  cmd: string,
  raw: unknown,
): Promise<import("../../contracts/adapterTypes.js").AdapterContract> {
  const { ADAPTER_CONTRACTS, getAdapterContract, parseAdapterContract } = await import(
    "../../contracts/adapterFile.js"
  );
  const name = typeof raw === "string" && raw !== "" ? raw : "papo-g-adapter";
  if (raw !== undefined && (typeof raw !== "string" || raw === ""))
    throw new UsageError(
      cmd,
      "--contract",
      `${cmd}: --contract must be a name or a file; got ${fmtValue(raw)}`,
    );
  if (Object.hasOwn(ADAPTER_CONTRACTS, name)) return getAdapterContract(name);
  if (!/[/\\]|\.json$/i.test(name)) return getAdapterContract(name);
  const { readJsonFile } = await import("../../io/readJsonFile.js");
  return parseAdapterContract(readJsonFile(name, "parseAdapterContract", { maxBytes: 2 ** 20 }));
}

function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (typeof v !== "string" || v === "")
    throw new UsageError(
      CMD,
      `--${name}`,
      `${CMD}: --${name} must be a non-empty value; got ${fmtValue(v)}`,
    );
  return v;
}

/** The `contract check` subcommand. */
export const contractCheck: ContractSubcommand = {
  name: "check",
  usage:
    "contract check --checkout PATH [--contract papo-g-adapter|FILE [--vendored FILE] | --pin trl@v0.29.1] [--json]",
  options: {
    checkout: {
      type: "string",
      argument: "PATH",
      description: "check: work tree of the framework",
    },
    pin: {
      type: "string",
      argument: "NAME",
      description:
        "check: exact-signature contract to check against, trl@<tag> (the default mode; not with --contract)",
      default: "trl@v0.29.1",
    },
    ...ADAPTER_CONTRACT_OPTIONS,
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
    if (values.contract !== undefined && values.pin !== undefined)
      throw new UsageError(
        CMD,
        "--pin",
        `${CMD}: --pin must be absent with --contract (an adapter contract or a pinned signature contract, not both); got ${fmtValue(values.pin)}`,
      );
    const vendored = stringOption(values, "vendored");
    if (values.contract === undefined && vendored !== undefined)
      throw new UsageError(
        CMD,
        "--vendored",
        `${CMD}: --vendored must be used with --contract; got ${fmtValue(vendored)}`,
      );
    if (values.contract !== undefined) {
      const contract = await loadContractOption(CMD, values.contract);
      const { checkAdapterContract } = await import("../../contracts/adapterCheck.js");
      const report = await checkAdapterContract(
        contract,
        values.checkout,
        vendored === undefined ? {} : { vendored },
      );
      if (values.json) writeJson(io, "contract check", report, report.ok);
      else {
        const { renderAdapterCheckText } = await import("../../contracts/adapterText.js");
        io.stdout(renderAdapterCheckText(report));
      }
      return report.ok ? 0 : 1;
    }
    const { checkContract, renderContractText } = await import("../../contracts/signature.js");
    const pin = typeof values.pin === "string" ? values.pin : "trl@v0.29.1";
    const report = await checkContract(values.checkout, pin);
    if (values.json) writeJson(io, "contract check", report, report.ok);
    else io.stdout(renderContractText(report));
    return report.ok ? 0 : 1;
  },
};
