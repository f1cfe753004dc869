/**
 * readBatch: a batch file or folder read through the reader registry and validated as a Batch (the
 * Node half of ./batch.ts, which stays free of `node:` imports for the browser entry).
 */

import { requirePath } from "../core/validate.js";
import { type Batch, type ReadBatchOptions, toBatchAs } from "./batch.js";
import { readTensorsAs } from "./readTensors.js";

/**
 * Read a batch file (any registered format) or a folder of tensor files and validate it as a
 * {@link Batch}.
 *
 * Format: {@link readTensors} then {@link toBatch}; see docs/io.md#batches.
 *
 * @param path - The file or folder path.
 * @param options - `require` (extra required names), `maxBytes` (size limit, checked first),
 *   `maxElements` (element cap from the shapes, docs/io.md#bounds-on-hostile-files) and the name
 *   options (names, rename, strict, responseSlice).
 * @returns The validated batch with its source (path, format, stored dtypes).
 * @throws {IoError} E_IO for any read or validation failure (see {@link readTensors}, {@link toBatch}).
 * @throws {ConfigError} E_CONFIG when `options.maxBytes` or `options.maxElements` is not a
 *   positive integer.
 * @derivation docs/io.md#batches
 * @enforcedBy test/io/batch.test.ts > readBatch > golden: a json batch with nan and infinity at padding
 * @enforcedBy test/io/batch.test.ts > readBatch > golden: a safetensors batch with f32 logprobs and a bool mask
 * @since 0.1.0
 */
export function readBatch(path: string, options: ReadBatchOptions = {}): Batch {
  requirePath("readBatch", "path", path);
  const fn = "readBatch";
  return toBatchAs(fn, readTensorsAs(fn, path, options), options);
}
