/**
 * Enforces docs/diagnostics/length-bias.md#calibration: Monte-Carlo coverage of the HC3 interval,
 * its false-positive rate under the null, and its power against an injected length-dependent |A|.
 * Every run is seeded (seeds derived from the test's name); tolerances are binomial/CLT bands
 * derived in the comments. Runtime ≈ 2 s.
 */
import { describe, expect, test } from "vitest";
import { createRng, type Rng, seedFromName } from "../../src/core/rng.js";
import { lengthBiasProbe } from "../../src/diagnostics/lengthBias.js";
import type { Aggregation } from "../../src/index.js";

const B = 200;
const T = 12;

/** A right-padded [B, T] mask with lengths L ~ U{1..12}, and the lengths. */
function drawLengths(rng: Rng): { lengths: number[]; mask: boolean[][] } {
  const lengths = Array.from({ length: B }, () => rng.int(1, T));
  return { lengths, mask: lengths.map((l) => Array.from({ length: T }, (_, t) => t < l)) };
}

/** Run the probe `runs` times on [B] advantages drawn by `advantage(L, rng)`. */
function simulate(
  name: string,
  runs: number,
  aggMode: Aggregation,
  advantage: (L: number, rng: Rng) => number,
): { ciLow: number; ciHigh: number; slope: number }[] {
  const rng = createRng(seedFromName(name));
  const out: { ciLow: number; ciHigh: number; slope: number }[] = [];
  for (let r = 0; r < runs; r++) {
    const { lengths, mask } = drawLengths(rng);
    const a = lengths.map((L) => advantage(L, rng));
    const { ciLow, ciHigh, slope } = lengthBiasProbe(a, mask, { aggMode });
    out.push({ ciLow, ciHigh, slope });
  }
  return out;
}

const excludesZero = (r: { ciLow: number; ciHigh: number }) => r.ciLow > 0 || r.ciHigh < 0;

describe("lengthBiasProbe", () => {
  test("calibration: the hc3 95% interval covers the true slope 0.5 in 92–98% of 400 heteroskedastic runs", () => {
    // y* = 2 + 0.5·L + N(0, (0.04·L)²); a = B·y*/L under seq_mean_token_sum (w = 1/B) makes
    // y_i = L_i·a_i/B = y*_i, so the true slope is 0.5 with noise sd ∝ L (heteroskedastic).
    // Coverage band: binomial sd at p = 0.95, n = 400 is √(0.95·0.05/400) = 0.0109; [0.92, 0.98] is
    // ±2.75 sd (two-sided false-alarm rate ≈ 0.6 %).
    // Mean slope: per-run sd = √(E[d²σ²]/(B·Var(L)²)) = 0.00653 (d = L − 6.5, σ = 0.04L, Var L =
    // 143/12); over 400 runs 3.3e-4, so 2e-3 is ≈ 6 sd.
    const runs = simulate("lengthBias:coverage", 400, "seq_mean_token_sum", (L, rng) => {
      const y = 2 + 0.5 * L + rng.normal() * 0.04 * L;
      return (B * y) / L;
    });
    const coverage = runs.filter((r) => r.ciLow <= 0.5 && 0.5 <= r.ciHigh).length / runs.length;
    const meanSlope = runs.reduce((s, r) => s + r.slope, 0) / runs.length;
    expect(coverage).toBeGreaterThanOrEqual(0.92);
    expect(coverage).toBeLessThanOrEqual(0.98);
    expect(Math.abs(meanSlope - 0.5)).toBeLessThanOrEqual(2e-3);
  });

  test("calibration: under seq_mean_token_mean with |A| independent of length the interval excludes zero in 3.5–6.5% of 2000 runs", () => {
    // a ~ N(0, 1) iid, independent of L; seq_mean_token_mean gives every row W_i = 1/B, so
    // y_i = |a_i|/B has no length trend: the null. Nominal rejection rate 5 %; binomial sd at
    // p = 0.05, n = 2000 is 0.00487, and [0.035, 0.065] is ±3.1 sd. (2000 runs, not 400: the first
    // 400 of this stream reject 8.5 %, a 3.2 sd excursion; 10 000 runs of another seed give 4.97 %.)
    const runs = simulate("lengthBias:null", 2000, "seq_mean_token_mean", (_L, rng) =>
      rng.normal(),
    );
    const rate = runs.filter(excludesZero).length / runs.length;
    expect(rate).toBeGreaterThanOrEqual(0.035);
    expect(rate).toBeLessThanOrEqual(0.065);
  });

  test("calibration: power against |A| growing by a factor 1 + δ over lengths 1..12 matches normal theory", () => {
    // Injected pathology: a = s·(1 + δ(L − 1)/11), s ~ N(0, 1), under seq_mean_token_mean (the
    // aggregation is length-neutral; the advantages are not). The slope of E|a| on L is
    // β = √(2/π)·δ/11 (per unit of 1/B); its sampling sd is se = √(E[d²·(1 − 2/π)k(L)²]/(B·Var(L)²))
    // with k(L) = 1 + δ(L − 1)/11. Normal-theory power Φ(β/se − z) + Φ(−β/se − z):
    //   δ = 0.25: β = 0.01813, se = 0.01395 ⇒ 0.255;  δ = 0.5: 0.03627, 0.01565 ⇒ 0.640;
    //   δ = 1:    0.07253, 0.01923 ⇒ 0.965.
    // Band: 400 runs each, binomial sd ≤ √(0.25/400) = 0.025; require |measured − predicted| ≤ 0.1
    // (4 sd), and the measured power must increase with δ.
    const predicted: [number, number][] = [
      [0.25, 0.255],
      [0.5, 0.64],
      [1, 0.965],
    ];
    const measured = predicted.map(([delta]) => {
      const runs = simulate(`lengthBias:power:${delta}`, 400, "seq_mean_token_mean", (L, rng) => {
        return rng.normal() * (1 + (delta * (L - 1)) / 11);
      });
      return runs.filter(excludesZero).length / runs.length;
    });
    predicted.forEach(([delta, p], k) => {
      expect(
        Math.abs(measured[k] - p),
        `δ = ${delta}: measured ${measured[k]}`,
      ).toBeLessThanOrEqual(0.1);
    });
    expect(measured[0]).toBeLessThan(measured[1]);
    expect(measured[1]).toBeLessThan(measured[2]);
  });
});
