import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CompensatedSum, twoSumError, twoSumErrorSafe } from "../../src/core/sum.js";
import { policyLoss } from "../../src/losses/policyLoss.js";

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
  it("property: TwoSum's error is bitwise Neumaier's wherever the sum and t − s are finite", () => {
    fc.assert(
      fc.property(wide, wide, (s, x) => {
        const t = s + x;
        fc.pre(Number.isFinite(t) && Number.isFinite(t - s));
        expect(Object.is(twoSumError(s, x, t), neumaierError(s, x))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it("regression: near overflow (t − s overflows) the safe error is Neumaier's, not NaN", () => {
    // fast-check's counterexample: s = 1.378e307, x = −1.798e308, t = s + x = −1.66e308 is finite
    // but t − s rounds to −Infinity, so the branch-free TwoSum gives NaN; the safe form does not.
    const s = 1.378445676298898e307;
    const x = -1.7976931348623157e308;
    expect(Number.isNaN(twoSumError(s, x, s + x))).toBe(true);
    expect(Object.is(twoSumErrorSafe(s, x, s + x), neumaierError(s, x))).toBe(true);
    fc.assert(
      fc.property(wide, wide, (a, b) => {
        const t = a + b;
        fc.pre(Number.isFinite(t));
        expect(Object.is(twoSumErrorSafe(a, b, t), neumaierError(a, b))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it("regression: a policy loss whose running sum passes near 2^1024 is the exact finite sum, not an error", () => {
    // Terms 1.378e307 and −1.798e308 (w = 1 under token_sum): the hot sum's correction is NaN,
    // and the loss is recomputed exactly: −(e^0·A) summed = −(1.378e307 − 1.798e308).
    const out = policyLoss(
      { ratio: "token", surrogate: "pg", clip: null, aggregation: "token_sum", normLen: null },
      {
        logprobs: [[-1, -1]],
        oldLogprobs: [[-1, -1]],
        advantages: [[-1.378445676298898e307, 1.7976931348623157e308]],
        responseMask: [[true, true]],
      },
    );
    expect(out.loss).toBe(1.378445676298898e307 + -1.7976931348623157e308);
  });

  // The running sums off the hot path use the safe form; the hot loops' unchecked form can give a
  // NaN correction near 2^1024, which their consumer recomputes (the policy-loss regression above).
  it("property: a running TwoSum-compensated sum is bitwise CompensatedSum.value()", () => {
    fc.assert(
      fc.property(fc.array(wide, { maxLength: 40 }), (xs) => {
        const ref = new CompensatedSum();
        let s = 0;
        let c = 0;
        for (const x of xs) {
          ref.add(x);
          const t = s + x;
          c += twoSumErrorSafe(s, x, t);
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
