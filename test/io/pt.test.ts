/**
 * Enforces docs/io.md#pt: recorded `torch.save` files (scripts/record/ptFixtures.py, real torch
 * 1.13) decode bitwise to the values torch recorded — every dtype, strided views, nested names,
 * scalars, state_dicts, protocols 1, 2 and 4; a file whose pickle would run code is refused
 * without running it (and Python's own pickle, as a control, does run it); hand-built archives
 * break each rule on its own; and mutated files give a tensor set or an IoError, nothing else.
 */

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { unzipSync, zipSync } from "fflate";
import { describe, expect, test } from "vitest";
import { bf16ToNumber, f16ToNumber } from "../../src/core/halfFloat.js";
import { IoError } from "../../src/errors.js";
import { type PyDict, type TensorRef, unpickle } from "../../src/io/_internal/pickle.js";
import { DTYPE_BYTES, type TensorDtype } from "../../src/io/tensorTypes.js";
import { DEFAULT_MAX_PT_BYTES, PT_READER, parsePt } from "../../src/io/torchPt.js";
import { concat, expectIoError, f64Bytes, useTmpDir } from "./_kit.js";
import { f32Le, Pickle, ptZip } from "./_pickleKit.js";

const FIXTURES = new URL("../fixtures/io/pt/", import.meta.url);
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, FIXTURES)));

interface Recorded {
  dtype: TensorDtype;
  shape: number[];
  stride: number[];
  storage_offset: number;
  values: (number | string)[];
  bits?: number[];
}
interface Manifest {
  provenance: { tool: string; script_sha256: string; torch: string };
  files: Record<
    string,
    {
      sha256: string;
      tensors?: Record<string, Recorded>;
      metadata?: Record<string, string>;
      refused_global?: string;
      refused_at?: number;
      marker?: string;
    }
  >;
}
const manifest = JSON.parse(readFileSync(new URL("manifest.json", FIXTURES), "utf8")) as Manifest;
const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
const number = (v: number | string): number =>
  v === "NaN"
    ? Number.NaN
    : v === "Infinity"
      ? Infinity
      : v === "-Infinity"
        ? -Infinity
        : (v as number);

const tmp = useTmpDir();
const python = ["python3", "/usr/bin/python3"].find(
  (cmd) => spawnSync(cmd, ["-c", "import pickle"]).status === 0,
);
if (python === undefined)
  console.warn("pt.test.ts: python3 not found; the python pickle control is skipped");

/** A dict pickle `{name: value, …}` with the values written by `fill`. */
const dict = (fill: (p: Pickle) => Pickle): Uint8Array =>
  fill(new Pickle().proto(2).emptyDict().mark()).setitems().stop().bytes();

