/**
 * W&B history exports (docs/diagnostics/logs.md#wb-exports): the CSV the W&B app exports
 * from a line chart (first column its x-axis, `Step` by default, then `<run name> - <metric>`
 * with `__MIN` and `__MAX` companions, one group per run shown), and what users save from the
 * public API: `run.history()` / `run.scan_history()` rows as a pandas `to_csv` (a `_step` column,
 * W&B's `_runtime` and `_timestamp`), as `to_json(orient="records", lines=True)`, or as a JSON
 * array of records. Pure: no `node:` import.
 */

import { fmtValue } from "../../core/message.js";
import { requireBytes, requireString } from "../../core/validate.js";
import { decodeUtf8, ioError } from "../_internal/ioError.js";
import {
  checkBytes,
  type Limits,
  nonFiniteWord,
  Problems,
  parsePythonJson,
  resolveLimits,
  SeriesBuilder,
} from "./_series.js";
import { CsvReader } from "./csv.js";
import { type LineRules, readJsonLines, readRecord } from "./jsonl.js";
import type { MetricLog, MetricLogFile, MetricLogLimits } from "./types.js";

/** Step keys of W&B records, the first present wins: W&B's own `_step`, then the HF callback's x-axis. */
export const WANDB_STEP_KEYS: readonly string[] = Object.freeze([
  "_step",
  "train/global_step",
  "global_step",
  "step",
]);

/** Names of a chart export's first column read as its step axis (besides any name holding "step"). */
const X_AXIS = /step/i;

const WANDB_RULES: LineRules = {
  format: "wandb",
  stepKeys: WANDB_STEP_KEYS,
  // pandas' to_json writes NaN (a step where the metric was not logged) and ±inf as null.
  nullIsNaN: false,
  // W&B's own keys (_runtime, _timestamp, _wandb, …) and the pandas index.
  skipKey: (k) => k.startsWith("_") || k === "" || k === "index",
};

/** Columns of a CSV header read (a chart export has 3 per run and metric, plus the step). */
export const MAX_CSV_COLUMNS = 1_000_000;

