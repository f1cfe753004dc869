/**
 * The command line as its bytes (docs/io.md#file-names-that-are-not-utf-8): Node decodes argv as
 * UTF-8 and turns each byte that is not into U+FFFD, so `polgrad loss --batch $'bad\xffname.json'`
 * would look for `bad\uFFFDname.json`, another file. On Linux the exact bytes are in
 * /proc/self/cmdline; an argument that holds U+FFFD is read again from there, its invalid bytes
 * escaped as U+DC80 + (byte − 0x80) (platform/fsPath.ts), which the file-system calls turn
 * back into the bytes. Elsewhere the argument stays as Node decoded it, and a file it does not
 * name is an error that says so (io/_internal/files.ts fsError).
 */
import { readFileSync } from "node:fs";
import { decodeFsName } from "../platform/fsPath.js";

const LOSSY = new TextDecoder("utf-8");

/**
 * `argv` (without `node` and the script) with each argument that holds U+FFFD replaced by its
 * bytes from /proc/self/cmdline in escaped form, when they decode to that argument; the others,
 * and every argument where /proc/self/cmdline is missing or does not match, as given.
 *
 * @param argv - The arguments as Node decoded them.
 * @returns The arguments, the lossy ones recovered where the system allows.
 * @enforcedBy test/hardening/silentCli.test.ts > file names that are not utf-8 > regression: loss --batch with a name holding byte 0xff reads that file, through the binary
 * @since 0.1.0
 */
export function recoverArgv(argv: readonly string[]): string[] {
  if (!argv.some((a) => a.includes("\ufffd"))) return [...argv];
  let raw: Uint8Array;
  try {
    raw = readFileSync("/proc/self/cmdline");
  } catch {
    return [...argv];
  }
  // NUL-terminated arguments: node, its own options, the script, then argv.
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0) {
      parts.push(raw.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < raw.length) parts.push(raw.subarray(start));
  if (parts.length < argv.length) return [...argv];
  const tail = parts.slice(parts.length - argv.length);
  return argv.map((a, i) => {
    const bytes = tail[i] as Uint8Array;
    if (!a.includes("\ufffd") || LOSSY.decode(bytes) !== a) return a;
    return decodeFsName(bytes);
  });
}
