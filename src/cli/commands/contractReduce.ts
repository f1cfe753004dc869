/**
 * `polgrad contract reduce NAME --batch FILE --precision P`: check one reduction contract on a
 * batch file; `polgrad contract reduce NAME --observed FILE [--precision P] [--batch FILE]
 * [--decide authors|calibrated]`: check it on a run's dumped gradients (and losses) by the
 * authors' rule and by our calibrated tolerance. Exit 0 when it holds, 1 when it is violated,
 * 2 on bad input.
 */
import { fmtValue } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import type { CommandIO, OptionSpec, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";
import type { ContractSubcommand } from "./contractSubcommand.js";

const CMD = "polgrad contract reduce";
const PRECISIONS = ["bf16", "fp16", "fp32", "fp64"];
/** The calibration budget's cap, as in measurePrecision (docs/cli.md#bounds). */
const MAX_PAIRS = 10_000;

/** The options of `contract reduce`, to merge into the `contract` command's option table. */
export const CONTRACT_REDUCE_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  batch: {
    type: "string",
    argument: "FILE",
    description:
      "batch file (.safetensors or .json): the policy-loss tensors, plus masked_logprobs (and entropies, masked_entropies) for papo contracts; with --observed, the batch to calibrate on",
  },
  observed: {
    type: "string",
    argument: "FILE",
    description:
      "a run's dump: parent_grad, child_grad (and parent_loss, child_loss, response_mask), checked by the authors' rule and by our calibrated tolerance",
  },
  decide: {
    type: "string",
    argument: "authors|calibrated",
    description: "with --observed: which verdict sets the exit code (default authors)",
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
  pairs: {
    type: "string",
    argument: "N",
    description: "calibration pairs (at most 10000)",
    default: "8",
  },
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
  "contract reduce NAME --batch FILE --precision bf16|fp16|fp32|fp64 [--seed N] [--pairs N] [--norm-len N] [--strict] [--json]\n   or: polgrad contract reduce NAME --observed FILE [--precision P] [--batch FILE] [--decide authors|calibrated] [--seed N] [--pairs N] [--json]";

function usage(arg: string, rule: string, got: string): UsageError {
  return new UsageError(CMD, arg, `${CMD}: ${arg} must be ${rule}; got ${got}`);
}

/**
 * Run `contract reduce`: read the batch file, check the named reduction in the given precision and
 * print the report (or the `--json` document).
 *
 * Formula: exit = 0 if checkReduction(NAME, batch, { precision, seed, pairs, normLen,
 * impose: !strict }).verdict is "holds", else 1; every thrown PolgradError is exit 2 in main.
 *
 * @param values - Parsed options (see {@link CONTRACT_REDUCE_OPTIONS}).
 * @param positionals - `[NAME]` or `["reduce", NAME]` (the subcommand word is optional).
 * @param io - Where to write; stdout carries only the report.
 * @returns 0 when the reduction holds, 1 when it is violated.
 * @throws {UsageError} E_USAGE for a missing or extra name, a missing batch, a precision not in
 *   bf16|fp16|fp32|fp64, or a malformed integer option.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown contract name.
 * @throws {IoError} E_IO for an unreadable or invalid batch file.
 * @throws {ConfigError} E_CONFIG (and the losses' errors) as `checkReduction`.
 * @derivation docs/contracts.md#command-line
 * @enforcedBy test/contracts/cli.test.ts > contract reduce > golden: a policy-loss batch file holds and exits 0
 * @enforcedBy test/contracts/cli.test.ts > contract reduce > golden: a ratio above the 1e300 stand-in for ∞ breaks dual_clip_to_pg_clip and exits 1
 * @enforcedBy test/contracts/cli.test.ts > contract reduce > rejects: a missing name, batch or precision, or an unmet condition in strict mode, exits 2
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
  if (values.observed !== undefined) return runObserved(values, args[0] as string, io);
  if (values.decide !== undefined)
    throw usage("--decide", "used with --observed only", fmtValue(values.decide));
  if (typeof values.batch !== "string" || values.batch === "") {
    throw usage("--batch", "a batch file (.safetensors or .json)", "nothing");
  }
  const precision = values.precision;
  if (typeof precision !== "string" || !PRECISIONS.includes(precision)) {
    throw usage(
      "--precision",
      `one of ${PRECISIONS.join(", ")}`,
      precision === undefined ? "nothing" : fmtValue(precision),
    );
  }
  const seed = intOption(values, "seed", "contract reduce", 0) ?? 0;
  const pairs = intOption(values, "pairs", "contract reduce") ?? 8;
  if (pairs > MAX_PAIRS)
    throw usage("--pairs", `a positive integer <= ${MAX_PAIRS}`, fmtValue(values.pairs));
  const normLen = intOption(values, "norm-len", "contract reduce") ?? null;
  const { getReduction } = await import("../../contracts/reductions.js");
  const contract = getReduction(args[0] as string);
  const { readTensors } = await import("../../io/readTensors.js");
  const { contractBatchFromTensors } = await import("../../io/contractBatch.js");
  const { checkReduction } = await import("../../contracts/checkReduction.js");
  const batch = contractBatchFromTensors(readTensors(values.batch));
  const check = checkReduction(contract, batch, {
    precision: precision as "bf16" | "fp16" | "fp32" | "fp64",
    seed,
    pairs,
    normLen,
    impose: values.strict !== true,
  });
  if (values.json) writeJson(io, "contract reduce", check, check.verdict === "holds");
  else {
    const { renderReductionText } = await import("../../contracts/text.js");
    io.stdout(renderReductionText(check, contract));
  }
  return check.verdict === "holds" ? 0 : 1;
}

/**
 * `contract reduce NAME --observed FILE`: read the dump (and the optional batch), check it by
 * both tolerance sets and print the report; the `decide` set's verdict is the exit code.
 */
async function runObserved(values: OptionValues, name: string, io: CommandIO): Promise<number> {
  if (typeof values.observed !== "string" || values.observed === "")
    throw usage("--observed", "a dump file (.safetensors or .json)", "nothing");
  for (const o of ["strict", "norm-len"] as const) {
    if (values[o] !== undefined)
      throw usage(`--${o}`, "used without --observed only", fmtValue(values[o]));
  }
  const precision = values.precision ?? "bf16";
  if (typeof precision !== "string" || !PRECISIONS.includes(precision))
    throw usage("--precision", `one of ${PRECISIONS.join(", ")}`, fmtValue(precision));
  const decide = values.decide ?? "authors";
  if (decide !== "authors" && decide !== "calibrated")
    throw usage("--decide", "one of authors, calibrated", fmtValue(decide));
  const seed = intOption(values, "seed", "contract reduce", 0) ?? 0;
  const pairs = intOption(values, "pairs", "contract reduce") ?? 8;
  if (pairs > MAX_PAIRS)
    throw usage("--pairs", `a positive integer <= ${MAX_PAIRS}`, fmtValue(values.pairs));
  const { getReduction } = await import("../../contracts/reductions.js");
  const contract = getReduction(name);
  const { readTensors } = await import("../../io/readTensors.js");
  const { observedFromTensors } = await import("../../contracts/observedTensors.js");
  const { checkObservedReduction } = await import("../../contracts/observed.js");
  let batch = null;
  if (typeof values.batch === "string" && values.batch !== "") {
    const { toBatch } = await import("../../io/batch.js");
    batch = toBatch(readTensors(values.batch));
  } else if (values.batch !== undefined) {
    throw usage("--batch", "a batch file (.safetensors or .json)", "nothing");
  }
  const observed = observedFromTensors(readTensors(values.observed), batch);
  const check = checkObservedReduction(contract, observed, {
    precision: precision as "bf16" | "fp16" | "fp32" | "fp64",
    decide,
    seed,
    pairs,
  });
  if (values.json) writeJson(io, "contract reduce", check, check.verdict === "holds");
  else {
    const { renderObservedText } = await import("../../contracts/observedText.js");
    io.stdout(renderObservedText(check, contract));
  }
  return check.verdict === "holds" ? 0 : 1;
}

/** The `contract reduce` subcommand. */
export const contractReduce: ContractSubcommand = {
  name: "reduce",
  usage: CONTRACT_REDUCE_USAGE,
  options: CONTRACT_REDUCE_OPTIONS,
  run: runContractReduce,
};
