/**
 * Enforces docs/io.md#safetensors (well-formed files): every dtype written by writeSafetensors
 * reads back exactly (floats upcast to float64 exactly, integers as exact float64, BOOL/U8 as
 * bytes), hand-built files with known bit patterns decode to the hand-computed values, and the
 * writer's byte layout is the documented one.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { ConfigError, IoError, ShapeError, UnknownNameError } from "../../src/errors.js";
import {
  encodeSafetensors,
  type NamedTensor,
  parseSafetensors,
  readSafetensors,
  type TensorDtype,
  writeSafetensors,
} from "../../src/io/index.js";
import { expectPolgradError, f64Bytes, stBytes, u16Bytes, useTmpDir, writeFile } from "./_kit.js";

const tmp = useTmpDir();

function values(t: NamedTensor | undefined): number[] {
  if (t === undefined) throw new Error("missing tensor");
  return Array.from(t.data);
}

/** Bitwise equality per element (Object.is: −0 ≠ 0, NaN = NaN). */
function expectSame(actual: readonly number[], expected: readonly number[]): void {
  expect(actual.length).toBe(expected.length);
  for (const [i, a] of actual.entries()) {
    expect(Object.is(a, expected[i]), `index ${i}: ${a} vs ${expected[i]}`).toBe(true);
  }
}

const INF = Number.POSITIVE_INFINITY;

