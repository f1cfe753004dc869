/** Enforces docs/diagnostics/mismatch.md#text-report: the six-line text rendering of a mismatch report. */
import { describe, expect, test } from "vitest";
import { logprobMismatch } from "../../src/diagnostics/mismatch.js";
import { renderMismatchText } from "../../src/report/mismatchText.js";

describe("renderMismatchText", () => {
  test("golden: the six lines of the three-token golden", () => {
    // Δ = [0.2, −0.6, 1.0] (see test/diagnostics/mismatch.test.ts for the arithmetic), gap 0.7.
    const r = logprobMismatch(
      [
        [-1.0, -2.0],
        [-1.5, Number.NaN],
      ],
      [
        [-1.2, -1.4],
        [-2.5, 0],
      ],
      [
        [true, true],
        [true, false],
      ],
      { catastrophicGap: 0.7 },
    );
    const lines = renderMismatchText(r).split("\n");
    expect(lines).toEqual([
      "logprob mismatch (Δ = trainer - rollout) over n_tokens=3",
      "gap: mean=0.2 std=0.8 |max|=1 ppl_ratio=0.8187",
      "gap quantiles: q01=-0.584 q05=-0.52 q25=-0.2 q50=0.2 q75=0.6 q95=0.92 q99=0.984",
      "KL(rollout‖trainer) (tokens ~ rollout): k1=-0.2 k2=0.2333 k3=0.2962; trainer→rollout k3=0.2029",
      "sequence log-ratio: mean=0.3 std=0.9899 |max|=1",
      "catastrophic tokens: 1",
    ]);
  });
});
