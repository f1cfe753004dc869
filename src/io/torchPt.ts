/**
 * A reader of PyTorch `torch.save` files (docs/io.md#pt) that never executes pickle: the zip
 * archive `<archive>/data.pkl` · `<archive>/data/<key>` storages · `<archive>/version` ·
 * optional `<archive>/byteorder` is opened by the project's zip reader, `data.pkl` is run by the
 * restricted interpreter of ./_internal/pickle.ts (an allow-list of opcodes and globals that
 * builds descriptors and calls nothing), and the descriptors are gathered from the storages into
 * row-major float64 (or byte) arrays. Nested dicts, lists and tuples are flattened into dotted
 * names. Pure (no `node:` import), like every parser of the reader registry.
 */
import { bf16DecodeTable, f16DecodeTable } from "../core/halfFloat.js";
import { fmtShape, fmtValue } from "../core/message.js";
import { requireBytes, requireString } from "../core/validate.js";
import type { IoError } from "../errors.js";
import { LITTLE_ENDIAN_HOST } from "./_internal/endian.js";
import { fmtBytes, ioError } from "./_internal/ioError.js";
import { tooManyTensors } from "./_internal/limits.js";
import {
  type PyValue,
  pyType,
  type StorageRef,
  type TensorRef,
  unpickle,
} from "./_internal/pickle.js";
import { openZip, type ZipArchive } from "./_internal/zip.js";
import type { TensorReader } from "./tensorTypes.js";
import {
  DEFAULT_MAX_ELEMENTS,
  DTYPE_BYTES,
  lazyTensor,
  MAX_FILE_TENSORS,
  type NamedTensor,
  type TensorSet,
} from "./tensorTypes.js";

/** Default size limit of a `.pt` file: 4 GiB. */
export const DEFAULT_MAX_PT_BYTES: number = 4 * 2 ** 30;

/** Deepest nesting of dicts, lists and tuples that is flattened into names. */
export const MAX_PT_NESTING = 256;

/** Longest flattened name, in UTF-16 code units (a reused long key cannot build huge names). */
export const MAX_PT_NAME = 65536;

/**
 * The metadata key listing, as a JSON array of names, the entries whose value is None (present
 * only when there is one).
 */
export const PT_NONE_KEY = "__none__";

/** Most values the flattening visits: 4 per pickle byte plus 1024 (a tree has fewer than 1 per byte). */
function maxVisits(pickleBytes: number): number {
  return 4 * pickleBytes + 1024;
}

/**
 * Most elements all tensors may hold together, from the file alone: 2^24 plus 2 per file byte.
 * Views may repeat storage elements (an `expand`, a storage under two names), but a real dump
 * materialises little more than one element per byte (bf16 log-probabilities under two names, a
 * bool mask, a [B] expanded to [B, T]: 4 elements per 3 bytes); an 8-byte storage expanded to
 * 2^29 elements is refused, not allocated.
 */
function fileElements(fileBytes: number): number {
  return 2 ** 24 + 2 * fileBytes;
}

/** The elements the tensors may still take, and which bound `left` comes from. */
interface PtBudget {
  left: number;
  /** The file's own bound (2^24 + 2 per byte) is the tighter one, else options.maxElements. */
  readonly fromFile: boolean;
  readonly max: number;
}

type Fail = (arg: string, rule: string, actual: string) => IoError;

interface Storage {
  readonly ref: StorageRef;
  readonly view: DataView;
  readonly bytes: Uint8Array;
}

function isContainer(v: PyValue): v is Extract<PyValue, { kind: "dict" | "list" | "tuple" }> {
  return (
    v !== null &&
    typeof v === "object" &&
    (v.kind === "dict" || v.kind === "list" || v.kind === "tuple")
  );
}

/** A small entry (version, byteorder) as ASCII text, or null when it is longer or not ASCII. */
function smallText(zip: ZipArchive, sizes: Map<string, number>, name: string): string | null {
  if ((sizes.get(name) ?? 0) > 64) return null;
  const b = zip.read(name);
  return b.every((x) => x < 0x80) ? String.fromCharCode(...b) : null;
}

