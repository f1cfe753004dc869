/**
 * The project's one zip reader (docs/io.md#zip), shared by the npz and torch `.pt` readers. Pure
 * (no `node:` import). The archive is hostile: the end-of-central-directory record is found by a
 * bounded backward scan, every offset and length of the central directory, the ZIP64 records and
 * the local headers is checked against the bytes before it is used, entries may not overlap or
 * lie outside the file, and a deflated entry is inflated by fflate in bounded steps into a buffer
 * that never grows past the size the central directory declares (a zip bomb is an IoError after
 * at most one step of work). Every failure is an IoError with arg `zip` (the archive) or
 * `zip entry <name>` (one entry).
 * @internal
 */
import { Inflate } from "fflate";
import { fmtValue } from "../../core/message.js";
import { IoError } from "../../errors.js";
import { decodeUtf8, fmtBytes, ioError } from "./ioError.js";

/** One member of an archive, as the central directory lists it. @internal */
export interface ZipEntry {
  /** The member's name (UTF-8), e.g. `archive/data.pkl` or `x.npy`. */
  readonly name: string;
  /** Uncompressed size in bytes, from the central directory; `read` returns exactly this many. */
  readonly size: number;
  /** 0 = stored, 8 = deflate. */
  readonly method: 0 | 8;
}

/** An opened archive: its entries in central-directory order, and a reader of one entry. @internal */
export interface ZipArchive {
  readonly entries: readonly ZipEntry[];
  /**
   * The uncompressed bytes of the entry `name`, exactly `size` of them, CRC-32 verified. A stored
   * entry is a view into the archive's bytes (do not write to it); a deflated one is a new buffer.
   */
  read(name: string): Uint8Array;
  /**
   * The first min(n, size) uncompressed bytes of the entry `name` (a header), inflating no more
   * of a deflated entry than that takes; not CRC-checked (the CRC covers the whole entry, which
   * `read` checks). A stored entry's head is a view into the archive's bytes.
   */
  readHead(name: string, n: number): Uint8Array;
  /**
   * Bound what the entries may inflate to before any is read (docs/io.md#bounds-on-hostile-files):
   * each deflated entry's declared size is at most {@link DEFLATE_MAX_RATIO} × its compressed
   * size (more is a lie deflate cannot produce), and their sum at most
   * max({@link ZIP_EXPANSION_FLOOR}, {@link MAX_ZIP_EXPANSION} × the archive's size).
   */
  checkExpansion(limits?: ExpansionLimits): void;
}

/** Bounds of {@link ZipArchive.checkExpansion}. @internal */
export interface ExpansionLimits {
  /** Largest ratio of the entries' declared sizes in all to the archive's size. @defaultValue 64 */
  readonly maxExpansion?: number;
  /** Declared sizes in all that are accepted at any ratio, in bytes. @defaultValue 64 MiB */
  readonly floorBytes?: number;
}

/** Bounds of {@link openZip}. @internal */
export interface ZipLimits {
  /** Most entries the central directory may list. @defaultValue 65536 */
  readonly maxEntries?: number;
  /** Largest uncompressed size of one entry, in bytes. @defaultValue 2**31 - 1 */
  readonly maxEntryBytes?: number;
}

/** Default {@link ZipLimits.maxEntries}. @internal */
export const DEFAULT_MAX_ZIP_ENTRIES = 65536;
/** Default {@link ZipLimits.maxEntryBytes}. @internal */
export const DEFAULT_MAX_ZIP_ENTRY_BYTES: number = 2 ** 31 - 1;
/**
 * Most bytes deflate can produce per compressed byte: 258 bytes per length/distance pair of at
 * least 2 bits (RFC 1951). A declared size beyond it is a lie, refused before inflating. @internal
 */
export const DEFLATE_MAX_RATIO = 1032;
/**
 * Largest ratio of an archive's declared uncompressed sizes to its file size: 64. Batches saved
 * by `np.savez_compressed` inflate 1.5–5× (30–36× at 96 % padding, 77–116× at 99 %); only
 * near-constant data (all-zero arrays, masks alone) approaches deflate's 1032×. An archive within
 * it makes the reader hold at most ~5 × 64 bytes per file byte (F16 members upcast). @internal
 */
