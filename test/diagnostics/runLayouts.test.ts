/**
 * Enforces docs/diagnostics/run.md#a-run and #alarms: a run dumped every k steps is diagnosed per
 * training step with no gap problems; a folder where nothing can be diagnosed is an error naming
 * each reason; a pure linear entropy decline is a trend, not a changepoint; every exit 1 names its
 * alarms in text and JSON, with ok false.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { diagnoseRun } from "../../src/diagnostics/diagnoseRun.js";
import { IoError } from "../../src/errors.js";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import { runMain } from "../cli/_run.js";
import { useTmpDir } from "../io/_kit.js";

const tmp = useTmpDir();
const B = 4;
const T = 6;
const MASK = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0];

/**
 * A run of `steps` holding exact per-token entropies h(step) (+ noise) at every response token, so
 * the entropy detector's estimate (the mean over response tokens) is h(step) itself.
 */
function entropyRun(
  name: string,
  steps: readonly number[],
  h: (step: number, k: number) => number,
): string {
  const dir = tmp(name);
  mkdirSync(dir);
  steps.forEach((step, k) => {
    const value = h(step, k);
    writeFileSync(
      join(dir, `step_${String(step).padStart(6, "0")}.safetensors`),
      encodeSafetensors({
        entropies: { dtype: "F64", shape: [B, T], data: new Array(B * T).fill(value) },
        response_mask: { dtype: "U8", shape: [B, T], data: MASK },
      }),
    );
  });
  return dir;
}

