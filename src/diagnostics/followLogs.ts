/**
 * `diagnose LOGS --follow` (docs/diagnostics/logs.md#following-a-log): watch a run's metric logs
 * while it trains. Append-only logs (TensorBoard event files, JSONL) are read on from where the
 * last poll stopped, one whole record or line at a time (a record a live writer has half written
 * is read at the next poll); logs that are rewritten whole (trainer_state.json at each checkpoint,
 * a W&B export) are read again when their size or time changes. Only the points of metric names
 * some framework's map reads are kept, so memory grows with the mapped series only (17
 * quantities at most) whatever else the run logs. Each poll diagnoses what was read so far;
 * each alarm is reported once, when it first fires.
 */

import { closeSync, statSync } from "node:fs";
import { IoError } from "../errors.js";
import { openForRead, readRange } from "../io/_internal/files.js";
import { type Limits, Problems, resolveLimits, SeriesBuilder } from "../io/metricLogs/_series.js";
import {
  findMetricLogFiles,
  type MetricLogCandidate,
  type MetricLogOptions,
  readTextCandidate,
} from "../io/metricLogs/files.js";
import { JSONL_RULES, scanJsonLines } from "../io/metricLogs/jsonl.js";
import { scanEventFile } from "../io/metricLogs/tensorboard.js";
import type { MetricLog, MetricLogFile } from "../io/metricLogs/types.js";
import { fsPath } from "../platform/fsPath.js";
import type { Alarm } from "./diagnoseBatch.js";
import {
  type DiagnoseLogsOptions,
  diagnoseMetricLogs,
  type LogsDiagnosis,
} from "./diagnoseLogs.js";
import { isMappedName } from "./logs/nameMaps.js";

const FN = "followLogs";

/** Where one append-only file was read to. */
interface AppendFile {
  offset: number;
  lines: number;
  records: number;
  framedRecords: number;
  note?: string;
}

/** An append-only run (TensorBoard folder, JSONL file) as read so far. */
interface AppendRun {
  readonly format: "tensorboard" | "jsonl";
  readonly builder: SeriesBuilder;
  readonly problems: Problems;
  readonly plugins: Map<string, string>;
  readonly files: Map<string, AppendFile>;
}

/** A log read whole, and the size and time it was read at. */
interface WholeLog {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly logs: readonly MetricLog[];
}

/** What one poll found. */
export interface LogFollowUpdate {
  /** Alarms that fired for the first time (each run's code once). */
  readonly newAlarms: readonly Alarm[];
  /** The last step read of any mapped metric (null: none yet). */
  readonly lastStep: number | null;
}

/** Follows the metric logs under a path (see the module's comment). */
export class LogFollower {
  private readonly append = new Map<string, AppendRun>();
  private readonly whole = new Map<string, WholeLog>();
  private readonly reported = new Set<string>();
  private last: LogsDiagnosis | null = null;
  private readonly limits: Limits;

  constructor(
    readonly path: string,
    readonly options: DiagnoseLogsOptions & MetricLogOptions = {},
  ) {
    this.limits = resolveLimits(FN, options);
  }

