/**
 * Read one JSON document from a file, strictly (docs/io.md#json-files): the kind and size are
 * checked before the file is opened, the bytes must be UTF-8, the text one RFC 8259 value with no
 * duplicate object keys, and every failure is an IoError naming the file (and, for syntax errors,
 * the line and column).
 */

import { requireObject, requirePath, requireString } from "../core/validate.js";
import { checkMaxBytes, readFileBytes } from "./_internal/files.js";
import { parseJsonBytes } from "./_internal/jsonText.js";
import { DEFAULT_MAX_JSON_BYTES, type ReadOptions } from "./tensorTypes.js";

/**
 * Read and parse a JSON file.
 *
 * Format: UTF-8 (a leading BOM is ignored) RFC 8259 JSON; duplicate keys in one object are an
 * error (a typo must not be silently overridden); nesting at most 256 levels deep (parsed
 * iteratively). The path must be a regular file: a FIFO, socket, device or directory is
 * rejected before it is opened.
 *
 * @param path - The file path.
 * @param fn - The public function to name in errors (e.g. `"readBatch"`).
 * @param options - `maxBytes`: refuse larger files (default 256 MiB), checked before reading.
 * @returns The parsed value (objects are plain objects; numbers are float64).
 * @throws {IoError} E_IO when the file is missing, not a regular file, over the limit, not
 *   UTF-8, or not valid JSON (the message gives the line and column).
 * @throws {ConfigError} E_CONFIG when `options.maxBytes` is not a positive integer.
 * @derivation docs/io.md#json-files
 * @enforcedBy test/io/readJsonFile.test.ts > readJsonFile > rejects: malformed json with its line and column
 * @enforcedBy test/io/readJsonFile.test.ts > readJsonFile > rejects: a missing file and a directory
 * @enforcedBy test/hardening/bounded.test.ts > file readers > regression: a fifo, a directory and a device are rejected before open
 * @since 0.1.0
 */
export function readJsonFile(path: string, fn: string, options: ReadOptions = {}): unknown {
  requireString("readJsonFile", "fn", fn);
  requirePath(fn, "path", path);
  requireObject(fn, "options", options, "an options object");
  const maxBytes = checkMaxBytes(fn, options.maxBytes, DEFAULT_MAX_JSON_BYTES);
  return parseJsonBytes(fn, readFileBytes(fn, path, maxBytes), path);
}