export const MAX_ZIP_EXPANSION = 64;
/** Declared sizes in all accepted at any ratio: 64 MiB (an all-zero test batch compresses 1000×). @internal */
export const ZIP_EXPANSION_FLOOR: number = 64 * 2 ** 20;
/** Compressed bytes handed to the inflater per step: deflate expands at most 1032:1 (258 bytes per 2-bit code), so one step yields at most ~16.5 MiB. @internal */
export const INFLATE_STEP_BYTES = 16384;

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_EOCD64 = 0x06064b50;
const SIG_LOCATOR = 0x07064b50;
const EOCD_BYTES = 22;
const MAX_COMMENT = 65535;

interface Record_ {
  readonly name: string;
  readonly size: number;
  readonly method: 0 | 8;
  readonly csize: number;
  readonly crc: number;
  readonly offset: number;
  dataStart: number;
}

function u16(b: Uint8Array, i: number): number {
  return (b[i] as number) | ((b[i + 1] as number) << 8);
}

function u32(b: Uint8Array, i: number): number {
  return (
    ((b[i] as number) | ((b[i + 1] as number) << 8) | ((b[i + 2] as number) << 16)) +
    (b[i + 3] as number) * 2 ** 24
  );
}

/** Little-endian u64 as a number: exact below 2^53, and above it still larger than any file. */
function u64(b: Uint8Array, i: number): number {
  return u32(b, i) + u32(b, i + 4) * 2 ** 32;
}

let crcTables: Uint32Array | undefined;

/** The 8 tables of slicing-by-8: table k maps a byte to its CRC contribution k bytes back. */
function tables(): Uint32Array {
  if (crcTables !== undefined) return crcTables;
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n] as number;
    for (let k = 1; k < 8; k++) {
      c = (t[c & 0xff] as number) ^ (c >>> 8);
      t[k * 256 + n] = c >>> 0;
    }
  }
  crcTables = t;
  return t;
}

/**
 * CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, initial and final xor 0xFFFFFFFF), table
 * driven, eight bytes a step (slicing-by-8: 4–5× the byte-at-a-time loop, which was the largest
 * cost of reading a stored `.npz` or `.pt` run); `crc32("123456789") = 0xCBF43926`. @internal
 */
export function crc32(bytes: Uint8Array): number {
  return nativeCrc32 === null ? crc32Js(bytes) : nativeCrc32(bytes);
}

/**
 * A native raw inflate of this process (Node's zlib.inflateRawSync, bounded by the declared
 * size; set by src/node/registerNative.ts), or null: `(data, size, head?)` gives the inflated
 * bytes (with `head`, the first `head` of them, inflating no more of the stream than that takes),
 * null when they would exceed `size`, and throws on invalid deflate data.
 */
let nativeInflate: ((data: Uint8Array, size: number, head?: number) => Uint8Array | null) | null =
  null;

/**
 * Inflate deflated entries with `f` in this process (fflate's streaming inflate, bounded in
 * steps, stays the browser's); null goes back to it. Returns the previous one.
 * @internal
 */
export function setInflateRaw(
  f: ((data: Uint8Array, size: number, head?: number) => Uint8Array | null) | null,
): ((data: Uint8Array, size: number, head?: number) => Uint8Array | null) | null {
  const was = nativeInflate;
  nativeInflate = f;
  return was;
}

/** A native CRC-32 of this process (Node's zlib.crc32, set by src/node/registerNative.ts), or null. */
let nativeCrc32: ((bytes: Uint8Array) => number) | null = null;

/**
 * Compute {@link crc32} with `f` in this process (Node's zlib.crc32, the same function about 6×
 * faster than the slicing-by-8 loop: 6.8 GB/s against 1.1 GB/s on this project's machine); null
 * goes back to the loop. Returns the previous one. @internal
 */
export function setCrc32(
  f: ((bytes: Uint8Array) => number) | null,
): ((bytes: Uint8Array) => number) | null {
  const was = nativeCrc32;
  nativeCrc32 = f;
  return was;
}

