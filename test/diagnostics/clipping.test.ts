/**
 * Enforces docs/diagnostics/clipping.md: the PPO clip census (spec §7.3) — goldens, the killed set
 * as the zero set of the exact PG_CLIP gradient (closed form and autodiff reference), the null,
 * mask invariance, validation, and the text rendering.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { Aggregation } from "../../src/aggregate/aggregation.js";
import { clipCensusOfLogprobs, clipReport } from "../../src/diagnostics/clipping.js";
import {
  type ClipConfig,
  ConfigError,
  MaskError,
  NonFiniteError,
  type PolicyLossConfig,
  policyLoss,
  ShapeError,
} from "../../src/index.js";
import { renderClipText } from "../../src/report/clipText.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  branchSafe,
  expectMaskInvariant,
  FC_PARAMS,
  JUNK,
  paddedMasks,
} from "../_kit/index.js";

const J = 123; // junk at padding

/** The six-token batch of spec §7.3: (A, r) per response token, N = 6. */
const SIX = {
  ratio: [
    [1.5, 0.5, 0.5, 1.5],
    [3.5, 1.0, J, J],
  ],
  advantages: [
    [1, 1, -1, -1],
    [-1, 0, J, J],
  ],
  responseMask: [
    [true, true, true, true],
    [true, true, false, false],
  ],
};
const BAND: ClipConfig = { epsLow: 0.2, epsHigh: 0.3 };

function caught(f: () => unknown): { name: string; code: string; arg: string | undefined } {
  try {
    f();
  } catch (e) {
    const err = e as ConfigError;
    return { name: err.name, code: err.code, arg: err.arg };
  }
  throw new Error("expected an error");
}

/** A ragged batch for the cross-module test: token logprobs, old, advantages (some exactly 0). */
interface ClipBatch {
  readonly logprobs: number[][];
  readonly oldLogprobs: number[][];
  readonly advantages: number[][];
  readonly responseMask: boolean[][];
  readonly clip: ClipConfig;
  readonly aggregation: Aggregation;
}

/**
 * Uniform reals on [min, max] (a 2^30-point grid). fc.double draws uniformly over the *bit
 * patterns*, so most of its draws in [−2, 2] are tiny (|x| > 0.2 for under 10 % of them): ratios
 * would sit at 1 and the clip regions would go unexercised.
 */
const dbl = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: 0, max: 2 ** 30 }).map((k) => min + ((max - min) * k) / 2 ** 30);

function clipBatches(withCap: boolean): fc.Arbitrary<ClipBatch> {
  return fc.tuple(paddedMasks(), fc.constantFrom(...JUNK)).chain(([mask, junk]) => {
    const n = mask.length * mask[0].length;
    const cells = (a: fc.Arbitrary<number>) => fc.array(a, { minLength: n, maxLength: n });
    return fc
      .record({
        lp: cells(dbl(-8, -0.0625)),
        gap: cells(dbl(-2, 2)),
        // One advantage in five is exactly 0; |A| < 1e-6 is snapped to 0 (its gradient underflows
        // nowhere, but a zero test must not hinge on w·A·r rounding).
        adv: cells(
          fc.oneof({ arbitrary: fc.constant(0), weight: 1 }, { arbitrary: dbl(-3, 3), weight: 4 }),
        ),
        epsLow: dbl(0.05, 0.5),
        epsHigh: dbl(0.05, 0.5),
        cap: withCap ? dbl(1.6, 4) : fc.constant(null),
        aggregation: fc.constantFrom(...AGGREGATIONS),
      })
      .map(({ lp, gap, adv, epsLow, epsHigh, cap, aggregation }) => {
        const T = mask[0].length;
        const at = (xs: number[], f: (v: number) => number = (v) => v) =>
          mask.map((row, b) => row.map((on, t) => (on ? f(xs[b * T + t]) : junk)));
        return {
          logprobs: at(lp),
          oldLogprobs: mask.map((row, b) =>
            row.map((on, t) => (on ? lp[b * T + t] - gap[b * T + t] : junk)),
          ),
          advantages: at(adv, (a) => (Math.abs(a) < 1e-6 ? 0 : a)),
          responseMask: mask,
          clip: { epsLow, epsHigh, ratioCap: cap },
          aggregation,
        };
      });
  });
}

function pgClipConfig(batch: ClipBatch): PolicyLossConfig {
  return {
    ratio: "token",
    surrogate: "pg_clip",
    clip: batch.clip,
    aggregation: batch.aggregation,
    normLen: batch.aggregation === "token_sum_norm" ? batch.responseMask[0].length + 1 : null,
  };
}

