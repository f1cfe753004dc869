/**
 * A zip writer for the zip / npz tests, written from the layout of APPNOTE.TXT §4.3 (local header
 * 30 bytes + name + extra, data, central header 46 bytes + name + extra + comment, end record 22
 * bytes + comment; ZIP64 end record 56 bytes and locator 20 bytes). Every field can be overridden,
 * so that hostile archives are spelled out in the tests; `raw deflate` data comes from fflate's
 * deflateSync unless the entry gives its own compressed bytes.
 */
import { deflateSync } from "fflate";
import { crc32 } from "../../src/io/_internal/zip.js";
import { concat } from "./_kit.js";

/** One member of an archive to build. */
export interface KitEntry {
  readonly name: string;
  readonly data: Uint8Array;
  /** 0 = stored (default), 8 = deflate. */
  readonly method?: number;
  /** The compressed bytes to store instead of `data` (stored) or deflateSync(data). */
  readonly compressed?: Uint8Array;
  /** Overrides of the central directory's fields. */
  readonly crc?: number;
  readonly size?: number;
  readonly csize?: number;
  readonly flags?: number;
  /** Override the local header offset written in the central directory. */
  readonly offset?: number;
  /** The local header's name, method and extra field (default: the central ones, no extra). */
  readonly localName?: string;
  readonly localMethod?: number;
  readonly localExtra?: Uint8Array;
  readonly centralExtra?: Uint8Array;
  /** Write size, compressed size and offset as 0xFFFFFFFF with a ZIP64 extra field (id 1), in both headers. */
  readonly zip64?: boolean;
}

/** Options of the whole archive. */
export interface KitOptions {
  /** Write a ZIP64 end record and locator, with the 32-bit end record fields set to 0xFFFF…. */
  readonly zip64End?: boolean;
  readonly comment?: Uint8Array;
  /** Override the entry count in the end record(s). */
  readonly total?: number;
  /** Override the central directory offset in the end record(s). */
  readonly cdOffset?: number;
}

function le(n: number, width: number): number[] {
  const out: number[] = [];
  let v = n;
  for (let k = 0; k < width; k++) {
    out.push(v % 256);
    v = Math.floor(v / 256);
  }
  return out;
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** An extra field record: id, size, data. */
export function extraField(id: number, data: Uint8Array | readonly number[]): Uint8Array {
  return concat(le(id, 2), le(data.length, 2), data);
}

/** Build a zip archive from the entries, in order (local records, central directory, end records). */
export function makeZip(entries: readonly KitEntry[], opts: KitOptions = {}): Uint8Array {
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let at = 0;
  for (const e of entries) {
    const method = e.method ?? 0;
    const body = e.compressed ?? (method === 8 ? deflateSync(e.data) : e.data);
    const crc = e.crc ?? crc32(e.data);
    const size = e.size ?? e.data.length;
    const offset = e.offset ?? at;
    const z64 = e.zip64 === true;
    const sz = (v: number) => le(z64 ? 0xffffffff : v, 4);
    const localZ64 = z64
      ? extraField(1, concat(le(size, 8), le(body.length, 8)))
      : new Uint8Array();
    const centralZ64 = z64
      ? extraField(1, concat(le(size, 8), le(e.csize ?? body.length, 8), le(offset, 8)))
      : new Uint8Array();
    const lname = enc(e.localName ?? e.name);
    const lextra = concat(localZ64, e.localExtra ?? []);
    const local = concat(
      le(0x04034b50, 4),
      le(z64 ? 45 : 20, 2),
      le(e.flags ?? 0, 2),
      le(e.localMethod ?? method, 2),
      le(0, 4), // time, date
      le(crc, 4),
      sz(body.length),
      sz(size),
      le(lname.length, 2),
      le(lextra.length, 2),
      lname,
      lextra,
      body,
    );
    const cname = enc(e.name);
    const cextra = concat(centralZ64, e.centralExtra ?? []);
    centrals.push(
      concat(
        le(0x02014b50, 4),
        le(z64 ? 45 : 20, 2),
        le(z64 ? 45 : 20, 2),
        le(e.flags ?? 0, 2),
        le(method, 2),
        le(0, 4),
        le(crc, 4),
        sz(e.csize ?? body.length),
        sz(size),
        le(cname.length, 2),
        le(cextra.length, 2),
        le(0, 2), // comment length
        le(0, 2), // disk
        le(0, 2), // internal attributes
        le(0, 4), // external attributes
        z64 ? le(0xffffffff, 4) : le(offset, 4),
        cname,
        cextra,
      ),
    );
    locals.push(local);
    at += local.length;
  }
  const cd = concat(...centrals);
  const cdOffset = opts.cdOffset ?? at;
  const total = opts.total ?? entries.length;
  const comment = opts.comment ?? new Uint8Array();
  const parts: (Uint8Array | number[])[] = [...locals, cd];
  if (opts.zip64End === true) {
    const endAt = at + cd.length;
    parts.push(
      concat(
        le(0x06064b50, 4),
        le(44, 8),
        le(45, 2),
        le(45, 2),
        le(0, 4),
        le(0, 4),
        le(total, 8),
        le(total, 8),
        le(cd.length, 8),
        le(cdOffset, 8),
      ),
      concat(le(0x07064b50, 4), le(0, 4), le(endAt, 8), le(1, 4)),
    );
  }
  const z = opts.zip64End === true;
  parts.push(
    concat(
      le(0x06054b50, 4),
      le(0, 2),
      le(0, 2),
      le(z ? 0xffff : total, 2),
      le(z ? 0xffff : total, 2),
      le(z ? 0xffffffff : cd.length, 4),
      le(z ? 0xffffffff : cdOffset, 4),
      le(comment.length, 2),
      comment,
    ),
  );
  return concat(...parts);
}

/** UTF-8 bytes of a string. */
export function utf8(s: string): Uint8Array {
  return enc(s);
}
