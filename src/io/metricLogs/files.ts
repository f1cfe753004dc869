/**
 * Find and read the metric logs under a path (docs/diagnostics/logs.md): TensorBoard event files
 * (each folder holding some is a run, its files read in the order of the time in their names),
 * JSONL (verl's file logger, flat logs), the HF Trainer's `trainer_state.json` (the newest
 * `checkpoint-N` of an output folder), W&B exports. One walk finds them all; every file is
 * checked to be a regular file within options.maxBytes before it is opened.
 */

import { closeSync, type Dirent, readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fmtValue } from "../../core/message.js";
import { requirePath } from "../../core/validate.js";
import { ConfigError, fail } from "../../errors.js";
import { fsPath } from "../../platform/fsPath.js";
import { fsError, ioError, openForRead, readFileBytes, readRange } from "../_internal/files.js";
import { type Limits, Problems, resolveLimits, SeriesBuilder } from "./_series.js";
import { DETECT_HEAD_BYTES, detectMetricLogFormat } from "./detect.js";
import { readJsonlAs } from "./jsonl.js";
import { scanEventFile } from "./tensorboard.js";
import { readTrainerStateAs } from "./trainerState.js";
import {
  METRIC_LOG_FORMATS,
  type MetricLog,
  type MetricLogFormat,
  type MetricLogLimits,
} from "./types.js";
import { readWandbAs } from "./wandb.js";

/** Options of {@link readMetricLogs}: the limits, and a format to force. */
export interface MetricLogOptions extends MetricLogLimits {
  /** Read every file as this format (a folder: only the files detected as it). */
  readonly format?: MetricLogFormat;
}

/** A metric-log file found under a path. */
export interface MetricLogCandidate {
  readonly path: string;
  /** The run the file holds: its path relative to the path given, without the extension (a trainer_state.json: its output folder); `""` for the path itself. */
  readonly run: string;
  readonly format: MetricLogFormat;
  /** Why this format. */
  readonly reasons: readonly string[];
  /** Which trainer_state.json of an output folder was picked, and over which others. */
  readonly note?: string;
}

/** Deepest folder entered below the path given. */
export const MAX_LOG_FOLDER_DEPTH = 64;
/** Folder entries looked at in all (a bound on a walk of a huge tree). */
export const MAX_LOG_FOLDER_ENTRIES = 1_000_000;

const FN = "readMetricLogs";
const EVENTS = "events.out.tfevents.";

/** The timestamp a writer put in an event file's name (`events.out.tfevents.1700000000.host`), or ∞. */
function nameTime(path: string): number {
  const base = path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
  const m = /^(\d{1,15})(?:\.|$)/.exec(base.slice(EVENTS.length));
  return m === null ? Number.POSITIVE_INFINITY : Number(m[1]);
}

/** The order a run's event files are read in: by the time in the name, then by the name. */
function byTimeThenName(a: MetricLogCandidate, b: MetricLogCandidate): number {
  const ta = nameTime(a.path);
  const tb = nameTime(b.path);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}
const CHECKPOINT = /^checkpoint-(\d+)$/;
const TEXT_EXT = /\.(jsonl|ndjson|json|csv)$/i;

function isDir(p: string): boolean {
  try {
    return statSync(fsPath(p)).isDirectory();
  } catch (e) {
    throw fsError(FN, p, e);
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(fsPath(p)).isFile();
  } catch {
    return false;
  }
}

function readHead(path: string, maxBytes: number): Uint8Array {
  const file = openForRead(FN, path, maxBytes);
  try {
    return readRange(FN, path, file, 0, Math.min(file.size, DETECT_HEAD_BYTES));
  } finally {
    closeSync(file.fd);
  }
}

function noExt(rel: string): string {
  return rel.replace(TEXT_EXT, "");
}