describe("clipReport", () => {
  test("golden: six-token census with and without the dual-clip cap", () => {
    // Band (0.8, 1.3), N = 6. (+1, 1.5) pos-high killed; (+1, 0.5) pos-low flows; (−1, 0.5) neg-low
    // killed; (−1, 1.5) neg-high flows; (−1, 3.5) neg-high, killed only with c = 3 (3.5 > 3);
    // (0, 1.0) killed (A = 0). Fractions 1/6, 1/6, 2/6, 1/6; killed 4/6 with cap, 3/6 without.
    const withCap = clipReport(SIX.ratio, SIX.advantages, SIX.responseMask, {
      ...BAND,
      ratioCap: 3,
    });
    expect(withCap.fracPosAdvClippedHigh).toBe(1 / 6);
    expect(withCap.fracPosAdvClippedLow).toBe(1 / 6);
    expect(withCap.fracNegAdvClippedHigh).toBe(2 / 6);
    expect(withCap.fracNegAdvClippedLow).toBe(1 / 6);
    expect(withCap.gradientKilledFrac).toBe(4 / 6);
    // The killed tokens split: 3/6 by the clip (pos-high, neg-low, past the cap), 1/6 with A = 0.
    expect(withCap.clipKilledFrac).toBe(3 / 6);
    expect(withCap.zeroAdvantageFrac).toBe(1 / 6);
    expect(Array.from(withCap.gradientKilledMask.data)).toEqual([1, 0, 1, 0, 1, 1, 0, 0]);
    expect([withCap.epsLow, withCap.epsHigh, withCap.ratioCap]).toEqual([0.2, 0.3, 3]);
    const noCap = clipReport(SIX.ratio, SIX.advantages, SIX.responseMask, BAND);
    expect(noCap.gradientKilledFrac).toBe(3 / 6);
    expect([noCap.clipKilledFrac, noCap.zeroAdvantageFrac]).toEqual([2 / 6, 1 / 6]);
    expect(Array.from(noCap.gradientKilledMask.data)).toEqual([1, 0, 1, 0, 0, 1, 0, 0]);
    expect(noCap.ratioCap).toBeNull();
    // Quadrant fractions ignore the cap.
    expect(noCap.fracNegAdvClippedHigh).toBe(2 / 6);
  });

  test("golden: pathology demo, a negative-advantage token clipped high keeps a gradient of r|A| until the cap binds", () => {
    // Band (0.8, 1.2), token_mean over N = 2 (w = 1/2). Token 0: A = −1, r = e^{ln 2} = 2 > 1.2:
    // obj = min(−2, −1.2) = −2 (unclipped branch), ∂L/∂lp = −w·A·r = 0.5·2 = 1.0. With c = 1.5:
    // obj = max(−2, −1.5) = −1.5, gradient 0, and the census marks the token killed.
    const inputs = {
      logprobs: [[Math.LN2 - 1, -1]],
      oldLogprobs: [[-1, -1]],
      advantages: [[-1, 1]],
      responseMask: [[true, true]],
    };
    const cfg = (ratioCap: number | null): PolicyLossConfig => ({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap },
      aggregation: "token_mean",
    });
    const free = policyLoss(cfg(null), inputs);
    expect(free.gradLogprobs.data[0]).toBeCloseTo(1.0, 14);
    const freeCensus = clipReport(free.ratio, inputs.advantages, inputs.responseMask, {
      epsLow: 0.2,
      epsHigh: 0.2,
    });
    expect(freeCensus.fracNegAdvClippedHigh).toBe(0.5);
    expect(freeCensus.gradientKilledMask.data[0]).toBe(0);
    const capped = policyLoss(cfg(1.5), inputs);
    expect(capped.gradLogprobs.data[0]).toBe(0);
    const cappedCensus = clipReport(capped.ratio, inputs.advantages, inputs.responseMask, {
      epsLow: 0.2,
      epsHigh: 0.2,
      ratioCap: 1.5,
    });
    expect(cappedCensus.gradientKilledMask.data[0]).toBe(1);
  });

  for (const withCap of [false, true]) {
    test(`identity: killed mask is the zero set of the exact pg_clip gradient (closed form and autodiff), ${withCap ? "with" : "without"} dual clip`, () => {
      // Every way to kill (and to keep) a gradient must actually occur among the drawn tokens.
      const seen = { posHigh: 0, negLow: 0, zero: 0, capped: 0, flows: 0 };
      fc.assert(
        fc.property(clipBatches(withCap), (batch) => {
          const config = pgClipConfig(batch);
          // Ties (r within 1e-6 of lo, hi or c) are excluded: there the derivative is one-sided.
          fc.pre(branchSafe(config, { ...batch, refLogprobs: batch.logprobs }));
          const closed = policyLoss(config, batch);
          const ref = policyLossRef(config, batch);
          const census = clipReport(closed.ratio, batch.advantages, batch.responseMask, batch.clip);
          const m = batch.responseMask.flat();
          m.forEach((on, i) => {
            const killed = census.gradientKilledMask.data[i] === 1;
            expect(killed, `closed form at ${i}`).toBe(on && closed.gradLogprobs.data[i] === 0);
            expect(killed, `autodiff at ${i}`).toBe(on && ref.grad.data[i] === 0);
            if (!on) return;
            const a = batch.advantages.flat()[i];
            const r = closed.ratio.data[i];
            const cap = batch.clip.ratioCap ?? Number.POSITIVE_INFINITY;
            if (a > 0 && r > 1 + (batch.clip.epsHigh as number)) seen.posHigh++;
            else if (a < 0 && r < 1 - (batch.clip.epsLow as number)) seen.negLow++;
            else if (a === 0) seen.zero++;
            else if (a < 0 && r > cap) seen.capped++;
            else seen.flows++;
          });
        }),
        FC_PARAMS,
      );
      expect(seen.posHigh * seen.negLow * seen.zero * seen.flows).toBeGreaterThan(0);
      expect(seen.capped > 0).toBe(withCap);
    });
  }

  test("calibration: identical policies (r = 1) give zero quadrants and kill exactly the A = 0 tokens", () => {
    fc.assert(
      fc.property(clipBatches(true), (batch) => {
        const ones = batch.responseMask.map((row) => row.map((on) => (on ? 1 : J)));
        const r = clipReport(ones, batch.advantages, batch.responseMask, batch.clip);
        expect([
          r.fracPosAdvClippedHigh,
          r.fracPosAdvClippedLow,
          r.fracNegAdvClippedHigh,
          r.fracNegAdvClippedLow,
        ]).toEqual([0, 0, 0, 0]);
        const m = batch.responseMask.flat();
        const A = batch.advantages.flat();
        m.forEach((on, i) => {
          expect(r.gradientKilledMask.data[i]).toBe(on && A[i] === 0 ? 1 : 0);
        });
      }),
      FC_PARAMS,
    );
  });

  test("golden: all-zero advantages kill every response token", () => {
    const r = clipReport(SIX.ratio, [0, 0], SIX.responseMask, { ...BAND, ratioCap: 3 });
    expect(r.gradientKilledFrac).toBe(1);
    expect(Array.from(r.gradientKilledMask.data)).toEqual([1, 1, 1, 1, 1, 1, 0, 0]);
    expect(r.fracPosAdvClippedHigh + r.fracNegAdvClippedLow).toBe(0);
  });

  test("identity: [B] advantages give bitwise the same report as their [B, T] broadcast", () => {
    fc.assert(
      fc.property(clipBatches(true), fc.array(dbl(-3, 3), { minLength: 4 }), (batch, seqA) => {
        const B = batch.responseMask.length;
        const perSeq = seqA.slice(0, B);
        const expanded = batch.responseMask.map((row, b) => row.map(() => perSeq[b]));
        const ratio = batch.logprobs.map((row, b) =>
          row.map((lp, t) => Math.exp(lp - batch.oldLogprobs[b][t])),
        );
        const a = clipReport(ratio, perSeq, batch.responseMask, batch.clip);
        const e = clipReport(ratio, expanded, batch.responseMask, batch.clip);
        expect(a).toEqual(e);
      }),
      FC_PARAMS,
    );
  });

  test("mask invariance: junk at padding (0, 123, nan, ±inf) never changes the report", () => {
    fc.assert(
      fc.property(clipBatches(true), (batch) => {
        const ratio = batch.logprobs.map((row, b) =>
          row.map((lp, t) =>
            batch.responseMask[b][t] ? Math.exp(lp - batch.oldLogprobs[b][t]) : lp,
          ),
        );
        expectMaskInvariant((x) => clipReport(x.ratio, x.advantages, x.responseMask, batch.clip), {
          ratio,
          advantages: batch.advantages,
          responseMask: batch.responseMask,
        });
      }),
      FC_PARAMS,
    );
  });

  test("property: fractions are counts over n and the killed set contains both killing quadrants", () => {
    fc.assert(
      fc.property(clipBatches(true), (batch) => {
        const ratio = batch.logprobs.map((row, b) =>
          row.map((lp, t) => Math.exp(lp - batch.oldLogprobs[b][t])),
        );
        const r = clipReport(ratio, batch.advantages, batch.responseMask, batch.clip);
        const N = batch.responseMask.flat().filter(Boolean).length;
        for (const f of [
          r.fracPosAdvClippedHigh,
          r.fracPosAdvClippedLow,
          r.fracNegAdvClippedHigh,
          r.fracNegAdvClippedLow,
          r.gradientKilledFrac,
        ]) {
          expect(Number.isInteger(Math.round(f * N))).toBe(true);
          expect(Math.abs(f * N - Math.round(f * N))).toBeLessThan(1e-9);
          expect(f >= 0 && f <= 1).toBe(true);
        }
        expect(r.gradientKilledFrac).toBeGreaterThanOrEqual(
          r.fracPosAdvClippedHigh + r.fracNegAdvClippedLow - 1e-12,
        );
      }),
      FC_PARAMS,
    );
  });

  test("rejects: clip config rules in polgrad's order (eps set, eps positive finite, cap finite > 1)", () => {
    const run = (clip: unknown) => () =>
      clipReport(SIX.ratio, SIX.advantages, SIX.responseMask, clip as ClipConfig);
    const cases: [unknown, string][] = [
      [null, "clip"],
      [{ epsLow: null, epsHigh: 0.2 }, "clip"],
      [{ epsLow: 0.2 }, "clip"],
      [{ epsLow: 0, epsHigh: 0.2 }, "clip.epsLow"],
      [{ epsLow: Number.NaN, epsHigh: 0.2 }, "clip.epsLow"],
      [{ epsLow: 0.2, epsHigh: Number.POSITIVE_INFINITY }, "clip.epsHigh"],
      [{ epsLow: 0.2, epsHigh: -0.1 }, "clip.epsHigh"],
      [{ epsLow: 0.2, epsHigh: 0.2, ratioCap: 1 }, "clip.ratioCap"],
      [{ epsLow: 0.2, epsHigh: 0.2, ratioCap: Number.POSITIVE_INFINITY }, "clip.ratioCap"],
      // The config is checked before the tensors: a bad eps wins over a bad ratio.
      [{ epsLow: -1, epsHigh: 0.2 }, "clip.epsLow"],
    ];
    for (const [clip, arg] of cases) {
      expect(caught(run(clip))).toEqual({ name: "ConfigError", code: "E_CONFIG", arg });
    }
    expect(caught(() => clipReport([[0]], [1], [[true]], { epsLow: -1, epsHigh: 0.2 })).arg).toBe(
      "clip.epsLow",
    );
  });

  test("rejects: ratio shape, mask, non-finite or non-positive ratio, then advantages", () => {
    const ok = { epsLow: 0.2, epsHigh: 0.2 };
    const cases: [() => unknown, typeof ShapeError | typeof MaskError, string][] = [
      [
        () => clipReport([1, 2] as unknown as number[][], [1], [[true, true]], ok),
        ShapeError,
        "ratio",
      ],
      [() => clipReport([[1, 1]], [1], [[true, true, true]], ok), ShapeError, "responseMask"],
      [() => clipReport([[1, 1]], [1], [[false, false]], ok), MaskError, "responseMask"],
      [() => clipReport([[1, Number.NaN]], [1], [[true, true]], ok), NonFiniteError, "ratio"],
      [() => clipReport([[1, 0]], [1], [[true, true]], ok), ConfigError, "ratio"],
      [() => clipReport([[1, -2]], [1], [[true, true]], ok), ConfigError, "ratio"],
      [() => clipReport([[1, 1]], [1, 2], [[true, true]], ok), ShapeError, "advantages"],
      [() => clipReport([[1, 1]], [[1, 2, 3]], [[true, true]], ok), ShapeError, "advantages"],
      [
        () => clipReport([[1, 1]], [[1, Number.NaN]], [[true, true]], ok),
        NonFiniteError,
        "advantages",
      ],
      [
        () => clipReport([[1, 1]], [Number.POSITIVE_INFINITY], [[true, true]], ok),
        NonFiniteError,
        "advantages",
      ],
    ];
    for (const [f, cls, arg] of cases) {
      expect(f).toThrow(cls);
      expect(caught(f).arg).toBe(arg);
    }
    // A non-positive or non-finite ratio at padding is fine.
    expect(() => clipReport([[1, -1]], [1], [[true, false]], ok)).not.toThrow();
    expect(() =>
      clipReport([[1, Number.NaN]], [[1, Number.NaN]], [[true, false]], ok),
    ).not.toThrow();
  });
});

