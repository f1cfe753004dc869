/** Enforces docs/diagnostics/run.md: demo-run and diagnose end to end. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { type CliRun, runBin } from "./_run.js";

/** The built binary through the shared runner (every `--json` document schema-validated). */
const run = (...args: string[]): CliRun => runBin(args);

describe("polgrad diagnose", () => {
  test("golden: demo-run then diagnose reports every injection and exits 1", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "polgrad-cli-run-")), "run");
    const w = run("demo-run", dir);
    expect(w.code).toBe(0);
    expect(w.stderr).toBe("");
    // --wide: the lines are checked whole (docs/cli.md#width).
    const d = run("diagnose", dir, "--wide");
    expect(d.code).toBe(1);
    // Not a terminal: no progress bar.
    expect(d.stderr).toBe("");
    expect(d.stdout).toContain("200 step(s) diagnosed");
    expect(d.stdout).toMatch(/changepoint after step 1(3[6-9]|4[0-2])/);
    expect(d.stdout).toContain("at positions (0, 0), (1, 1)");
    expect(d.stdout).toMatch(/at step 0 slope [^;]* covers 0; at step 199 slope [^;]* excludes 0/);
    const j = JSON.parse(run("diagnose", dir, "--json").stdout);
    expect(j.result.catastrophic.positions).toEqual([
      [0, 0],
      [1, 1],
    ]);
    expect(j.result.series.ess_ratio.first.value).toBeGreaterThan(0.95);
  });

  test("golden: one batch file runs every detector it can", () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-cli-b-"));
    const file = join(dir, "b.json");
    writeFileSync(
      file,
      JSON.stringify({
        old_logprobs: [
          [-1, -2],
          [-0.5, 0],
        ],
        rollout_logprobs: [
          [-1.1, -2],
          [-0.4, 0],
        ],
        response_mask: [
          [1, 1],
          [1, 0],
        ],
      }),
    );
    const r = run("diagnose", file);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("logprob mismatch");
    expect(r.stdout).toContain("skipped ess: needs logprobs");
  });

  test("rejects: a missing path, a bad clip band and an unknown aggregation exit 2", () => {
    for (const args of [
      ["diagnose", "/nonexistent/x.json"],
      ["diagnose", "/tmp", "--clip", "0.2"],
      ["diagnose", "/tmp", "--agg", "tokenmean"],
      ["demo-run"],
    ]) {
      const r = run(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^error\[E_/);
    }
  });
});
