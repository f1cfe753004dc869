// The amplification files of issue 31, point 5 (docs/io.md#bounds-on-hostile-files), written at
// any scale by bench/hostile.mjs (the sizes) and test/bench/hostile.test.ts (small ones):
//   npzBomb      an .npz whose deflated members are zeros: ~1030 bytes per compressed byte
//   ptExpand     a torch.save archive: one 8-byte storage expanded to `elements` (stride 0),
//                beside a zero storage of `padBytes` (what let 2^29 pass a per-byte budget)
//   stEntries    a safetensors header of `n` empty F32 tensors
//   jsonKeys     a JSON batch of `n` empty arrays
// Each writes `path` and returns its size. No Python: the zip, pickle and deflate are built here
// (deflate by node:zlib, streamed, so 1 GiB of zeros is never held in memory).
import { closeSync, openSync, statSync, writeSync } from "node:fs";
import { constants, createDeflateRaw } from "node:zlib";

const CRC = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crcUpdate(c, bytes) {
  let x = c;
  for (let i = 0; i < bytes.length; i++) x = CRC[(x ^ bytes[i]) & 0xff] ^ (x >>> 8);
  return x;
}

/** CRC-32 of zero bytes, `n` of them, continuing from `c` (the table loop, chunked). */
function crcZeros(c, n, chunk) {
  let x = c;
  for (let left = n; left > 0; left -= chunk.length) {
    x = crcUpdate(x, left >= chunk.length ? chunk : chunk.subarray(0, left));
  }
  return x;
}

const le = (n, width) => {
  const out = [];
  let v = n;
  for (let k = 0; k < width; k++) {
    out.push(v % 256);
    v = Math.floor(v / 256);
  }
  return out;
};

