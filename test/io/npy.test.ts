/**
 * Enforces docs/io.md#npy: every file NumPy wrote (every dtype, both byte orders, C and Fortran
 * order, header versions 1.0/2.0/3.0, 0-d and empty shapes; recorded by
 * scripts/record/npyFixtures.py with the values NumPy itself printed) decodes bitwise to those
 * values, and every broken rule of a hand-built file — magic, version, header length, header
 * literal, descr, data length, BOOL bytes, 64-bit integers past 2^53 — is an IoError.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { IoError } from "../../src/errors.js";
import { NPY_READER, parseNpy } from "../../src/io/npy.js";
import { concat, expectIoError } from "./_kit.js";
import { bytesOf, expectRecorded, manifest } from "./_npyKit.js";

const FC = { seed: 20261201, numRuns: 300 };

/** .npy bytes: magic, version, little-endian header length (overridable), header text, data. */
function npy(
  header: string,
  data: Uint8Array | readonly number[] = [],
  opts: { version?: number; headerLength?: number; headerBytes?: Uint8Array } = {},
): Uint8Array {
  const version = opts.version ?? 1;
  const h = opts.headerBytes ?? new TextEncoder().encode(header);
  const n = opts.headerLength ?? h.length;
  const width = version === 1 ? 2 : 4;
  const len = Array.from({ length: width }, (_, k) => Math.floor(n / 256 ** k) % 256);
  return concat([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0], len, h, data);
}

const dict = (descr: string, shape: string, fortran = "False") =>
  `{'descr': '${descr}', 'fortran_order': ${fortran}, 'shape': ${shape}, }\n`;