/** {@link crc32} in plain JavaScript (the browser's, and any process without a native one). @internal */
export function crc32Js(bytes: Uint8Array): number {
  const t = tables();
  let c = 0xffffffff;
  const n = bytes.length;
  const end8 = n - (n % 8);
  let i = 0;
  for (; i < end8; i += 8) {
    const lo =
      (c ^
        ((bytes[i] as number) |
          ((bytes[i + 1] as number) << 8) |
          ((bytes[i + 2] as number) << 16) |
          ((bytes[i + 3] as number) << 24))) >>>
      0;
    const hi =
      (bytes[i + 4] as number) |
      ((bytes[i + 5] as number) << 8) |
      ((bytes[i + 6] as number) << 16) |
      ((bytes[i + 7] as number) << 24);
    c =
      (t[1792 + (lo & 0xff)] as number) ^
      (t[1536 + ((lo >>> 8) & 0xff)] as number) ^
      (t[1280 + ((lo >>> 16) & 0xff)] as number) ^
      (t[1024 + (lo >>> 24)] as number) ^
      (t[768 + (hi & 0xff)] as number) ^
      (t[512 + ((hi >>> 8) & 0xff)] as number) ^
      (t[256 + ((hi >>> 16) & 0xff)] as number) ^
      (t[(hi >>> 24) & 0xff] as number);
  }
  for (; i < n; i++) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, "0")}`;
}

function entryArg(name: string): string {
  return `zip entry ${name}`;
}

/**
 * Open a zip archive held in memory: find and check its end records and central directory and
 * every entry's local header, without decompressing anything.
 *
 * Format: [local header · data]* · central directory · [ZIP64 end record · ZIP64 locator] · end
 * record (22 bytes + comment ≤ 65535 bytes). Methods 0 (stored) and 8 (deflate) only; no
 * encryption, one disk, UTF-8 names, distinct names, entries inside the file and not overlapping.
 *
 * @param fn - The public function to name in errors.
 * @param bytes - The whole archive.
 * @param path - The file to name in errors.
 * @param limits - Bounds on the entry count and on each entry's uncompressed size.
 * @returns The entries in central-directory order and a `read(name)` giving one entry's bytes.
 * @throws {IoError} E_IO (arg `zip` or `zip entry <name>`) when any rule of docs/io.md#zip breaks.
 * @derivation docs/io.md#zip
 * @enforcedBy test/io/zip.test.ts > openZip > property: every truncation of an archive is an io error
 * @since 0.1.0
 */
export function openZip(
  fn: string,
  bytes: Uint8Array,
  path: string,
  limits: ZipLimits = {},
): ZipArchive {
  const fail = (arg: string, rule: string, actual: string): IoError =>
    ioError(fn, path, arg, rule, actual);
  const maxEntries = limits.maxEntries ?? DEFAULT_MAX_ZIP_ENTRIES;
  const maxEntryBytes = limits.maxEntryBytes ?? DEFAULT_MAX_ZIP_ENTRY_BYTES;
  const len = bytes.length;

  // 1. The end-of-central-directory record: the last signature whose comment ends the file.
  if (len < EOCD_BYTES) {
    throw fail("zip", "at least 22 bytes (an end-of-central-directory record)", fmtBytes(len));
  }
  let eocd = -1;
  const lowest = Math.max(0, len - EOCD_BYTES - MAX_COMMENT);
  for (let i = len - EOCD_BYTES; i >= lowest; i--) {
    if (u32(bytes, i) === SIG_EOCD && i + EOCD_BYTES + u16(bytes, i + 20) === len) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw fail(
      "zip",
      "a zip archive (an end-of-central-directory record in its last 65557 bytes)",
      "none found",
    );
  }
  let disk = u16(bytes, eocd + 4);
  let cdDisk = u16(bytes, eocd + 6);
  let onDisk = u16(bytes, eocd + 8);
  let total = u16(bytes, eocd + 10);
  let cdSize = u32(bytes, eocd + 12);
  let cdOffset = u32(bytes, eocd + 16);
  let endStart = eocd;

  // 2. ZIP64: a locator right before the end record points at the ZIP64 end record.
  if (eocd >= 20 && u32(bytes, eocd - 20) === SIG_LOCATOR) {
    const locDisk = u32(bytes, eocd - 16);
    const at = u64(bytes, eocd - 12);
    const disks = u32(bytes, eocd - 4);
    if (locDisk !== 0 || disks > 1) {
      throw fail(
        "zip",
        "a single-disk archive",
        `ZIP64 locator naming disk ${locDisk} of ${disks}`,
      );
    }
    if (at + 56 > eocd - 20) {
      throw fail(
        "zip",
        `a ZIP64 end record of 56 bytes before the locator at byte ${eocd - 20}`,
        `offset ${at}`,
      );
    }
    if (u32(bytes, at) !== SIG_EOCD64) {
      throw fail("zip", "a ZIP64 end record at the locator's offset", `no signature at byte ${at}`);
    }
    const recordSize = u64(bytes, at + 4);
    if (recordSize < 44 || at + 12 + recordSize > eocd - 20) {
      throw fail(
        "zip",
        `a ZIP64 end record ending by the locator at byte ${eocd - 20}`,
        `record size ${recordSize} at byte ${at}`,
      );
    }
    disk = u32(bytes, at + 16);
    cdDisk = u32(bytes, at + 20);
    onDisk = u64(bytes, at + 24);
    total = u64(bytes, at + 32);
    cdSize = u64(bytes, at + 40);
    cdOffset = u64(bytes, at + 48);
    endStart = at;
  }
  if (disk !== 0 || cdDisk !== 0 || onDisk !== total) {
    throw fail(
      "zip",
      "a single-disk archive",
      `disk ${disk}, central directory on disk ${cdDisk}, ${onDisk} of ${total} entries on this disk`,
    );
  }
  if (total > maxEntries) {
    throw fail("zip", `an archive of at most ${maxEntries} entries`, `${total} entries`);
  }
  if (cdOffset + cdSize > endStart) {
    throw fail(
      "zip",
      `a central directory ending by the end record at byte ${endStart}`,
      `offset ${cdOffset} + size ${cdSize}`,
    );
  }

  // 3. The central directory: one 46-byte record + name + extra + comment per entry.
  const records: Record_[] = [];
  const byName = new Map<string, Record_>();
  const cdEnd = cdOffset + cdSize;
  let p = cdOffset;
  for (let k = 0; k < total; k++) {
    if (p + 46 > cdEnd || u32(bytes, p) !== SIG_CENTRAL) {
      throw fail(
        "zip",
        `a central directory of ${total} entries in ${cdSize} bytes`,
        p + 46 > cdEnd ? `entry ${k} past its end` : `no entry signature at byte ${p}`,
      );
    }
    const flags = u16(bytes, p + 8);
    const method = u16(bytes, p + 10);
    const crc = u32(bytes, p + 16);
    let csize = u32(bytes, p + 20);
    let size = u32(bytes, p + 24);
    const nameLen = u16(bytes, p + 28);
    const extraLen = u16(bytes, p + 30);
    const commentLen = u16(bytes, p + 32);
    let startDisk = u16(bytes, p + 34);
    let offset = u32(bytes, p + 42);
    const next = p + 46 + nameLen + extraLen + commentLen;
    if (next > cdEnd) {
      throw fail(
        "zip",
        `a central directory of ${total} entries in ${cdSize} bytes`,
        `entry ${k} past its end`,
      );
    }
    const name = decodeUtf8(fn, path, "zip", bytes.subarray(p + 46, p + 46 + nameLen));
    const arg = entryArg(name);
    if (name === "") throw fail("zip", "entries with non-empty names", `entry ${k} without a name`);
    if (byName.has(name)) {
      throw fail("zip", "an archive of distinct entry names", `${fmtValue(name)} twice`);
    }
    // ZIP64 extra field (id 1): the 8-byte values of the fields set to 0xFFFFFFFF, in order.
    const z64 = findExtra(bytes, p + 46 + nameLen, extraLen, 1);
    if (z64 === -2) throw fail(arg, "well-formed extra fields", "a field past the extra length");
    if (
      size === 0xffffffff ||
      csize === 0xffffffff ||
      offset === 0xffffffff ||
      startDisk === 0xffff
    ) {
      let q = z64 < 0 ? -1 : z64 + 4;
      const qEnd = z64 < 0 ? -1 : z64 + 4 + u16(bytes, z64 + 2);
      const take = (width: 4 | 8): number => {
        if (q < 0 || q + width > qEnd) {
          throw fail(
            arg,
            "a ZIP64 extra field holding every field marked 0xFFFFFFFF",
            "too short or missing",
          );
        }
        const v = width === 8 ? u64(bytes, q) : u32(bytes, q);
        q += width;
        return v;
      };
      if (size === 0xffffffff) size = take(8);
      if (csize === 0xffffffff) csize = take(8);
      if (offset === 0xffffffff) offset = take(8);
      if (startDisk === 0xffff) startDisk = take(4);
    }
    if (flags & 0x41) {
      throw fail(
        arg,
        "not encrypted",
        `general-purpose flags 0x${flags.toString(16).padStart(4, "0")}`,
      );
    }
    if (method !== 0 && method !== 8) {
      throw fail(arg, "stored (method 0) or deflated (method 8)", `method ${method}`);
    }
    if (startDisk !== 0) throw fail(arg, "on disk 0 (a single-disk archive)", `disk ${startDisk}`);
    if (size > maxEntryBytes) {
      throw fail(arg, `at most ${maxEntryBytes} bytes uncompressed`, fmtBytes(size));
    }
    if (method === 0 && csize !== size) {
      throw fail(arg, "a stored entry whose compressed size equals its size", `${csize} ≠ ${size}`);
    }
    if (offset + 30 + csize > cdOffset) {
      throw fail(
        arg,
        `inside the data area before the central directory at byte ${cdOffset}`,
        `local header at byte ${offset} with ${csize} bytes of data`,
      );
    }
    const rec: Record_ = { name, size, method, csize, crc, offset, dataStart: -1 };
    records.push(rec);
    byName.set(name, rec);
    p = next;
  }
  if (p !== cdEnd) {
    throw fail(
      "zip",
      `a central directory of ${total} entries filling its ${cdSize} bytes`,
      `${cdEnd - p} bytes left over`,
    );
  }

  // 4. Local headers: own name/extra lengths (which may differ from the central ones), the same
  //    name and method; then the spans [header, data end) must not overlap.
  for (const r of records) {
    const arg = entryArg(r.name);
    const o = r.offset;
    if (u32(bytes, o) !== SIG_LOCAL) {
      throw fail(arg, `a local header at byte ${o}`, "no local header signature");
    }
    const flags = u16(bytes, o + 6);
    const method = u16(bytes, o + 8);
    const nameLen = u16(bytes, o + 26);
    const extraLen = u16(bytes, o + 28);
    const dataStart = o + 30 + nameLen + extraLen;
    if (dataStart + r.csize > cdOffset) {
      throw fail(
        arg,
        `inside the data area before the central directory at byte ${cdOffset}`,
        `data at bytes [${dataStart}, ${dataStart + r.csize})`,
      );
    }
    const local = bytes.subarray(o + 30, o + 30 + nameLen);
    const central = new TextEncoder().encode(r.name);
    if (local.length !== central.length || local.some((b, i) => b !== central[i])) {
      throw fail(
        arg,
        "named alike in its local header and the central directory",
        "a different local name",
      );
    }
    if (method !== r.method || flags & 0x41) {
      throw fail(
        arg,
        "described alike by its local header (method, no encryption)",
        `local method ${method}, flags 0x${flags.toString(16).padStart(4, "0")}`,
      );
    }
    r.dataStart = dataStart;
  }
  const sorted = [...records].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1] as Record_;
    const cur = sorted[i] as Record_;
    if (cur.offset < prev.dataStart + prev.csize) {
      throw fail(
        entryArg(cur.name),
        `after the data of ${fmtValue(prev.name)}, which ends at byte ${prev.dataStart + prev.csize} (no overlapping entries)`,
        `local header at byte ${cur.offset}`,
      );
    }
  }

  const entries: readonly ZipEntry[] = Object.freeze(
    records.map((r) => Object.freeze({ name: r.name, size: r.size, method: r.method })),
  );
  const recordOf = (name: string) => {
    const r = typeof name === "string" ? byName.get(name) : undefined;
    if (r === undefined) {
      const some = records.slice(0, 5).map((e) => fmtValue(e.name));
      const more = records.length > 5 ? `, … (${records.length} in all)` : "";
      throw fail(
        entryArg(String(name)),
        "an entry of the archive",
        `no such entry; present: ${some.length === 0 ? "none" : some.join(", ") + more}`,
      );
    }
    return r;
  };
  return Object.freeze({
    entries,
    read(name: string): Uint8Array {
      const r = recordOf(name);
      const data = bytes.subarray(r.dataStart, r.dataStart + r.csize);
      const out = r.method === 0 ? data : inflateBounded(fail, entryArg(r.name), data, r.size);
      const got = crc32(out);
      if (got !== r.crc) {
        throw fail(
          entryArg(r.name),
          `bytes with the CRC-32 ${hex(r.crc)} of the central directory`,
          hex(got),
        );
      }
      return out;
    },
    readHead(name: string, n: number): Uint8Array {
      const r = recordOf(name);
      const data = bytes.subarray(r.dataStart, r.dataStart + r.csize);
      const want = Math.min(n, r.size);
      if (r.method === 0) return data.subarray(0, want);
      return inflateBounded(fail, entryArg(r.name), data, r.size, want);
    },
    checkExpansion(bounds: ExpansionLimits = {}): void {
      const ratio = bounds.maxExpansion ?? MAX_ZIP_EXPANSION;
      const floor = bounds.floorBytes ?? ZIP_EXPANSION_FLOOR;
      let total = 0;
      for (const r of records) {
        if (r.method === 8 && r.size > DEFLATE_MAX_RATIO * r.csize) {
          throw fail(
            entryArg(r.name),
            `a declared size deflate can produce from its ${r.csize} compressed bytes (at most ${DEFLATE_MAX_RATIO}× = ${DEFLATE_MAX_RATIO * r.csize} bytes)`,
            fmtBytes(r.size),
          );
        }
        total += r.size;
      }
      const cap = Math.max(floor, ratio * len);
      if (total > cap) {
        throw fail(
          "zip",
          `members of at most max(${fmtBytes(floor)}, ${ratio} × the file's ${len} bytes) = ${cap} bytes uncompressed in all (a deflate bomb? an archive saved uncompressed, np.savez, is never refused)`,
          `${fmtBytes(total)} (${(total / len).toFixed(0)}× the file)`,
        );
      }
    },
  });
}

