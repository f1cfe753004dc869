/**
 * `polgrad explain` on the forms users have (issue 33, point 4), through the CLI: a launch script
 * as shipped, TRL's `--config FILE` named by a launch command, and what the built-in batch lacks.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { runMain } from "./_run.js";

function folder(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), "polgrad-forms-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(d, name, ".."), { recursive: true });
    writeFileSync(join(d, name), text);
  }
  return d;
}

describe("explain on the forms users have", () => {
  test("golden: accelerate launch … grpo.py --config FILE reads FILE beside the launch, the arguments override it, and --num_processes is the world", async () => {
    const d = folder({
      "recipes/grpo.yaml": "loss_type: dr_grpo\nbeta: 0.02\nbeta: 0.05\noutput_dir: out\n",
      "launch.sh":
        "accelerate launch --num_processes 7 examples/scripts/grpo_vlm.py --config recipes/grpo.yaml --beta 0.01\n",
    });
    const run = await runMain([
      "explain",
      "--framework",
      "trl@v1.9.0",
      "--config",
      join(d, "launch.sh"),
      "--json",
    ]);
    expect(run.stderr).toBe("");
    const r = JSON.parse(run.stdout).result;
    const v = (k: string) => r.settings.find((s: { key: string }) => s.key === k);
    expect(v("loss_type")).toMatchObject({ value: "dr_grpo", source: "user" });
    // TRL's parser: the file's keys are defaults, the command line's --beta overrides them.
    expect(v("beta").value).toBe(0.01);
    expect(v("num_processes").value).toBe(7);
    expect(r.ignored.map((x: { key: string }) => x.key)).toEqual(["output_dir"]);
    expect(r.warnings.map((w: { code: string }) => w.code)).toContain("config-duplicate-key");
  });

  test("rejects: TRL's --config naming a missing file is one usage error naming both places looked in", async () => {
    const d = folder({ "launch.txt": "trl grpo --config missing.yaml\n" });
    const run = await runMain([
      "explain",
      "--framework",
      "trl@v1.9.0",
      "--config",
      join(d, "launch.txt"),
    ]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`looked for "${join(d, "missing.yaml")}" and "missing.yaml"`);
  });

  test("golden: a verl launch script as shipped is explained, with the built-in batch fitted to its micro-batches and entropy bonus", async () => {
    const d = folder({
      "run.sh": `#!/usr/bin/env bash
set -xeuo pipefail
micro=\${MICRO:-6}
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=$micro \\
    actor_rollout_ref.actor.entropy_coeff=0.001 \\
    trainer.logger='["console","wandb"]' $@ 2>&1 | tee log.txt
`,
    });
    const run = await runMain([
      "explain",
      "--framework",
      "verl@v0.7.1",
      "--config",
      join(d, "run.sh"),
      "--json",
    ]);
    expect(run.stderr).toBe("");
    const ev = JSON.parse(run.stdout).result.evaluation;
    // lcm(4, 6) = 12 rows: two micro-batches of 6; entropies synthesised.
    expect(ev.micro_batches).toHaveLength(2);
    expect(ev.notes).toHaveLength(2);
    expect(ev.notes[0]).toContain("tiled to B = 12");
  });
});