describe("parsePt", () => {
  test("rejects: a pickle that would run code names the refused global and runs nothing", () => {
    const evil = manifest.files["evil.pt"]!;
    const bytes = fixture("evil.pt");
    expect(sha256(bytes)).toBe(evil.sha256);
    const e = expectIoError(() => parsePt(bytes, "evil.pt"), "evil/data.pkl");
    expect(e.message).toContain(`global "${evil.refused_global}" at byte ${evil.refused_at}`);
    expect(existsSync(resolve(evil.marker!))).toBe(false);
    expect(existsSync(tmp(evil.marker!))).toBe(false);
  });

  test.skipIf(python === undefined)(
    "golden: python's pickle does run the same data.pkl (the control: the file is a real exploit)",
    () => {
      const evil = manifest.files["evil.pt"]!;
      const pkl = unzipSync(fixture("evil.pt"))["evil/data.pkl"]!;
      const dir = tmp("control");
      mkdirSync(dir);
      writeFileSync(join(dir, "data.pkl"), pkl);
      const r = spawnSync(
        python!,
        ["-c", "import pickle; pickle.loads(open('data.pkl', 'rb').read())"],
        {
          cwd: dir,
          encoding: "utf8",
        },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(join(dir, evil.marker!), "utf8")).toBe("pwned");
    },
  );

  test("golden: recorded torch.save files decode bitwise to the recorded values", () => {
    let checked = 0;
    for (const [file, rec] of Object.entries(manifest.files)) {
      if (rec.tensors === undefined) continue;
      const bytes = fixture(file);
      expect(sha256(bytes), file).toBe(rec.sha256);
      const set = parsePt(bytes, file);
      expect(set.format).toBe("pt");
      expect([...set.tensors.keys()], file).toEqual(Object.keys(rec.tensors));
      expect(set.metadata, file).toEqual(rec.metadata);
      for (const [name, want] of Object.entries(rec.tensors)) {
        const got = set.tensors.get(name)!;
        const at = `${file} ${name}`;
        expect(got.dtype, at).toBe(want.dtype);
        expect(got.shape, at).toEqual(want.shape);
        expect(got.data.length, at).toBe(want.values.length);
        expect(got.data).toBeInstanceOf(
          want.dtype === "BOOL" || want.dtype === "U8" ? Uint8Array : Float64Array,
        );
        for (let i = 0; i < want.values.length; i++) {
          expect(
            Object.is(got.data[i], number(want.values[i]!)),
            `${at}[${i}] = ${got.data[i]}`,
          ).toBe(true);
          if (want.bits !== undefined) {
            const decode = want.dtype === "F16" ? f16ToNumber : bf16ToNumber;
            expect(Object.is(got.data[i], decode(want.bits[i]!)), `${at}[${i}] bits`).toBe(true);
          }
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(150);
  });

  test("identity: the fixtures exercise views, every dtype and were written by the committed recorder", () => {
    const script = readFileSync(new URL("../../scripts/record/ptFixtures.py", import.meta.url));
    expect(manifest.provenance.script_sha256).toBe(sha256(script));
    expect(manifest.provenance.torch).toMatch(/^1\.13/);
    const views = manifest.files["views.pt"]!.tensors!;
    expect(views.transposed).toMatchObject({ stride: [1, 6], storage_offset: 0 });
    expect(views.slice).toMatchObject({ stride: [6, 1], storage_offset: 6 });
    expect(views.step).toMatchObject({ stride: [6, 2], storage_offset: 1 });
    expect(views.expand).toMatchObject({ stride: [0, 1] });
    expect(views.element).toMatchObject({ shape: [], storage_offset: 15 });
    const dtypes = new Set(
      Object.values(manifest.files["dtypes.pt"]!.tensors!).map((t) => t.dtype),
    );
    expect([...dtypes].sort()).toEqual([
      "BF16",
      "BOOL",
      "F16",
      "F32",
      "F64",
      "I16",
      "I32",
      "I64",
      "I8",
      "U8",
    ]);
  });

  test("golden: a strided view and an expand gather into row-major order", () => {
    // Storage [0, 1, 2, 3, 4, 5]. View offset 1, size [2, 2], stride [1, 3]: element (i, j) is
    // storage[1 + i + 3j] → (0,0)=1, (0,1)=4, (1,0)=2, (1,1)=5. Expand offset 4, size [3, 2],
    // stride [0, 1]: storage[4 + j] for every i → 4, 5, 4, 5, 4, 5.
    const pkl = dict((p) =>
      p
        .str("v")
        .tensor("FloatStorage", "0", 6, 1, [2, 2], [1, 3])
        .str("e")
        .tensor("FloatStorage", "0", 6, 4, [3, 2], [0, 1]),
    );
    const set = parsePt(ptZip(pkl, { "0": f32Le(0, 1, 2, 3, 4, 5) }));
    expect(set.tensors.get("v")).toEqual({
      dtype: "F32",
      shape: [2, 2],
      data: Float64Array.of(1, 4, 2, 5),
    });
    expect(set.tensors.get("e")!.data).toEqual(Float64Array.of(4, 5, 4, 5, 4, 5));
  });

  test("identity: a big-endian copy of a recorded file decodes to the same values", () => {
    const files = unzipSync(fixture("views.pt"));
    const little = parsePt(fixture("views.pt"));
    // The element width of each storage, from the pickle's persistent ids.
    const width = new Map<string, number>();
    const root = unpickle("test", files["views/data.pkl"]!, "views.pt", "data.pkl") as PyDict;
    for (const t of root.values as TensorRef[])
      width.set(`views/data/${t.storage.key}`, DTYPE_BYTES[t.storage.dtype]);
    expect(new Set(width.values())).toEqual(new Set([8, 4]));
    const big: Record<string, Uint8Array> = {};
    for (const [name, b] of Object.entries(files)) {
      const w = width.get(name) ?? 1;
      const s = new Uint8Array(b.length);
      for (let i = 0; i < b.length; i++) s[i] = b[i - (i % w) + (w - 1 - (i % w))]!;
      big[name] = s;
    }
    big["views/byteorder"] = new TextEncoder().encode("big");
    expect(parsePt(zipSync(big, { level: 0 })).tensors).toEqual(little.tensors);
    files["views/byteorder"] = new TextEncoder().encode("little");
    expect(parsePt(zipSync(files, { level: 0 })).tensors).toEqual(little.tensors);
  });

  test("rejects: a view reaching past its storage", () => {
    // numel 4, offset 1, size [2, 2], stride [2, 1]: the last element is 1 + 2 + 1 = 4 ≥ 4.
    const pkl = dict((p) => p.str("w").tensor("FloatStorage", "0", 4, 1, [2, 2], [2, 1]));
    const e = expectIoError(() => parsePt(ptZip(pkl, { "0": f32Le(0, 1, 2, 3) })), "w");
    expect(e.message).toContain("a view inside its storage of 4 elements");
    expect(e.message).toContain("reaching element 4");
    const empty = dict((p) => p.str("w").tensor("FloatStorage", "0", 4, 5, [0], [1]));
    expectIoError(() => parsePt(ptZip(empty, { "0": f32Le(0, 1, 2, 3) })), "w");
  });

  test("rejects: storages that are missing, of the wrong size or named with two types", () => {
    const one = dict((p) => p.str("w").tensor("FloatStorage", "0", 4, 0, [4], [1]));
    expect(expectIoError(() => parsePt(ptZip(one, {})), "archive/data/0").message).toContain(
      "no such entry",
    );
    const e = expectIoError(() => parsePt(ptZip(one, { "0": f32Le(1, 2, 3) })), "archive/data/0");
    expect(e.message).toContain("4 F32 elements = 16 bytes");
    const two = dict((p) =>
      p
        .str("a")
        .tensor("FloatStorage", "0", 2, 0, [2], [1])
        .str("b")
        .tensor("IntStorage", "0", 2, 0, [2], [1]),
    );
    expectIoError(() => parsePt(ptZip(two, { "0": f32Le(1, 2) })), "archive/data/0");
  });

  test("rejects: an archive without data.pkl, without a version or with an unknown byte order", () => {
    const pkl = dict((p) => p.str("x").int(1));
    expectIoError(() => parsePt(zipSync({ "x.npy": new Uint8Array(4) }, { level: 0 })), "zip");
    expectIoError(() => parsePt(ptZip(pkl, {}, { version: null })), "archive/version");
    expectIoError(() => parsePt(ptZip(pkl, {}, { version: "three" })), "archive/version");
    const order = { "archive/byteorder": new TextEncoder().encode("middle") };
    expectIoError(() => parsePt(ptZip(pkl, {}, { extra: order })), "archive/byteorder");
    expect(parsePt(ptZip(pkl, {}, { prefix: "my model" })).tensors.get("x")!.dtype).toBe("I64");
  });

  test("rejects: a top level that is not a dict, and values that are not tensors or scalars", () => {
    const top = new Pickle().proto(2).tensor("FloatStorage", "0", 1, 0, [], []).stop().bytes();
    const e = expectIoError(() => parsePt(ptZip(top, { "0": f32Le(1) })), "archive/data.pkl");
    expect(e.message).toContain("a dict of names at the top level");
    expectIoError(
      () => parsePt(ptZip(dict((p) => p.str("g").global("collections", "OrderedDict")))),
      "g",
    );
    const storage = dict((p) => p.str("s").storage("FloatStorage", "0", 1));
    expect(expectIoError(() => parsePt(ptZip(storage, { "0": f32Le(1) })), "s").message).toContain(
      "got storage",
    );
  });

  test("rejects: flattened names given twice, and the reserved __none__", () => {
    const dup = dict((p) => p.str("a.b").int(1).str("a").emptyDict().str("b").int(2).setitem());
    expect(expectIoError(() => parsePt(ptZip(dup)), "a.b").message).toContain("a duplicate");
    expectIoError(() => parsePt(ptZip(dict((p) => p.str("__none__").str("x")))), "__none__");
  });

  test("golden: scalars, strings, None and int keys of a nested dict", () => {
    // {"cfg": {"lr": 0.5, "seed": -3, "on": True, "name": "a", "none": None}, "opt": {0: {"k": None}}}
    const pkl = dict((p) =>
      p
        .str("cfg")
        .emptyDict()
        .mark()
        .str("lr")
        .float(0.5)
        .str("seed")
        .int(-3)
        .str("on")
        .bool(true)
        .str("name")
        .str("a")
        .str("none")
        .none()
        .setitems()
        .str("opt")
        .emptyDict()
        .int(0)
        .emptyDict()
        .str("k")
        .none()
        .setitem()
        .setitem(),
    );
    const set = parsePt(ptZip(pkl));
    expect([...set.tensors]).toEqual([
      ["cfg.lr", { dtype: "F64", shape: [], data: Float64Array.of(0.5) }],
      ["cfg.seed", { dtype: "I64", shape: [], data: Float64Array.of(-3) }],
      ["cfg.on", { dtype: "BOOL", shape: [], data: Uint8Array.of(1) }],
    ]);
    expect(set.metadata).toEqual({ "cfg.name": "a", __none__: '["cfg.none","opt.0.k"]' });
  });

  test("rejects: integers beyond ±2^53 and bool bytes other than 0 and 1", () => {
    const big = dict((p) => p.str("n").int(2n ** 53n + 1n));
    expect(expectIoError(() => parsePt(ptZip(big)), "n").message).toContain("9007199254740993");
    expect(
      parsePt(ptZip(dict((p) => p.str("n").int(-(2n ** 53n))))).tensors.get("n")!.data[0],
    ).toBe(-(2 ** 53));
    const i64 = dict((p) => p.str("w").tensor("LongStorage", "0", 1, 0, [1], [1]));
    const word = new Uint8Array(8);
    new DataView(word.buffer).setBigInt64(0, 2n ** 53n + 1n, true);
    expect(expectIoError(() => parsePt(ptZip(i64, { "0": word })), "w").message).toContain(
      "flat index 0",
    );
    const bool = dict((p) => p.str("m").tensor("BoolStorage", "0", 2, 0, [2], [1]));
    expectIoError(() => parsePt(ptZip(bool, { "0": Uint8Array.of(1, 2) })), "m");
  });

  test("rejects: complex and quantized tensors with a clear reason", () => {
    const complex = dict((p) => p.str("z").tensor("ComplexFloatStorage", "0", 1, 0, [1], [1]));
    const e = expectIoError(
      () => parsePt(ptZip(complex, { "0": f64Bytes(1) })),
      "archive/data.pkl",
    );
    expect(e.message).toContain("complex tensors are not supported");
    const q = dict((p) => p.str("q").global("torch._utils", "_rebuild_qtensor"));
    expect(expectIoError(() => parsePt(ptZip(q)), "archive/data.pkl").message).toContain(
      "quantized",
    );
  });

  test("regression: expands, cycles and shared containers are bounded before allocating", () => {
    // 2^40 elements of one storage element: refused from the element budget, not allocated.
    const huge = dict((p) => p.str("x").tensor("FloatStorage", "0", 1, 0, [2 ** 40], [0]));
    expect(expectIoError(() => parsePt(ptZip(huge, { "0": f32Le(1) })), "x").message).toContain(
      "more elements",
    );
    // l = []; l.append(l): a cycle, refused at the nesting limit.
    const cycle = dict((p) => p.str("l").emptyList().put(1).get(1).append());
    expect(expectIoError(() => parsePt(ptZip(cycle))).message).toContain(
      "nested at most 256 levels",
    );
    // d = [L_0, …, L_40] with L_k = [L_{k-1}, L_{k-1}]: 2^40 paths from 400 bytes, refused by
    // the visit budget.
    const dag = dict((p) => {
      p.str("d").emptyList().mark().emptyList().put(0);
      for (let k = 1; k <= 40; k++)
        p.emptyList()
          .mark()
          .get(k - 1)
          .get(k - 1)
          .appends()
          .put(k);
      return p.appends();
    });
    expect(expectIoError(() => parsePt(ptZip(dag)), "archive/data.pkl").message).toContain(
      "values to flatten",
    );
  });

  test("regression: a flattened name longer than 65536 characters is refused", () => {
    // {k: {k: 1}} with k of 40000 characters: the inner name has 40000 + 1 + 40000 = 80001.
    const k = "k".repeat(40_000);
    const pkl = dict((p) => p.str(k).put(0).emptyDict().get(0).int(1).setitem());
    const e = expectIoError(() => parsePt(ptZip(pkl)), "archive/data.pkl");
    expect(e.message).toContain("names of at most 65536 characters; got 80001 characters");
    const ok = dict((p) => p.str(k.slice(0, 30_000)).put(0).emptyDict().get(0).int(1).setitem());
    expect(
      parsePt(ptZip(ok)).tensors.get(`${k.slice(0, 30_000)}.${k.slice(0, 30_000)}`)?.dtype,
    ).toBe("I64");
  });

  test("regression: many dimensions of size 1 gather in linear time, and an empty view is empty", () => {
    // size (2^20, 1, …, 1) with 20000 ones: without skipping the ones every element would carry
    // through 20000 dimensions (2·10^10 steps); the U8 storage holds 2^20 elements, x[i] = i mod 251.
    const ones = new Array<number>(20_000).fill(1);
    const pkl = dict((p) =>
      p.str("x").tensor("ByteStorage", "0", 2 ** 20, 0, [2 ** 20, ...ones], [1, ...ones]),
    );
    const storage = new Uint8Array(2 ** 20).map((_, i) => i % 251);
    const x = parsePt(ptZip(pkl, { "0": storage })).tensors.get("x")!;
    expect(x.shape.length).toBe(20_001);
    expect(x.data.every((v, i) => v === i % 251)).toBe(true);
    // 2^40 × 0 elements: empty, not over the element budget.
    const empty = dict((p) => p.str("e").tensor("FloatStorage", "0", 1, 0, [2 ** 40, 0], [1, 1]));
    expect(parsePt(ptZip(empty, { "0": f32Le(1) })).tensors.get("e")).toEqual({
      dtype: "F32",
      shape: [2 ** 40, 0],
      data: new Float64Array(0),
    });
  });

  test("property: mutated or truncated files parse or throw IoError", () => {
    const seeds = [fixture("views.pt"), fixture("nested.pt"), fixture("state_dict.pt")];
    const edits = fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), {
      maxLength: 6,
    });
    fc.assert(
      fc.property(
        fc.nat({ max: 2 }),
        edits,
        fc.option(fc.nat(), { nil: undefined }),
        (which, ed, keep) => {
          const src = seeds[which]!;
          const bytes = src.slice(0, keep === undefined ? src.length : keep % (src.length + 1));
          for (const { at, byte } of ed) if (bytes.length > 0) bytes[at % bytes.length] = byte;
          parsesOrIoError(() => parsePt(bytes));
        },
      ),
      { seed: 20261130, numRuns: 400 },
    );
  });

  test("property: mutated pickles and storages inside a valid archive parse or throw IoError", () => {
    // Re-zipping after the edit gives fresh CRCs, so the edits reach the interpreter and the views.
    const files = [
      unzipSync(fixture("views.pt")),
      unzipSync(fixture("nested.pt")),
      unzipSync(fixture("dtypes.pt")),
    ];
    const edits = fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), {
      minLength: 1,
      maxLength: 4,
    });
    fc.assert(
      fc.property(
        fc.nat({ max: 2 }),
        fc.nat(),
        edits,
        fc.option(fc.nat(), { nil: undefined }),
        (w, e, ed, keep) => {
          const entries = { ...files[w]! };
          const names = Object.keys(entries);
          const name = names[e % names.length]!;
          const src = entries[name]!;
          const b = src.slice(0, keep === undefined ? src.length : keep % (src.length + 1));
          for (const { at, byte } of ed) if (b.length > 0) b[at % b.length] = byte;
          entries[name] = b;
          parsesOrIoError(() => parsePt(zipSync(entries, { level: 0 })));
        },
      ),
      { seed: 20261130, numRuns: 600 },
    );
  });
});