/** The trainer_state.json of an output folder `dir`, if it has one (its own, else the newest checkpoint's). */
function trainerStateOf(
  dir: string,
  rel: string,
  entries: readonly Dirent[],
): MetricLogCandidate | null {
  const own = entries.some((e) => e.name === "trainer_state.json" && !e.isDirectory());
  const ckpts = entries
    .filter(
      (e) =>
        e.isDirectory() &&
        CHECKPOINT.test(e.name) &&
        isFile(join(dir, e.name, "trainer_state.json")),
    )
    .map((e) => ({ name: e.name, n: Number(CHECKPOINT.exec(e.name)?.[1]) }))
    .sort((a, b) => b.n - a.n);
  const reasons = ["an HF Trainer output folder"];
  if (own) {
    const note =
      ckpts.length === 0
        ? undefined
        : `the folder's own trainer_state.json (written when training ended), not the ${ckpts.length} checkpoint-N/trainer_state.json`;
    return {
      path: join(dir, "trainer_state.json"),
      run: rel,
      format: "trainer_state",
      reasons,
      ...(note === undefined ? {} : { note }),
    };
  }
  const newest = ckpts[0];
  if (newest === undefined) return null;
  const others = ckpts.length - 1;
  const note = `the newest checkpoint, ${newest.name}/trainer_state.json${
    others > 0
      ? ` (${others} older not read: ${ckpts
          .slice(1, 4)
          .map((c) => c.name)
          .join(", ")}${others > 3 ? ", …" : ""})`
      : ""
  }`;
  return {
    path: join(dir, newest.name, "trainer_state.json"),
    run: rel,
    format: "trainer_state",
    reasons,
    note,
  };
}

/**
 * The metric-log files under `path`: the path itself when it is a file (detected, or of the forced
 * format), else a walk of the folder (names sorted; at most {@link MAX_LOG_FOLDER_DEPTH} levels
 * and {@link MAX_LOG_FOLDER_ENTRIES} entries; symbolic links to folders not followed). In a folder,
 * `events.out.tfevents.*` files are listed as `tensorboard`; `*.jsonl`, `*.ndjson`, `*.json`,
 * `*.csv` files are listed when their head is detected as a format (a `.jsonl` file also by its
 * extension alone); an output folder's trainer_state.json is one entry for the folder (its own,
 * else the newest `checkpoint-N`'s), and `checkpoint-N` folders are not entered.
 *
 * @param path - A file or folder.
 * @param options - `maxBytes` bounds each head read; `format` keeps only that format.
 * @returns The files found, in walk order.
 * @throws {IoError} E_IO when the path is missing, a file is not a regular file or over
 *   options.maxBytes, a file given directly is of no known format, or the walk exceeds its bounds.
 * @derivation docs/diagnostics/logs.md#detection
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > files > golden: a folder of every fixture lists each run once, the newest checkpoint picked
 * @since 0.1.0
 */
export function findMetricLogFiles(
  path: string,
  options: MetricLogOptions = {},
): MetricLogCandidate[] {
  requirePath(FN, "path", path);
  const limits = resolveLimits(FN, options);
  const forced = checkFormat(options.format);
  if (!isDir(path)) {
    const forcedHit =
      forced === undefined ? null : { format: forced, reasons: ["given as options.format"] };
    const d = forcedHit ?? detectMetricLogFormat(path, readHead(path, limits.maxBytes));
    if (d.format === null)
      throw ioError(
        FN,
        path,
        "path",
        "a metric log (JSONL, trainer_state.json, a W&B export, a TensorBoard event file)",
        `a file of no known format (${d.reasons.join("; ")})`,
      );
    return [{ path, run: "", format: d.format, reasons: d.reasons }];
  }
  const out: MetricLogCandidate[] = [];
  const stack: { dir: string; rel: string; depth: number }[] = [{ dir: path, rel: "", depth: 0 }];
  let seen = 0;
  while (stack.length > 0) {
    const { dir, rel, depth } = stack.pop() as { dir: string; rel: string; depth: number };
    let entries: Dirent[];
    try {
      entries = readdirSync(fsPath(dir), { withFileTypes: true });
    } catch (e) {
      throw fsError(FN, dir, e);
    }
    seen += entries.length;
    if (seen > MAX_LOG_FOLDER_ENTRIES)
      throw ioError(
        FN,
        path,
        "path",
        `a folder tree of at most ${MAX_LOG_FOLDER_ENTRIES} entries`,
        "more",
      );
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const ts = trainerStateOf(dir, rel, entries);
    if (ts !== null && (forced === undefined || forced === "trainer_state")) out.push(ts);
    const subdirs: { dir: string; rel: string; depth: number }[] = [];
    for (const e of entries) {
      const p = join(dir, e.name);
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!CHECKPOINT.test(e.name) && depth < MAX_LOG_FOLDER_DEPTH)
          subdirs.push({ dir: p, rel: r, depth: depth + 1 });
        continue;
      }
      if (e.name === "trainer_state.json") continue;
      const tb = e.name.startsWith(EVENTS);
      if (!tb && !TEXT_EXT.test(e.name)) continue;
      if (!isFile(p)) continue;
      const d = tb
        ? detectMetricLogFormat(e.name, new Uint8Array(0))
        : detectMetricLogFormat(e.name, readHead(p, limits.maxBytes));
      const ok = d.format !== null && (!d.byExtension || d.format === "jsonl");
      if (!ok || (forced !== undefined && d.format !== forced)) continue;
      out.push({
        path: p,
        run: tb ? rel : noExt(r),
        format: d.format as MetricLogFormat,
        reasons: d.reasons,
      });
    }
    // Depth first, in name order: push the subfolders reversed.
    for (let k = subdirs.length - 1; k >= 0; k--)
      stack.push(subdirs[k] as (typeof subdirs)[number]);
  }
  return distinctRuns(oneTrainerRun(out), path);
}

