/**
 * Enforces docs/derivations/aggregation.md#rows-with-no-response-token for the diagnostics:
 * `emptyRows: "drop"` takes the rows with no response token out of the batch before any detector
 * runs, so the diagnosis equals the diagnosis of the batch without them (and lists them); by
 * default such a row makes every mask-reading detector skip with the MaskError naming it; the CLI's
 * `--empty-rows drop` does the same on a file.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { diagnoseBatch } from "../../src/diagnostics/diagnoseBatch.js";
import { diagnoseRun } from "../../src/diagnostics/diagnoseRun.js";
import { tensorsFromJson } from "../../src/index.js";
import { toPartialBatch } from "../../src/io/batch.js";
import { runBin } from "../cli/_run.js";

/** Four rows; row 2 has no response token (its positions hold junk). */
const withEmpty = {
  logprobs: [
    [-1.0, -2.1, -0.4],
    [-0.5, -0.9, 0],
    [9, 9, 9],
    [-2.0, 0, 0],
  ],
  old_logprobs: [
    [-1.1, -2.0, -0.5],
    [-0.4, -1.0, 0],
    [9, 9, 9],
    [-2.2, 0, 0],
  ],
  rollout_logprobs: [
    [-1.1, -2.05, -0.5],
    [-0.41, -7, 0],
    [9, 9, 9],
    [-2.1, 0, 0],
  ],
  advantages: [1.0, -0.5, 0.8, -1.2],
  response_mask: [
    [1, 1, 1],
    [1, 1, 0],
    [0, 0, 0],
    [1, 0, 0],
  ],
};
const drop2 = <V>(x: readonly V[]): V[] => x.filter((_, b) => b !== 2);
const without = {
  logprobs: drop2(withEmpty.logprobs),
  old_logprobs: drop2(withEmpty.old_logprobs),
  rollout_logprobs: drop2(withEmpty.rollout_logprobs),
  advantages: drop2(withEmpty.advantages),
  response_mask: drop2(withEmpty.response_mask),
};

describe("diagnoseBatch with rows of no response token", () => {
  test("identity: drop gives the diagnosis of the batch without the empty row, and names it", () => {
    const got = diagnoseBatch(toPartialBatch(tensorsFromJson(withEmpty, "e.json")), {
      emptyRows: "drop",
    });
    const ref = diagnoseBatch(toPartialBatch(tensorsFromJson(without, "w.json")));
    const { droppedRows, ...rest } = got;
    expect(droppedRows).toEqual([2]);
    expect(rest).toEqual(ref);
    expect(ref.skipped).toEqual([]);
    // Without rows to drop, the option changes nothing but the (empty) list.
    const same = diagnoseBatch(toPartialBatch(tensorsFromJson(without, "w.json")), {
      emptyRows: "drop",
    });
    expect(same).toEqual({ ...ref, droppedRows: [] });
  });

  test("rejects: by default the empty row makes the mask-reading detectors skip with the MaskError naming it; an unknown policy is named", () => {
    const d = diagnoseBatch(toPartialBatch(tensorsFromJson(withEmpty, "e.json")));
    expect(d.skipped.length).toBeGreaterThanOrEqual(4);
    for (const s of d.skipped) {
      expect(s.code).toBe("E_MASK");
      expect(s.reason).toMatch(/2/);
    }
    expect(() =>
      diagnoseBatch(toPartialBatch(tensorsFromJson(withEmpty, "e.json")), {
        emptyRows: "count" as "drop",
      }),
    ).toThrow(/options\.emptyRows/);
  });

  test("golden: polgrad diagnose --empty-rows drop diagnoses the file without the empty row", () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-empty-"));
    const file = join(dir, "batch.json");
    writeFileSync(file, JSON.stringify(withEmpty));
    const r = runBin(["diagnose", file, "--empty-rows", "drop", "--json"]);
    const doc = JSON.parse(r.stdout);
    expect(doc.result.dropped_rows).toEqual([2]);
    expect(doc.result.skipped).toEqual([]);
    const text = runBin(["diagnose", file, "--empty-rows", "drop"]);
    expect(text.stdout).toContain("dropped 1 row(s) with no response token (--empty-rows drop): 2");
    const bad = runBin(["diagnose", file, "--empty-rows", "count"]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/--empty-rows must be reject or drop/);
  });

  test("identity: a run whose steps hold an empty row is diagnosed under drop as the run without it, every step read", () => {
    const a = mkdtempSync(join(tmpdir(), "polgrad-empty-run-"));
    const b = mkdtempSync(join(tmpdir(), "polgrad-clean-run-"));
    for (let step = 1; step <= 4; step++) {
      const shift = (x: number[][]) => x.map((r) => r.map((v) => v - 0.01 * step));
      const e = { ...withEmpty, logprobs: shift(withEmpty.logprobs) };
      const w = { ...without, logprobs: shift(without.logprobs) };
      for (const [root, doc] of [
        [a, e],
        [b, w],
      ] as const) {
        mkdirSync(join(root, `step_${step}`));
        writeFileSync(join(root, `step_${step}`, "batch.json"), JSON.stringify(doc));
      }
    }
    const dropped = diagnoseRun(a, { emptyRows: "drop" });
    const clean = diagnoseRun(b);
    expect(dropped.steps.map(({ file: _f, ...s }) => s)).toEqual(
      clean.steps.map(({ file: _f, ...s }) => s),
    );
    expect(dropped.problems).toEqual(clean.problems);
    // By default the detectors skip on every step, naming the empty row.
    const strict = diagnoseRun(a);
    expect(strict.skipped.length).toBeGreaterThan(0);
  });
});
