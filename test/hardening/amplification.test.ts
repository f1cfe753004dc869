/**
 * Enforces docs/io.md#bounds-on-hostile-files (issue 31, point 5 "amplification"): a small file
 * cannot make the readers inflate or materialise more than it can legitimately hold. Each hostile
 * file here has the shape of the attack at a small scale (a deflate member declaring
 * 1000× its compressed size, one 8-byte storage expanded to 2^29 elements, a header of more than
 * 65536 entries) and is refused with an IoError naming the rule; "before inflating / parsing" is
 * shown by data that would fail differently had it been inflated or parsed. The real-scale wall
 * times and peak RSS are measured by `npm run bench:hostile` (bench/hostile.mjs), never here.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { ConfigError } from "../../src/errors.js";
import {
  parseNpz,
  parsePt,
  parseSafetensors,
  readSafetensors,
  readTensors,
  readTensorsFromBytes,
} from "../../src/index.js";
import { MAX_ZIP_EXPANSION, ZIP_EXPANSION_FLOOR } from "../../src/io/_internal/zip.js";
import { DEFAULT_MAX_ELEMENTS, MAX_FILE_TENSORS } from "../../src/io/tensorTypes.js";
import { runMain } from "../cli/_run.js";
import {
  expectIoError,
  expectPolgradError,
  f64Bytes,
  stBytes,
  useTmpDir,
  writeFile,
} from "../io/_kit.js";
import { f32Le, Pickle, ptZip } from "../io/_pickleKit.js";
import { npyBytes } from "../io/_writers.js";
import { makeZip } from "../io/_zipKit.js";

const tmp = useTmpDir();

/** A protocol-2 pickle of one dict, built by `body` after EMPTY_DICT. */
const dict = (body: (p: Pickle) => Pickle): Uint8Array =>
  body(new Pickle().proto().emptyDict()).stop().bytes();

/** A member whose central directory declares `size` bytes over `csize` bytes of invalid deflate. */
function declaring(name: string, size: number, csize: number) {
  // 0xff… is not deflate (block type 3): inflating it would be a "valid deflate data" error.
  return {
    name,
    data: new Uint8Array(1),
    method: 8,
    size,
    compressed: new Uint8Array(csize).fill(0xff),
  };
}

/** A safetensors header text of `n` empty F32 entries, then `tail` before the closing brace. */
function manyEntries(n: number, tail = ""): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i++)
    parts.push(`"t${i}":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`);
  return `{${parts.join(",")}${tail}}`;
}

describe("npz deflate bombs", () => {
  test("rejects: an archive declaring more than 64 times its size uncompressed, before any member is inflated", () => {
    // 72 000 compressed bytes may inflate to 74 MB (1032×), so the declared 70 MiB is possible,
    // but it is above max(64 MiB, 64 × 72 KB) — and the bytes are not deflate at all.
    expect(MAX_ZIP_EXPANSION).toBe(64);
    expect(ZIP_EXPANSION_FLOOR).toBe(64 * 2 ** 20);
    const archive = makeZip([declaring("logprobs.npy", 70 * 2 ** 20, 72_000)]);
    const e = expectIoError(() => parseNpz(archive, "bomb.npz"), "zip");
    expect(e.message).toContain("64 × the file's");
    expect(e.message).toContain("got 73400320 bytes (70 MiB)");
    const path = writeFile(tmp("bomb.npz"), archive);
    expect(expectIoError(() => readTensors(path), "zip").path).toBe(path);
  });

  test("rejects: a member declaring more than deflate can produce from its compressed bytes", () => {
    // 100 compressed bytes inflate to at most 103 200.
    const archive = makeZip([declaring("x.npy", 200_000, 100)]);
    const e = expectIoError(() => parseNpz(archive), "zip entry x.npy");
    expect(e.message).toContain("at most 1032× = 103200 bytes");
  });

  test("golden: under the 64 mib floor any ratio reads, and a stored archive is never over the ratio", () => {
    // An all-zero 2048 × 2048 bool mask deflates about 1000:1: read, being under the floor.
    const member = npyBytes("|b1", [2048, 2048], new Uint8Array(2048 * 2048));
    const packed = makeZip([{ name: "response_mask.npy", data: member, method: 8 }]);
    expect(member.length / packed.length).toBeGreaterThan(500);
    const mask = parseNpz(packed).tensors.get("response_mask");
    expect(mask?.shape).toEqual([2048, 2048]);
    expect(mask?.data.every((v) => v === 0)).toBe(true);
    const stored = makeZip([{ name: "response_mask.npy", data: member }]);
    expect(parseNpz(stored).tensors.get("response_mask")?.data.length).toBe(2048 * 2048);
  });

  test("rejects: the members' elements beyond options.maxElements, before the member's data is allocated", () => {
    const six = npyBytes("<f8", [2, 3], [1, 2, 3, 4, 5, 6]);
    const archive = makeZip([
      { name: "a.npy", data: six, method: 8 },
      { name: "b.npy", data: six, method: 8 },
    ]);
    const path = writeFile(tmp("two.npz"), archive);
    expect(readTensors(path, { maxElements: 12 }).tensors.size).toBe(2);
    const e = expectIoError(() => readTensors(path, { maxElements: 10 }), "b.data");
    expect(e.message).toContain(
      "options.maxElements = 10 elements in all tensors of the file (4 left",
    );
  });
});

