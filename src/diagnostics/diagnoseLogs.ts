/**
 * Diagnose a run from the scalars it logged (docs/diagnostics/logs.md#diagnosing-a-log): each
 * run's metric names mapped to quantities (nameMaps.ts, never guessed), the detectors on logged
 * scalars run on them as one family (detectors.ts), and the alarms in the shape a tensor run's
 * have. diagnoseMetricLogs is pure; diagnoseLogs reads the files (readMetricLogs) first.
 */

import { fmtValue } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { requireArrayOf, requireObject, requireString } from "../core/validate.js";
import { ConfigError, fail, IoError } from "../errors.js";
import { type MetricLogOptions, readMetricLogs } from "../io/metricLogs/files.js";
import type { MetricLog, MetricLogProblem } from "../io/metricLogs/types.js";
import type { Alarm } from "./diagnoseBatch.js";
import {
  type LogDetectorOptions,
  type LogDetectorReport,
  type QuantitySeries,
  runLogDetectors,
} from "./logs/detectors.js";
import { METRIC_FRAMEWORKS, type MetricFramework } from "./logs/metricNames.js";
import { mapMetricNames, type NameMapResult } from "./logs/nameMaps.js";
import { LOG_QUANTITIES, type LogQuantity } from "./logs/quantities.js";
import { type SeriesSummary, summarize } from "./seriesSummary.js";

/** Options of {@link diagnoseMetricLogs}. */
export interface DiagnoseLogsOptions extends LogDetectorOptions {
  /** Whose metric names the logs carry: a framework, or "auto" (default) to tell from the names. */
  readonly framework?: MetricFramework | "auto";
  /** A recorded release of that framework (names whose meaning changed are then read at it). */
  readonly release?: string;
  /** Only the runs of these names (a folder holding several). */
  readonly runs?: readonly string[];
  /**
   * The largest fraction of a run's records (events, lines, log_history entries, rows) that may
   * be unreadable (default 0.1): beyond it the run is not diagnosed (an IoError, exit 2).
   */
  readonly maxUnreadable?: number;
}

/** Unmapped names listed per run (the rest counted). */
export const MAX_UNMAPPED_LISTED = 50;

/** One run's diagnosis from its logged scalars. */
export interface LogRunDiagnosis {
  readonly run: string;
  readonly format: MetricLog["format"];
  readonly files: MetricLog["files"];
  /** The framework whose names were read (null: auto could not decide) and why. */
  readonly framework: MetricFramework | null;
  readonly frameworkWhy: string;
  readonly release: string | null;
  /** What the names map to; what is ambiguous, absent at the release, set aside or unmapped. */
  readonly names: {
    readonly mapped: Partial<Record<LogQuantity, string>>;
    readonly ambiguous: NameMapResult["ambiguous"];
    readonly absent: NameMapResult["absent"];
    readonly setAside: NameMapResult["setAside"];
    /** The first {@link MAX_UNMAPPED_LISTED} unmapped names. */
    readonly unmapped: readonly string[];
    readonly unmappedCount: number;
  };
  /** Distinct steps over the mapped series, and the first and last. */
  readonly steps: {
    readonly count: number;
    readonly first: number | null;
    readonly last: number | null;
  };
  /** Records read from its files, those skipped (the first 100 listed), rewritten points. */
  readonly records: number;
  readonly problems: readonly MetricLogProblem[];
  readonly problemCount: number;
  readonly rewrites: number;
  /** Per mapped quantity, its first, last, extremes and Theil–Sen slope (finite points). */
  readonly series: Partial<Record<LogQuantity, SeriesSummary>>;
  /** The run's family of tests, at the run's share of α. */
  readonly family: LogDetectorReport;
  readonly alarms: readonly Alarm[];
}

/** A diagnosis of the metric logs under one path. */
export interface LogsDiagnosis {
  readonly path: string;
  /** The family-wise level of the whole document: each of the R runs is tested at alpha / R. */
  readonly alpha: number;
  readonly runs: readonly LogRunDiagnosis[];
  /** Every run's alarms, each message led by its run's name when there are several runs. */
  readonly alarms: readonly Alarm[];
}

const FN = "diagnoseMetricLogs";

/** The quantity series of one run, as the name map picked them (the metric's points as logged). */
export function quantitySeries(
  log: MetricLog,
  mapped: Partial<Record<LogQuantity, string>>,
): Partial<Record<LogQuantity, QuantitySeries>> {
  const byName = new Map(log.series.map((s) => [s.name, s]));
  const out: Partial<Record<LogQuantity, QuantitySeries>> = {};
  for (const q of LOG_QUANTITIES) {
    const name = mapped[q];
    const s = name === undefined ? undefined : byName.get(name);
    if (s !== undefined) out[q] = { metric: s.name, steps: s.steps, values: s.values };
  }
  return out;
}

