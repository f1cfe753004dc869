/**
 * `polgrad diagnose` on metric logs (docs/diagnostics/logs.md#the-command): the diagnosis of
 * logs, once or --follow (what PATH is: ../inputKind.ts).
 * @internal
 */

import { safeText } from "../../core/message.js";
import { fail, UsageError } from "../../errors.js";
import type { MetricLogFormat } from "../../io/metricLogs/types.js";
import type { CommandIO, OptionValues } from "../command.js";
import { finishDiagnosis } from "./diagnoseOutput.js";

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
  // The runs the page draws: read with the diagnosis, or (--follow, whose follower keeps only
  // the points its detectors read) read again for --html at the end.
  let logs: readonly import("../../io/metricLogs/types.js").MetricLog[] | null = null;
  const { readMetricLogs } = await import("../../io/metricLogs/files.js");
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
    const { diagnoseMetricLogs } = await import("../../diagnostics/diagnoseLogs.js");
    logs = readMetricLogs(path, options);
    d = diagnoseMetricLogs(path, logs, options);
  }
  const diagnosis = d;
  const read = logs;
  return finishDiagnosis(fn, values, io, diagnosis, {
    html: async (file, say) => {
      const { writeLogsReport } = await import("./report.js");
      await writeLogsReport(fn, file, diagnosis, read ?? readMetricLogs(path, options), say);
    },
    text: async () => {
      const { renderLogsDiagnosisText } = await import("../../report/diagnoseText.js");
      return renderLogsDiagnosisText(diagnosis);
    },
  });
}