describe("pt views", () => {
  test("rejects: one 8-byte storage expanded to 2^29 elements, from the shape before allocating", () => {
    // The file padded itself to 64 MB so that 2^24 + 8 per byte let 2^29 through; the
    // budget is now 2^24 + 2 per byte, and this file is a few hundred bytes.
    const pkl = dict((p) =>
      p
        .str("logprobs")
        .tensor("DoubleStorage", "0", 1, 0, [2 ** 29], [0])
        .setitem(),
    );
    const file = ptZip(pkl, { "0": f64Bytes(1) });
    const e = expectIoError(() => parsePt(file, "expand.pt"), "logprobs");
    expect(e.message).toContain(`2^24 + 2 per byte of the file = ${2 ** 24 + 2 * file.length}`);
    expect(e.message).toContain("shape [536870912], stride [0] of a storage of 1 elements");
  });

  test("golden: advantages expanded from [b] to [b, t] and one storage under two names read within the budget", () => {
    const B = 8;
    const T = 1000;
    const adv = Array.from({ length: B }, (_, b) => b - 3.5);
    const lp = Array.from({ length: B * T }, (_, i) => -(i % 7) / 8);
    const pkl = dict((p) =>
      p
        .mark()
        .str("advantages")
        .tensor("FloatStorage", "0", B, 0, [B, T], [1, 0])
        .str("logprobs")
        .tensor("FloatStorage", "1", B * T, 0, [B, T], [T, 1])
        .str("old_logprobs")
        .tensor("FloatStorage", "1", B * T, 0, [B, T], [T, 1])
        .setitems(),
    );
    const set = parsePt(ptZip(pkl, { "0": f32Le(...adv), "1": f32Le(...lp) }));
    expect(set.tensors.get("advantages")?.data.slice(T - 1, T + 1)).toEqual(
      Float64Array.of(-3.5, -2.5),
    );
    expect(set.tensors.get("old_logprobs")?.data).toEqual(set.tensors.get("logprobs")?.data);
  });

  test("rejects: tensors beyond options.maxElements, naming the option", () => {
    const pkl = dict((p) => p.str("x").tensor("FloatStorage", "0", 6, 0, [2, 3], [3, 1]).setitem());
    const path = writeFile(tmp("six.pt"), ptZip(pkl, { "0": f32Le(1, 2, 3, 4, 5, 6) }));
    expect(readTensors(path, { maxElements: 6 }).tensors.get("x")?.shape).toEqual([2, 3]);
    const e = expectIoError(() => readTensors(path, { maxElements: 5 }), "x");
    expect(e.message).toContain("options.maxElements = 5; raise it to read the file");
  });

  test("rejects: more than 65536 flattened names", () => {
    const n = MAX_FILE_TENSORS + 1;
    const pkl = dict((p) => {
      for (let at = 0; at < n; at += 1000) {
        p.mark();
        for (let i = at; i < Math.min(n, at + 1000); i++) p.str(`k${i}`, true).int(1);
        p.setitems();
      }
      return p;
    });
    const e = expectIoError(() => parsePt(ptZip(pkl)), "archive/data.pkl");
    expect(e.message).toContain("at most 65536 tensors");
  });
});

describe("safetensors headers", () => {
  test("rejects: a header of more than 65536 entries while it is read, before it is parsed", () => {
    // The header is not even JSON past its entries: a parse would report the syntax error.
    const header = manyEntries(MAX_FILE_TENSORS + 2, ", this is not json");
    const bytes = stBytes(header);
    const e = expectIoError(() => parseSafetensors(bytes, "many.safetensors"), "header");
    expect(e.message).toContain("at most 65536 tensors (and __metadata__)");
    const path = writeFile(tmp("many.safetensors"), bytes);
    expect(expectIoError(() => readSafetensors(path), "header").message).toContain(
      "entries counted before stopping",
    );
    expectIoError(() => readTensors(path), "header");
  });

  test("golden: a header of exactly 65536 entries and __metadata__ is read", () => {
    const header = manyEntries(MAX_FILE_TENSORS, ',"__metadata__":{"k":"v"}');
    const path = writeFile(tmp("cap.safetensors"), stBytes(header));
    const set = readSafetensors(path);
    expect(set.tensors.size).toBe(MAX_FILE_TENSORS);
    expect(set.metadata).toEqual({ k: "v" });
  });

  test("rejects: more elements than options.maxElements, from the header before the buffer is decoded", () => {
    const header = {
      a: { dtype: "F64", shape: [2], data_offsets: [0, 16] },
      b: { dtype: "F64", shape: [2, 2], data_offsets: [16, 48] },
    };
    const path = writeFile(tmp("six.safetensors"), stBytes(header, f64Bytes(1, 2, 3, 4, 5, 6)));
    expect(readSafetensors(path, { maxElements: 6 }).tensors.size).toBe(2);
    const e = expectIoError(() => readTensors(path, { maxElements: 5 }), "b");
    expect(e.message).toContain("4 elements (shape [2, 2])");
  });
});