/** The torch archive's entry names, from the first entry's top folder. */
function layout(
  fail: Fail,
  zip: ZipArchive,
  sizes: Map<string, number>,
): { prefix: string; littleEndian: boolean } {
  const first = zip.entries[0]?.name ?? "";
  const slash = first.indexOf("/");
  const prefix = slash > 0 ? first.slice(0, slash) : "";
  if (prefix === "" || !sizes.has(`${prefix}/data.pkl`)) {
    throw fail(
      "zip",
      "a torch.save archive (<archive>/data.pkl in the folder of the first entry)",
      first === "" ? "no entries" : `first entry ${fmtValue(first)}`,
    );
  }
  const dotVersion = `${prefix}/.data/version`;
  const versionName = sizes.has(dotVersion) ? dotVersion : `${prefix}/version`;
  if (!sizes.has(versionName)) {
    throw fail(versionName, "an entry of the archive (torch.save writes it)", "no such entry");
  }
  const version = smallText(zip, sizes, versionName);
  if (version === null || !/^[0-9]{1,9}\n?$/.test(version)) {
    throw fail(
      versionName,
      "a decimal version number",
      version === null ? "other bytes" : fmtValue(version),
    );
  }
  const orderName = `${prefix}/byteorder`;
  if (!sizes.has(orderName)) return { prefix, littleEndian: true };
  const order = smallText(zip, sizes, orderName);
  if (order !== "little" && order !== "big") {
    throw fail(orderName, '"little" or "big"', order === null ? "other bytes" : fmtValue(order));
  }
  return { prefix, littleEndian: order === "little" };
}

interface Flat {
  readonly tensors: { name: string; t: TensorRef }[];
  readonly scalars: Map<string, NamedTensor>;
  readonly metadata: Record<string, string>;
  readonly order: string[];
}

