/**
 * Enforces docs/io.md#npz: archives written by np.savez (stored) and np.savez_compressed
 * (deflated), recorded by scripts/record/npyFixtures.py, decode bitwise to the values NumPy
 * printed, in archive order; members that are not `name.npy`, names with folders, broken members
 * and over-large archives are IoErrors naming the member; the sniff tells an npz from a torch
 * archive.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { IoError } from "../../src/errors.js";
import { crc32 } from "../../src/io/_internal/zip.js";
import { NPZ_READER, parseNpz } from "../../src/io/npz.js";
import { expectIoError } from "./_kit.js";
import { bytesOf, expectRecorded, manifest } from "./_npyKit.js";
import { makeZip, utf8 } from "./_zipKit.js";

const FC = { seed: 20261201, numRuns: 200 };

/** A valid one-element .npy member: '<f8' shape (1,) holding 1.5 (3F F8 00 … 00 big-endian). */
const MEMBER = (() => {
  const h = utf8("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }\n");
  return new Uint8Array([
    0x93,
    0x4e,
    0x55,
    0x4d,
    0x50,
    0x59,
    1,
    0,
    h.length,
    0,
    ...h,
    ...[0, 0, 0, 0, 0, 0, 0xf8, 0x3f],
  ]);
})();

describe("parseNpz", () => {
  test("golden: savez and savez_compressed archives decode bitwise to the values numpy printed", () => {
    const files = manifest.files.filter((f) => f.kind === "npz");
    expect(files.map((f) => f.file)).toEqual([
      "savez.npz",
      "savez_compressed.npz",
      "savez_positional.npz",
    ]);
    for (const f of files) {
      const set = parseNpz(bytesOf(f.file), f.file);
      expect(set.format).toBe("npz");
      expect(set.path).toBe(f.file);
      expect(set.metadata).toEqual({});
      // The tensors come in the order np.load lists them (the archive order).
      expect([...set.tensors.keys()]).toEqual(Object.keys(f.tensors));
      for (const [name, rec] of Object.entries(f.tensors))
        expectRecorded(set.tensors.get(name), rec);
    }
    // Positional arrays are named arr_0, arr_1, … by numpy.
    expect([...parseNpz(bytesOf("savez_positional.npz")).tensors.keys()]).toEqual([
      "arr_0",
      "arr_1",
    ]);
  });

  test("golden: a hand-built archive of one stored and one deflated member", () => {
    const set = parseNpz(
      makeZip([
        { name: "a.npy", data: MEMBER },
        { name: "b.npy", data: MEMBER, method: 8 },
      ]),
    );
    expect([...set.tensors.keys()]).toEqual(["a", "b"]);
    expect(set.tensors.get("b")).toEqual({
      dtype: "F64",
      shape: [1],
      data: new Float64Array([1.5]),
    });
  });

  test("rejects: a member that is not name.npy or whose name has a slash", () => {
    for (const name of ["a.txt", "a.NPY", ".npy", "a.npy.gz"]) {
      const e = expectIoError(
        () => parseNpz(makeZip([{ name, data: MEMBER }])),
        `zip entry ${name}`,
      );
      expect(e.message).toContain("<tensor>.npy");
    }
    for (const name of ["dir/a.npy", "dir\\a.npy", "/a.npy"]) {
      const e = expectIoError(
        () => parseNpz(makeZip([{ name, data: MEMBER }])),
        `zip entry ${name}`,
      );
      expect(e.message).toContain("no folders");
    }
  });

  test("rejects: a broken member, naming its tensor", () => {
    const short = MEMBER.subarray(0, MEMBER.length - 1);
    const e = expectIoError(
      () => parseNpz(makeZip([{ name: "x.npy", data: short, method: 8 }]), "b.npz"),
      "x.data",
    );
    expect(e.message).toContain("1 bytes short");
    expect(e.path).toBe("b.npz");
    const notNpy = utf8("not an npy file at all");
    expectIoError(() => parseNpz(makeZip([{ name: "y.npy", data: notNpy }])), "y.magic");
    // A bad CRC inside the archive is the zip reader's error on the member.
    const bad = makeZip([{ name: "z.npy", data: MEMBER, crc: crc32(MEMBER) ^ 0x80 }]);
    expectIoError(() => parseNpz(bad), "zip entry z.npy");
  });

  test("rejects: members of more than 4 gib uncompressed in all, before any is read", () => {
    // Three deflated members each declaring 2^31 − 1 bytes: 3 · (2^31 − 1) > 2^32.
    const lie = { data: MEMBER, method: 8, size: 2 ** 31 - 1 };
    const archive = makeZip([
      { name: "a.npy", ...lie },
      { name: "b.npy", ...lie },
      { name: "c.npy", ...lie },
    ]);
    const e = expectIoError(() => parseNpz(archive), "zip");
    expect(e.message).toContain("4 GiB");
  });

  test("property: truncated or mutated archives parse or throw an io error", () => {
    const valid = bytesOf("savez_compressed.npz");
    fc.assert(
      fc.property(
        fc.oneof(
          fc.nat({ max: valid.length - 1 }).map((n) => valid.slice(0, n)),
          fc
            .array(fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })), {
              minLength: 1,
              maxLength: 6,
            })
            .map((edits) => {
              const b = valid.slice();
              for (const [i, v] of edits) b[i] = v;
              return b;
            }),
        ),
        (bytes) => {
          try {
            parseNpz(bytes);
          } catch (e) {
            if (!(e instanceof IoError)) throw e;
          }
        },
      ),
      FC,
    );
  });
});

describe("NPZ_READER", () => {
  test("golden: the entry sniffs a zip whose first member is .npy, not a torch archive", () => {
    expect(NPZ_READER.format).toBe("npz");
    expect(NPZ_READER.extensions).toEqual([".npz"]);
    expect(NPZ_READER.defaultMaxBytes).toBe(4 * 2 ** 30);
    expect(NPZ_READER.sniff(bytesOf("savez.npz").subarray(0, 4096))).toBe(true);
    expect(NPZ_READER.sniff(bytesOf("savez_compressed.npz").subarray(0, 64))).toBe(true);
    // A torch archive starts with <name>/data.pkl; other zips and .npy files are not sniffed.
    const torchLike = makeZip([{ name: "archive/data.pkl", data: utf8("\x80\x02") }]);
    expect(NPZ_READER.sniff(torchLike)).toBe(false);
    expect(NPZ_READER.sniff(makeZip([{ name: "a.txt", data: MEMBER }]))).toBe(false);
    expect(NPZ_READER.sniff(bytesOf("f4_le.npy"))).toBe(false);
    expect(NPZ_READER.sniff(bytesOf("savez.npz").subarray(0, 40))).toBe(false); // name cut off
    const set = NPZ_READER.parse("readTensors", bytesOf("savez.npz"), "run/batch.npz");
    expect(set.tensors.size).toBe(4);
    expect(expectIoError(() => NPZ_READER.parse("readTensors", torchLike, "t.npz")).fn).toBe(
      "readTensors",
    );
  });
});
