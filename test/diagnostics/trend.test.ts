/**
 * Enforces docs/diagnostics/entropy.md#trend for the generic pieces reused on any per-step series:
 * the Theil–Sen slope (interpolated median, per training step) and intercept, the Mann–Kendall
 * test (exact null, ties, the normal tail), the CUSUM statistic, the permutation test (threshold =
 * m-th largest permuted statistic, strict rejection, distribution-free level) and the detrended
 * changepoint test of seriesTrend. Calibrations of the latter two: trend.calibration.test.ts.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import {
  cusumStatistic,
  theilSenFit,
  theilSenSlope,
  trendTest,
} from "../../src/diagnostics/trend.js";
import { FC_PARAMS } from "../_kit/index.js";
import { caught, uniform } from "./_trendKit.js";

/** Binomial tolerance of a rejection rate: 4·sqrt(α(1 − α)/n). */
const binomTol = (alpha: number, n: number): number => 4 * Math.sqrt((alpha * (1 - alpha)) / n);

describe("theilSenSlope", () => {
  test("golden: interpolated median of the pairwise slopes", () => {
    // [0, 1, 3]: slopes 1 (0→1), 1.5 (0→3 over 2), 2 (1→3) → odd count, median 1.5.
    expect(theilSenSlope([0, 1, 3])).toBe(1.5);
    // [0, 1, 3, 2]: slopes 1, 3/2, 2/3, 2, 1/2, −1 → sorted −1, 1/2, 2/3, 1, 3/2, 2; even count,
    // median (2/3 + 1)/2 = 5/6.
    expect(theilSenSlope([0, 1, 3, 2])).toBeCloseTo(5 / 6, 15);
    expect(theilSenSlope([4, 4])).toBe(0);
  });

  test("property: equivariant under affine maps of the series", () => {
    // slope(a·x + b + c·t) = a·slope(x) + c for a > 0 (the map preserves the order of the slopes).
    fc.assert(
      fc.property(
        fc.array(uniform(-10, 10), { minLength: 2, maxLength: 30 }),
        uniform(0.1, 5),
        uniform(-5, 5),
        uniform(-1, 1),
        (x, a, b, c) => {
          const y = x.map((v, t) => a * v + b + c * t);
          const scale = Math.max(1, Math.abs(a * theilSenSlope(x)), Math.abs(c));
          expect(Math.abs(theilSenSlope(y) - (a * theilSenSlope(x) + c))).toBeLessThan(
            1e-11 * scale * 100,
          );
        },
      ),
      FC_PARAMS,
    );
  });

  test("golden: a run dumped every 10 steps gives the slope per training step", () => {
    // Issue 11: x = 2 − 0.001299·s at s = 0, 10, …, 190. Per file index the pairwise slopes are
    // all −0.01299 (10 steps per index); per step they are −0.001299, up to rounding.
    const s = Array.from({ length: 20 }, (_, i) => 10 * i);
    const x = s.map((v) => 2 - 0.001299 * v);
    expect(theilSenSlope(x)).toBeCloseTo(-0.01299, 14);
    expect(theilSenSlope(x, s)).toBeCloseTo(-0.001299, 15);
    // Irregular steps [0, 2, 3] for x = [0, 1, 3]: slopes 1/2, 3/3 = 1, 2/1 = 2 → median 1.
    expect(theilSenSlope([0, 1, 3], [0, 2, 3])).toBe(1);
  });

  test("identity: steps 0..n-1 give bitwise the slope per index", () => {
    // s_j − s_i = j − i exactly for small integers, so every pairwise slope has the same bits.
    fc.assert(
      fc.property(fc.array(uniform(-10, 10), { minLength: 2, maxLength: 30 }), (x) => {
        expect(
          Object.is(
            theilSenSlope(
              x,
              x.map((_, i) => i),
            ),
            theilSenSlope(x),
          ),
        ).toBe(true);
      }),
      FC_PARAMS,
    );
  });

  test("identity: the selected median is the sorted pairwise slopes' median, signed zeros and ties included", () => {
    // The definition, by the full sort: median of the n(n−1)/2 slopes in the ascending order the
    // typed-array sort gives (−0 before +0), the mean of the two middle ones for an even count.
    const sortedMedianSlope = (x: number[], s: number[]): number => {
      const slopes: number[] = [];
      for (let i = 0; i < x.length; i++)
        for (let j = i + 1; j < x.length; j++)
          slopes.push(
            ((x[j] as number) - (x[i] as number)) / ((s[j] as number) - (s[i] as number)),
          );
      const a = Float64Array.from(slopes).sort();
      const h = (a.length - 1) >> 1;
      return a.length % 2 === 1
        ? (a[h] as number)
        : 0.5 * ((a[h] as number) + (a[h + 1] as number));
    };
    const same = (a: number, b: number): boolean => Object.is(a, b);
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(-0, 0, 1, -1, 2, 0.5, 3), { minLength: 2, maxLength: 40 }),
        fc.boolean(),
        (x, unitSteps) => {
          const s = x.map((_, i) => (unitSteps ? i : 10 * i + (i % 3)));
          return same(theilSenSlope(x, s), sortedMedianSlope(x, s));
        },
      ),
      { ...FC_PARAMS, numRuns: 400 },
    );
  });

  test("rejects: fewer than two values or a non-finite value", () => {
    expect(caught(() => theilSenSlope([1]))).toEqual({ name: "ShapeError", arg: "x" });
    expect(caught(() => theilSenSlope([1, Number.NaN]))).toEqual({
      name: "NonFiniteError",
      arg: "x",
    });
    expect(caught(() => theilSenSlope([1, 2], [0]))).toEqual({ name: "ShapeError", arg: "steps" });
    expect(caught(() => theilSenSlope([1, 2], [0, Number.NaN]))).toEqual({
      name: "NonFiniteError",
      arg: "steps",
    });
    expect(caught(() => theilSenSlope([1, 2, 3], [0, 5, 5]))).toEqual({
      name: "ConfigError",
      arg: "steps",
    });
  });
});

