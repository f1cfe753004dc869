/**
 * Enforces docs/io.md#reading-by-rows: openSafetensorsRowReader (the reader of `loss --out` on a
 * safetensors file) gives, for rows [b0, b1), exactly what readSafetensors gives for the whole file
 * cut to those rows, for every dtype and any block, the tensors whose outermost dimension is not B
 * whole; and it declines (null) every path the whole read must judge.
 */
import { writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { openSafetensorsRowReader, readSafetensors } from "../../src/io/readSafetensors.js";
import { TENSOR_DTYPES } from "../../src/io/tensorTypes.js";
import { writeSafetensors } from "../../src/io/writeSafetensors.js";
import { useTmpDir } from "./_kit.js";

const tmp = useTmpDir();

/** Values every dtype holds exactly (small integers, halves; BOOL/U8 0/1). */
function valuesFor(dtype: string, n: number): Float64Array | Uint8Array {
  if (dtype === "BOOL" || dtype === "U8")
    return Uint8Array.from({ length: n }, (_, i) => ((i * 7) % 3 === 0 ? 1 : 0));
  const signed = !dtype.startsWith("U");
  return Float64Array.from({ length: n }, (_, i) => {
    const v = (i * 37) % 101;
    if (dtype.startsWith("F") || dtype === "BF16") return (signed && i % 2 ? -v : v) / 4;
    return signed && i % 2 ? -v : v;
  });
}

describe("openSafetensorsRowReader", () => {
  test("identity: rows [b0, b1) of every dtype are the whole read's rows, other tensors whole", () => {
    const B = 7;
    const tensors: Record<
      string,
      { dtype: string; shape: number[]; data: Float64Array | Uint8Array }
    > = {};
    for (const [k, dtype] of TENSOR_DTYPES.entries()) {
      // Odd row widths, so the rows of one tensor do not start at 8-byte boundaries in the file.
      const shape = k % 3 === 0 ? [B, 3] : k % 3 === 1 ? [B, 2, 5] : [B];
      const n = shape.reduce((a, b) => a * b, 1);
      tensors[`t_${dtype}`] = { dtype, shape, data: valuesFor(dtype, n) };
    }
    tensors.not_rows = { dtype: "F32", shape: [3, 4], data: valuesFor("F32", 12) };
    tensors.scalar = { dtype: "F64", shape: [], data: Float64Array.of(2.5) };
    const path = `${tmp("rows")}.safetensors`;
    writeSafetensors(path, tensors as never);
    const whole = readSafetensors(path);
    const reader = openSafetensorsRowReader("test", path);
    expect(reader).not.toBeNull();
    if (reader === null) return;
    try {
      expect([...reader.shapes.tensors.keys()]).toEqual([...whole.tensors.keys()]);
      for (const [b0, b1] of [
        [0, 7],
        [0, 1],
        [2, 5],
        [6, 7],
        [3, 4],
      ] as const) {
        const part = reader.rows(B, b0, b1);
        expect([...part.tensors.keys()]).toEqual([...whole.tensors.keys()]);
        for (const [name, t] of whole.tensors) {
          const p = part.tensors.get(name);
          const byRows = t.shape[0] === B && t.shape.length >= 1;
          const per = byRows ? t.data.length / B : 0;
          const want = byRows
            ? Array.from(t.data.subarray(b0 * per, b1 * per))
            : Array.from(t.data);
          expect([name, b0, p?.dtype, p?.shape]).toEqual([
            name,
            b0,
            t.dtype,
            byRows ? [b1 - b0, ...t.shape.slice(1)] : t.shape,
          ]);
          expect([name, b0, Array.from(p?.data ?? [])]).toEqual([name, b0, want]);
        }
        const only = reader.rows(B, b0, b1, "t_F64");
        expect([...only.tensors.keys()]).toEqual(["t_F64"]);
      }
    } finally {
      reader.close();
    }
  });

  test("rejects: declines another extension, a missing file and a broken header (the whole read names them)", () => {
    const good = `${tmp("good")}.safetensors`;
    writeSafetensors(good, { x: { dtype: "F64", shape: [1, 1], data: [1] } });
    const json = `${tmp("batch")}.json`;
    writeFileSync(json, "{}");
    const broken = `${tmp("broken")}.safetensors`;
    writeFileSync(broken, Buffer.from([200, 0, 0, 0, 0, 0, 0, 0, 0x7b]));
    const short = `${tmp("short")}.safetensors`;
    writeFileSync(short, "abc");
    for (const p of [json, `${tmp("missing")}.safetensors`, broken, short])
      expect(openSafetensorsRowReader("test", p), p).toBeNull();
    const r = openSafetensorsRowReader("test", good);
    expect(r).not.toBeNull();
    r?.close();
  });
});
