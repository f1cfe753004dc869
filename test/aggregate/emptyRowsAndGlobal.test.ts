/**
 * Enforces docs/derivations/aggregation.md#rows-with-no-response-token and #global-normalisers for
 * effectiveTokenWeights and aggregate: the empty-row policy and the global context give the
 * weights and the value policyLoss gives under the same config and options.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  AGGREGATIONS,
  aggregate,
  effectiveTokenWeights,
  KL_ESTIMATORS,
  klLoss,
  MaskError,
  policyLoss,
  reverseKlGradSurrogate,
  valueLoss,
} from "../../src/index.js";

const FC = { seed: 1301, numRuns: 150 } as const;

/** A ragged mask with some rows emptied, and a logprob-like stream with junk at padding. */
const batchArb = fc
  .record({
    B: fc.integer({ min: 1, max: 5 }),
    T: fc.integer({ min: 1, max: 6 }),
    u: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 64, maxLength: 64 }),
  })
  .map(({ B, T, u }) => {
    let k = 0;
    const next = () => u[k++ % u.length] as number;
    const empty = (b: number) => b > 0 && next() < 0.3;
    const mask = Array.from({ length: B }, (_, b) => {
      const e = empty(b);
      return Array.from({ length: T }, (_, t) => !e && (t === 0 || next() < 0.6));
    });
    const x = mask.map((r) => r.map((on) => (on ? -3 * next() : Number.NaN)));
    return { mask, x };
  });

describe("effectiveTokenWeights and aggregate with empty rows and a global context", () => {
  test("identity: the weights are policyLoss's gradient and the value its loss, bitwise, every mode, count and drop, with and without a context", () => {
    // reinforce with A = −1: ℓ = lp, ∂L/∂lp = w exactly; the loss Σ w·lp in row-major order.
    fc.assert(
      fc.property(
        batchArb,
        fc.constantFrom("count", "drop"),
        fc.constantFrom(undefined, { tokens: 50 }, { rows: 9, dpSize: 3 }, { dpSize: 2 }),
        ({ mask, x }, emptyRows, global) => {
          for (const mode of AGGREGATIONS) {
            const normLen = mode === "token_sum_norm" ? 7 : null;
            const opts = { normLen, emptyRows, global: global ?? null };
            const res = policyLoss(
              {
                ratio: "token",
                surrogate: "reinforce",
                clip: null,
                aggregation: mode,
                normLen,
                emptyRows,
              },
              { logprobs: x, oldLogprobs: x, advantages: mask.map(() => -1), responseMask: mask },
              global === undefined ? {} : { global },
            );
            const w = effectiveTokenWeights(mask, mode, opts).data;
            const g = res.gradLogprobs.data;
            for (let i = 0; i < w.length; i++) if (!Object.is(w[i], g[i])) return false;
            if (!Object.is(aggregate(x, mask, mode, opts), res.loss)) return false;
          }
          return true;
        },
      ),
      FC,
    );
  });

  test("golden: seq_mean_token_mean over rows of lengths [2, 0, 1]: count divides by 3 rows, drop by 2, a context by its own", () => {
    const mask = [
      [true, true],
      [false, false],
      [true, false],
    ];
    const w = (o: Parameters<typeof effectiveTokenWeights>[2]) =>
      Array.from(effectiveTokenWeights(mask, "seq_mean_token_mean", o).data);
    // count: 1/(3·2) and 1/(3·1); drop: 1/(2·2) and 1/(2·1); {rows 6, dpSize 2}: 2/(6·2), 2/(6·1).
    expect(w({ emptyRows: "count" })).toEqual([1 / 6, 1 / 6, 0, 0, 1 / 3, 0]);
    expect(w({ emptyRows: "drop" })).toEqual([1 / 4, 1 / 4, 0, 0, 1 / 2, 0]);
    expect(w({ emptyRows: "drop", global: { rows: 6, dpSize: 2 } })).toEqual([
      2 / 12,
      2 / 12,
      0,
      0,
      2 / 6,
      0,
    ]);
    // aggregate of x = [[1, 3], [·, ·], [5, ·]] under drop: (1 + 3)/2/2 + 5/1/2 = 1 + 2.5.
    expect(
      aggregate(
        [
          [1, 3],
          [0, 0],
          [5, 0],
        ],
        mask,
        "seq_mean_token_mean",
        { emptyRows: "drop" },
      ),
    ).toBe(3.5);
    // The default still rejects the empty row, naming it.
    expect(() => effectiveTokenWeights(mask, "token_mean")).toThrow(MaskError);
    expect(() =>
      aggregate(
        [
          [1, 3],
          [0, 0],
          [5, 0],
        ],
        mask,
        "token_mean",
      ),
    ).toThrow(MaskError);
  });
});

