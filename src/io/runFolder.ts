/**
 * Run folders as trainers lay them out (docs/io.md#run-folders): per-step batch files or folders
 * named `step_N`, `step-N`, `stepN`, `global_step_N`, `iter_N`, `iteration_N` (any zero padding,
 * an optional `<prefix>_` in front), in any format of the reader registry. Step numbers come from
 * the names; the dump stride is the most common distance between consecutive steps, so a run
 * dumped every k steps has no gaps.
 */
import { type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { fmtValue, safeText } from "../core/message.js";
import { requirePath, requireString } from "../core/validate.js";
import { fsPath, readdirNames } from "../platform/fsPath.js";
import { fileKind, fsError } from "./_internal/files.js";
import { ioError } from "./_internal/ioError.js";
import { extensionOf, readerByExtension } from "./readers.js";
import { tensorFilesOf } from "./readTensors.js";

/** One step of a run: its number and the file or folder holding its tensors. */
export interface RunStepEntry {
  readonly step: number;
  /** The entry's name in the run folder (`step_000120.pt`, `global_step_120`). */
  readonly name: string;
  /** The path to read (readTensors reads a file or a folder of tensor files). */
  readonly path: string;
  readonly kind: "file" | "folder";
  /**
   * Why the entry cannot be read, when the scan already knows (docs/diagnostics/run.md#run-folder-rules):
   * a directory named like a file (`step_2.pt/`), a folder-style name that cannot be opened (a
   * symlink loop, a dangling link), a file without a tensor extension, a step folder without
   * tensor files or that cannot be listed. Absent when the entry is to be read.
   */
  readonly unreadable?: string;
}

/** An entry of the run folder that is not diagnosed, or a gap in the dump sequence. */
export interface RunProblem {
  readonly file: string;
  readonly step: number | null;
  readonly message: string;
}

/** What a run folder holds. */
export interface RunScan {
  readonly dir: string;
  /** The steps, in step order. */
  readonly steps: readonly RunStepEntry[];
  /** Duplicates, empty step folders, unusable step numbers and gaps, by name. */
  readonly problems: readonly RunProblem[];
  /** The gaps of {@link problems} alone (missing dumps, irregular intervals). */
  readonly gaps: readonly RunProblem[];
  /** The dump stride: the most common distance between consecutive steps (null below 2 steps). */
  readonly stride: number | null;
  /** Entries whose names are no step (at most 20, for messages), and how many there were. */
  readonly others: { readonly names: readonly string[]; readonly count: number };
  /**
   * Every entry whose name is a step, readable or not ({@link RunStepEntry.unreadable}), in step
   * order and, within a step, in name order: the candidates diagnoseRun reads a step from
   * (docs/diagnostics/run.md#run-folder-rules).
   */
  readonly entries: readonly RunStepEntry[];
}

/** A step name: optional `<prefix>_` or `<prefix>-`, a step word, an optional separator, digits. */
const STEP_NAME =
  /^(?:.*[_-])?(?:global_step|global-step|step|steps|iter|iteration|it)[_-]?(\d+)$/i;

/** Steps beyond this are no step numbers (they lose integer exactness long before 2^53). */
const MAX_STEP_DIGITS = 15;

/** The step number a file or folder name carries, or null. @internal */
export function stepOfName(name: string, isFolder: boolean): number | null | "too long" {
  let stem = name;
  if (!isFolder) {
    if (readerByExtension(name) === undefined) return null;
    stem = name.slice(0, name.length - extensionOf(name).length);
  }
  const m = STEP_NAME.exec(stem);
  if (m === null) return null;
  const digits = m[1] as string;
  const trimmed = digits.replace(/^0+(?=\d)/, "");
  if (trimmed.length > MAX_STEP_DIGITS) return "too long";
  return Number(trimmed);
}

/** The most common consecutive difference (the smallest of equally common ones). */
function strideOf(steps: readonly number[]): number | null {
  if (steps.length < 2) return null;
  const counts = new Map<number, number>();
  for (let i = 1; i < steps.length; i++) {
    const d = (steps[i] as number) - (steps[i - 1] as number);
    counts.set(d, (counts.get(d) ?? 0) + 1);
  }
  let best = 0;
  let bestCount = 0;
  for (const [d, c] of counts)
    if (c > bestCount || (c === bestCount && d < best)) [best, bestCount] = [d, c];
  return best;
}

/**
 * List the steps of a run folder.
 *
 * Format: entries named `[prefix_]{step|global_step|iter|iteration|it}[_|-]N` — files with a
 * registered extension (`.safetensors`, `.json`, `.npy`, `.npz`, `.pt`, `.pth`) or folders holding
 * at least one such file; N any zero-padded decimal. The same step twice is a problem (the first
 * by name is kept in `steps`; `entries` keeps every candidate); an entry named as a step that
 * cannot be read as what its name says (a step folder without tensor files or that cannot be
 * listed, a directory named like a file, a folder-style name that cannot be opened: a symlink
 * loop, a dangling link; a file without a tensor extension) is a problem with its reason and
 * stays in `entries` with `unreadable` set; with stride s (the most common distance between
 * consecutive steps of `steps`), a distance d > s is reported as (d/s − 1) missing dumps when s
 * divides d, else as an irregular interval.
 *
 * @param dir - The run folder.
 * @param fn - The public function named in errors. @defaultValue "scanRunFolder"
 * @returns The steps in step order, the problems, the stride, and the names of other entries.
 * @throws {IoError} E_IO when `dir` is not a readable folder.
 * @derivation docs/io.md#run-folders
 * @enforcedBy test/io/runFolder.test.ts > scanRunFolder > golden: every layout trainers write is read with its step numbers
 * @enforcedBy test/io/runFolder.test.ts > scanRunFolder > golden: a run dumped every 10 steps has stride 10 and no gaps
 * @enforcedBy test/io/runFolder.test.ts > scanRunFolder > rejects: duplicates, empty step folders and missing dumps are named
 * @enforcedBy test/diagnostics/runFolders.test.ts > run folder rules > regression: a step that exists but cannot be read is listed with its reason, not as a missing dump
 * @since 0.1.0
 */
export function scanRunFolder(dir: string, fn = "scanRunFolder"): RunScan {
  requireString("scanRunFolder", "fn", fn);
  requirePath(fn, "dir", dir);
  return scanRunFolderAs(dir, fn, fn);
}

/** The registered formats' extensions, for messages. */
const TENSOR_EXTS = ".safetensors, .json, .npy, .npz, .pt, .pth";

/**
 * The step a name claims and what it claims to be: a file when it ends in a registered extension
 * (`step_2.pt`), else a folder (`global_step_2`); null when the name is no step. @internal
 */
export function stepClaimOf(
  name: string,
): { readonly step: number | "too long"; readonly ext: string | null } | null {
  const ext = readerByExtension(name) === undefined ? null : extensionOf(name);
  const step = stepOfName(name, ext === null);
  return step === null ? null : { step, ext };
}

/**
 * {@link scanRunFolder} naming `fn` in the folder's own error and `stepFn` in the entries' reasons
 * (diagnoseRun's, whichever entry point scans, so that shards and one pass read the same). @internal
 */
export function scanRunFolderAs(dir: string, fn: string, stepFn: string): RunScan {
  let names: string[];
  try {
    names = readdirNames(dir);
  } catch (e) {
    throw fsError(fn, String(dir), e);
  }
  const found: RunStepEntry[] = [];
  const all: RunStepEntry[] = [];
  const problems: RunProblem[] = [];
  const others: string[] = [];
  let otherCount = 0;
  for (const name of names.sort()) {
    if (name.startsWith(".")) continue;
    const claim = stepClaimOf(name);
    if (claim === null) {
      otherCount++;
      if (others.length < 20) others.push(name);
      continue;
    }
    const { step, ext } = claim;
    if (step === "too long") {
      problems.push({
        file: name,
        step: null,
        message: `step number of ${fmtValue(name)} has more than ${MAX_STEP_DIGITS} digits`,
      });
      continue;
    }
    const path = join(dir, name);
    let st: Stats | null = null;
    let statError: unknown = null;
    try {
      st = statSync(fsPath(path));
    } catch (e) {
      statError = e;
    }
    const entry = (kind: "file" | "folder", unreadable?: string): void => {
      const shown = kind === "folder" && st !== null ? `${name}/` : name;
      const e: RunStepEntry =
        unreadable === undefined
          ? { step, name: shown, path, kind }
          : { step, name: shown, path, kind, unreadable };
      all.push(e);
      if (unreadable === undefined) found.push(e);
      else problems.push({ file: shown, step, message: unreadable });
    };
    if (ext !== null) {
      // A file by its name: a directory there is a step that cannot be read. Any other failure
      // (a dangling link, a symlink loop, a FIFO) is the reader's to name.
      if (st?.isDirectory() === true)
        entry("folder", ioError(stepFn, path, "path", `a ${ext} file`, "a directory").message);
      else entry("file");
    } else if (st === null) {
      // A folder by its name that cannot be opened (a symlink loop, a dangling link): a step
      // that exists and cannot be read, not a missing dump.
      const code = String((statError as { code?: unknown }).code ?? "error");
      const detail = statError instanceof Error ? statError.message : String(statError);
      const rule = "a step folder (or a tensor file) that can be opened";
      entry("folder", ioError(stepFn, path, "path", rule, `${code} (${detail})`).message);
    } else if (!st.isDirectory()) {
      const rule = `a step folder, or a file named with a tensor extension (${TENSOR_EXTS})`;
      entry("file", ioError(stepFn, path, "path", rule, fileKind(st)).message);
    } else {
      let files: string[] | null = null;
      let listError: unknown = null;
      try {
        files = tensorFilesOf(stepFn, path);
      } catch (e) {
        listError = e;
      }
      if (files === null)
        entry("folder", listError instanceof Error ? listError.message : String(listError));
      else if (files.length === 0)
        entry("folder", `step folder holds no tensor file (${TENSOR_EXTS})`);
      else entry("folder");
    }
  }
  const byStepThenName = (a: RunStepEntry, b: RunStepEntry): number =>
    a.step - b.step || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  found.sort(byStepThenName);
  all.sort(byStepThenName);
  const steps: RunStepEntry[] = [];
  for (const e of found) {
    const prev = steps[steps.length - 1];
    if (prev !== undefined && prev.step === e.step) {
      problems.push({
        file: e.name,
        step: e.step,
        message: `step ${e.step} is also in ${safeText(prev.name)}; ${safeText(e.name)} is ignored`,
      });
      continue;
    }
    steps.push(e);
  }
  const { stride, gaps } = dumpGaps(steps.map((s) => s.step));
  problems.push(...gaps);
  return {
    dir,
    steps,
    problems,
    gaps,
    stride,
    others: { names: others, count: otherCount },
    entries: all,
  };
}

/**
 * The dump stride of a run's step numbers and the gaps in it.
 *
 * Formula: stride s = the most common distance between consecutive steps (the smallest of equally
 * common ones); a distance d > s is a problem: (d/s − 1) missing dumps when s divides d, else an
 * irregular interval.
 *
 * @param steps - The step numbers, increasing.
 * @returns The stride (null below 2 steps) and one problem per gap.
 * @derivation docs/io.md#run-folders
 * @enforcedBy test/io/runFolder.test.ts > scanRunFolder > rejects: duplicates, empty step folders and missing dumps are named
 * @since 0.1.0
 */
export function dumpGaps(steps: readonly number[]): {
  readonly stride: number | null;
  readonly gaps: readonly RunProblem[];
} {
  const stride = strideOf(steps);
  const gaps: RunProblem[] = [];
  if (stride !== null) {
    for (let i = 1; i < steps.length; i++) {
      const a = steps[i - 1] as number;
      const b = steps[i] as number;
      const d = b - a;
      if (d <= stride) continue;
      const every = stride === 1 ? "every step" : `every ${stride} steps`;
      gaps.push(
        d % stride === 0
          ? {
              file: `steps ${a}..${b}`,
              step: a + stride,
              message: `${d / stride - 1} dump(s) missing between steps ${a} and ${b} (the run dumps ${every})`,
            }
          : {
              file: `steps ${a}..${b}`,
              step: a,
              message: `steps ${a} and ${b} are ${d} apart; the run dumps ${every}`,
            },
      );
    }
  }
  return { stride, gaps };
}
