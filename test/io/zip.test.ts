/**
 * Enforces docs/io.md#zip: the one zip reader finds the end record by a bounded scan, reads ZIP64
 * records and extra fields, returns exactly the declared bytes of stored and deflated entries with
 * their CRC-32 checked, and turns every broken rule of a hostile archive — truncation at any
 * length, a bad CRC, a deflate bomb, duplicate names, other methods, encryption, overlapping or
 * outside entries — into an IoError. Archives are built by test/io/_zipKit.ts (field by field) or
 * recorded by NumPy's zipfile writer (test/fixtures/io/npy, scripts/record/npyFixtures.py).
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { Inflate } from "fflate";
import { afterEach, describe, expect, test, vi } from "vitest";
import { IoError } from "../../src/errors.js";
import {
  crc32,
  crc32Js,
  INFLATE_STEP_BYTES,
  openZip,
  setCrc32,
  setInflateRaw,
} from "../../src/io/_internal/zip.js";
import { concat, expectIoError } from "./_kit.js";
import { extraField, makeZip, utf8 } from "./_zipKit.js";

const FC = { seed: 20261201, numRuns: 300 };
const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../fixtures/io/npy/${name}`, import.meta.url)));

const open = (bytes: Uint8Array, limits?: { maxEntries?: number; maxEntryBytes?: number }) =>
  openZip("f", bytes, "a.zip", limits);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

const A = utf8("alpha ".repeat(20)); // 120 bytes
const B = utf8("beta");
const SMALL = makeZip(
  [
    { name: "a.txt", data: A, method: 8 },
    { name: "dir/b.bin", data: B },
  ],
  { zip64End: true },
);

/**
 * Raw deflate bytes of one fixed-Huffman block (RFC 1951 §3.2.6): the literal 0, then `repeats`
 * copies of (length 258, distance 1), then end of block — 1 + 258·repeats zero bytes from
 * 13 bits per copy (code 285 is the 8 bits 11000101, distance code 0 the 5 bits 00000).
 */
