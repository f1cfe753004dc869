/**
 * File access shared by the readers: every failure becomes an {@link IoError} that names the file
 * and the rule, the file kind and size are checked (statSync) before the file is opened (opening
 * a FIFO for reading would block forever) and again on the open descriptor (fstatSync, so a file
 * swapped in between is caught), and reads go through a positioned loop so that a file shorter
 * than announced is an error rather than silent garbage. The pure half (messages, allocation,
 * UTF-8) lives in ./ioError.ts.
 * @internal
 */
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { fmtValue, mustBe } from "../../core/message.js";
import { ConfigError, IoError } from "../../errors.js";
import { allocBytes, decodeUtf8, fmtBytes, ioError } from "./ioError.js";

export { allocBytes, decodeUtf8, fmtBytes, ioError };

/** Validate a `maxBytes` option: a positive safe integer, or undefined for the default. @internal */
export function checkMaxBytes(fn: string, maxBytes: unknown, fallback: number): number {
  if (maxBytes === undefined) return fallback;
  if (typeof maxBytes !== "number" || !Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new ConfigError(
      fn,
      "options.maxBytes",
      mustBe(fn, "options.maxBytes", "a positive integer (bytes)", fmtValue(maxBytes)),
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
  const detail = e instanceof Error ? e.message : String(e);
  return ioError(fn, path, "path", rule, `${code || "error"} (${detail})`);
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
  if (typeof path !== "string" || path.length === 0) {
    throw new IoError(fn, "path", mustBe(fn, "path", "a non-empty file path", fmtValue(path)));
  }
  let st: Stats;
  try {
    st = statSync(path);
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
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    throw fsError(fn, path, e);
  }
  try {
    const st = fstatSync(fd);
    checkStats(fn, path, st, maxBytes);
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

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | (constants.O_NONBLOCK ?? 0);

/**
 * Write `bytes` to `path`, replacing a regular file or creating one. The open is non-blocking and
 * the descriptor is checked with fstatSync before anything is truncated, so an existing FIFO,
 * device or directory at `path` is an IoError instead of a hang or a clobbered device. @internal
 */
export function writeFileBytes(fn: string, path: string, bytes: Uint8Array): void {
  writeFileChunks(fn, path, [bytes]);
}

/**
 * {@link writeFileBytes} for a file given as chunks, written in order as they come (a chunk may
 * reuse the previous one's memory: each is written before the next is asked for). @internal
 */
export function writeFileChunks(fn: string, path: string, chunks: Iterable<Uint8Array>): void {
  if (typeof path !== "string" || path.length === 0) {
    throw new IoError(fn, "path", mustBe(fn, "path", "a non-empty file path", fmtValue(path)));
  }
  let fd: number;
  try {
    fd = openSync(path, WRITE_FLAGS, 0o666);
  } catch (e) {
    throw fsError(fn, path, e, "writing");
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw ioError(fn, path, "path", "a regular file path", fileKind(st));
    ftruncateSync(fd, 0);
    let at = 0;
    for (const bytes of chunks) {
      let done = 0;
      while (done < bytes.length) {
        const wrote = writeSync(fd, bytes, done, bytes.length - done, at);
        done += wrote;
        at += wrote;
      }
    }
  } catch (e) {
    if (e instanceof IoError) throw e;
    throw fsError(fn, path, e, "writing");
  } finally {
    closeSync(fd);
  }
}

/** A file written at positions, replacing `path` only when committed. @internal */
export interface ReplacementFile {
  /** Write `bytes` at byte `at`. */
  write(bytes: Uint8Array, at: number): void;
  /** Close the file and move it onto the path (replacing a regular file there). */
  commit(): void;
  /** Close and delete the file; the path keeps what it held. */
  abort(): void;
}

/**
 * Open a file that replaces `path` when committed: written beside it (in the directory of the file
 * a symlink at `path` points to) under a hidden temporary name, then renamed onto it, so that a
 * write that stops half-way (an error, a fallback) leaves `path` as it was. An existing `path` must
 * be a regular file (a FIFO, device or directory is an IoError, and nothing is opened). The new
 * file has the default mode (0o666 less the umask), as a file {@link writeFileChunks} creates.
 * @internal
 */
export function openReplacement(fn: string, path: string): ReplacementFile {
  if (typeof path !== "string" || path.length === 0) {
    throw new IoError(fn, "path", mustBe(fn, "path", "a non-empty file path", fmtValue(path)));
  }
  let target = path;
  let st: Stats | undefined;
  try {
    st = statSync(path);
  } catch {
    st = undefined;
  }
  if (st !== undefined) {
    if (!st.isFile()) throw ioError(fn, path, "path", "a regular file path", fileKind(st));
    try {
      target = realpathSync(path);
    } catch (e) {
      throw fsError(fn, path, e, "writing");
    }
  }
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.polgrad-partial`);
  let fd: number;
  try {
    fd = openSync(tmp, WRITE_FLAGS | constants.O_TRUNC, 0o666);
  } catch (e) {
    throw fsError(fn, path, e, "writing");
  }
  let open = true;
  const close = (): void => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    write(bytes, at) {
      try {
        let done = 0;
        while (done < bytes.length)
          done += writeSync(fd, bytes, done, bytes.length - done, at + done);
      } catch (e) {
        throw fsError(fn, path, e, "writing");
      }
    },
    commit() {
      try {
        close();
        renameSync(tmp, target);
      } catch (e) {
        throw fsError(fn, path, e, "writing");
      }
    },
    abort() {
      try {
        close();
      } finally {
        try {
          unlinkSync(tmp);
        } catch {
          // Already gone: nothing to clean.
        }
      }
    },
  };
}
