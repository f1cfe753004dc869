/**
 * The batch input of `loss`, `which` and `diagnose` (docs/cli.md#batch-input): `--batch FILE|DIR|-`
 * (a file of any registered format, a folder of tensor files, or standard input sniffed from its
 * magic bytes) and how to read its names: `--names verl|trl|openrlhf|polgrad|FILE.json`,
 * `--name ours=theirs[,…]`, `--strict`, `--response-slice last|START:END`. One notice line on
 * stderr says which names were read and which tensors were set aside, and one warning line per
 * log-probability tensor with values above 0.
 */
import { statSync } from "node:fs";
import { fmtValue, safeText } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { fail, UsageError } from "../errors.js";
import type { BatchSource, BatchWarning } from "../io/batch.js";
import { BATCH_TENSOR_NAMES, type BatchTensorName } from "../io/batchNames.js";
import type { CustomNameMap, NameOptions, NameResolution, ResponseSlice } from "../io/names.js";
import type { TensorSet } from "../io/tensorTypes.js";
import { fsPath, readdirNames } from "../platform/fsPath.js";
import type { CommandIO, OptionSpec, OptionValues } from "./command.js";

/** The name options every batch-reading command takes (merged into its option table). */
export const NAME_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  names: {
    type: "string",
    role: "input",
    argument: "MAP",
    description:
      "read tensor names as verl, trl, openrlhf or polgrad, or by a FILE.json of polgrad name → tensor name",
    default: "detected from the names",
  },
  name: {
    type: "string",
    argument: "OURS=THEIRS[,...]",
    description: "one-off renames: read the file's tensor THEIRS as polgrad's OURS",
  },
  strict: {
    type: "boolean",
    description:
      "make tensors the batch does not use an error instead of a notice, and log-probabilities above 0 an error instead of a warning",
  },
  "response-slice": {
    type: "string",
    argument: "last|START:END",
    description:
      "cut the response columns out of a mask over prompt + response (last: the last T columns, verl's layout)",
  },
};

/** Largest batch read from standard input (the safetensors file limit). */
export const MAX_STDIN_BYTES: number = 4 * 2 ** 30;

const SLICE = /^(\d{1,9}):(\d{1,9})$/;

function usage(fn: string, flag: string, rule: string, got: unknown): UsageError {
  return fail(UsageError, fn, flag, rule, fmtValue(got));
}

/**
 * Parse the name options of a command line.
 *
 * @param fn - The command (`polgrad loss`) named in errors.
 * @param values - The parsed options.
 * @returns The NameOptions for toBatch / diagnoseRun.
 * @throws {UsageError} E_USAGE for a malformed `--name` (OURS not a polgrad batch name included)
 *   or `--response-slice`.
 * @throws {IoError} E_IO for an unreadable or invalid `--names FILE.json` (a key that is not a
 *   polgrad batch name included), naming that file.
 */
