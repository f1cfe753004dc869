/**
 * `polgrad contract liveness DIR [--max-degenerate N] [--form trl|official]`: probe a run's
 * per-batch dumps for liveness of the perception term (docs/contracts.md#liveness-on-a-run).
 * Exit 0 live, 1 not shown live (bound exceeded, a dead or negative term, or the batches ran out),
 * 2 bad input.
 */
import { join } from "node:path";
import { fmtValue, mustBe, safeText } from "../../core/message.js";
import { IoError, UsageError } from "../../errors.js";
import { readdirNames } from "../../platform/fsPath.js";
import type { CommandIO, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";
import type { ContractSubcommand } from "./contractSubcommand.js";

const CMD = "polgrad contract liveness";

function usage(arg: string, rule: string, got: string): UsageError {
  return new UsageError(CMD, arg, `${CMD}: ${arg} must be ${rule}; got ${got}`);
}

/** One batch the probe read. */
interface ProbedBatch {
  readonly index: number;
  readonly file: string;
  readonly step: number | null;
  readonly source: "scalars" | "logprobs";
  readonly term: number | null;
  readonly gradNorm: number | null;
  readonly degenerate: boolean;
}

const fin = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * Run `contract liveness`: list DIR's batch files in probe order, read them lazily, run
 * probeLiveness with the bound and print the report.
 *
 * Formula: files = orderBatchFiles(readdir(DIR)); measure = observedLivenessMeasure(form) on
 * readTensors(file); probeLiveness(files, { measure, maxDegenerate = 20 }); exit 0 iff live.
 *
 * @param values - Parsed options (`max-degenerate`, `form`, `json`).
 * @param args - `[DIR]`.
 * @param io - Where to write.
 * @returns 0 live; 1 bound exceeded, negative term, dead gradient, non-finite measure or inconclusive.
 * @throws {UsageError} E_USAGE for a missing DIR, a bad bound or form.
 * @throws {IoError} E_IO for an unreadable folder, one without batch files, or a bad batch file.
 * @derivation docs/contracts.md#liveness-on-a-run
 * @enforcedBy test/contracts/livenessCli.test.ts > contract liveness > golden: 20 degenerate batches then a live one exits 0 and 21 degenerate exit 1
 * @enforcedBy test/contracts/livenessCli.test.ts > contract liveness > rejects: a missing or empty folder and a bad bound exit 2
 * @since 0.1.0
 */
export async function runContractLiveness(
  values: OptionValues,
  args: readonly string[],
  io: CommandIO,
): Promise<number> {
  if (args.length !== 1 || args[0] === "")
    throw usage("DIR", "exactly one folder of per-batch dumps", `${args.length} arguments`);
  const dir = args[0] as string;
  const { probeLiveness, LivenessError, PAPO_PROBE_MAX_DEGENERATE_BATCHES } = await import(
    "../../contracts/liveness.js"
  );
  const bound =
    intOption(values, "max-degenerate", "contract liveness", 0) ??
    PAPO_PROBE_MAX_DEGENERATE_BATCHES;
  const form = values.form ?? "trl";
  if (form !== "trl" && form !== "official")
    throw usage("--form", "one of trl, official", fmtValue(form));
  let names: string[];
  try {
    names = readdirNames(dir);
  } catch (e) {
    const got = `${(e as NodeJS.ErrnoException).code ?? "error"} (${safeText(dir)})`;
    throw new IoError(CMD, "DIR", mustBe(CMD, "DIR", "a readable folder", got), dir);
  }
  const { orderBatchFiles, observedLivenessMeasure } = await import(
    "../../contracts/observedLiveness.js"
  );
  const { readTensors } = await import("../../io/readTensors.js");
  const { order, files } = orderBatchFiles(names);
  if (files.length === 0) {
    const got = `no .safetensors or .json file (${safeText(dir)})`;
    throw new IoError(CMD, "DIR", mustBe(CMD, "DIR", "a folder of per-batch dumps", got), dir);
  }
  const measure = observedLivenessMeasure(form);
  const probed: ProbedBatch[] = [];
  const sets = function* () {
    for (const f of files) yield { ...f, set: readTensors(join(dir, f.file)) };
  };
  let status: string;
  let concludedAt: number | null;
  let message: string | null = null;
  try {
    const r = probeLiveness(sets(), {
      maxDegenerate: bound,
      measure: (b, index) => {
        const m = measure(b.set);
        const source = b.set.tensors.has("perception_kl") ? "scalars" : "logprobs";
        probed.push({
          index,
          file: b.file,
          step: b.step,
          source,
          term: fin(m.term),
          gradNorm: fin(m.gradNorm),
          degenerate: m.term === 0,
        });
        return m;
      },
    });
    status = r.status;
    concludedAt = r.status === "live" ? r.batchIndex : null;
  } catch (e) {
    if (!(e instanceof LivenessError)) throw e;
    status = e.reason;
    concludedAt = e.batchIndex;
    message = e.message.split("\n")[0] ?? null;
  }
  const at = concludedAt === null ? null : (probed[concludedAt] ?? null);
  const report = {
    dir,
    form,
    order,
    maxDegenerate: bound,
    files: files.length,
    status,
    live: status === "live",
    concludedAt,
    file: at === null ? null : at.file,
    skipped: probed.filter((p) => p.degenerate).length,
    message,
    batches: probed,
  };
  if (values.json) writeJson(io, "contract liveness", report, status === "live");
  else {
    const lines = probed.map(
      (p) =>
        `batch ${p.index} ${safeText(p.file)}${p.step === null ? "" : ` (step ${p.step})`}: term ${p.term ?? "non-finite"}, gradient norm ${p.gradNorm ?? "non-finite"}${p.degenerate ? " — degenerate, skipped" : ""}`,
    );
    const head = `liveness of ${safeText(dir)}: ${files.length} batch files in ${order} order, bound ${report.maxDegenerate} consecutive degenerate batches, form ${form}`;
    const tail =
      status === "live"
        ? `verdict: live at batch ${concludedAt} (${safeText(report.file ?? "")}) after ${report.skipped} degenerate`
        : status === "inconclusive"
          ? `verdict: inconclusive — all ${files.length} batches degenerate, fewer than the bound + 1`
          : `verdict: ${status} at batch ${concludedAt}${message === null ? "" : ` — ${safeText(message)}`}`;
    io.stdout(`${[head, ...lines, tail].join("\n")}\n`);
  }
  return status === "live" ? 0 : 1;
}

/** The `contract liveness` subcommand. */
export const contractLiveness: ContractSubcommand = {
  name: "liveness",
  usage: "contract liveness DIR [--max-degenerate N] [--form trl|official] [--json]",
  options: {
    "max-degenerate": {
      type: "string",
      argument: "N",
      description:
        "liveness: consecutive degenerate (term exactly 0) batches tolerated; the next one fails",
      default: "20",
    },
    form: {
      type: "string",
      argument: "trl|official",
      description:
        "liveness: the PAPO form whose perception term is computed from logprobs dumps (default trl, TRL v0.29.1)",
    },
  },
  run: runContractLiveness,
};
