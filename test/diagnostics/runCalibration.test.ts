/**
 * Enforces docs/diagnostics/run.md#alarms: a tensor-dump run's alarms, with its statistical ones
 * as one family at α = 0.05 (docs/diagnostics/log-detectors.md), fire on at most 5 % of healthy
 * runs. Each healthy run is a sequence of synthetic steps (ragged batches: the policy near the
 * old one, the rollout engine near the trainer, the reference drifting away linearly, advantages
 * independent of length, the entropy drifting linearly with noise) summarised by stepSummary, as diagnoseRun summarises each step
 * file, and reported by summarizeRun.
 */
import { describe, expect, test } from "vitest";
import { createRng, type Rng } from "../../src/core/rng.js";
import type { DiagnoseOptions } from "../../src/diagnostics/diagnoseBatch.js";
import { summarizeRun } from "../../src/diagnostics/diagnoseRun.js";
import { klRefMean } from "../../src/diagnostics/klRef.js";
import { RUN_STEPS_KIND, type RunSteps, stepSettings } from "../../src/diagnostics/runSteps.js";
import { stepSummary } from "../../src/diagnostics/stepSummary.js";
import type { PartialBatch } from "../../src/io/batch.js";

function normal(rng: Rng): number {
  let u = 0;
  while (u === 0) u = rng.uniform();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.uniform());
}

/** One healthy step of B rows and T columns whose mean token entropy is about `entropy`. */
function healthyStep(rng: Rng, B: number, T: number, entropy: number, klGap: number): PartialBatch {
  const mask = new Uint8Array(B * T);
  const lp = new Float64Array(B * T);
  const old = new Float64Array(B * T);
  const roll = new Float64Array(B * T);
  const ent = new Float64Array(B * T);
  const ref = new Float64Array(B * T);
  const adv = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    const L = 4 + Math.floor(rng.uniform() * (T - 4));
    adv[b] = normal(rng);
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (t >= L) continue;
      mask[i] = 1;
      old[i] = -Math.abs(1 + 0.5 * normal(rng));
      lp[i] = old[i] + 0.05 * normal(rng);
      roll[i] = old[i] + 0.02 * normal(rng);
      ent[i] = Math.max(0, entropy + 0.2 * normal(rng));
      ref[i] = lp[i] + klGap * normal(rng);
    }
  }
  const m = (data: Float64Array) => ({ rows: B, cols: T, data });
  return {
    logprobs: m(lp),
    oldLogprobs: m(old),
    rolloutLogprobs: m(roll),
    refLogprobs: m(ref),
    entropies: m(ent),
    advantages: adv,
    responseMask: { rows: B, cols: T, data: mask },
  } as unknown as PartialBatch;
}

/** A run of n healthy steps as the RunSteps document diagnoseRun collects. */
function healthyRun(rng: Rng, n: number, sigma: number): RunSteps {
  const options: DiagnoseOptions = {};
  const level = 0.6 + rng.uniform();
  const drift = -0.3 * rng.uniform();
  const steps = Array.from({ length: n }, (_, k) => {
    const batch = healthyStep(
      rng,
      16,
      24,
      level + (drift * k) / n + sigma * normal(rng),
      0.1 + (0.1 * k) / n,
    );
    const s = stepSummary(batch, options);
    if (s === null) throw new Error("a plain step");
    const { skipped: _s, mismatchOverflow: _m, ...rest } = s;
    // As diagnoseRun records each step: the fused summary and the KL to the reference.
    return { step: k * 10, file: `step_${k * 10}`, ...rest, klRef: klRefMean(batch) };
  });
  return {
    kind: RUN_STEPS_KIND,
    version: 1,
    dir: "healthy",
    range: null,
    settings: stepSettings({}),
    entries: steps.map((s) => ({ step: s.step, name: s.file })),
    steps,
    entryProblems: [],
    unreadable: [],
    skipped: [],
    names: { maps: [], ignored: [], notes: [] },
    mismatchOverflowSteps: [],
    others: { names: [], count: 0 },
  };
}

describe("summarizeRun", () => {
  test("calibration: healthy tensor-dump runs raise any alarm at most alpha of the time (240 runs of 30–300 steps, three noise levels)", () => {
    const rng = createRng(34);
    let alarmed = 0;
    const codes: Record<string, number> = {};
    let runs = 0;
    for (const n of [30, 100, 300])
      for (let k = 0; k < 80; k++) {
        const d = summarizeRun(healthyRun(rng, n, [0.005, 0.02, 0.05][k % 3] as number), {
          seed: runs + 1,
        });
        // The family ran its four tests (entropy, clip, KL to the reference, the length bias).
        expect(d.family.tests + 1).toBe(4);
        if (d.alarms.length > 0) alarmed++;
        for (const a of d.alarms) codes[a.code] = (codes[a.code] ?? 0) + 1;
        runs++;
      }
    expect(runs).toBe(240);
    // At most the count a true 5 % rate exceeds 1 % of the time (16 of 240).
    expect(alarmed, JSON.stringify(codes)).toBeLessThanOrEqual(16);
  }, 120_000);
});
