/**
 * The safetensors file reader (docs/io.md#safetensors): the kind and size are checked before the
 * file is opened, the header is read and validated before the byte buffer, and the byte-level
 * rules are those of the pure parser in ./safetensors.ts.
 */
import { closeSync } from "node:fs";
import {
  allocBytes,
  checkMaxBytes,
  fmtBytes,
  ioError,
  type OpenFile,
  openForRead,
  type ReadScratch,
  readRange,
  readRangeInto,
} from "./_internal/files.js";
import { checkMaxElements, TopLevelKeys, tooManyTensors } from "./_internal/limits.js";
import { extensionOf } from "./extension.js";
import {
  assemble,
  type Fail,
  type Header,
  headerLength,
  parseHeader,
  SAFETENSORS_EXTENSIONS,
} from "./safetensors.js";
import {
  DEFAULT_MAX_ELEMENTS,
  DEFAULT_MAX_SAFETENSORS_BYTES,
  MAX_FILE_TENSORS,
  type NamedTensor,
  type ReadOptions,
  type TensorSet,
} from "./tensorTypes.js";

/**
 * Read a safetensors file: kind and size checked (statSync) before opening, header validated
 * before the byte buffer is read, every length checked before use.
 *
 * Format: as {@link parseSafetensors}; the file must be a regular file of at most
 * `options.maxBytes` bytes (default 4 GiB).
 *
 * @param path - The file path.
 * @param options - `maxBytes`: refuse larger files (checked before reading); `maxElements`:
 *   refuse more elements in all tensors (checked from the header, default 2^32).
 * @returns Every tensor by name, in header order, with the `__metadata__` map.
 * @throws {IoError} E_IO when the file is missing, not a regular file (a FIFO, a device, a
 *   directory), over the limit, or breaks any rule of docs/io.md#safetensors (a header of more
 *   than 65536 entries is refused while it is read).
 * @throws {ConfigError} E_CONFIG when `options.maxBytes` or `options.maxElements` is not a
 *   positive integer.
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
  const maxElements = checkMaxElements(fn, options.maxElements);
  const file = openForRead(fn, path, maxBytes);
  try {
    return readOpenSafetensors(fn, path, file, undefined, maxElements);
  } finally {
    closeSync(file.fd);
  }
}

/** Bytes of the header read at a time while its entries are counted. */
const HEADER_CHUNK = 2 ** 20;

/**
 * The `n` header bytes after the length field, read a chunk at a time with the entries counted
 * as they come: a header of more than {@link MAX_FILE_TENSORS} entries is refused after the chunk
 * that shows it, the rest neither read nor touched (a 98 MB header of 1.63 M entries costs one
 * 4 MB read). @internal
 */
export function readHeaderBytes(fn: string, path: string, file: OpenFile, n: number): Uint8Array {
  const header = allocBytes(fn, path, "header", n);
  const keys = new TopLevelKeys();
  for (let at = 0; at < n; at += HEADER_CHUNK) {
    const part = readRangeInto(
      fn,
      path,
      file,
      8 + at,
      header.subarray(at, Math.min(n, at + HEADER_CHUNK)),
    );
    // A header that is no object is left whole to parseHeader's first-byte rule.
    if (header[0] === 0x7b && !keys.push(part, MAX_FILE_TENSORS + 1)) {
      throw tooManyTensors((a, r, g) => ioError(fn, path, a, r, g), "header", keys.count);
    }
  }
  return header;
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
  maxElements: number = DEFAULT_MAX_ELEMENTS,
): TensorSet {
  const fail: Fail = (arg, rule, actual) => ioError(fn, path, arg, rule, actual);
  if (file.size < 8)
    throw fail("file", "at least 8 bytes (the header length)", fmtBytes(file.size));
  const n = headerLength(fail, readRange(fn, path, file, 0, 8), file.size);
  const bufferLength = file.size - 8 - n;
  const headerBytes = readHeaderBytes(fn, path, file, n);
  const header = parseHeader(fail, fn, path, headerBytes, bufferLength, maxElements, true);
  // The body is read into memory of our own: its aligned F64 and byte tensors are views of it.
  const body =
    scratch === undefined
      ? readRange(fn, path, file, 8 + n, bufferLength)
      : readRangeInto(fn, path, file, 8 + n, scratch.take(fn, path, bufferLength));
  return assemble(path, header, fail, body, true);
}