/**
 * An HF Trainer output folder logged to TensorBoard holds its run twice: its trainer_state.json
 * and the TensorBoardCallback's event files in `runs/<name>/` below it (transformers 4's default
 * logging_dir). Those event files are left out, said in the trainer state's note, so that one run
 * is diagnosed once (`--format tensorboard` reads them instead).
 */
function oneTrainerRun(found: MetricLogCandidate[]): MetricLogCandidate[] {
  const states = found.filter((c) => c.format === "trainer_state");
  if (states.length === 0) return found;
  const left = new Map<string, Set<string>>();
  const ownerOf = (c: MetricLogCandidate): string | undefined => {
    if (c.format !== "tensorboard") return undefined;
    return states.find((s) => {
      const base = s.run === "" ? "runs/" : `${s.run}/runs/`;
      return c.run.startsWith(base) && !c.run.slice(base.length).includes("/");
    })?.run;
  };
  const kept = found.filter((c) => {
    const owner = ownerOf(c);
    if (owner === undefined) return true;
    left.set(owner, (left.get(owner) ?? new Set()).add(c.run));
    return false;
  });
  return kept.map((c) => {
    const runs = c.format === "trainer_state" ? left.get(c.run) : undefined;
    if (runs === undefined) return c;
    const said = `the same run's TensorBoard event files in ${[...runs].join(", ")} (the HF Trainer's TensorBoardCallback) are not read again (--format tensorboard reads them instead)`;
    return { ...c, note: c.note === undefined ? said : `${c.note}; ${said}` };
  });
}

/**
 * Text logs of one stem (`history.csv`, `history.json`) would be runs of one name: those keep
 * their extension (`history.csv`), so that every run is named once and `--run` can pick it.
 */
function distinctRuns(found: MetricLogCandidate[], root: string): MetricLogCandidate[] {
  const count = new Map<string, number>();
  for (const c of found)
    if (c.format !== "tensorboard") count.set(c.run, (count.get(c.run) ?? 0) + 1);
  return found.map((c) => {
    if (c.format === "tensorboard" || (count.get(c.run) ?? 0) < 2 || c.format === "trainer_state")
      return c;
    const rel = relative(root, c.path).split(sep).join("/");
    return { ...c, run: rel };
  });
}

function checkFormat(format: unknown): MetricLogFormat | undefined {
  if (format === undefined) return undefined;
  if (typeof format !== "string" || !(METRIC_LOG_FORMATS as readonly string[]).includes(format))
    throw fail(
      ConfigError,
      FN,
      "options.format",
      `one of ${METRIC_LOG_FORMATS.join(", ")}`,
      fmtValue(format),
    );
  return format as MetricLogFormat;
}

