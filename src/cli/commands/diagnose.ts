/** `polgrad diagnose PATH`: every detector on one batch file or a whole run directory. */
import { fmtValue, safeText } from "../../core/message.js";
import { ConfigError, fail, IoError, UnknownNameError, UsageError } from "../../errors.js";
import type { ClipConfig } from "../../losses/config.js";
import {
  isRunFolder,
  NAME_OPTIONS,
  nameOptionsOf,
  noticeLine,
  readBatchTensors,
  sayBatchSource,
} from "../batchInput.js";
import type { Command, CommandIO, OptionSpec, OptionValues } from "../command.js";
import { followLoop, pollSeconds } from "../follow.js";
import { FORMAT_OPTION } from "../inputKind.js";
import { intOption, SCHEMA_VERSION } from "../output.js";
import { progressBar } from "../progress.js";
import { finishDiagnosis } from "./diagnoseOutput.js";

/** A decimal number as written on a command line (no empty item: `Number("")` would be 0). */
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function clipOption(values: OptionValues): ClipConfig | undefined {
  const raw = values.clip;
  if (raw === undefined) return undefined;
  const items = String(raw)
    .split(",")
    .map((x) => x.trim());
  const parts = items.map((x) => (NUMBER.test(x) ? Number(x) : Number.NaN));
  if (parts.length < 2 || parts.length > 3 || parts.some((x) => !Number.isFinite(x))) {
    throw fail(
      UsageError,
      "polgrad diagnose",
      "--clip",
      "EPS_LOW,EPS_HIGH[,RATIO_CAP] (two or three finite numbers, none empty)",
      fmtValue(raw),
    );
  }
  return { epsLow: parts[0] as number, epsHigh: parts[1] as number, ratioCap: parts[2] ?? null };
}

