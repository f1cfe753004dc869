/** Enforces docs/cli.md#verify: `polgrad verify` end to end. */
import { describe, expect, test } from "vitest";
import { ALGORITHM_NAMES } from "../../src/index.js";
import { type CliRun, runBin } from "./_run.js";

/** The built binary through the shared runner (every `--json` document schema-validated). */
const run = (...args: string[]): CliRun => runBin(args);

describe("polgrad verify", () => {
  test("golden: every algorithm verifies and the table names both checks", () => {
    const r = run("verify", "--all", "--cases", "2");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    for (const n of [
      "ppo",
      "grpo",
      "dr_grpo",
      "dapo",
      "gspo",
      "gspo_token",
      "cispo",
      "rloo",
      "reinforce_pp",
      "grpo_tis",
    ])
      expect(r.stdout).toMatch(new RegExp(`^${n}\\s+ok`, "m"));
    const n = ALGORITHM_NAMES.length;
    expect(n).toBe(19);
    expect(r.stdout).toContain(`verified: ${n} of ${n} configs`);
  });

  test("identity: a replayed case is the same case in json", () => {
    const a = JSON.parse(
      run("verify", "--algorithm", "dapo", "--replay", "77:3x4", "--json").stdout,
    ).result.results[0];
    const b = JSON.parse(
      run("verify", "--algorithm", "dapo", "--replay", "77:3x4", "--json").stdout,
    ).result.results[0];
    expect(a).toEqual(b);
    expect(a.gradcheck.cases).toBe(1);
  });

  test("rejects: a malformed replay token and a missing target exit 2", () => {
    for (const args of [
      ["verify", "--algorithm", "grpo", "--replay", "abc"],
      ["verify"],
      ["verify", "--all", "--seed", "-1"],
    ]) {
      const r = run(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^error\[E_USAGE\]/);
    }
  });
});
