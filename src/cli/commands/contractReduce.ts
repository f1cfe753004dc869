/**
 * `polgrad contract reduce NAME --batch FILE --precision P`: check one reduction contract on a
 * batch file. Exit 0 when it holds, 1 when it is violated, 2 on bad input.
 */
import { UsageError } from "../../errors.js";
import type { CommandIO, OptionSpec, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";

const CMD = "polgrad contract reduce";
const PRECISIONS = ["bf16", "fp16", "fp32", "fp64"];

/** The options of `contract reduce`, to merge into the `contract` command's option table. */
export const CONTRACT_REDUCE_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  batch: {
    type: "string",
    argument: "FILE",
    description:
      "batch file (.safetensors or .json): the policy-loss tensors, plus masked_logprobs (and entropies, masked_entropies) for papo contracts",
  },
  precision: {
    type: "string",
    argument: "bf16|fp16|fp32|fp64",
    description: "training precision whose measured roundoff sets the gradient tolerance",
  },
  seed: {
    type: "string",
    argument: "N",
    description: "seed of the calibration plans",
    default: "0",
  },
  pairs: { type: "string", argument: "N", description: "calibration pairs", default: "8" },
  "norm-len": {
    type: "string",
    argument: "N",
    description: "token_sum_norm budget for a side without one (default: the padded width T)",
  },
  strict: {
    type: "boolean",
    description: "reject a batch that breaks the contract's condition instead of imposing it",
  },
  json: { type: "boolean", description: "print one JSON document (the reduction check)" },
};

/** Usage line of `contract reduce`. */
export const CONTRACT_REDUCE_USAGE: string =
  "contract reduce NAME --batch FILE --precision bf16|fp16|fp32|fp64 [--seed N] [--pairs N] [--norm-len N] [--strict] [--json]";

function usage(arg: string, rule: string, got: string): UsageError {
  return new UsageError(CMD, arg, `${CMD}: ${arg} must be ${rule}; got ${got}`);
}

/**
 * Run `contract reduce`: positionals are `[NAME]` or `["reduce", NAME]`.
 *
 * @param values - Parsed options (see {@link CONTRACT_REDUCE_OPTIONS}).
 * @param positionals - The contract name, optionally after the subcommand word `reduce`.
 * @param io - Where to write.
 * @returns 0 when the reduction holds, 1 when it is violated.
 * @throws {UsageError} E_USAGE for a missing name, batch or precision (exit 2 via main).
 * @since 0.1.0
 */
export async function runContractReduce(
  values: OptionValues,
  positionals: readonly string[],
  io: CommandIO,
): Promise<number> {
  const args = positionals[0] === "reduce" ? positionals.slice(1) : positionals;
  if (args.length !== 1) {
    throw usage(
      "NAME",
      "exactly one contract name (see 'polgrad contracts')",
      `${args.length} arguments`,
    );
  }
  if (typeof values.batch !== "string" || values.batch === "") {
    throw usage("--batch", "a batch file (.safetensors or .json)", "nothing");
  }
  const precision = values.precision;
  if (typeof precision !== "string" || !PRECISIONS.includes(precision)) {
    throw usage(
      "--precision",
      `one of ${PRECISIONS.join(", ")}`,
      precision === undefined ? "nothing" : JSON.stringify(precision),
    );
  }
  const seed = intOption(values, "seed", "contract reduce", 0) ?? 0;
  const pairs = intOption(values, "pairs", "contract reduce") ?? 8;
  const normLen = intOption(values, "norm-len", "contract reduce") ?? null;
  const { getReduction } = await import("../../contracts/reductions.js");
  const contract = getReduction(args[0] as string);
  const { readTensors } = await import("../../io/readTensors.js");
  const { contractBatchFromTensors } = await import("../../contracts/contractBatch.js");
  const { checkReduction } = await import("../../contracts/checkReduction.js");
  const batch = contractBatchFromTensors(readTensors(values.batch));
  const check = checkReduction(contract, batch, {
    precision: precision as "bf16" | "fp16" | "fp32" | "fp64",
    seed,
    pairs,
    normLen,
    impose: values.strict !== true,
  });
  if (values.json) writeJson(io, "contract reduce", check);
  else {
    const { renderReductionText } = await import("../../contracts/text.js");
    io.stdout(renderReductionText(check, contract));
  }
  return check.verdict === "holds" ? 0 : 1;
}
