/**
 * Enforces docs/io.md#half-precision: F16 and BF16 bit patterns decode to float64 exactly
 * (normals, subnormals, ±0, ±Inf, NaN), and encoding rounds once, to nearest, ties to even.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { bf16ToNumber, f16ToNumber, numberToBf16, numberToF16 } from "../../src/core/halfFloat.js";
import { ConfigError } from "../../src/errors.js";
import { expectPolgradError } from "../io/_kit.js";

const FC = { seed: 20261130, numRuns: 300 };

describe("f16ToNumber", () => {
  test("golden: hand-computed bit patterns decode exactly", () => {
    // F16 = s | eeeee | mmmmmmmmmm, bias 15.
    expect(f16ToNumber(0x3c00)).toBe(1); // e = 15, m = 0: 2^0
    expect(f16ToNumber(0xc000)).toBe(-2); // s = 1, e = 16: −2^1
    expect(f16ToNumber(0x3555)).toBe(1365 / 4096); // e = 13, m = 341: (1024 + 341)·2^(13−25)
    expect(f16ToNumber(0x0001)).toBe(2 ** -24); // smallest subnormal: 1·2^−24
    expect(f16ToNumber(0x03ff)).toBe(1023 * 2 ** -24); // largest subnormal
    expect(f16ToNumber(0x0400)).toBe(2 ** -14); // smallest normal: e = 1
    expect(f16ToNumber(0x7bff)).toBe(65504); // largest finite: (2 − 2^−10)·2^15
    expect(f16ToNumber(0x7c00)).toBe(Number.POSITIVE_INFINITY); // e = 31, m = 0
    expect(f16ToNumber(0xfc00)).toBe(Number.NEGATIVE_INFINITY);
    expect(f16ToNumber(0x7e00)).toBeNaN(); // e = 31, m ≠ 0
    expect(f16ToNumber(0xfc01)).toBeNaN();
    expect(Object.is(f16ToNumber(0x8000), -0)).toBe(true); // negative zero keeps its sign
  });

  test("rejects: a pattern outside [0, 0xffff]", () => {
    expectPolgradError(() => f16ToNumber(0x10000), ConfigError, "E_CONFIG", "bits");
    expectPolgradError(() => f16ToNumber(1.5), ConfigError, "E_CONFIG", "bits");
  });
});

describe("bf16ToNumber", () => {
  test("golden: hand-computed bit patterns decode exactly", () => {
    // BF16 = s | eeeeeeee | mmmmmmm, bias 127 (the top half of a float32).
    expect(bf16ToNumber(0x3f80)).toBe(1); // e = 127, m = 0
    expect(bf16ToNumber(0xc000)).toBe(-2); // s = 1, e = 128
    expect(bf16ToNumber(0x4049)).toBe(3.140625); // e = 128, m = 73: (128 + 73)/128 · 2
    expect(bf16ToNumber(0x0001)).toBe(2 ** -133); // smallest subnormal: 1·2^(−126−7)
    expect(bf16ToNumber(0x007f)).toBe(127 * 2 ** -133); // largest subnormal
    expect(bf16ToNumber(0x0080)).toBe(2 ** -126); // smallest normal
    expect(bf16ToNumber(0x7f7f)).toBe(255 * 2 ** 120); // largest finite: (2 − 2^−7)·2^127
    expect(bf16ToNumber(0x7f80)).toBe(Number.POSITIVE_INFINITY);
    expect(bf16ToNumber(0xff80)).toBe(Number.NEGATIVE_INFINITY);
    expect(bf16ToNumber(0x7fc0)).toBeNaN();
    expect(Object.is(bf16ToNumber(0x8000), -0)).toBe(true);
  });

  test("identity: agrees with the top half of a float32", () => {
    const view = new DataView(new ArrayBuffer(4));
    const bad: number[] = [];
    for (let b = 0; b < 65536; b++) {
      view.setUint32(0, b << 16);
      const f32 = view.getFloat32(0);
      const v = bf16ToNumber(b);
      if (Number.isNaN(f32) ? !Number.isNaN(v) : !Object.is(v, f32)) bad.push(b);
    }
    expect(bad).toEqual([]);
  });
});

function expectNearest(
  decode: (b: number) => number,
  encode: (x: number) => number,
  x: number,
): void {
  const bits = encode(x);
  const y = decode(bits);
  const err = Math.abs(x - y);
  for (const nb of [bits - 1, bits + 1]) {
    if (nb < 0 || nb > 0xffff || (nb & 0x8000) !== (bits & 0x8000)) continue;
    const z = decode(nb);
    if (Number.isNaN(z)) continue;
    expect(Math.abs(x - z)).toBeGreaterThanOrEqual(err);
  }
}

describe("numberToF16", () => {
  test("property: decoding then encoding every pattern is the identity", () => {
    const bad: number[] = [];
    for (let b = 0; b < 65536; b++) {
      const v = f16ToNumber(b);
      if (numberToF16(v) !== (Number.isNaN(v) ? 0x7e00 : b)) bad.push(b);
    }
    expect(bad).toEqual([]);
  });

  test("golden: ties round to even, overflow to infinity, underflow to zero", () => {
    expect(numberToF16(1 + 2 ** -11)).toBe(0x3c00); // halfway 1 ↔ 1 + 2^−10: even mantissa 0
    expect(numberToF16(1 + 3 * 2 ** -11)).toBe(0x3c02); // halfway m = 1 ↔ 2: even 2
    expect(numberToF16(1 + 2 ** -11 + 2 ** -40)).toBe(0x3c01); // just above halfway
    expect(numberToF16(65519)).toBe(0x7bff); // below the halfway point 65520
    expect(numberToF16(65520)).toBe(0x7c00); // halfway to 2^16 rounds to even = Inf
    expect(numberToF16(-1e10)).toBe(0xfc00);
    expect(numberToF16(2 ** -25)).toBe(0x0000); // halfway 0 ↔ 2^−24: even 0
    expect(numberToF16(1.5 * 2 ** -25)).toBe(0x0001);
    expect(numberToF16(-1e-300)).toBe(0x8000);
    expect(numberToF16(Number.NaN)).toBe(0x7e00);
  });

  test("property: the encoded value is a nearest representable value", () => {
    fc.assert(
      fc.property(fc.double({ min: -65504, max: 65504, noNaN: true }), (x) => {
        expectNearest(f16ToNumber, numberToF16, x);
      }),
      FC,
    );
  });
});

describe("numberToBf16", () => {
  test("property: decoding then encoding every pattern is the identity", () => {
    const bad: number[] = [];
    for (let b = 0; b < 65536; b++) {
      const v = bf16ToNumber(b);
      if (numberToBf16(v) !== (Number.isNaN(v) ? 0x7fc0 : b)) bad.push(b);
    }
    expect(bad).toEqual([]);
  });

  test("golden: rounds once from float64 (no double rounding through float32)", () => {
    expect(numberToBf16(1 + 2 ** -8)).toBe(0x3f80); // halfway 1 ↔ 1 + 2^−7: even
    expect(numberToBf16(1 + 3 * 2 ** -8)).toBe(0x3f82); // halfway m = 1 ↔ 2: even 2
    // 1 + 2^−8 + 2^−30 is above halfway, so it rounds up to 0x3F81; rounding first to float32
    // would drop the 2^−30 (float32 ulp at 1 is 2^−23), leave an exact tie and give 0x3F80.
    expect(Math.fround(1 + 2 ** -8 + 2 ** -30)).toBe(1 + 2 ** -8);
    expect(numberToBf16(1 + 2 ** -8 + 2 ** -30)).toBe(0x3f81);
    expect(numberToBf16(2 ** -134)).toBe(0x0000); // halfway 0 ↔ 2^−133: even 0
    expect(numberToBf16(1e39)).toBe(0x7f80);
  });

  test("property: the encoded value is a nearest representable value", () => {
    fc.assert(
      fc.property(fc.double({ min: -3.3e38, max: 3.3e38, noNaN: true }), (x) => {
        expectNearest(bf16ToNumber, numberToBf16, x);
      }),
      FC,
    );
  });

  test("rejects: a non-number", () => {
    expectPolgradError(() => numberToBf16("1" as unknown as number), ConfigError, "E_CONFIG", "x");
  });
});
