/**
 * `polgrad report [PATH] --out FILE.html` (docs/report-html.md): one self-contained HTML file —
 * for a batch (or the built-in one), the which table with gradient-mass bars and per-token
 * gradient heat maps; for a run folder, the per-step traces of every detector with the alarms on
 * top. Exit 0 when written (a run's alarms are in the page, not the exit code), 2 bad input.
 */
import { safeText } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import { NAME_OPTIONS, nameOptionsOf, readCliBatch } from "../batchInput.js";
import type { Command, CommandIO, OptionValues } from "../command.js";
import { FORMAT_OPTION } from "../inputKind.js";
import { intOption, writeJson } from "../output.js";
import { WORLD_OPTIONS } from "./frameworkConfigOption.js";

async function writeHtml(
  fn: string,
  path: string,
  html: string,
  say: (text: string) => void,
  what: string,
): Promise<number> {
  const { writeFileBytes } = await import("../../io/_internal/writeFile.js");
  const bytes = new TextEncoder().encode(html);
  writeFileBytes(fn, path, bytes);
  say(`wrote ${safeText(path)} (${bytes.length} bytes): ${what}\n`);
  return bytes.length;
}

/** Write the HTML report of a run diagnosis to `path` and say so with `say` (stdout, or stderr beside a --json document). @internal */
export async function writeRunReport(
  fn: string,
  path: string,
  d: import("../../diagnostics/diagnoseRun.js").RunDiagnosis,
  say: (text: string) => void,
): Promise<number> {
  const { runReportHtml } = await import("../../report/html/reports.js");
  return writeHtml(
    fn,
    path,
    runReportHtml(d),
    say,
    `the report of ${d.steps.length} steps, ${d.alarms.length} alarm(s)`,
  );
}

/**
 * Write the HTML report of a diagnosis of metric logs to `path`, its points from `logs` (the runs
 * the diagnosis was made of), and say so with `say`. @internal
 */
export async function writeLogsReport(
  fn: string,
  path: string,
  d: import("../../diagnostics/diagnoseLogs.js").LogsDiagnosis,
  logs: readonly import("../../io/metricLogs/types.js").MetricLog[],
  say: (text: string) => void,
): Promise<number> {
  const { quantitySeries } = await import("../../diagnostics/diagnoseLogs.js");
  const { logsReportHtml } = await import("../../report/html/reports.js");
  const byRun = new Map(logs.map((l) => [l.run, l]));
  const series = new Map(
    d.runs.map((r) => {
      const log = byRun.get(r.run);
      return [r.run, log === undefined ? {} : quantitySeries(log, r.names.mapped)] as const;
    }),
  );
  return writeHtml(
    fn,
    path,
    logsReportHtml(d, series),
    say,
    `the report of ${d.runs.length} logged run(s), ${d.alarms.length} alarm(s)`,
  );
}

/** Write the HTML report of one batch (its which table, gradients kept) to `path` and say so with `say`. @internal */
export async function writeBatchReport(
  fn: string,
  path: string,
  batch: import("../../losses/policyLoss.js").PolicyLossInputs,
  o: {
    readonly source: string;
    readonly normLen?: number | null;
    readonly extraRows?: readonly import("./frameworkConfigOption.js").FrameworkConfigRow[];
    /** Sequences to show in detail (a real-sized batch's page). */
    readonly sequences?: readonly number[];
    /** A progress bar on a terminal's stderr while the page is built. */
    readonly io?: import("../command.js").CommandIO;
  },
  say: (text: string) => void,
): Promise<number> {
  const { whichTable } = await import("../../which/index.js");
  const { batchReportHtml } = await import("../../report/html/reports.js");
  const { progressBar } = await import("../progress.js");
  const bar =
    o.io === undefined
      ? { tick: () => {}, finish: () => {} }
      : progressBar(o.io, "report", o.io.stderrIsTTY === true);
  const m = batch.responseMask;
  const B = "rows" in m ? m.rows : m.length;
  const beyond = (o.sequences ?? []).find((b) => b >= B);
  if (beyond !== undefined)
    throw new UsageError(
      fn,
      "--sequence",
      `${fn}: --sequence must name rows of the batch (0 to ${B - 1}); got ${beyond}`,
    );
  const report = whichTable(batch, {
    normLen: o.normLen ?? null,
    extraRows: o.extraRows ?? [],
    keepGradients: true,
  });
  const html = batchReportHtml(report, {
    source: o.source,
    ...(o.sequences === undefined ? {} : { sequences: o.sequences }),
    progress: bar.tick,
  });
  bar.finish();
  return writeHtml(
    fn,
    path,
    html,
    say,
    `the which table of ${report.rows.length} configurations on B = ${report.batchSize}, T = ${report.width}`,
  );
}

/** `--sequence N[,N]`: 0-based rows to show in detail. */
function sequencesOption(fn: string, values: OptionValues): { sequences?: readonly number[] } {
  const raw = values.sequence;
  if (raw === undefined) return {};
  const items = String(raw)
    .split(",")
    .map((x) => x.trim());
  if (items.some((x) => !/^\d{1,9}$/.test(x)))
    throw new UsageError(
      fn,
      "--sequence",
      `${fn}: --sequence must be 0-based row numbers N[,N]; got ${JSON.stringify(raw)}`,
    );
  return { sequences: items.map(Number) };
}

