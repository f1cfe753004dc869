/**
 * Enforces docs/diagnostics/run.md#sharding-a-run: a run diagnosed in step ranges and merged gives
 * the report of one pass (library and CLI, through the summary files), and parts that overlap or
 * were collected with other settings are refused.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { collectRunSteps, diagnoseRun, summarizeRun } from "../../src/diagnostics/diagnoseRun.js";
import { ConfigError } from "../../src/errors.js";
import { runPool } from "../../src/node/runPool.js";
import "../../src/node/registerThreads.js";
import { runMain } from "../cli/_run.js";
import { useTmpDir } from "../io/_kit.js";

const tmp = useTmpDir();

/** A 40-step demo run with a missing dump (step 17) and an unreadable one (step 25). */
function run(name: string): string {
  const dir = tmp(name);
  writeDemoRun(dir, { steps: 40, batchSize: 6, width: 10 });
  rmSync(join(dir, "step_000017.safetensors"));
  writeFileSync(join(dir, "step_000025.safetensors"), "junk");
  return dir;
}

describe("run shards", () => {
  test("identity: a run diagnosed in shards and merged equals the run diagnosed at once", async () => {
    const dir = run("shards");
    const whole = diagnoseRun(dir, { window: 20 });
    const parts = [
      collectRunSteps(dir, { steps: { from: 20, to: 39 } }),
      collectRunSteps(dir, { steps: { from: 0, to: 9 } }),
      collectRunSteps(dir, { steps: { from: 10, to: 19 } }),
    ];
    // The merge is exact whatever the parts' order; the gap at 17 and the bad step 25 included.
    expect(summarizeRun(parts, { window: 20 })).toEqual(whole);
    expect(whole.problems.map((p) => p.file)).toEqual(["steps 16..18", "step_000025.safetensors"]);
    // Through the command line and the summary files (JSON, snake_case) as well.
    const a = `${join(tmp("a"))}.json`;
    const b = `${join(tmp("b"))}.json`;
    expect((await runMain(["diagnose", dir, "--steps", "0-22", "--summary-out", a])).code).toBe(0);
    expect((await runMain(["diagnose", dir, "--steps", "23-39", "--summary-out", b])).code).toBe(0);
    const merged = await runMain(["diagnose", "--merge", b, a, "--window", "20", "--json"]);
    const once = await runMain(["diagnose", dir, "--window", "20", "--json"]);
    expect(merged.code).toBe(once.code);
    expect(merged.stdout).toBe(once.stdout);
  });

  test("identity: diagnoseRun on 2 and 3 threads equals the one-thread report, and the workers ran", async () => {
    // The workers run the built library (dist/node/runWorker.js), which npm test builds first.
    const dir = run("threads");
    const before = runPool.workerShards;
    const one = diagnoseRun(dir, { window: 20, threads: 1 });
    let ticks = 0;
    expect(diagnoseRun(dir, { window: 20, threads: 2 }, () => ticks++)).toEqual(one);
    expect(diagnoseRun(dir, { window: 20, threads: 3 })).toEqual(one);
    expect(runPool.workerShards).toBeGreaterThan(before);
    // Progress counts the steps of every thread: 39 entries, 38 readable (25 is junk) at least.
    expect(ticks).toBeGreaterThan(0);
    const cli1 = await runMain(["diagnose", dir, "--window", "20", "--threads", "1", "--json"]);
    const cli3 = await runMain(["diagnose", dir, "--window", "20", "--threads", "3", "--json"]);
    expect(cli3.code).toBe(cli1.code);
    expect(cli3.stdout).toBe(cli1.stdout);
    expect(() => diagnoseRun(dir, { threads: 0 })).toThrow(
      /options\.threads must be a positive integer/,
    );
  });

  test("rejects: overlapping shards and shards collected with other settings", () => {
    const dir = run("bad-shards");
    const p = collectRunSteps(dir, { steps: { from: 0, to: 19 } });
    const q = collectRunSteps(dir, { steps: { from: 10, to: 39 } });
    expect(() => summarizeRun([p, q])).toThrow(ConfigError);
    const r = collectRunSteps(dir, { steps: { from: 20, to: 39 }, catastrophicGap: 3 });
    expect(() => summarizeRun([p, r])).toThrow(/collected with the same per-step settings/);
    expect(() => collectRunSteps(dir, { steps: { from: 5, to: 2 } })).toThrow(ConfigError);
    expect(() => summarizeRun([])).toThrow(ConfigError);
  });
});
