/**
 * Enforces docs/diagnostics/run.md#threads-under-memory-limits: `polgrad diagnose RUN --json`
 * prints the same document, byte for byte, on every thread count, over a run folder holding every
 * kind of problem; a worker that runs out of memory leaves its shard to the calling thread; under
 * an address-space limit (`ulimit -v`) only the workers with room start, and nothing aborts.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { diagnoseRun } from "../../src/diagnostics/diagnoseRun.js";
import { setRunShardRunner } from "../../src/diagnostics/runThreads.js";
import { RunPool, runPool } from "../../src/node/runPool.js";
import "../../src/node/registerThreads.js";
import { BIN, runBin } from "../cli/_run.js";
import { useTmpDir } from "../io/_kit.js";

const tmp = useTmpDir();

const file = (step: number): string => `step_${String(step).padStart(6, "0")}.safetensors`;

/**
 * An 80-step demo run with every kind of problem: an empty step folder inside the run (40) and
 * past its last step (1000), a directory named like a file (12), symlink loops named like a file
 * (20) and like a step folder (60), a junk file shadowing a valid step (30), junk (70), a gap
 * (50, 51) and a file that is no step.
 */
function problemRun(name: string): string {
  const dir = tmp(name);
  writeDemoRun(dir, { steps: 80, batchSize: 6, width: 10 });
  for (const s of [12, 20, 40, 50, 51]) rmSync(join(dir, file(s)));
  mkdirSync(join(dir, "step_000040"));
  mkdirSync(join(dir, "step_1000"));
  mkdirSync(join(dir, "step_12.pt"));
  symlinkSync("step_20.safetensors", join(dir, "step_20.safetensors"));
  symlinkSync("global_step_60", join(dir, "global_step_60"));
  copyFileSync(join(dir, file(30)), join(dir, "step_30.safetensors"));
  rmSync(join(dir, file(30)));
  writeFileSync(join(dir, "step_030.json"), "junk");
  writeFileSync(join(dir, file(70)), "junk");
  writeFileSync(join(dir, "notes.txt"), "not a step");
  return dir;
}