function checkFraction(v: unknown): number {
  if (v === undefined) return 0.1;
  if (typeof v !== "number" || !(v >= 0 && v <= 1))
    throw fail(ConfigError, FN, "maxUnreadable", "a fraction in [0, 1]", fmtValue(v));
  return v;
}

/**
 * Diagnose runs from their logged scalars.
 *
 * Formula: per run, the names mapped by mapMetricNames(framework, names, release); each mapped
 * quantity's series to runLogDetectors at level alpha / R (R the runs diagnosed, so that the
 * document's exit code is one family at alpha); an alarm per finding that alarms (code: the
 * detector), and one `non_finite_metric` alarm per mapped metric logged as NaN or ±∞ (at its
 * first such step).
 *
 * @param path - The path the logs were read from (for the report).
 * @param logs - The runs (readMetricLogs).
 * @param options - The framework and release of the names, the runs to keep, α, minimum effects,
 *   --only/--skip, permutations, seed, and the unreadable fraction allowed.
 * @returns Per run its names, series summaries, family and alarms; all alarms.
 * @throws {ConfigError} E_CONFIG for an unknown run name, detector name, α outside (0, 1).
 * @throws {IoError} E_IO when a run's unreadable records exceed maxUnreadable, or no run is left.
 * @derivation docs/diagnostics/logs.md#diagnosing-a-log
 * @enforcedBy test/diagnostics/logs/diagnoseLogs.test.ts > diagnoseMetricLogs > golden: an injected entropy collapse is found at its step in every format
 * @since 0.1.0
 */
export function diagnoseMetricLogs(
  path: string,
  logs: readonly MetricLog[],
  options: DiagnoseLogsOptions = {},
): LogsDiagnosis {
  requireString(FN, "path", path);
  requireArrayOf(FN, "logs", logs, "an array of MetricLogs (readMetricLogs)", isMetricLog);
  if (options !== undefined) requireObject(FN, "options", options, "an options object");
  if (options.runs !== undefined)
    requireArrayOf(FN, "runs", options.runs, "an array of run names", (r) => typeof r === "string");
  const alpha = options.alpha ?? 0.05;
  if (typeof alpha !== "number" || !(alpha > 0 && alpha < 1))
    throw fail(ConfigError, FN, "alpha", "in (0, 1)", fmtValue(alpha));
  const maxUnreadable = checkFraction(options.maxUnreadable);
  const framework = options.framework ?? "auto";
  if (framework !== "auto" && !METRIC_FRAMEWORKS.includes(framework))
    throw fail(
      ConfigError,
      FN,
      "framework",
      `one of ${[...METRIC_FRAMEWORKS, "auto"].join(", ")}`,
      fmtValue(framework),
    );
  if (options.release !== undefined && framework === "auto")
    throw fail(
      ConfigError,
      FN,
      "release",
      "given with a framework (the release of whose metric names?)",
      `${fmtValue(options.release)} with framework "auto"`,
    );
  let chosen = logs;
  if (options.runs !== undefined) {
    const names = logs.map((l) => l.run);
    for (const r of options.runs)
      if (!names.includes(r))
        throw fail(
          ConfigError,
          FN,
          "runs",
          `names of the runs found (${names.map((n) => fmtValue(n)).join(", ")})${didYouMean(closestNames(r, names))}`,
          fmtValue(r),
        );
    chosen = logs.filter((l) => options.runs?.includes(l.run));
  }
  if (chosen.length === 0)
    throw new IoError(
      FN,
      "path",
      `${FN}: path must hold at least one run; got none in ${fmtValue(path)}`,
    );
  for (const log of chosen) {
    const records = log.files.reduce((n, f) => n + f.records, 0);
    if (log.problemCount > maxUnreadable * Math.max(records, 1) && log.problemCount > 0)
      throw new IoError(
        FN,
        "path",
        `${FN}: path must be a log with at most ${Math.round(maxUnreadable * 100)} % of its records unreadable (maxUnreadable; --max-unreadable); got ${log.problemCount} of ${records} in run ${fmtValue(log.run)}, first ${log.problems[0]?.at ?? "?"} of ${fmtValue(log.problems[0]?.file ?? "")}: ${log.problems[0]?.what ?? ""}`,
      );
  }
  const each = alpha / chosen.length;
  const runs = chosen.map((log) => diagnoseOne(log, framework, { ...options, alpha: each }));
  const several = runs.length > 1;
  const alarms = runs.flatMap((r) =>
    r.alarms.map((a) =>
      several ? { ...a, message: `${r.run === "" ? "(the path)" : r.run}: ${a.message}` } : a,
    ),
  );
  return { path, alpha, runs, alarms };
}