export async function nameOptionsOf(fn: string, values: OptionValues): Promise<NameOptions> {
  const out: { -readonly [K in keyof NameOptions]: NameOptions[K] } = {};
  const names = values.names;
  if (typeof names === "string") {
    const { NAME_MAP_IDS } = await import("../io/names.js");
    if ((NAME_MAP_IDS as readonly string[]).includes(names))
      out.names = names as NonNullable<NameOptions["names"]>;
    else if (/\.json$/i.test(names)) {
      const { readJsonFile } = await import("../io/readJsonFile.js");
      const { checkNameMap } = await import("../io/names.js");
      const { ioError } = await import("../io/_internal/ioError.js");
      const map = readJsonFile(names, fn, { maxBytes: 2 ** 20 });
      // Checked here, so that a bad key is reported in the map's file, not the batch's.
      checkNameMap((arg, rule, got) => ioError(fn, names, arg, rule, got), "--names", map);
      out.names = map as CustomNameMap;
    } else {
      throw usage(
        fn,
        "--names",
        `one of ${NAME_MAP_IDS.join(", ")} or a FILE.json`,
        `${names}${didYouMean(closestNames(names, NAME_MAP_IDS))}`,
      );
    }
  }
  if (typeof values.name === "string") {
    // No prototype: `__proto__=x` is a key like any other (on {} the assignment set nothing).
    const rename: Partial<Record<BatchTensorName, string>> = Object.create(null);
    for (const item of values.name.split(",")) {
      const eq = item.indexOf("=");
      if (eq <= 0 || eq === item.length - 1) {
        throw usage(
          fn,
          "--name",
          "OURS=THEIRS[,OURS=THEIRS...] (polgrad name = tensor name)",
          values.name,
        );
      }
      const ours = item.slice(0, eq).trim() as BatchTensorName;
      if (!(BATCH_TENSOR_NAMES as readonly string[]).includes(ours))
        throw fail(
          UsageError,
          fn,
          "--name",
          `OURS=THEIRS with OURS a polgrad batch name (${BATCH_TENSOR_NAMES.join(", ")})`,
          `${fmtValue(ours)}${didYouMean(closestNames(ours, BATCH_TENSOR_NAMES))}`,
        );
      if (Object.hasOwn(rename, ours))
        throw usage(fn, "--name", "one THEIRS per OURS", values.name);
      rename[ours] = item.slice(eq + 1).trim();
    }
    out.rename = rename;
  }
  if (values.strict === true) out.strict = true;
  const slice = values["response-slice"];
  if (typeof slice === "string") {
    const m = SLICE.exec(slice);
    let parsed: ResponseSlice | undefined;
    if (slice === "last") parsed = "last";
    else if (m !== null && Number(m[2]) > Number(m[1]))
      parsed = { start: Number(m[1]), end: Number(m[2]) };
    if (parsed === undefined)
      throw usage(fn, "--response-slice", "last or START:END with START < END", slice);
    out.responseSlice = parsed;
  }
  return out;
}

/**
 * Read the tensors of `--batch`: a path (file or folder), or `-` for standard input.
 *
 * @param fn - The command named in errors.
 * @param path - The option's value.
 * @param io - The command's streams (standard input for `-`).
 * @returns The tensors, not yet validated as a batch.
 * @throws {IoError} E_IO for any read error; {@link UsageError} when `-` has no stdin.
 */
export async function readBatchTensors(
  fn: string,
  path: string,
  io: CommandIO,
): Promise<TensorSet> {
  if (path === "-") {
    if (io.readStdin === undefined)
      throw usage(fn, "--batch", "a file (this caller has no stdin)", "-");
    const { readTensorsFromBytes } = await import("../io/readTensors.js");
    return readTensorsFromBytes(io.readStdin(MAX_STDIN_BYTES), "<stdin>");
  }
  const { readTensors } = await import("../io/readTensors.js");
  return readTensors(path);
}

/**
 * The one stderr notice of how a batch's names were read, or "" when they are polgrad's own and
 * every tensor was used.
 *
 * @param fn - The command, the notice's prefix.
 * @param names - The resolution (batch.source.names).
 * @returns One line ending with a newline, or "".
 */
export function nameNotice(fn: string, names: NameResolution): string {
  const parts: string[] = [];
  const renamed = Object.entries(names.renamed);
  if (names.map !== "polgrad" || renamed.length > 0) {
    const how = names.detected ? "detected" : "given";
    const pairs = renamed.map(([ours, theirs]) => `${safeText(theirs, 60)} → ${ours}`).join(", ");
    parts.push(`read ${names.map} names (${how})${pairs === "" ? "" : `: ${pairs}`}`);
  }
  return noticeLine(fn, parts, names.notes, names.ignored);
}

/**
 * The one notice line: `fn: head; note; …; ignored N tensor(s) …`, or "" when there is nothing
 * to say (shared by a batch's and a run's notice). @internal
 */
