/**
 * Enforces docs/diagnostics/entropy.md#calibration: seeded Monte Carlo calibrations of the entropy
 * estimate (on-policy unbiased, off-policy the cross-entropy) and of the changepoint test (false-
 * positive rate at α, power against a mean shift). The measured numbers asserted at the end of each
 * test are the ones quoted in the docs page; a change of the RNG stream must update both.
 */
import { describe, expect, test } from "vitest";
import { createRng, type Rng } from "../../src/core/rng.js";
import { entropyTrend, tokenEntropyEstimate } from "../../src/diagnostics/entropy.js";

const P = [0.7, 0.2, 0.1];

/** H(p) = −Σ p log p and Var[−log p(Y)] = Σ p (log p)² − H² for Y ~ p. */
function entropyAndVariance(p: readonly number[]): { H: number; V: number } {
  const H = -p.reduce((s, q) => s + q * Math.log(q), 0);
  const M2 = p.reduce((s, q) => s + q * Math.log(q) ** 2, 0);
  return { H, V: M2 - H * H };
}

/** A 64×32 all-response batch of sampled-token logprobs: Y ~ mu, logprob log pi(Y). */
function sampledLogprobs(rng: Rng, mu: readonly number[], pi: readonly number[]): number[][] {
  return Array.from({ length: 64 }, () =>
    Array.from({ length: 32 }, () => Math.log(pi[rng.categorical(mu)] as number)),
  );
}

const FULL = Array.from({ length: 64 }, () => new Array(32).fill(true));
const N = 64 * 32;

describe("tokenEntropyEstimate", () => {
  test("calibration: on-policy mc estimate is within 4 clt sd of the exact entropy", () => {
    // p = (0.7, 0.2, 0.1): H = 0.801819, Var[−log p(Y)] = 0.494387; N = 2048 iid tokens, so the
    // MC mean has sd sqrt(0.494387/2048) = 0.015537 and the tolerance is 4 sd = 0.06215.
    // The exact path, fed H at every token, returns H with zero sampling error.
    const { H, V } = entropyAndVariance(P);
    expect(H).toBeCloseTo(0.801819, 6);
    const sd = Math.sqrt(V / N);
    const mc = tokenEntropyEstimate(sampledLogprobs(createRng(44), P, P), FULL);
    expect(Math.abs(mc.entropyEstimate - H)).toBeLessThanOrEqual(4 * sd);
    const exact = tokenEntropyEstimate(null, FULL, {
      entropies: FULL.map((row) => row.map(() => H)),
    });
    expect(exact.entropyEstimate).toBeCloseTo(H, 14);
    // Measured (quoted in the docs): z = (MC − H)/sd.
    expect(((mc.entropyEstimate - H) / sd).toFixed(2)).toBe("0.27");
  });

  test("calibration: off-policy the mc estimate targets the cross-entropy h(mu) + kl(mu||pi), not h(pi)", () => {
    // Tokens from μ = (0.7, 0.2, 0.1), logprobs of π = (0.2, 0.3, 0.5): E_μ[−log π(Y)] =
    // −Σ μ log π = H(μ) + KL(μ‖π) = 0.801819 + 0.634897 = 1.436716; Var_μ[−log π(Y)] = 0.087006,
    // sd = sqrt(0.087006/2048) = 0.006518. H(π) = 1.029653 is 62 sd away.
    const pi = [0.2, 0.3, 0.5];
    const ce = -P.reduce((s, m, k) => s + m * Math.log(pi[k] as number), 0);
    const m2 = P.reduce((s, m, k) => s + m * Math.log(pi[k] as number) ** 2, 0);
    const sd = Math.sqrt((m2 - ce * ce) / N);
    const kl = P.reduce((s, m, k) => s + m * Math.log(m / (pi[k] as number)), 0);
    expect(ce).toBeCloseTo(entropyAndVariance(P).H + kl, 14);
    const mc = tokenEntropyEstimate(sampledLogprobs(createRng(45), P, pi), FULL).entropyEstimate;
    expect(Math.abs(mc - ce)).toBeLessThanOrEqual(4 * sd);
    const Hpi = entropyAndVariance(pi).H;
    expect(Math.abs(mc - Hpi)).toBeGreaterThan(40 * sd);
    expect(((mc - ce) / sd).toFixed(2)).toBe("-0.85");
  });
});

/** Rejections and correct localisations (within ±2 steps) of entropyTrend on n windows of 48. */
function rejectionRate(seed: number, n: number, shift: number): { rej: number; loc: number } {
  const rng = createRng(seed);
  let rej = 0;
  let loc = 0;
  for (let k = 0; k < n; k++) {
    // iid N(0, 1), minus `shift` from step 24 on (an entropy drop of `shift` sd at mid-window).
    const x = Array.from({ length: 48 }, (_, t) => rng.normal() - (t >= 24 ? shift : 0));
    const r = entropyTrend(x, { window: 48, nPerm: 199, alpha: 0.05, rng });
    if (r.changepointIndex !== null) {
      rej++;
      if (Math.abs(r.changepointIndex - 23) <= 2) loc++;
    }
  }
  return { rej, loc };
}

describe("entropyTrend", () => {
  test("calibration: false-positive rate on 500 iid gaussian windows is alpha within 4 binomial sd", () => {
    // nPerm = 199, α = 0.05: m = ⌊0.05·200⌋ = 10, exact level 10/200 = 0.05 for exchangeable
    // windows. Tolerance 4·sqrt(0.05·0.95/500) = 0.0390. Measured: 32/500 = 0.064 (z = +1.4).
    const { rej } = rejectionRate(2026, 500, 0);
    expect(Math.abs(rej / 500 - 0.05)).toBeLessThanOrEqual(4 * Math.sqrt((0.05 * 0.95) / 500));
    expect(rej).toBe(32);
  });

  test("calibration: power against a mid-window mean shift of 0.5, 1 and 1.5 sd", () => {
    // 200 windows per shift size. The expected CUSUM peak is 24·24·δ/48 = 12δ against a null
    // 95 % point of about 1.36·sqrt(48) ≈ 9.4 (Kolmogorov bridge quantile), so power is modest at
    // δ = 0.5, high at δ = 1 and near 1 at δ = 1.5. Asserted: power grows with δ, exceeds α by more
    // than 4 binomial sd already at δ = 0.5, and reaches 0.95 at δ = 1.5. Measured rejections
    // (and of those, changepoints within ±2 steps of the true index 23): δ = 0.5: 68/200 (40);
    // δ = 1: 171/200 (122); δ = 1.5: 200/200 (173).
    const powers = [0.5, 1, 1.5].map((d) => rejectionRate(2031, 200, d));
    const rate = powers.map((p) => p.rej / 200);
    expect(rate[0]).toBeGreaterThan(0.05 + 4 * Math.sqrt((0.05 * 0.95) / 200));
    expect(rate[1]).toBeGreaterThan(rate[0] as number);
    expect(rate[2]).toBeGreaterThanOrEqual(0.95);
    expect(powers).toEqual([
      { rej: 68, loc: 40 },
      { rej: 171, loc: 122 },
      { rej: 200, loc: 173 },
    ]);
  });
});
