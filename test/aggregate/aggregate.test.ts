/** Enforces docs/derivations/aggregation.md#aggregate (spec §2.3). */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { CompensatedSum } from "../../src/core/sum.js";
import {
  AGGREGATIONS,
  aggregate,
  effectiveTokenWeights,
  MaskError,
  ShapeError,
} from "../../src/index.js";

const x = [
  [1, 2],
  [3, 123],
];
const m = [
  [true, true],
  [true, false],
];

/** Right-padded ragged masks with at least one token per row and junk-filled values. */
const batches = fc
  .record({ B: fc.integer({ min: 1, max: 6 }), T: fc.integer({ min: 1, max: 9 }) })
  .chain(({ B, T }) =>
    fc.record({
      lengths: fc.array(fc.integer({ min: 1, max: T }), { minLength: B, maxLength: B }),
      values: fc.array(
        fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: T, maxLength: T }),
        { minLength: B, maxLength: B },
      ),
      junk: fc.constantFrom(123, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
      normLen: fc.integer({ min: 1, max: 16 }),
    }),
  )
  .map(({ lengths, values, junk, normLen }) => {
    const mask = lengths.map((L) => values[0]!.map((_, t) => t < L));
    const perToken = values.map((row, b) => row.map((v, t) => (t < lengths[b]! ? v : junk)));
    return { mask, perToken, normLen };
  });

describe("aggregate", () => {
  test("golden: the four modes on x = [[1, 2], [3, pad]]", () => {
    // token_mean 6/3 = 2; seq_mean_token_mean (1.5 + 3)/2 = 2.25; seq_mean_token_sum (3 + 3)/2 = 3;
    // token_sum_norm (ℓ = 4) 6/(2·4) = 0.75.
    expect(aggregate(x, m, "token_mean")).toBe(2);
    expect(aggregate(x, m, "seq_mean_token_mean")).toBe(2.25);
    expect(aggregate(x, m, "seq_mean_token_sum")).toBe(3);
    expect(aggregate(x, m, "token_sum_norm", { normLen: 4 })).toBe(0.75);
  });

  test("identity: equals the inner product with effectiveTokenWeights bitwise", () => {
    fc.assert(
      fc.property(batches, ({ mask, perToken, normLen }) => {
        for (const mode of AGGREGATIONS) {
          const w = effectiveTokenWeights(mask, mode, { normLen }).data;
          const acc = new CompensatedSum();
          perToken.flat().forEach((v, i) => {
            if (w[i] !== 0) acc.add(w[i]! * v);
          });
          expect(Object.is(aggregate(perToken, mask, mode, { normLen }), acc.value())).toBe(true);
        }
      }),
      { seed: 20261130, numRuns: 200 },
    );
  });

  test("identity: equal lengths collapse token_mean and seq_mean_token_mean bitwise", () => {
    // All rows of length L: N = B·L, so 1/N and 1/(B·L) are the same float; seq_mean_token_sum is
    // L·token_mean and token_sum_norm is (L/ℓ)·token_mean (checked to one ulp).
    const xs = [
      [0.3, -1.7, 2.9],
      [4.1, 0.01, -0.5],
    ];
    const eq = [
      [true, true, true],
      [true, true, true],
    ];
    const tm = aggregate(xs, eq, "token_mean");
    expect(Object.is(tm, aggregate(xs, eq, "seq_mean_token_mean"))).toBe(true);
    expect(aggregate(xs, eq, "seq_mean_token_sum")).toBeCloseTo(3 * tm, 15);
    expect(aggregate(xs, eq, "token_sum_norm", { normLen: 6 })).toBeCloseTo((3 / 6) * tm, 15);
  });

  test("mask invariance: junk at padding never reaches the value", () => {
    fc.assert(
      fc.property(batches, ({ mask, perToken, normLen }) => {
        const clean = perToken.map((row, b) => row.map((v, t) => (mask[b]![t] ? v : 0)));
        for (const mode of AGGREGATIONS) {
          expect(
            Object.is(
              aggregate(perToken, mask, mode, { normLen }),
              aggregate(clean, mask, mode, { normLen }),
            ),
          ).toBe(true);
        }
      }),
      { seed: 20261130, numRuns: 100 },
    );
  });

  test("rejects: a non-2-D input, a mismatched mask and an empty row", () => {
    expect(() => aggregate([1, 2] as unknown as number[][], m, "token_mean")).toThrow(ShapeError);
    expect(() => aggregate(x, [[true, true, true]], "token_mean")).toThrow(ShapeError);
    expect(() =>
      aggregate(
        x,
        [
          [true, true],
          [false, false],
        ],
        "token_mean",
      ),
    ).toThrow(MaskError);
  });
});