/** Flatten the top-level dict into dotted names, iteratively, in file order (pre-order). */
function flatten(fail: Fail, root: PyValue, arg: string, pickleBytes: number): Flat {
  if (root === null || typeof root !== "object" || root.kind !== "dict") {
    throw fail(
      arg,
      "a dict of names at the top level (torch.save of a dict or state_dict)",
      pyType(root),
    );
  }
  const out: Flat = { tensors: [], scalars: new Map(), metadata: {}, order: [] };
  const seen = new Set<string>();
  const none: string[] = [];
  const claim = (name: string): void => {
    if (seen.size >= MAX_FILE_TENSORS) throw tooManyTensors(fail, arg, seen.size + 1);
    if (seen.has(name) || name === PT_NONE_KEY) {
      throw fail(
        name,
        "a name given once (flattened with '.'; __none__ is reserved)",
        seen.has(name) ? "a duplicate" : "the reserved name",
      );
    }
    seen.add(name);
  };
  const limit = maxVisits(pickleBytes);
  let visits = 0;
  const work: { v: PyValue; name: string; depth: number }[] = [{ v: root, name: "", depth: 0 }];
  while (work.length > 0) {
    const { v, name, depth } = work.pop() as { v: PyValue; name: string; depth: number };
    if (++visits > limit) {
      throw fail(arg, `at most ${limit} values to flatten (no heavily shared containers)`, "more");
    }
    if (isContainer(v)) {
      if (depth >= MAX_PT_NESTING) {
        throw fail(
          name,
          `nested at most ${MAX_PT_NESTING} levels (no cyclic containers)`,
          "deeper",
        );
      }
      const prefix = depth === 0 ? "" : `${name}.`;
      const kids: { v: PyValue; name: string; depth: number }[] =
        v.kind === "dict"
          ? v.keys.map((k, i) => ({
              v: v.values[i] as PyValue,
              name: prefix + String(k),
              depth: depth + 1,
            }))
          : v.items.map((x, i) => ({ v: x, name: prefix + String(i), depth: depth + 1 }));
      for (let i = kids.length - 1; i >= 0; i--) {
        const kid = kids[i] as (typeof kids)[number];
        if (kid.name.length > MAX_PT_NAME) {
          throw fail(
            arg,
            `names of at most ${MAX_PT_NAME} characters`,
            `${kid.name.length} characters`,
          );
        }
        work.push(kid);
      }
      continue;
    }
    if (v === null) {
      claim(name);
      none.push(name);
    } else if (typeof v === "string") {
      claim(name);
      Object.defineProperty(out.metadata, name, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else if (typeof v === "object" && v.kind === "tensor") {
      claim(name);
      out.tensors.push({ name, t: v });
      out.order.push(name);
    } else if (typeof v === "boolean") {
      claim(name);
      out.scalars.set(name, { dtype: "BOOL", shape: [], data: Uint8Array.of(v ? 1 : 0) });
      out.order.push(name);
    } else if (typeof v === "bigint") {
      if (v > 2n ** 53n || v < -(2n ** 53n))
        throw fail(name, "an int within ±2^53 (exact in float64)", String(v));
      claim(name);
      out.scalars.set(name, { dtype: "I64", shape: [], data: Float64Array.of(Number(v)) });
      out.order.push(name);
    } else if (typeof v === "number") {
      claim(name);
      out.scalars.set(name, { dtype: "F64", shape: [], data: Float64Array.of(v) });
      out.order.push(name);
    } else {
      throw fail(
        name,
        "a tensor, an int, float, bool, str or None, or a dict, list or tuple of them",
        pyType(v),
      );
    }
  }
  if (none.length > 0) {
    Object.defineProperty(out.metadata, PT_NONE_KEY, {
      value: JSON.stringify(none),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The storage of `ref`, read once and checked against its declared size. */
function storageOf(
  fail: Fail,
  zip: ZipArchive,
  sizes: Map<string, number>,
  prefix: string,
  cache: Map<string, Storage>,
  ref: StorageRef,
): Storage {
  const entry = `${prefix}/data/${ref.key}`;
  const known = cache.get(ref.key);
  if (known !== undefined) {
    if (known.ref.storageType !== ref.storageType || known.ref.numel !== ref.numel) {
      throw fail(
        entry,
        `referenced alike everywhere (${known.ref.storageType} of ${known.ref.numel} elements)`,
        `${ref.storageType} of ${ref.numel} elements`,
      );
    }
    return known;
  }
  const size = sizes.get(entry);
  if (size === undefined) {
    throw fail(entry, "an entry of the archive (a storage data.pkl names)", "no such entry");
  }
  const expected = ref.numel * DTYPE_BYTES[ref.dtype];
  if (size !== expected) {
    throw fail(
      entry,
      `${ref.numel} ${ref.dtype} elements = ${expected} bytes (the numel of its persistent id)`,
      fmtBytes(size),
    );
  }
  const bytes = zip.read(entry);
  const s: Storage = {
    ref,
    bytes,
    view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  };
  cache.set(ref.key, s);
  return s;
}

/** Element `e` of a storage as a number (`i` is the output index, for messages). */
function elementReader(
  fail: Fail,
  name: string,
  s: Storage,
  le: boolean,
): (e: number, i: number) => number {
  const { view, bytes } = s;
  const limit = 2n ** 53n;
  switch (s.ref.dtype) {
    case "F64":
      return (e) => view.getFloat64(8 * e, le);
    case "F32":
      return (e) => view.getFloat32(4 * e, le);
    case "F16":
    case "BF16": {
      const table = s.ref.dtype === "F16" ? f16DecodeTable() : bf16DecodeTable();
      return (e) => table[view.getUint16(2 * e, le)] as number;
    }
    case "I32":
      return (e) => view.getInt32(4 * e, le);
    case "I16":
      return (e) => view.getInt16(2 * e, le);
    case "I8":
      return (e) => view.getInt8(e);
    case "I64":
      return (e, i) => {
        const v = view.getBigInt64(8 * e, le);
        if (v > limit || v < -limit) {
          throw fail(name, "I64 values within ±2^53 (exact in float64)", `${v} at flat index ${i}`);
        }
        return Number(v);
      };
    case "BOOL":
      return (e, i) => {
        const b = bytes[e] as number;
        if (b > 1) throw fail(name, "BOOL bytes 0 or 1", `${b} at flat index ${i}`);
        return b;
      };
    default:
      return (e) => bytes[e] as number;
  }
}

/**
 * Gather a strided view of a storage into row-major order: the view's bounds and the element
 * budget checked now, the values copied now or (`lazy`) on the first read of `data`.
 */
function gather(
  fail: Fail,
  name: string,
  t: TensorRef,
  s: Storage,
  le: boolean,
  budget: PtBudget,
  lazy = false,
): NamedTensor {
  const { size, stride, offset } = t;
  const numel = s.ref.numel;
  const shape = fmtShape(size);
  let count = size.includes(0) ? 0 : 1;
  for (const d of size) {
    if (count === 0) break;
    count *= d;
    if (count > budget.left) {
      const bound = budget.fromFile
        ? `2^24 + 2 per byte of the file = ${budget.max}: views may repeat a storage, not amplify it without bound`
        : `options.maxElements = ${budget.max}; raise it to read the file`;
      throw fail(
        name,
        `at most ${budget.left} more elements in all tensors (${bound})`,
        `shape ${shape}, stride ${fmtShape(stride)} of a storage of ${numel} elements`,
      );
    }
  }
  if (count === 0) {
    if (offset > numel)
      throw fail(
        name,
        `a storage offset within the ${numel} elements of its storage`,
        `offset ${offset}`,
      );
  } else {
    let last = offset;
    for (let i = 0; i < size.length; i++) last += ((size[i] as number) - 1) * (stride[i] as number);
    if (last >= numel) {
      throw fail(
        name,
        `a view inside its storage of ${numel} elements`,
        `offset ${offset}, shape ${shape}, stride ${fmtShape(stride)} reaching element ${last}`,
      );
    }
  }
  budget.left -= count;
  const dtype = s.ref.dtype;
  const copy = () => copyView(fail, name, t, s, le, count);
  return lazy ? lazyTensor(dtype, [...size], copy) : { dtype, shape: [...size], data: copy() };
}

/** Whether a view is the row-major run of `count` elements from its offset (dimensions of size 1 aside). */
function contiguous(size: readonly number[], stride: readonly number[]): boolean {
  let want = 1;
  for (let i = size.length - 1; i >= 0; i--) {
    const d = size[i] as number;
    if (d === 1) continue;
    if (stride[i] !== want) return false;
    want *= d;
  }
  return true;
}

/** The values of a checked view, in row-major order. */
function copyView(
  fail: Fail,
  name: string,
  t: TensorRef,
  s: Storage,
  le: boolean,
  count: number,
): Float64Array | Uint8Array {
  const { size, stride, offset } = t;
  const dtype = s.ref.dtype;
  const bytesOut = dtype === "BOOL" || dtype === "U8";
  let out: Float64Array | Uint8Array;
  try {
    out = bytesOut ? new Uint8Array(count) : new Float64Array(count);
  } catch {
    throw fail(name, "small enough to hold in memory", `${count} elements`);
  }
  // A row-major float64 view in the machine's byte order is the storage's bytes as they are: one
  // copy (the bitwise values; the element loop below gives the same).
  if (dtype === "F64" && le === LITTLE_ENDIAN_HOST && count > 0 && contiguous(size, stride)) {
    const at = s.bytes.byteOffset + 8 * offset;
    new Uint8Array(out.buffer).set(new Uint8Array(s.bytes.buffer, at, 8 * count));
    return out;
  }
  const read = elementReader(fail, name, s, le);
  // Dimensions of size 1 never move the index; without them every carry is amortised O(1).
  const dims = size.flatMap((d, i) => (d === 1 ? [] : [[d, stride[i] as number] as const]));
  const idx = new Array<number>(dims.length).fill(0);
  let e = offset;
  for (let i = 0; i < count; i++) {
    out[i] = read(e, i);
    // Odometer: step the last dimension, carrying into the ones before it.
    for (let d = dims.length - 1; d >= 0; d--) {
      const [sd, st] = dims[d] as readonly [number, number];
      const k = (idx[d] as number) + 1;
      if (k < sd) {
        idx[d] = k;
        e += st;
        break;
      }
      idx[d] = 0;
      e -= (sd - 1) * st;
    }
  }
  return out;
}

/**
 * Parse the bytes of a PyTorch `torch.save` file held in memory, without executing its pickle.
 *
 * Format: a zip archive `<archive>/data.pkl` (pickle protocol 1–5 restricted to the opcodes and
 * globals of docs/io.md#restricted-unpickler), `<archive>/data/<key>` raw storages,
 * `<archive>/version`, optional `<archive>/byteorder` (`little` | `big`). A tensor is
 * `_rebuild_tensor_v2(storage, offset, size, stride, …)`, gathered into row-major order. The top
 * level is a dict (or OrderedDict); nested dicts flatten to `a.b`, lists and tuples to `a.0`,
 * `a.1`; python int / float / bool become 0-d I64 / F64 / BOOL tensors; str values go to
 * `metadata` under their name, and the names of None values to `metadata.__none__` (a JSON array).
 *
 * @param bytes - The whole file.
 * @param path - The name to report in errors (default `"<bytes>"`).
 * @returns Every tensor by flattened name, in file order, with the string metadata.
 * @throws {IoError} E_IO when the archive, the pickle (a refused opcode or global, named with its
 *   byte offset), a storage or a view breaks a rule of docs/io.md#pt.
 * @derivation docs/io.md#pt
 * @enforcedBy test/io/pt.test.ts > parsePt > rejects: a pickle that would run code names the refused global and runs nothing
 * @enforcedBy test/io/pt.test.ts > parsePt > golden: recorded torch.save files decode bitwise to the recorded values
 * @enforcedBy test/io/pt.test.ts > parsePt > property: mutated or truncated files parse or throw IoError
 * @since 0.1.0
 */
export function parsePt(bytes: Uint8Array, path = "<bytes>"): TensorSet {
  requireBytes("parsePt", "bytes", bytes);
  requireString("parsePt", "path", path);
  return parsePtAs("parsePt", bytes, path);
}

/** {@link parsePt} reporting errors as `fn`. @internal */
export function parsePtAs(
  fn: string,
  bytes: Uint8Array,
  path: string,
  maxElements: number = DEFAULT_MAX_ELEMENTS,
  lazy = false,
): TensorSet {
  const fail: Fail = (arg, rule, actual) => ioError(fn, path, arg, rule, actual);
  const zip = openZip(fn, bytes, path);
  zip.checkExpansion();
  const sizes = new Map(zip.entries.map((e) => [e.name, e.size]));
  const { prefix, littleEndian } = layout(fail, zip, sizes);
  const pklName = `${prefix}/data.pkl`;
  const pkl = zip.read(pklName);
  const root = unpickle(fn, pkl, path, pklName);
  const flat = flatten(fail, root, pklName, pkl.length);
  const cache = new Map<string, Storage>();
  const own = fileElements(bytes.length);
  const max = Math.min(own, maxElements);
  const budget: PtBudget = { left: max, fromFile: own <= maxElements, max };
  const gathered = new Map<string, NamedTensor>();
  for (const { name, t } of flat.tensors) {
    const s = storageOf(fail, zip, sizes, prefix, cache, t.storage);
    gathered.set(name, gather(fail, name, t, s, littleEndian, budget, lazy));
  }
  const tensors = new Map<string, NamedTensor>();
  for (const name of flat.order) {
    tensors.set(name, (gathered.get(name) ?? flat.scalars.get(name)) as NamedTensor);
  }
  return { path, format: "pt", tensors, metadata: flat.metadata };
}

/** `PK\x03\x04` and a first entry whose name ends in `/data.pkl`. */
function sniffPt(head: Uint8Array): boolean {
  if (
    head.length < 30 ||
    head[0] !== 0x50 ||
    head[1] !== 0x4b ||
    head[2] !== 0x03 ||
    head[3] !== 0x04
  )
    return false;
  const nameLen = (head[26] as number) | ((head[27] as number) << 8);
  if (30 + nameLen > head.length) return false;
  const name = new TextDecoder().decode(head.subarray(30, 30 + nameLen));
  return name.endsWith("/data.pkl") && name.length > "/data.pkl".length;
}

/**
 * The reader-registry entry of `torch.save` files: extensions `.pt`, `.pth`; sniffed by the zip
 * local-header magic with a first entry `<archive>/data.pkl`; 4 GiB default limit.
 *
 * Format: see {@link parsePt} (docs/io.md#pt).
 *
 * @derivation docs/io.md#pt
 * @enforcedBy test/io/pt.test.ts > PT_READER > golden: extensions, sniff and parse of a recorded file
 * @since 0.1.0
 */
export const PT_READER: TensorReader = Object.freeze({
  format: "pt",
  extensions: Object.freeze([".pt", ".pth"]),
  defaultMaxBytes: DEFAULT_MAX_PT_BYTES,
  sniff: sniffPt,
  parse: (fn: string, bytes: Uint8Array, path: string, maxElements?: number, lazy?: boolean) =>
    parsePtAs(fn, bytes, path, maxElements, lazy),
});