describe("renderClipText", () => {
  test("golden: four lines of the six-token census", () => {
    const r = clipReport(SIX.ratio, SIX.advantages, SIX.responseMask, { ...BAND, ratioCap: 3 });
    // 1 − 0.2 and 1 + 0.3 print as 0.8 and 1.3 (Python's .4g drops trailing zeros, as polgrad's
    // summary()); fractions 1/6, 1/6 | 1/6, 2/6 | 4/6 = 3/6 + 1/6 print 0.1667, 0.3333, 0.6667.
    expect(renderClipText(r).split("\n")).toEqual([
      "PG_CLIP band [1 - eps_low, 1 + eps_high] = [0.8, 1.3]; fractions are of all response tokens",
      "A > 0: clipped high 0.1667 (gradient killed), clipped low 0.1667 (gradient flows)",
      "A < 0: clipped low 0.1667 (gradient killed), clipped high 0.3333 (gradient flows unless dual-clip caps it)",
      "gradient killed on 0.6667 of response tokens: 0.5 by the clip (band or dual-clip cap), 0.1667 with zero advantage (no gradient whatever the ratio)",
    ]);
  });
});

describe("clipCensusOfLogprobs", () => {
  test("identity: the one-pass census equals clipReport on the clamped ratio array, and declines anything but the plain case", () => {
    const cell = fc.oneof(
      { weight: 9, arbitrary: fc.double({ min: -3, max: -0.01, noNaN: true }) },
      { weight: 1, arbitrary: fc.constantFrom(800, -800, 0) },
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        fc.constantFrom({ epsLow: 0.2, epsHigh: 0.28 }, { epsLow: 0.1, epsHigh: 0.1, ratioCap: 2 }),
        fc.array(cell, { minLength: 48, maxLength: 48 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 24, maxLength: 24 }),
        (B, T, tokenAdv, clip, cells, bits) => {
          const n = B * T;
          const lp = Float64Array.from(cells.slice(0, n));
          const old = Float64Array.from(cells.slice(24, 24 + n));
          const mask = Uint8Array.from(bits.slice(0, n), (v) => (v > 0 ? 1 : 0));
          for (let b = 0; b < B; b++) mask[b * T] = 1;
          const adv = tokenAdv
            ? {
                rows: B,
                cols: T,
                data: Float64Array.from({ length: n }, (_, i) => ((i % 5) - 2) / 2),
              }
            : Float64Array.from({ length: B }, (_, b) => (b % 3) - 1);
          const ratio = Float64Array.from({ length: n }, (_, i) => {
            const r = Math.exp((lp[i] as number) - (old[i] as number));
            return mask[i] !== 1
              ? 1
              : r > Number.MAX_VALUE
                ? Number.MAX_VALUE
                : r === 0
                  ? Number.MIN_VALUE
                  : r;
          });
          const m = { rows: B, cols: T, data: mask };
          const { gradientKilledMask: _k, ...want } = clipReport(
            { rows: B, cols: T, data: ratio },
            adv,
            m,
            clip,
          );
          const got = clipCensusOfLogprobs(
            { rows: B, cols: T, data: lp },
            { rows: B, cols: T, data: old },
            adv,
            m,
            clip,
          );
          expect(got).toEqual(want);
          // Not the plain case: a NaN, a mask value 2, an empty row, misshaped advantages.
          const nan = Float64Array.from(lp);
          nan[0] = Number.NaN;
          expect(
            clipCensusOfLogprobs(
              { rows: B, cols: T, data: nan },
              { rows: B, cols: T, data: old },
              adv,
              m,
              clip,
            ),
          ).toBeNull();
          const two = Uint8Array.from(mask);
          two[0] = 2;
          expect(
            clipCensusOfLogprobs(
              { rows: B, cols: T, data: lp },
              { rows: B, cols: T, data: old },
              adv,
              { rows: B, cols: T, data: two },
              clip,
            ),
          ).toBeNull();
          const empty = Uint8Array.from(mask);
          empty.fill(0, 0, T);
          expect(
            clipCensusOfLogprobs(
              { rows: B, cols: T, data: lp },
              { rows: B, cols: T, data: old },
              adv,
              { rows: B, cols: T, data: empty },
              clip,
            ),
          ).toBeNull();
          expect(
            clipCensusOfLogprobs(
              { rows: B, cols: T, data: lp },
              { rows: B, cols: T, data: old },
              new Float64Array(B + 1),
              m,
              clip,
            ),
          ).toBeNull();
        },
      ),
      FC_PARAMS,
    );
  });
});
