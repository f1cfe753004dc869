/**
 * Enforces docs/diagnostics/run.md: diagnose on one batch and on a run directory, with the demo
 * run's injected pathologies as the golden.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { diagnoseBatch } from "../../src/diagnostics/diagnoseBatch.js";
import { diagnoseRun, type RunDiagnosis } from "../../src/diagnostics/diagnoseRun.js";
import { tensorsFromJson } from "../../src/index.js";
import { toPartialBatch } from "../../src/io/batch.js";
import { renderRunDiagnosisText } from "../../src/report/diagnoseText.js";

const full = {
  logprobs: [
    [-1.0, -2.1, -0.4],
    [-0.5, -0.9, 0],
    [-1.2, -0.3, -0.8],
    [-2.0, 0, 0],
  ],
  old_logprobs: [
    [-1.1, -2.0, -0.5],
    [-0.4, -1.0, 0],
    [-1.0, -0.35, -0.9],
    [-2.2, 0, 0],
  ],
  rollout_logprobs: [
    [-1.1, -2.05, -0.5],
    [-0.41, -7, 0],
    [-1.0, -0.3, -0.95],
    [-2.1, 0, 0],
  ],
  advantages: [1.0, -0.5, 0.8, -1.2],
  response_mask: [
    [1, 1, 1],
    [1, 1, 0],
    [1, 1, 1],
    [1, 0, 0],
  ],
};

describe("diagnoseBatch", () => {
  test("golden: every detector runs on a full batch and a missing stream skips exactly its detectors", () => {
    const d = diagnoseBatch(toPartialBatch(tensorsFromJson(full, "full.json")));
    expect([d.ess, d.mismatch, d.clip, d.entropy, d.lengthBias].every((r) => r !== null)).toBe(
      true,
    );
    expect(d.skipped).toEqual([]);
    // |trainer − rollout| = |−1.0 − (−7)| = 6 > 5 at (1, 1): one catastrophic token.
    expect(d.mismatch?.catastrophicIndices).toEqual([[1, 1]]);
    const { rollout_logprobs: _r, ...noRollout } = full;
    const d2 = diagnoseBatch(toPartialBatch(tensorsFromJson(noRollout, "a.json")));
    expect(d2.skipped.map((s) => s.detector)).toEqual(["mismatch"]);
    const { advantages: _a, ...noAdv } = full;
    const d3 = diagnoseBatch(toPartialBatch(tensorsFromJson(noAdv, "b.json")));
    expect(d3.skipped.map((s) => [s.detector, s.reason])).toEqual([
      ["clip", "needs advantages"],
      ["length_bias", "needs advantages"],
    ]);
  });

  test("identity: a detector that rejects the batch is skipped with its error and the others run", () => {
    // Equal row lengths: the length-bias slope is undefined (MaskError), everything else still runs.
    const eq = {
      ...full,
      response_mask: [
        [1, 1, 0],
        [1, 1, 0],
        [1, 1, 0],
        [1, 1, 0],
      ],
    };
    const d = diagnoseBatch(toPartialBatch(tensorsFromJson(eq, "eq.json")));
    expect(d.lengthBias).toBeNull();
    expect(d.skipped).toHaveLength(1);
    expect(d.skipped[0]?.reason).toMatch(/constant|undefined/);
    expect(d.ess).not.toBeNull();
  });
});

describe("diagnoseRun", () => {
  let dir: string;
  let d: RunDiagnosis;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "polgrad-run-"));
    writeDemoRun(dir);
    d = diagnoseRun(dir);
  });

  test("golden: the demo run fires every detector at its injection point", () => {
    expect(d.steps).toHaveLength(200);
    expect(d.problems).toEqual([]);
    // Entropy drops at step 140: the changepoint is the last pre-change step, 139 (± a few).
    expect(Math.abs((d.entropyTrend?.changepointStep ?? -99) - 139)).toBeLessThanOrEqual(3);
    // ESS/n ≈ 1 at the start and → exp(−σ_d²·L̄) ≈ 0.57 at the end (drift σ_d = 0.2, L̄ ≈ 14).
    expect(d.series.essRatio?.first.value).toBeGreaterThan(0.95);
    expect(d.series.essRatio?.last.value).toBeGreaterThan(0.3);
    expect(d.series.essRatio?.last.value).toBeLessThan(0.7);
    // Catastrophic tokens exactly at the injected positions, only from step 190 on.
    expect(d.catastrophic.positions).toEqual([
      [0, 0],
      [1, 1],
    ]);
    expect(d.catastrophic.steps).toEqual([190, 191, 192, 193, 194, 195, 196, 197, 198, 199]);
    // Length bias: the CI covers 0 at step 0 (no injected slope) and excludes it at the last step.
    const first = d.steps[0]!;
    expect(first.lengthCiLow! <= 0 && first.lengthCiHigh! >= 0).toBe(true);
    expect(d.lengthBias?.lastExcludesZero).toBe(true);
    expect(d.alarms).toHaveLength(4);
    const text = renderRunDiagnosisText(d);
    expect(text).toContain("changepoint after step 139");
    expect(text).toContain("at positions (0, 0), (1, 1)");
  });

  test("rejects: a corrupt and a missing step are reported by name and the rest is diagnosed", () => {
    const small = mkdtempSync(join(tmpdir(), "polgrad-run-"));
    writeDemoRun(small, { steps: 12, batchSize: 4, width: 8 });
    writeFileSync(join(small, "step_000003.safetensors"), Buffer.from([7, 0, 0]));
    rmSync(join(small, "step_000005.safetensors"));
    writeFileSync(join(small, "notes.txt"), "not a step");
    const r = diagnoseRun(small);
    expect(r.steps.map((s) => s.step)).toEqual([0, 1, 2, 4, 6, 7, 8, 9, 10, 11]);
    // Step 3 is there but unreadable; step 5 is missing from the run's stride of 1.
    expect(r.problems.map((p) => p.file)).toEqual(["step_000003.safetensors", "steps 4..6"]);
    expect(r.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^diagnoseRun: file must be at least 8 bytes/),
      "1 dump(s) missing between steps 4 and 6 (the run dumps every step)",
    ]);
    expect(() => diagnoseRun(join(small, "nope"))).toThrow(/an existing file/);
  });
});
