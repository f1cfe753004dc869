/**
 * `polgrad diagnose` on metric logs (docs/diagnostics/logs.md#the-command): what PATH is (a
 * batch, a run of tensor dumps, or metric logs), and the diagnosis of logs, once or --follow.
 * @internal
 */

import { closeSync, statSync } from "node:fs";
import { basename } from "node:path";
import { safeText } from "../../core/message.js";
import { closestNames, didYouMean } from "../../core/names.js";
import { fail, UsageError } from "../../errors.js";
import { METRIC_LOG_FORMATS, type MetricLogFormat } from "../../io/metricLogs/types.js";
import { fsPath } from "../../platform/fsPath.js";
import type { CommandIO, OptionValues } from "../command.js";
import { finishDiagnosis } from "./diagnoseOutput.js";

/** What `diagnose PATH` reads PATH as. */
export type InputKind =
  | { readonly logs: true; readonly format: MetricLogFormat | undefined }
  | { readonly logs: false };

const FORMATS: readonly string[] = [...METRIC_LOG_FORMATS, "dumps"];

/** The tensor-only options, refused beside metric logs (they would change nothing). */
const TENSOR_ONLY = [
  "clip",
  "agg",
  "norm-len",
  "empty-rows",
  "window",
  "threads",
  "steps",
  "summary-out",
  "name",
  "strict",
  "response-slice",
] as const;

/**
 * Whether PATH is metric logs: `--format` decides when given; a folder is logs when it holds
 * metric logs and no step dump (both: a usage error asking for --format); a file is logs when its
 * name or head is a metric log's (detectMetricLogFormat). `-` is a batch.
 */
export async function inputKind(fn: string, path: string, format: unknown): Promise<InputKind> {
  if (format !== undefined && !FORMATS.includes(String(format)))
    throw fail(
      UsageError,
      fn,
      "--format",
      `one of ${FORMATS.join(", ")}${didYouMean(closestNames(String(format), FORMATS))}`,
      JSON.stringify(format),
    );
  if (format === "dumps") return { logs: false };
  const forced = format as MetricLogFormat | undefined;
  if (forced !== undefined) return { logs: true, format: forced };
  if (path === "-") return { logs: false };
  let isDir: boolean;
  try {
    const st = statSync(fsPath(path));
    isDir = st.isDirectory();
    if (!isDir && !st.isFile()) return { logs: false };
  } catch {
    return { logs: false }; // the batch reader names the missing path
  }
  if (isDir) {
    const { findMetricLogFiles } = await import("../../io/metricLogs/files.js");
    const logs = findMetricLogFiles(path);
    if (logs.length === 0) return { logs: false };
    const { readdirNames } = await import("../../platform/fsPath.js");
    const { stepOfName } = await import("../../io/runFolder.js");
    const dumps = readdirNames(path).filter(
      (n) => stepOfName(n, false) !== null || stepOfName(n, true) !== null,
    );
    if (dumps.length > 0)
      throw new UsageError(
        fn,
        "--format",
        `${fn}: --format must say how to read ${safeText(path)}, which holds both per-step dumps (${dumps
          .slice(0, 2)
          .map((n) => safeText(n))
          .join(
            ", ",
          )}) and metric logs (${safeText(logs[0]?.path ?? "")}): --format dumps, or one of ${METRIC_LOG_FORMATS.join(", ")}; got neither`,
      );
    return { logs: true, format: undefined };
  }
  const { detectMetricLogFormat, DETECT_HEAD_BYTES } = await import(
    "../../io/metricLogs/detect.js"
  );
  const { openForRead, readRange } = await import("../../io/_internal/files.js");
  const file = openForRead(fn, path, Number.MAX_SAFE_INTEGER);
  let head: Uint8Array;
  try {
    head = readRange(fn, path, file, 0, Math.min(file.size, DETECT_HEAD_BYTES));
  } finally {
    closeSync(file.fd);
  }
  const d = detectMetricLogFormat(basename(path), head);
  return d.format === null ? { logs: false } : { logs: true, format: d.format };
}

/** `--names FW[@RELEASE]` for metric names. */
function metricNamesOption(
  fn: string,
  raw: unknown,
): { framework: "trl" | "verl" | "openrlhf" | "auto"; release?: string } {
  if (raw === undefined) return { framework: "auto" };
  const m = /^(trl|verl|openrlhf|auto)(?:@(.+))?$/.exec(String(raw));
  if (m === null || (m[1] === "auto" && m[2] !== undefined))
    throw fail(
      UsageError,
      fn,
      "--names",
      "FW or FW@RELEASE for metric logs, FW one of trl, verl, openrlhf (or auto, without a release)",
      JSON.stringify(raw),
    );
  const framework = m[1] as "trl" | "verl" | "openrlhf" | "auto";
  return m[2] === undefined ? { framework } : { framework, release: m[2] };
}

/** `diagnose LOGS`: read, diagnose, print (text, --json, --html); --follow polls. */
export async function diagnoseLogsCli(
  fn: string,
  path: string,
  format: MetricLogFormat | undefined,
  values: OptionValues,
  io: CommandIO,
  trend: Readonly<Record<string, unknown>>,
): Promise<number> {
  for (const flag of TENSOR_ONLY)
    if (values[flag] !== undefined)
      throw new UsageError(
        fn,
        `--${flag}`,
        `${fn}: --${flag} must come with per-step tensor dumps or a batch, not metric logs; got it with ${safeText(path)} (read as ${format ?? "metric logs"}; --format dumps reads tensor dumps)`,
      );
  const { window: _w, ...family } = trend;
  const runs =
    typeof values.run === "string"
      ? String(values.run)
          .split(",")
          .map((x) => x.trim())
          .filter((x) => x !== "")
      : undefined;
  const options = {
    ...family,
    ...metricNamesOption(fn, values.names),
    ...(format === undefined ? {} : { format }),
    ...(runs === undefined ? {} : { runs }),
  };
  let d: import("../../diagnostics/diagnoseLogs.js").LogsDiagnosis | null;
  if (values.follow === true) {
    const { LogFollower } = await import("../../diagnostics/followLogs.js");
    const { followLoop, pollSeconds } = await import("../follow.js");
    const seconds = pollSeconds(fn, values);
    const follower = new LogFollower(path, options);
    await followLoop(fn, values, io, seconds, () => follower.poll());
    d = follower.summary();
    if (d === null)
      throw fail(
        UsageError,
        fn,
        "PATH",
        "metric logs holding at least one record by the end of --follow",
        `none in ${safeText(path)}`,
      );
  } else {
    const { diagnoseLogs } = await import("../../diagnostics/diagnoseLogs.js");
    d = diagnoseLogs(path, options);
  }
  const diagnosis = d;
  return finishDiagnosis(fn, values, io, diagnosis, {
    html: async (file, say) => {
      const { writeLogsReport } = await import("./report.js");
      await writeLogsReport(fn, file, diagnosis, path, options, say);
    },
    text: async () => {
      const { renderLogsDiagnosisText } = await import("../../report/diagnoseText.js");
      return renderLogsDiagnosisText(diagnosis);
    },
  });
}
