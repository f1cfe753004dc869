/** Enforces docs/derivations/goldens.md: the six golden cases hold for the closed form and the reference. */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { maskToRows, policyLoss } from "../../src/index.js";
import { goldenCases } from "../../src/verify/goldens.js";
import { policyLossRef } from "../../src/verify/reference/index.js";

describe("goldenCases", () => {
  test("golden: policyLoss reproduces every case to 1e-12", () => {
    const cases = goldenCases();
    expect(cases.map((c) => c.name)).toEqual([
      "pg_clip_inside_band",
      "pg_clip_clipped_high_positive_advantage",
      "pg_clip_clipped_low_negative_advantage",
      "dual_clip_negative_advantage_above_cap",
      "pg_clip_two_token_ragged_token_mean",
      "pg_clip_two_token_ragged_seq_mean_token_mean",
    ]);
    for (const c of cases) {
      const r = policyLoss(c.config, c.inputs);
      expect(Math.abs(r.loss - c.expectedLoss), c.name).toBeLessThanOrEqual(1e-12);
      c.expectedGradLogprobs
        .flat()
        .forEach((g, i) =>
          expect(Math.abs(r.gradLogprobs.data[i]! - g), c.name).toBeLessThanOrEqual(1e-12),
        );
      const low = maskToRows(r.clippedLow);
      const high = maskToRows(r.clippedHigh);
      c.expectedFlags.forEach((row, b) =>
        row.forEach(([l, h], t) =>
          expect([low[b]![t], high[b]![t]], `${c.name} (${b}, ${t})`).toEqual([l, h]),
        ),
      );
    }
  });

  test("golden: the autodiff reference reproduces every case to 1e-12", () => {
    for (const c of goldenCases()) {
      const r = policyLossRef(c.config, c.inputs as Parameters<typeof policyLossRef>[1]);
      expect(Math.abs(r.loss - c.expectedLoss), c.name).toBeLessThanOrEqual(1e-12);
      c.expectedGradLogprobs
        .flat()
        .forEach((g, i) =>
          expect(Math.abs(r.grad.data[i]! - g), c.name).toBeLessThanOrEqual(1e-12),
        );
    }
  });

  test("identity: every case has its section in goldens.md", () => {
    const doc = readFileSync(new URL("../../docs/derivations/goldens.md", import.meta.url), "utf8");
    for (const c of goldenCases()) {
      expect(c.derivation).toBe(`docs/derivations/goldens.md#${c.name}`);
      expect(doc).toContain(`### ${c.name}\n`);
    }
  });

  test("identity: fresh copies every call", () => {
    const a = goldenCases();
    (a[0]!.inputs.logprobs as number[][])[0]![0] = 99;
    expect((goldenCases()[0]!.inputs.logprobs as number[][])[0]![0]).toBe(-0.7);
  });
});