describe("theilSenFit", () => {
  test("golden: the intercept is the median of x - b·s", () => {
    // x = [1, 3, 4, 8]: slopes 2, 3/2, 7/3, 1, 5/2, 4 → sorted 1, 3/2, 2, 7/3, 5/2, 4, median
    // (2 + 7/3)/2 = 13/6; x − (13/6)·i = 1, 5/6, −1/3, 3/2 → median (5/6 + 1)/2 = 11/12.
    const fit = theilSenFit([1, 3, 4, 8]);
    expect(fit.slope).toBeCloseTo(13 / 6, 15);
    expect(fit.intercept).toBeCloseTo(11 / 12, 15);
    // Steps 0, 10, 20, 30: every pairwise slope divides by 10, b·s is unchanged.
    const sparse = theilSenFit([1, 3, 4, 8], [0, 10, 20, 30]);
    expect(sparse.slope).toBeCloseTo(13 / 60, 15);
    expect(sparse.intercept).toBeCloseTo(11 / 12, 15);
  });
});

describe("cusumStatistic", () => {
  test("golden: a level shift peaks at the last pre-change step with p(n - p)|delta|/n", () => {
    // [3, 3, 3, 1 ×6]: x̄ = 15/9 = 5/3, deviations 4/3 then −2/3; S_k = 4/3, 8/3, 4, 10/3, …, 0.
    // Peak S_2 = 3·6·2/9 = 4 at k = p − 1 = 2.
    const r = cusumStatistic([3, 3, 3, 1, 1, 1, 1, 1, 1]);
    expect(r.argmax).toBe(2);
    expect(r.stat).toBeCloseTo(4, 14);
    expect(cusumStatistic([7, 7, 7])).toEqual({ stat: 0, argmax: 0 });
  });

  test("property: invariant to a shift and to reversal of the series", () => {
    // S_k is shift-invariant; reversing the series maps S_k to −S_{n−2−k} (and S_{n−1} = 0).
    fc.assert(
      fc.property(
        fc.array(uniform(-10, 10), { minLength: 2, maxLength: 40 }),
        uniform(-100, 100),
        (x, c) => {
          const r = cusumStatistic(x);
          expect(cusumStatistic(x.map((v) => v + c)).stat).toBeCloseTo(r.stat, 9);
          expect(cusumStatistic([...x].reverse()).stat).toBeCloseTo(r.stat, 9);
        },
      ),
      FC_PARAMS,
    );
  });
});