describe("readSafetensors", () => {
  test("golden: every dtype round-trips through writeSafetensors", () => {
    const cases: Record<string, { dtype: TensorDtype; shape: number[]; data: number[] }> = {
      f64: { dtype: "F64", shape: [2, 3], data: [0.1, -0, Number.NaN, INF, -INF, 5e-324] },
      f32: { dtype: "F32", shape: [4], data: [0.5, -1.25, Number.NaN, -INF] }, // exact in float32
      bf16: { dtype: "BF16", shape: [2, 2], data: [1, -2, 2 ** -133, 3.140625] }, // exact in bf16
      f16: { dtype: "F16", shape: [5], data: [1, -2, 2 ** -24, 65504, INF] }, // exact in f16
      bool: { dtype: "BOOL", shape: [2, 2], data: [1, 0, 0, 1] },
      u8: { dtype: "U8", shape: [3], data: [0, 7, 255] },
      i64: { dtype: "I64", shape: [4], data: [-(2 ** 53), 2 ** 53, 0, -1] },
      i32: { dtype: "I32", shape: [1, 2], data: [-(2 ** 31), 2 ** 31 - 1] },
      i16: { dtype: "I16", shape: [2], data: [-(2 ** 15), 2 ** 15 - 1] },
      i8: { dtype: "I8", shape: [2], data: [-128, 127] },
      u64: { dtype: "U64", shape: [2], data: [0, 2 ** 53] },
      u32: { dtype: "U32", shape: [2], data: [0, 2 ** 32 - 1] },
      u16: { dtype: "U16", shape: [2], data: [0, 2 ** 16 - 1] },
    };
    const path = tmp("all.safetensors");
    writeSafetensors(path, cases, { format: "pt", note: "é ✓" });
    const set = readSafetensors(path);
    expect(set.format).toBe("safetensors");
    expect(set.path).toBe(path);
    expect(set.metadata).toEqual({ format: "pt", note: "é ✓" });
    expect([...set.tensors.keys()]).toEqual(Object.keys(cases));
    for (const [name, c] of Object.entries(cases)) {
      const t = set.tensors.get(name) as NamedTensor;
      expect(t.dtype).toBe(c.dtype);
      expect(t.shape).toEqual(c.shape);
      expect(t.data).toBeInstanceOf(
        c.dtype === "BOOL" || c.dtype === "U8" ? Uint8Array : Float64Array,
      );
      expectSame(values(t), c.data);
    }
  });

  test("identity: aligned and unaligned f64 and f32 tensors decode to the same bits", () => {
    // A 1-byte U8 tensor first puts the next tensor at an odd offset: the per-element path; the
    // same values first in the buffer are 8-aligned: the copy path (docs/io.md#safetensors).
    const f64 = [0.1, -0, Number.NaN, INF, -INF, 5e-324, 1e308];
    const f32 = [0.5, -1.25, Number.NaN, -INF, 2 ** -149];
    const aligned = parseSafetensors(
      encodeSafetensors({
        a: { dtype: "F64", shape: [7], data: f64 },
        b: { dtype: "F32", shape: [5], data: f32 },
      }),
    );
    const odd = parseSafetensors(
      encodeSafetensors({
        pad: { dtype: "U8", shape: [1], data: [0] },
        a: { dtype: "F64", shape: [7], data: f64 },
        b: { dtype: "F32", shape: [5], data: f32 },
      }),
    );
    expectSame(values(aligned.tensors.get("a")), f64);
    expectSame(values(odd.tensors.get("a")), f64);
    expectSame(values(aligned.tensors.get("b")), f32);
    expectSame(values(odd.tensors.get("b")), f32);
  });

  test("identity: a file's aligned f64 and byte tensors are views of the bytes read; bytes handed over are copied", () => {
    const f64 = [0.1, -0, Number.NaN, 1e308];
    const tensors = {
      a: { dtype: "F64" as const, shape: [4], data: f64 },
      m: { dtype: "BOOL" as const, shape: [3], data: [1, 0, 1] },
      b: { dtype: "F64" as const, shape: [4], data: f64 },
    };
    const path = tmp("views.safetensors");
    writeSafetensors(path, tensors);
    const read = readSafetensors(path).tensors;
    const a = read.get("a")?.data as Float64Array;
    const m = read.get("m")?.data as Uint8Array;
    const b = read.get("b")?.data as Float64Array;
    // One buffer (the file's body), three disjoint views with the right values.
    expect(a.buffer).toBe(m.buffer);
    expectSame(Array.from(a), f64);
    expect(Array.from(m)).toEqual([1, 0, 1]);
    // b follows 3 BOOL bytes, so it is unaligned: decoded into its own array, the same bits.
    expect(b.buffer).not.toBe(a.buffer);
    expectSame(Array.from(b), f64);
    // parseSafetensors on a caller's bytes copies: changing the bytes afterwards changes nothing.
    const bytes = encodeSafetensors(tensors);
    const parsed = parseSafetensors(bytes).tensors.get("a")?.data as Float64Array;
    bytes.fill(0);
    expectSame(Array.from(parsed), f64);
  });

  test("golden: f32 values are upcast exactly", () => {
    const path = tmp("f32.safetensors");
    writeSafetensors(path, { x: { dtype: "F32", shape: [2], data: [0.1, 1 / 3] } });
    // The float32 nearest to 0.1 is 13421773·2^−27 = 0.100000001490116119384765625.
    expectSame(values(readSafetensors(path).tensors.get("x")), [
      13421773 * 2 ** -27,
      Math.fround(1 / 3),
    ]);
  });

  test("golden: bf16 and f16 bytes match hand-computed bit patterns", () => {
    const path = tmp("half.safetensors");
    writeSafetensors(path, {
      b: { dtype: "BF16", shape: [2], data: [1, -2] },
      h: { dtype: "F16", shape: [3], data: [1, -2, 2 ** -24] },
    });
    const bytes = readFileSync(path);
    const body = Array.from(bytes.subarray(bytes.length - 10));
    // BF16 1.0 = 0x3F80, −2.0 = 0xC000; F16 1.0 = 0x3C00, −2.0 = 0xC000, 2^−24 = 0x0001 (LE).
    expect(body).toEqual([0x80, 0x3f, 0x00, 0xc0, 0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00]);
  });

  test("golden: hand-built bf16 and f16 files decode subnormals, infinities and nan", () => {
    const header = {
      b: { dtype: "BF16", shape: [6], data_offsets: [0, 12] },
      h: { dtype: "F16", shape: [6], data_offsets: [12, 24] },
    };
    const body = [
      // BF16: 1.0, −2.0, smallest subnormal 2^−133, +Inf, −Inf, NaN
      ...u16Bytes(0x3f80, 0xc000, 0x0001, 0x7f80, 0xff80, 0x7fc1),
      // F16: 1.0, −2.0, smallest subnormal 2^−24, largest subnormal 1023·2^−24, −0, NaN
      ...u16Bytes(0x3c00, 0xc000, 0x0001, 0x03ff, 0x8000, 0x7c01),
    ];
    const set = readSafetensors(writeFile(tmp("hand.safetensors"), stBytes(header, body)));
    expectSame(values(set.tensors.get("b")), [1, -2, 2 ** -133, INF, -INF, Number.NaN]);
    expectSame(values(set.tensors.get("h")), [1, -2, 2 ** -24, 1023 * 2 ** -24, -0, Number.NaN]);
  });

  test("golden: empty, scalar and zero-size tensors sharing an offset", () => {
    const header = {
      e1: { dtype: "F32", shape: [0, 3], data_offsets: [0, 0] },
      s: { dtype: "F64", shape: [], data_offsets: [0, 8] },
      e2: { dtype: "I64", shape: [2, 0], data_offsets: [0, 0] },
    };
    const set = parseSafetensors(stBytes(header, f64Bytes(2.5)));
    expect(set.tensors.get("e1")?.shape).toEqual([0, 3]);
    expect(values(set.tensors.get("e1"))).toEqual([]);
    expect(set.tensors.get("s")?.shape).toEqual([]);
    expect(values(set.tensors.get("s"))).toEqual([2.5]);
    expect(values(set.tensors.get("e2"))).toEqual([]);
  });

  test("golden: a header padded with trailing spaces and no tensors", () => {
    const set = parseSafetensors(stBytes(`{"__metadata__":{"k":"v"}}      `));
    expect(set.tensors.size).toBe(0);
    expect(set.metadata).toEqual({ k: "v" });
  });
});

