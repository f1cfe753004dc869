/**
 * The run side of a metric-log reader (docs/diagnostics/logs.md), independent of the format:
 * the limits validated once, and a builder that collects a run's points in the order they were
 * read (file after file), keeps the last value read at each step of each series, counts the
 * values it replaced (`rewrites`), lists the first MAX_PROBLEMS problems and counts them all, and
 * enforces `maxSeries` and `maxPoints` while it collects (so that a hostile log cannot grow it
 * past them). Pure (no `node:` import).
 * @internal
 */
import { fmtValue } from "../../core/message.js";
import { ConfigError, fail } from "../../errors.js";
import { ioError } from "../_internal/ioError.js";
import {
  DEFAULT_MAX_LOG_BYTES,
  DEFAULT_MAX_POINTS,
  DEFAULT_MAX_SERIES,
  MAX_PROBLEMS,
  type MetricLog,
  type MetricLogFile,
  type MetricLogFormat,
  type MetricLogProblem,
  type MetricSeries,
} from "./types.js";

/** The limits of a read, every one a positive safe integer. @internal */
export interface ResolvedLimits {
  readonly maxBytes: number;
  readonly maxSeries: number;
  readonly maxPoints: number;
}

/**
 * Validate the limits of a metric-log read (`options.maxBytes`, `options.maxSeries`,
 * `options.maxPoints`): each a positive safe integer, or undefined for its default. A ConfigError
 * names the option otherwise. @internal
 */
export function resolveLimits(fn: string, limits: unknown): ResolvedLimits {
  if (limits === undefined || limits === null) limits = {};
  if (typeof limits !== "object") {
    throw fail(ConfigError, fn, "options", "an object of limits", fmtValue(limits));
  }
  const o = limits as Record<string, unknown>;
  const one = (key: string, fallback: number, unit: string): number => {
    const v = o[key];
    if (v === undefined) return fallback;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) {
      throw fail(ConfigError, fn, `options.${key}`, `a positive integer (${unit})`, fmtValue(v));
    }
    return v;
  };
  return {
    maxBytes: one("maxBytes", DEFAULT_MAX_LOG_BYTES, "bytes"),
    maxSeries: one("maxSeries", DEFAULT_MAX_SERIES, "series"),
    maxPoints: one("maxPoints", DEFAULT_MAX_POINTS, "points"),
  };
}

/** One series while it is collected: its points in reading order, and whether they ascend. */
interface Collecting {
  steps: number[];
  values: number[];
  /** Every step so far is greater than the one before it (no rewrite, nothing to sort). */
  ascending: boolean;
  /** Compact (sort, drop the replaced values) once this many points are held. */
  compactAt: number;
  /** The file the last point came from (named if the series exceeds maxPoints). */
  file: string;
}

/**
 * Sort a series' points by step and keep, at each step, the value read last; returns how many
 * values were replaced. Stable by reading order: the index breaks ties.
 */
function compact(s: Collecting): number {
  if (s.ascending) return 0;
  const { steps, values } = s;
  const order = Array.from({ length: steps.length }, (_, i) => i);
  order.sort((a, b) => (steps[a] as number) - (steps[b] as number) || a - b);
  const outSteps: number[] = [];
  const outValues: number[] = [];
  let replaced = 0;
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    const step = steps[i] as number;
    if (outSteps.length > 0 && outSteps[outSteps.length - 1] === step) {
      outValues[outValues.length - 1] = values[i] as number;
      replaced++;
    } else {
      outSteps.push(step);
      outValues.push(values[i] as number);
    }
  }
  s.steps = outSteps;
  s.values = outValues;
  s.ascending = true;
  return replaced;
}

/**
 * A run's series while its files are read: `add` a point as it is read, `problem` a skipped
 * record, `finish` into a {@link MetricLog}. @internal
 */
export class RunBuilder {
  private readonly series = new Map<string, Collecting>();
  private readonly problems: MetricLogProblem[] = [];
  private problemCount = 0;
  private rewrites = 0;

  constructor(
    private readonly fn: string,
    private readonly run: string,
    private readonly limits: ResolvedLimits,
  ) {}

  /** Add the value of series `name` at `step` (an integer), read from `file`. */
  add(file: string, name: string, step: number, value: number): void {
    let s = this.series.get(name);
    if (s === undefined) {
      if (this.series.size >= this.limits.maxSeries) {
        throw ioError(
          this.fn,
          file,
          "path",
          `at most ${this.limits.maxSeries} series in one run (raise options.maxSeries to read it)`,
          `series ${this.limits.maxSeries + 1}, ${fmtValue(name)}, in run ${fmtValue(this.run)}`,
        );
      }
      s = { steps: [], values: [], ascending: true, compactAt: this.limits.maxPoints + 1, file };
      this.series.set(name, s);
    }
    const n = s.steps.length;
    if (n > 0 && !(step > (s.steps[n - 1] as number))) s.ascending = false;
    s.steps.push(step);
    s.values.push(value);
    s.file = file;
    if (s.steps.length >= s.compactAt) {
      this.rewrites += compact(s);
      this.checkPoints(name, s);
      // Compact again only once the series has doubled: amortised O(n log n), at most
      // 2 · maxPoints points held.
      s.compactAt = Math.max(this.limits.maxPoints + 1, 2 * s.steps.length);
    }
  }

  private checkPoints(name: string, s: Collecting): void {
    if (s.steps.length > this.limits.maxPoints) {
      throw ioError(
        this.fn,
        s.file,
        "path",
        `at most ${this.limits.maxPoints} points in one series (raise options.maxPoints to read it)`,
        `more than ${this.limits.maxPoints} distinct steps of series ${fmtValue(name)} in run ${fmtValue(this.run)}`,
      );
    }
  }

  /** Record a skipped record (the first MAX_PROBLEMS are listed, all are counted). */
  problem(file: string, at: string, what: string): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ file, at, what });
  }

  /** The run's log: every series sorted by name (UTF-16 code-unit order), steps ascending. */
  finish(format: MetricLogFormat, files: readonly MetricLogFile[]): MetricLog {
    const names = [...this.series.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const series: MetricSeries[] = [];
    for (const name of names) {
      const s = this.series.get(name) as Collecting;
      this.rewrites += compact(s);
      this.checkPoints(name, s);
      series.push({ name, steps: Float64Array.from(s.steps), values: Float64Array.from(s.values) });
    }
    return {
      format,
      run: this.run,
      files,
      series,
      problems: this.problems,
      problemCount: this.problemCount,
      rewrites: this.rewrites,
    };
  }
}
