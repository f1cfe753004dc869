/**
 * Read every named tensor of a batch file, dispatching on the extension: `.safetensors` (binary,
 * docs/io.md#safetensors) or `.json` (docs/io.md#json-batches).
 */
import { extname } from "node:path";
import { fmtValue } from "../core/message.js";
import { ioError } from "./_internal/files.js";
import { readJsonFile } from "./readJsonFile.js";
import { readSafetensorsAs } from "./safetensors.js";
import { tensorsFromJsonAs } from "./tensorsFromJson.js";
import type { ReadOptions, TensorSet } from "./tensorTypes.js";

/**
 * Read all named tensors of a `.safetensors` or `.json` batch file.
 *
 * Format: chosen by the extension (case-insensitive); see docs/io.md#safetensors and
 * docs/io.md#json-batches. Non-finite values are kept as read (padding may hold junk).
 *
 * @param path - The file path, ending in `.safetensors` or `.json`.
 * @param options - `maxBytes`: refuse larger files (defaults 4 GiB / 256 MiB), checked first.
 * @returns Every tensor by name, in file order, with the file's metadata.
 * @throws {IoError} E_IO for another extension, or any reader error of the chosen format.
 * @throws {ConfigError} E_CONFIG when `options.maxBytes` is not a positive integer.
 * @derivation docs/io.md#tensor-sets
 * @enforcedBy test/io/batch.test.ts > readTensors > rejects: an extension other than .safetensors or .json
 * @since 0.1.0
 */
export function readTensors(path: string, options: ReadOptions = {}): TensorSet {
  return readTensorsAs("readTensors", path, options);
}

/** {@link readTensors} reporting errors as `fn`. @internal */
export function readTensorsAs(fn: string, path: string, options: ReadOptions): TensorSet {
  const ext = typeof path === "string" ? extname(path).toLowerCase() : "";
  if (ext === ".safetensors") return readSafetensorsAs(fn, path, options);
  if (ext === ".json") return tensorsFromJsonAs(fn, readJsonFile(path, fn, options), path);
  throw ioError(
    fn,
    String(path),
    "path",
    "a .safetensors or .json file",
    ext === "" ? `no extension (${fmtValue(path)})` : `extension ${ext}`,
  );
}