/** A MetricLog's shape, every field the diagnosis reads (so that none can throw a TypeError). */
function isMetricLog(x: unknown): boolean {
  if (typeof x !== "object" || x === null) return false;
  const l = x as Partial<Record<keyof MetricLog, unknown>>;
  const arrayLike = (v: unknown): v is ArrayLike<unknown> =>
    (Array.isArray(v) || ArrayBuffer.isView(v)) &&
    typeof (v as ArrayLike<unknown>).length === "number";
  return (
    typeof l.run === "string" &&
    typeof l.format === "string" &&
    typeof l.problemCount === "number" &&
    typeof l.rewrites === "number" &&
    Array.isArray(l.problems) &&
    Array.isArray(l.files) &&
    l.files.every((f) => typeof f === "object" && f !== null && typeof f.records === "number") &&
    Array.isArray(l.series) &&
    l.series.every(
      (s) =>
        typeof s === "object" &&
        s !== null &&
        typeof s.name === "string" &&
        arrayLike(s.steps) &&
        arrayLike(s.values) &&
        s.steps.length === s.values.length,
    )
  );
}

function diagnoseOne(
  log: MetricLog,
  framework: MetricFramework | "auto",
  options: DiagnoseLogsOptions & { alpha: number },
): LogRunDiagnosis {
  const names = log.series.map((s) => s.name);
  const m = mapMetricNames(framework, names, framework === "auto" ? undefined : options.release);
  const series = quantitySeries(log, m.mapped);
  const { runs: _r, framework: _f, release: _rel, maxUnreadable: _m, ...detectorOptions } = options;
  const family = runLogDetectors(series, detectorOptions);
  const alarms: Alarm[] = [];
  for (const f of family.findings)
    if (f.alarm) alarms.push({ code: f.detector, message: f.message, step: f.step ?? null });
  for (const nf of family.nonFinite)
    alarms.push({
      code: "non_finite_metric",
      message: `${nf.metric} is logged as NaN or ±∞ at ${nf.count} step(s), first at step ${nf.step}`,
      step: nf.step,
    });
  const summaries: Partial<Record<LogQuantity, SeriesSummary>> = {};
  const steps = new Set<number>();
  for (const q of LOG_QUANTITIES) {
    const s = series[q];
    if (s === undefined) continue;
    const points: { step: number; value: number }[] = [];
    for (let i = 0; i < s.values.length; i++) {
      steps.add(s.steps[i] as number);
      if (Number.isFinite(s.values[i] as number))
        points.push({ step: s.steps[i] as number, value: s.values[i] as number });
    }
    const sum = summarize(points);
    if (sum !== null) summaries[q] = sum;
  }
  let first: number | null = null;
  let last: number | null = null;
  for (const s of steps) {
    if (first === null || s < first) first = s;
    if (last === null || s > last) last = s;
  }
  return {
    run: log.run,
    format: log.format,
    files: log.files,
    framework: m.framework,
    frameworkWhy: m.why,
    release: framework === "auto" ? null : (options.release ?? null),
    names: {
      mapped: m.mapped,
      ambiguous: m.ambiguous,
      absent: m.absent,
      setAside: m.setAside,
      unmapped: m.unmapped.slice(0, MAX_UNMAPPED_LISTED),
      unmappedCount: m.unmapped.length,
    },
    steps: { count: steps.size, first, last },
    records: log.files.reduce((n, f) => n + f.records, 0),
    problems: log.problems,
    problemCount: log.problemCount,
    rewrites: log.rewrites,
    series: summaries,
    family,
    alarms,
  };
}

/**
 * Read the metric logs under `path` (readMetricLogs: TensorBoard, JSONL, trainer_state.json, W&B
 * exports) and diagnose them (diagnoseMetricLogs).
 *
 * @param path - A metric-log file or a folder holding some.
 * @param options - Those of diagnoseMetricLogs, with the readers' limits and `format`.
 * @returns The diagnosis.
 * @throws {IoError} E_IO as readMetricLogs and diagnoseMetricLogs.
 * @throws {ConfigError} E_CONFIG as diagnoseMetricLogs, or for an invalid limit or format.
 * @derivation docs/diagnostics/logs.md#diagnosing-a-log
 * @enforcedBy test/diagnostics/logs/diagnoseLogs.test.ts > diagnoseMetricLogs > golden: an injected entropy collapse is found at its step in every format
 * @since 0.1.0
 */
export function diagnoseLogs(
  path: string,
  options: DiagnoseLogsOptions & MetricLogOptions = {},
): LogsDiagnosis {
  return diagnoseMetricLogs(path, readMetricLogs(path, options), options);
}