describe("json batches", () => {
  test("rejects: more than 65536 keys, counted before the json is parsed", () => {
    const keys = Array.from({ length: MAX_FILE_TENSORS + 2 }, (_, i) => `"t${i}":[]`);
    const text = `{${keys.join(",")}, not json}`;
    const path = writeFile(tmp("many.json"), text);
    const e = expectIoError(() => readTensors(path), "json");
    expect(e.message).toContain("at most 65536 tensors");
  });

  test("rejects: more elements than options.maxElements", () => {
    const path = writeFile(
      tmp("b.json"),
      JSON.stringify({
        a: [1, 2, 3],
        b: [
          [1, 2],
          [3, 4],
        ],
      }),
    );
    expect(readTensors(path, { maxElements: 7 }).tensors.size).toBe(2);
    expectIoError(() => readTensors(path, { maxElements: 6 }), "b");
  });
});

describe("options.maxElements", () => {
  test("golden: the default is 2^32, what a 4 gib file holds at one byte an element", () => {
    expect(DEFAULT_MAX_ELEMENTS).toBe(2 ** 32);
  });

  test("rejects: a value that is not a positive integer, as a config error", () => {
    const path = writeFile(tmp("ok.json"), JSON.stringify({ a: [1] }));
    for (const bad of [0, -1, 1.5, Number.NaN, "10"]) {
      const opts = { maxElements: bad as number };
      expectPolgradError(
        () => readTensors(path, opts),
        ConfigError,
        "E_CONFIG",
        "options.maxElements",
      );
      expectPolgradError(
        () => readSafetensors(path, opts),
        ConfigError,
        "E_CONFIG",
        "options.maxElements",
      );
      expectPolgradError(
        () => readTensorsFromBytes(new Uint8Array(0), "<bytes>", opts),
        ConfigError,
        "E_CONFIG",
        "options.maxElements",
      );
    }
  });

  test("rejects: the files of a folder draw on one cap", () => {
    const dir = tmp("folder");
    mkdirSync(dir);
    writeFile(join(dir, "a.npy"), npyBytes("<f8", [6], [1, 2, 3, 4, 5, 6]));
    writeFile(join(dir, "b.npy"), npyBytes("<f8", [6], [1, 2, 3, 4, 5, 6]));
    expect(readTensors(dir, { maxElements: 12 }).tensors.size).toBe(2);
    expectIoError(() => readTensors(dir, { maxElements: 10 }), "data");
  });

  test("rejects: standard input's bytes under a lowered cap", () => {
    const bytes = npyBytes("<f8", [6], [1, 2, 3, 4, 5, 6]);
    expect(readTensorsFromBytes(bytes, "<stdin>", { maxElements: 6 }).tensors.size).toBe(1);
    expectIoError(() => readTensorsFromBytes(bytes, "<stdin>", { maxElements: 5 }), "data");
  });
});

describe("polgrad loss on amplification files", () => {
  test("regression: each is one E_IO line naming the file and the rule, exit 2, empty stdout", async () => {
    const bomb = writeFile(
      tmp("bomb-cli.npz"),
      makeZip([declaring("logprobs.npy", 70 * 2 ** 20, 72_000)]),
    );
    const expand = writeFile(
      tmp("expand-cli.pt"),
      ptZip(
        dict((p) =>
          p
            .str("logprobs")
            .tensor("DoubleStorage", "0", 1, 0, [2 ** 29], [0])
            .setitem(),
        ),
        {
          "0": f64Bytes(1),
        },
      ),
    );
    const header = writeFile(
      tmp("many-cli.safetensors"),
      stBytes(manyEntries(MAX_FILE_TENSORS + 2)),
    );
    for (const [file, rule] of [
      [bomb, "uncompressed in all"],
      [expand, "2^24 + 2 per byte of the file"],
      [header, "at most 65536 tensors"],
    ] as const) {
      const run = await runMain(["loss", "--algorithm", "dapo", "--batch", file]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      const lines = run.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^error\[E_IO\]: /);
      expect(lines[0]).toContain(rule);
      expect(lines[0]).toContain(file);
    }
  });
});
