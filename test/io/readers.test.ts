/**
 * Enforces docs/io.md#readers: one registry of formats. Each reader's pure `parse` returns a tensor
 * set or throws a PolgradError for any byte string (seeded fast-check over random bytes,
 * mutations of valid files and hostile JSON); it agrees with the file readers on the same bytes;
 * `readerFor` picks by extension, then by sniffing; and no module below the registry imports a
 * `node:` module (a browser entry will reuse them).
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { IoError, PolgradError } from "../../src/errors.js";
import { encodeSafetensors, readerFor, readTensors, TENSOR_READERS } from "../../src/io/index.js";
import { expectIoError, useTmpDir, writeFile } from "./_kit.js";

const FC = { seed: 20261201, numRuns: 400 };
const tmp = useTmpDir();
const root = fileURLToPath(new URL("../../", import.meta.url));

const SAFETENSORS = encodeSafetensors(
  {
    logprobs: { dtype: "F32", shape: [2, 2], data: [-0.5, -1, -2, 0] },
    response_mask: { dtype: "BOOL", shape: [2, 2], data: [1, 1, 1, 0] },
  },
  { note: "readers" },
);
const JSON_BATCH = new TextEncoder().encode(
  JSON.stringify({ logprobs: [[-0.5, "NaN"]], response_mask: [[true, false]] }),
);
const fixture = (path: string) =>
  new Uint8Array(readFileSync(join(root, "test/fixtures/io", path)));
const VALID: Readonly<Record<string, Uint8Array>> = {
  safetensors: SAFETENSORS,
  json: JSON_BATCH,
  npy: fixture("npy/f4_le.npy"),
  npz: fixture("npy/savez_compressed.npz"),
  pt: fixture("pt/batch.pt"),
};

/** Parse with `reader`; pass on a result or a PolgradError, fail on any other throw. */
function parsesOrPolgradError(parse: () => unknown): void {
  try {
    parse();
  } catch (e) {
    if (!(e instanceof PolgradError)) {
      throw new Error(`non-polgrad error ${(e as Error)?.name}: ${(e as Error)?.message}`);
    }
  }
}

/** Byte strings that stress a parser: random bytes, and mutations and truncations of `valid`. */
function hostileBytes(valid: Uint8Array): fc.Arbitrary<Uint8Array> {
  const mutated = fc
    .array(fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })), {
      minLength: 1,
      maxLength: 8,
    })
    .map((edits) => {
      const b = valid.slice();
      for (const [i, v] of edits) b[i] = v;
      return b;
    });
  const truncated = fc.nat({ max: valid.length }).map((n) => valid.slice(0, n));
  const nested = fc
    .tuple(fc.constantFrom("[", '{"a":', '[{"b":'), fc.integer({ min: 1, max: 5000 }))
    .map(([open, n]) => new TextEncoder().encode(`{"x":${open.repeat(n)}`));
  return fc.oneof(fc.uint8Array({ maxLength: 256 }), mutated, truncated, nested);
}

describe("TENSOR_READERS", () => {
  test("property: every reader's parse returns a tensor set or throws a PolgradError on any bytes", () => {
    expect(TENSOR_READERS.map((r) => r.format)).toEqual([
      "safetensors",
      "json",
      "npy",
      "npz",
      "pt",
    ]);
    for (const reader of TENSOR_READERS) {
      const valid = VALID[reader.format] as Uint8Array;
      fc.assert(
        fc.property(hostileBytes(valid), (bytes) => {
          parsesOrPolgradError(() => reader.parse("fuzz", bytes, "<fuzz>"));
        }),
        FC,
      );
      // Every reader's failure names the path it was given.
      const e = expectIoError(() => reader.parse("fuzz", new Uint8Array([0xff]), "<fuzz>"));
      expect(e.path).toBe("<fuzz>");
      expect(e.fn).toBe("fuzz");
    }
  });

  test("identity: parse agrees with the file reader on the same bytes", () => {
    for (const reader of TENSOR_READERS) {
      const bytes = VALID[reader.format] as Uint8Array;
      const file = writeFile(tmp(`same${reader.extensions[0]}`), bytes);
      const fromFile = readTensors(file);
      const fromBytes = reader.parse("readTensors", bytes, file);
      expect(fromBytes).toEqual(fromFile);
      expect(fromBytes.format).toBe(reader.format);
    }
  });

  test("identity: the parsers import no node: module", () => {
    // Walk the static import graph from src/io/readers.ts; every module reached must be pure.
    const seen = new Set<string>();
    const todo = [join(root, "src/io/readers.ts")];
    const offenders: string[] = [];
    for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
      if (seen.has(f)) continue;
      seen.add(f);
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gm)) {
        const spec = m[1] as string;
        if (spec.startsWith("node:") || !spec.startsWith(".")) {
          if (spec.startsWith("node:")) offenders.push(`${f}: ${spec}`);
          continue;
        }
        todo.push(resolve(dirname(f), spec.replace(/\.js$/, ".ts")));
      }
    }
    expect(seen.size).toBeGreaterThan(5);
    expect(offenders).toEqual([]);
  });
});

describe("readerFor", () => {
  test("golden: the extension wins, then the sniff", () => {
    const st = SAFETENSORS.subarray(0, 64);
    const js = JSON_BATCH.subarray(0, 64);
    // By extension (any case), whatever the bytes.
    expect(readerFor("f", "a/B.SafeTensors", js).format).toBe("safetensors");
    expect(readerFor("f", "x.JSON", st).format).toBe("json");
    // No or an unknown extension: the first bytes decide.
    expect(readerFor("f", "step", st).format).toBe("safetensors");
    expect(readerFor("f", "step.bin", js).format).toBe("json");
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x20, 0x0a, 0x7b, 0x20, 0x22]);
    expect(readerFor("f", "bom", bom).format).toBe("json");
    // ".json" alone is a dotfile without an extension, as node's extname has it.
    expect(() => readerFor("f", "dir/.json")).toThrow(IoError);
    // Neither: an IoError on the path (an empty object holds no tensors and is not sniffed).
    for (const head of [new Uint8Array(0), new TextEncoder().encode("{}"), new Uint8Array(9)]) {
      const e = expectIoError(() => readerFor("f", "batch.bin", head), "path");
      expect(e.message).toContain(".safetensors or .json or .npy or .npz or .pt or .pth");
    }
    // readTensors sniffs a file without a known extension.
    const noExt = writeFile(tmp("step_000001"), SAFETENSORS);
    expect(readTensors(noExt).format).toBe("safetensors");
    expect(readTensors(writeFile(tmp("batch.dump"), JSON_BATCH)).format).toBe("json");
  });
});
