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
import { normalQuantile } from "../../src/diagnostics/ols.js";
import {
  cusumStatistic,
  MANN_KENDALL_EXACT_MAX,
  mannKendall,
  mannKendallNull,
  normalTwoSided,
  seriesTrend,
  theilSenFit,
  theilSenSlope,
  trendTest,
} from "../../src/diagnostics/trend.js";
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

describe("mannKendall", () => {
  test("golden: s, variance and exact p-value of a four-point series", () => {
    // n = 4: Var S = 4·3·13/18 = 26/3. Inversion counts of the 24 orders (Mahonian row 4):
    // 1, 3, 5, 6, 5, 3, 1 for I = 0…6, and S = 6 − 2I.
    // [1, 2, 3, 4]: S = 6, p = P(|S′| ≥ 6) = (1 + 1)/24; z = (6 − 1)/√(26/3).
    const up = mannKendall([1, 2, 3, 4]);
    expect(up).toMatchObject({ s: 6, method: "exact" });
    expect(up.varS).toBeCloseTo(26 / 3, 14);
    expect(up.z).toBeCloseTo(5 / Math.sqrt(26 / 3), 14);
    expect(up.pValue).toBeCloseTo(2 / 24, 15);
    // [1, 3, 2, 4]: one inversion, S = 4, p = (1 + 3 + 3 + 1)/24 = 1/3. Reversed: S = −4, same p.
    expect(mannKendall([1, 3, 2, 4]).pValue).toBeCloseTo(1 / 3, 15);
    expect(mannKendall([4, 2, 3, 1])).toMatchObject({ s: -4 });
    expect(mannKendall([4, 2, 3, 1]).pValue).toBeCloseTo(1 / 3, 15);
  });

  test("golden: ties shrink the variance and the exact null", () => {
    // [1, 1, 2, 2]: two tie groups of 2; Var S = (4·3·13 − 2·2·1·9)/18 = 120/18 = 20/3. The six
    // arrangements of {a, a, b, b} have 0, 1, 2, 2, 3, 4 inversions; P = 4 untied pairs, S = 4 − 2I;
    // observed I = 0, S = 4: p = P(I ∈ {0, 4}) = 2/6.
    const r = mannKendall([1, 1, 2, 2]);
    expect(r).toMatchObject({ s: 4, method: "exact" });
    expect(r.varS).toBeCloseTo(20 / 3, 14);
    expect(r.pValue).toBeCloseTo(1 / 3, 15);
    expect(Array.from(mannKendallNull([2, 2]), (p) => p * 6)).toEqual(
      [1, 1, 2, 1, 1].map((c) => expect.closeTo(c, 13)),
    );
    // All values tied: S = 0, Var S = 0, z = 0, p = 1.
    expect(mannKendall([3, 3, 3])).toEqual({ s: 0, varS: 0, z: 0, pValue: 1, method: "exact" });
  });

  test("identity: the exact null is the law of inversions of the arrangements, by enumeration", () => {
    // Every distinct arrangement of a multiset is equally likely under exchangeability; count
    // the inversions of each (brute force over all n! orders, duplicates collapsed).
    const cases: number[][] = [
      [1, 1, 1, 1, 1],
      [3, 2, 1],
      [2, 2, 2],
      [4, 1, 1],
      [1, 1, 3, 1],
    ];
    for (const groups of cases) {
      const values = groups.flatMap((t, g) => new Array<number>(t).fill(g));
      const seen = new Map<string, number>();
      const permute = (rest: number[], acc: number[]): void => {
        if (rest.length === 0) {
          let inv = 0;
          for (let i = 0; i < acc.length; i++)
            for (let j = i + 1; j < acc.length; j++)
              if ((acc[i] as number) > (acc[j] as number)) inv++;
          seen.set(acc.join(","), inv);
          return;
        }
        rest.forEach((v, i) => permute([...rest.slice(0, i), ...rest.slice(i + 1)], [...acc, v]));
      };
      permute(values, []);
      const counts = new Array<number>(Math.max(...seen.values()) + 1).fill(0);
      for (const inv of seen.values()) counts[inv]++;
      const dist = mannKendallNull(groups);
      expect(
        Array.from(dist, (p) => p * seen.size),
        String(groups),
      ).toEqual(counts.map((c) => expect.closeTo(c, 10)));
    }
    // Mahonian row 5 (the first case): 1, 4, 9, 15, 20, 22, 20, 15, 9, 4, 1 over 5! = 120.
    expect(Array.from(mannKendallNull([1, 1, 1, 1, 1]), (p) => Math.round(p * 120))).toEqual([
      1, 4, 9, 15, 20, 22, 20, 15, 9, 4, 1,
    ]);
  });

  test("property: the normal tail agrees with the independent quantile function", () => {
    // normalTwoSided(z) = erfc(z/√2) = 2Φ(−z); normalQuantile (AS 241) inverts Φ independently, so
    // normalQuantile(p/2) = −z. An error δ in p moves the quantile by δ/(p·z) relative to z ≥ 1
    // (Mills ratio), so a relative error of 1e-13 in p is 1e-13 in z.
    for (let k = 1; k <= 370; k++) {
      const z = k / 10;
      const p = normalTwoSided(z);
      expect(Math.abs(normalQuantile(p / 2) + z), `z = ${z}`).toBeLessThanOrEqual(
        2e-13 * Math.max(1, z),
      );
    }
    expect(normalTwoSided(0)).toBe(1);
    expect(normalTwoSided(-1.5)).toBe(normalTwoSided(1.5));
  });

  test("calibration: above the exact cap the normal p-value is within 1e-3 of the exact one", () => {
    // n untied values: the exact law of S = P − 2I from mannKendallNull, against erfc(|z|/√2)
    // with z = (|S| − 1)/√Var S, Var S = n(n − 1)(2n + 5)/18, over every attainable S ≥ 0; the
    // law is symmetric, so P(|S′| ≥ S) = 2·P(I ≤ (P − S)/2) for S > 0. At the switch
    // n = MANN_KENDALL_EXACT_MAX + 1 = 101 the worst difference is below 1e-3. Measured:
    // 4.7e-3 at n = 21, 1.9e-3 at n = 51, 9.8e-4 at n = 101 (about 0.1/n).
    const worstAt = (n: number): number => {
      const dist = mannKendallNull(new Array<number>(n).fill(1));
      const P = (n * (n - 1)) / 2;
      const sd = Math.sqrt((n * (n - 1) * (2 * n + 5)) / 18);
      let tail = 0;
      let worst = 0;
      for (let inv = 0; 2 * inv < P; inv++) {
        tail += dist[inv] as number;
        const S = P - 2 * inv;
        worst = Math.max(worst, Math.abs(normalTwoSided((S - 1) / sd) - Math.min(1, 2 * tail)));
      }
      return worst;
    };
    const n = MANN_KENDALL_EXACT_MAX + 1;
    expect(worstAt(n)).toBeLessThanOrEqual(1e-3);
    expect([21, 51, n].map((k) => worstAt(k).toPrecision(2))).toEqual([
      "0.0047",
      "0.0019",
      "0.00098",
    ]);
    const x = Array.from({ length: n }, (_, i) => Math.sin(i));
    expect(mannKendall(x).method).toBe("normal");
    expect(mannKendall(x.slice(1)).method).toBe("exact");
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

/** n! as a float (exact to rounding for n ≤ 170). */
const factorial = (n: number): number => {
  let f = 1;
  for (let k = 2; k <= n; k++) f *= k;
  return f;
};

/** The demo run's entropy schedule (docs/diagnostics/run.md#demo-run) plus N(0, sigma²) noise. */
function demoEntropy(steps: readonly number[], sigma: number, seed: number, drop = true): number[] {
  const rng = createRng(seed);
  return steps.map(
    (s) => (drop && s >= 140 ? 1.1 - 0.001 * (s - 140) : 2 - 0.0015 * s) + sigma * rng.normal(),
  );
}

/** max_k |Σ_{i≤k} u_i| and ‖u‖ of the least-squares residuals u of v on [1, s] (plain sums). */
function olsCusum(v: readonly number[], s: readonly number[]): { c: number; q: number } {
  const n = v.length;
  const sm = s.reduce((a, b) => a + b, 0) / n;
  const vm = v.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += ((s[i] as number) - sm) * ((v[i] as number) - vm);
    sxx += ((s[i] as number) - sm) ** 2;
  }
  const b = sxy / sxx;
  let acc = 0;
  let c = 0;
  let q = 0;
  for (let i = 0; i < n; i++) {
    const u = (v[i] as number) - vm - b * ((s[i] as number) - sm);
    acc += u;
    q += u * u;
    c = Math.max(c, Math.abs(acc));
  }
  return { c, q: Math.sqrt(q) };
}

describe("seriesTrend", () => {
  test("golden: a steady linear decline is a significant trend and not a changepoint", () => {
    // x = 5 − 0.1·t, t = 0…59. Issue 11: trendTest's centred CUSUM is S_k = −0.1·(k + 1)(k − 59)/2,
    // peaking at k = 29 with 0.1·30·30/2 = 45 far above its permutation threshold, so a steady
    // decline was reported as a changepoint at 29. After the least-squares line the residuals are
    // 0 to rounding, so cusumStat = threshold = 0 and nothing is reported.
    // Mann–Kendall: every pair ascends in time and descends in value, S = −C(60, 2) = −1770, and
    // only the two monotone orders reach |S′| = 1770: p = 2/60!.
    const t = Array.from({ length: 60 }, (_, i) => i);
    const x = t.map((i) => 5 - 0.1 * i);
    const old = trendTest(x, { window: 60, nPerm: 199, rng: createRng(1) });
    expect(old.changepointIndex).toBe(29);
    expect(old.cusumStat).toBeCloseTo(45, 12);
    for (const [steps, slope] of [
      [t, -0.1],
      [t.map((i) => 10 * i), -0.01],
    ] as const) {
      const r = seriesTrend(x, steps, { window: 60, nPerm: 199, rng: createRng(1) });
      expect(r.slope).toBeCloseTo(slope, 14);
      expect(r.intercept).toBeCloseTo(5, 14);
      expect(r.mannKendall).toMatchObject({ s: -1770, method: "exact" });
      expect(Math.abs((r.mannKendall.pValue * factorial(60)) / 2 - 1)).toBeLessThan(1e-11);
      expect(r).toMatchObject({
        window: 60,
        trendSignificant: true,
        changepointIndex: null,
        changepointStep: null,
        cusumStat: 0,
        threshold: 0,
        detrended: true,
      });
    }
  });

  test("golden: the demo's drop after step 139 is found in a run dumped every step and every 10 steps", () => {
    // Demo schedule: 2 − 0.0015·s, then 1.1 − 0.001·(s − 140) from step 140 (a drop of 0.69
    // nats), noise sd 0.02 (seed 5). Every step: 200 values, window 120 (diagnoseRun's default
    // 0.6·S): the last pre-change step is 139. Every 10 steps: 20 values, window 20: it is 130.
    // Power at this size is 1 (trend.calibration.test.ts), so the located step is no accident.
    const dense = Array.from({ length: 200 }, (_, i) => i);
    const sparse = dense.filter((s) => s % 10 === 0);
    const rDense = seriesTrend(demoEntropy(dense, 0.02, 5), dense, {
      window: 120,
      nPerm: 999,
      rng: createRng(1),
    });
    expect(rDense).toMatchObject({ changepointStep: 139, changepointIndex: 139 });
    const rSparse = seriesTrend(demoEntropy(sparse, 0.02, 5), sparse, {
      window: 20,
      nPerm: 999,
      rng: createRng(1),
    });
    expect(rSparse).toMatchObject({ changepointStep: 130, changepointIndex: 13 });
    // Without the drop the slope is −0.0015 per step at both strides (not −0.015 per dump):
    // sd of the slope ≈ σ/√Σ(s − s̄)² = 0.02/√(120³/12) = 5.3e-5 dense and
    // 0.02/√(100·(20³ − 20)/12) = 7.8e-5 sparse; tolerance 4 sd.
    const d = seriesTrend(demoEntropy(dense, 0.02, 6, false), dense, {
      window: 120,
      nPerm: 199,
      rng: createRng(1),
    });
    expect(Math.abs(d.slope + 0.0015)).toBeLessThan(4 * 5.3e-5);
    const sp = seriesTrend(demoEntropy(sparse, 0.02, 6, false), sparse, {
      window: 20,
      nPerm: 199,
      rng: createRng(1),
    });
    expect(Math.abs(sp.slope + 0.0015)).toBeLessThan(4 * 7.8e-5);
    expect([d.trendSignificant, sp.trendSignificant]).toEqual([true, true]);
  });

  test("property: the changepoint decision is invariant to an added line in the steps", () => {
    // Least-squares residuals of x + a + b·s equal those of x, so the observed and every permuted
    // statistic are unchanged up to rounding (|b|·span up to 100× the noise range), and the
    // Theil–Sen slope moves by exactly b in exact arithmetic.
    fc.assert(
      fc.property(
        fc.array(uniform(-1, 1), { minLength: 8, maxLength: 40 }),
        fc.integer({ min: 1, max: 20 }),
        uniform(-5, 5),
        uniform(-100, 100),
        fc.integer({ min: 0, max: 1000 }),
        (x, gap, a, rel, seed) => {
          const s = x.map((_, i) => i * (gap + 2) + (i % 3)); // increments ≥ gap ≥ 1
          const b = rel / (s[s.length - 1] as number);
          const y = x.map((v, i) => v + a + b * (s[i] as number));
          const opts = (k: number) => ({
            window: x.length,
            nPerm: 39,
            alpha: 0.1,
            rng: createRng(k),
          });
          const r0 = seriesTrend(x, s, opts(seed));
          const r1 = seriesTrend(y, s, opts(seed));
          expect(r1.changepointIndex).toBe(r0.changepointIndex);
          expect(Math.abs(r1.cusumStat - r0.cusumStat)).toBeLessThan(1e-9);
          expect(Math.abs(r1.threshold - r0.threshold)).toBeLessThan(1e-9);
          expect(Math.abs(r1.slope - (r0.slope + b))).toBeLessThan(1e-9 * Math.max(1, Math.abs(b)));
        },
      ),
      FC_PARAMS,
    );
  });

  test("identity: the threshold replays the studentized refitted permutations", () => {
    // Replays the documented draws (Fisher–Yates per permutation, j = rng.int(0, i) for
    // i = w − 1 … 1) with plain sums: T_p = c/q of the refitted residuals of r∘σ_p, T* = the
    // m-th largest, threshold = T*·‖r‖; and a changepoint iff cusumStat > threshold. Values
    // before the window are read by no statistic.
    const data = createRng(21);
    const s = Array.from({ length: 40 }, (_, i) => 3 * i + (i % 2));
    const x = s.map((v) => 0.01 * v + data.normal() + (v > 60 ? 1.5 : 0));
    const nPerm = 59;
    const alpha = 0.1; // m = 6
    const report = seriesTrend(x, s, { window: 30, nPerm, alpha, rng: createRng(22) });
    const xw = x.slice(10);
    const sw = s.slice(10);
    const sm = sw.reduce((p, q) => p + q, 0) / 30;
    const vm = xw.reduce((p, q) => p + q, 0) / 30;
    let sxy = 0;
    let sxx = 0;
    for (let i = 0; i < 30; i++) {
      sxy += ((sw[i] as number) - sm) * ((xw[i] as number) - vm);
      sxx += ((sw[i] as number) - sm) ** 2;
    }
    const r = xw.map((v, i) => v - vm - (sxy / sxx) * ((sw[i] as number) - sm));
    const obs = olsCusum(r, sw);
    const rng = createRng(22);
    const stats: number[] = [];
    for (let p = 0; p < nPerm; p++) {
      const order = r.map((_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = rng.int(0, i);
        [order[i], order[j]] = [order[j] as number, order[i] as number];
      }
      const e = olsCusum(
        order.map((i) => r[i] as number),
        sw,
      );
      stats.push(e.c / e.q);
    }
    stats.sort((p, q) => q - p);
    expect(report.cusumStat).toBeCloseTo(obs.c, 12);
    expect(report.threshold).toBeCloseTo((stats[5] as number) * obs.q, 12);
    expect(report.changepointIndex !== null).toBe(report.cusumStat > report.threshold);
    const junk = seriesTrend([...x.slice(0, 10).map((v) => -v * 7), ...xw], s, {
      window: 30,
      nPerm,
      alpha,
      rng: createRng(22),
    });
    expect(junk).toEqual(report);
  });

  test("rejects: steps of another length, non-finite or not increasing, and the trendTest options", () => {
    const rng = createRng(0);
    const x = [1, 2, 4, 3];
    const s = [0, 1, 2, 3];
    expect(caught(() => seriesTrend([1, Number.NaN], [0, 1], { window: 2, rng }))).toEqual({
      name: "NonFiniteError",
      arg: "values",
    });
    expect(caught(() => seriesTrend(x, [0, 1, 2], { window: 2, rng }))).toEqual({
      name: "ShapeError",
      arg: "steps",
    });
    expect(
      caught(() => seriesTrend(x, [0, 1, Number.POSITIVE_INFINITY, 3], { window: 2, rng })),
    ).toEqual({
      name: "NonFiniteError",
      arg: "steps",
    });
    expect(caught(() => seriesTrend(x, [0, 2, 1, 3], { window: 2, rng }))).toEqual({
      name: "ConfigError",
      arg: "steps",
    });
    expect(caught(() => seriesTrend(x, s, { window: 5, rng }))).toEqual({
      name: "ConfigError",
      arg: "window",
    });
    expect(caught(() => seriesTrend(x, s, { window: 4, nPerm: 9, alpha: 0.05, rng }))).toEqual({
      name: "ConfigError",
      arg: "alpha",
    });
    expect(caught(() => seriesTrend(x, s, { window: 4, rng: {} as never }))).toEqual({
      name: "ConfigError",
      arg: "rng",
    });
    try {
      seriesTrend(
        x,
        [0, 0, 1, 2],
        { window: 2, rng },
        { fn: "diagnoseRun", arg: "entropy series" },
      );
    } catch (e) {
      expect((e as { fn: string }).fn).toBe("diagnoseRun");
      expect((e as Error).message).toMatch(/^diagnoseRun: steps must be strictly increasing/);
    }
  });

  test("regression: extreme values and steps give a finite report or an overflow error naming the field", () => {
    // ±1.6e308 alternating: the residual norm ‖r‖ ≈ 3.2e308 makes the threshold T*·‖r‖ beyond
    // float64; at ±0.8e308 every field is finite. Steps 1e300 apart: slope 1e-300-ish, finite.
    // Steps 5e-324 apart: the exact slope ≈ 2/5e-324 exceeds float64.
    const opts = () => ({ window: 4, nPerm: 19, rng: createRng(3) });
    const big = [-1.6e308, 1.6e308, -1.6e308, 1.6e308];
    expect(caught(() => seriesTrend(big, [0, 1, 2, 3], opts()))).toEqual({
      name: "OverflowError",
      arg: "threshold",
    });
    const half = seriesTrend(
      big.map((v) => v / 2),
      [0, 1, 2, 3],
      opts(),
    );
    expect(Object.values(half).every((v) => typeof v !== "number" || Number.isFinite(v))).toBe(
      true,
    );
    const wide = seriesTrend([1, 3, 2, 5], [0, 1e300, 2e300, 3e300], opts());
    expect(wide.slope).toBeGreaterThan(0);
    expect(wide.slope).toBeLessThan(1e-299);
    expect(caught(() => seriesTrend([1, 3, 2, 5], [0, 5e-324, 1e-323, 1.5e-323], opts()))).toEqual({
      name: "OverflowError",
      arg: "slope",
    });
  });
});
