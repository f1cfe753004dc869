/**
 * Enforces docs/diagnostics/mismatch.md: golden, identities, properties, mask invariance and
 * validation of logprobMismatch (spec §7.2). Monte-Carlo calibration lives in
 * mismatch.calibration.test.ts.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { logprobMismatch, MISMATCH_QUANTILE_LEVELS } from "../../src/diagnostics/mismatch.js";
import { ConfigError, klEstimate, MaskError, NonFiniteError, ShapeError } from "../../src/index.js";
import { expectClose, expectMaskInvariant, FC_PARAMS, logprobBatches } from "../_kit/index.js";

const NaN_ = Number.NaN;
// Golden: trainer [[−1.0, −2.0], [−1.5, pad]], rollout [[−1.2, −1.4], [−2.5, pad]].
const TRAINER = [
  [-1.0, -2.0],
  [-1.5, NaN_],
];
const ROLLOUT = [
  [-1.2, -1.4],
  [-2.5, Number.NEGATIVE_INFINITY],
];
const MASK = [
  [true, true],
  [true, false],
];

function expectThrows(
  f: () => unknown,
  cls: abstract new (...args: never) => Error,
  code: string,
  arg: string,
): void {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(cls);
    expect((e as { code: string }).code).toBe(code);
    expect((e as { arg: string }).arg).toBe(arg);
    return;
  }
  throw new Error(`expected ${cls.name} (${code}, ${arg}); nothing was thrown`);
}

/** The gaps trainer − rollout at response positions, row-major, with their (b, t). */
function oracleGaps(
  trainer: readonly (readonly number[])[],
  rollout: readonly (readonly number[])[],
  mask: readonly (readonly boolean[])[],
): { d: number; b: number; t: number }[] {
  const out: { d: number; b: number; t: number }[] = [];
  mask.forEach((row, b) => {
    row.forEach((on, t) => {
      if (on) out.push({ d: trainer[b][t] - rollout[b][t], b, t });
    });
  });
  return out;
}

