/**
 * The parts the text metric-log readers (JSONL, trainer_state.json, W&B exports) share: the limits
 * of types.ts checked and enforced, a series builder that sorts each series by step and counts
 * rewrites, the problem list (the first MAX_PROBLEMS listed, all counted), the reading of one
 * logged value, and Python's JSON dialect (`NaN`, `Infinity`, `-Infinity` as bare tokens, which
 * Python's `json.dumps` writes by default). Pure: no `node:` import.
 * @internal
 */

import { fmtValue, safeText } from "../../core/message.js";
import { ConfigError, fail } from "../../errors.js";
import { ioError } from "../_internal/ioError.js";
import { parseStrictJson, type StrictJsonResult } from "../_internal/strictJson.js";
import {
  DEFAULT_MAX_LOG_BYTES,
  DEFAULT_MAX_POINTS,
  DEFAULT_MAX_SERIES,
  MAX_PROBLEMS,
  type MetricLog,
  type MetricLogFile,
  type MetricLogFormat,
  type MetricLogLimits,
  type MetricLogProblem,
  type MetricSeries,
} from "./types.js";

/** {@link MetricLogLimits} with every default filled in. @internal */
export interface Limits {
  readonly maxBytes: number;
  readonly maxSeries: number;
  readonly maxPoints: number;
}

function limit(fn: string, name: string, x: unknown, fallback: number): number {
  if (x === undefined) return fallback;
  if (typeof x !== "number" || !Number.isSafeInteger(x) || x < 1)
    throw fail(ConfigError, fn, `options.${name}`, "a positive integer", fmtValue(x));
  return x;
}

/** Check the limits of `options` (positive integers) and fill in the defaults. @internal */
export function resolveLimits(fn: string, options: MetricLogLimits | undefined): Limits {
  if (options !== undefined && (typeof options !== "object" || options === null))
    throw fail(ConfigError, fn, "options", "an options object", fmtValue(options));
  return {
    maxBytes: limit(fn, "maxBytes", options?.maxBytes, DEFAULT_MAX_LOG_BYTES),
    maxSeries: limit(fn, "maxSeries", options?.maxSeries, DEFAULT_MAX_SERIES),
    maxPoints: limit(fn, "maxPoints", options?.maxPoints, DEFAULT_MAX_POINTS),
  };
}

/** Throw unless `bytes` (already in memory) is within `maxBytes`. @internal */
export function checkBytes(fn: string, path: string, bytes: Uint8Array, limits: Limits): void {
  if (bytes.length > limits.maxBytes)
    throw ioError(
      fn,
      path,
      "options.maxBytes",
      `at most ${limits.maxBytes} bytes in one log file (raise options.maxBytes to read it)`,
      `${bytes.length} bytes`,
    );
}

/** The problems of one log: the first MAX_PROBLEMS listed, all counted. @internal */
export class Problems {
  readonly list: MetricLogProblem[] = [];
  count = 0;
  /** A copy, to add to without changing this one. */
  copy(): Problems {
    const c = new Problems();
    c.list.push(...this.list);
    c.count = this.count;
    return c;
  }
  add(file: string, at: string, what: string): void {
    this.count++;
    if (this.list.length < MAX_PROBLEMS) this.list.push({ file, at, what: safeText(what, 500) });
  }
}

/** Distinct keys whose non-numeric values are tracked one by one (the rest counted together). */
const MAX_TRACKED_KEYS = MAX_PROBLEMS;