/** The `diagnose` command. */
export const diagnoseCommand: Command = {
  name: "diagnose",
  summary:
    "Run every pathology detector whose inputs are present on a batch file, a step folder, a run folder (step_N, global_step_N/, iter_N, any format) or a run's metric logs (TensorBoard, JSONL, trainer_state.json, W&B exports).",
  usage:
    "diagnose (PATH|- | --merge PART.json ...) [--format F] [--run NAME,...] [--names MAP] [--steps A-B [--summary-out FILE.json]] [--clip LO,HI[,CAP]] [--agg MODE] [--norm-len N] [--empty-rows reject|drop] [--window N] [--seed N] [--alpha A] [--min-effect D=V,...] [--only D,...] [--skip D,...] [--max-unreadable F] [--follow [--poll S] [--until-step N]] [--threads N] [--json]",
  positionals: (values) =>
    values.merge === true
      ? { max: Number.POSITIVE_INFINITY, rule: "the parts' summary files" }
      : { max: 1, rule: "one PATH (a batch file, step folder, run folder or -)" },
  positionalRoles: ["input"],
  options: {
    format: FORMAT_OPTION,
    run: {
      type: "string",
      argument: "NAME[,NAME]",
      description:
        "metric logs: only these runs of PATH (a run is a folder of TensorBoard event files, or one log file; the report lists their names)",
    },
    clip: {
      type: "string",
      argument: "LO,HI[,CAP]",
      description: "clip band of the PPO census",
      default: "0.2,0.2,3",
    },
    agg: {
      type: "string",
      argument: "MODE",
      description: "aggregation weighing tokens in the length-bias probe",
      default: "seq_mean_token_mean",
    },
    "norm-len": { type: "string", argument: "N", description: "budget for --agg token_sum_norm" },
    "empty-rows": {
      type: "string",
      argument: "reject|drop",
      description:
        "rows with no response token: reject (the detectors skip, naming them) or drop them before diagnosing",
      default: "reject",
    },
    window: {
      type: "string",
      argument: "N",
      description: "trailing window of the entropy changepoint test (runs)",
      default: "60% of the steps",
    },
    seed: {
      type: "string",
      argument: "N",
      description: "seed of the permutation test (runs)",
      default: "1",
    },
    alpha: {
      type: "string",
      argument: "A",
      description:
        "family-wise false-alarm level of a run's statistical alarms (each test at A / tests; docs/diagnostics/log-detectors.md)",
      default: "0.05",
    },
    "min-effect": {
      type: "string",
      argument: "D=V[,D=V]",
      description:
        "smallest effect a detector alarms on (entropy_collapse=0.1 nats, clip_shift=0.05 by default)",
    },
    follow: {
      type: "boolean",
      description:
        "follow a run folder while it trains: read only new steps each poll, print each alarm once when it first fires; Ctrl-C or --until-step ends it with the summary and the usual exit code",
    },
    poll: {
      type: "string",
      argument: "S",
      description: "seconds between the polls of --follow",
      default: "2",
    },
    "until-step": {
      type: "string",
      argument: "N",
      description: "with --follow: stop once step N (or a later one) is diagnosed",
    },
    "max-unreadable": {
      type: "string",
      argument: "F",
      description:
        "largest fraction of a run's steps that may be unreadable; beyond it exit 2 (a run folder)",
      default: "0.1",
    },
    only: {
      type: "string",
      argument: "D[,D]",
      description:
        "only these detectors: of a tensor run (entropy_collapse, clip_shift, kl_ref_shift, truncation_shift, length_bias) or of metric logs (docs/diagnostics/log-detectors.md)",
    },
    skip: {
      type: "string",
      argument: "D[,D]",
      description: "not these detectors of a run's family",
    },
    ...NAME_OPTIONS,
    names: {
      ...(NAME_OPTIONS.names as OptionSpec),
      description:
        "tensor dumps: read tensor names as verl, trl, openrlhf or polgrad, or by a FILE.json of polgrad name -> tensor name; metric logs: read metric names as FW[@RELEASE] (trl, verl, openrlhf; auto tells from the names)",
    },
    steps: {
      type: "string",
      argument: "A-B",
      description: "only the steps A to B of a run (inclusive; a shard of the run)",
    },
    threads: {
      type: "string",
      argument: "N",
      description:
        "threads for a run folder (default: from the step count and the cores; every count gives the same report)",
    },
    "summary-out": {
      type: "string",
      role: "output",
      argument: "FILE.json",
      description:
        "write the run's per-step summary (mergeable exactly with --merge) instead of the report",
    },
    merge: {
      type: "boolean",
      description:
        "merge the per-step summaries given as PATHs (--summary-out files) into one report",
    },
    html: {
      type: "string",
      role: "output",
      argument: "FILE",
      description:
        "also write the self-contained HTML report: of a run (per-step traces, alarms) or of a batch (its which table and gradient maps; docs/report-html.md)",
    },
    json: {
      type: "boolean",
      description: "print one JSON document (ok: true iff no alarm fired)",
    },
  },
  async run(values, positionals, io) {
    try {
      return await diagnoseRunCommand(values, positionals, io);
    } catch (e) {
      throw asFlagError(e);
    }
  },
};

/**
 * The command-line flag a library argument of the detectors comes from: their ConfigError names
 * `only`, `runs`, `minEffect.entropy_collapse`; the user typed `--only`, `--run`, `--min-effect`.
 */
const FLAG_OF: Readonly<Record<string, string>> = {
  only: "--only",
  skip: "--skip",
  runs: "--run",
  minEffect: "--min-effect",
  alpha: "--alpha",
  maxUnreadable: "--max-unreadable",
  release: "--names",
};

function asFlagError(e: unknown): unknown {
  if (!(e instanceof ConfigError || e instanceof UnknownNameError) || e.arg === undefined) return e;
  const flag = FLAG_OF[e.arg.split(".")[0] as string];
  const prefix = `${e.fn}: ${e.arg} `;
  if (flag === undefined || !e.message.startsWith(prefix)) return e;
  // --names FW@RELEASE: the part that is wrong is the release.
  const what = e.arg === "release" ? `${flag} release` : flag;
  return new UsageError(
    "polgrad diagnose",
    flag,
    `polgrad diagnose: ${what} ${e.message.slice(prefix.length)}`,
  );
}

