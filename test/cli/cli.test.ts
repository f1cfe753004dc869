/**
 * Enforces docs/cli.md: the built binary's stdout, stderr and exit codes, separately. stdout
 * carries only the result; every user mistake exits 2 with one `error[E_…]` line on stderr and an
 * empty stdout. Requires `npm run build` (the test script runs it first). The binary runs through
 * the shared runner (./_run.ts), which validates every `--json` document against its schema.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { ALGORITHM_NAMES, DEVIATIONS, policyLoss } from "../../src/index.js";
import { CLI_BATCH } from "./_batch.js";
import { type CliRun, runBin } from "./_run.js";

const dir = mkdtempSync(join(tmpdir(), "polgrad-cli-"));

const run = (...args: string[]): CliRun => runBin(args);

const batch = CLI_BATCH;
const batchPath = join(dir, "batch.json");
const cfg = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { eps_low: 0.2, eps_high: 0.28 },
  aggregation: "seq_mean_token_mean",
  kl: { kind: "k3", coef: 0.04 },
};

beforeAll(() => {
  writeFileSync(batchPath, JSON.stringify(batch));
  writeFileSync(join(dir, "cfg.json"), JSON.stringify(cfg));
  writeFileSync(join(dir, "broken.json"), '{"logprobs": [[-0.2, -1.0]');
  writeFileSync(join(dir, "trunc.safetensors"), Buffer.from([1, 2, 3]));
});

const expected = policyLoss(
  {
    ratio: "token",
    surrogate: "pg_clip",
    clip: { epsLow: 0.2, epsHigh: 0.28 },
    aggregation: "seq_mean_token_mean",
    kl: { kind: "k3", coef: 0.04 },
  },
  {
    logprobs: [
      [-0.2, -1.0, -0.7],
      [-0.5, Number.NaN, 123],
    ],
    oldLogprobs: [
      [-0.5, -0.7, -0.9],
      [-0.6, Number.POSITIVE_INFINITY, 123],
    ],
    refLogprobs: [
      [-0.4, -1.1, -0.6],
      [-0.3, 0, 0],
    ],
    advantages: [1.5, -0.8],
    responseMask: batch.response_mask,
  },
);

describe("polgrad cli", () => {
  test("golden: which prints the four losses of polgrad's table", () => {
    const r = run("which");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    for (const s of [
      "0.24038972",
      "0.51717388",
      "0.32323368",
      "0.15429390",
      "0.19568",
      "0.29263",
      "0.46821",
      "0.04892",
      "0.19550",
    ])
      expect(r.stdout).toContain(s);
  });

  test("golden: which --json is one document with snake_case keys", () => {
    const r = run("which", "--json");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ schema_version: 1, command: "which", ok: true });
    expect(doc.result.rows[0].grad_mass).toHaveLength(4);
    expect(doc.result.rows.slice(0, 4).map((x: { loss: number }) => x.loss.toFixed(8))).toEqual([
      "0.24038972",
      "0.51717388",
      "0.32323368",
      "0.15429390",
    ]);
  });

  test("golden: loss on a json batch prints the loss at full precision", () => {
    const r = run("loss", "--config", `@${join(dir, "cfg.json")}`, "--batch", batchPath);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(`loss          ${expected.loss}\n`);
  });

  test("identity: loss --json round-trips every field of the library result", () => {
    const r = run("loss", "--config", JSON.stringify(cfg), "--batch", batchPath, "--json");
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout).result;
    expect(res.loss).toBe(expected.loss);
    expect(res.kl_loss).toBe(expected.klLoss);
    expect(res.grad_logprobs.flat()).toEqual(Array.from(expected.gradLogprobs.data));
    expect(res.ratio[1]).toEqual([Array.from(expected.ratio.data)[3], 1, 1]);
    expect(res.clipped_high).toHaveLength(2);
    expect(res.config.clip).toEqual({ eps_low: 0.2, eps_high: 0.28, ratio_cap: null });
  });

  test("golden: algorithms and describe list the registry", () => {
    const a = run("algorithms");
    expect(a.code).toBe(0);
    for (const n of [
      "cispo",
      "dapo",
      "dr_grpo",
      "grpo",
      "grpo_tis",
      "gspo",
      "gspo_token",
      "ppo",
      "reinforce_pp",
      "rloo",
    ])
      expect(a.stdout).toContain(n);
    const d = run("describe", "dapo");
    expect(d.code).toBe(0);
    expect(d.stdout).toContain("eps_high=0.28");
    expect(JSON.parse(run("algorithms", "--json").stdout).result).toHaveLength(
      ALGORITHM_NAMES.length,
    );
  });

  test("rejects: an unknown command exits 2 with a suggestion and empty stdout", () => {
    const r = run("wihch");
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^error\[E_USAGE\]: .*did you mean 'which'/);
  });

  test("rejects: bad input exits 2 with one error on stderr and nothing on stdout", () => {
    const cases: [string[], string][] = [
      [["describe", "gropo"], "E_UNKNOWN_NAME"],
      [["loss", "--algorithm", "grpo"], "E_USAGE"],
      [["loss", "--batch", batchPath], "E_USAGE"],
      [["loss", "--config", "{not json", "--batch", batchPath], "E_USAGE"],
      [
        [
          "loss",
          "--config",
          '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_hihg":0.2},"aggregation":"token_mean"}',
          "--batch",
          batchPath,
        ],
        "E_CONFIG",
      ],
      [["loss", "--algorithm", "dr_grpo", "--batch", batchPath], "E_CONFIG"],
      [["loss", "--algorithm", "dapo", "--batch", join(dir, "missing.json")], "E_IO"],
      [["loss", "--algorithm", "dapo", "--batch", join(dir, "broken.json")], "E_IO"],
      [["loss", "--algorithm", "dapo", "--batch", join(dir, "trunc.safetensors")], "E_IO"],
      [["which", "--norm-len", "0"], "E_USAGE"],
      [["loss", "--algorithm", "papo_g", "--batch", batchPath], "E_IO"],
      [["loss", "--algorithm", "papo_d", "--papo-form", "best", "--batch", batchPath], "E_USAGE"],
      [["which", "--bogus"], "E_USAGE"],
    ];
    for (const [args, code] of cases) {
      const r = run(...args);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr, args.join(" ")).toMatch(new RegExp(`^error\\[${code}\\]: `));
      expect(r.stderr, args.join(" ")).not.toMatch(/\n\s+at /);
    }
  });

  test("rejects: under --json the error is one json line on stderr", () => {
    const r = run("describe", "gropo", "--json");
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(JSON.parse(r.stderr)).toMatchObject({ ok: false, error: { code: "E_UNKNOWN_NAME" } });
  });
});

describe("polgrad loss with papo", () => {
  test("identity: --algorithm papo_g evaluates papoLoss with the masked-image stream", async () => {
    const { papoLoss, readBatch } = await import("../../src/index.js");
    const { papoGLoss } = await import("../../src/registry/algorithms/papoG.js");
    const file = join(dir, "papo.json");
    writeFileSync(
      file,
      JSON.stringify({
        ...batch,
        masked_logprobs: [
          [-0.4, -1.3, -0.5],
          [-0.9, 0, 0],
        ],
      }),
    );
    const r = run("loss", "--algorithm", "papo_g", "--batch", file, "--json");
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout).result;
    const b = readBatch(file);
    const direct = papoLoss(papoGLoss, { ...b, maskedLogprobs: b.maskedLogprobs! });
    expect(res.loss).toBe(direct.loss);
    expect(res.grad_masked_logprobs.flat()).toEqual(Array.from(direct.gradMaskedLogprobs.data));
    expect(res.form).toBe("official");
  });
});

describe("polgrad conformance commands", () => {
  test("golden: frameworks lists every model and deviations measures every entry", () => {
    const f = run("frameworks", "--json");
    expect(f.code).toBe(0);
    const ids = JSON.parse(f.stdout).result.map((m: { id: string }) => m.id);
    expect(ids).toContain("verl@1dda039b:vanilla:seq-mean-token-mean");
    expect(ids).toContain("trl@v1.8.0:dapo:token");
    const d = run("deviations");
    expect(d.code).toBe(0);
    // Every registered deviation is measured: the count line is the registry's length (15 now).
    expect(DEVIATIONS.length).toBeGreaterThanOrEqual(15);
    expect(d.stdout).toMatch(new RegExp(`^${DEVIATIONS.length} deviations$`, "m"));
    expect(d.stdout).toContain("measured: ");
  });

  test("identity: loss --framework evaluates a model with the same document shape", () => {
    const r = run(
      "loss",
      "--framework",
      "verl@1dda039b:seq-mean-token-mean",
      "--batch",
      batchPath,
      "--json",
    );
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout).result;
    expect(res.framework.id).toBe("verl@1dda039b:vanilla:seq-mean-token-mean");
    expect(res.grad_logprobs).toHaveLength(2);
    expect(typeof res.loss).toBe("number");
    const bad = run(
      "loss",
      "--framework",
      "verl@1dda039b:seq-mean-tokn-mean",
      "--batch",
      batchPath,
    );
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/^error\[E_UNKNOWN_NAME\]/);
  });
});
