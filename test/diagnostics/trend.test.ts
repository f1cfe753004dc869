/**
 * Enforces docs/diagnostics/entropy.md#trend for the generic pieces reused on any per-step series:
 * the Theil–Sen slope (interpolated median), the CUSUM statistic, and the permutation test
 * (threshold = m-th largest permuted statistic, strict rejection, distribution-free level).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { cusumStatistic, theilSenSlope, trendTest } from "../../src/diagnostics/trend.js";
import { FC_PARAMS } from "../_kit/index.js";

function caught(f: () => unknown): { name: string; arg: string | undefined } {
  try {
    f();
  } catch (e) {
    const err = e as { name: string; arg: string | undefined };
    return { name: err.name, arg: err.arg };
  }
  throw new Error("expected an error");
}

/** Uniform reals on [min, max] (fc.double concentrates near 0; see clipping.test.ts). */
const uniform = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: 0, max: 2 ** 30 }).map((k) => min + ((max - min) * k) / 2 ** 30);

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

  test("rejects: fewer than two values or a non-finite value", () => {
    expect(caught(() => theilSenSlope([1]))).toEqual({ name: "ShapeError", arg: "x" });
    expect(caught(() => theilSenSlope([1, Number.NaN]))).toEqual({
      name: "NonFiniteError",
      arg: "x",
    });
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