describe("klLoss, reverseKlGradSurrogate and valueLoss with empty rows and a global context", () => {
  const sameBits = (a: ArrayLike<number>, b: ArrayLike<number>): boolean => {
    for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
    return a.length === b.length;
  };

  test("identity: klLoss is policyLoss's KL term and reverseKlGradSurrogate's gradient k2's, every mode, count and drop, with and without a context", () => {
    // pg with A = 0: the objective and its gradient are 0, so policyLoss's gradient is its KL
    // term's; klLoss must give that term and gradient bitwise under the same policy and context.
    fc.assert(
      fc.property(
        batchArb,
        fc.constantFrom("count", "drop"),
        fc.constantFrom(undefined, { tokens: 50 }, { rows: 9, dpSize: 3 }),
        fc.constantFrom(...KL_ESTIMATORS),
        ({ mask, x }, emptyRows, global, kind) => {
          const ref = x.map((r) => r.map((v) => (Number.isNaN(v) ? v : v + 0.3 * Math.sin(v))));
          for (const mode of AGGREGATIONS) {
            const normLen = mode === "token_sum_norm" ? 7 : null;
            const opts = { responseMask: mask, normLen, emptyRows, global: global ?? null };
            const res = policyLoss(
              {
                ratio: "token",
                surrogate: "pg",
                clip: null,
                aggregation: mode,
                normLen,
                emptyRows,
                kl: { kind, coef: 1 },
              },
              {
                logprobs: x,
                oldLogprobs: x,
                advantages: mask.map(() => 0),
                responseMask: mask,
                refLogprobs: ref,
              },
              global === undefined ? {} : { global },
            );
            const kl = klLoss(x, ref, kind, mode, opts);
            if (!Object.is(kl.loss, res.klLoss)) return false;
            if (!sameBits(kl.gradLogprobs.data, res.gradLogprobs.data)) return false;
            const rk = reverseKlGradSurrogate(x, ref, mode, opts);
            if (!sameBits(rk.gradLogprobs.data, klLoss(x, ref, "k2", mode, opts).gradLogprobs.data))
              return false;
          }
          return true;
        },
      ),
      FC,
    );
  });

  test("identity: valueLoss weighs each token's derivative by effectiveTokenWeights under the same policy and context", () => {
    // The per-token derivative is the token_sum loss's (weight 1); every mode is that times w.
    fc.assert(
      fc.property(
        batchArb,
        fc.constantFrom("count", "drop"),
        fc.constantFrom(undefined, { rows: 9, dpSize: 2 }),
        ({ mask, x }, emptyRows, global) => {
          const oldV = x.map((r) => r.map((v) => v * 0.9));
          const R = x.map((r) => r.map((v) => v + 0.5));
          const unit = valueLoss(x, oldV, R, mask, {
            clipEps: 0.2,
            aggregation: "token_sum",
            emptyRows,
          }).gradValues.data;
          for (const mode of AGGREGATIONS) {
            const normLen = mode === "token_sum_norm" ? 7 : null;
            const o = { normLen, emptyRows, global: global ?? null };
            const got = valueLoss(x, oldV, R, mask, { clipEps: 0.2, aggregation: mode, ...o });
            const w = effectiveTokenWeights(mask, mode, o).data;
            for (let i = 0; i < w.length; i++) {
              const want = (w[i] as number) * (unit[i] as number);
              if (Math.abs((got.gradValues.data[i] as number) - want) > 1e-15 * Math.abs(want))
                return false;
            }
          }
          return true;
        },
      ),
      FC,
    );
    // The default still rejects an empty row.
    expect(() =>
      valueLoss([[1], [2]], [[1], [2]], [[0], [0]], [[true], [false]], {
        clipEps: null,
        aggregation: "token_mean",
      }),
    ).toThrow(MaskError);
  });
});