function zeroBomb(repeats: number): Uint8Array {
  const bits: number[] = [];
  const put = (value: number, n: number) => {
    for (let k = 0; k < n; k++) bits.push((value >>> k) & 1); // header fields: LSB first
  };
  const code = (value: number, n: number) => {
    for (let k = n - 1; k >= 0; k--) bits.push((value >>> k) & 1); // Huffman codes: MSB first
  };
  put(1, 1); // BFINAL
  put(1, 2); // BTYPE = 01, fixed Huffman
  code(0x30, 8); // literal 0
  for (let r = 0; r < repeats; r++) {
    code(0xc5, 8); // length symbol 285 = 258
    code(0, 5); // distance code 0 = 1
  }
  code(0, 7); // end of block (symbol 256)
  const out = new Uint8Array(Math.ceil(bits.length / 8));
  bits.forEach((b, i) => {
    out[i >> 3] = (out[i >> 3] as number) | (b << (i & 7));
  });
  return out;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("crc32", () => {
  test("golden: the check value of 123456789 is 0xcbf43926", () => {
    // The published check value of CRC-32/ISO-HDLC (the zip CRC) over the ASCII bytes "123456789".
    expect(crc32(utf8("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array())).toBe(0);
  });
});

describe("Node's native zlib in the zip reader (src/node/registerNative.ts)", () => {
  test("identity: zlib's CRC-32 and the slicing-by-8 loop agree on every length and alignment; zlib's bounded inflate reads what fflate reads and refuses what it refuses", async () => {
    const was = { crc: setCrc32(null), inflate: setInflateRaw(null) };
    try {
      const native = await import("../../src/node/registerNative.js");
      setCrc32(native.nativeCrc32);
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(7), (bytes, skip) => {
          const view = bytes.subarray(Math.min(skip, bytes.length));
          expect(crc32(view)).toBe(crc32Js(view));
        }),
        FC,
      );
      setInflateRaw(native.nativeInflateRaw);
      expect(text(open(SMALL).read("a.txt"))).toBe(text(A));
      const bomb = zeroBomb(65000);
      const z = open(
        makeZip([{ name: "bomb", data: new Uint8Array(1000), method: 8, compressed: bomb }]),
      );
      expect(expectIoError(() => z.read("bomb"), "zip entry bomb").message).toContain(
        "more bytes (a zip bomb?)",
      );
      const data = zeroBomb(3);
      const zero = new Uint8Array(775);
      const entry = (size: number) => ({
        name: "z",
        data: zero,
        method: 8,
        compressed: data,
        size,
      });
      expect(open(makeZip([entry(775)])).read("z")).toEqual(zero);
      expect(
        expectIoError(() => open(makeZip([entry(776)])).read("z"), "zip entry z").message,
      ).toContain("got 775 bytes");
      const cut = { name: "z", data: zero, method: 8, compressed: data.subarray(0, 4) };
      expect(expectIoError(() => open(makeZip([cut])).read("z"), "zip entry z").message).toContain(
        "valid deflate data",
      );
      // A head: the first bytes, from a prefix of the stream (and all of a short entry).
      expect(text(open(SMALL).readHead("a.txt", 11))).toBe("alpha alpha");
      expect(text(open(SMALL).readHead("a.txt", 500))).toBe(text(A));
      expect(open(makeZip([entry(775)])).readHead("z", 10)).toEqual(new Uint8Array(10));
    } finally {
      setCrc32(was.crc);
      setInflateRaw(was.inflate);
    }
  });
});

describe("openZip", () => {
  test("golden: stored and deflated entries in central-directory order with their exact bytes", () => {
    const z = open(SMALL);
    expect(z.entries).toEqual([
      { name: "a.txt", size: 120, method: 8 },
      { name: "dir/b.bin", size: 4, method: 0 },
    ]);
    expect(text(z.read("a.txt"))).toBe("alpha ".repeat(20));
    expect(text(z.read("dir/b.bin"))).toBe("beta");
    // A zero-byte entry, stored and deflated.
    const empty = open(
      makeZip([
        { name: "e0", data: new Uint8Array() },
        { name: "e8", data: new Uint8Array(), method: 8 },
      ]),
    );
    expect(empty.read("e0").length).toBe(0);
    expect(empty.read("e8").length).toBe(0);
    // Flag bit 3 (sizes in a data descriptor after the data): the central sizes are used.
    const described = open(makeZip([{ name: "d", data: A, method: 8, flags: 0x08 }]));
    expect(text(described.read("d"))).toBe("alpha ".repeat(20));
  });

  test("golden: numpy's zipfile archives, whose local headers carry a zip64 extra field", () => {
    // np.savez opens each member with force_zip64=True: the local extra field (20 bytes, id 1)
    // differs from the central one (none), so the data start must come from the local lengths.
    const stored = fixture("savez.npz");
    expect(stored[28]).toBe(20); // local extra length of the first member
    for (const name of ["savez.npz", "savez_compressed.npz"]) {
      const z = open(fixture(name));
      expect(z.entries.map((e) => e.name)).toEqual([
        "logprobs.npy",
        "response_mask.npy",
        "advantages.npy",
        "steps.npy",
      ]);
      expect(z.entries.map((e) => e.method)).toEqual(
        name === "savez.npz" ? [0, 0, 0, 0] : [8, 8, 8, 8],
      );
      for (const e of z.entries) {
        const b = z.read(e.name);
        expect(b.length).toBe(e.size);
        expect([...b.subarray(0, 6)]).toEqual([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY
      }
    }
  });

  test("golden: zip64 end records and zip64 extra fields in central and local headers", () => {
    const z = open(
      makeZip(
        [
          { name: "a", data: A, method: 8, zip64: true },
          { name: "b", data: B, zip64: true, localExtra: extraField(0x4246, new Uint8Array(40)) },
        ],
        { zip64End: true },
      ),
    );
    expect(z.entries).toEqual([
      { name: "a", size: 120, method: 8 },
      { name: "b", size: 4, method: 0 },
    ]);
    expect(text(z.read("a"))).toBe("alpha ".repeat(20));
    expect(text(z.read("b"))).toBe("beta");
    // A comment after the end record is allowed when its length field ends the file exactly.
    const commented = makeZip([{ name: "b", data: B }], { comment: utf8("PK\x05\x06 look-alike") });
    expect(text(open(commented).read("b"))).toBe("beta");
  });

  test("property: every truncation of an archive is an io error", () => {
    // Exhaustively: the end record must end the file, so no prefix is an archive.
    for (let n = 0; n < SMALL.length; n++) expectIoError(() => open(SMALL.subarray(0, n)), "zip");
    fc.assert(
      fc.property(fc.nat({ max: SMALL.length - 1 }), (n) => {
        expectIoError(() => open(SMALL.slice(0, n)));
      }),
      FC,
    );
  });

  test("property: mutated archives open and read or throw an io error", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: SMALL.length - 1 }), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 6,
        }),
        (edits) => {
          const b = SMALL.slice();
          for (const [i, v] of edits) b[i] = v;
          try {
            const z = open(b);
            for (const e of z.entries) expect(z.read(e.name).length).toBe(e.size);
          } catch (e) {
            if (!(e instanceof IoError)) throw e;
          }
        },
      ),
      FC,
    );
  });

  test("rejects: bytes without an end record in the last 65557 bytes", () => {
    expectIoError(() => open(new Uint8Array(21)), "zip");
    const e = expectIoError(() => open(new Uint8Array(100_000)), "zip");
    expect(e.message).toContain("end-of-central-directory");
    // An end record followed by more bytes than its comment length says.
    expectIoError(() => open(concat(makeZip([{ name: "b", data: B }]), [0])), "zip");
    // An end record 65558 bytes before the end (a comment cannot be that long) is not found.
    const far = makeZip([{ name: "b", data: B }]);
    const padded = concat(far, new Uint8Array(65536));
    padded[far.length - 2] = 0xff;
    padded[far.length - 1] = 0xff; // comment length 65535, one byte short of the padding
    expectIoError(() => open(padded), "zip");
    // The longest comment, 65535 bytes, is found.
    const longest = makeZip([{ name: "b", data: B }], { comment: new Uint8Array(65535) });
    expect(text(open(longest).read("b"))).toBe("beta");
  });

  test("rejects: a bad crc", () => {
    for (const method of [0, 8]) {
      const z = open(makeZip([{ name: "a", data: A, method, crc: crc32(A) ^ 1 }]));
      const e = expectIoError(() => z.read("a"), "zip entry a");
      expect(e.message).toContain("CRC-32");
    }
  });

  test("rejects: a deflate bomb after one bounded step of work", () => {
    // 65000 copies inflate to 1 + 258·65000 = 16 770 001 bytes from ⌈(3 + 8 + 13·65000 + 7)/8⌉
    // = 105 628 compressed bytes (7 steps); the central directory declares 1000 bytes.
    const bomb = zeroBomb(65000);
    expect(bomb.length).toBe(105_628);
    const push = vi.spyOn(Inflate.prototype, "push");
    const z = open(
      makeZip([{ name: "bomb", data: new Uint8Array(1000), method: 8, compressed: bomb }]),
    );
    const e = expectIoError(() => z.read("bomb"), "zip entry bomb");
    expect(e.message).toContain("declared 1000 bytes");
    // The inflater saw one step of compressed bytes, not the whole stream.
    const pushed = push.mock.calls.reduce((n, [chunk]) => n + chunk.length, 0);
    expect(push).toHaveBeenCalledTimes(1);
    expect(pushed).toBe(INFLATE_STEP_BYTES);
  });

  test("rejects: deflate data inflating to other than the declared size", () => {
    // zeroBomb(3) inflates to 1 + 3·258 = 775 zero bytes.
    const data = zeroBomb(3);
    const zero = new Uint8Array(775);
    const entry = (size: number) => ({ name: "z", data: zero, method: 8, compressed: data, size });
    expect(open(makeZip([entry(775)])).read("z")).toEqual(zero);
    expectIoError(() => open(makeZip([entry(774)])).read("z"), "zip entry z");
    const short = expectIoError(() => open(makeZip([entry(776)])).read("z"), "zip entry z");
    expect(short.message).toContain("got 775 bytes");
    // Truncated and invalid deflate streams (BTYPE = 11 is reserved).
    const cut = { name: "z", data: zero, method: 8, compressed: data.subarray(0, 4) };
    expect(expectIoError(() => open(makeZip([cut])).read("z"), "zip entry z").message).toContain(
      "valid deflate data",
    );
    const bad = { name: "z", data: zero, method: 8, compressed: new Uint8Array([0x07, 0, 0]) };
    expect(expectIoError(() => open(makeZip([bad])).read("z"), "zip entry z").message).toContain(
      "invalid block type",
    );
  });

  test("rejects: duplicate names", () => {
    const e = expectIoError(
      () =>
        open(
          makeZip([
            { name: "x.npy", data: A },
            { name: "x.npy", data: B },
          ]),
        ),
      "zip",
    );
    expect(e.message).toContain('"x.npy" twice');
  });

  test("rejects: methods other than stored and deflate, and encrypted entries", () => {
    for (const method of [1, 9, 12, 14, 99]) {
      const e = expectIoError(() => open(makeZip([{ name: "a", data: A, method }])), "zip entry a");
      expect(e.message).toContain(`method ${method}`);
    }
    for (const flags of [0x1, 0x40]) {
      expectIoError(() => open(makeZip([{ name: "a", data: A, flags }])), "zip entry a");
    }
    // A local header that disagrees with the central directory.
    expectIoError(() => open(makeZip([{ name: "a", data: A, localMethod: 8 }])), "zip entry a");
    expectIoError(() => open(makeZip([{ name: "a", data: A, localName: "b" }])), "zip entry a");
  });

  test("rejects: entries overlapping or pointing outside the file", () => {
    // The overlapping-member trick: b's central record points at a local header for b that lies
    // inside a's data (a's data start = 30 + 1 name byte = 31).
    const inner = makeZip([{ name: "b", data: B }]).subarray(0, 30 + 1 + 4);
    const overlap = makeZip([
      { name: "a", data: inner },
      { name: "b", data: B, offset: 31 },
    ]);
    const e = expectIoError(() => open(overlap), "zip entry b");
    expect(e.message).toContain("no overlapping entries");
    // A local header offset beyond the data area, or at bytes that are not a local header.
    const two = [
      { name: "a", data: A },
      { name: "b", data: B, offset: 1 << 30 },
    ];
    expect(expectIoError(() => open(makeZip(two)), "zip entry b").message).toContain(
      "before the central directory",
    );
    const misplaced = makeZip([
      { name: "a", data: A },
      { name: "b", data: B, offset: 3 },
    ]);
    expect(expectIoError(() => open(misplaced), "zip entry b").message).toContain(
      "no local header signature",
    );
    // A declared compressed size running into the central directory.
    const long = makeZip([{ name: "a", data: A, method: 8, csize: 100_000 }]);
    expect(expectIoError(() => open(long), "zip entry a").message).toContain(
      "before the central directory",
    );
    // A stored entry whose sizes disagree.
    expectIoError(() => open(makeZip([{ name: "a", data: A, size: 121 }])), "zip entry a");
    // A central directory beyond the end record, or with more or fewer records than counted.
    const far = makeZip([{ name: "a", data: A }], { cdOffset: 10_000 });
    expect(expectIoError(() => open(far), "zip").message).toContain("ending by the end record");
    const more = makeZip([{ name: "a", data: A }], { total: 2 });
    expect(expectIoError(() => open(more), "zip").message).toContain("entry 1 past its end");
    const fewer = makeZip([{ name: "a", data: A }], { total: 0 });
    expect(expectIoError(() => open(fewer), "zip").message).toContain("bytes left over");
    // A zip64 extra field missing although the fields say 0xFFFFFFFF: the central record of "a"
    // (46 + 1 name byte + 28 extra bytes) with its extra length (at +30) set to 0.
    const z64 = makeZip([{ name: "a", data: A, zip64: true }]);
    const cut = z64.slice();
    cut[z64.length - 22 - (46 + 1 + 28) + 30] = 0;
    expect(expectIoError(() => open(cut), "zip entry a").message).toContain("ZIP64 extra field");
  });

  test("rejects: more entries than maxEntries, and an entry over maxEntryBytes", () => {
    const three = makeZip(["a", "b", "c"].map((name) => ({ name, data: B })));
    expect(open(three, { maxEntries: 3 }).entries.length).toBe(3);
    expect(expectIoError(() => open(three, { maxEntries: 2 }), "zip").message).toContain(
      "at most 2 entries",
    );
    expectIoError(() => open(three, { maxEntryBytes: 3 }), "zip entry a");
    // The default bound: 2^31 − 1 bytes, declared through a zip64 extra field.
    const huge = makeZip([{ name: "h", data: B, method: 8, zip64: true, size: 2 ** 31 }]);
    expectIoError(() => open(huge), "zip entry h");
  });

  test("rejects: an unknown name, listing present names", () => {
    const z = open(makeZip(["a", "b", "c", "d", "e", "f", "g"].map((name) => ({ name, data: B }))));
    const e = expectIoError(() => z.read("x"), "zip entry x");
    expect(e.message).toContain('present: "a", "b", "c", "d", "e", … (7 in all)');
    expect(e.path).toBe("a.zip");
  });
});