export function noticeLine(
  fn: string,
  head: readonly string[],
  notes: readonly string[],
  ignored: readonly string[],
): string {
  const parts = [...head, ...notes];
  if (ignored.length > 0) {
    const list = ignored.slice(0, 20).map((n) => safeText(n, 60));
    const more = ignored.length > 20 ? `, and ${ignored.length - 20} more` : "";
    parts.push(
      `ignored ${ignored.length} tensor(s) the batch does not use: ${list.join(", ")}${more} (--strict makes this an error)`,
    );
  }
  return parts.length === 0 ? "" : `${fn}: ${parts.join("; ")}\n`;
}

/**
 * The stderr lines of a batch's warnings (a log-probability above 0: docs/io.md#warnings), one
 * per tensor, or "".
 *
 * @param fn - The command, each line's prefix.
 * @param warnings - The batch's warnings (batch.source.warnings).
 * @returns Lines ending with a newline, or "".
 */
export function warningLines(fn: string, warnings: readonly BatchWarning[]): string {
  return warnings
    .map((w) => `${fn}: warning: ${safeText(w.message, 400)} (--strict makes this an error)\n`)
    .join("");
}

/** Write a batch's notice and warning lines to the command's notice stream. @internal */
export function sayBatchSource(fn: string, io: CommandIO, source: BatchSource): void {
  const text = nameNotice(fn, source.names) + warningLines(fn, source.warnings);
  if (text !== "") (io.notice ?? io.stderr)(text);
}

/** The `source` of a `--json` document: where the batch came from and what it warned of. */
export interface SourceDocument {
  readonly path: string;
  readonly format: string;
  readonly warnings: readonly BatchWarning[];
}

/**
 * Where a batch came from, as the `source` of a `--json` document: path, format and warnings.
 *
 * @param source - The batch's source.
 * @returns `{path, format, warnings}` (wire names snake_case).
 */
export function sourceDocument(
  source: Pick<BatchSource, "path" | "format" | "warnings">,
): SourceDocument {
  return { path: source.path, format: source.format, warnings: source.warnings };
}

/**
 * `--batch` read and validated as a full batch under the command's name options, with the notice
 * written to stderr.
 *
 * @param fn - The command named in errors and the notice.
 * @param values - The parsed options (`batch`, `names`, `name`, `strict`, `response-slice`).
 * @param io - The command's streams.
 * @param require - Tensors needed beyond the four of every batch.
 * @returns The batch.
 * @throws {UsageError} E_USAGE without `--batch`, or for malformed name options.
 * @throws {IoError} E_IO for any read, name or validation error.
 */
export async function readCliBatch(
  fn: string,
  values: OptionValues,
  io: CommandIO,
  require: readonly BatchTensorName[] = [],
): Promise<import("../io/batch.js").Batch> {
  const path = values.batch;
  if (typeof path !== "string") {
    throw new UsageError(
      fn,
      "--batch",
      `${fn}: --batch must be a batch file, a folder of tensor files or - (stdin); got nothing`,
    );
  }
  const options = await nameOptionsOf(fn, values);
  const { toBatch } = await import("../io/batch.js");
  const batch = toBatch(await readBatchTensors(fn, path, io), { ...options, require });
  sayBatchSource(fn, io, batch.source);
  return batch;
}

/**
 * A folder is a run when it holds step entries (step_N, global_step_N/, …) or no tensor file of
 * its own; a folder of tensor files (one `.npy` per tensor) is one batch.
 */
export async function isRunFolder(path: string): Promise<boolean> {
  let isDir = false;
  try {
    isDir = statSync(fsPath(path)).isDirectory();
  } catch {
    return false; // the batch reader reports the missing path with its own message
  }
  if (!isDir) return false;
  // Names only (no stat per entry): the run's own scan follows once, in diagnoseRun.
  const { stepOfName } = await import("../io/runFolder.js");
  const { tensorFilesOf } = await import("../io/readTensors.js");
  const fn = "polgrad diagnose";
  let names: string[];
  try {
    names = readdirNames(path);
  } catch {
    return true; // unreadable: diagnoseRun reports it
  }
  if (names.some((n) => stepOfName(n, false) !== null || stepOfName(n, true) !== null)) return true;
  return tensorFilesOf(fn, path).length === 0;
}
