/**
 * Shared CLI output: the `--json` document, option parsing helpers, error rendering (one capped,
 * escaped line per error) and the process streams (write errors and EPIPE; docs/cli.md#output-streams).
 */
import { readSync } from "node:fs";
import { fmtValue, mustBe, safeText } from "../core/message.js";
import { IoError, PolgradError, UnknownNameError, UsageError } from "../errors.js";
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
    throw new UsageError(
      `polgrad ${command}`,
      `--${name}`,
      mustBe(
        `polgrad ${command}`,
        `--${name}`,
        min === 0 ? "a non-negative integer" : "a positive integer",
        raw === true ? "a flag without a value" : fmtValue(raw),
      ),
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

/**
 * The process's stdout and stderr as a {@link CommandIO} that never throws and never lets a write
 * error escape as an unhandled 'error' event, plus `finish(code)`: wait until every write has been
 * flushed (pipe writes are asynchronous), then resolve to the exit status. A reader that closed
 * the pipe (EPIPE) ends the process quietly with {@link EXIT_BROKEN_PIPE}; any other write error
 * on stdout (ENOSPC on a full disk, EIO, …) becomes one `error[E_IO]` line on stderr and exit 2.
 */
export function processIO(
  json: boolean,
  command: string | null = null,
): {
  io: CommandIO;
  finish: (code: number) => Promise<number>;
} {
  let failure: StreamFailure | null = null;
  let pending = 0;
  let settle: (() => void) | null = null;
  // Resolve finish() once every write has called back, or at the first failure (a failed
  // stream may never call back its queued writes).
  const done = (): void => {
    if ((pending === 0 || failure !== null) && settle !== null) settle();
  };
  const fail = (stream: "stdout" | "stderr", e: unknown): void => {
    if (failure !== null) return;
    const err = e as NodeJS.ErrnoException;
    failure = { stream, code: String(err?.code ?? "EIO"), message: String(err?.message ?? e) };
    done();
  };
  const writer = (stream: "stdout" | "stderr") => {
    const s = process[stream];
    s.on("error", (e) => fail(stream, e));
    return (text: string): void => {
      if (failure !== null) return;
      pending++;
      const flushed = (e?: Error | null): void => {
        if (e) fail(stream, e);
        pending--;
        done();
      };
      try {
        s.write(text, flushed);
      } catch (e) {
        flushed(e as Error);
      }
    };
  };
  const io: CommandIO = {
    stdout: writer("stdout"),
    stderr: writer("stderr"),
    stderrIsTTY: process.stderr.isTTY === true,
    readStdin: readProcessStdin,
  };
  const finish = async (code: number): Promise<number> => {
    if (pending > 0 && failure === null) await new Promise<void>((resolve) => (settle = resolve));
    const f = failure as StreamFailure | null;
    if (f === null) return code;
    if (f.code === "EPIPE" || f.stream === "stderr")
      return f.code === "EPIPE" ? EXIT_BROKEN_PIPE : 2;
    const err = new IoError(
      "polgrad",
      "stdout",
      mustBe(
        "polgrad",
        "stdout",
        "writable",
        `${f.code} (${safeText(f.message.replace(/^[A-Z]+: /, ""))})`,
      ),
    );
    await new Promise<void>((resolve) => {
      try {
        process.stderr.write(renderError(err, json, [], command), () => resolve());
      } catch {
        resolve();
      }
    });
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
