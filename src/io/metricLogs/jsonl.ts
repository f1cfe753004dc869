/**
 * JSON Lines metric logs (docs/diagnostics/logs.md#jsonl): verl's file logger
 * (`verl/utils/tracking.py`, `FileLogger.log` writes `{"step": s, "data": {...}}` per call, with
 * orjson) and the flat line-per-step form `{"step": s, "loss": 0.5, ...}` that training scripts
 * write themselves. The line reader is shared with W&B's `to_json(orient="records", lines=True)`
 * exports (wandb.ts), which differ in their step key and in what `null` means. Lines are split on
 * the bytes and decoded one at a time, so a file of any size within options.maxBytes is read
 * without one giant string. Pure: no `node:` import.
 */

import { fmtValue } from "../../core/message.js";
import { requireBytes, requireString } from "../../core/validate.js";
import {
  checkBytes,
  isStep,
  kindOf,
  type Limits,
  metricValue,
  Problems,
  parsePythonJson,
  resolveLimits,
  SeriesBuilder,
} from "./_series.js";
import type { MetricLog, MetricLogFormat, MetricLogLimits } from "./types.js";

/** Longest line read: 64 MiB (a longer line is a problem, skipped). */
export const MAX_JSONL_LINE_BYTES: number = 64 * 2 ** 20;

/** The step keys of a JSONL line, the first present wins: verl's `step`, then HF's `global_step`, then W&B's `_step`. */
export const JSONL_STEP_KEYS: readonly string[] = Object.freeze(["step", "global_step", "_step"]);

/** How one kind of JSON-lines log is read. @internal */
export interface LineRules {
  readonly format: MetricLogFormat;
  /** Keys that hold the step, the first present wins (it is not a series; the others are). */
  readonly stepKeys: readonly string[];
  /** `null` inside verl's `data` object is a logged NaN or ±∞ (orjson's spelling) rather than a missing value (pandas', and a flat log's). */
  readonly nullIsNaN: boolean;
  /** Keys that are not metrics (W&B's `_runtime`, `_timestamp`, …). */
  readonly skipKey: (key: string) => boolean;
}

/** The rules of a JSONL metric log (not a W&B lines export). @internal */
export const JSONL_RULES: LineRules = {
  format: "jsonl",
  stepKeys: JSONL_STEP_KEYS,
  nullIsNaN: true,
  skipKey: () => false,
};

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function isBlank(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/**
 * Read JSON lines into one run (run `""`; the caller names it). A line that is not UTF-8, not
 * JSON, not an object or without an integer step is a problem (`line N`) and the rest is still
 * read; a last line without its newline that does not parse is where a live writer was cut off:
 * the data ends there (the file's note). @internal
 */
export function readJsonLines(
  fn: string,
  bytes: Uint8Array,
  path: string,
  limits: Limits,
  rules: LineRules,
): MetricLog {
  checkBytes(fn, path, bytes, limits);
  const builder = new SeriesBuilder(fn, path, limits);
  const problems = new Problems();
  const scan = scanJsonLines(bytes, path, builder, problems, rules, 0);
  const file =
    scan.note === undefined
      ? { path, bytes: bytes.length, records: scan.records }
      : { path, bytes: bytes.length, records: scan.records, note: scan.note };
  return builder.finish(rules.format, "", [file], problems);
}

/** What {@link scanJsonLines} read: records, lines, and the note of a cut last line. @internal */
export interface JsonLinesScan {
  readonly records: number;
  /** Lines passed (blank ones included), for the next chunk's line numbers. */
  readonly lines: number;
  readonly note?: string;
}

/**
 * Read the JSON lines of `bytes` into `builder` (problems into `problems`), numbering lines from
 * `lineBase + 1`: the loop of {@link readJsonLines}, also run by a follower on each new chunk of
 * complete lines. @internal
 */
export function scanJsonLines(
  bytes: Uint8Array,
  path: string,
  builder: SeriesBuilder,
  problems: Problems,
  rules: LineRules,
  lineBase: number,
): JsonLinesScan {
  let records = 0;
  let note: string | undefined;
  let line = lineBase;
  for (let start = 0; start < bytes.length; ) {
    line++;
    const nl = bytes.indexOf(0x0a, start);
    const complete = nl >= 0;
    const end = complete ? nl : bytes.length;
    const from = start;
    start = end + 1;
    if (isBlank(bytes, from, end)) continue;
    const at = `line ${line}`;
    if (end - from > MAX_JSONL_LINE_BYTES) {
      records++;
      problems.add(
        path,
        at,
        `a line of ${end - from} bytes, over the ${MAX_JSONL_LINE_BYTES}-byte bound: skipped`,
      );
      continue;
    }
    let text: string;
    try {
      text = UTF8.decode(bytes.subarray(from, end));
    } catch {
      if (!complete) {
        note = truncated(line, from);
        break;
      }
      records++;
      problems.add(path, at, "not valid UTF-8: skipped");
      continue;
    }
    const parsed = parsePythonJson(text);
    if (!parsed.ok) {
      if (!complete) {
        note = truncated(line, from);
        break;
      }
      records++;
      problems.add(path, at, `not JSON (${parsed.reason} at column ${parsed.column}): skipped`);
      continue;
    }
    records++;
    readRecord(builder, problems, path, at, parsed.value, rules);
  }
  return note === undefined ? { records, lines: line } : { records, lines: line, note };
}

function truncated(line: number, byte: number): string {
  return `a truncated last line (a live writer): the data ends before line ${line} (byte ${byte})`;
}

/** Read one parsed record (a line, a JSON array element) into `builder`. @internal */
export function readRecord(
  builder: SeriesBuilder,
  problems: Problems,
  path: string,
  at: string,
  value: unknown,
  rules: LineRules,
): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.add(path, at, `${kindOf(value)}, not a JSON object: skipped`);
    return;
  }
  const record = value as Record<string, unknown>;
  const key = rules.stepKeys.find((k) => Object.hasOwn(record, k));
  if (key === undefined) {
    problems.add(
      path,
      at,
      `no step (a key ${rules.stepKeys.map((k) => `"${k}"`).join(", ")}): skipped`,
    );
    return;
  }
  const step = record[key];
  if (!isStep(step)) {
    problems.add(path, at, `"${key}" must be an integer; got ${fmtValue(step)}: skipped`);
    return;
  }
  for (const k of Object.keys(record)) {
    if (k === key) continue;
    const v = record[k];
    // verl's FileLogger nests the metrics under "data"; its keys are the series names.
    if (k === "data" && typeof v === "object" && v !== null && !Array.isArray(v)) {
      const data = v as Record<string, unknown>;
      for (const d of Object.keys(data)) addValue(builder, rules, at, d, step, data[d], true);
    } else addValue(builder, rules, at, k, step, v, false);
  }
}

