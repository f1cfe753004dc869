/**
 * Enforces docs/contracts.md#command-line: `polgrad contracts` lists the registry, and
 * `polgrad contract reduce` prints the measured differences and the verdict with exit 0 (holds)
 * or 1 (violated); bad input is a PolgradError, which the CLI maps to exit 2. Successful runs go
 * through the CLI's `main` by the shared runner test/cli/_run.ts (which validates every `--json`
 * document against its schema); the rejections call the command action directly with a capturing
 * IO, to see the thrown error's class and `arg` (the dispatch lives in src/cli/main.ts).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { runContractReduce } from "../../src/cli/commands/contractReduce.js";
import { REDUCTION_NAMES } from "../../src/contracts/index.js";
import { IoError, PolgradError, UsageError } from "../../src/index.js";
import { CLI_BATCH } from "../cli/_batch.js";
import { runMain } from "../cli/_run.js";

const dir = mkdtempSync(join(tmpdir(), "polgrad-contracts-"));
function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(content));
  return p;
}
function capture(): {
  io: { stdout: (t: string) => void; stderr: (t: string) => void };
  out: () => string;
} {
  let out = "";
  const stdout = (t: string): void => {
    out += t;
  };
  return { io: { stdout, stderr: () => undefined }, out: () => out };
}

const base = {
  ...CLI_BATCH,
  rollout_logprobs: [
    [-0.45, -0.8, -0.95],
    [-0.55, 0, 0],
  ],
};

describe("contracts", () => {
  test("golden: lists every registered reduction in text and json", async () => {
    const text = await runMain(["contracts"]);
    expect(text.code).toBe(0);
    for (const name of REDUCTION_NAMES) expect(text.stdout).toContain(name);
    expect(text.stdout).toContain("loss bitwise, gradient within tolerance");
    const json = await runMain(["contracts", "--json"]);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ schema_version: 1, command: "contracts", ok: true });
    expect(doc.result.map((c: { name: string }) => c.name)).toEqual(REDUCTION_NAMES);
    expect(doc.result[4].parent.config.clip).toEqual({
      eps_low: 0.2,
      eps_high: 0.2,
      ratio_cap: null,
    });
  });
});

describe("contract reduce", () => {
  test("golden: a policy-loss batch file holds and exits 0", async () => {
    const c = await runMain([
      "contract",
      "reduce",
      "tis_token_to_none",
      "--batch",
      file("b.json", base),
      "--precision",
      "bf16",
    ]);
    expect(c.code).toBe(0);
    expect(c.stdout).toContain("contract tis_token_to_none:");
    expect(c.stdout).toContain("imposed    rolloutLogprobs := oldLogprobs");
    expect(c.stdout).toMatch(/loss {7}parent .* difference 0 \(required exactly 0/);
    expect(c.stdout).toMatch(/verdict: holds\n$/);
  });

  test("golden: a papo batch file with masked_logprobs holds and exits 0", async () => {
    const papo = {
      ...base,
      masked_logprobs: [
        [-0.9, -0.4, -1.2],
        [-0.1, 0, 0],
      ],
    };
    const c = await runMain([
      "contract",
      "reduce",
      "papo_g_to_grpo",
      "--batch",
      file("p.json", papo),
      "--precision",
      "fp32",
      "--json",
    ]);
    expect(c.code).toBe(0);
    const doc = JSON.parse(c.stdout);
    expect(doc).toMatchObject({
      command: "contract reduce",
      ok: true,
      result: { contract: "papo_g_to_grpo", verdict: "holds" },
    });
    expect(doc.result.loss.difference).toBe(0);
    expect(doc.result.gradients.map((g: { stream: string }) => g.stream)).toEqual([
      "logprobs",
      "masked_logprobs",
    ]);
    expect(doc.result.calibration.precision).toBe("fp32");
  });

  test("golden: a ratio above the 1e300 stand-in for ∞ breaks dual_clip_to_pg_clip and exits 1", async () => {
    // logprobs − oldLogprobs = 700 gives r = e^700 ≈ 1.0e304 > 1e300: with A < 0 the cap fires.
    const far = {
      ...base,
      old_logprobs: [
        [-700.2, -0.7, -0.9],
        [-0.6, 0, 0],
      ],
      advantages: [-1.5, -0.8],
    };
    const c = await runMain([
      "contract",
      "reduce",
      "dual_clip_to_pg_clip",
      "--batch",
      file("f.json", far),
      "--precision",
      "fp64",
    ]);
    expect(c.code).toBe(1);
    expect(c.stdout).toContain("VIOLATED");
    expect(c.stdout).toMatch(/verdict: violated\n$/);
  });

  test("rejects: a masked_logprobs tensor of the wrong shape exits 2", async () => {
    const bad = { ...base, masked_logprobs: [[-0.9, -0.4]] };
    const run = runContractReduce(
      { batch: file("s.json", bad), precision: "bf16" },
      ["papo_d_to_dapo"],
      capture().io,
    );
    await expect(run).rejects.toBeInstanceOf(IoError);
    await expect(
      runContractReduce(
        { batch: file("s.json", bad), precision: "bf16" },
        ["papo_d_to_dapo"],
        capture().io,
      ),
    ).rejects.toMatchObject({ code: "E_IO", arg: "masked_logprobs" });
  });

  test("rejects: a missing name, batch or precision, or an unmet condition in strict mode, exits 2", async () => {
    const b = file("b.json", base);
    const cases: [Record<string, string | boolean>, string[], string | undefined][] = [
      [{ batch: b, precision: "bf16" }, [], "NAME"],
      [{ precision: "bf16" }, ["tis_token_to_none"], "--batch"],
      [{ batch: b, precision: "bf17" }, ["tis_token_to_none"], "--precision"],
      [{ batch: b }, ["tis_token_to_none"], "--precision"],
    ];
    for (const [values, positionals, arg] of cases) {
      await expect(runContractReduce(values, positionals, capture().io)).rejects.toMatchObject({
        code: "E_USAGE",
        arg,
      });
    }
    await expect(
      runContractReduce({ batch: b, precision: "bf16" }, ["tis_tokn_to_none"], capture().io),
    ).rejects.toMatchObject({ code: "E_UNKNOWN_NAME" });
    const strict = runContractReduce(
      { batch: b, precision: "bf16", strict: true },
      ["tis_token_to_none"],
      capture().io,
    );
    await expect(strict).rejects.toMatchObject({ code: "E_CONFIG", arg: "rolloutLogprobs" });
    await expect(
      runContractReduce(
        { batch: b, precision: "bf16", strict: true },
        ["tis_token_to_none"],
        capture().io,
      ),
    ).rejects.toBeInstanceOf(PolgradError);
    expect(UsageError).toBeDefined();
  });
});
