/** Shared CLI output: the `--json` document, option parsing helpers and error rendering. */
import { mustBe } from "../core/message.js";
import { PolgradError, UsageError } from "../errors.js";
import { toWire } from "../report/wire.js";
import type { CommandIO, OptionValues } from "./command.js";

/** Version of the `--json` document layout. */
export const SCHEMA_VERSION = 1;

/** Write the one `--json` document: `{schema_version, command, ok: true, result}`. */
export function writeJson(io: CommandIO, command: string, result: unknown): void {
  io.stdout(
    `${JSON.stringify({ schema_version: SCHEMA_VERSION, command, ok: true, result: toWire(result) }, null, 2)}\n`,
  );
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
        JSON.stringify(raw),
      ),
    );
  }
  return n;
}

/** Render an error for stderr: `error[E_CODE]: message` (or one JSON line under --json). */
export function renderError(err: unknown, json: boolean, hints: readonly string[] = []): string {
  if (err instanceof PolgradError) {
    if (json) {
      return `${JSON.stringify({ ok: false, error: { code: err.code, name: err.name, fn: err.fn, arg: err.arg ?? null, message: err.message } })}\n`;
    }
    return `error[${err.code}]: ${err.message}\n${hints.map((h) => `Hint: ${h}\n`).join("")}`;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  const detail = process.env.POLGRAD_DEBUG ? `\n${e.stack ?? ""}` : "";
  if (json)
    return `${JSON.stringify({ ok: false, error: { code: "E_INTERNAL", name: e.name, message: e.message } })}\n`;
  return `error[E_INTERNAL]: ${e.message}${detail}\nHint: this is a bug in polgrad; set POLGRAD_DEBUG=1 for the stack and report it.\n`;
}
