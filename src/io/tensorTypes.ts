/**
 * The generic result of reading a batch file: named tensors with a shape, the dtype they were
 * stored in, and their values upcast to float64 (floats and integers) or kept as bytes (BOOL, U8).
 * See docs/io.md#tensor-sets.
 */

/** The dtypes polgrad reads from safetensors files (and reports for JSON tensors). */
export const TENSOR_DTYPES = [
  "F64",
  "F32",
  "BF16",
  "F16",
  "BOOL",
  "U8",
  "I64",
  "I32",
  "I16",
  "I8",
  "U64",
  "U32",
  "U16",
] as const;

/** One of the supported storage dtypes. */
export type TensorDtype = (typeof TENSOR_DTYPES)[number];

/** Bytes per element of each dtype. */
export const DTYPE_BYTES: Readonly<Record<TensorDtype, number>> = {
  F64: 8,
  F32: 4,
  BF16: 2,
  F16: 2,
  BOOL: 1,
  U8: 1,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U64: 8,
  U32: 4,
  U16: 2,
};

/** The floating-point dtypes (values tensors must have one of these). */
export const FLOAT_DTYPES: readonly TensorDtype[] = ["F64", "F32", "BF16", "F16"];

/**
 * A tensor as read from a file: row-major values with their shape. Float and integer dtypes are
 * held as float64 (integers exactly, |v| ≤ 2^53); BOOL and U8 as bytes.
 */
export interface NamedTensor {
  /** The dtype the values were stored in (`F64` for JSON numbers, `BOOL` for JSON booleans). */
  readonly dtype: TensorDtype;
  /** The shape, outermost dimension first (`[]` for a scalar). */
  readonly shape: readonly number[];
  /** The values in row-major order; length is the product of `shape`. */
  readonly data: Float64Array | Uint8Array;
}

/**
 * A tensor whose values are decoded on the first read of `data` (then kept): the readers'
 * `lazy` mode. @internal
 */
export function lazyTensor(
  dtype: TensorDtype,
  shape: readonly number[],
  decode: () => Float64Array | Uint8Array,
): NamedTensor {
  let data: Float64Array | Uint8Array | null = null;
  const t: NamedTensor = {
    dtype,
    shape,
    get data(): Float64Array | Uint8Array {
      data ??= decode();
      return data;
    },
  };
  LAZY.add(t);
  return t;
}

/** The tensors {@link lazyTensor} made. */
const LAZY = new WeakSet<object>();

/**
 * Whether `t` is a reader's lazy tensor: its `data` will be a Float64Array or Uint8Array of the
 * product of its shape (the decoders make exactly that), so a check of a tensor set need not
 * read it (checkTensorSet). @internal
 */
export function isLazyTensor(t: unknown): boolean {
  return typeof t === "object" && t !== null && LAZY.has(t);
}

/** The tensor-file formats of the reader registry (docs/io.md#readers). */
export type TensorFormat = "safetensors" | "json" | "npy" | "npz" | "pt";

/** Every named tensor of one file, in file order, plus its string metadata. */
export interface TensorSet {
  /** The file the tensors came from (as given to the reader). */
  readonly path: string;
  /** The file format. */
  readonly format: TensorFormat;
  /** The tensors by name, in the order the file lists them. */
  readonly tensors: ReadonlyMap<string, NamedTensor>;
  /** The `__metadata__` string map (empty when the file has none). */
  readonly metadata: Readonly<Record<string, string>>;
}

/** Options of the file readers. */
export interface ReadOptions {
  /**
   * Refuse files larger than this many bytes, checked before reading. Defaults: 4 GiB for
   * safetensors ({@link DEFAULT_MAX_SAFETENSORS_BYTES}), 256 MiB for JSON
   * ({@link DEFAULT_MAX_JSON_BYTES}).
   */
  readonly maxBytes?: number;
  /**
   * Refuse a file (or a folder, all its files together) whose tensors hold more than this many
   * elements in all, checked from the shapes before any tensor is allocated (docs/io.md#bounds-on-hostile-files).
   * Default {@link DEFAULT_MAX_ELEMENTS}: 2^32, the most a file within the default 4 GiB size
   * limit can store, so a plain file is never refused by it; lower it to bound memory.
   */
  readonly maxElements?: number;
}

/**
 * Default element cap of a file read ({@link ReadOptions.maxElements}): 2^32 = 4 GiB (the
 * default size limit of safetensors, `.npy`, `.npz`, `.pt` and standard input) of one-byte
 * elements. Archives that can expand (an `.npz`'s deflate, a `.pt`'s views) are also bounded by
 * their own file size (docs/io.md#bounds-on-hostile-files).
 */
export const DEFAULT_MAX_ELEMENTS: number = 2 ** 32;

/**
 * Most tensors one file may hold: 65536 (a safetensors header's entries, a JSON batch's keys, a
 * `.pt`'s flattened names; the zip reader's entry cap), checked before the header or pickle's
 * values are built. A batch has about ten.
 */
export const MAX_FILE_TENSORS = 65536;

/** Default size limit of a safetensors file: 4 GiB. */
export const DEFAULT_MAX_SAFETENSORS_BYTES: number = 4 * 2 ** 30;

/** Default size limit of a JSON file: 256 MiB. */
export const DEFAULT_MAX_JSON_BYTES: number = 256 * 2 ** 20;

/** Largest safetensors header accepted: 100 MB (the reference implementation's limit). */
export const MAX_SAFETENSORS_HEADER_BYTES: number = 100_000_000;

/** One tensor-file format: how to recognise it and how to parse its bytes. */
export interface TensorReader {
  /** The format name, as in {@link TensorSet.format}: `"safetensors"`, `"json"`. */
  readonly format: string;
  /** The extensions it owns, lower-case with the dot: `[".safetensors"]`. */
  readonly extensions: readonly string[];
  /** Size limit of a file of this format when `options.maxBytes` is not given. */
  readonly defaultMaxBytes: number;
  /** True when the first bytes of a file look like this format (used when the extension is unknown). */
  readonly sniff: (head: Uint8Array) => boolean;
  /**
   * Parse a whole file's bytes; pure. Every failure is a PolgradError (an IoError naming `path`),
   * for any byte string: lengths are checked before use, allocation is bounded by the input and
   * by `maxElements` (elements in all tensors, default {@link DEFAULT_MAX_ELEMENTS}; see
   * docs/io.md#bounds-on-hostile-files), and nothing recurses on the input's nesting. With
   * `lazy` (internal: the run diagnosis's step reads) a reader may decode a tensor's values on
   * the first read of its `data`, having checked everything else (names, dtypes, shapes, sizes,
   * bounds) first; a value rule (a BOOL byte above 1, an int past 2^53) is then reported on that
   * read, and a tensor never read is never decoded (docs/io.md#lazy-values).
   */
  readonly parse: (
    fn: string,
    bytes: Uint8Array,
    path: string,
    maxElements?: number,
    lazy?: boolean,
  ) => TensorSet;
}
