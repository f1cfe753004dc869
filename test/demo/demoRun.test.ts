/** Enforces docs/diagnostics/run.md#demo-run: the synthetic run's files and injections. */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { demoRunPlan, writeDemoRun } from "../../src/demo/demoRun.js";
import { ConfigError, readTensors } from "../../src/index.js";

describe("writeDemoRun", () => {
  test("golden: the schedule's injections are in the written files", () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-demo-"));
    const { plan } = writeDemoRun(dir, { steps: 20, batchSize: 4, width: 8 });
    // Defaults scale with the run: changepoint at round(0.7·20) = 14, catastrophes from round(0.95·20) = 19.
    expect([plan.changepointStep, plan.catastrophicFrom]).toEqual([14, 19]);
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(20);
    expect(files[0]).toBe("step_000000.safetensors");
    const gapAt = (step: number, i: number) => {
      const t = readTensors(join(dir, files[step]!));
      const get = (n: string) => t.tensors.get(n)!.data;
      return (get("old_logprobs")[i] as number) - (get("rollout_logprobs")[i] as number);
    };
    // (0, 0) and (1, 1) = flat index 9 with T = 8: the rollout is 7 lower from step 19 on.
    expect(gapAt(19, 0)).toBeGreaterThan(6);
    expect(gapAt(19, 9)).toBeGreaterThan(6);
    expect(Math.abs(gapAt(18, 0))).toBeLessThan(1);
  });

  test("identity: a seed replays the run byte for byte", () => {
    const a = mkdtempSync(join(tmpdir(), "polgrad-demo-"));
    const b = mkdtempSync(join(tmpdir(), "polgrad-demo-"));
    writeDemoRun(a, { steps: 3, batchSize: 3, width: 5, seed: 9 });
    writeDemoRun(b, { steps: 3, batchSize: 3, width: 5, seed: 9 });
    for (const f of readdirSync(a))
      expect(readFileSync(join(a, f)).equals(readFileSync(join(b, f)))).toBe(true);
  });

  test("rejects: a run shorter than two steps or a batch below three rows", () => {
    expect(() => demoRunPlan({ steps: 1 })).toThrow(ConfigError);
    expect(() => demoRunPlan({ batchSize: 2 })).toThrow(ConfigError);
    expect(() => demoRunPlan({ width: 4, minLength: 5 })).toThrow(ConfigError);
  });
});