/** `polgrad diagnose` under `ulimit -v kb` (a bash child running the built binary). */
function underLimit(kb: number, args: readonly string[]) {
  const r = spawnSync(
    "bash",
    ["-c", `ulimit -v ${kb} && exec "$0" "$@"`, process.execPath, BIN, ...args],
    { encoding: "utf8", timeout: 120_000, env: { ...process.env, NO_COLOR: "1" } },
  );
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

afterEach(() => {
  setRunShardRunner(runPool);
});

describe("run threads", () => {
  test("identity: diagnose RUN --json is byte-identical on 1, 2, 3 threads and the default, over a folder with every problem kind", () => {
    const dir = problemRun("kinds");
    const one = runBin(["diagnose", dir, "--json", "--threads", "1"]);
    expect(one.code).toBe(1);
    expect(one.stderr).toBe("");
    const doc = JSON.parse(one.stdout) as {
      result: { problems: { file: string; step: number | null }[]; steps: unknown[] };
    };
    // Before: 2 threads dropped the empty step folders beyond a shard's last step (step_1000/).
    expect(doc.result.problems.map((p) => p.file)).toEqual([
      "step_12.pt/",
      "step_20.safetensors",
      "step_030.json",
      "step_000040/",
      "steps 49..52",
      "global_step_60",
      "step_000070.safetensors",
      "steps 79..1000",
      "step_1000/",
    ]);
    expect(doc.result.steps).toHaveLength(74);
    for (const threads of [[], ["--threads", "2"], ["--threads", "3"]]) {
      const r = runBin(["diagnose", dir, "--json", ...threads]);
      expect([threads, r.code, r.stderr]).toEqual([threads, one.code, one.stderr]);
      expect(r.stdout).toBe(one.stdout);
    }
  });

  test("regression: a worker that runs out of memory leaves its shard to the calling thread, with the same report", () => {
    const dir = tmp("oom");
    writeDemoRun(dir, { steps: 40, batchSize: 6, width: 10 });
    // Step 30, in the worker's shard: a JSON step whose parse outgrows a 16 MiB worker heap.
    rmSync(join(dir, file(30)));
    const B = 16;
    const T = 40_000;
    const rows = (f: (b: number, t: number) => number) =>
      Array.from({ length: B }, (_, b) => Array.from({ length: T }, (_, t) => f(b, t)));
    const lp = rows((b, t) => -0.5 - ((b * 7 + t) % 13) / 100);
    writeFileSync(
      join(dir, "step_000030.json"),
      JSON.stringify({
        logprobs: lp,
        old_logprobs: lp,
        response_mask: rows(() => 1),
        advantages: Array.from({ length: B }, (_, b) => (b % 2 === 0 ? -1 : 1)),
      }),
    );
    const one = diagnoseRun(dir, { threads: 1 });
    const pool = new RunPool({ maxOldGenerationSizeMb: 16 });
    setRunShardRunner(pool);
    expect(diagnoseRun(dir, { threads: 2 })).toEqual(one);
    expect(pool.lostShards).toBe(1);
    expect(pool.workerShards).toBe(0);
    // With a heap that holds the step, the worker collects its shard.
    const roomy = new RunPool({ maxOldGenerationSizeMb: 512 });
    setRunShardRunner(roomy);
    expect(diagnoseRun(dir, { threads: 2 })).toEqual(one);
    expect([roomy.workerShards, roomy.lostShards]).toEqual([1, 0]);
  });

  test.skipIf(process.platform !== "linux")(
    "regression: under ulimit -v 2500000 diagnose RUN completes on every thread count with the one-thread document (it died of a V8 fatal error)",
    () => {
      const dir = problemRun("limited");
      const one = underLimit(2_500_000, ["diagnose", dir, "--json", "--threads", "1"]);
      expect([one.code, one.signal, one.stderr]).toEqual([1, null, ""]);
      expect(one.stdout).toBe(runBin(["diagnose", dir, "--json", "--threads", "1"]).stdout);
      for (const threads of [[], ["--threads", "2"], ["--threads", "3"]]) {
        const r = underLimit(2_500_000, ["diagnose", dir, "--json", ...threads]);
        expect([threads, r.code, r.signal, r.stderr]).toEqual([threads, 1, null, ""]);
        expect(r.stdout).toBe(one.stdout);
      }
      // A step the calling thread has no memory for (a 3 GiB sparse safetensors file) is listed
      // with its typed reason, on every thread count; the process does not abort.
      const big = tmp("big");
      writeDemoRun(big, { steps: 8, batchSize: 6, width: 10 });
      const n = 3 * 2 ** 27; // 3 GiB of float64
      const header = JSON.stringify({
        logprobs: { dtype: "F64", shape: [n], data_offsets: [0, 8 * n] },
      });
      const fd = openSync(join(big, "step_000008.safetensors"), "w");
      const len = new Uint8Array(8);
      new DataView(len.buffer).setBigUint64(0, BigInt(header.length), true);
      writeSync(fd, len);
      writeSync(fd, header);
      writeSync(fd, new Uint8Array(1), 0, 1, 8 + header.length + 8 * n - 1);
      closeSync(fd);
      // 1 of 9 steps unreadable is beyond the default 10 %: allowed here to see it listed.
      const lone = underLimit(2_500_000, [
        "diagnose",
        big,
        "--json",
        "--threads",
        "1",
        "--max-unreadable",
        "0.2",
      ]);
      expect([lone.signal, lone.stderr]).toEqual([null, ""]);
      const problems = (JSON.parse(lone.stdout) as { result: { problems: unknown[] } }).result
        .problems as { file: string; message: string }[];
      expect(problems.map((p) => p.file)).toEqual(["step_000008.safetensors"]);
      expect(problems[0]?.message).toMatch(/must be small enough to hold/);
      const two = underLimit(2_500_000, [
        "diagnose",
        big,
        "--json",
        "--threads",
        "2",
        "--max-unreadable",
        "0.2",
      ]);
      expect([two.code, two.stdout]).toEqual([lone.code, lone.stdout]);
    },
    180_000,
  );
});
