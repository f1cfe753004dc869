/**
 * Shared CLI output: the `--json` document, option parsing helpers, error rendering (one capped,
 * escaped line per error) and the process streams (write errors and EPIPE; docs/cli.md#output-streams).
 */
import { readSync, writeSync } from "node:fs";
import { fmtValue, mustBe, safeText } from "../core/message.js";
import { fail, IoError, PolgradError, UnknownNameError, UsageError } from "../errors.js";
import { writeWireJson } from "../report/wire.js";
import type { CommandIO, OptionValues } from "./command.js";

/** Version of the `--json` document layout (docs/schemas/). */
export const SCHEMA_VERSION = 1;

/** Longest error or `Hint:` line written to stderr; longer messages are elided in the middle. */
export const MAX_ERROR_LINE = 2000;

/** Exit status after stdout or stderr was closed by the reader (EPIPE): 128 + SIGPIPE, quietly. */
export const EXIT_BROKEN_PIPE = 141;

/**
 * Write the one `--json` document: `{schema_version, command, ok, result}`. `ok` is true iff the
 * command exits 0: false when a check ran and failed (exit 1: an alarm, drift, a broken contract,
 * a verification failure); docs/cli.md#json-output.
 */
export function writeJson(io: CommandIO, command: string, result: unknown, ok = true): void {
  // In pieces, rows straight from their typed arrays: a large result's text exceeds the longest
  // string V8 can hold (docs/cli.md#json-output).
  writeWireJson({ schema_version: SCHEMA_VERSION, command, ok, result }, io.stdout);
  io.stdout("\n");
}

/** Read a positive (or, with `min: 0`, non-negative) integer option, or undefined when absent. */
export function intOption(
  values: OptionValues,
  name: string,
  command: string,
  min = 1,
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = typeof raw === "string" && /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw fail(
      UsageError,
      `polgrad ${command}`,
      `--${name}`,
      min === 0 ? "a non-negative integer" : "a positive integer",
      raw === true ? "a flag without a value" : fmtValue(raw),
    );
  }
  return n;
}

/** One stderr line: control characters escaped, at most {@link MAX_ERROR_LINE} characters. */
function line(text: string): string {
  return safeText(text, MAX_ERROR_LINE - 40);
}

/**
 * Render an error for stderr: one `error[E_CODE]: message` line plus `Hint:` lines, or under
 * `--json` one JSON line `{schema_version, command, ok: false, error}` (docs/schemas/error.schema.json).
 * Every line is escaped and capped, so hostile input can neither forge a line nor flood stderr.
 */
