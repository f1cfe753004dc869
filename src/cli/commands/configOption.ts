/**
 * The `--config JSON|@file.json` option of `loss` and `verify`: one strict parser for both forms
 * (duplicate keys rejected, nesting bounded and parsed iteratively), so that the inline form can
 * no longer keep the last of two equal keys while the file form rejects them.
 */
import { fmtValue, safeText } from "../../core/message.js";
import { fail, UsageError } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { CommandIO, OptionValues } from "../command.js";

/** Largest config read from standard input. */
const MAX_STDIN_CONFIG_BYTES = 2 ** 20;

async function readConfigStdin(
  fn: string,
  io: CommandIO | undefined,
): Promise<{ json: unknown; source: string }> {
  if (io?.readStdin === undefined) {
    throw fail(UsageError, fn, "--config", "JSON or @file.json here (no stdin)", "-");
  }
  const { parseJsonBytes } = await import("../../io/_internal/jsonText.js");
  return {
    json: parseJsonBytes(fn, io.readStdin(MAX_STDIN_CONFIG_BYTES), "<stdin>"),
    source: "<stdin>",
  };
}

/**
 * Refuse `--batch -` with `--config -`: standard input holds one of them. @internal
 */
export function checkOneStdin(fn: string, values: OptionValues): void {
  if (values.batch === "-" && values.config === "-") {
    throw fail(
      UsageError,
      fn,
      "--config",
      "a JSON text or @file.json when --batch is - (stdin holds one input)",
      "- with --batch -",
    );
  }
}

/**
 * Read a `--config` value as JSON: `@path` reads the file (a regular file; strict JSON), `-` reads
 * standard input (at most 1 MiB, strict JSON), anything else is inline JSON parsed by the same
 * strict parser.
 *
 * @param fn - The command, e.g. `polgrad loss`, named in errors.
 * @param raw - The option's value.
 * @param io - The command's streams (standard input for `-`).
 * @returns The parsed JSON value and where it came from (`--config`, the path or `<stdin>`).
 * @throws {UsageError} E_USAGE for inline text that is not strict JSON (duplicate key, too deep,
 *   syntax), with the reason and column, or an empty `@`.
 * @throws {IoError} E_IO for an unreadable or invalid `@file`.
 */
export async function readConfigValue(
  fn: string,
  raw: string,
  io?: CommandIO,
): Promise<{ json: unknown; source: string }> {
  if (raw === "-") return readConfigStdin(fn, io);
  if (raw.startsWith("@")) {
    const path = raw.slice(1);
    if (path === "") {
      throw fail(
        UsageError,
        fn,
        "--config",
        "a JSON object or @file.json",
        `${fmtValue(raw)} (no file name)`,
      );
    }
    const { readJsonFile } = await import("../../io/readJsonFile.js");
    return { json: readJsonFile(path, fn), source: path };
  }
  const { parseStrictJson } = await import("../../io/_internal/strictJson.js");
  const parsed = parseStrictJson(raw);
  if (!parsed.ok) {
    throw fail(
      UsageError,
      fn,
      "--config",
      "a JSON object or @file.json",
      `invalid JSON (${safeText(parsed.reason)} at line ${parsed.line}, column ${parsed.column})`,
    );
  }
  return { json: parsed.value, source: "--config" };
}

/**
 * Parse a `--config` value as a policy-loss config ({@link readConfigValue}, then
 * parsePolicyLossConfig).
 *
 * @param fn - The command, e.g. `polgrad loss`, named in errors.
 * @param raw - The option's value.
 * @returns The config and where it came from (`--config` or the path).
 * @throws {UsageError} E_USAGE / {IoError} E_IO as {@link readConfigValue}.
 * @throws {ConfigError} E_CONFIG (and E_UNKNOWN_NAME) as parsePolicyLossConfig.
 */
export async function readConfigOption(
  fn: string,
  raw: string,
  io?: CommandIO,
): Promise<{ config: PolicyLossConfig; source: string }> {
  const { json, source } = await readConfigValue(fn, raw, io);
  const { parsePolicyLossConfig } = await import("../../io/configJson.js");
  return { config: parsePolicyLossConfig(json, source), source };
}
