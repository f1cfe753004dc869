/**
 * What `polgrad diagnose PATH` and `polgrad report PATH` read PATH as (docs/diagnostics/logs.md#the-command):
 * a batch, a run of per-step tensor dumps, or a run's metric logs.
 * @internal
 */

import { closeSync, statSync } from "node:fs";
import { basename } from "node:path";
import { safeText } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { fail, UsageError } from "../errors.js";
import { METRIC_LOG_FORMATS, type MetricLogFormat } from "../io/metricLogs/types.js";
import { fsPath } from "../platform/fsPath.js";
import type { OptionSpec } from "./command.js";

/** What `diagnose PATH` reads PATH as. */
export type InputKind =
  | { readonly logs: true; readonly format: MetricLogFormat | undefined }
  | { readonly logs: false };

const FORMATS: readonly string[] = [...METRIC_LOG_FORMATS, "dumps"];

/** `--format F` of diagnose and report: how to read PATH. @internal */
export const FORMAT_OPTION: OptionSpec = {
  type: "string",
  argument: "F",
  description: `read PATH as metric logs of format F (${METRIC_LOG_FORMATS.join(", ")}) or as per-step tensor dumps (dumps); needed where PATH holds both`,
  default: "detected from the names and contents",
};

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
    const { findMetricLogFiles } = await import("../io/metricLogs/files.js");
    const logs = findMetricLogFiles(path);
    if (logs.length === 0) return { logs: false };
    const { readdirNames } = await import("../platform/fsPath.js");
    const { stepOfName } = await import("../io/runFolder.js");
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
  const { detectMetricLogFormat, DETECT_HEAD_BYTES } = await import("../io/metricLogs/detect.js");
  const { openForRead, readRange } = await import("../io/_internal/files.js");
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