/** Run `read`; pass if it returns or throws an IoError with code E_IO, fail on anything else. */
function parsesOrIoError(read: () => unknown): void {
  try {
    read();
  } catch (e) {
    if (!(e instanceof IoError) || e.code !== "E_IO") {
      throw new Error(
        `expected an IoError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`,
      );
    }
  }
}

describe("PT_READER", () => {
  test("golden: extensions, sniff and parse of a recorded file", () => {
    expect(PT_READER.format).toBe("pt");
    expect(PT_READER.extensions).toEqual([".pt", ".pth"]);
    expect(PT_READER.defaultMaxBytes).toBe(DEFAULT_MAX_PT_BYTES);
    expect(DEFAULT_MAX_PT_BYTES).toBe(4 * 2 ** 30);
    const bytes = fixture("batch.pt");
    expect(PT_READER.sniff(bytes.subarray(0, 4096))).toBe(true);
    expect(PT_READER.sniff(zipSync({ "x.npy": new Uint8Array(4) }, { level: 0 }))).toBe(false);
    expect(PT_READER.sniff(concat(new Uint8Array(8), new TextEncoder().encode("{}")))).toBe(false);
    expect(PT_READER.sniff(bytes.subarray(0, 20))).toBe(false);
    const set = PT_READER.parse("readTensors", bytes, "batch.pt");
    expect([...set.tensors.keys()]).toEqual([
      "logprobs",
      "old_logprobs",
      "advantages",
      "response_mask",
    ]);
    const e = expectIoError(() => PT_READER.parse("readTensors", fixture("evil.pt"), "evil.pt"));
    expect(e.fn).toBe("readTensors");
    expect(e.path).toBe("evil.pt");
  });
});
