/**
 * Read every named tensor of a batch file through the reader registry (./readers.ts): by the
 * extension, else by sniffing the first bytes. The kind and size are checked before the file is
 * opened; safetensors files are read header first, other formats whole and parsed by their pure
 * reader.
 */
import { closeSync, statSync } from "node:fs";
import { join } from "node:path";
import { requirePath } from "../core/validate.js";
import { fsPath, readdirNames } from "../platform/fsPath.js";
import {
  checkFileSize,
  checkMaxBytes,
  fsError,
  ioError,
  openForRead,
  type ReadScratch,
  readRange,
} from "./_internal/files.js";
import { checkMaxElements } from "./_internal/limits.js";
import { readerByExtension, readerFor, SNIFF_BYTES } from "./readers.js";
import { readOpenSafetensors } from "./readSafetensors.js";
import type { NamedTensor, ReadOptions, TensorSet } from "./tensorTypes.js";
import { DEFAULT_MAX_SAFETENSORS_BYTES } from "./tensorTypes.js";

/**
 * Read all named tensors of a batch file (`.safetensors`, `.json`, `.npy`, `.npz`, `.pt`/`.pth`)
 * or of a folder of tensor files.
 *
 * Format: chosen by the extension (case-insensitive), else by the first bytes (docs/io.md#readers);
 * see docs/io.md#safetensors, #json-batches, #npy, #npz and #pt. A folder: every file with a
 * registered extension (not hidden), in name order, merged; a name in two files is an error
 * (docs/io.md#folders-and-standard-input). Non-finite values are kept as read (padding may hold
 * junk). A file must be a regular file (a FIFO is rejected before open).
 *
 * @param path - The file or folder path.
 * @param options - `maxBytes`: refuse larger files (defaults 4 GiB / 256 MiB), checked first;
 *   `maxElements`: refuse more elements in all tensors of the file or folder (default 2^32),
 *   checked before they are allocated (docs/io.md#bounds-on-hostile-files).
 * @returns Every tensor by name, in file order, with the file's metadata.
 * @throws {IoError} E_IO for an unrecognised format, a file that is not a regular file, a
 *   folder without tensor files or with a name in two files, or any reader error (a bound on
 *   hostile files included).
 * @throws {ConfigError} E_CONFIG when `options.maxBytes` or `options.maxElements` is not a
 *   positive integer.
 * @derivation docs/io.md#tensor-sets
 * @enforcedBy test/io/batch.test.ts > readTensors > rejects: an extension no reader owns, with bytes no reader recognises
 * @enforcedBy test/hardening/bounded.test.ts > file readers > regression: a fifo, a directory and a device are rejected before open
 * @since 0.1.0
 */
export function readTensors(path: string, options: ReadOptions = {}): TensorSet {
  requirePath("readTensors", "path", path);
  return readTensorsAs("readTensors", path, options);
}

/**
 * {@link readTensors} reporting errors as `fn`; a single safetensors file is read into `scratch`
 * when given (its tensors are then valid until the scratch's next use; a folder never is). @internal
 */
export function readTensorsAs(
  fn: string,
  path: string,
  options: ReadOptions,
  scratch?: ReadScratch,
  lazy = false,
): TensorSet {
  const maxElements = checkMaxElements(fn, options.maxElements);
  if (typeof path === "string" && isDirectory(path))
    return readTensorDirAs(fn, path, options, maxElements, lazy);
  return readTensorFileAs(fn, path, options, maxElements, scratch, lazy);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(fsPath(path)).isDirectory();
  } catch {
    return false; // the file reader reports a missing path with its own message
  }
}

/** The tensor files of a folder (a registered extension, not hidden), sorted by name. @internal */
export function tensorFilesOf(fn: string, dir: string): string[] {
  let names: string[];
  try {
    names = readdirNames(dir);
  } catch (e) {
    throw fsError(fn, dir, e);
  }
  return names.filter((n) => !n.startsWith(".") && readerByExtension(n) !== undefined).sort();
}

/**
 * Read a folder holding one tensor file per tensor (or several files of tensors), e.g. a verl
 * step folder of `.npy` files: every file with a registered extension, in name order, merged;
 * the files draw on one element cap, `maxElements` for the folder.
 */
function readTensorDirAs(
  fn: string,
  dir: string,
  options: ReadOptions,
  maxElements: number,
  lazy: boolean,
): TensorSet {
  const files = tensorFilesOf(fn, dir);
  if (files.length === 0) {
    const exts = ".safetensors, .json, .npy, .npz, .pt or .pth";
    throw ioError(
      fn,
      dir,
      "path",
      `a batch file, or a folder of tensor files (${exts})`,
      "a folder with none",
    );
  }
  const tensors = new Map<string, NamedTensor>();
  const metadata: Record<string, string> = {};
  const origin = new Map<string, string>();
  const formats = new Set<TensorSet["format"]>();
  let left = maxElements;
  for (const f of files) {
    const set = readTensorFileAs(fn, join(dir, f), options, left, undefined, lazy);
    formats.add(set.format);
    for (const [name, t] of set.tensors) {
      // The element count from the shape: a lazy tensor's values are not read here.
      left -= t.shape.reduce((a, d) => a * d, 1);
      const prev = origin.get(name);
      if (prev !== undefined) {
        throw ioError(fn, dir, name, "in one file of the folder only", `in ${prev} and ${f}`);
      }
      origin.set(name, f);
      tensors.set(name, t);
    }
    Object.assign(metadata, set.metadata);
  }
  // A folder of mixed formats is reported by its first file's format.
  return { path: dir, format: [...formats][0] as TensorSet["format"], tensors, metadata };
}

export { readTensorsFromBytes } from "./readers.js";

function readTensorFileAs(
  fn: string,
  path: string,
  options: ReadOptions,
  maxElements: number,
  scratch?: ReadScratch,
  lazy = false,
): TensorSet {
  let reader = readerByExtension(path);
  if (reader === undefined && typeof path !== "string") reader = readerFor(fn, path);
  const limit = checkMaxBytes(
    fn,
    options.maxBytes,
    reader?.defaultMaxBytes ?? DEFAULT_MAX_SAFETENSORS_BYTES,
  );
  const file = openForRead(fn, path, limit);
  try {
    if (reader === undefined) {
      reader = readerFor(fn, path, readRange(fn, path, file, 0, Math.min(file.size, SNIFF_BYTES)));
      // A sniffed format keeps its own default limit.
      checkFileSize(
        fn,
        path,
        file.size,
        checkMaxBytes(fn, options.maxBytes, reader.defaultMaxBytes),
      );
    }
    if (reader.format === "safetensors")
      return readOpenSafetensors(fn, path, file, scratch, maxElements);
    return reader.parse(fn, readRange(fn, path, file, 0, file.size), path, maxElements, lazy);
  } finally {
    closeSync(file.fd);
  }
}