describe("trendTest", () => {
  test("identity: the threshold is the m-th largest cusum statistic of the replayed permutations", () => {
    // Replays the documented draw order: for each permutation, Fisher–Yates from the last index
    // down, j = rng.int(0, i). Order-invariant centring makes each permuted statistic bitwise
    // equal to cusumStatistic of the permuted series.
    const data = createRng(12);
    const x = Array.from({ length: 30 }, () => data.normal());
    const nPerm = 59;
    const alpha = 0.1; // m = ⌊0.1·60⌋ = 6
    const report = trendTest(x, { window: 30, nPerm, alpha, rng: createRng(13) });
    const rng = createRng(13);
    const stats: number[] = [];
    for (let p = 0; p < nPerm; p++) {
      const order = x.map((_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = rng.int(0, i);
        [order[i], order[j]] = [order[j], order[i]];
      }
      stats.push(cusumStatistic(order.map((i) => x[i])).stat);
    }
    stats.sort((a, b) => b - a);
    expect(report.threshold).toBe(stats[5]);
    expect(report.cusumStat).toBe(cusumStatistic(x).stat);
  });

  test("identity: a changepoint is reported iff the statistic strictly exceeds the threshold", () => {
    fc.assert(
      fc.property(
        fc.array(uniform(-3, 3), { minLength: 4, maxLength: 40 }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(19, 39, 99),
        fc.constantFrom(0.05, 0.1, 0.25),
        fc.integer({ min: 0, max: 1000 }),
        (x, shift, nPerm, alpha, seed) => {
          // Half the series shifted by 0…3 to get both verdicts.
          const y = x.map((v, t) => v + (t < x.length / 2 ? shift : 0));
          const window = Math.max(2, y.length - 2);
          const r = trendTest(y, { window, nPerm, alpha, rng: createRng(seed) });
          expect(r.changepointIndex !== null).toBe(r.cusumStat > r.threshold);
          if (r.changepointIndex !== null) {
            const local = r.changepointIndex - (y.length - window);
            expect(cusumStatistic(y.slice(y.length - window)).argmax).toBe(local);
          }
        },
      ),
      FC_PARAMS,
    );
  });

  test("calibration: level is alpha on heavy-tailed iid windows (distribution-free)", () => {
    // 400 windows of 24 iid Cauchy draws (ratio of two normals: no mean, no variance), nPerm = 99,
    // α = 0.1: m = ⌊0.1·100⌋ = 10, exact level 10/100 = 0.1 for any exchangeable window.
    // Tolerance 4·sqrt(0.1·0.9/400) = 0.06. Measured: 27/400 = 0.0675
    // (z = −2.2; 6000 further windows give 0.095, z = −1.3).
    const rng = createRng(2027);
    let rejections = 0;
    for (let k = 0; k < 400; k++) {
      const x = Array.from({ length: 24 }, () => rng.normal() / rng.normal());
      const r = trendTest(x, { window: 24, nPerm: 99, alpha: 0.1, rng });
      if (r.changepointIndex !== null) rejections++;
    }
    expect(Math.abs(rejections / 400 - 0.1)).toBeLessThanOrEqual(binomTol(0.1, 400));
    expect(rejections).toBe(27);
  });

  test("calibration: level is at most alpha on discrete windows with ties", () => {
    // 0/1 data: the statistics tie often, and a tie never rejects (strict >), so the level is
    // ≤ m/(nPerm + 1) = 0.1. Tolerance one-sided 4·sqrt(0.1·0.9/400) = 0.06. Measured: 35/400
    // = 0.0875 (6000 further windows: 0.0805).
    const rng = createRng(2028);
    let rejections = 0;
    for (let k = 0; k < 400; k++) {
      const x = Array.from({ length: 24 }, () => (rng.uniform() < 0.3 ? 1 : 0));
      const r = trendTest(x, { window: 24, nPerm: 99, alpha: 0.1, rng });
      if (r.changepointIndex !== null) rejections++;
    }
    expect(rejections / 400).toBeLessThanOrEqual(0.1 + binomTol(0.1, 400));
    expect(rejections).toBe(35);
  });

  test("rejects: errors name the caller's function and argument", () => {
    const rng = createRng(0);
    expect(caught(() => trendTest([1, 2], { window: 3, rng }))).toEqual({
      name: "ConfigError",
      arg: "window",
    });
    expect(caught(() => trendTest([1, Number.NaN], { window: 2, rng }))).toEqual({
      name: "NonFiniteError",
      arg: "series",
    });
    let fn = "";
    try {
      trendTest([1, Number.NaN], { window: 2, rng }, { fn: "essTrend", arg: "essPerStep" });
    } catch (e) {
      fn = (e as { fn: string }).fn;
      expect((e as Error).message).toMatch(/^essTrend: essPerStep must be finite/);
    }
    expect(fn).toBe("essTrend");
  });
});
