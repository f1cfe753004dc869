/** Enforces docs/diagnostics/mismatch.md#quantiles: the linear-interpolation quantile helper. */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { quantileSorted, quantiles, quantilesOf } from "../../src/core/quantile.js";
import { ConfigError, NonFiniteError, ShapeError } from "../../src/index.js";
import { expectClose, FC_PARAMS } from "../_kit/index.js";

describe("quantilesOf", () => {
  test("identity: bitwise the quantiles of the sorted sample, on large samples with ties, −0 and +0", () => {
    const cell = fc.oneof(
      fc.double({ min: -3, max: 3, noNaN: true }),
      fc.constantFrom(0, -0, 1, -1, 2.5, 1e300, -1e300),
    );
    const levels = [0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1, 1 / 3];
    fc.assert(
      fc.property(fc.array(cell, { minLength: 25, maxLength: 5000 }), fc.boolean(), (xs, big) => {
        const sample = big ? [...xs, ...xs, ...xs] : xs;
        const sorted = Float64Array.from(sample).sort();
        const want = levels.map((q) => quantileSorted(sorted, q));
        const got = quantilesOf(sample, levels);
        for (let k = 0; k < levels.length; k++) {
          expect(Object.is(got[k], want[k]), `q = ${levels[k]}: ${got[k]} vs ${want[k]}`).toBe(
            true,
          );
        }
      }),
      FC_PARAMS,
    );
  });
});

describe("quantiles", () => {
  test("golden: linear interpolation on [-0.6, 0.2, 1.0]", () => {
    // n = 3, h = 2q: q = 0.01 → h = 0.02, −0.6 + 0.02·0.8 = −0.584; q = 0.05 → −0.6 + 0.1·0.8 =
    // −0.52; q = 0.25 → h = 0.5, −0.2; q = 0.5 → 0.2 exactly; q = 0.75 → 0.6; q = 0.95 → h = 1.9,
    // 0.2 + 0.9·0.8 = 0.92; q = 0.99 → 0.984; q = 0 and 1 → the extremes exactly. Input unsorted.
    const levels = [0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1];
    const q = quantiles([1.0, -0.6, 0.2], levels);
    expectClose(q, [-0.6, -0.584, -0.52, -0.2, 0.2, 0.6, 0.92, 0.984, 1.0], { atol: 1e-15 });
    expect(q[0]).toBe(-0.6);
    expect(q[4]).toBe(0.2);
    expect(q[8]).toBe(1.0);
    // Even n: the median is the average of the two middle values (numpy "linear", torch default).
    expect(quantiles([4, 1, 3, 2], [0.5])).toEqual([2.5]);
    // The input is not reordered.
    const x = new Float64Array([3, 1, 2]);
    quantiles(x, [0.5]);
    expect(Array.from(x)).toEqual([3, 1, 2]);
  });

  test("property: monotone in the level and bounded by min and max", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 10 }),
        (xs, levels) => {
          const sortedLevels = [...levels].sort((a, b) => a - b);
          const q = quantiles(xs, sortedLevels);
          const lo = Math.min(...xs);
          const hi = Math.max(...xs);
          for (let k = 0; k < q.length; k++) {
            expect(q[k]).toBeGreaterThanOrEqual(lo);
            expect(q[k]).toBeLessThanOrEqual(hi);
            if (k > 0) expect(q[k]).toBeGreaterThanOrEqual(q[k - 1] as number);
          }
          // At the sample points h = j exactly, the quantile is the j-th order statistic.
          const s = [...xs].sort((a, b) => a - b);
          const n = s.length;
          if (n > 1) {
            const j = Math.floor(n / 2);
            const level = j / (n - 1);
            if (level * (n - 1) === j) expect(quantiles(xs, [level])[0]).toBe(s[j]);
          }
        },
      ),
      FC_PARAMS,
    );
  });

  test("rejects: an empty sample, non-finite values and levels outside [0, 1]", () => {
    expect(() => quantiles([], [0.5])).toThrow(ShapeError);
    expect(() => quantiles([1, Number.NaN], [0.5])).toThrow(NonFiniteError);
    for (const q of [-0.1, 1.5, Number.NaN]) {
      try {
        quantiles([1, 2], [q]);
        throw new Error("nothing thrown");
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        expect((e as ConfigError).arg).toBe("levels");
      }
    }
  });
});