export function renderError(
  err: unknown,
  json: boolean,
  hints: readonly string[] = [],
  command: string | null = null,
): string {
  const doc = (error: Record<string, unknown>): string =>
    `${JSON.stringify({ schema_version: SCHEMA_VERSION, command, ok: false, error })}\n`;
  if (err instanceof PolgradError) {
    if (json) {
      return doc({
        code: err.code,
        name: err.name,
        fn: safeText(err.fn),
        arg: err.arg === undefined ? null : safeText(err.arg),
        message: line(err.message),
        ...(err instanceof UnknownNameError ? { suggestions: err.suggestions.slice(0, 10) } : {}),
      });
    }
    return `error[${err.code}]: ${line(err.message)}\n${hints.map((h) => `Hint: ${line(h)}\n`).join("")}`;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  const detail = process.env.POLGRAD_DEBUG ? `\n${e.stack ?? ""}` : "";
  if (json) return doc({ code: "E_INTERNAL", name: line(e.name), message: line(e.message) });
  return `error[E_INTERNAL]: ${line(e.message)}${detail}\nHint: this is a bug in polgrad; set POLGRAD_DEBUG=1 for the stack and report it.\n`;
}

/** What went wrong writing to the process streams. */
interface StreamFailure {
  readonly stream: "stdout" | "stderr";
  readonly code: string;
  readonly message: string;
}

/** Write all of `text` to `fd`, blocking: a full pipe (EAGAIN) is waited on, never buffered. */
function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let done = 0;
  while (done < bytes.length) {
    try {
      done += writeSync(fd, bytes, done, bytes.length - done);
    } catch (e) {
      if ((e as NodeJS.ErrnoException)?.code !== "EAGAIN") throw e;
      // A non-blocking pipe that is full: wait for the reader (backpressure), 2 ms at a time.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }
}

/**
 * The process's stdout and stderr as a {@link CommandIO} that never throws, plus `finish(code)`,
 * the exit status once everything is written. Writes are synchronous and blocking: a slow reader
 * holds the writer back (no output is ever queued in memory), so a document of any size reaches
 * a pipe whole. A reader that closed the pipe (EPIPE) ends the process quietly with
 * {@link EXIT_BROKEN_PIPE}; any other write error on stdout (ENOSPC on a full disk, EIO) becomes
 * one `error[E_IO]` line on stderr and exit 2.
 */
export function processIO(
  json: boolean,
  command: string | null = null,
): {
  io: CommandIO;
  finish: (code: number) => Promise<number>;
} {
  // A stdout closed before the process started (`>&-`) cannot be seen here: Node replaces a closed
  // descriptor 0-2 with /dev/null opened read-write before any JavaScript runs, exactly as a
  // parent's subprocess.DEVNULL or stdio "ignore" does (docs/cli.md#output-streams).
  let failure: StreamFailure | null = null;
  const writer =
    (stream: "stdout" | "stderr", fd: number) =>
    (text: string): void => {
      if (failure !== null) return;
      try {
        writeAll(fd, text);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        failure = { stream, code: String(err?.code ?? "EIO"), message: String(err?.message ?? e) };
      }
    };
  const io: CommandIO = {
    stdout: writer("stdout", 1),
    stderr: writer("stderr", 2),
    stderrIsTTY: process.stderr.isTTY === true,
    readStdin: readProcessStdin,
  };
  const finish = async (code: number): Promise<number> => {
    const f = failure as StreamFailure | null;
    if (f === null) return code;
    if (f.code === "EPIPE" || f.stream === "stderr")
      return f.code === "EPIPE" ? EXIT_BROKEN_PIPE : 2;
    const err = fail(
      IoError,
      "polgrad",
      "stdout",
      "writable",
      `${f.code} (${safeText(f.message.replace(/^[A-Z]+: /, ""))})`,
    );
    try {
      writeAll(2, renderError(err, json, [], command));
    } catch {
      // stderr is gone too: the status says it.
    }
    return 2;
  };
  return { io, finish };
}

/**
 * Read the process's standard input to its end, at most `maxBytes` bytes, in 1 MiB chunks (a
 * terminal is refused: `--batch -` waits for a pipe or a redirected file, never for typing).
 */
export function readProcessStdin(maxBytes: number): Uint8Array {
  const fn = "polgrad";
  if (process.stdin.isTTY === true) {
    throw new IoError(
      fn,
      "stdin",
      mustBe(fn, "stdin", "a pipe or a redirected file (for -)", "a terminal"),
      "<stdin>",
    );
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const buf = new Uint8Array(2 ** 20);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      const code = String((e as NodeJS.ErrnoException)?.code ?? "EIO");
      if (code === "EAGAIN") {
        // A non-blocking stdin with no data yet: wait 10 ms rather than spin on the CPU.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      if (code === "EOF") break;
      throw new IoError(fn, "stdin", mustBe(fn, "stdin", "readable", code), "<stdin>");
    }
    if (n === 0) break;
    total += n;
    if (total > maxBytes) {
      throw new IoError(
        fn,
        "stdin",
        mustBe(fn, "stdin", `at most ${maxBytes} bytes`, `more than ${maxBytes} bytes`),
        "<stdin>",
      );
    }
    chunks.push(buf.slice(0, n));
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