function addValue(
  builder: SeriesBuilder,
  rules: LineRules,
  at: string,
  name: string,
  step: number,
  v: unknown,
  inVerlData: boolean,
): void {
  if (rules.skipKey(name)) return;
  if (v === null) {
    // orjson (verl's FileLogger) writes NaN and ±∞ as null; Python's json, which a flat log is
    // written with, writes them as NaN and Infinity, so a null there is a missing value.
    if (rules.nullIsNaN && inVerlData) builder.add(name, step, Number.NaN);
    return;
  }
  const x = metricValue(v);
  if (x === undefined) builder.skip(name, at, kindOf(v));
  else builder.add(name, step, x);
}

/**
 * Read a JSON Lines metric log: verl's file logger or a flat line-per-step log.
 *
 * Format: UTF-8 JSON objects, one per line (blank lines ignored, `\r\n` accepted). The step is
 * the first of `step`, `global_step`, `_step` present, an integer. verl's form
 * `{"step": s, "data": {"actor/entropy": 0.5, ...}}` reads the keys of `data` as series names;
 * in the flat form every other key is a series. Values: numbers; `null` is NaN (orjson, which
 * verl's logger uses, writes NaN and ±∞ as null); Python's bare `NaN`/`Infinity`/`-Infinity`
 * and the strings `"NaN"`, `"inf"`, `"-inf"` as the non-finite numbers; other values (strings,
 * booleans, arrays, nested objects) are not metrics: skipped, one problem per key. Duplicate keys
 * in a line make that line a problem. A step logged twice (verl logs validation and training
 * metrics in two lines of one step) merges; the same series at the same step is a rewrite, the
 * last value wins.
 *
 * @param bytes - The whole file.
 * @param path - The name to report in problems and errors (default `"<bytes>"`).
 * @param options - Limits: `maxBytes` (1 GiB), `maxSeries`, `maxPoints`.
 * @returns One run (`run` is `""`), its series sorted by name.
 * @throws {IoError} E_IO when a limit is exceeded (the message names it and the file).
 * @throws {ConfigError} E_CONFIG when a limit is not a positive integer.
 * @derivation docs/diagnostics/logs.md#jsonl
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > jsonl > golden: verl's FileLogger file reads to the values it logged
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > jsonl > golden: bad lines are problems with their line, a truncated last line ends the data
 * @since 0.1.0
 */
export function parseJsonlLog(
  bytes: Uint8Array,
  path = "<bytes>",
  options: MetricLogLimits = {},
): MetricLog {
  requireBytes("parseJsonlLog", "bytes", bytes);
  requireString("parseJsonlLog", "path", path);
  return readJsonlAs("parseJsonlLog", bytes, path, options);
}

/** {@link parseJsonlLog} reporting errors as `fn`. @internal */
export function readJsonlAs(
  fn: string,
  bytes: Uint8Array,
  path: string,
  options: MetricLogLimits | undefined,
): MetricLog {
  return readJsonLines(fn, bytes, path, resolveLimits(fn, options), JSONL_RULES);
}