/**
 * Offset of the extra field `id` in `bytes[at, at + len)`: -1 when absent, -2 when a field runs
 * past the end. Fewer than 4 bytes left over (padding) end the scan.
 */
function findExtra(bytes: Uint8Array, at: number, len: number, id: number): number {
  let q = at;
  const end = at + len;
  while (q + 4 <= end) {
    const size = u16(bytes, q + 2);
    if (q + 4 + size > end) return -2;
    if (u16(bytes, q) === id) return q;
    q += 4 + size;
  }
  return -1;
}

/**
 * Inflate raw deflate `data` into exactly `size` bytes (or, with `head`, its first `head` bytes,
 * stopping there). fflate's streaming inflater gets
 * {@link INFLATE_STEP_BYTES} compressed bytes per step; its output is copied into a buffer that
 * grows by doubling up to `size` and never past it; output beyond `size` stops the work at once.
 * @internal
 */
export function inflateBounded(
  fail: (arg: string, rule: string, actual: string) => IoError,
  arg: string,
  data: Uint8Array,
  size: number,
  head?: number,
): Uint8Array {
  if (nativeInflate !== null) {
    let got: Uint8Array | null;
    try {
      got = nativeInflate(data, size, head);
    } catch (e) {
      throw fail(arg, "valid deflate data", e instanceof Error ? e.message : String(e));
    }
    // The whole entry, or its head: the first min(head, size) bytes.
    const expect = head === undefined ? size : Math.min(head, size);
    if (got !== null && got.length === expect) return got;
    const rule = `deflate data inflating to its declared ${size} bytes`;
    throw fail(arg, rule, got === null ? "more bytes (a zip bomb?)" : `${got.length} bytes`);
  }
  let out = new Uint8Array(
    head === undefined ? Math.min(size, Math.max(65536, 4 * data.length)) : Math.min(size, 65536),
  );
  let written = 0;
  let ended = false;
  const inflater = new Inflate((chunk, final) => {
    if (written + chunk.length > size) {
      throw fail(
        arg,
        `deflate data inflating to its declared ${size} bytes`,
        "more bytes (a zip bomb?)",
      );
    }
    if (written + chunk.length > out.length) {
      const grown = new Uint8Array(
        Math.min(size, Math.max(2 * out.length, written + chunk.length)),
      );
      grown.set(out.subarray(0, written));
      out = grown;
    }
    out.set(chunk, written);
    written += chunk.length;
    if (final) ended = true;
  });
  try {
    if (data.length === 0) inflater.push(data, true);
    // A head is a few hundred bytes: small steps, so little past it is inflated.
    const step = head === undefined ? INFLATE_STEP_BYTES : 1024;
    for (let at = 0; at < data.length; at += step) {
      const end = Math.min(data.length, at + step);
      inflater.push(data.subarray(at, end), end === data.length);
      // A head: stop as soon as it is out (the rest is inflated by a whole read, if ever).
      if (head !== undefined && written >= head) return out.slice(0, head);
    }
  } catch (e) {
    if (e instanceof IoError) throw e;
    throw fail(arg, "valid deflate data", e instanceof Error ? e.message : String(e));
  }
  if (!ended || written !== size) {
    throw fail(
      arg,
      `deflate data inflating to its declared ${size} bytes`,
      `${written} bytes${ended ? "" : " (stream not ended)"}`,
    );
  }
  return out;
}
