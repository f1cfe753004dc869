/**
 * File access shared by the readers: every failure becomes an {@link IoError} that names the file
 * and the rule, sizes are checked (statSync) before anything is allocated, and reads go through a
 * positioned loop so that a file shorter than announced is an error rather than silent garbage.
 * @internal
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { fmtValue, mustBe } from "../../core/message.js";
import { ConfigError, IoError } from "../../errors.js";

/** Build an IoError with the standard message plus the file it concerns. @internal */
export function ioError(
  fn: string,
  path: string,
  arg: string,
  rule: string,
  actual: string,
): IoError {
  return new IoError(fn, arg, `${mustBe(fn, arg, rule, actual)} (in ${path})`, path);
}

/** Format a byte count for messages, e.g. `4294967296 bytes (4 GiB)`. @internal */
export function fmtBytes(n: number): string {
  if (n >= 2 ** 30 && n % 2 ** 30 === 0) return `${n} bytes (${n / 2 ** 30} GiB)`;
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n} bytes (${n / 2 ** 20} MiB)`;
  return `${n} bytes`;
}

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

/**
 * Open `path` for reading after checking it is a regular file of at most `maxBytes` bytes.
 * The caller must close `fd`. @internal
 */
export function openForRead(fn: string, path: string, maxBytes: number): OpenFile {
  if (typeof path !== "string" || path.length === 0) {
    throw new IoError(fn, "path", mustBe(fn, "path", "a non-empty file path", fmtValue(path)));
  }
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw fsError(fn, path, e);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      throw ioError(
        fn,
        path,
        "path",
        "a regular file",
        st.isDirectory() ? "a directory" : "not a regular file",
      );
    }
    if (st.size > maxBytes) {
      throw ioError(
        fn,
        path,
        "path",
        `at most ${fmtBytes(maxBytes)} (raise options.maxBytes to read it)`,
        fmtBytes(st.size),
      );
    }
    return { fd, size: st.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Largest single readSync call (Node caps one read well below 4 GiB). */
const CHUNK = 2 ** 30;

/** Allocate `length` bytes, turning an allocation failure into an IoError. @internal */
export function allocBytes(fn: string, path: string, arg: string, length: number): Uint8Array {
  try {
    return new Uint8Array(length);
  } catch {
    throw ioError(fn, path, arg, "small enough to hold in memory", fmtBytes(length));
  }
}

/** Read exactly `length` bytes at `position`; a short read (file changed) is an IoError. @internal */
export function readRange(
  fn: string,
  path: string,
  file: OpenFile,
  position: number,
  length: number,
): Uint8Array {
  const buf = allocBytes(fn, path, "path", length);
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

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Decode UTF-8 strictly (invalid sequences are an IoError, never U+FFFD). @internal */
export function decodeUtf8(fn: string, path: string, arg: string, bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch (e) {
    if (e instanceof TypeError)
      throw ioError(fn, path, arg, "valid UTF-8 text", "invalid UTF-8 bytes");
    throw ioError(fn, path, arg, "small enough to decode as one string", fmtBytes(bytes.length));
  }
}
