/**
 * The pure half of the readers' error handling (no `node:` import, so that byte-level parsers can
 * run in a browser): the IoError builder that quotes every user string safely, byte-count
 * formatting, bounded allocation and strict UTF-8 decoding.
 * @internal
 */
import { fmtValue, mustBe, safeText } from "../../core/message.js";
import { IoError } from "../../errors.js";

/** Longest rule or actual text an IoError message carries (user text inside is already elided). */
const MAX_PART = 1000;

/**
 * Build an IoError with the standard message plus the file it concerns. Every part is passed
 * through safeText: a path, tensor name or header value with a newline or an escape sequence can
 * never forge a second `error[...]` line, and a 1 MB name is quoted in at most ~200 characters.
 * @internal
 */
export function ioError(
  fn: string,
  path: string,
  arg: string,
  rule: string,
  actual: string,
): IoError {
  // Never String() a value that is not a string: an array of 1e9 holes would be joined.
  const a = safeText(typeof arg === "string" ? arg : fmtValue(arg));
  const p = safeText(typeof path === "string" ? path : fmtValue(path));
  const message = `${mustBe(fn, a, safeText(rule, MAX_PART), safeText(actual, MAX_PART))} (in ${p})`;
  return new IoError(fn, a, message, typeof path === "string" ? path : p);
}

/** Format a byte count for messages, e.g. `4294967296 bytes (4 GiB)`. @internal */
export function fmtBytes(n: number): string {
  if (n >= 2 ** 30 && n % 2 ** 30 === 0) return `${n} bytes (${n / 2 ** 30} GiB)`;
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n} bytes (${n / 2 ** 20} MiB)`;
  return `${n} bytes`;
}

/** Allocate `length` bytes, turning an allocation failure into an IoError. @internal */
export function allocBytes(fn: string, path: string, arg: string, length: number): Uint8Array {
  try {
    return new Uint8Array(length);
  } catch {
    throw ioError(fn, path, arg, "small enough to hold in memory", fmtBytes(length));
  }
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