describe("parseNpy", () => {
  test("golden: every recorded numpy file decodes bitwise to the values numpy printed", () => {
    // Provenance: the manifest was written by the committed script at its recorded hash.
    const script = readFileSync(new URL(`../../${manifest.provenance.script}`, import.meta.url));
    expect(createHash("sha256").update(script).digest("hex")).toBe(
      manifest.provenance.script_sha256,
    );
    const files = manifest.files.filter((f) => f.kind === "npy");
    expect(files.length).toBe(28);
    const descrs = new Set<string>();
    for (const f of files) {
      const bytes = bytesOf(f.file);
      expect(createHash("sha256").update(bytes).digest("hex"), f.file).toBe(f.sha256);
      const set = parseNpy(bytes, `fixtures/${f.file}`);
      expect(set.format).toBe("npy");
      expect(set.metadata).toEqual({});
      const [name, rec] = Object.entries(f.tensors)[0] as [string, (typeof f.tensors)[string]];
      expect([...set.tensors.keys()]).toEqual([name]);
      expectRecorded(set.tensors.get(name), rec);
      descrs.add(rec.descr);
    }
    // Coverage of the recorded set: every dtype, both byte orders, all three header versions,
    // Fortran order, a 0-d array and empty shapes.
    expect(descrs.size).toBe(21);
    const recs = files.map((f) => Object.values(f.tensors)[0] as (typeof f.tensors)[string]);
    expect(new Set(recs.map((r) => r.version?.[0]))).toEqual(new Set([1, 2, 3]));
    expect(recs.filter((r) => r.fortran_order).length).toBe(2);
    expect(recs.some((r) => r.shape.length === 0)).toBe(true);
    expect(recs.filter((r) => r.shape.includes(0)).length).toBe(2);
  });

  test("golden: fortran order is transposed to row-major", () => {
    // Shape [2, 3] in Fortran order stores column by column: element (i, j) at offset i + 2j, so
    // the bytes 1 4 2 5 3 6 hold the rows [1, 2, 3] and [4, 5, 6].
    const t = parseNpy(npy(dict("|u1", "(2, 3)", "True"), [1, 4, 2, 5, 3, 6])).tensors.get("array");
    expect(t).toEqual({ dtype: "U8", shape: [2, 3], data: new Uint8Array([1, 2, 3, 4, 5, 6]) });
    // Rank 3, [2, 2, 2]: (i, j, k) at offset i + 2j + 4k; row-major r = 4i + 2j + k reads
    // offsets 0 4 2 6 1 5 3 7.
    const t3 = parseNpy(npy(dict("|i1", "(2, 2, 2)", "True"), [0, 1, 2, 3, 4, 5, 6, 7]));
    expect([...(t3.tensors.get("array")?.data ?? [])]).toEqual([0, 4, 2, 6, 1, 5, 3, 7]);
    // The recorded Fortran files agree with NumPy's own row-major values (checked above); a
    // Fortran [3] vector and a Fortran scalar are their C counterparts.
    const v = parseNpy(npy(dict("|u1", "(3,)", "True"), [7, 8, 9])).tensors.get("array");
    expect([...(v?.data ?? [])]).toEqual([7, 8, 9]);
  });

  test("golden: big-endian and little-endian files hold the same values", () => {
    for (const kind of ["f2", "f4", "f8", "i2", "i4", "i8", "u2", "u4", "u8"]) {
      const le = parseNpy(bytesOf(`${kind}_le.npy`)).tensors.get("array");
      const be = parseNpy(bytesOf(`${kind}_be.npy`)).tensors.get("array");
      expect(be?.dtype).toBe(le?.dtype);
      expect(Object.is(be?.data[1], le?.data[1])).toBe(true);
      expect([...(be?.data ?? [])].map(String)).toEqual([...(le?.data ?? [])].map(String));
    }
    // '>f8' 1.0 is 3F F0 00 … 00 big-endian; '=' is read as little-endian.
    const be1 = parseNpy(npy(dict(">f8", "()"), [0x3f, 0xf0, 0, 0, 0, 0, 0, 0]));
    expect(be1.tensors.get("array")?.data[0]).toBe(1);
    const ne = parseNpy(npy(dict("=u2", "(1,)"), [0x01, 0x02]));
    expect(ne.tensors.get("array")?.data[0]).toBe(0x0201);
  });

  test("golden: header literal variants of the grammar", () => {
    // Double quotes, any key order, no trailing comma, blanks and tabs, (n,) and (a, b,) tuples.
    const cases: [string, number[]][] = [
      [`{"shape": (2,), "descr": "<u2", "fortran_order": False}`, [2]],
      [`{ 'fortran_order' : False ,\t'shape' : ( 1 , 2 , ) , 'descr' : '<u2' }   \n`, [1, 2]],
      [`{'descr':'<u2','fortran_order':False,'shape':(2,)}`, [2]],
      [`{'descr': '<u2', 'fortran_order': False, 'shape': (), }`, []],
    ];
    for (const [header, shape] of cases) {
      const count = shape.reduce((a, b) => a * b, 1);
      const t = parseNpy(npy(header, new Uint8Array(2 * count))).tensors.get("array");
      expect(t?.shape, header).toEqual(shape);
    }
  });

  test("golden: the tensor is named after the file's base name", () => {
    const b = bytesOf("scalar.npy");
    expect([...parseNpy(b, "/a/b/old_log_probs.npy").tensors.keys()]).toEqual(["old_log_probs"]);
    expect([...parseNpy(b, "C:\\x\\y.z.NPY").tensors.keys()]).toEqual(["y.z"]);
    expect([...parseNpy(b, "step_0001").tensors.keys()]).toEqual(["step_0001"]);
    expect([...parseNpy(b).tensors.keys()]).toEqual(["array"]);
    expect(parseNpy(b).path).toBe("<bytes>");
  });

  test("rejects: a bad magic, version or header length", () => {
    const ok = npy(dict("<f8", "()"), new Uint8Array(8));
    expect(parseNpy(ok).tensors.get("array")?.data[0]).toBe(0);
    expectIoError(() => parseNpy(ok.subarray(0, 9)), "magic");
    const magic = ok.slice();
    magic[1] = 0x6e; // \x93nUMPY
    expectIoError(() => parseNpy(magic), "magic");
    for (const [major, minor] of [
      [0, 0],
      [4, 0],
      [1, 1],
    ]) {
      const v = ok.slice();
      v[6] = major as number;
      v[7] = minor as number;
      expect(expectIoError(() => parseNpy(v), "version").message).toContain(`${major}.${minor}`);
    }
    // Beyond the file, and over the 1 MiB cap (rejected before any header byte is read).
    expectIoError(
      () => parseNpy(npy(dict("<f8", "()"), [], { headerLength: 5000 })),
      "header length",
    );
    const big = npy("", [], { version: 2, headerLength: 2 ** 20 + 1 });
    expect(expectIoError(() => parseNpy(big), "header length").message).toContain("1 MiB");
    expectIoError(
      () => parseNpy(npy("", [], { version: 2, headerLength: 2 ** 32 - 1 })),
      "header length",
    );
    // A version 2.0 file too short for its 4-byte length field.
    expectIoError(() => parseNpy(npy("", [], { version: 2 }).subarray(0, 11)), "header length");
  });

  test("rejects: a header literal outside the grammar", () => {
    const bad = [
      "{'descr': '<f8', 'fortran_order': False}", // missing shape
      "{'descr': '<f8', 'fortran_order': False, 'shape': (), 'extra': 1}",
      "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': ()}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1)}", // (1) is an int, not a tuple
      "{'descr': '<f8', 'fortran_order': False, 'shape': [1]}",
      "{'descr': '<f8', 'fortran_order': false, 'shape': ()}",
      "{'descr': '<f8', 'fortran_order': 0, 'shape': ()}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (01,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1L,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1.0,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (9007199254740993,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': ((1,),)}",
      "{'descr': '<f\\x38', 'fortran_order': False, 'shape': ()}",
      "{'descr': '<f8, 'fortran_order': False, 'shape': ()}",
      "{'descr': '<f8' 'fortran_order': False, 'shape': ()}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': ()} x",
      "{'descr': '<f8', 'fortran_order': False, 'shape': ()",
      "['descr', '<f8']",
      "",
      `{'descr': '<f8', 'fortran_order': False, 'shape': (${"1, ".repeat(65)})}`,
    ];
    for (const h of bad) {
      const e = expectIoError(() => parseNpy(npy(h, new Uint8Array(8))), "header");
      expect(e.message, h).toContain("Python dict literal");
    }
    // Version 3.0 headers are UTF-8; invalid UTF-8 is rejected (1.0/2.0 are latin-1 by design).
    const notUtf8 = concat(
      new TextEncoder().encode("{'descr': '<f8"),
      [0xff],
      new TextEncoder().encode("'}"),
    );
    expectIoError(() => parseNpy(npy("", [], { version: 3, headerBytes: notUtf8 })), "header");
  });

  test("rejects: complex, object, structured, datetime and string dtypes", () => {
    const cases: [string, string][] = [
      ["'<c16'", "complex"],
      ["'|O'", "object"],
      ["'<M8[ns]'", "datetime"],
      ["'<m8'", "timedelta"],
      ["'|S5'", "byte string"],
      ["'<U3'", "unicode"],
      ["'|V8'", "void"],
      ["'<f16'", "float of 16 bytes"],
      ["'|f4'", "byte order < or >"],
      ["'f4'", "no byte order"],
      ["'<f4x'", "simple numeric"],
      ["'<x4'", "unsupported"],
    ];
    for (const [descr, fragment] of cases) {
      const h = `{'descr': ${descr}, 'fortran_order': False, 'shape': (1,), }`;
      const e = expectIoError(() => parseNpy(npy(h, new Uint8Array(16))), "descr");
      expect(e.message, descr).toContain(fragment);
    }
    const structured =
      "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }";
    const e = expectIoError(() => parseNpy(npy(structured, new Uint8Array(8))), "descr");
    expect(e.message).toContain("structured");
  });

  test("rejects: data shorter or longer than product(shape) × itemsize", () => {
    // (2, 3) of <f4 needs 2 · 3 · 4 = 24 bytes.
    const h = dict("<f4", "(2, 3)");
    expect(parseNpy(npy(h, new Uint8Array(24))).tensors.get("array")?.shape).toEqual([2, 3]);
    const long = expectIoError(() => parseNpy(npy(h, new Uint8Array(25))), "data");
    expect(long.message).toContain("1 trailing bytes");
    const short = expectIoError(() => parseNpy(npy(h, new Uint8Array(20))), "data");
    expect(short.message).toContain("4 bytes short");
    // 2^26 · 2^26 · 2^26 elements overflow any allocation; rejected from the byte count alone.
    expectIoError(
      () => parseNpy(npy(dict("<f8", `(${2 ** 26}, ${2 ** 26}, ${2 ** 26})`), new Uint8Array(8))),
      "data",
    );
    // An empty shape takes no bytes, whatever the other dimensions.
    expectIoError(() => parseNpy(npy(dict("<f8", `(0, ${2 ** 52})`), new Uint8Array(8))), "data");
    expect(parseNpy(npy(dict("<f8", `(0, ${2 ** 52})`))).tensors.get("array")?.data.length).toBe(0);
  });

  test("rejects: bool bytes other than 0 and 1, and 64-bit integers beyond ±2^53", () => {
    const e = expectIoError(() => parseNpy(npy(dict("|b1", "(3,)"), [1, 0, 2])), "data");
    expect(e.message).toContain("2 at flat index 2");
    // ±2^53 itself is exact; 2^53 + 1 (little-endian 01 00 00 00 00 00 20 00) is not.
    const limit = [0, 0, 0, 0, 0, 0, 0x20, 0];
    const next = [1, 0, 0, 0, 0, 0, 0x20, 0];
    expect(parseNpy(npy(dict("<u8", "(1,)"), limit)).tensors.get("array")?.data[0]).toBe(2 ** 53);
    expectIoError(() => parseNpy(npy(dict("<u8", "(2,)"), [...limit, ...next])), "data");
    expectIoError(() => parseNpy(npy(dict("<i8", "(1,)"), next)), "data");
    const minus = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xdf, 0xff]; // −2^53 − 1
    expectIoError(() => parseNpy(npy(dict("<i8", "(1,)"), minus)), "data");
  });

  test("property: truncated or mutated files parse or throw an io error", () => {
    const valid = bytesOf("fortran_f8.npy");
    for (let n = 0; n < valid.length; n++) expectIoError(() => parseNpy(valid.subarray(0, n)));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 6,
        }),
        (edits) => {
          const b = valid.slice();
          for (const [i, v] of edits) b[i] = v;
          try {
            parseNpy(b);
          } catch (e) {
            if (!(e instanceof IoError)) throw e;
          }
        },
      ),
      FC,
    );
  });
});

describe("NPY_READER", () => {
  test("golden: the entry sniffs the magic and names the tensor after the file", () => {
    expect(NPY_READER.format).toBe("npy");
    expect(NPY_READER.extensions).toEqual([".npy"]);
    expect(NPY_READER.defaultMaxBytes).toBe(4 * 2 ** 30);
    const b = bytesOf("i4_le.npy");
    expect(NPY_READER.sniff(b.subarray(0, 64))).toBe(true);
    expect(NPY_READER.sniff(b.subarray(0, 5))).toBe(false);
    expect(NPY_READER.sniff(bytesOf("savez.npz"))).toBe(false);
    const set = NPY_READER.parse("readTensors", b, "/runs/step_7/advantages.npy");
    expect([...set.tensors.keys()]).toEqual(["advantages"]);
    const e = expectIoError(() => NPY_READER.parse("readTensors", b.subarray(0, 60), "x.npy"));
    expect(e.fn).toBe("readTensors");
    expect(e.path).toBe("x.npy");
  });
});