describe("logprobMismatch", () => {
  test("golden: gaps [0.2, -0.6, 1.0] with catastrophic gap 0.7", () => {
    // Δ = trainer − rollout = [−1.0 + 1.2, −2.0 + 1.4, −1.5 + 2.5] = [0.2, −0.6, 1.0].
    // mean 0.6/3 = 0.2; deviations [0, −0.8, 0.8] → std √(1.28/2) = 0.8; |max| 1.0.
    // Sorted [−0.6, 0.2, 1.0], h = 2q: q01 −0.6 + 0.02·0.8 = −0.584; q05 −0.6 + 0.1·0.8 = −0.52;
    // q25 −0.2; q50 0.2; q75 0.6; q95 0.2 + 0.9·0.8 = 0.92; q99 0.2 + 0.98·0.8 = 0.984.
    // k1 = mean(−Δ) = −0.2; k2 = (0.04 + 0.36 + 1)/2/3 = 0.7/3; k3 = mean(e^Δ − 1 − Δ) =
    // (0.0214028 + 0.1488116 + 0.7182818)/3 = 0.2961654; swapped mean(e^−Δ − 1 + Δ) =
    // (0.0187308 + 0.2221188 + 0.3678794)/3 = 0.2029097. Row sums [−0.4, 1.0]: mean 0.3,
    // std √((0.7² + 0.7²)/1) = √0.98 = 0.9899495, |max| 1.0. |Δ| > 0.7 only at (1, 0).
    // ppl_ratio = e^−0.2 = 0.8187308.
    const r = logprobMismatch(TRAINER, ROLLOUT, MASK, { catastrophicGap: 0.7 });
    const tol = { atol: 1e-14 };
    expect(r.nTokens).toBe(3);
    expectClose(r.gapMean, 0.2, tol);
    expectClose(r.gapStd, 0.8, tol);
    expectClose(r.gapAbsMax, 1.0, tol);
    expectClose(r.gapQuantiles, [-0.584, -0.52, -0.2, 0.2, 0.6, 0.92, 0.984], tol);
    expectClose(r.klK1, -0.2, tol);
    expectClose(r.klK2, 0.7 / 3, tol);
    expectClose(r.klK3, 0.2961654, { atol: 5e-8 });
    expectClose(r.klK3, (Math.exp(0.2) - 1.2 + Math.exp(-0.6) - 0.4 + Math.exp(1) - 2) / 3, tol);
    expectClose(r.klK3TrainerRollout, 0.2029097, { atol: 5e-8 });
    expectClose(
      r.klK3TrainerRollout,
      (Math.exp(-0.2) - 0.8 + Math.exp(0.6) - 1.6 + Math.exp(-1)) / 3,
      tol,
    );
    expectClose(r.seqLogRatioMean, 0.3, tol);
    expectClose(r.seqLogRatioStd, Math.sqrt(0.98), tol);
    expectClose(r.seqLogRatioStd, 0.9899495, { atol: 5e-8 });
    expectClose(r.seqLogRatioAbsMax, 1.0, tol);
    expect(r.catastrophicCount).toBe(1);
    expect(r.catastrophicIndices).toEqual([[1, 0]]);
    expectClose(r.pplRatio, Math.exp(-0.2), tol);
    expectClose(r.pplRatio, 0.8187308, { atol: 5e-8 });
    expect(MISMATCH_QUANTILE_LEVELS).toEqual([0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99]);
  });

  test("identity: identical streams give zero gaps, ppl ratio 1 and no catastrophes", () => {
    fc.assert(
      fc.property(logprobBatches({ maxB: 5, maxT: 8 }), (batch) => {
        const r = logprobMismatch(batch.logprobs, batch.logprobs, batch.responseMask);
        for (const v of [
          r.gapMean,
          r.gapStd,
          r.gapAbsMax,
          ...r.gapQuantiles,
          r.klK1,
          r.klK2,
          r.klK3,
          r.klK3TrainerRollout,
          r.seqLogRatioMean,
          r.seqLogRatioStd,
          r.seqLogRatioAbsMax,
        ]) {
          expect(v === 0).toBe(true);
        }
        expect(r.pplRatio).toBe(1);
        expect(r.catastrophicCount).toBe(0);
        expect(r.catastrophicIndices).toEqual([]);
      }),
      FC_PARAMS,
    );
  });

  test("identity: k1 is minus the gap mean, ppl ratio is exp(-gap mean), kl fields are klEstimate means", () => {
    fc.assert(
      fc.property(logprobBatches({ maxB: 5, maxT: 8 }), (batch) => {
        const { oldLogprobs: trainer, rolloutLogprobs: rollout, responseMask } = batch;
        const r = logprobMismatch(trainer, rollout, responseMask);
        // Negating every term of a compensated sum negates the sum exactly: bitwise (up to the
        // sign of zero, hence ===).
        expect(r.klK1 === -r.gapMean).toBe(true);
        expect(r.pplRatio).toBe(Math.exp(-r.gapMean));
        const mean = (kind: "k1" | "k2" | "k3", lp: number[][], ref: number[][]) => {
          const k = klEstimate(lp, ref, kind, { responseMask });
          let s = 0;
          for (let i = 0; i < k.data.length; i++) s += k.data[i] as number;
          return s / r.nTokens;
        };
        expectClose(r.klK1, mean("k1", rollout, trainer), { atol: 1e-12 });
        expectClose(r.klK2, mean("k2", rollout, trainer), { atol: 1e-12 });
        expectClose(r.klK3, mean("k3", rollout, trainer), { atol: 1e-12 });
        expectClose(r.klK3TrainerRollout, mean("k3", trainer, rollout), { atol: 1e-12 });
      }),
      FC_PARAMS,
    );
  });

  test("property: k2, k3 and the swapped k3 are non-negative", () => {
    fc.assert(
      fc.property(logprobBatches({ maxB: 5, maxT: 8, maxGap: 6 }), (batch) => {
        const r = logprobMismatch(batch.oldLogprobs, batch.rolloutLogprobs, batch.responseMask);
        expect(r.klK2).toBeGreaterThanOrEqual(0);
        expect(r.klK3).toBeGreaterThanOrEqual(0);
        expect(r.klK3TrainerRollout).toBeGreaterThanOrEqual(0);
      }),
      FC_PARAMS,
    );
  });

  test("property: catastrophic indices are the row-major response positions with |gap| above the threshold", () => {
    fc.assert(
      fc.property(
        logprobBatches({ maxB: 5, maxT: 8, maxGap: 3 }),
        fc.double({ min: 0.05, max: 4, noNaN: true }),
        (batch, gap) => {
          const { oldLogprobs: trainer, rolloutLogprobs: rollout, responseMask } = batch;
          const r = logprobMismatch(trainer, rollout, responseMask, { catastrophicGap: gap });
          const expected = oracleGaps(trainer, rollout, responseMask)
            .filter(({ d }) => Math.abs(d) > gap)
            .map(({ b, t }) => [b, t]);
          expect(r.catastrophicIndices).toEqual(expected);
          expect(r.catastrophicCount).toBe(expected.length);
        },
      ),
      FC_PARAMS,
    );
  });

  test("golden: the catastrophic threshold is strict", () => {
    // Δ = [5, −5, 5.000000000000001]: only the last exceeds 5; at gap 4.5 all three do.
    const next = 5 + 2 ** -50 * 4;
    const r = logprobMismatch([[5, -5, next]], [[0, 0, 0]], [[true, true, true]]);
    expect(r.catastrophicIndices).toEqual([[0, 2]]);
    expect(
      logprobMismatch([[5, -5, next]], [[0, 0, 0]], [[true, true, true]], { catastrophicGap: 4.5 })
        .catastrophicCount,
    ).toBe(3);
    // Infinity disables flagging (any finite |Δ| is below it).
    expect(
      logprobMismatch([[50]], [[0]], [[true]], { catastrophicGap: Number.POSITIVE_INFINITY })
        .catastrophicCount,
    ).toBe(0);
  });

  test("property: quantiles are non-decreasing and bounded by the gap extremes", () => {
    fc.assert(
      fc.property(logprobBatches({ maxB: 5, maxT: 8 }), (batch) => {
        const { oldLogprobs: trainer, rolloutLogprobs: rollout, responseMask } = batch;
        const r = logprobMismatch(trainer, rollout, responseMask);
        const d = oracleGaps(trainer, rollout, responseMask).map((g) => g.d);
        const q = r.gapQuantiles;
        expect(q.length).toBe(7);
        expect(q[0]).toBeGreaterThanOrEqual(Math.min(...d));
        expect(q[6]).toBeLessThanOrEqual(Math.max(...d));
        for (let k = 1; k < q.length; k++) expect(q[k]).toBeGreaterThanOrEqual(q[k - 1] as number);
        expect(r.gapAbsMax).toBe(Math.max(...d.map(Math.abs)));
      }),
      FC_PARAMS,
    );
  });

  test("property: sequence statistics are the moments of the masked row sums", () => {
    fc.assert(
      fc.property(logprobBatches({ maxB: 6, maxT: 6 }), (batch) => {
        const { oldLogprobs: trainer, rolloutLogprobs: rollout, responseMask } = batch;
        const r = logprobMismatch(trainer, rollout, responseMask);
        const sums = responseMask.map((row, b) =>
          row.reduce((s, on, t) => (on ? s + (trainer[b][t] - rollout[b][t]) : s), 0),
        );
        const B = sums.length;
        const mean = sums.reduce((s, x) => s + x, 0) / B;
        const std = B > 1 ? Math.sqrt(sums.reduce((s, x) => s + (x - mean) ** 2, 0) / (B - 1)) : 0;
        expectClose(r.seqLogRatioMean, mean, { atol: 1e-12 });
        expectClose(r.seqLogRatioStd, std, { atol: 1e-12 });
        expectClose(r.seqLogRatioAbsMax, Math.max(...sums.map(Math.abs)), { atol: 1e-12 });
      }),
      FC_PARAMS,
    );
  });

  test("golden: a single token gives standard deviations of 0, not nan", () => {
    // One row, one response token: Δ = −0.5; Bessel std undefined (n − 1 = 0) → reported as 0.
    const r = logprobMismatch([[-1.5, NaN_]], [[-1, 123]], [[true, false]]);
    expect(r.nTokens).toBe(1);
    expect(r.gapMean).toBe(-0.5);
    expect(r.gapStd).toBe(0);
    expect(r.seqLogRatioStd).toBe(0);
    expect(r.gapQuantiles).toEqual([-0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5]);
    expect(r.seqLogRatioMean).toBe(-0.5);
  });

  test("mask invariance: nan and infinite junk at padding never reaches the report", () => {
    fc.assert(
      fc.property(logprobBatches({ maxB: 5, maxT: 6, maxGap: 4 }), (batch) => {
        expectMaskInvariant(
          (x) =>
            logprobMismatch(x.trainerLogprobs, x.rolloutLogprobs, x.responseMask, {
              catastrophicGap: 2,
            }),
          {
            trainerLogprobs: batch.oldLogprobs,
            rolloutLogprobs: batch.rolloutLogprobs,
            responseMask: batch.responseMask,
          },
        );
      }),
      FC_PARAMS,
    );
  });

  test("rejects: bad shapes, masks, non-finite response positions and a non-positive gap", () => {
    expectThrows(
      () => logprobMismatch([-1, -2] as never, ROLLOUT, MASK),
      ShapeError,
      "E_SHAPE",
      "trainerLogprobs",
    );
    expectThrows(
      () => logprobMismatch(TRAINER, [[-1, -2]], MASK),
      ShapeError,
      "E_SHAPE",
      "rolloutLogprobs",
    );
    expectThrows(
      () =>
        logprobMismatch(TRAINER, ROLLOUT, [
          [true, 1 as never],
          [false, false],
        ]),
      MaskError,
      "E_MASK",
      "responseMask",
    );
    expectThrows(
      () =>
        logprobMismatch(
          [
            [-1, Number.POSITIVE_INFINITY],
            [-1, 0],
          ],
          ROLLOUT,
          MASK,
        ),
      NonFiniteError,
      "E_NONFINITE",
      "trainerLogprobs",
    );
    expectThrows(
      () =>
        logprobMismatch(
          TRAINER,
          [
            [NaN_, -1],
            [-1, 0],
          ],
          MASK,
        ),
      NonFiniteError,
      "E_NONFINITE",
      "rolloutLogprobs",
    );
    for (const g of [0, -1, NaN_, Number.NEGATIVE_INFINITY]) {
      expectThrows(
        () => logprobMismatch(TRAINER, ROLLOUT, MASK, { catastrophicGap: g }),
        ConfigError,
        "E_CONFIG",
        "catastrophicGap",
      );
    }
    expect(() => logprobMismatch(TRAINER, ROLLOUT, MASK, { catastrophicGap: 0 })).toThrow(
      "logprobMismatch: catastrophicGap must be > 0; got 0",
    );
  });
});