  /** Read what is new, diagnose, and return the alarms that fired for the first time. */
  poll(): LogFollowUpdate {
    let found: MetricLogCandidate[];
    try {
      found = findMetricLogFiles(this.path, this.options);
    } catch (e) {
      // A folder that holds no log yet is a run that has not logged yet.
      if (e instanceof IoError && /no known format|none found/.test(e.message)) found = [];
      else throw e;
    }
    const logs: MetricLog[] = [];
    const seen = new Set<string>();
    for (const c of found) {
      const key = `${c.format}\u0000${c.run}`;
      if (c.format === "tensorboard" || c.format === "jsonl") {
        const run = this.appendRun(key, c.format);
        this.readNew(run, c);
        if (!seen.has(key)) seen.add(key);
      } else {
        const st = statOf(c.path);
        const prev = this.whole.get(key);
        if (
          st !== null &&
          (prev === undefined ||
            prev.path !== c.path ||
            prev.size !== st.size ||
            prev.mtimeMs !== st.mtimeMs)
        )
          this.whole.set(key, {
            path: c.path,
            size: st.size,
            mtimeMs: st.mtimeMs,
            logs: readTextCandidate(c, this.limits),
          });
        seen.add(key);
      }
    }
    for (const key of seen) {
      const run = this.append.get(key);
      if (run !== undefined) {
        const files: MetricLogFile[] = [...run.files].map(([path, f]) => ({
          path,
          bytes: f.offset,
          records: f.records,
          ...(f.note === undefined ? {} : { note: f.note }),
        }));
        logs.push(
          run.builder.finish(run.format, key.slice(key.indexOf("\u0000") + 1), files, run.problems),
        );
      } else logs.push(...(this.whole.get(key)?.logs ?? []));
    }
    if (logs.length === 0) return { newAlarms: [], lastStep: null };
    const d = diagnoseMetricLogs(this.path, logs, this.options);
    this.last = d;
    const newAlarms: Alarm[] = [];
    for (const r of d.runs)
      for (const a of r.alarms) {
        const k = `${r.run}\u0000${a.code}`;
        if (this.reported.has(k)) continue;
        this.reported.add(k);
        newAlarms.push(
          d.runs.length > 1
            ? { ...a, message: `${r.run === "" ? "(the path)" : r.run}: ${a.message}` }
            : a,
        );
      }
    let lastStep: number | null = null;
    for (const r of d.runs)
      if (r.steps.last !== null && (lastStep === null || r.steps.last > lastStep))
        lastStep = r.steps.last;
    return { newAlarms, lastStep };
  }

  /** The diagnosis of everything read so far (null before any log was read). */
  summary(): LogsDiagnosis | null {
    return this.last;
  }

  private appendRun(key: string, format: "tensorboard" | "jsonl"): AppendRun {
    let run = this.append.get(key);
    if (run === undefined) {
      const builder = new SeriesBuilder(
        FN,
        this.path,
        this.limits,
        key.slice(key.indexOf("\u0000") + 1),
      );
      builder.keepPoints = isMappedName;
      run = { format, builder, problems: new Problems(), plugins: new Map(), files: new Map() };
      this.append.set(key, run);
    }
    return run;
  }

  /** Read the whole records (events, lines) a file gained since the last poll. */
  private readNew(run: AppendRun, c: MetricLogCandidate): void {
    let f = run.files.get(c.path);
    if (f === undefined) {
      f = { offset: 0, lines: 0, records: 0, framedRecords: 0 };
      run.files.set(c.path, f);
    }
    const file = openForRead(FN, c.path, this.limits.maxBytes);
    try {
      if (file.size < f.offset)
        throw new IoError(
          FN,
          "path",
          `${FN}: path must be a log that only grows while it is followed; got ${c.path} cut from ${f.offset} to ${file.size} bytes (start --follow again)`,
        );
      if (file.size === f.offset) return;
      const chunk = readRange(FN, c.path, file, f.offset, file.size - f.offset);
      if (run.format === "jsonl") {
        // Whole lines only: a line without its newline may still be being written.
        const end = chunk.lastIndexOf(0x0a) + 1;
        if (end === 0) return;
        run.builder.path = c.path;
        const scan = scanJsonLines(
          chunk.subarray(0, end),
          c.path,
          run.builder,
          run.problems,
          JSONL_RULES,
          f.lines,
        );
        f.offset += end;
        f.lines = scan.lines;
        f.records += scan.records;
      } else {
        const scan = scanEventFile(FN, chunk, c.path, run.builder, run.problems, run.plugins, {
          byte: f.offset,
          record: f.framedRecords,
        });
        f.offset += scan.consumed;
        f.framedRecords += scan.framedRecords;
        f.records += scan.file.records;
      }
    } finally {
      closeSync(file.fd);
    }
  }
}

function statOf(path: string): { size: number; mtimeMs: number } | null {
  try {
    const st = statSync(fsPath(path));
    return { size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}