/** A number as CSV text: decimal with optional fraction and exponent (no hex, no spaces). */
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Read a W&B history export: a chart's CSV, a pandas `to_csv` of `run.history()`, JSON records
 * (lines) or a JSON array of records.
 *
 * Format, by its first character: `[` a JSON array of records, `{` JSON lines, else CSV (RFC 4180,
 * UTF-8). Records: the step is the first of `_step`, `train/global_step`, `global_step`, `step`;
 * keys starting with `_` (`_runtime`, `_timestamp`) are not series; `null` is no point (pandas
 * writes NaN as null). CSV with a `_step` column: one run; columns starting with `_`, the pandas
 * index (an unnamed first column) skipped. Other CSV: a chart export, its first column the step
 * (a name holding "step": `Step`, `train/global_step`); `<run> - <metric>` columns become the
 * series of run `<run>` (one MetricLog per run, in header order), columns without ` - ` belong to
 * run `""`, `__MIN`/`__MAX` companions and repeated columns are skipped. Cells: empty is no point;
 * `NaN`, `inf`, `-inf`, `Infinity` are the non-finite values as logged; other text is not a
 * metric (one problem per column). A row with the wrong field count, a malformed quote or a step
 * that is not an integer is a problem (`line N`); a last row cut off without its line break is
 * the end of the data (the file's note). A runs-table export (one summary row per run) is refused.
 *
 * @param bytes - The whole file.
 * @param path - The name to report in problems and errors (default `"<bytes>"`).
 * @param options - Limits: `maxBytes` (1 GiB), `maxSeries` and `maxPoints` per run.
 * @returns One MetricLog per run.
 * @throws {IoError} E_IO when the bytes are not UTF-8, a JSON array does not parse, a CSV has no
 *   step column (or is a runs-table export), or a limit is exceeded.
 * @throws {ConfigError} E_CONFIG when a limit is not a positive integer.
 * @derivation docs/diagnostics/logs.md#wb-exports
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > wandb > golden: a chart export with two runs reads to two runs
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > wandb > golden: pandas exports of run.history() read to the values logged
 * @since 0.1.0
 */
export function parseWandbExport(
  bytes: Uint8Array,
  path = "<bytes>",
  options: MetricLogLimits = {},
): MetricLog[] {
  requireBytes("parseWandbExport", "bytes", bytes);
  requireString("parseWandbExport", "path", path);
  return readWandbAs("parseWandbExport", bytes, path, options);
}

function firstChar(bytes: Uint8Array): number {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (
    i < bytes.length &&
    (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)
  )
    i++;
  return i < bytes.length ? (bytes[i] as number) : -1;
}

/** {@link parseWandbExport} reporting errors as `fn`. @internal */
export function readWandbAs(
  fn: string,
  bytes: Uint8Array,
  path: string,
  options: MetricLogLimits | undefined,
): MetricLog[] {
  const limits = resolveLimits(fn, options);
  checkBytes(fn, path, bytes, limits);
  const first = firstChar(bytes);
  if (first === 0x7b) return [readJsonLines(fn, bytes, path, limits, WANDB_RULES)];
  const text = decodeUtf8(fn, path, "bytes", bytes);
  if (first === 0x5b) return [readJsonArray(fn, text, bytes.length, path, limits)];
  return readCsv(fn, text, bytes.length, path, limits);
}

function readJsonArray(
  fn: string,
  text: string,
  size: number,
  path: string,
  limits: Limits,
): MetricLog {
  const parsed = parsePythonJson(text);
  if (!parsed.ok)
    throw ioError(
      fn,
      path,
      "bytes",
      "a JSON array of W&B history records",
      `${parsed.reason} at line ${parsed.line}, column ${parsed.column}`,
    );
  const rows = parsed.value as unknown[];
  if (!Array.isArray(rows))
    throw ioError(fn, path, "bytes", "a JSON array of W&B history records", "another JSON value");
  const builder = new SeriesBuilder(fn, path, limits);
  const problems = new Problems();
  for (let i = 0; i < rows.length; i++)
    readRecord(builder, problems, path, `record ${i}`, rows[i], WANDB_RULES);
  return builder.finish("wandb", "", [{ path, bytes: size, records: rows.length }], problems);
}

/** Where a CSV column goes: a run's series, or nowhere (with the reason). */
interface Column {
  readonly run: string;
  readonly metric: string;
}

function csvColumns(
  fn: string,
  path: string,
  header: readonly string[],
): { step: number; columns: (Column | null)[] } {
  const stepAt = header.indexOf("_step");
  const columns: (Column | null)[] = [];
  const seen = new Set<string>();
  if (stepAt >= 0) {
    for (const name of header) {
      const skip =
        name.startsWith("_") || name === "" || name === "index" || name.startsWith("Unnamed: ");
      columns.push(skip || seen.has(name) ? null : { run: "", metric: name });
      seen.add(name);
    }
    return { step: stepAt, columns };
  }
  const x = header[0] ?? "";
  if (!X_AXIS.test(x)) {
    const table =
      header.includes("Name") && (header.includes("State") || header.includes("Runtime"));
    throw ioError(
      fn,
      path,
      "bytes",
      "a W&B history export: a `_step` column (run.history() saved with pandas) or a chart export whose first column is its step axis (`Step`)",
      table
        ? "a runs-table export (one summary row per run, no history)"
        : `first column ${fmtValue(x)}`,
    );
  }
  columns.push(null);
  for (let j = 1; j < header.length; j++) {
    const name = header[j] as string;
    const cut = name.indexOf(" - ");
    const run = cut < 0 ? "" : name.slice(0, cut);
    const metric = cut < 0 ? name : name.slice(cut + 3);
    const skip =
      name.endsWith("__MIN") || name.endsWith("__MAX") || metric.startsWith("_") || metric === "";
    columns.push(skip || seen.has(name) ? null : { run, metric });
    seen.add(name);
  }
  return { step: 0, columns };
}

function readCsv(
  fn: string,
  text: string,
  size: number,
  path: string,
  limits: Limits,
): MetricLog[] {
  const reader = new CsvReader(text, MAX_CSV_COLUMNS + 1);
  const head = reader.next();
  if (head === null || head.error !== undefined || !head.complete)
    throw ioError(
      fn,
      path,
      "bytes",
      "a CSV with a header line",
      head === null ? "an empty file" : (head.error ?? "no line break after the header"),
    );
  const header = head.fields;
  if (header.length > MAX_CSV_COLUMNS)
    throw ioError(fn, path, "bytes", `a CSV header of at most ${MAX_CSV_COLUMNS} columns`, "more");
  // A data row with more fields than the header is malformed: keep one more to tell.
  reader.maxFields = header.length + 1;
  const { step: stepAt, columns } = csvColumns(fn, path, header);
  const builders = new Map<string, SeriesBuilder>();
  for (const c of columns)
    if (c !== null && !builders.has(c.run))
      builders.set(c.run, new SeriesBuilder(fn, path, limits));
  const problems = new Problems();
  let records = 0;
  let note: string | undefined;
  for (let row = reader.next(); row !== null; row = reader.next()) {
    const at = `line ${row.line}`;
    if (row.fields.length === 1 && row.fields[0] === "" && row.error === undefined) continue;
    const short = row.fields.length !== header.length;
    if (!row.complete && (row.error !== undefined || short)) {
      note = `a truncated last row (a live writer): the data ends before line ${row.line}`;
      break;
    }
    records++;
    if (row.error !== undefined || short) {
      problems.add(
        path,
        at,
        row.error ?? `${row.fields.length} fields, the header has ${header.length}: skipped`,
      );
      continue;
    }
    const cell = row.fields[stepAt] as string;
    const step = NUMBER.test(cell) ? Number(cell) : Number.NaN;
    if (!Number.isSafeInteger(step)) {
      problems.add(
        path,
        at,
        `the step (${fmtValue(header[stepAt])}) must be an integer; got ${fmtValue(cell)}: skipped`,
      );
      continue;
    }
    for (let j = 0; j < columns.length; j++) {
      const c = columns[j];
      const v = row.fields[j] as string;
      if (c === undefined || c === null || v === "") continue;
      const b = builders.get(c.run) as SeriesBuilder;
      const x = NUMBER.test(v) ? Number(v) : nonFiniteWord(v);
      if (x === undefined)
        b.skip(c.metric, at, `a string (${fmtValue(v.length > 40 ? `${v.slice(0, 40)}…` : v)})`);
      else b.add(c.metric, step, x);
    }
  }
  const file: MetricLogFile =
    note === undefined ? { path, bytes: size, records } : { path, bytes: size, records, note };
  const runs = [...builders.entries()];
  if (runs.length === 0)
    return [new SeriesBuilder(fn, path, limits).finish("wandb", "", [file], problems)];
  // The file's problems are listed once, with the first run.
  return runs.map(([run, b], k) =>
    b.finish("wandb", run, [file], k === 0 ? problems : new Problems()),
  );
}
