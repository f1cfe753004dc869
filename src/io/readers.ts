/**
 * The one registry of tensor-file formats (docs/io.md#readers): each reader names its format, the
 * file extensions it owns, a sniff of the first bytes, and a pure parse of the whole file's bytes
 * (no `node:` import anywhere below this module, so the same parsers can serve a browser entry).
 * The file readers, `polgrad` commands and the fuzz suite all go through {@link TENSOR_READERS};
 * a new format is one more entry here.
 */
import { fmtShape, fmtValue } from "../core/message.js";
import { requireBytes, requireObject, requirePath, requireString } from "../core/validate.js";
import { ioError } from "./_internal/ioError.js";
import { parseJsonBytes } from "./_internal/jsonText.js";
import {
  checkMaxElements,
  checkTopLevelKeys,
  elementBudget,
  takeElements,
  tooManyTensors,
} from "./_internal/limits.js";
import { extensionOf } from "./extension.js";
import { NPY_READER } from "./npy.js";
import { NPZ_READER } from "./npz.js";
import { parseSafetensorsAs, SAFETENSORS_EXTENSIONS } from "./safetensors.js";
import { tensorsFromJsonAs } from "./tensorsFromJson.js";
import {
  DEFAULT_MAX_ELEMENTS,
  DEFAULT_MAX_JSON_BYTES,
  DEFAULT_MAX_SAFETENSORS_BYTES,
  MAX_FILE_TENSORS,
  MAX_SAFETENSORS_HEADER_BYTES,
  type ReadOptions,
  type TensorReader,
  type TensorSet,
} from "./tensorTypes.js";
import { PT_READER } from "./torchPt.js";

export type { TensorReader } from "./tensorTypes.js";

/** Bytes a caller should pass to {@link readerFor} as `head` for the sniffs to decide. */
export const SNIFF_BYTES = 4096;

function sniffSafetensors(head: Uint8Array): boolean {
  if (head.length < 9 || head[8] !== 0x7b) return false;
  const n = new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true);
  return n >= 2n && n <= BigInt(MAX_SAFETENSORS_HEADER_BYTES);
}

/** JSON batch: optional BOM and blanks, then `{`, blanks, and a `"` opening the first key. */
function sniffJson(head: Uint8Array): boolean {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  const blank = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
  while (blank(head[i])) i++;
  if (head[i] !== 0x7b) return false;
  i++;
  while (blank(head[i])) i++;
  return head[i] === 0x22;
}

/**
 * A JSON batch: its top-level keys counted over the bytes before the parse (at most
 * {@link MAX_FILE_TENSORS} tensors), its elements drawn from `maxElements` (after the parse: a
 * JSON file holds at most one element per 2 bytes, within its 256 MiB limit).
 */
function parseJsonBatch(
  fn: string,
  bytes: Uint8Array,
  path: string,
  maxElements: number = DEFAULT_MAX_ELEMENTS,
): TensorSet {
  const fail = (arg: string, rule: string, actual: string) => ioError(fn, path, arg, rule, actual);
  checkTopLevelKeys(fail, "json", bytes);
  const set = tensorsFromJsonAs(fn, parseJsonBytes(fn, bytes, path), path);
  if (set.tensors.size > MAX_FILE_TENSORS) throw tooManyTensors(fail, "json", set.tensors.size);
  const budget = elementBudget(maxElements);
  for (const [name, t] of set.tensors) {
    takeElements(fail, budget, name, t.data.length, `shape ${fmtShape(t.shape)}`);
  }
  return set;
}

/**
 * Every registered reader, in sniff order.
 *
 * Format: safetensors (docs/io.md#safetensors: u64 LE header length, JSON header, byte buffer),
 * JSON batches (docs/io.md#json-batches: an object of nested arrays), NumPy `.npy` (one array,
 * named after the file) and `.npz` (a zip of `.npy`), and PyTorch `.pt`/`.pth` (a `torch.save`
 * zip read by a restricted unpickler that executes nothing; docs/io.md#pt).
 *
 * @derivation docs/io.md#readers
 * @enforcedBy test/io/readers.test.ts > TENSOR_READERS > property: every reader's parse returns a tensor set or throws a PolgradError on any bytes
 * @enforcedBy test/io/readers.test.ts > TENSOR_READERS > identity: parse agrees with the file reader on the same bytes
 * @since 0.1.0
 */
