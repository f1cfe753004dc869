/**
 * The TensorBoard log-folder reader (docs/diagnostics/logs.md#tensorboard-event-files): given an
 * event file or a folder, it finds the `events.out.tfevents.*` files (recursively), groups them
 * into runs (each folder holding event files is a run, named by its path relative to the folder
 * given, `""` for the folder itself), reads each run's files in order (the timestamp in the file
 * name, then the name) with the pure parser of ./tensorboard.ts, and merges their series: the
 * last value read at a step wins, counted in `rewrites`. Every file's kind and size are checked
 * before it is opened: a file over `maxBytes` is never read into memory.
 */
import { lstatSync, type Stats, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { requirePath } from "../../core/validate.js";
import { fsPath, readdirNames } from "../../platform/fsPath.js";
import { fileKind, fsError, ioError, readFileBytes } from "../_internal/files.js";
import { RunBuilder, resolveLimits } from "./mergeSeries.js";
import { scanEventFile } from "./tensorboard.js";
import type { MetricLog, MetricLogFile, MetricLogLimits } from "./types.js";

/** Folders below the one given that are searched for event files (deeper ones are an IoError). */
export const MAX_LOG_FOLDER_DEPTH = 64;

/** Folder entries looked at in one search (more is an IoError: not a log folder). */
export const MAX_LOG_FOLDER_ENTRIES = 1_000_000;

const PREFIX = "events.out.tfevents.";

/** Whether a file name is a TensorBoard event file's (`events.out.tfevents.<time>.<host>…`). */
export function isEventFileName(name: string): boolean {
  return name.startsWith(PREFIX);
}

/** The timestamp a writer put in the file name (`events.out.tfevents.1700000000.host`), or ∞. */
function nameTime(name: string): number {
  const m = /^(\d{1,15})(?:\.|$)/.exec(name.slice(PREFIX.length));
  return m === null ? Number.POSITIVE_INFINITY : Number(m[1]);
}

/** Order a run's files are read in: by the time in the name, then by the name. */
function byTimeThenName(a: string, b: string): number {
  const ta = nameTime(a);
  const tb = nameTime(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The event files under `root`, by run name (its folder relative to `root`, "/"-separated). */
function findRuns(fn: string, root: string): Map<string, string[]> {
  const runs = new Map<string, string[]>();
  let seen = 0;
  // Depth-first with an explicit stack (no recursion); symbolic links to folders are not
  // followed (a link loop cannot make the search endless), links to files are read.
  const stack: { dir: string; depth: number }[] = [{ dir: root, depth: 0 }];
  while (stack.length > 0) {
    const { dir, depth } = stack.pop() as { dir: string; depth: number };
    let names: string[];
    try {
      names = readdirNames(dir);
    } catch (e) {
      throw fsError(fn, dir, e);
    }
    seen += names.length;
    if (seen > MAX_LOG_FOLDER_ENTRIES) {
      throw ioError(
        fn,
        root,
        "path",
        `a log folder of at most ${MAX_LOG_FOLDER_ENTRIES} entries in all`,
        `more (counted to ${seen} at ${dir})`,
      );
    }
    const files: string[] = [];
    for (const name of names) {
      const p = join(dir, name);
      let st: Stats;
      try {
        st = lstatSync(fsPath(p));
      } catch (e) {
        throw fsError(fn, p, e);
      }
      if (st.isDirectory()) {
        if (depth >= MAX_LOG_FOLDER_DEPTH) {
          throw ioError(
            fn,
            p,
            "path",
            `a folder at most ${MAX_LOG_FOLDER_DEPTH} levels below the log folder`,
            `a folder ${depth + 1} levels below it`,
          );
        }
        stack.push({ dir: p, depth: depth + 1 });
      } else if (isEventFileName(name)) files.push(name);
    }
    if (files.length > 0) {
      const run = relative(root, dir).split(sep).join("/");
      runs.set(
        run,
        files.sort(byTimeThenName).map((f) => join(dir, f)),
      );
    }
  }
  return runs;
}

/** Read one run's files, in order, into one log. */
function readRun(
  fn: string,
  run: string,
  files: readonly string[],
  limits: ReturnType<typeof resolveLimits>,
): MetricLog {
  const builder = new RunBuilder(fn, run, limits);
  const plugins = new Map<string, string>();
  const entries: MetricLogFile[] = [];
  for (const path of files) {
    // Kind and size checked before the file is opened and again on the open descriptor.
    const bytes = readFileBytes(fn, path, limits.maxBytes);
    entries.push(scanEventFile(fn, bytes, path, builder, plugins).file);
  }
  return builder.finish("tensorboard", entries);
}

/**
 * Read the TensorBoard logs at `path`: one event file (a one-run log, run `""`, whatever its
 * name), or a folder searched recursively for `events.out.tfevents.*` files, each folder holding
 * some a run named by its path relative to `path` (`""` for `path` itself, `a/b` below it).
 *
 * Format: each file as {@link parseTensorboardEvents}; a run's files are read in the order of
 * the timestamp in their names (`events.out.tfevents.<time>.<host>…`), then of the names, and
 * their series merged: where two files (a restarted run) or two records log the same step of a
 * tag, the value read last wins and is counted in `rewrites`. Symbolic links to folders are not
 * followed; links to files are read.
 *
 * @param path - An event file or a log folder.
 * @param options - `maxBytes` per file (default 1 GiB; a larger file is refused before it is
 *   read), `maxSeries` per run (100,000), `maxPoints` per series (10,000,000).
 * @returns One log per run (format `tensorboard`), sorted by run name; `[]` for a folder without
 *   event files.
 * @throws {IoError} E_IO when `path` is missing or unreadable, a file is not a regular file, is
 *   over `maxBytes`, is not a TFRecord file, a run has more series or a series more points than
 *   the limits, or the folder is deeper than 64 levels or holds more than 1,000,000 entries.
 * @throws {ConfigError} E_CONFIG when a limit is not a positive integer.
 * @derivation docs/diagnostics/logs.md#tensorboard-event-files
 * @enforcedBy test/io/metricLogs/tensorboard.test.ts > readTensorboardLogs > golden: the recorded log folder reads as five runs, the restarted run's rewrites counted
 * @enforcedBy test/io/metricLogs/tensorboard.test.ts > readTensorboardLogs > rejects: a file over maxBytes before reading it, too many series, too many points
 * @since 0.1.0
 */
export function readTensorboardLogs(path: string, options: MetricLogLimits = {}): MetricLog[] {
  const fn = "readTensorboardLogs";
  requirePath(fn, "path", path);
  const limits = resolveLimits(fn, options);
  let st: Stats;
  try {
    st = statSync(fsPath(path));
  } catch (e) {
    throw fsError(fn, path, e);
  }
  if (st.isFile()) return [readRun(fn, "", [path], limits)];
  if (!st.isDirectory())
    throw ioError(fn, path, "path", "an event file or a log folder", fileKind(st));
  const runs = findRuns(fn, path);
  const names = [...runs.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return names.map((run) => readRun(fn, run, runs.get(run) as string[], limits));
}
