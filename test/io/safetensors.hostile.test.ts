/**
 * Enforces docs/io.md#safetensors (hostile files): each rule of the format, broken on its own in
 * bytes built by hand, gives an IoError (code E_IO) naming the file and the rule — never another
 * error, a hang or a huge allocation.
 */
import { mkdirSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { parseSafetensors, readSafetensors } from "../../src/io/index.js";
import {
  concat,
  expectIoError,
  expectPolgradError,
  f64Bytes,
  stBytes,
  useTmpDir,
  writeFile,
} from "./_kit.js";

const tmp = useTmpDir();
let counter = 0;

/** Write the bytes to a fresh file, read it, and require an IoError naming that file and `arg`. */
function rejectsFile(bytes: Uint8Array, arg: string, fragment?: string): string {
  const path = writeFile(tmp(`case${counter++}.safetensors`), bytes);
  const e = expectIoError(() => readSafetensors(path), arg);
  expect(e.path).toBe(path);
  expect(e.message).toContain(path);
  expect(e.fn).toBe("readSafetensors");
  if (fragment !== undefined) expect(e.message).toContain(fragment);
  return e.message;
}

const one = (dtype: unknown, shape: unknown, offsets: unknown) => ({
  x: { dtype, shape, data_offsets: offsets },
});

describe("readSafetensors", () => {
  test("rejects: a file shorter than 8 bytes", () => {
    rejectsFile(new Uint8Array([1, 0, 0, 0, 0]), "file", "at least 8 bytes");
    rejectsFile(new Uint8Array(0), "file");
  });

  test("rejects: a header length beyond the file size", () => {
    rejectsFile(stBytes(one("F64", [1], [0, 8]), f64Bytes(1), 1000), "header length", "file size");
  });

  test("rejects: a header length over 100 mb without allocating it", () => {
    rejectsFile(stBytes("{}", [], 2n ** 32n), "header length", "100000000");
    rejectsFile(stBytes("{}", [], 2n ** 64n - 1n), "header length", "100000000");
  });

  test("rejects: a header length of zero", () => {
    rejectsFile(stBytes("", []), "header length");
  });

  test("rejects: a header that is not valid utf-8", () => {
    const header = concat(
      new TextEncoder().encode('{"'),
      [0xff, 0xfe],
      new TextEncoder().encode('":1}'),
    );
    rejectsFile(stBytes(header), "header", "UTF-8");
  });

  test("rejects: a header that is not json, with its position", () => {
    rejectsFile(stBytes('{"x": {"dtype": "F64",,}}'), "header", "line 1, column 23");
    rejectsFile(stBytes("{}x"), "header", "after the JSON value");
  });

  test("rejects: a header that is not a json object", () => {
    rejectsFile(stBytes("[1, 2]"), "header", "starting with '{'");
    rejectsFile(stBytes(' {"a": 1}'), "header");
  });

  test("rejects: an unknown dtype with a suggestion", () => {
    const msg = rejectsFile(stBytes(one("F46", [1], [0, 8]), f64Bytes(1)), "x.dtype");
    expect(msg).toMatch(/did you mean [^)]*"F64"/);
    rejectsFile(stBytes(one("F8_E4M3", [1], [0, 1]), [0]), "x.dtype");
    rejectsFile(stBytes(one(7, [1], [0, 8]), f64Bytes(1)), "x.dtype");
  });

  test("rejects: a shape that is not a list of non-negative safe integers", () => {
    for (const shape of [[-1], [1.5], "1", [2 ** 60], [null], { 0: 1 }]) {
      rejectsFile(
        stBytes(one("F64", shape, [0, 8]), f64Bytes(1)),
        "x.shape",
        "non-negative integers",
      );
    }
  });

  test("rejects: a shape whose byte size differs from end − begin", () => {
    rejectsFile(stBytes(one("F64", [3], [0, 16]), f64Bytes(1, 2)), "x.shape", "end − begin = 16");
    // 2^26 · 2^26 · 2^26 elements overflow any allocation; rejected from the span alone.
    rejectsFile(stBytes(one("F64", [2 ** 26, 2 ** 26, 2 ** 26], [0, 8]), f64Bytes(1)), "x.shape");
    rejectsFile(stBytes(one("F16", [3], [0, 8]), f64Bytes(1)), "x.shape");
  });

  test("rejects: offsets that are not a pair of non-negative integers", () => {
    for (const offsets of [[0], [0, 8, 16], [-8, 0], [0, "8"], [0, 8.5], null]) {
      rejectsFile(stBytes(one("F64", [1], offsets), f64Bytes(1)), "x.data_offsets");
    }
  });

  test("rejects: offsets beyond the byte buffer", () => {
    rejectsFile(
      stBytes(one("F64", [125], [0, 1000]), f64Bytes(1)),
      "x.data_offsets",
      "within the byte buffer of 8 bytes",
    );
  });

  test("rejects: decreasing offsets", () => {
    rejectsFile(stBytes(one("F64", [0], [8, 0]), f64Bytes(1)), "x.data_offsets", "begin ≤ end");
  });

  test("rejects: overlapping tensors", () => {
    const header = {
      a: { dtype: "F32", shape: [2], data_offsets: [0, 8] },
      b: { dtype: "F32", shape: [2], data_offsets: [4, 12] },
    };
    rejectsFile(stBytes(header, new Uint8Array(12)), "b.data_offsets", "overlap of 4 bytes");
  });

  test("rejects: a hole between tensors", () => {
    const header = {
      a: { dtype: "F64", shape: [1], data_offsets: [0, 8] },
      b: { dtype: "F64", shape: [1], data_offsets: [16, 24] },
    };
    rejectsFile(stBytes(header, new Uint8Array(24)), "b.data_offsets", "hole of 8 bytes");
    rejectsFile(
      stBytes(one("F64", [1], [8, 16]), new Uint8Array(16)),
      "x.data_offsets",
      "hole of 8 bytes",
    );
  });

  test("rejects: trailing bytes after the last tensor", () => {
    rejectsFile(
      stBytes(one("F64", [1], [0, 8]), new Uint8Array(9)),
      "byte buffer",
      "1 trailing bytes",
    );
  });

  test("rejects: duplicate tensor names", () => {
    const entry = '{"dtype":"F64","shape":[1],"data_offsets":[0,8]}';
    rejectsFile(stBytes(`{"x":${entry},"x":${entry}}`, f64Bytes(1)), "header", 'duplicate key "x"');
  });

  test("rejects: metadata that is not a map of strings", () => {
    rejectsFile(stBytes({ __metadata__: { a: 1 } }), "__metadata__");
    rejectsFile(stBytes({ __metadata__: ["a"] }), "__metadata__");
  });

  test("rejects: an entry that is not an object with exactly dtype, shape and data_offsets", () => {
    rejectsFile(stBytes({ x: [1, 2] }), "x");
    rejectsFile(stBytes({ x: { dtype: "F64", shape: [0] } }), "x");
    rejectsFile(stBytes({ x: { dtype: "F64", shape: [0], data_offsets: [0, 0], extra: 1 } }), "x");
  });

  test("rejects: bool bytes other than 0 and 1", () => {
    rejectsFile(stBytes(one("BOOL", [3], [0, 3]), [1, 0, 2]), "x", "2 at flat index 2");
  });

  test("rejects: i64 values beyond ±2^53", () => {
    const b = new Uint8Array(16);
    new DataView(b.buffer).setBigInt64(8, 2n ** 53n + 1n, true);
    rejectsFile(stBytes(one("I64", [2], [0, 16]), b), "x", "flat index 1");
  });

  test("rejects: nesting deep enough to overflow a recursive parser", () => {
    rejectsFile(
      stBytes(`{"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`),
      "header",
      "nesting deeper",
    );
  });

  test("rejects: a file over options.maxBytes before reading it", () => {
    const path = writeFile(
      tmp("big.safetensors"),
      stBytes(one("F64", [4], [0, 32]), new Uint8Array(32)),
    );
    const e = expectIoError(() => readSafetensors(path, { maxBytes: 64 }), "path");
    expect(e.message).toContain("options.maxBytes");
    expect(readSafetensors(path, { maxBytes: 1000 }).tensors.size).toBe(1);
    expectPolgradError(
      () => readSafetensors(path, { maxBytes: -1 }),
      ConfigError,
      "E_CONFIG",
      "options.maxBytes",
    );
  });

  test("rejects: a missing file and a directory", () => {
    expectIoError(() => readSafetensors(tmp("missing.safetensors")), "path");
    const dir = tmp("dir.safetensors");
    mkdirSync(dir);
    const e = expectIoError(() => readSafetensors(dir), "path");
    expect(e.message).toContain("directory");
  });
});

describe("parseSafetensors", () => {
  test("rejects: overlapping tensors", () => {
    const header = {
      a: { dtype: "F64", shape: [2], data_offsets: [0, 16] },
      b: { dtype: "F64", shape: [1], data_offsets: [8, 16] },
    };
    const e = expectIoError(
      () => parseSafetensors(stBytes(header, new Uint8Array(16)), "mem"),
      "b.data_offsets",
    );
    expect(e.path).toBe("mem");
    expect(e.fn).toBe("parseSafetensors");
  });

  test("rejects: fewer than 8 bytes", () => {
    expectIoError(() => parseSafetensors(new Uint8Array(7)), "file");
  });
});
