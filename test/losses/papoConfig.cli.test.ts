/**
 * Enforces docs/io.md#perception-block on the CLI: `polgrad loss --algorithm papo_g|papo_d
 * --config` and `--config` alone with a perception block evaluate papoLoss with those settings
 * (run in-process through test/cli/_run.ts, which validates every --json document).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runMain } from "../cli/_run.js";

const dir = mkdtempSync(join(tmpdir(), "polgrad-papo-cli-"));
const batchPath = join(dir, "papo.json");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * B = 1, T = 3, last position padding. old = lp (ratio 1), A = 1, lpm − lp = [3, 0, 0] (the
 * perception terms of papoConfig.presets.test.ts), and ref − lp = [1, 0, 0], so the parent's k3
 * KL per token is [e¹ − 1 − 1, 0] = [e − 2, 0].
 */
const BATCH = {
  logprobs: [[-4, -1, -1]],
  old_logprobs: [[-4, -1, -1]],
  ref_logprobs: [[-3, -1, -1]],
  advantages: [1],
  response_mask: [[1, 1, 0]],
  masked_logprobs: [[-1, -1, -1]],
  entropies: [[1, 3, 0]],
  masked_entropies: [[2, 2, 0]],
};

beforeAll(() => writeFileSync(batchPath, JSON.stringify(BATCH)));

interface Doc {
  readonly loss: number;
  readonly policy_loss: number;
  readonly perception_term: number;
  readonly entropy_term: number | null;
  readonly grad_logprobs: number[][];
  readonly form: string;
  readonly algorithm?: string;
  readonly config: { readonly kl: { readonly coef: number } | null };
  readonly perception: Record<string, unknown>;
}

async function loss(...args: string[]): Promise<Doc> {
  const r = await runMain(["loss", ...args, "--batch", batchPath, "--json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).result as Doc;
}

describe("polgrad loss with a perception block", () => {
  test("golden: trl preset's beta 0 vs beta 0.04 changes the loss by the derived kl term", async () => {
    const b0 = await loss(
      "--algorithm",
      "papo_g",
      "--config",
      '{"perception":{"preset":"trl_v0_29_1"}}',
    );
    const b4 = await loss(
      "--algorithm",
      "papo_g",
      "--config",
      '{"perception":{"preset":"trl_v0_29_1","beta":0.04}}',
    );
    // β 0 (TRL's default): no KL term. Parent −1; γ·P = 0.1·0.2/3; E = 0.08 (presets test).
    expect(b0.config.kl).toBeNull();
    expect(b0.perception).toMatchObject({ preset: "trl_v0_29_1", beta: 0, form: "trl" });
    expect(b0.policy_loss).toBe(-1);
    expect(b0.loss).toBeCloseTo(-1 - 0.02 / 3 + 0.08, 15);
    // β 0.04: + β·seq_mean_token_mean(k3) = 0.04·((e − 2) + 0)/2 = 0.02·(e − 2) = 0.014365636…
    const klTerm = 0.02 * (Math.E - 2);
    expect(b4.config.kl?.coef).toBe(0.04);
    expect(b4.policy_loss).toBeCloseTo(-1 + klTerm, 15);
    expect(b4.loss - b0.loss).toBeCloseTo(klTerm, 15);
    // The PAPO terms do not move with β.
    expect(b4.perception_term).toBe(b0.perception_term);
    expect(b4.entropy_term).toBe(b0.entropy_term);
    // ∂(β·k3)/∂lp = −β·w·(e^δ − 1) = −0.04·(1/2)·(e − 1) at t = 0, 0 at t = 1 (δ = 0).
    const [g0, g4] = [b0.grad_logprobs[0] ?? [], b4.grad_logprobs[0] ?? []];
    expect((g4[0] as number) - (g0[0] as number)).toBeCloseTo(-0.02 * (Math.E - 1), 15);
    expect(g4[1]).toBe(g0[1]);
    // The registered trl form keeps grpo's KL at 0.04: bitwise the β 0.04 run.
    const registered = await loss("--algorithm", "papo_g", "--papo-form", "trl");
    expect(registered.loss).toBe(b4.loss);
    expect(registered.grad_logprobs).toEqual(b4.grad_logprobs);
    expect(registered.perception).toMatchObject({ preset: null, beta: null });
  });

  test("golden: --config alone with a parent and a perception block, inline and @file", async () => {
    const cfg = {
      ratio: "token",
      surrogate: "pg_clip",
      clip: { eps_low: 0.2, eps_high: 0.28 },
      aggregation: "token_mean",
      perception: { preset: "official_papo_d" },
    };
    const inline = await loss("--config", JSON.stringify(cfg));
    // dapo-like parent without KL, official_papo_d: loss = −1 − 0.05 + 0.105 = −0.945 (presets test).
    expect(inline.algorithm).toBeUndefined();
    expect(inline.form).toBe("official");
    expect(inline.config.kl).toBeNull();
    expect(inline.loss).toBeCloseTo(-0.945, 15);
    const file = join(dir, "cfg.json");
    writeFileSync(file, JSON.stringify(cfg));
    const fromFile = await loss("--config", `@${file}`);
    expect(fromFile.loss).toBe(inline.loss);
    const text = await runMain(["loss", "--config", `@${file}`, "--batch", batchPath, "--wide"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("(official form)");
    expect(text.stdout).toContain(
      "γ 0.01, clamp none, η1 0.03, η2 0.03, KL none (the parent's); preset official_papo_d",
    );
  });

  test("rejects: unknown keys, --papo-form beside --config, parent keys beside --algorithm", async () => {
    const cases: readonly (readonly [readonly string[], string, string])[] = [
      [
        [
          "--algorithm",
          "papo_g",
          "--config",
          '{"perception":{"preset":"trl_v0_29_1","gamma":0.05}}',
        ],
        "E_CONFIG",
        'did you mean \\"perception_loss_weight\\"',
      ],
      [
        [
          "--algorithm",
          "papo_d",
          "--papo-form",
          "trl",
          "--config",
          '{"perception":{"preset":"trl_v0_29_1"}}',
        ],
        "E_USAGE",
        "--papo-form must not come with --config",
      ],
      [
        [
          "--algorithm",
          "papo_g",
          "--config",
          '{"ratio":"token","perception":{"preset":"trl_v0_29_1"}}',
        ],
        "E_CONFIG",
        "the parent's settings come from papo_g",
      ],
      [
        ["--algorithm", "papo_g", "--config", '{"perception":{"preset":"trl_v0_29_1","beta":-1}}'],
        "E_CONFIG",
        "config.perception.beta must be a finite number >= 0",
      ],
      [["--algorithm", "grpo", "--config", '{"perception":{}}'], "E_USAGE", "exactly one of"],
    ];
    for (const [args, code, text] of cases) {
      const r = await runMain(["loss", ...args, "--batch", batchPath, "--json"]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(JSON.parse(r.stderr)).toMatchObject({ ok: false, error: { code } });
      expect(r.stderr).toContain(text);
    }
  });
});
