/**
 * Enforces docs/diagnostics/run.md#rewards-and-truncation: a dump's `rewards` (`[B]`, or `[B, T]`
 * summed over the response) and `truncated` give each step's reward mean and std and truncation
 * rate, over the rows with a response token; padding is never read; a run whose truncation rate
 * jumps raises `truncation_shift` at its step; OpenRLHF's and verl's names are read.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { diagnoseRun } from "../../src/diagnostics/diagnoseRun.js";
import { rewardStats } from "../../src/diagnostics/rewards.js";
import { toPartialBatch } from "../../src/io/batch.js";
import { tensorsFromJson } from "../../src/io/tensorsFromJson.js";

const batchOf = (json: Record<string, unknown>) =>
  toPartialBatch(tensorsFromJson(json, "<test>"), {});

describe("rewardStats", () => {
  test("golden: [B] rewards and truncated flags over the rows with a response token", () => {
    const s = rewardStats(
      batchOf({
        response_mask: [
          [1, 1, 0],
          [1, 0, 0],
          [0, 0, 0],
          [1, 1, 1],
        ],
        rewards: [1, 0, 99, 0.5],
        truncated: [0, 0, 1, 1],
      }),
    );
    // Rows 0, 1, 3: R = 1, 0, 0.5; mean 0.5; sample variance ((0.5² + 0.5² + 0²) / 2) = 0.25.
    expect(s).toEqual({ rewardMean: 0.5, rewardStd: 0.5, truncationRate: 1 / 3 });
  });

  test("golden: [B, T] token-level rewards are summed over the response only (verl's score at the last token); padding junk is not read", () => {
    const s = rewardStats(
      batchOf({
        token_level_scores: [
          [0, 0, 1, 1e300],
          [0, 0.25, 7, 7],
        ],
        response_mask: [
          [1, 1, 1, 0],
          [1, 1, 0, 0],
        ],
      }),
    );
    expect(s.rewardMean).toBe((1 + 0.25) / 2);
    expect(s.rewardStd).toBe(Math.sqrt(((1 - 0.625) ** 2 + (0.25 - 0.625) ** 2) / 1));
    expect(s.truncationRate).toBeNull();
  });

  test("rejects: truncated that is not 0/1 or not [B]", () => {
    const mask = [[1], [1]];
    expect(() => batchOf({ response_mask: mask, truncated: [0, 2] })).toThrow(
      /truncated must be 0\/1 valued \(or true\/false\); got 2 at 1/,
    );
    expect(() => batchOf({ response_mask: mask, truncated: [[0], [1]] })).toThrow(
      /truncated must be \[B\] with B = 2; got shape \[2, 1\]/,
    );
  });
});

describe("diagnoseRun", () => {
  test("golden: a truncation rate that jumps from 5 % to 40 % after step 24 is a truncation_shift alarm at its step; rewards are traced", () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-rewards-"));
    mkdirSync(dir, { recursive: true });
    const B = 20;
    for (let step = 0; step < 40; step++) {
      const cut = step < 25 ? 1 + (step % 2) : 8 + (step % 2);
      writeFileSync(
        join(dir, `step_${step}.json`),
        JSON.stringify({
          // OpenRLHF's Experience names.
          action_mask: Array.from({ length: B }, () => [1, 1]),
          rewards: Array.from({ length: B }, (_, b) => (b % 2 === 0 ? 1 : 0)),
          truncated: Array.from({ length: B }, (_, b) => (b < cut ? 1 : 0)),
        }),
      );
    }
    const d = diagnoseRun(dir, { only: ["truncation_shift"] });
    expect(d.steps[0]).toMatchObject({ rewardMean: 0.5, truncationRate: 1 / 20 });
    expect(d.series.rewardStd?.first.value).toBe(Math.sqrt((20 * 0.25) / 19));
    expect(d.alarms.map((a) => [a.code, a.step])).toEqual([["truncation_shift", 24]]);
  });
});
