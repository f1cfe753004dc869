/**
 * The `--config JSON|@file.json` option of `loss` and `verify`: one strict parser for both forms
 * (duplicate keys rejected, nesting bounded and parsed iteratively), so that the inline form can
 * no longer keep the last of two equal keys while the file form rejects them.
 */
import { fmtValue, mustBe, safeText } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";

/**
 * Parse a `--config` value: `@path` reads the file (a regular file; strict JSON), anything else is
 * inline JSON parsed by the same strict parser.
 *
 * @param fn - The command, e.g. `polgrad loss`, named in errors.
 * @param raw - The option's value.
 * @returns The config and where it came from (`--config` or the path).
 * @throws {UsageError} E_USAGE for inline text that is not strict JSON (duplicate key, too deep,
 *   syntax), with the reason and column, or an empty `@`.
 * @throws {IoError} E_IO for an unreadable or invalid `@file`.
 * @throws {ConfigError} E_CONFIG (and E_UNKNOWN_NAME) as parsePolicyLossConfig.
 */
export async function readConfigOption(
  fn: string,
  raw: string,
): Promise<{ config: PolicyLossConfig; source: string }> {
  const { parsePolicyLossConfig, readJsonFile } = await import("../../io/configJson.js");
  if (raw.startsWith("@")) {
    const path = raw.slice(1);
    if (path === "") {
      throw new UsageError(
        fn,
        "--config",
        mustBe(fn, "--config", "a JSON object or @file.json", `${fmtValue(raw)} (no file name)`),
      );
    }
    return { config: parsePolicyLossConfig(readJsonFile(path, fn), path), source: path };
  }
  const { parseStrictJson } = await import("../../io/_internal/strictJson.js");
  const parsed = parseStrictJson(raw);
  if (!parsed.ok) {
    throw new UsageError(
      fn,
      "--config",
      mustBe(
        fn,
        "--config",
        "a JSON object or @file.json",
        `invalid JSON (${safeText(parsed.reason)} at line ${parsed.line}, column ${parsed.column})`,
      ),
    );
  }
  return { config: parsePolicyLossConfig(parsed.value, "--config"), source: "--config" };
}