describe("diagnoseRun", () => {
  test("regression: a run dumped every 10 steps reports slopes per step and no gaps", () => {
    // h = 2 − 0.001299·step on steps 0, 10, …, 290: the slope per training step is −0.001299
    // (per dump it would be −0.01299, the number the issue saw).
    const steps = Array.from({ length: 30 }, (_, k) => 10 * k);
    const d = diagnoseRun(entropyRun("sparse", steps, (s) => 2 - 0.001299 * s));
    expect(d.steps.map((s) => s.step)).toEqual(steps);
    expect(d.stride).toBe(10);
    expect(d.problems).toEqual([]);
    const slope = d.series.entropy?.slope as number;
    expect(Math.abs(slope - -0.001299)).toBeLessThan(1e-15);
    expect(Math.abs((d.entropyTrend?.slope as number) - -0.001299)).toBeLessThan(1e-15);
    expect(d.entropyTrend?.trendSignificant).toBe(true);
  });

  test("regression: a folder where every step is unreadable is an error naming each reason", () => {
    const dir = tmp("unreadable");
    mkdirSync(dir);
    writeFileSync(join(dir, "step_1.json"), "{not json");
    writeFileSync(join(dir, "step_2.pt"), "PK\u0003\u0004 truncated");
    writeFileSync(
      join(dir, "step_3.safetensors"),
      encodeSafetensors({ x: { dtype: "F64", shape: [1], data: [0] } }),
    );
    let err: unknown;
    try {
      diagnoseRun(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(IoError);
    const message = (err as IoError).message;
    expect(message).toContain("3 step(s)");
    expect(message).toContain("none diagnosed");
    for (const f of ["step_1.json", "step_2.pt", "step_3.safetensors"])
      expect(message).toContain(f);
    // A folder with no step at all says what it holds.
    const empty = tmp("nosteps");
    mkdirSync(empty);
    writeFileSync(join(empty, "notes.txt"), "x");
    expect(() => diagnoseRun(empty)).toThrow(/no step file or folder in .* \(only notes\.txt\)/);
  });

  test("golden: steps with log-probabilities above 0 are diagnosed with one note a tensor; under strict they are unreadable", () => {
    // 6 steps of polgrad-style logprobs: old = lp + 0.1 at every token, so lp = −0.05 gives an
    // old log-probability of +0.05 at response tokens of steps 1 and 4.
    const dir = tmp("positive");
    mkdirSync(dir);
    for (let step = 0; step < 6; step++) {
      const lp = Array.from({ length: B * T }, (_, i) => -0.5 - 0.01 * i);
      if (step === 1 || step === 4) lp[0] = -0.05;
      writeFileSync(
        join(dir, `step_${step}.safetensors`),
        encodeSafetensors({
          logprobs: { dtype: "F64", shape: [B, T], data: lp },
          old_logprobs: { dtype: "F64", shape: [B, T], data: lp.map((x) => x + 0.1) },
          advantages: { dtype: "F64", shape: [B], data: [1, -1, 0.5, -0.5] },
          response_mask: { dtype: "U8", shape: [B, T], data: MASK },
        }),
      );
    }
    const d = diagnoseRun(dir);
    expect(d.steps.length).toBe(6);
    expect(d.problems).toEqual([]);
    expect(d.names.notes).toEqual([
      "old_logprobs: log-probabilities above 0 at response positions in some step(s): probabilities or logits stored by mistake?",
    ]);
    const strict = diagnoseRun(dir, { strict: true, maxUnreadable: 1 });
    expect(strict.steps.map((s) => s.step)).toEqual([0, 2, 3, 5]);
    expect(strict.problems.map((p) => [p.step, p.message.includes("(≤ 0)")])).toEqual([
      [1, true],
      [4, true],
    ]);
  });

  test("golden: a pure linear entropy decline is a trend, not a changepoint", () => {
    // 200 steps of h = 2 − 0.004·step + N(0, 0.02²)-ish noise (seeded): a steady decline of 0.8
    // nats, 40 noise standard deviations. The old CUSUM on the raw series called its middle a
    // changepoint; the detrended test sees none at this seed (its level is measured in
    // docs/diagnostics/entropy.md#detrended-changepoint).
    const rng = createRng(7);
    const noise = Array.from({ length: 200 }, () => 0.02 * rng.normal());
    const steps = Array.from({ length: 200 }, (_, k) => k);
    const d = diagnoseRun(
      entropyRun("linear", steps, (s, k) => 2 - 0.004 * s + (noise[k] as number)),
    );
    expect(d.entropyTrend?.trendSignificant).toBe(true);
    expect(Math.abs((d.entropyTrend?.slope as number) - -0.004)).toBeLessThan(2e-4);
    expect(d.entropyTrend?.changepointStep).toBeNull();
    expect(d.alarms).toEqual([]);
    // The same run with a 0.3-nat drop after step 139 is a changepoint beyond the trend.
    const drop = diagnoseRun(
      entropyRun(
        "drop",
        steps,
        (s, k) => 2 - 0.004 * s + (noise[k] as number) - (s >= 140 ? 0.3 : 0),
      ),
    );
    expect(drop.alarms.map((a) => a.code)).toEqual(["entropy_collapse"]);
    expect(Math.abs((drop.alarms[0]?.step as number) - 139)).toBeLessThanOrEqual(2);
    expect(Math.abs((drop.entropyTrend?.changepointStep as number) - 139)).toBeLessThanOrEqual(2);
  });
});

describe("diagnose cli", () => {
  test("golden: every exit 1 names its alarms in text and json, and ok is false", async () => {
    const dir = tmp("demo");
    expect((await runMain(["demo-run", dir, "--steps", "200"])).code).toBe(0);
    // --wide: the first and the last line are checked whole (docs/cli.md#width).
    const text = await runMain(["diagnose", dir, "--wide"]);
    expect(text.code).toBe(1);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[1]).toMatch(/^alarms \(\d\): \[entropy_collapse\]/);
    expect(lines[lines.length - 1]).toBe(lines[1]);
    const json = await runMain(["diagnose", dir, "--json"]);
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout) as { ok: boolean; result: { alarms: { code: string }[] } };
    expect(doc.ok).toBe(false);
    expect(doc.result.alarms.map((a) => a.code)).toEqual(
      expect.arrayContaining(["entropy_collapse", "catastrophic_tokens", "ess_low", "length_bias"]),
    );
    // A healthy run: exit 0, ok true, no alarm.
    const calm = entropyRun("calm", [0, 5, 10, 15, 20], () => 1.5);
    const ok = await runMain(["diagnose", calm, "--json"]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, result: { alarms: [] } });
    // All unreadable: exit 2, empty stdout.
    const bad = tmp("bad-cli");
    mkdirSync(bad);
    writeFileSync(join(bad, "step_0.json"), "[");
    const two = await runMain(["diagnose", bad, "--json"]);
    expect([two.code, two.stdout]).toEqual([2, ""]);
  });
});
