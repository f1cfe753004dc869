/**
 * The vectors round trip end to end (issue 15): `polgrad vectors emit`, then the PyTorch script of
 * docs/vectors.md (taken from the page, so the page cannot drift from what is tested) run by a
 * python3 that imports torch, then `polgrad vectors check`. Skipped, with the reason printed, where
 * no python3 imports torch (scripts/install-test-tools.sh installs Debian's python3-torch).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runMain } from "../cli/_run.js";

function torchPython(): string | null {
  for (const py of [process.env.POLGRAD_PYTHON, "/usr/bin/python3", "python3"]) {
    if (py === undefined || py === "") continue;
    const r = spawnSync(py, ["-c", "import torch"], { encoding: "utf8", timeout: 120_000 });
    if (r.status === 0) return py;
  }
  return null;
}
const PYTHON = torchPython();
if (PYTHON === null)
  console.log(
    "test/conformance/vectorsTorch.test.ts: skipped: no python3 can `import torch` (tried $POLGRAD_PYTHON, /usr/bin/python3, python3)",
  );

/** The one ```python block of docs/vectors.md. */
function documentedScript(): string {
  const page = readFileSync(
    fileURLToPath(new URL("../../docs/vectors.md", import.meta.url)),
    "utf8",
  );
  const blocks = [...page.matchAll(/```python\n([\s\S]*?)```/g)];
  expect(blocks).toHaveLength(1);
  return (blocks[0] as RegExpMatchArray)[1] as string;
}

describe("vectors round trip", () => {
  it.skipIf(PYTHON === null)(
    "conformance: emit, the documented PyTorch script, check: the script conforms and its planted token mean fails with the diagnosis",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "polgrad-vectors-"));
      const vec = join(dir, "vectors");
      const script = join(dir, "my_check.py");
      writeFileSync(script, documentedScript());
      const emitted = await runMain([
        "vectors",
        "emit",
        "--algorithm",
        "grpo",
        "--cases",
        "12",
        "--out",
        vec,
      ]);
      expect(emitted.code).toBe(0);
      const run = (out: string, ...extra: string[]) => {
        const r = spawnSync(PYTHON as string, [script, vec, out, ...extra], {
          encoding: "utf8",
          timeout: 300_000,
        });
        expect(r.stderr).toBe("");
        expect(r.status).toBe(0);
      };
      run(join(dir, "outputs.safetensors"));
      const good = await runMain([
        "vectors",
        "check",
        vec,
        "--outputs",
        join(dir, "outputs.safetensors"),
        "--json",
      ]);
      expect(good.code).toBe(0);
      const report = JSON.parse(good.stdout).result.check;
      expect(report.conforms).toBe(true);
      // torch's autograd and polgrad's closed forms: two derivations, equal to rounding.
      expect(report.max_loss_rel_diff).toBeLessThan(1e-13);
      expect(report.max_grad_rel_diff).toBeLessThan(1e-12);
      run(join(dir, "wrong.safetensors"), "token_mean");
      const bad = await runMain([
        "vectors",
        "check",
        vec,
        "--outputs",
        join(dir, "wrong.safetensors"),
        "--wide",
      ]);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/^DOES NOT CONFORM: 12 cases/);
      expect(bad.stdout).toContain(
        "diagnosis: the implementation matches the reference with aggregation token_mean (reference seq_mean_token_mean)",
      );
    },
    600_000,
  );
});
