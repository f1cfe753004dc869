/**
 * Enforces docs/diagnostics/entropy.md#detrended-changepoint: seriesTrend reports the Theil–Sen
 * trend per training step with its Mann–Kendall test, and a changepoint only beyond the trend.
 * Calibration: trend.calibration.test.ts.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { seriesTrend } from "../../src/diagnostics/seriesTrend.js";
import { trendTest } from "../../src/diagnostics/trend.js";
import { FC_PARAMS } from "../_kit/index.js";
import { caught, olsResid, uniform } from "./_trendKit.js";

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
  let acc = 0;
  let c = 0;
  let q = 0;
  for (const u of olsResid(v, s)) {
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
    expect(old.threshold).toBeCloseTo(18, 12);
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