async function diagnoseRunCommand(
  values: OptionValues,
  positionals: readonly string[],
  io: CommandIO,
): Promise<number> {
  {
    const fn = "polgrad diagnose";
    if (values.merge === true) return runMerge(values, positionals, io);
    const path = positionals[0];
    if (path === undefined || positionals.length > 1) {
      throw new UsageError(
        fn,
        "PATH",
        `${fn}: PATH must be exactly one batch file, step folder, run folder or - (stdin); got ${positionals.length} arguments`,
      );
    }
    const { inputKind } = await import("../inputKind.js");
    const kind = await inputKind(fn, path, values.format);
    if (kind.logs) {
      const { diagnoseLogsCli } = await import("./diagnoseLogs.js");
      return diagnoseLogsCli(fn, path, kind.format, values, io, trendOptions(values));
    }
    if (values.run !== undefined)
      throw new UsageError(
        fn,
        "--run",
        `${fn}: --run must come with metric logs (it picks logged runs); got ${safeText(path)}, not a metric log`,
      );
    const { checkAggregation } = await import("../../aggregate/aggregation.js");
    const names = await nameOptionsOf(fn, values);
    const options = {
      ...(values.clip !== undefined ? { clip: clipOption(values) as ClipConfig } : {}),
      ...(values.agg !== undefined
        ? { aggregation: checkAggregation(fn, "--agg", values.agg) }
        : {}),
      normLen: intOption(values, "norm-len", "diagnose") ?? null,
      ...(values["empty-rows"] !== undefined
        ? {
            emptyRows: emptyRowsOption(fn, values["empty-rows"]),
          }
        : {}),
    };
    const range = stepsOption(values);
    const summaryOut = values["summary-out"];
    if (values.follow === true) {
      // A run folder that may hold no step yet: the run is followed as it is written.
      if (path === "-" || range !== undefined || typeof summaryOut === "string")
        throw new UsageError(
          fn,
          "--follow",
          `${fn}: --follow must come with a run folder and without --steps or --summary-out; got ${safeText(path)}`,
        );
      return followRunCli(fn, path, values, io, { ...options, ...names, ...trendOptions(values) });
    }
    if (path !== "-" && (await isRunFolder(path))) {
      const { collectRunSteps, summarizeRun } = await import("../../diagnostics/diagnoseRun.js");
      const bar = progressBar(io, "diagnosing", io.stderrIsTTY === true && !values.json);
      const runOptions = {
        ...options,
        ...names,
        ...trendOptions(values),
        ...(range === undefined ? {} : { steps: range }),
      };
      const threads = intOption(values, "threads", "diagnose");
      if (typeof summaryOut !== "string") {
        // The whole run: diagnoseRun, on threads (shards merged exactly: the same report).
        const { diagnoseRun } = await import("../../diagnostics/diagnoseRun.js");
        await import("../../node/registerThreads.js");
        const d = diagnoseRun(
          path,
          threads === undefined ? runOptions : { ...runOptions, threads },
          bar.tick,
        );
        bar.finish();
        return printRun(fn, values, io, d);
      }
      const part = collectRunSteps(path, runOptions, bar.tick);
      bar.finish();
      if (typeof summaryOut === "string") {
        if (values.json)
          throw new UsageError(
            fn,
            "--json",
            `${fn}: --json must not come with --summary-out (the summary file is the JSON document); got both`,
          );
        const { toWire } = await import("../../report/wire.js");
        const { writeFileBytes } = await import("../../io/_internal/writeFile.js");
        const text = `${JSON.stringify({ schema_version: SCHEMA_VERSION, ...(toWire(part) as object) })}\n`;
        writeFileBytes(fn, summaryOut, new TextEncoder().encode(text));
        io.stdout(
          `wrote the per-step summary of ${part.steps.length} diagnosed step(s) of ${part.entries.length} to ${safeText(summaryOut)}; merge the parts with: polgrad diagnose --merge PART.json ...\n`,
        );
        return 0;
      }
      return printRun(fn, values, io, summarizeRun(part, runOptions));
    }
    if (values.threads !== undefined) {
      throw new UsageError(
        fn,
        "--threads",
        `${fn}: --threads must come with a run folder (a batch is one step); got ${safeText(path)}`,
      );
    }
    if (range !== undefined || typeof summaryOut === "string") {
      throw new UsageError(
        fn,
        "--steps",
        `${fn}: --steps and --summary-out must come with a run folder; got ${safeText(path)}`,
      );
    }
    const { toPartialBatch } = await import("../../io/batch.js");
    const { diagnoseBatch } = await import("../../diagnostics/diagnoseBatch.js");
    const tensors = await readBatchTensors(fn, path, io);
    const batch = toPartialBatch(tensors, names);
    sayBatchSource(fn, io, batch.source);
    const d = diagnoseBatch(batch, options);
    const source = path === "-" ? "<stdin>" : path;
    return finishDiagnosis(fn, values, io, d, {
      // One batch's page is the which table over the whole batch (its loss streams are needed).
      html: async (file, say) => {
        const { toBatch } = await import("../../io/batch.js");
        const { writeBatchReport } = await import("./report.js");
        await writeBatchReport(
          fn,
          file,
          toBatch(tensors, names),
          { source, normLen: options.normLen },
          say,
        );
      },
      text: async () => {
        const { renderBatchDiagnosisText } = await import("../../report/diagnoseText.js");
        return renderBatchDiagnosisText(d, source);
      },
    });
  }
}