export const TENSOR_READERS: readonly TensorReader[] = Object.freeze([
  Object.freeze({
    format: "safetensors",
    extensions: SAFETENSORS_EXTENSIONS,
    defaultMaxBytes: DEFAULT_MAX_SAFETENSORS_BYTES,
    sniff: sniffSafetensors,
    parse: (fn: string, bytes: Uint8Array, path: string, maxElements?: number) =>
      parseSafetensorsAs(fn, bytes, path, maxElements),
  }),
  Object.freeze({
    format: "json",
    extensions: Object.freeze([".json"]),
    defaultMaxBytes: DEFAULT_MAX_JSON_BYTES,
    sniff: sniffJson,
    parse: parseJsonBatch,
  }),
  NPY_READER,
  NPZ_READER,
  PT_READER,
]);

export { extensionOf } from "./extension.js";

/** The reader owning `path`'s extension, or undefined. @internal */
export function readerByExtension(path: string): TensorReader | undefined {
  const ext = typeof path === "string" ? extensionOf(path) : "";
  return TENSOR_READERS.find((r) => r.extensions.includes(ext));
}

/**
 * Choose the reader of a file: by its extension (case-insensitive), else by sniffing `head` (the
 * first {@link SNIFF_BYTES} bytes), else an IoError.
 *
 * Format: extensions `.safetensors`, `.json`; sniffs: safetensors when byte 8 is `{` and the u64
 * header length is in [2, 100 MB]; JSON when the first non-blank bytes are `{` and `"`.
 *
 * @param fn - The public function to name in errors.
 * @param path - The file path (only its extension is read).
 * @param head - The file's first bytes, when the caller has them.
 * @returns The reader.
 * @throws {IoError} E_IO (arg `path`) when neither the extension nor the bytes are recognised.
 * @derivation docs/io.md#readers
 * @enforcedBy test/io/readers.test.ts > readerFor > golden: the extension wins, then the sniff
 * @enforcedBy test/io/batch.test.ts > readTensors > rejects: an extension no reader owns, with bytes no reader recognises
 * @since 0.1.0
 */
export function readerFor(fn: string, path: string, head?: Uint8Array): TensorReader {
  requireString("readerFor", "fn", fn);
  requirePath(fn, "path", path);
  if (head !== undefined) requireBytes(fn, "head", head);
  const byExt = readerByExtension(path);
  if (byExt !== undefined) return byExt;
  const sniffed = head === undefined ? undefined : TENSOR_READERS.find((r) => r.sniff(head));
  if (sniffed !== undefined) return sniffed;
  const ext = typeof path === "string" ? extensionOf(path) : "";
  const exts = TENSOR_READERS.flatMap((r) => r.extensions);
  throw ioError(
    fn,
    String(path),
    "path",
    `a ${exts.join(" or ")} file (or bytes recognised as one)`,
    ext === "" ? `no extension (${fmtValue(path)})` : `extension ${ext}`,
  );
}

/**
 * Parse bytes whose format is sniffed (the extension of `label`, if any, first). @internal
 */
export function tensorsFromBytesAs(
  fn: string,
  bytes: Uint8Array,
  label: string,
  maxElements: number = DEFAULT_MAX_ELEMENTS,
): TensorSet {
  const reader = readerFor(fn, label, bytes.subarray(0, SNIFF_BYTES));
  if (bytes.length > reader.defaultMaxBytes) {
    throw ioError(
      fn,
      label,
      "size",
      `at most ${reader.defaultMaxBytes} bytes (${reader.format})`,
      `${bytes.length} bytes`,
    );
  }
  return reader.parse(fn, bytes, label, maxElements);
}

/**
 * Parse the bytes of a batch held in memory (the CLI's `--batch -`), the format sniffed from the
 * first bytes.
 *
 * Format: as {@link readTensors}; `label` names the source in errors (e.g. `<stdin>`).
 *
 * @param bytes - The whole file.
 * @param label - The name of the source in errors. @defaultValue "<bytes>"
 * @param options - `maxElements`: refuse more elements in all tensors (default 2^32), checked
 *   before they are allocated.
 * @returns Every tensor by name, in file order.
 * @throws {IoError} E_IO when no reader recognises the bytes, or any reader error.
 * @throws {ConfigError} E_CONFIG when `options.maxElements` is not a positive integer.
 * @derivation docs/io.md#readers
 * @enforcedBy test/io/names.test.ts > readTensorsFromBytes > golden: every format is sniffed from its bytes
 * @since 0.1.0
 */
export function readTensorsFromBytes(
  bytes: Uint8Array,
  label = "<bytes>",
  options: Pick<ReadOptions, "maxElements"> = {},
): TensorSet {
  requireBytes("readTensorsFromBytes", "bytes", bytes);
  requireString("readTensorsFromBytes", "label", label);
  requireObject("readTensorsFromBytes", "options", options, "an options object");
  const fn = "readTensorsFromBytes";
  return tensorsFromBytesAs(fn, bytes, label, checkMaxElements(fn, options.maxElements));
}