/** A `.npy` v1.0 header for a 1-d array of `count` elements of `descr`. */
export function npyHeader(descr, count) {
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${count},), }`;
  while ((10 + h.length + 1) % 64 !== 0) h += " ";
  h += "\n";
  const out = new Uint8Array(10 + h.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  out[8] = h.length & 0xff;
  out[9] = h.length >> 8;
  for (let i = 0; i < h.length; i++) out[10 + i] = h.charCodeAt(i);
  return out;
}

/** Raw deflate (zlib level 9) of `head` then `zeros` zero bytes, streamed: {data, crc, size}. */
async function deflateZeros(head, zeros) {
  const d = createDeflateRaw({ level: 9, memLevel: 9, strategy: constants.Z_DEFAULT_STRATEGY });
  const parts = [];
  d.on("data", (c) => parts.push(c));
  const ended = new Promise((resolve, reject) => {
    d.on("end", resolve);
    d.on("error", reject);
  });
  const chunk = new Uint8Array(1 << 24);
  let crc = crcUpdate(0xffffffff, head);
  d.write(head);
  for (let left = zeros; left > 0; left -= chunk.length) {
    const c = left >= chunk.length ? chunk : chunk.subarray(0, left);
    if (!d.write(c)) await new Promise((resolve) => d.once("drain", resolve));
  }
  crc = crcZeros(crc, zeros, chunk);
  d.end();
  await ended;
  return { data: Buffer.concat(parts), crc: (crc ^ 0xffffffff) >>> 0, size: head.length + zeros };
}

/** Write a zip of `entries` ({name, data, crc, size, method}) to `path`, streamed; its size. */
function writeZip(path, entries) {
  const fd = openSync(path, "w");
  const centrals = [];
  let at = 0;
  const put = (b) => {
    writeSync(fd, b);
    at += b.length;
  };
  try {
    for (const e of entries) {
      const name = Buffer.from(e.name);
      const fields = [
        ...le(e.method, 2),
        0,
        0,
        0,
        0,
        ...le(e.crc, 4),
        ...le(e.data.length, 4),
        ...le(e.size, 4),
        ...le(name.length, 2),
      ];
      centrals.push(
        Buffer.from([
          ...le(0x02014b50, 4),
          20,
          0,
          20,
          0,
          0,
          0,
          ...fields,
          ...new Array(12).fill(0),
        ]),
        Buffer.from(le(at, 4)),
        name,
      );
      put(Buffer.from([...le(0x04034b50, 4), 20, 0, 0, 0, ...fields, 0, 0]));
      put(name);
      put(e.data);
    }
    const cd = Buffer.concat(centrals);
    const cdAt = at;
    put(cd);
    const n = entries.length;
    put(
      Buffer.from([
        ...le(0x06054b50, 4),
        0,
        0,
        0,
        0,
        ...le(n, 2),
        ...le(n, 2),
        ...le(cd.length, 4),
        ...le(cdAt, 4),
        0,
        0,
      ]),
    );
  } finally {
    closeSync(fd);
  }
  return statSync(path).size;
}

/** A stored zip entry of `data`. */
function stored(name, data) {
  return {
    name,
    data,
    crc: (crcUpdate(0xffffffff, data) ^ 0xffffffff) >>> 0,
    size: data.length,
    method: 0,
  };
}

/**
 * An `.npz` of deflated all-zero members: `members` is [[name, descr, itemBytes, bytes], …]
 * (about `bytes` of data each); `padBytes` > 0 adds a stored `pad.npy` of that many u1 zeros
 * after them (a file pushed under the expansion cap). Returns the file's size.
 */
export async function npzBomb(path, members, padBytes = 0) {
  const entries = [];
  for (const [name, descr, itemBytes, bytes] of members) {
    const count = Math.floor(bytes / itemBytes);
    entries.push({
      name: `${name}.npy`,
      method: 8,
      ...(await deflateZeros(npyHeader(descr, count), count * itemBytes)),
    });
  }
  if (padBytes > 0) {
    const head = npyHeader("|u1", padBytes);
    const pad = new Uint8Array(head.length + padBytes);
    pad.set(head);
    entries.push(stored("pad.npy", pad));
  }
  return writeZip(path, entries);
}

/** The pickle ops this module writes (protocol 2). */
class Pickle {
  out = [];
  raw(...bs) {
    for (const b of bs) this.out.push(b);
    return this;
  }
  str(s) {
    const b = Buffer.from(s);
    return this.raw(0x58, ...le(b.length, 4), ...b);
  }
  int(n) {
    return this.raw(0x4a, ...le(n, 4)); // BININT, 0 ≤ n < 2^31
  }
  global(module, name) {
    return this.raw(0x63, ...Buffer.from(`${module}\n${name}\n`));
  }
  /** `_rebuild_tensor_v2(storage(key, numel), 0, size, stride, False, OrderedDict())`. */
  tensor(type, key, numel, size, stride) {
    this.global("torch._utils", "_rebuild_tensor_v2").raw(0x28);
    this.raw(0x28)
      .str("storage")
      .global("torch", type)
      .str(key)
      .str("cpu")
      .int(numel)
      .raw(0x74, 0x51);
    this.int(0).raw(0x28);
    for (const d of size) this.int(d);
    this.raw(0x74, 0x28);
    for (const d of stride) this.int(d);
    this.raw(0x74, 0x89).global("collections", "OrderedDict").raw(0x29, 0x52);
    return this.raw(0x74, 0x52);
  }
  bytes() {
    return Uint8Array.from(this.out);
  }
}

/**
 * A `torch.save` archive (stored entries, as torch writes them) of `{logprobs: one F64 element
 * expanded to [elements] with stride 0, pad: F64 zeros of padBytes}`. Returns the file's size.
 */
export function ptExpand(path, elements, padBytes) {
  const padNumel = Math.floor(padBytes / 8);
  const p = new Pickle().raw(0x80, 2, 0x7d, 0x28);
  p.str("logprobs").tensor("DoubleStorage", "0", 1, [elements], [0]);
  if (padNumel > 0) p.str("pad").tensor("DoubleStorage", "1", padNumel, [padNumel], [1]);
  p.raw(0x75, 0x2e);
  const one = new Uint8Array(8);
  new DataView(one.buffer).setFloat64(0, 1, true);
  const entries = [stored("archive/data.pkl", p.bytes()), stored("archive/data/0", one)];
  if (padNumel > 0) entries.push(stored("archive/data/1", new Uint8Array(8 * padNumel)));
  entries.push(stored("archive/version", Buffer.from("3\n")));
  return writeZip(path, entries);
}

/** Write `{` + the `n` items of `item(i)` joined by commas + `}` after `prefix`, in 1 MiB pieces. */
function writeObject(path, prefix, n, item) {
  const fd = openSync(path, "w");
  try {
    writeSync(fd, prefix);
    let piece = "{";
    for (let i = 0; i < n; i++) {
      piece += (i === 0 ? "" : ",") + item(i);
      if (piece.length >= 1 << 20) {
        writeSync(fd, piece);
        piece = "";
      }
    }
    writeSync(fd, `${piece}}`);
  } finally {
    closeSync(fd);
  }
  return statSync(path).size;
}

const stEntry = (i) =>
  `"t${String(i).padStart(7, "0")}":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`;

/** A safetensors file whose header lists `n` empty F32 tensors (60 bytes each). Returns its size. */
export function stEntries(path, n) {
  const headerBytes = 2 + (n - 1) + n * stEntry(0).length;
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerBytes));
  return writeObject(path, length, n, stEntry);
}

/** A JSON batch of `n` empty arrays. Returns its size. */
export function jsonKeys(path, n) {
  return writeObject(path, "", n, (i) => `"t${String(i).padStart(7, "0")}":[]`);
}

/**
 * The cases (measured on the main of its day) and the files just inside each bound.
 * `make(dir)` writes the file and returns its path; `inside` marks the costly in-bound ones.
 */
export const HOSTILE_CASES = [
  {
    id: "npz-1mb",
    what: "1 MB .npz: one <f8 member of 1 GiB of zeros",
    file: "npz-1mb.npz",
    make: (p) => npzBomb(p, [["logprobs", "<f8", 8, 2 ** 30 - 4096]]),
  },
  {
    id: "npz-2mb",
    what: "2 MB .npz: two <f2 members of 1 GiB of zeros",
    file: "npz-2mb.npz",
    make: (p) =>
      npzBomb(p, [
        ["logprobs", "<f2", 2, 2 ** 30 - 4096],
        ["old_logprobs", "<f2", 2, 2 ** 30 - 4096],
      ]),
  },
  {
    id: "pt-64mb",
    what: "64 MB .pt: one 8-byte storage expanded to 2^29 elements, 64 MiB of padding",
    file: "pt-64mb.pt",
    make: (p) => ptExpand(p, 2 ** 29, 64 * 2 ** 20),
  },
  {
    id: "safetensors-98mb",
    what: "98 MB safetensors header of 1.63 M empty tensors",
    file: "st-98mb.safetensors",
    make: (p) => stEntries(p, 1_630_000),
  },
  {
    id: "json-23mb",
    what: "23 MB JSON batch of 1.63 M empty arrays",
    file: "json-23mb.json",
    make: (p) => jsonKeys(p, 1_630_000),
  },
  {
    id: "safetensors-at-cap",
    what: "4 MB safetensors header of 65 536 empty tensors (the entry cap: read, then toBatch)",
    file: "st-at-cap.safetensors",
    make: (p) => stEntries(p, 65536),
  },
  {
    id: "npz-inside",
    what: "17 MB .npz inside the expansion cap: the 1 GiB <f2 member plus 16 MiB stored",
    file: "npz-inside.npz",
    inside: true,
    make: (p) => npzBomb(p, [["logprobs", "<f2", 2, 2 ** 30 - 4096]], 16 * 2 ** 20),
  },
  {
    id: "pt-inside",
    what: "64 MB .pt inside the view budget: one storage expanded to 2^24 + 2^27 − 2^23 − 2^20 elements",
    file: "pt-inside.pt",
    inside: true,
    // The budget is 2^24 + 2 per file byte ≈ 2^24 + 2^27; the padding's own 2^23 elements count.
    make: (p) => ptExpand(p, 2 ** 24 + 2 ** 27 - 2 ** 23 - 2 ** 20, 64 * 2 ** 20),
  },
];
