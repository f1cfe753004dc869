/**
 * Enforces docs/io.md#npy (the typed-array path): C-order little-endian data at an aligned offset
 * is decoded by one typed-array pass, and gives the very bits of the element-wise DataView path
 * that unaligned, big-endian and Fortran-ordered data take.
 */
import { describe, expect, test } from "vitest";
import { parseNpy } from "../../src/index.js";
import { concat } from "./_kit.js";

/** A v1.0 `.npy` of a 1-d array of `descr` holding `data` (raw element bytes, file order). */
function npy(descr: string, count: number, data: Uint8Array): Uint8Array {
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${count},), }`;
  while ((10 + h.length + 1) % 64 !== 0) h += " ";
  h += "\n";
  const head = new Uint8Array(10 + h.length);
  head.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(head.buffer).setUint16(8, h.length, true);
  for (let i = 0; i < h.length; i++) head[10 + i] = h.charCodeAt(i);
  return concat(head, data);
}

describe("parseNpy", () => {
  test("identity: aligned little-endian data decodes to the bits of the element-wise path", () => {
    // Every 16-bit pattern (F16 NaNs, subnormals and infinities included) and pseudo-random
    // wider words; the unaligned copy sits one byte into its buffer.
    const n = 65536;
    const raw = new Uint8Array(8 * n);
    for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
    for (let i = 0; i < n; i++) new DataView(raw.buffer).setUint16(2 * i, i, true);
    for (const [descr, size] of [
      ["<f2", 2],
      ["<f4", 4],
      ["<f8", 8],
      ["<i1", 1],
      ["<i2", 2],
      ["<i4", 4],
      ["<u2", 2],
      ["<u4", 4],
    ] as const) {
      const count = raw.length / size;
      const file = npy(descr, count, raw);
      const shifted = new Uint8Array(file.length + 1);
      shifted.set(file, 1);
      const fast = parseNpy(file, "x.npy").tensors.get("x")?.data as Float64Array;
      const slow = parseNpy(shifted.subarray(1), "x.npy").tensors.get("x")?.data as Float64Array;
      expect(fast.length).toBe(count);
      const a = new Uint8Array(fast.buffer);
      const b = new Uint8Array(slow.buffer);
      let differ = a.length === b.length ? -1 : 0;
      for (let i = 0; i < a.length && differ < 0; i++) if (a[i] !== b[i]) differ = i;
      expect(differ, descr).toBe(-1);
    }
  });
});
