/**
 * Strict JSON from bytes or text, throwing the readers' IoError (pure: no `node:` import). One
 * parser for every JSON the user hands polgrad — batch files, config files and inline `--config`
 * — so that a duplicate key or 60,000 nested `[` is rejected alike everywhere.
 * @internal
 */
import { decodeUtf8, ioError } from "./ioError.js";
import { parseStrictJson } from "./strictJson.js";

/** Parse `text` strictly; a syntax error is an IoError with its line and column. @internal */
export function parseJsonText(fn: string, text: string, path: string): unknown {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    throw ioError(
      fn,
      path,
      "json",
      "valid JSON",
      `${parsed.reason} at line ${parsed.line}, column ${parsed.column}`,
    );
  }
  return parsed.value;
}

/** Decode UTF-8 (a leading BOM dropped) and parse strictly. @internal */
export function parseJsonBytes(fn: string, bytes: Uint8Array, path: string): unknown {
  return parseJsonText(fn, decodeUtf8(fn, path, "json", bytes), path);
}