/** Read one text metric-log file (JSONL, trainer_state.json, a W&B export) into its runs, named as the candidate's. @internal */
export function readTextCandidate(candidate: MetricLogCandidate, limits: Limits): MetricLog[] {
  const { path, format, run } = candidate;
  const bytes = readFileBytes(FN, path, limits.maxBytes);
  const logs =
    format === "jsonl"
      ? [readJsonlAs(FN, bytes, path, limits)]
      : format === "trainer_state"
        ? [readTrainerStateAs(FN, bytes, path, limits)]
        : readWandbAs(FN, bytes, path, limits);
  return logs.map((log) => ({
    ...log,
    run: run === "" ? log.run : log.run === "" ? run : `${run}/${log.run}`,
    files:
      candidate.note === undefined
        ? log.files
        : log.files.map((f) => ({
            ...f,
            note:
              f.note === undefined ? (candidate.note as string) : `${candidate.note}; ${f.note}`,
          })),
  }));
}

/** Read one run's TensorBoard event files (already in reading order) into one log. */
function readEventRun(
  run: string,
  files: readonly MetricLogCandidate[],
  limits: Limits,
): MetricLog {
  const builder = new SeriesBuilder(FN, files[0]?.path ?? "", limits, run);
  const problems = new Problems();
  const plugins = new Map<string, string>();
  const entries = files.map((c) => {
    // Kind and size checked before the file is opened and again on the open descriptor.
    const bytes = readFileBytes(FN, c.path, limits.maxBytes);
    return scanEventFile(FN, bytes, c.path, builder, problems, plugins).file;
  });
  return builder.finish("tensorboard", run, entries, problems);
}

/**
 * Read every metric log under `path` (docs/diagnostics/logs.md): a file, or a folder walked by
 * {@link findMetricLogFiles}. A TensorBoard run is the folder holding its event files: they are
 * read in the order of the timestamp in their names (`events.out.tfevents.<time>.<host>…`), then
 * of the names, and their series merged (where two files, a restarted run, or two records log the
 * same step of a tag, the value read last wins and is counted in `rewrites`). A text file is its
 * own run (a W&B chart export with several runs: `<file>/<W&B run name>`).
 *
 * @param path - A file or folder.
 * @param options - Limits (`maxBytes` per file, default 1 GiB, refused before the file is read;
 *   `maxSeries` per run, 100,000; `maxPoints` distinct steps per series, 10,000,000) and
 *   `format` to force one format.
 * @returns The runs: TensorBoard runs in the order their folders are walked, each where its first
 *   file was found; text runs in walk order.
 * @throws {IoError} E_IO when the path holds no metric log, a file breaks its format's rules, or a
 *   limit is exceeded (the message names the file and the limit).
 * @throws {ConfigError} E_CONFIG when an option is invalid.
 * @derivation docs/diagnostics/logs.md
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > files > golden: a folder of every fixture lists each run once, the newest checkpoint picked
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > limits > rejects: a file over maxBytes is refused before it is read
 * @enforcedBy test/io/metricLogs/tensorboard.test.ts > readMetricLogs > golden: the recorded log folder reads as five runs, the restarted run's rewrites counted
 * @since 0.1.0
 */
export function readMetricLogs(path: string, options: MetricLogOptions = {}): MetricLog[] {
  const limits = resolveLimits(FN, options);
  const found = findMetricLogFiles(path, options);
  if (found.length === 0)
    throw ioError(
      FN,
      path,
      "path",
      "a folder holding metric logs (*.jsonl, trainer_state.json or checkpoint-N/trainer_state.json, W&B *.csv or *.json exports, TensorBoard event files)",
      "none found",
    );
  const eventRuns = new Map<string, MetricLogCandidate[]>();
  for (const c of found)
    if (c.format === "tensorboard") {
      const files = eventRuns.get(c.run);
      if (files === undefined) eventRuns.set(c.run, [c]);
      else files.push(c);
    }
  const out: MetricLog[] = [];
  for (const c of found) {
    if (c.format !== "tensorboard") out.push(...readTextCandidate(c, limits));
    else {
      const files = eventRuns.get(c.run);
      if (files === undefined) continue; // read where its first file was found
      eventRuns.delete(c.run);
      out.push(readEventRun(c.run, [...files].sort(byTimeThenName), limits));
    }
  }
  return out;
}
