/**
 * Enforces docs/derivations/losses.md: hand-derived goldens of policyLoss (spec §3.3), one token
 * unless stated, eps 0.2/0.2, token_mean weight 1.
 */
import { describe, expect, test } from "vitest";
import { maskToRows, type PolicyLossConfig, policyLoss, toRows } from "../../src/index.js";

const clip = (ratioCap: number | null = null): PolicyLossConfig => ({
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap },
  aggregation: "token_mean",
});

function one(cfg: PolicyLossConfig, lp: number, old: number, a: number) {
  return policyLoss(cfg, {
    logprobs: [[lp]],
    oldLogprobs: [[old]],
    advantages: [a],
    responseMask: [[true]],
  });
}

describe("policyLoss", () => {
  test("golden: pg_clip inside the band", () => {
    // r = e^(−0.4 + 0.5) = e^0.1 ∈ [0.8, 1.2]; loss = −r·A = −2e^0.1; ∂/∂lp = −A·r = −2e^0.1.
    const r = one(clip(), -0.4, -0.5, 2);
    expect(r.loss).toBeCloseTo(-2 * Math.exp(0.1), 14);
    expect(r.gradLogprobs.data[0]).toBeCloseTo(-2 * Math.exp(0.1), 14);
    expect([r.clippedLow.data[0], r.clippedHigh.data[0]]).toEqual([0, 0]);
  });

  test("golden: pg_clip clipped high with positive advantage has zero gradient", () => {
    // r = e^0.8 = 2.2255 > 1.2, A = 1.5 > 0: obj = (1 + 0.2)·1.5, which binary64 rounds to
    // 1.7999999999999998 (the clamped branch, exactly as evaluated); gradient exactly 0.
    const r = one(clip(), -0.1, -0.9, 1.5);
    expect(r.loss).toBe(-((1 + 0.2) * 1.5));
    expect(r.loss).toBeCloseTo(-1.8, 15);
    expect(r.gradLogprobs.data[0]).toBe(0);
    expect(r.clippedHigh.data[0]).toBe(1);
  });

  test("golden: pg_clip clipped low with negative advantage has zero gradient", () => {
    // r = e^−0.8 = 0.4493 < 0.8, A = −1: obj = min(−r, −0.8) = −0.8; loss exactly 0.8; gradient 0.
    const r = one(clip(), -1.2, -0.4, -1);
    expect(r.loss).toBe(0.8);
    expect(r.gradLogprobs.data[0]).toBe(0);
    expect(r.clippedLow.data[0]).toBe(1);
  });

  test("golden: dual clip binding above the cap", () => {
    // r = e^1.5 = 4.4817 > c = 3, A = −2: obj = max(min(−2r, −2.4), −6) = −6; loss exactly 6, gradient 0.
    const r = one(clip(3), -0.1, -1.6, -2);
    expect(r.loss).toBe(6);
    expect(r.gradLogprobs.data[0]).toBe(0);
    expect(r.clippedHigh.data[0]).toBe(1);
  });

  test("golden: dual clip inactive below the cap", () => {
    // r = e^0.5 = 1.6487 ∈ (1.2, 3], A = −1: obj = −r (flows); loss e^0.5, ∂/∂lp = −A·r = +e^0.5.
    const r = one(clip(3), -0.3, -0.8, -1);
    expect(r.loss).toBeCloseTo(Math.exp(0.5), 14);
    expect(r.gradLogprobs.data[0]).toBeCloseTo(Math.exp(0.5), 14);
    expect([r.clippedLow.data[0], r.clippedHigh.data[0]]).toEqual([0, 0]);
  });

  test("golden: 2x2 ragged batch", () => {
    // r = [e^0.3, e^−0.3, e^0.1]; (0,0) A=1 clipped high → obj 1.2; (0,1) A=−1, r=0.7408 < 0.8 →
    // obj −0.8; (1,0) A=2 inside → obj 2e^0.1. loss = (−1.2 + 0.8 − 2e^0.1)/3 = −0.87011;
    // gradient [[0, 0], [−2e^0.1/3, 0]]; ratio 1 at the masked position.
    const r = policyLoss(clip(), {
      logprobs: [
        [-0.2, -1.0],
        [-0.5, 123],
      ],
      oldLogprobs: [
        [-0.5, -0.7],
        [-0.6, 123],
      ],
      advantages: [
        [1, -1],
        [2, 123],
      ],
      responseMask: [
        [true, true],
        [true, false],
      ],
    });
    expect(r.loss).toBeCloseTo((-1.2 + 0.8 - 2 * Math.exp(0.1)) / 3, 14);
    const g = toRows(r.gradLogprobs);
    expect(g[0]).toEqual([0, 0]);
    expect(g[1]?.[0]).toBeCloseTo((-2 * Math.exp(0.1)) / 3, 14);
    expect(g[1]?.[1]).toBe(0);
    expect(toRows(r.perTokenObjective)[0]).toEqual([-1.2, 0.8]);
    expect(toRows(r.ratio)[1]?.[1]).toBe(1);
    expect(maskToRows(r.clippedHigh)).toEqual([
      [true, false],
      [false, false],
    ]);
    expect(maskToRows(r.clippedLow)).toEqual([
      [false, true],
      [false, false],
    ]);
  });
});
