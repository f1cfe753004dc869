/**
 * Enforces docs/derivations/variants.md#which-grpo-am-i-running: on polgrad's example batch the
 * table reproduces polgrad 0.2.0's recorded losses and gradient masses
 * (test/fixtures/polgrad/which_example.json, recorded from the example script itself).
 */
import { describe, expect, test } from "vitest";
import { BUILTIN_BATCH, whichTable } from "../../src/index.js";
import { loadPolgradFixture, relErr } from "../_kit/polgradFixtures.js";

interface Fixture {
  batch: {
    logprobs: number[][];
    old_logprobs: number[][];
    advantages: number[];
    response_mask: boolean[][];
  };
  polgrad_rows: { key: string; loss: number; grad_mass: number[] }[];
  gspo: { sequence_ratios: number[]; killed_rows: number[]; flowing_rows: number[] };
}
const fx = loadPolgradFixture<Fixture>("which_example.json");

describe("whichTable", () => {
  test("identity: the built-in batch is polgrad's example batch bitwise", () => {
    expect(BUILTIN_BATCH.logprobs).toEqual(fx.batch.logprobs);
    expect(BUILTIN_BATCH.oldLogprobs).toEqual(fx.batch.old_logprobs);
    expect(BUILTIN_BATCH.advantages).toEqual(fx.batch.advantages);
    expect(BUILTIN_BATCH.responseMask).toEqual(fx.batch.response_mask);
  });

  test("golden: built-in batch reproduces polgrad's printed table", () => {
    const report = whichTable(BUILTIN_BATCH);
    // polgrad's example uses budget 8 = T for Dr.GRPO, which is also our default.
    expect(report.normLen).toBe(8);
    const printed: Record<string, string> = {
      seq_mean_token_mean: "0.24038972",
      token_mean: "0.51717388",
      token_sum_norm: "0.32323368",
      gspo: "0.15429390",
    };
    for (const row of report.rows.filter((r) => r.source === "polgrad")) {
      const rec = fx.polgrad_rows.find(
        (r) => r.key === (row.key === "gspo" ? "gspo_sequence" : row.key),
      );
      expect(rec, row.key).toBeDefined();
      expect(relErr(row.loss, rec!.loss), row.key).toBeLessThanOrEqual(1e-12);
      row.gradMass.forEach((m, b) =>
        expect(relErr(m, rec!.grad_mass[b]!), `${row.key} mass ${b}`).toBeLessThanOrEqual(1e-12),
      );
      expect(row.loss.toFixed(8)).toBe(printed[row.key]);
    }
    report.gspo.sequenceRatios.forEach((s, b) =>
      expect(relErr(s, fx.gspo.sequence_ratios[b]!)).toBeLessThanOrEqual(1e-12),
    );
    expect(report.gspo.killedRows).toEqual(fx.gspo.killed_rows);
    expect(report.gspo.flowingRows).toEqual(fx.gspo.flowing_rows);
  });

  test("identity: the framework rows equal their polgrad counterparts on the built-in batch", () => {
    // Max ratio e^1 ≈ 2.72 < 3: verl's dual clip cannot bind; the (L_b + 1e-8) row divisor is
    // exactly L_b under the bool/long masks; TRL's dr_grpo budget is T = 8 = norm_len.
    const report = whichTable(BUILTIN_BATCH);
    expect(report.rows.filter((r) => r.source === "framework")).toHaveLength(6);
    const checks = report.crossChecks.slice(1);
    expect(checks).toHaveLength(6);
    for (const c of checks) expect(c.absDiff, c.claim).toBeLessThanOrEqual(1e-15);
  });

  test("identity: dr.grpo is token-mean times n over b times norm_len", () => {
    // N = 20, B = 4, ℓ = 8: 20/32 = 0.625; weights m/32 vs m/20 are exactly proportional.
    const report = whichTable(BUILTIN_BATCH);
    expect(report.crossChecks[0]!.rhsScale).toBe(0.625);
    expect(report.crossChecks[0]!.absDiff).toBeLessThanOrEqual(1e-16);
  });
});
