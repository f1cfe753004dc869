/**
 * Helpers of the pickle and `.pt` tests: a pickle assembler whose every opcode is spelled out in
 * the test (so hostile pickles read as what they are), a torch-style tensor and a zip builder
 * (fflate, stored entries) for hand-made `torch.save` archives.
 */
import { zipSync } from "fflate";

const enc = new TextEncoder();

/** A pickle being written opcode by opcode; `bytes()` returns it. */
export class Pickle {
  private readonly out: number[] = [];

  /** Append raw bytes (an opcode and its argument as they are). */
  raw(...bs: number[]): this {
    this.out.push(...bs);
    return this;
  }

  private u32(n: number): number[] {
    return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
  }

  proto(v = 2): this {
    return this.raw(0x80, v);
  }
  mark(): this {
    return this.raw(0x28);
  }
  stop(): this {
    return this.raw(0x2e);
  }
  emptyDict(): this {
    return this.raw(0x7d);
  }
  emptyList(): this {
    return this.raw(0x5d);
  }
  emptyTuple(): this {
    return this.raw(0x29);
  }
  tuple(): this {
    return this.raw(0x74);
  }
  tupleN(k: 1 | 2 | 3): this {
    return this.raw(0x84 + k);
  }
  setitem(): this {
    return this.raw(0x73);
  }
  setitems(): this {
    return this.raw(0x75);
  }
  append(): this {
    return this.raw(0x61);
  }
  appends(): this {
    return this.raw(0x65);
  }
  none(): this {
    return this.raw(0x4e);
  }
  bool(b: boolean): this {
    return this.raw(b ? 0x88 : 0x89);
  }
  reduce(): this {
    return this.raw(0x52);
  }
  build(): this {
    return this.raw(0x62);
  }
  binpersid(): this {
    return this.raw(0x51);
  }
  put(i: number): this {
    return i < 256 ? this.raw(0x71, i) : this.raw(0x72, ...this.u32(i));
  }
  get(i: number): this {
    return i < 256 ? this.raw(0x68, i) : this.raw(0x6a, ...this.u32(i));
  }
  memoize(): this {
    return this.raw(0x94);
  }

  /** An int the way CPython's pickler writes it (BININT1, BININT2, BININT or LONG1). */
  int(v: number | bigint): this {
    const b = BigInt(v);
    if (b >= 0n && b < 256n) return this.raw(0x4b, Number(b));
    if (b >= 0n && b < 65536n) return this.raw(0x4d, Number(b) & 0xff, Number(b) >> 8);
    if (b >= -(2n ** 31n) && b < 2n ** 31n) return this.raw(0x4a, ...this.u32(Number(b)));
    // LONG1: shortest little-endian two's complement.
    const bytes: number[] = [];
    let x = b;
    for (;;) {
      bytes.push(Number(x & 0xffn));
      x >>= 8n;
      const top = bytes[bytes.length - 1] as number;
      if ((x === 0n && top < 0x80) || (x === -1n && top >= 0x80)) break;
    }
    return this.raw(0x8a, bytes.length, ...bytes);
  }

  /** BINFLOAT: big-endian float64. */
  float(x: number): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, x, false);
    return this.raw(0x47, ...b);
  }

  /** BINUNICODE (or SHORT_BINUNICODE with `short`). */
  str(s: string, short = false): this {
    const b = enc.encode(s);
    return short ? this.raw(0x8c, b.length, ...b) : this.raw(0x58, ...this.u32(b.length), ...b);
  }

  /** GLOBAL "module\nname\n". */
  global(module: string, name: string): this {
    return this.raw(0x63, ...enc.encode(`${module}\n${name}\n`));
  }

  /** The persistent id ('storage', torch.<type>, key, 'cpu', numel) followed by BINPERSID. */
  storage(type: string, key: string, numel: number): this {
    return this.mark()
      .str("storage")
      .global("torch", type)
      .str(key)
      .str("cpu")
      .int(numel)
      .tuple()
      .binpersid();
  }

  /** `_rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())` as torch writes it. */
  tensor(
    type: string,
    key: string,
    numel: number,
    offset: number,
    size: readonly number[],
    stride: readonly number[],
  ): this {
    this.global("torch._utils", "_rebuild_tensor_v2").mark();
    this.storage(type, key, numel).int(offset);
    this.mark();
    for (const d of size) this.int(d);
    this.tuple().mark();
    for (const d of stride) this.int(d);
    this.tuple().bool(false).global("collections", "OrderedDict").emptyTuple().reduce();
    return this.tuple().reduce();
  }

  bytes(): Uint8Array {
    return Uint8Array.from(this.out);
  }
}

/** Little-endian bytes of float32 values. */
export function f32Le(...xs: number[]): Uint8Array {
  const b = new Uint8Array(4 * xs.length);
  const v = new DataView(b.buffer);
  for (const [i, x] of xs.entries()) v.setFloat32(4 * i, x, true);
  return b;
}

/**
 * A `torch.save`-style archive: `<prefix>/data.pkl` first, then the storages `<prefix>/data/<key>`,
 * then `<prefix>/version` ("3\n" unless given) and any `extra` entries; all stored (method 0).
 */
export function ptZip(
  pickle: Uint8Array,
  storages: Readonly<Record<string, Uint8Array>> = {},
  options: { prefix?: string; version?: string | null; extra?: Record<string, Uint8Array> } = {},
): Uint8Array {
  const prefix = options.prefix ?? "archive";
  const files: Record<string, Uint8Array> = { [`${prefix}/data.pkl`]: pickle };
  for (const [k, v] of Object.entries(storages)) files[`${prefix}/data/${k}`] = v;
  const version = options.version === undefined ? "3\n" : options.version;
  if (version !== null) files[`${prefix}/version`] = enc.encode(version);
  Object.assign(files, options.extra ?? {});
  return zipSync(files, { level: 0 });
}