/** One series while it is collected: its points in reading order. */
interface Collecting {
  steps: number[];
  values: number[];
  /** Every step so far is greater than the one before it (no rewrite, nothing to sort). */
  ascending: boolean;
  /** Compact (sort, drop the replaced values) once this many points are held. */
  compactAt: number;
  /** The file the last point came from (named if the series exceeds maxPoints). */
  file: string;
  /** Whether its points are kept (keepPoints, asked once when the series is first seen). */
  readonly keep: boolean;
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
  for (const i of order) {
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
 * The points of one run, in read order (file after file), bounded by options.maxSeries and by
 * options.maxPoints distinct steps per series: rewritten points are merged once a series holds
 * more than maxPoints, and again each time it doubles, so at most 2 × maxPoints are held. The last
 * value read at a step wins and is counted in `rewrites`. A value that is not a number is counted
 * per key and reported once per key at the end. Every metric-log reader builds its runs here.
 * @internal
 */
export class SeriesBuilder {
  private readonly points = new Map<string, Collecting>();
  private readonly nonNumeric = new Map<string, { at: string; count: number; kind: string }>();
  private otherNonNumeric = 0;
  private rewrites = 0;
  /**
   * Which series keep their points (default: all). A series whose name this rejects is still a
   * series of the log (named, counted against maxSeries) but holds no point: a follower keeps
   * only the points its detectors can read, so that its memory is bounded over a long run.
   */
  keepPoints: ((name: string) => boolean) | null = null;

  /**
   * @param fn - The reader, named by its errors.
   * @param path - The file being read: points added are from it, limit errors name it (a reader
   *   of several files sets it before each).
   * @param limits - The resolved limits.
   * @param run - The run's name, in limit errors.
   */
  constructor(
    readonly fn: string,
    public path: string,
    readonly limits: Limits,
    readonly run = "",
  ) {}

  private where(): string {
    return this.run === "" ? "" : ` in run ${fmtValue(this.run)}`;
  }

  /** Add the point (`step`, `value`) of the series `name`. */
  add(name: string, step: number, value: number): void {
    let s = this.points.get(name);
    if (s === undefined) {
      if (this.points.size >= this.limits.maxSeries)
        throw ioError(
          this.fn,
          this.path,
          "options.maxSeries",
          `at most ${this.limits.maxSeries} series in one run (raise options.maxSeries to read it)`,
          `another series, ${fmtValue(name)}${this.where()}`,
        );
      s = {
        steps: [],
        values: [],
        ascending: true,
        compactAt: this.limits.maxPoints + 1,
        file: this.path,
        keep: this.keepPoints === null || this.keepPoints(name),
      };
      this.points.set(name, s);
    }
    if (!s.keep) return;
    const n = s.steps.length;
    if (n > 0 && !(step > (s.steps[n - 1] as number))) s.ascending = false;
    s.steps.push(step);
    s.values.push(value);
    s.file = this.path;
    if (s.steps.length >= s.compactAt) {
      this.rewrites += compact(s);
      this.checkPoints(name, s);
      // Compact again only once the series has doubled: amortised O(n log n), at most
      // 2 · maxPoints points held.
      s.compactAt = Math.max(this.limits.maxPoints + 1, 2 * s.steps.length);
    }
  }

  private checkPoints(name: string, s: Collecting): void {
    if (s.steps.length > this.limits.maxPoints)
      throw ioError(
        this.fn,
        s.file,
        "options.maxPoints",
        `at most ${this.limits.maxPoints} points in one series (raise options.maxPoints to read it)`,
        `more than ${this.limits.maxPoints} distinct steps of ${fmtValue(name)}${this.where()}`,
      );
  }

  /** Note a value of `name` at `at` that is not a number (`kind`: "a string", "an object", …). */
  skip(name: string, at: string, kind: string): void {
    const k = this.nonNumeric.get(name);
    if (k !== undefined) k.count++;
    else if (this.nonNumeric.size < MAX_TRACKED_KEYS)
      this.nonNumeric.set(name, { at, count: 1, kind });
    else this.otherNonNumeric++;
  }

  /** Whether any point was added. */
  get empty(): boolean {
    return this.points.size === 0;
  }

  /**
   * The series sorted by name, each by step (the last value read at a step wins), and the log:
   * `problems` with the values that were not numbers added (to a copy: the builder may read more
   * and finish again).
   */
  finish(
    format: MetricLogFormat,
    run: string,
    files: readonly MetricLogFile[],
    given: Problems,
  ): MetricLog {
    const problems = given.copy();
    for (const [name, k] of this.nonNumeric) {
      const more = k.count === 1 ? "" : ` (${k.count} such values, this is the first)`;
      problems.add(
        this.path,
        k.at,
        `${fmtValue(name)} holds ${k.kind}, not a number: skipped${more}`,
      );
    }
    if (this.otherNonNumeric > 0)
      problems.add(
        this.path,
        "(several)",
        `${this.otherNonNumeric} more values that are not numbers, of keys past the first ${MAX_TRACKED_KEYS}: skipped`,
      );
    const names = [...this.points.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const series: MetricSeries[] = names.map((name) => {
      const s = this.points.get(name) as Collecting;
      this.rewrites += compact(s);
      this.checkPoints(name, s);
      return { name, steps: Float64Array.from(s.steps), values: Float64Array.from(s.values) };
    });
    return {
      format,
      run,
      files,
      series,
      problems: problems.list,
      problemCount: problems.count,
      rewrites: this.rewrites,
    };
  }
}

const NON_FINITE: Readonly<Record<string, number>> = {
  nan: Number.NaN,
  "+nan": Number.NaN,
  "-nan": Number.NaN,
  inf: Number.POSITIVE_INFINITY,
  "+inf": Number.POSITIVE_INFINITY,
  infinity: Number.POSITIVE_INFINITY,
  "+infinity": Number.POSITIVE_INFINITY,
  "-inf": Number.NEGATIVE_INFINITY,
  "-infinity": Number.NEGATIVE_INFINITY,
};

/** `NaN`, `inf`, `-Infinity`, … (any case) as the non-finite number; anything else undefined. @internal */
export function nonFiniteWord(s: string): number | undefined {
  return s.length <= 9 ? NON_FINITE[s.toLowerCase()] : undefined;
}

/**
 * A logged value as a number: a JSON number as it is, a string naming a non-finite number (`"NaN"`,
 * `"inf"`, `"-Infinity"`) as that number; `undefined` for anything else (null is the caller's
 * choice). @internal
 */
export function metricValue(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "string") return nonFiniteWord(v);
  return undefined;
}

/** "a string", "an object", "an array", "a boolean", "null" — for a skipped value. @internal */
export function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  if (typeof v === "string")
    return `a string (${fmtValue(v.length > 40 ? `${v.slice(0, 40)}…` : v)})`;
  return `a ${typeof v}`;
}

/** A JSON number that is a step: a safe integer. @internal */
export function isStep(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v);
}

/**
 * Parse JSON as Python's `json` module writes it: strict RFC 8259 (duplicate keys rejected, depth
 * bounded) except that the bare tokens `NaN`, `Infinity` and `-Infinity` outside strings are read
 * as the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (which {@link metricValue} reads as the
 * non-finite numbers). Never throws. @internal
 */
export function parsePythonJson(text: string): StrictJsonResult {
  return parseStrictJson(
    text.includes("NaN") || text.includes("Infinity") ? quoteNonFinite(text) : text,
  );
}

function quoteNonFinite(text: string): string {
  let out = "";
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 78 && text.startsWith("NaN", i)) {
      out += `${text.slice(from, i)}"NaN"`;
      from = i + 3;
      i += 2;
    } else if (c === 73 && text.startsWith("Infinity", i)) {
      const neg = i > 0 && text.charCodeAt(i - 1) === 45;
      out += `${text.slice(from, neg ? i - 1 : i)}"${neg ? "-" : ""}Infinity"`;
      from = i + 8;
      i += 7;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}
