/**
 * The one writer of every file polgrad writes (docs/cli.md#writing-files): a file is written
 * beside its destination under a temporary name nobody can predict, created exclusively and never
 * through a link (O_EXCL | O_NOFOLLOW), given the destination's mode (or 0666 less the umask for a
 * new file), written, flushed to disk (fsync) and renamed over the destination, so a reader sees
 * the old file or the complete new one, never a part. On any error the temporary file is removed
 * and the destination is untouched. The destination must be a regular file or a new path (a
 * symbolic link, FIFO, device or directory is an IoError before anything is created), and, when
 * the CLI guards its inputs, not a file or inside a folder the command reads (./inputs.ts). With
 * {@link cleanUpOnSignals} (the CLI) a SIGINT or SIGTERM that arrives while a temporary file exists
 * removes it and ends the process with 130 or 143 and one line on stderr.
 * @internal
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  openSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { requirePath } from "../../core/validate.js";
import { IoError } from "../../errors.js";
import { fsPath } from "../../platform/fsPath.js";
import { fileKind, fsError, ioError } from "./files.js";
import { inputClash } from "./inputs.js";

/** A file written at positions, replacing its destination only when committed. @internal */
export interface ReplacementFile {
  /** Write `bytes` at byte `at`. */
  write(bytes: Uint8Array, at: number): void;
  /** Flush the file to disk, close it and rename it over the destination. */
  commit(): void;
  /** Close and delete the file; the destination keeps what it held. */
  abort(): void;
}

/** Temporary files that exist now: removed by a handled signal or at exit. */
const pending = new Set<{ readonly tmp: string; fd: number | null }>();

let signalCleanup = false;
let exitHook = false;

/** The exit status of a process ended by `signal`: 128 + its number. */
const SIGNAL_STATUS: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };

function removePending(): number {
  let removed = 0;
  for (const p of pending) {
    try {
      if (p.fd !== null) closeSync(p.fd);
    } catch {
      // Already closed.
    }
    try {
      unlinkSync(fsPath(p.tmp));
      removed++;
    } catch {
      // Already gone.
    }
  }
  pending.clear();
  return removed;
}

function onSignal(signal: NodeJS.Signals): void {
  removePending();
  try {
    writeSync(
      2,
      `polgrad: interrupted by ${signal}; the file being written was removed and its destination left as it was\n`,
    );
  } catch {
    // stderr is gone: the status still says what happened.
  }
  process.exit(SIGNAL_STATUS[signal] ?? 1);
}

/** Handlers are installed only while a temporary file exists (a signal elsewhere kills at once). */
function syncHandlers(): void {
  if (!signalCleanup) return;
  const want = pending.size > 0;
  for (const s of ["SIGINT", "SIGTERM"] as const) {
    const has = process.listeners(s).includes(onSignal);
    if (want && !has) process.on(s, onSignal);
    if (!want && has) process.off(s, onSignal);
  }
}

/**
 * Remove this process's temporary files on SIGINT and SIGTERM (exit 130 / 143, one stderr line)
 * and at exit. For the CLI: a library must not take over its host's signals. @internal
 */
export function cleanUpOnSignals(): void {
  signalCleanup = true;
  if (!exitHook) {
    exitHook = true;
    process.on("exit", removePending);
  }
}

/** The destination's stats (lstat), or undefined for a new path; a non-regular one is refused. */
function destination(fn: string, path: string): Stats | undefined {
  requirePath(fn, "path", path);
  let st: Stats;
  try {
    st = lstatSync(fsPath(path));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === "ENOENT") return undefined;
    throw fsError(fn, path, e, "writing");
  }
  if (st.isSymbolicLink())
    throw ioError(
      fn,
      path,
      "path",
      "a regular file or a new path (polgrad replaces files and never writes through a link)",
      "a symbolic link",
    );
  if (!st.isFile()) throw ioError(fn, path, "path", "a regular file path", fileKind(st));
  return st;
}

const TEMP_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/**
 * Open a file that replaces `path` when committed (see the module comment). @internal
 *
 * @throws {IoError} E_IO when `path` is a link, FIFO, device or directory, an input of the
 *   command, or its folder cannot take a new file.
 */
export function openReplacement(fn: string, path: string): ReplacementFile {
  const st = destination(fn, path);
  const clash = inputClash(path);
  if (clash !== null)
    throw ioError(
      fn,
      path,
      "path",
      "a file the command does not read (an output never replaces an input)",
      clash,
    );
  const entry: { readonly tmp: string; fd: number | null } = {
    tmp: join(
      dirname(path),
      `.${basename(path)}.${randomBytes(8).toString("hex")}.polgrad-partial`,
    ),
    fd: null,
  };
  // Registered before the file exists, so a handled signal can never leave it behind.
  pending.add(entry);
  syncHandlers();
  const fail = (e: unknown): IoError => {
    if (entry.fd !== null || pending.has(entry)) abort();
    return e instanceof IoError ? e : fsError(fn, path, e, "writing");
  };
  const abort = (): void => {
    try {
      if (entry.fd !== null) closeSync(entry.fd);
    } catch {
      // Already closed.
    }
    entry.fd = null;
    try {
      unlinkSync(fsPath(entry.tmp));
    } catch {
      // Never created, or already gone.
    }
    pending.delete(entry);
    syncHandlers();
  };
  try {
    entry.fd = openSync(fsPath(entry.tmp), TEMP_FLAGS, 0o666);
    if (st !== undefined) {
      fchmodSync(entry.fd, st.mode & 0o7777);
      try {
        fchownSync(entry.fd, st.uid, st.gid);
      } catch {
        // Not ours to give away: the file keeps this process's owner.
      }
    }
  } catch (e) {
    throw fail(e);
  }
  return {
    write(bytes, at) {
      const fd = entry.fd;
      if (fd === null) throw new IoError(fn, "path", `${fn}: internal error: write after close`);
      try {
        let done = 0;
        while (done < bytes.length)
          done += writeSync(fd, bytes, done, bytes.length - done, at + done);
      } catch (e) {
        throw fail(e);
      }
    },
    commit() {
      const fd = entry.fd;
      if (fd === null) throw new IoError(fn, "path", `${fn}: internal error: commit after close`);
      try {
        fsyncSync(fd);
        closeSync(fd);
        entry.fd = null;
        renameSync(fsPath(entry.tmp), fsPath(path));
      } catch (e) {
        throw fail(e);
      }
      pending.delete(entry);
      syncHandlers();
      syncFolder(path);
    },
    abort,
  };
}

/** Flush the folder's entry for `path` (the rename) to disk; best effort. */
function syncFolder(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(fsPath(dirname(path)), constants.O_RDONLY);
    fsyncSync(fd);
  } catch {
    // A folder that cannot be opened or synced: the rename itself has happened.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Write `bytes` to `path` through {@link openReplacement}. @internal
 */
export function writeFileBytes(fn: string, path: string, bytes: Uint8Array): void {
  writeFileChunks(fn, path, [bytes]);
}

/**
 * {@link writeFileBytes} for a file given as chunks, written in order as they come (a chunk may
 * reuse the previous one's memory: each is written before the next is asked for). @internal
 */
export function writeFileChunks(fn: string, path: string, chunks: Iterable<Uint8Array>): void {
  const file = openReplacement(fn, path);
  try {
    let at = 0;
    for (const bytes of chunks) {
      file.write(bytes, at);
      at += bytes.length;
    }
  } catch (e) {
    file.abort();
    throw e;
  }
  file.commit();
}