/** `--empty-rows reject|drop`, a usage error naming the flag otherwise. */
function emptyRowsOption(fn: string, v: unknown): "reject" | "drop" {
  if (v === "reject" || v === "drop") return v;
  throw new UsageError(
    fn,
    "--empty-rows",
    `${fn}: --empty-rows must be reject or drop; got ${JSON.stringify(v)}`,
  );
}

/** The trend and family options of the command line (window, seed, alpha, min-effect, only, skip). @internal */
export function trendOptions(values: OptionValues): {
  window?: number;
  seed: number;
  alpha?: number;
  maxUnreadable?: number;
  minEffect?: Record<string, number>;
  only?: string[];
  skip?: string[];
} {
  const window = intOption(values, "window", "diagnose");
  const list = (k: string) =>
    typeof values[k] === "string"
      ? String(values[k])
          .split(",")
          .map((x) => x.trim())
          .filter((x) => x !== "")
      : undefined;
  const only = list("only");
  const skip = list("skip");
  const alpha = values.alpha === undefined ? undefined : probability(String(values.alpha));
  const maxUnreadable =
    values["max-unreadable"] === undefined ? undefined : fraction(String(values["max-unreadable"]));
  const minEffect = list("min-effect");
  return {
    ...(window !== undefined ? { window } : {}),
    seed: intOption(values, "seed", "diagnose", 0) ?? 1,
    ...(alpha === undefined ? {} : { alpha }),
    ...(maxUnreadable === undefined ? {} : { maxUnreadable }),
    ...(minEffect === undefined ? {} : { minEffect: effects(minEffect) }),
    ...(only === undefined ? {} : { only }),
    ...(skip === undefined ? {} : { skip }),
  };
}

/** `--alpha A`: a number in (0, 1). */
function probability(raw: string): number {
  const v = Number(raw);
  if (raw.trim() === "" || !(v > 0 && v < 1))
    throw fail(
      UsageError,
      "polgrad diagnose",
      "--alpha",
      "a number in (0, 1)",
      JSON.stringify(raw),
    );
  return v;
}

/** `--max-unreadable F`: a fraction in [0, 1]. */
function fraction(raw: string): number {
  const v = Number(raw);
  if (raw.trim() === "" || !(v >= 0 && v <= 1))
    throw fail(
      UsageError,
      "polgrad diagnose",
      "--max-unreadable",
      "a fraction in [0, 1]",
      JSON.stringify(raw),
    );
  return v;
}

/** `--min-effect D=V,...`: detector names with positive numbers (the detectors check the names). */
function effects(items: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) {
    const m = /^([a-z_]+)=(.+)$/.exec(item);
    const v = m === null ? Number.NaN : Number(m[2]);
    if (m === null || !(v > 0) || !Number.isFinite(v))
      throw fail(
        UsageError,
        "polgrad diagnose",
        "--min-effect",
        "DETECTOR=V with V a positive number (e.g. entropy_collapse=0.05)",
        JSON.stringify(item),
      );
    out[m[1] as string] = v;
  }
  return out;
}

/** `--steps A-B`: an inclusive range of step numbers. */
function stepsOption(values: OptionValues): { from: number; to: number } | undefined {
  const raw = values.steps;
  if (raw === undefined) return undefined;
  const m = /^(\d{1,15})-(\d{1,15})$/.exec(String(raw));
  if (m === null || Number(m[2]) < Number(m[1])) {
    throw fail(
      UsageError,
      "polgrad diagnose",
      "--steps",
      "A-B with integers 0 <= A <= B (inclusive step numbers)",
      fmtValue(raw),
    );
  }
  return { from: Number(m[1]), to: Number(m[2]) };
}

