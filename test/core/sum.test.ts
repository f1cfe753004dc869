import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CompensatedSum, twoSumError } from "../../src/core/sum.js";

/** Neumaier's correction of one step, as CompensatedSum.add writes it (the reference). */
function neumaierError(s: number, x: number): number {
  const t = s + x;
  return Math.abs(s) >= Math.abs(x) ? s - t + x : x - t + s;
}

/** Doubles across the whole range: tiny, subnormal, huge, both signs, and exact ties. */
const wide = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.double({ min: -1e3, max: 1e3, noNaN: true }),
  fc.double({ min: -1e-300, max: 1e-300, noNaN: true }),
  fc.constantFrom(0, -0, 1, -1, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53),
);

describe("twoSumError", () => {
  it("property: TwoSum's error is bitwise Neumaier's wherever the sum is finite", () => {
    fc.assert(
      fc.property(wide, wide, (s, x) => {
        const t = s + x;
        fc.pre(Number.isFinite(t));
        expect(Object.is(twoSumError(s, x, t), neumaierError(s, x))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it("property: a running TwoSum-compensated sum is bitwise CompensatedSum.value()", () => {
    fc.assert(
      fc.property(fc.array(wide, { maxLength: 40 }), (xs) => {
        const ref = new CompensatedSum();
        let s = 0;
        let c = 0;
        for (const x of xs) {
          ref.add(x);
          const t = s + x;
          c += twoSumError(s, x, t);
          s = t;
        }
        const ours = Number.isFinite(s) ? s + c : s;
        expect(Object.is(ours, ref.value())).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it("golden: the error of 1 + 2^-60 is 2^-60 (t rounds to 1)", () => {
    // 1 + 2^-60 is not a float64: t = 1 and the exact remainder 2^-60 is the error.
    expect(twoSumError(1, 2 ** -60, 1 + 2 ** -60)).toBe(2 ** -60);
  });
});
