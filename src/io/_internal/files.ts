/**
 * File access shared by the readers: every failure becomes an {@link IoError} that names the file
 * and the rule, the file kind and size are checked (statSync) before the file is opened (opening
 * a FIFO for reading would block forever) and again on the open descriptor (fstatSync, so a file
 * swapped in between is caught), and reads go through a positioned loop so that a file shorter
 * than announced is an error rather than silent garbage. The pure half (messages, allocation,
 * UTF-8) lives in ./ioError.ts.
 * @internal
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from "node:fs";
import { fmtValue } from "../../core/message.js";
import { requirePath } from "../../core/validate.js";
import { ConfigError, fail, IoError } from "../../errors.js";
import { fsPath } from "../../platform/fsPath.js";
import { noteInput } from "./inputs.js";
import { allocBytes, decodeUtf8, fmtBytes, ioError } from "./ioError.js";

export { allocBytes, decodeUtf8, fmtBytes, ioError };

/** Validate a `maxBytes` option: a positive safe integer, or undefined for the default. @internal */
export function checkMaxBytes(fn: string, maxBytes: unknown, fallback: number): number {
  if (maxBytes === undefined) return fallback;
  if (typeof maxBytes !== "number" || !Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw fail(
      ConfigError,
      fn,
      "options.maxBytes",
      "a positive integer (bytes)",
      fmtValue(maxBytes),
    );
  }
  return maxBytes;
}

const READ_RULES: Readonly<Record<string, string>> = {
  ENOENT: "an existing file",
  ENOTDIR: "an existing file (a parent is not a directory)",
  EISDIR: "a regular file",
  EACCES: "a readable file",
  EPERM: "a readable file",
};

const WRITE_RULES: Readonly<Record<string, string>> = {
  ENOENT: "a path in an existing directory",
  ENOTDIR: "a path in an existing directory (a parent is not a directory)",
  EISDIR: "a file path, not a directory",
  EACCES: "a writable path",
  EPERM: "a writable path",
  EFBIG: "a file within the process's file-size limit",
  ENOSPC: "a path on a device with room for the file",
  EDQUOT: "a path within the disk quota",
  EROFS: "a path on a writable file system",
};

/** Convert a Node file-system error into an IoError about `path`. @internal */
export function fsError(
  fn: string,
  path: string,
  e: unknown,
  action: "reading" | "writing" = "reading",
): IoError {
  const code =
    typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "";
  const rules = action === "reading" ? READ_RULES : WRITE_RULES;
  const rule = rules[code] ?? `a file that allows ${action}`;
  let detail = e instanceof Error ? e.message : String(e);
  // Node quotes a Buffer path decoded with U+FFFD: the message names the file by its escapes.
  if (fsPath(path) !== path) detail = detail.replace(/, [a-z]+ '.*'$/s, "");
  // U+FFFD stands for bytes that were not UTF-8 and were lost when the name was decoded: the
  // path names another file (docs/io.md#file-names-that-are-not-utf-8).
  const lost =
    code === "ENOENT" && String(path).includes("\ufffd")
      ? "; the name holds U+FFFD, the mark of bytes that were not UTF-8 and could not be recovered (the CLI reads them from /proc/self/cmdline where the system has it; a library caller gives such a byte b as the character U+DC00 + b)"
      : "";
  return ioError(fn, path, "path", rule, `${code || "error"} (${detail})${lost}`);
}

/** An open file: its descriptor and size in bytes. @internal */
export interface OpenFile {
  readonly fd: number;
  readonly size: number;
}

