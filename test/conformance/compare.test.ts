/** Enforces docs/conformance/deviations.md#measuring-a-deviation. */
import { describe, expect, test } from "vitest";
import { compareLosses } from "../../src/conformance/compare.js";
import { type PolicyLossConfig, policyLoss } from "../../src/index.js";

const cfg: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2 },
  aggregation: "token_mean",
};
const f = (i: Parameters<typeof policyLoss>[1]) => policyLoss(cfg, i);
const twice = (i: Parameters<typeof policyLoss>[1]) => {
  const r = policyLoss(cfg, i);
  return {
    loss: 2 * r.loss,
    gradLogprobs: { ...r.gradLogprobs, data: r.gradLogprobs.data.map((x) => 2 * x) },
  };
};

describe("compareLosses", () => {
  test("golden: a loss against itself and against twice itself", () => {
    // f vs f: every difference exactly 0, cosine 1. f vs 2f: |f − 2f|/|2f| = 1/2 for loss and
    // gradient, cosine 1, loss ratio exactly 1/2.
    const same = compareLosses(f, f, { cases: 8 });
    expect([same.maxLossRelDiff, same.maxGradRelDiff]).toEqual([0, 0]);
    expect(same.gradCosineMin).toBeCloseTo(1, 12);
    const half = compareLosses(f, twice, { cases: 8 });
    expect(half.maxLossRelDiff).toBeCloseTo(0.5, 15);
    expect(half.maxGradRelDiff).toBeCloseTo(0.5, 15);
    expect(half.lossRatioRange).toEqual([0.5, 0.5]);
  });

  test("identity: equal seeds give equal reports", () => {
    expect(compareLosses(f, twice, { seed: 3, cases: 5 })).toEqual(
      compareLosses(f, twice, { seed: 3, cases: 5 }),
    );
  });
});
