/**
 * File names that are not UTF-8 (docs/io.md#file-names-that-are-not-utf-8). A POSIX file name is
 * bytes; Node decodes argv and `readdirSync` names as UTF-8 and turns every invalid byte into
 * U+FFFD, after which the string no longer names the file. polgrad holds such a name as a string
 * in Python's `surrogateescape` form instead: each byte that is not part of valid UTF-8 is the
 * lone surrogate U+DC80 + (byte − 0x80), which valid UTF-8 text never decodes to. Every
 * file-system call on a user path goes through {@link fsPath}, which gives the exact bytes back
 * as a Buffer for such a string (and the string itself otherwise); folder listings go through
 * {@link readdirNames}. Worker threads get the same strings (structured clone keeps lone
 * surrogates). Messages print such a byte as `\xff` (core/message.ts safeText).
 * @internal
 */
import { Buffer } from "node:buffer";
import { readdirSync } from "node:fs";

/** Whether `s` holds an escaped byte: a low surrogate U+DC80..U+DCFF without a high one before. */
function hasEscapedByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc80 && c <= 0xdcff) {
      const prev = i > 0 ? s.charCodeAt(i - 1) : 0;
      if (!(prev >= 0xd800 && prev <= 0xdbff)) return true;
    }
  }
  return false;
}

/**
 * The path to hand to `node:fs`: `path` itself, or, when it holds bytes that are not UTF-8
 * (escaped as U+DC80..U+DCFF), a Buffer of its exact bytes: the escaped bytes as they are and the
 * rest as UTF-8.
 * @internal
 */
export function fsPath(path: string): string | Buffer {
  if (!hasEscapedByte(path)) return path;
  const parts: Buffer[] = [];
  let run = "";
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    const prev = i > 0 ? path.charCodeAt(i - 1) : 0;
    if (c >= 0xdc80 && c <= 0xdcff && !(prev >= 0xd800 && prev <= 0xdbff)) {
      parts.push(Buffer.from(run, "utf8"), Buffer.of(c - 0xdc00));
      run = "";
    } else run += path[i];
  }
  parts.push(Buffer.from(run, "utf8"));
  return Buffer.concat(parts);
}

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
function validSequence(b: Uint8Array, i: number): number {
  const c = b[i] as number;
  if (c < 0x80) return 1;
  const cont = (k: number): boolean => i + k < b.length && ((b[i + k] as number) & 0xc0) === 0x80;
  const c1 = i + 1 < b.length ? (b[i + 1] as number) : 0;
  // Unicode table 3-7: the second byte's range excludes overlongs, surrogates and > U+10FFFF.
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c === 0xe0) return c1 >= 0xa0 && c1 <= 0xbf && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c === 0xee || c === 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c === 0xed) return c1 >= 0x80 && c1 <= 0x9f && cont(2) ? 3 : 0;
  if (c === 0xf0) return c1 >= 0x90 && c1 <= 0xbf && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c === 0xf4) return c1 >= 0x80 && c1 <= 0x8f && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decode a file name's bytes: valid UTF-8 as text, each other byte as U+DC80 + (byte − 0x80)
 * (Python's `surrogateescape`), so that {@link fsPath} gives back exactly these bytes.
 * @internal
 */
export function decodeFsName(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    // Not UTF-8: decode sequence by sequence, escaping each byte that starts no valid one.
  }
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const n = validSequence(bytes, i);
    if (n === 0) {
      out += String.fromCharCode(0xdc00 + (bytes[i] as number));
      i++;
    } else {
      out += UTF8.decode(bytes.subarray(i, i + n));
      i += n;
    }
  }
  return out;
}

/**
 * The names in folder `dir`, each decoded by {@link decodeFsName} (a name that is not UTF-8 still
 * names its file); throws what `readdirSync` throws.
 * @internal
 */
export function readdirNames(dir: string): string[] {
  return readdirSync(fsPath(dir), { encoding: "buffer" }).map(decodeFsName);
}
