/**
 * Read every named tensor of a batch file through the reader registry (./readers.ts): by the
 * extension, else by sniffing the first bytes. The kind and size are checked before the file is
 * opened; safetensors files are read header first, other formats whole and parsed by their pure
 * reader.
 */
import { closeSync } from "node:fs";
import { checkFileSize, checkMaxBytes, openForRead, readRange } from "./_internal/files.js";
import { readerByExtension, readerFor, SNIFF_BYTES } from "./readers.js";
import { readOpenSafetensors } from "./readSafetensors.js";
import type { ReadOptions, TensorSet } from "./tensorTypes.js";
import { DEFAULT_MAX_SAFETENSORS_BYTES } from "./tensorTypes.js";

/**
 * Read all named tensors of a `.safetensors` or `.json` batch file.
 *
 * Format: chosen by the extension (case-insensitive), else by the first bytes (docs/io.md#readers);
 * see docs/io.md#safetensors and docs/io.md#json-batches. Non-finite values are kept as read
 * (padding may hold junk). The path must be a regular file (a FIFO is rejected before open).
 *
 * @param path - The file path, ending in `.safetensors` or `.json`.
 * @param options - `maxBytes`: refuse larger files (defaults 4 GiB / 256 MiB), checked first.
 * @returns Every tensor by name, in file order, with the file's metadata.
 * @throws {IoError} E_IO for an unrecognised format, a file that is not a regular file, or any
 *   reader error of the chosen format.
 * @throws {ConfigError} E_CONFIG when `options.maxBytes` is not a positive integer.
 * @derivation docs/io.md#tensor-sets
 * @enforcedBy test/io/batch.test.ts > readTensors > rejects: an extension other than .safetensors or .json
 * @enforcedBy test/hardening/bounded.test.ts > file readers > regression: a fifo, a directory and a device are rejected before open
 * @since 0.1.0
 */
export function readTensors(path: string, options: ReadOptions = {}): TensorSet {
  return readTensorsAs("readTensors", path, options);
}

/** {@link readTensors} reporting errors as `fn`. @internal */
export function readTensorsAs(fn: string, path: string, options: ReadOptions): TensorSet {
  let reader = readerByExtension(path);
  if (reader === undefined && typeof path !== "string") reader = readerFor(fn, path);
  const limit = checkMaxBytes(
    fn,
    options.maxBytes,
    reader?.defaultMaxBytes ?? DEFAULT_MAX_SAFETENSORS_BYTES,
  );
  const file = openForRead(fn, path, limit);
  try {
    if (reader === undefined) {
      reader = readerFor(fn, path, readRange(fn, path, file, 0, Math.min(file.size, SNIFF_BYTES)));
      // A sniffed format keeps its own default limit.
      checkFileSize(
        fn,
        path,
        file.size,
        checkMaxBytes(fn, options.maxBytes, reader.defaultMaxBytes),
      );
    }
    if (reader.format === "safetensors") return readOpenSafetensors(fn, path, file);
    return reader.parse(fn, readRange(fn, path, file, 0, file.size), path);
  } finally {
    closeSync(file.fd);
  }
}