/** Print a run diagnosis (text or --json) and its notice; exit 1 iff an alarm fired. */
async function printRun(
  fn: string,
  values: OptionValues,
  io: CommandIO,
  d: import("../../diagnostics/diagnoseRun.js").RunDiagnosis,
): Promise<number> {
  const notice = runNotice(fn, d);
  if (notice !== "") (io.notice ?? io.stderr)(notice);
  return finishDiagnosis(fn, values, io, d, {
    html: async (path, say) => {
      const { writeRunReport } = await import("./report.js");
      await writeRunReport(fn, path, d, say);
    },
    text: async () => {
      const { renderRunDiagnosisText } = await import("../../report/diagnoseText.js");
      return renderRunDiagnosisText(d);
    },
  });
}

/**
 * `diagnose RUN --follow`: poll the run folder, print each alarm once when it first fires (text:
 * on stdout; --json: on stderr, the document at the end), and on Ctrl-C or --until-step print the
 * summary and exit with the usual code (docs/diagnostics/run.md#following-a-run).
 */
async function followRunCli(
  fn: string,
  path: string,
  values: OptionValues,
  io: CommandIO,
  runOptions: import("../../diagnostics/diagnoseRun.js").DiagnoseRunOptions,
): Promise<number> {
  const { RunFollower } = await import("../../diagnostics/followRun.js");
  const { statSync } = await import("node:fs");
  const { fsPath } = await import("../../platform/fsPath.js");
  let isDir = false;
  try {
    isDir = statSync(fsPath(path)).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir)
    throw new UsageError(
      fn,
      "PATH",
      `${fn}: PATH must be an existing run folder with --follow (steps may come later); got ${safeText(path)}`,
    );
  const seconds = pollSeconds(fn, values);
  const follower = new RunFollower(path, runOptions);
  await followLoop(fn, values, io, seconds, () => follower.poll());
  const d = follower.summary();
  if (d === null)
    throw new IoError(
      fn,
      "PATH",
      `${fn}: PATH must be a run folder with at least one readable step by the end of --follow; got none in ${safeText(path)}`,
    );
  return printRun(fn, values, io, d);
}

/** `diagnose --merge PART.json ...`: the report of the merged per-step summaries. */
async function runMerge(
  values: OptionValues,
  parts: readonly string[],
  io: CommandIO,
): Promise<number> {
  const fn = "polgrad diagnose";
  if (parts.length === 0)
    throw new UsageError(
      fn,
      "--merge",
      `${fn}: --merge must be followed by the parts' summary files (PART.json ...); got none`,
    );
  for (const flag of [
    "steps",
    "summary-out",
    "names",
    "name",
    "strict",
    "response-slice",
    "clip",
    "agg",
    "norm-len",
  ]) {
    if (values[flag] !== undefined)
      throw new UsageError(
        fn,
        `--${flag}`,
        `${fn}: --${flag} must not come with --merge (each part was collected with its own); got both`,
      );
  }
  const { readJsonFile } = await import("../../io/readJsonFile.js");
  const { camelKeys } = await import("../../report/wire.js");
  const { summarizeRun } = await import("../../diagnostics/diagnoseRun.js");
  const docs = parts.map((p) => camelKeys(readJsonFile(p, fn)));
  const d = summarizeRun(docs as never, trendOptions(values));
  return printRun(fn, values, io, d);
}

/** The run's one stderr notice: the names read and the tensors set aside, over all steps. */
function runNotice(fn: string, d: import("../../diagnostics/diagnoseRun.js").RunDiagnosis): string {
  const maps = d.names.maps.filter((m) => m.map !== "polgrad");
  const head =
    maps.length === 0
      ? []
      : [
          `read ${maps.map((m) => `${m.map} names (${m.detected ? "detected" : "given"}) on ${m.steps} step(s)`).join(", ")}`,
        ];
  return noticeLine(
    fn,
    head,
    d.names.notes,
    d.names.ignored.map((i) => i.name),
  );
}
