/** Enforces docs/derivations/verify.md#checkagainstreference. */
import { describe, expect, test } from "vitest";
import { ALGORITHMS } from "../../src/index.js";
import { checkAgainstReference } from "../../src/verify/referenceCheck.js";

describe("checkAgainstReference", () => {
  test("golden: every registry algorithm agrees with its reference to 1e-13", () => {
    for (const [name, spec] of Object.entries(ALGORITHMS)) {
      const config =
        spec.loss.aggregation === "token_sum_norm" && spec.loss.normLen == null
          ? { ...spec.loss, normLen: 9 }
          : spec.loss;
      const r = checkAgainstReference(config, { seed: 5 });
      expect(r.ok, name).toBe(true);
      expect(Math.max(r.maxLossErr, r.maxGradErr), name).toBeLessThanOrEqual(1e-13);
    }
  });

  test("rejects: an impossible tolerance reports the worst case with its replay seed", () => {
    // A tolerance of −1 cannot be met (errors are ≥ 0), so the check must fail and name a seed.
    expect(() =>
      checkAgainstReference(ALGORITHMS.grpo.loss, {
        tolerance: -1,
        replayCommand: "polgrad verify --algorithm grpo --replay {seed}:{B}x{T}",
      }),
    ).toThrow(
      /replay: \{ seed: \d+, shape: \[\d, \d\] \}[\s\S]*Hint: 2\. from a shell: polgrad verify --algorithm grpo --replay \d+:\dx\d/,
    );
  });
});
