/**
 * Logged scalar metrics of a training run, read into one shape whatever wrote them (TensorBoard
 * event files, JSONL logs, the HF Trainer's `trainer_state.json`, W&B history exports), for the
 * run detectors on logged scalars (docs/diagnostics/logs.md). Pure types: no `node:` import.
 */

/** The formats a metric log is read from. */
export type MetricLogFormat = "tensorboard" | "jsonl" | "trainer_state" | "wandb";

/** Every metric-log format. */
export const METRIC_LOG_FORMATS: readonly MetricLogFormat[] = [
  "tensorboard",
  "jsonl",
  "trainer_state",
  "wandb",
];

/**
 * One metric's logged values, one per step, in increasing step order. Where a step was logged
 * more than once (a restarted run, a resumed writer) the last value read wins and the log's
 * `rewrites` counts it. A value logged as NaN or ±∞ is kept as it was logged.
 */
export interface MetricSeries {
  /** The name as the writer wrote it (`train/entropy`, `actor/entropy`, `entropy`). */
  readonly name: string;
  /** Step numbers: integers, strictly increasing. */
  readonly steps: Float64Array;
  /** The value at each step, as logged (float64; a float32 the writer stored is widened exactly). */
  readonly values: Float64Array;
}

/** One file a log was read from. */
export interface MetricLogFile {
  readonly path: string;
  readonly bytes: number;
  /** Records (events, lines, log_history entries, rows) read from it. */
  readonly records: number;
  /** Said once per file when the reader stopped early, e.g. "a truncated last record (a live writer): the data ends before byte 4096". */
  readonly note?: string;
}

/** A record the reader skipped, named by file and position, and why. */
export interface MetricLogProblem {
  readonly file: string;
  /** Where in the file: "record 17 (byte 4096)", "line 12". */
  readonly at: string;
  readonly what: string;
}

/** A run's logged metrics. */
export interface MetricLog {
  readonly format: MetricLogFormat;
  /** The run's name: its folder relative to the path given ("" for the path itself). */
  readonly run: string;
  readonly files: readonly MetricLogFile[];
  /** Every series, sorted by name. */
  readonly series: readonly MetricSeries[];
  /** Records skipped (a bad CRC, a line that is not JSON, a non-numeric value), at most MAX_PROBLEMS listed. */
  readonly problems: readonly MetricLogProblem[];
  /** How many problems there were in all (problems lists the first MAX_PROBLEMS). */
  readonly problemCount: number;
  /** Points that replaced an earlier value at the same step of the same series. */
  readonly rewrites: number;
}

/** Bounds every metric-log reader enforces (an IoError names the one exceeded). */
export interface MetricLogLimits {
  /** Bytes of one file (default {@link DEFAULT_MAX_LOG_BYTES}). */
  readonly maxBytes?: number;
  /** Series of one run (default {@link DEFAULT_MAX_SERIES}). */
  readonly maxSeries?: number;
  /** Points of one series (default {@link DEFAULT_MAX_POINTS}). */
  readonly maxPoints?: number;
}

/** 1 GiB: a year of steps of a busy TensorBoard writer is far less. */
export const DEFAULT_MAX_LOG_BYTES: number = 1 << 30;
/** Distinct metric names in one run. */
export const DEFAULT_MAX_SERIES = 100_000;
/** Points of one series (a 10-million-step run). */
export const DEFAULT_MAX_POINTS = 10_000_000;
/** Problems listed per log (the rest are counted). */
export const MAX_PROBLEMS = 100;
