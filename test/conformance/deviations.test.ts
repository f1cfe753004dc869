/**
 * Enforces docs/conformance/deviations.md: every registered deviation is measured and the
 * measurement shows the deviation (each test below is the one its entry names).
 */
import { describe, expect, test } from "vitest";
import { DEVIATIONS } from "../../src/index.js";

const m = (id: string) => {
  const d = DEVIATIONS.find((x) => x.id === id);
  if (d === undefined) throw new Error(`no deviation ${id}`);
  return d.measure().values;
};

describe("DEVIATIONS", () => {
  test("identity: at least eight entries, unique ids, each demonstrated by a test that exists", () => {
    expect(DEVIATIONS.length).toBeGreaterThanOrEqual(8);
    expect(new Set(DEVIATIONS.map((d) => d.id)).size).toBe(DEVIATIONS.length);
    // Existence of each demonstratedBy test is checked by test/meta/claims.test.ts (it collects
    // demonstratedBy strings with the other claim links).
    for (const d of DEVIATIONS) expect(d.demonstratedBy).toMatch(/^test\/.+\.test\.ts > .+ > .+/);
  });

  test("deviation: verl-sum-norm-padded-width", () => {
    // T = 8, ℓ = 16: polgrad's divisor B·ℓ is twice verl's B·T, so every loss ratio is exactly 1/2.
    const v = m("verl-sum-norm-padded-width");
    expect(v.lossRatioMin).toBeCloseTo(0.5, 14);
    expect(v.lossRatioMax).toBeCloseTo(0.5, 14);
    expect(v.gradCosineMin).toBeCloseTo(1, 12);
  });

  test("deviation: trl-luspo-token-padding", () => {
    // Only padding moved, yet the loss moves; masked losses would give exactly 0 and 0.
    const v = m("trl-luspo-token-padding");
    expect(Math.abs(v.lossChangeFromPadding as number)).toBeGreaterThan(1e-3);
    expect(v.paddingGradMass).toBeGreaterThan(1e-3);
  });

  test("deviation: verl-dual-clip-always-on", () => {
    const v = m("verl-dual-clip-always-on");
    expect(v.gradRelDiffVsPpo).toBeGreaterThan(0.05);
    expect(v.gradRelDiffVsCap3).toBeLessThanOrEqual(1e-12);
  });

  test("deviation: verl-gspo-token-form", () => {
    const v = m("verl-gspo-token-form");
    expect(v.lossRelDiffVsSequence).toBeLessThanOrEqual(1e-12);
    expect(v.gradRelDiffVsSequence).toBeGreaterThan(1e-3);
    expect(v.gradRelDiffVsSequenceToken).toBeLessThanOrEqual(1e-12);
  });

  test("deviation: verl-gspo-ignores-aggregation", () => {
    const v = m("verl-gspo-ignores-aggregation");
    expect(v.lossRelDiffVsTokenMean).toBeGreaterThan(1e-2);
    expect(v.lossRelDiffVsSeqMean).toBeLessThanOrEqual(1e-12);
  });

  test("deviation: verl-engine-microbatch-sum-norm", () => {
    // Rows of length 2 packed alone: verl divides by B_c·2, Dr.GRPO by B_c·8 — a factor 4.
    const v = m("verl-engine-microbatch-sum-norm");
    expect(v.firstMicrobatchFactor).toBeCloseTo(4, 12);
    expect(Math.abs(v.accumulatedRatio! - 1)).toBeGreaterThan(0.1);
  });

  test("deviation: verl-k3-clamp", () => {
    // δ = ref − lp = −13: k3 = e^−13 + 13 − 1 ≈ 12 > 10 is clamped, so verl's gradient there is 0
    // while k3's is (1 − e^δ)/3 ≈ 1/3 under the token mean of 3 tokens.
    const v = m("verl-k3-clamp");
    expect(v.verlGrad0).toBe(0);
    expect(v.polgradGrad0).toBeCloseTo((1 - Math.exp(-13)) / 3, 12);
    expect(v.lossRatio).toBeLessThan(1);
  });

  test("deviation: openrlhf-kl-float32", () => {
    const v = m("openrlhf-kl-float32");
    expect(v.lossRelDiff).toBeGreaterThan(1e-12);
    expect(v.lossRelDiff).toBeLessThan(1e-5);
  });

  test("deviation: trl-cispo-absolute-cap", () => {
    const v = m("trl-cispo-absolute-cap");
    expect(v.gradRelDiffEps5).toBeGreaterThan(1e-3);
    expect(v.gradRelDiffEps4).toBeLessThanOrEqual(1e-12);
  });

  test("deviation: trl-dapo-generation-batch-normaliser", () => {
    // num_items_in_batch = 2·N: every micro-batch loss is half the token mean.
    const v = m("trl-dapo-generation-batch-normaliser");
    expect(v.lossRatioMin).toBeCloseTo(0.5, 14);
    expect(v.lossRatioMax).toBeCloseTo(0.5, 14);
  });

  test("deviation: verl-grpo-singleton", () => {
    const v = m("verl-grpo-singleton");
    expect(v.verlSingleton).toBeCloseTo(0.7 / (1 + 1e-6), 15);
    expect(v.polgradRejects).toBe(1);
  });

  test("deviation: verl-rloo-singleton", () => {
    const v = m("verl-rloo-singleton");
    expect([v.loop, v.vectorized, v.polgradRejects]).toEqual([0.7, 0, 1]);
  });

  test("identity: the papo deviations measure their documented factors", () => {
    expect(m("trl-papo-padding-in-mean").perceptionRatio).toBeCloseTo(18 / 32, 12);
    expect(m("trl-papo-entropy-no-gradient").gradientContribution).toBe(0);
  });
});