/** What a non-regular file is, for the message: `a FIFO`, `a directory`, … @internal */
export function fileKind(st: Stats): string {
  if (st.isFile()) return "a regular file";
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/** Throw unless a file of `size` bytes is within `maxBytes`. @internal */
export function checkFileSize(fn: string, path: string, size: number, maxBytes: number): void {
  if (size > maxBytes) {
    throw ioError(
      fn,
      path,
      "path",
      `at most ${fmtBytes(maxBytes)} (raise options.maxBytes to read it)`,
      fmtBytes(size),
    );
  }
}

/** Throw unless `st` is a regular file of at most `maxBytes` bytes. */
function checkStats(fn: string, path: string, st: Stats, maxBytes: number): void {
  if (!st.isFile()) throw ioError(fn, path, "path", "a regular file", fileKind(st));
  checkFileSize(fn, path, st.size, maxBytes);
}

/**
 * Check, without opening it, that `path` is a regular file of at most `maxBytes` bytes; returns
 * its size. A FIFO, socket, device or directory is an IoError (`a regular file; got a FIFO`).
 * @internal
 */
export function statRegularFile(fn: string, path: string, maxBytes: number): number {
  requirePath(fn, "path", path);
  let st: Stats;
  try {
    st = statSync(fsPath(path));
  } catch (e) {
    throw fsError(fn, path, e);
  }
  checkStats(fn, path, st, maxBytes);
  return st.size;
}

/** O_NONBLOCK where the platform has it: a FIFO swapped in after the stat cannot block open. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * Open `path` for reading after checking it is a regular file of at most `maxBytes` bytes: the
 * kind and size are checked with statSync before opening, the open is non-blocking, and the
 * descriptor is checked again with fstatSync. The caller must close `fd`. @internal
 */
export function openForRead(fn: string, path: string, maxBytes: number): OpenFile {
  statRegularFile(fn, path, maxBytes);
  let fd: number;
  try {
    fd = openSync(fsPath(path), READ_FLAGS);
  } catch (e) {
    throw fsError(fn, path, e);
  }
  try {
    const st = fstatSync(fd);
    checkStats(fn, path, st, maxBytes);
    noteInput(path, st);
    return { fd, size: st.size };
  } catch (e) {
    closeSync(fd);
    if (e instanceof IoError) throw e;
    throw fsError(fn, path, e);
  }
}

/**
 * Read a whole regular file of at most `maxBytes` bytes (checked before reading). @internal
 */
export function readFileBytes(fn: string, path: string, maxBytes: number): Uint8Array {
  const file = openForRead(fn, path, maxBytes);
  try {
    return readRange(fn, path, file, 0, file.size);
  } finally {
    closeSync(file.fd);
  }
}

/** Largest single readSync call (Node caps one read well below 4 GiB). */
const CHUNK = 2 ** 30;

/** Read exactly `length` bytes at `position`; a short read (file changed) is an IoError. @internal */
export function readRange(
  fn: string,
  path: string,
  file: OpenFile,
  position: number,
  length: number,
): Uint8Array {
  return readRangeInto(fn, path, file, position, allocBytes(fn, path, "path", length));
}

/**
 * A byte buffer reused from read to read (a run's step files): what a read into it returns is
 * valid until the next read into it, so only a caller that is done with each file before it
 * reads the next may pass one. @internal
 */
export class ReadScratch {
  private bytes: Uint8Array = new Uint8Array(0);

  /** `length` bytes of the buffer (grown when too small; its contents are overwritten). */
  take(fn: string, path: string, length: number): Uint8Array {
    if (this.bytes.length < length) this.bytes = allocBytes(fn, path, "path", length);
    return this.bytes.subarray(0, length);
  }
}

/**
 * {@link readRange} into `buf` (its whole length): for a caller that reuses one buffer from file
 * to file, whose pages are then faulted in once rather than per file. @internal
 */
export function readRangeInto(
  fn: string,
  path: string,
  file: OpenFile,
  position: number,
  buf: Uint8Array,
): Uint8Array {
  const length = buf.length;
  let filled = 0;
  while (filled < length) {
    let n: number;
    try {
      n = readSync(file.fd, buf, filled, Math.min(CHUNK, length - filled), position + filled);
    } catch (e) {
      throw fsError(fn, path, e);
    }
    if (n === 0) {
      throw ioError(
        fn,
        path,
        "path",
        `a file of the ${file.size} bytes it had when opened`,
        `end of file at byte ${position + filled}`,
      );
    }
    filled += n;
  }
  return buf;
}

// The write side (writeFileBytes, writeFileChunks, openReplacement) is ./writeFile.ts.