/** Where the "wrote FILE" line goes: stdout, or beside a --json document a notice on stderr. */
function sayOf(fn: string, values: OptionValues, io: CommandIO): (text: string) => void {
  if (!values.json) return io.stdout;
  const notice = io.notice ?? io.stderr;
  return (t) => notice(`${fn}: ${t}`);
}

/** The page is written: with --json, the document saying what it holds; exit 0. */
function written(
  values: OptionValues,
  io: CommandIO,
  r: {
    readonly out: string;
    readonly bytes: number;
    readonly kind: "batch" | "run" | "logs";
    readonly source: string;
    readonly alarms: number | null;
  },
): number {
  if (values.json) writeJson(io, "report", r, true);
  return 0;
}

/** The `report` command. */
export const reportCommand: Command = {
  name: "report",
  summary:
    "Write a self-contained HTML report (inline SVG, no network): a batch's which table with gradient bars and heat maps, a run's per-step detector traces with its alarms, or a run's logged metrics (TensorBoard, JSONL, trainer_state.json, W&B exports) with theirs.",
  usage:
    "report [PATH] --out FILE.html [--format F] [--names MAP] [--norm-len N] [--framework REF [--framework-config FILE]] [--sequence N,...] [--json]",
  positionals: 1,
  positionalRoles: ["input"],
  options: {
    out: {
      type: "string",
      role: "output",
      argument: "FILE.html",
      description: "the HTML file to write",
    },
    ...NAME_OPTIONS,
    "norm-len": {
      type: "string",
      argument: "N",
      description: "Dr.GRPO budget of the token-sum-norm row (a batch)",
      default: "the padded width T",
    },
    framework: {
      type: "string",
      argument: "REF",
      description: "a batch: add a row for this release's loss under --framework-config",
    },
    "framework-config": {
      type: "string",
      role: "input",
      argument: "FILE|-",
      description: "the framework config of the added row (default: the release's defaults)",
    },
    ...WORLD_OPTIONS,
    format: FORMAT_OPTION,
    sequence: {
      type: "string",
      argument: "N[,N]",
      description:
        "also show these sequences (0-based rows) in detail on a batch too large for one column per sequence (a smaller batch shows every sequence)",
    },
    json: {
      type: "boolean",
      description: "print one JSON document (the file written, its size, what it reports)",
    },
  },
  async run(values, positionals, io) {
    const fn = "polgrad report";
    const out = values.out;
    if (typeof out !== "string" || out === "")
      throw new UsageError(fn, "--out", `${fn}: --out must be the HTML file to write; got nothing`);
    const path = positionals[0];
    if (path !== undefined && path !== "-") {
      const { inputKind } = await import("../inputKind.js");
      const kind = await inputKind(fn, path, values.format);
      if (kind.logs) {
        // A run's metric logs: the page diagnose --html writes for them.
        if (values.framework !== undefined || values["framework-config"] !== undefined)
          throw new UsageError(
            fn,
            "--framework",
            `${fn}: --framework must come with a batch, not metric logs; got ${safeText(path)}`,
          );
        const { diagnoseMetricLogs } = await import("../../diagnostics/diagnoseLogs.js");
        const { readMetricLogs } = await import("../../io/metricLogs/files.js");
        const read = kind.format === undefined ? {} : { format: kind.format };
        // Read once: the diagnosis and the page's points come from the same runs.
        const logs = readMetricLogs(path, read);
        const d = diagnoseMetricLogs(path, logs);
        const bytes = await writeLogsReport(fn, out, d, logs, sayOf(fn, values, io));
        return written(values, io, {
          out,
          bytes,
          kind: "logs",
          source: path,
          alarms: d.alarms.length,
        });
      }
      const { isRunFolder } = await import("../batchInput.js");
      if (await isRunFolder(path)) {
        if (values.framework !== undefined || values["framework-config"] !== undefined)
          throw new UsageError(
            fn,
            "--framework",
            `${fn}: --framework must come with a batch, not a run folder; got ${safeText(path)}`,
          );
        const { diagnoseRun } = await import("../../diagnostics/diagnoseRun.js");
        const d = diagnoseRun(path, await nameOptionsOf(fn, values));
        const bytes = await writeRunReport(fn, out, d, sayOf(fn, values, io));
        return written(values, io, {
          out,
          bytes,
          kind: "run",
          source: path,
          alarms: d.alarms.length,
        });
      }
    }
    const { BUILTIN_BATCH } = await import("../../which/index.js");
    const batch =
      path === undefined ? BUILTIN_BATCH : await readCliBatch(fn, { ...values, batch: path }, io);
    const { frameworkConfigRow } = await import("./frameworkConfigOption.js");
    const row = await frameworkConfigRow(fn, values, io, path === undefined);
    const source = path ?? "the built-in batch";
    const bytes = await writeBatchReport(
      fn,
      out,
      batch,
      {
        source,
        normLen: intOption(values, "norm-len", "report") ?? null,
        extraRows: row === null ? [] : [row],
        ...sequencesOption(fn, values),
        io,
      },
      sayOf(fn, values, io),
    );
    return written(values, io, { out, bytes, kind: "batch", source, alarms: null });
  },
};
