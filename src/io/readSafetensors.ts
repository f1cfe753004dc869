/**
 * The safetensors file reader (docs/io.md#safetensors): the kind and size are checked before the
 * file is opened, the header is read and validated before the byte buffer, and the byte-level
 * rules are those of the pure parser in ./safetensors.ts.
 */
import { closeSync } from "node:fs";
import {
  checkMaxBytes,
  fmtBytes,
  ioError,
  type OpenFile,
  openForRead,
  type ReadScratch,
  readRange,
  readRangeInto,
} from "./_internal/files.js";
import { assemble, type Fail, headerLength, parseHeader } from "./safetensors.js";
import { DEFAULT_MAX_SAFETENSORS_BYTES, type ReadOptions, type TensorSet } from "./tensorTypes.js";

/**
 * Read a safetensors file: kind and size checked (statSync) before opening, header validated
 * before the byte buffer is read, every length checked before use.
 *
 * Format: as {@link parseSafetensors}; the file must be a regular file of at most
 * `options.maxBytes` bytes (default 4 GiB).
 *
 * @param path - The file path.
 * @param options - `maxBytes`: refuse larger files (checked before reading).
 * @returns Every tensor by name, in header order, with the `__metadata__` map.
 * @throws {IoError} E_IO when the file is missing, not a regular file (a FIFO, a device, a
 *   directory), over the limit, or breaks any rule of docs/io.md#safetensors.
 * @throws {ConfigError} E_CONFIG when `options.maxBytes` is not a positive integer.
 * @derivation docs/io.md#safetensors
 * @enforcedBy test/io/safetensors.roundtrip.test.ts > readSafetensors > golden: every dtype round-trips through writeSafetensors
 * @enforcedBy test/io/safetensors.hostile.test.ts > readSafetensors > rejects: a file over options.maxBytes before reading it
 * @enforcedBy test/hardening/bounded.test.ts > file readers > regression: a fifo, a directory and a device are rejected before open
 * @since 0.1.0
 */
export function readSafetensors(path: string, options: ReadOptions = {}): TensorSet {
  return readSafetensorsAs("readSafetensors", path, options);
}

/** {@link readSafetensors} reporting errors as `fn`. @internal */
export function readSafetensorsAs(fn: string, path: string, options: ReadOptions): TensorSet {
  const maxBytes = checkMaxBytes(fn, options.maxBytes, DEFAULT_MAX_SAFETENSORS_BYTES);
  const file = openForRead(fn, path, maxBytes);
  try {
    return readOpenSafetensors(fn, path, file);
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Read an open safetensors file: the 8-byte length, the header, then the buffer (into `scratch`
 * when given: the tensors are then valid until its next use). @internal
 */
export function readOpenSafetensors(
  fn: string,
  path: string,
  file: OpenFile,
  scratch?: ReadScratch,
): TensorSet {
  const fail: Fail = (arg, rule, actual) => ioError(fn, path, arg, rule, actual);
  if (file.size < 8)
    throw fail("file", "at least 8 bytes (the header length)", fmtBytes(file.size));
  const n = headerLength(fail, readRange(fn, path, file, 0, 8), file.size);
  const bufferLength = file.size - 8 - n;
  const header = parseHeader(fail, fn, path, readRange(fn, path, file, 8, n), bufferLength);
  // The body is read into memory of our own: its aligned F64 and byte tensors are views of it.
  const body =
    scratch === undefined
      ? readRange(fn, path, file, 8 + n, bufferLength)
      : readRangeInto(fn, path, file, 8 + n, scratch.take(fn, path, bufferLength));
  return assemble(path, header, fail, body, true);
}