/**
 * A safetensors file read a block of rows at a time (docs/io.md#reading-by-rows): the header is
 * read and validated as {@link readSafetensors} validates it, then each call reads only the rows
 * it is asked for. @internal
 */
export interface SafetensorsRowReader {
  /** The header's tensors with their dtypes and shapes and no values (for name resolution). */
  readonly shapes: TensorSet;
  /**
   * Every tensor whose outermost dimension is `B`, cut to rows [b0, b1); every other tensor
   * whole. Decoded as readSafetensors decodes the whole file (the same `assemble`); the arrays are
   * valid until the next call. With `only`, the set holds that tensor alone.
   */
  rows(B: number, b0: number, b1: number, only?: string): TensorSet;
  /** Close the file. */
  close(): void;
}

/**
 * Open `path` for reading by rows when its extension is one the reader registry reads as
 * safetensors (`.safetensors`; the registry itself is not loaded: its other readers cost about
 * 5 MiB of a process's memory); null for any other path, and for any file the whole read must
 * judge (it cannot be opened, its header breaks a rule): the caller reads it whole and reports
 * what that read reports. @internal
 */
export function openSafetensorsRowReader(fn: string, path: string): SafetensorsRowReader | null {
  if (typeof path !== "string" || !SAFETENSORS_EXTENSIONS.includes(extensionOf(path))) return null;
  let file: OpenFile;
  try {
    file = openForRead(fn, path, DEFAULT_MAX_SAFETENSORS_BYTES);
  } catch {
    return null;
  }
  const fail: Fail = (arg, rule, actual) => ioError(fn, path, arg, rule, actual);
  let header: Header;
  let bodyAt: number;
  try {
    if (file.size < 8) throw fail("file", "at least 8 bytes (the header length)", "fewer");
    const n = headerLength(fail, readRange(fn, path, file, 0, 8), file.size);
    bodyAt = 8 + n;
    const headerBytes = readHeaderBytes(fn, path, file, n);
    header = parseHeader(
      fail,
      fn,
      path,
      headerBytes,
      file.size - bodyAt,
      DEFAULT_MAX_ELEMENTS,
      true,
    );
  } catch {
    closeSync(file.fd);
    return null;
  }
  const shapes = new Map<string, NamedTensor>();
  for (const e of header.entries)
    shapes.set(e.name, { dtype: e.dtype, shape: e.shape, data: new Uint8Array(0) });
  let scratch = new Uint8Array(0);
  return {
    shapes: { path, format: "safetensors", tensors: shapes, metadata: header.metadata },
    rows(B: number, b0: number, b1: number, only?: string): TensorSet {
      // The block's bytes in one buffer, each tensor at an 8-byte boundary (so an F64 tensor is
      // a view, as in the whole read), then decoded by the whole read's `assemble`.
      const listed =
        only === undefined ? header.entries : header.entries.filter((e) => e.name === only);
      const cuts = listed.map((e) => {
        const byRows = e.shape.length >= 1 && e.shape[0] === B;
        const rowBytes = byRows ? (e.end - e.begin) / B : 0;
        const from = byRows ? e.begin + b0 * rowBytes : e.begin;
        const length = byRows ? (b1 - b0) * rowBytes : e.end - e.begin;
        const shape = byRows ? [b1 - b0, ...e.shape.slice(1)] : e.shape;
        const count = byRows ? (e.count / B) * (b1 - b0) : e.count;
        return { e, from, length, shape, count };
      });
      let bytes = 0;
      for (const c of cuts) bytes += Math.ceil(c.length / 8) * 8;
      if (scratch.length < bytes) scratch = new Uint8Array(bytes);
      const entries = [];
      let at = 0;
      for (const c of cuts) {
        readRangeInto(fn, path, file, bodyAt + c.from, scratch.subarray(at, at + c.length));
        entries.push({ ...c.e, shape: c.shape, count: c.count, begin: at, end: at + c.length });
        at += Math.ceil(c.length / 8) * 8;
      }
      return assemble(path, { entries, metadata: header.metadata }, fail, scratch, true);
    },
    close(): void {
      closeSync(file.fd);
    },
  };
}