describe("encodeSafetensors", () => {
  test("golden: byte layout of a one-tensor file", () => {
    const bytes = encodeSafetensors({ x: { dtype: "F64", shape: [1], data: [2.5] } });
    const json = '{"x":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}'; // 54 bytes
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(n).toBe(56); // 54 padded with 2 spaces so the buffer starts at 8 + 56 = 64
    expect(new TextDecoder().decode(bytes.subarray(8, 8 + n))).toBe(`${json}  `);
    expect(Array.from(bytes.subarray(8 + n))).toEqual(Array.from(f64Bytes(2.5)));
    expect(bytes.length).toBe(8 + 56 + 8);
  });

  test("identity: reading a written tensor set and writing it again is byte-identical", () => {
    const first = encodeSafetensors(
      {
        a: { dtype: "BF16", shape: [3], data: [0.1, -7, 1e-40] },
        m: { dtype: "BOOL", shape: [1, 3], data: [1, 1, 0] },
      },
      { who: "test" },
    );
    const set = parseSafetensors(first);
    expect(Array.from(encodeSafetensors(set.tensors, set.metadata))).toEqual(Array.from(first));
  });
});

describe("writeSafetensors", () => {
  test("rejects: a data length that differs from the shape", () => {
    const f = (): void =>
      writeSafetensors(tmp("bad.safetensors"), {
        x: { dtype: "F64", shape: [2, 2], data: [1, 2, 3] },
      });
    expectPolgradError(f, ShapeError, "E_SHAPE", "tensors.x");
  });

  test("rejects: values that do not fit the dtype", () => {
    const w = (dtype: TensorDtype, v: number) => () =>
      encodeSafetensors({ x: { dtype, shape: [1], data: [v] } });
    expectPolgradError(w("BOOL", 2), ConfigError, "E_CONFIG", "tensors.x");
    expectPolgradError(w("U8", -1), ConfigError, "E_CONFIG", "tensors.x");
    expectPolgradError(w("I32", 2 ** 31), ConfigError, "E_CONFIG", "tensors.x");
    expectPolgradError(w("I64", 2 ** 54), ConfigError, "E_CONFIG", "tensors.x");
    expectPolgradError(w("I64", Number.NaN), ConfigError, "E_CONFIG", "tensors.x");
  });

  test("rejects: an unknown dtype with a suggestion and the reserved name __metadata__", () => {
    const e = expectPolgradError(
      () => encodeSafetensors({ x: { dtype: "F46" as TensorDtype, shape: [0], data: [] } }),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "tensors.x.dtype",
    );
    expect(e.suggestions).toContain("F64");
    const meta = { __metadata__: { dtype: "F64", shape: [0], data: [] } } as const;
    expectPolgradError(() => encodeSafetensors(meta), ConfigError, "E_CONFIG");
  });

  test("rejects: a path in a missing directory", () => {
    const path = tmp("no/such/dir/x.safetensors");
    const e = expectPolgradError(() => writeSafetensors(path, {}), IoError, "E_IO", "path");
    expect(e.path).toBe(path);
  });
});
