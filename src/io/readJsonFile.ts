/**
 * Read one JSON document from a file, strictly (docs/io.md#json-files): the size is checked before
 * reading, the bytes must be UTF-8, the text one RFC 8259 value with no duplicate object keys, and
 * every failure is an IoError naming the file (and, for syntax errors, the line and column).
 */
import { closeSync } from "node:fs";
import { checkMaxBytes, decodeUtf8, ioError, openForRead, readRange } from "./_internal/files.js";
import { parseStrictJson } from "./_internal/strictJson.js";
import { DEFAULT_MAX_JSON_BYTES, type ReadOptions } from "./tensorTypes.js";

/**
 * Read and parse a JSON file.
 *
 * Format: UTF-8 (a leading BOM is ignored) RFC 8259 JSON; duplicate keys in one object are an
 * error (a typo must not be silently overridden); nesting at most 256 levels deep.
 *
 * @param path - The file path.
 * @param fn - The public function to name in errors (e.g. `"readBatch"`).
 * @param options - `maxBytes`: refuse larger files (default 256 MiB), checked before reading.
 * @returns The parsed value (objects are plain objects; numbers are float64).
 * @throws {IoError} E_IO when the file is missing, a directory, over the limit, not UTF-8, or not
 *   valid JSON (the message gives the line and column).
 * @throws {ConfigError} E_CONFIG when `options.maxBytes` is not a positive integer.
 * @derivation docs/io.md#json-files
 * @enforcedBy test/io/readJsonFile.test.ts > readJsonFile > rejects: malformed json with its line and column
 * @enforcedBy test/io/readJsonFile.test.ts > readJsonFile > rejects: a missing file and a directory
 * @since 0.1.0
 */
export function readJsonFile(path: string, fn: string, options: ReadOptions = {}): unknown {
  const maxBytes = checkMaxBytes(fn, options.maxBytes, DEFAULT_MAX_JSON_BYTES);
  const file = openForRead(fn, path, maxBytes);
  let bytes: Uint8Array;
  try {
    bytes = readRange(fn, path, file, 0, file.size);
  } finally {
    closeSync(file.fd);
  }
  const text = decodeUtf8(fn, path, "json", bytes);
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
