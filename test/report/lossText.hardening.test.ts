/**
 * Issue 9 for the loss text report: the gradient norm uses scaled accumulation, so finite
 * gradients near 1e200 print a finite norm, never NaN or Infinity.
 */
import { describe, expect, it } from "vitest";
import type { PolicyLossConfig, PolicyLossResult } from "../../src/index.js";
import { renderLossText } from "../../src/report/lossText.js";

const cfg: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2 },
  aggregation: "token_mean",
};

function result(grad: number[], ratio: number[]): PolicyLossResult {
  const n = grad.length;
  return {
    loss: 0,
    gradLogprobs: { rows: 1, cols: n, data: Float64Array.from(grad) },
    perTokenObjective: { rows: 1, cols: n, data: new Float64Array(n) },
    ratio: { rows: 1, cols: n, data: Float64Array.from(ratio) },
    clippedLow: { rows: 1, cols: n, data: new Uint8Array(n) },
    clippedHigh: { rows: 1, cols: n, data: Uint8Array.from(ratio, (r) => (r > 1.2 ? 1 : 0)) },
    klLoss: null,
    entropyLoss: null,
    gradEntropies: null,
  };
}

describe("renderLossText", () => {
  it("regression: the grad norm of finite gradients near 1e200 is finite, not NaN", () => {
    // ‖[1e200, 1e200]‖ = 1e200·√2: the squares 1e400 overflow, the scaled sum does not
    // (scale 1e200, Σ (x/scale)² = 2).
    const text = renderLossText(cfg, "test", "b.json", result([1e200, 1e200], [1, 1]), [[1, 1]]);
    expect(text).toContain(`grad norm     ${1e200 * Math.sqrt(2)} (`);
    // Masses: 1e200 per token, Σ over the one row = 2e200.
    expect(text).toContain("grad mass     [2.00000e+200]");
    expect(text).not.toMatch(/NaN|Infinity/);
  });

  it("regression: a saturated ratio and a mass past float64 are said, not printed as Infinity", () => {
    // Masses 1.5e308 + 1.5e308 exceed float64; the ratio Number.MAX_VALUE is a saturated overflow.
    const text = renderLossText(
      cfg,
      "test",
      "b.json",
      result([1.5e308, 1.5e308], [Number.MAX_VALUE, 1]),
      [[1, 1]],
    );
    expect(text).toContain("exceeds float64");
    expect(text).toContain("saturated");
    expect(text).not.toMatch(/NaN|Infinity/);
  });
});
