/**
 * Enforces the CLI contract of docs/cli.md as one table over every command and every option
 * (read from COMMANDS, so a new option fails here until it has a row): exit 0 on success, 1 on
 * a failed check, 2 on a usage or input error; stdout only results and empty on error; stderr
 * exactly one `error[E_…]` line plus `Hint:` lines; every `--json` document validates against its
 * schema (test/cli/_run.ts). Most rows run `main()` in-process; a representative subset and the
 * output-stream cases (EPIPE, ENOSPC) run the built binary.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import { CLI_BATCH } from "./_batch.js";
import {
  BIN,
  type CliRun,
  contractViolations,
  runBin,
  runMain,
  validateDocuments,
} from "./_run.js";

const dir = mkdtempSync(join(tmpdir(), "polgrad-contract-"));
const fx = fileURLToPath(new URL("../fixtures/python/", import.meta.url));
const F = {
  batch: join(dir, "batch.json"),
  papo: join(dir, "papo.json"),
  big: join(dir, "big.json"),
  cfg: join(dir, "cfg.json"),
  run: join(dir, "run"),
  drift: join(fx, "drift/head"),
  trl: join(fx, "contract/v0.29.1"),
  missing: join(dir, "missing.json"),
  rollout: join(dir, "rollout.json"),
  grpoYaml: join(dir, "grpo.yaml"),
  verlArgs: join(dir, "verl.args"),
  vec: join(dir, "vectors"),
  vecOut: join(dir, "vectors-emit"),
};
/** The recorded metric logs (test/fixtures/logs/) and one W&B run of its chart export. */
const LOGS = fileURLToPath(new URL("../fixtures/logs/", import.meta.url));
const WANDB_RUN = "wandb/wandb_export_2026-01-02T03_04_05.678+00_00/lively-sun-3";
const CFG =
  '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.28},"aggregation":"seq_mean_token_mean","kl":{"kind":"k3","coef":0.04}}';

beforeAll(async () => {
  // Row 1 is padding after its first token (junk there must never matter).
  const batch = CLI_BATCH;
  writeFileSync(F.batch, JSON.stringify(batch));
  writeFileSync(
    F.papo,
    JSON.stringify({
      ...batch,
      masked_logprobs: [
        [-0.3, -1.2, -0.8],
        [-0.6, 0, 0],
      ],
    }),
  );
  // 300 × 100 tokens: `loss --json` prints about 1.5 MB, far more than a 64 KiB pipe buffer.
  const B = 300;
  const T = 100;
  const row = (f: (t: number) => number) => Array.from({ length: T }, (_, t) => f(t));
  writeFileSync(
    F.big,
    JSON.stringify({
      logprobs: Array.from({ length: B }, (_, b) => row((t) => -0.5 - ((b + t) % 7) / 10)),
      old_logprobs: Array.from({ length: B }, (_, b) => row((t) => -0.55 - ((b * t) % 5) / 10)),
      advantages: Array.from({ length: B }, (_, b) => (b % 3) - 1),
      response_mask: Array.from({ length: B }, () => row(() => 1)),
    }),
  );
  writeFileSync(F.cfg, CFG);
  // A vectors folder for the check rows (emit's own rows write F.vecOut).
  await runMain(["vectors", "emit", "--algorithm", "ppo", "--cases", "2", "--out", F.vec]);
  writeFileSync(
    F.grpoYaml,
    "loss_type: dapo\nepsilon_high: 0.28\nbeta: 0.01\nnum_iterations: 2\nreport_to: wandb\n",
  );
  writeFileSync(
    F.verlArgs,
    "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-mean\n",
  );
  // Δ = old − rollout = −0.7 − (−6.0) = 5.3 > 5 at (0, 1): one catastrophic token, an alarm.
  writeFileSync(
    F.rollout,
    JSON.stringify({
      ...batch,
      rollout_logprobs: [
        [-0.5, -6.0, -0.9],
        [-0.6, 0, 0],
      ],
    }),
  );
  const made = await runMain([
    "demo-run",
    F.run,
    "--steps",
    "8",
    "--batch-size",
    "4",
    "--width",
    "6",
  ]);
  expect(made.code).toBe(0);
});

/** One row: the arguments (fixture paths filled in) and the exit code the contract requires. */
interface Row {
  readonly args: () => string[];
  readonly code: 0 | 1 | 2;
  /** Also run this row through the built binary. */
  readonly bin?: boolean;
}

const row = (code: Row["code"], args: () => string[], bin = false): Row => ({ args, code, bin });

/** Commands that run until stopped: their success row is a process test of their own. */
const SERVES: ReadonlySet<string> = new Set(["playground"]);

/** Explicit rows per command: every option of COMMANDS appears in at least one of them. */
const TABLE: Readonly<Record<string, readonly Row[]>> = {
  which: [
    row(0, () => ["which"]),
    row(0, () => ["which", "--json"], true),
    row(0, () => [
      "which",
      "--framework",
      "trl@v1.9.0",
      "--framework-config",
      F.grpoYaml,
      "--num-processes",
      "1",
      "--num-items-in-batch",
      "20",
      "--json",
    ]),
    row(0, () => ["which", "--batch", F.batch, "--norm-len", "8", "--json"]),
    row(2, () => ["which", "--norm-len", "0"]),
    row(2, () => ["which", "--batch", F.missing, "--json"], true),
    row(0, () => ["which", "--batch", F.batch, "--names", "polgrad", "--strict"]),
    row(2, () => ["which", "--batch", F.batch, "--name", "logprobs=nope"]),
    row(2, () => ["which", "--batch", F.batch, "--response-slice", "x"]),
  ],
  loss: [
    row(0, () => ["loss", "--config", CFG, "--batch", F.batch, "--json"], true),
    row(
      0,
      () => [
        "loss",
        "--framework",
        "trl@v1.9.0",
        "--framework-config",
        F.grpoYaml,
        "--batch",
        F.batch,
        "--num-processes",
        "2",
        "--num-items-in-batch",
        "8",
        "--json",
      ],
      true,
    ),
    row(0, () => [
      "loss",
      "--framework",
      "verl@1dda039b",
      "--framework-config",
      F.verlArgs,
      "--batch",
      F.batch,
    ]),
    row(
      0,
      () => [
        "loss",
        "--framework",
        "verl@74a718a4:seq-mean-token-mean",
        "--mask-dtype",
        "float64",
        "--batch",
        F.batch,
        "--json",
      ],
      true,
    ),
    row(2, () => ["loss", "--algorithm", "dapo", "--mask-dtype", "float64", "--batch", F.batch]),
    row(2, () => [
      "loss",
      "--framework",
      "verl@1dda039b:token-mean",
      "--framework-config",
      F.verlArgs,
      "--batch",
      F.batch,
    ]),
    row(0, () => ["loss", "--config", `@${F.cfg}`, "--batch", F.batch]),
    row(0, () => ["loss", "--algorithm", "dr_grpo", "--norm-len", "4", "--batch", F.batch]),
    row(
      0,
      () => ["loss", "--algorithm", "grpo", "--threads", "2", "--batch", F.batch, "--json"],
      true,
    ),
    row(2, () => ["loss", "--algorithm", "grpo", "--threads", "x", "--batch", F.batch]),
    row(
      0,
      () => [
        "loss",
        "--algorithm",
        "grpo",
        "--batch",
        F.batch,
        "--fields",
        "loss,grad_logprobs",
        "--json",
      ],
      true,
    ),
    row(2, () => ["loss", "--algorithm", "grpo", "--batch", F.batch, "--fields", "grad"]),
    row(
      0,
      () => [
        "loss",
        "--algorithm",
        "grpo",
        "--global-tokens",
        "4096",
        "--global-rows",
        "64",
        "--dp-size",
        "8",
        "--batch",
        F.batch,
        "--json",
      ],
      true,
    ),
    row(2, () => ["loss", "--algorithm", "grpo", "--global-tokens", "1", "--batch", F.batch]),
    row(2, () => ["loss", "--algorithm", "grpo", "--dp-size", "0", "--batch", F.batch]),
    row(0, () => [
      "loss",
      "--algorithm",
      "papo_g",
      "--papo-form",
      "official",
      "--batch",
      F.papo,
      "--json",
    ]),
    row(0, () => [
      "loss",
      "--framework",
      "verl@1dda039b:seq-mean-token-mean",
      "--batch",
      F.batch,
      "--json",
    ]),
    row(2, () => ["loss", "--algorithm", "grpo"]),
    row(2, () => ["loss", "--algorithm", "grpo", "--papo-form", "trl", "--batch", F.batch]),
    row(2, () => ["loss", "--config", "{", "--batch", F.batch, "--json"]),
    row(0, () => [
      "loss",
      "--algorithm",
      "dapo",
      "--batch",
      F.batch,
      "--names",
      "polgrad",
      "--strict",
      "--json",
    ]),
    row(0, () => [
      "loss",
      "--algorithm",
      "dapo",
      "--batch",
      F.batch,
      "--name",
      "logprobs=logprobs",
    ]),
    row(0, () => ["loss", "--algorithm", "dapo", "--batch", F.batch, "--response-slice", "last"]),
    row(2, () => ["loss", "--algorithm", "dapo", "--batch", F.batch, "--names", "nope", "--json"]),
    row(0, () => [
      "loss",
      "--algorithm",
      "dapo",
      "--batch",
      F.batch,
      "--out",
      join(dir, "o.safetensors"),
      "--json",
    ]),
    row(2, () => [
      "loss",
      "--algorithm",
      "dapo",
      "--batch",
      F.batch,
      "--out",
      join(dir, "no", "dir", "o.safetensors"),
    ]),
  ],
  verify: [
    row(0, () => ["verify", "--algorithm", "grpo", "--cases", "1", "--json"]),
    row(0, () => ["verify", "--config", CFG, "--cases", "1", "--seed", "3"]),
    row(0, () => ["verify", "--all", "--cases", "1", "--json"]),
    row(0, () => ["verify", "--algorithm", "grpo", "--replay", "7:2x3", "--json"]),
    row(0, () => ["verify", "--algorithm", "dr_grpo", "--norm-len", "5", "--cases", "1"]),
    row(2, () => ["verify", "--algorithm", "grpo", "--cases", "-1"], true),
    row(2, () => ["verify", "--algorithm", "grpo", "--replay", "x", "--json"]),
  ],
  diagnose: [
    row(0, () => ["diagnose", F.batch, "--clip", "0.2,0.28,3", "--json"], true),
    row(2, () => ["diagnose", F.batch, "--threads", "2"]),
    row(0, () => ["diagnose", F.batch, "--agg", "token_sum_norm", "--norm-len", "4"]),
    // The 8-step demo run has no alarm (its injections start at step 140): exit 0, exactly.
    row(0, () => ["diagnose", F.run, "--window", "4", "--seed", "2", "--json"], true),
    row(
      0,
      () => ["diagnose", F.run, "--window", "4", "--html", join(dir, "run.html"), "--json"],
      true,
    ),
    row(0, () => ["diagnose", F.batch, "--html", join(dir, "batch.html"), "--json"]),
    row(2, () => ["diagnose", F.batch, "--html", join(dir, "no-such-dir", "batch.html")]),
    row(0, () => ["diagnose", F.run, "--window", "4", "--threads", "2", "--json"], true),
    row(1, () => ["diagnose", F.rollout, "--json"]),
    row(2, () => ["diagnose", F.batch, "--agg", "token_meen"]),
    row(0, () => ["diagnose", F.batch, "--empty-rows", "drop", "--json"], true),
    row(2, () => ["diagnose", F.batch, "--empty-rows", "count"]),
    row(2, () => ["diagnose", F.batch, "--clip", "a,b"]),
    row(2, () => ["diagnose", F.batch, "--clip", ","]),
    row(0, () => ["diagnose", F.run, "--names", "polgrad", "--strict", "--window", "4"]),
    row(2, () => ["diagnose", F.batch, "--name", "=x"]),
    row(2, () => ["diagnose", F.batch, "--response-slice", "3:1", "--json"]),
    row(0, () => ["diagnose", F.run, "--steps", "0-3", "--summary-out", join(dir, "part.json")]),
    row(0, () => ["diagnose", "--merge", join(dir, "part.json"), "--window", "3", "--json"]),
    row(2, () => ["diagnose", F.run, "--steps", "3-1"]),
    // Metric logs: the recorded TRL output folder and W&B chart export (test/fixtures/logs/).
    row(1, () => ["diagnose", LOGS, "--format", "trainer_state", "--json"], true),
    row(0, () => ["diagnose", LOGS, "--format", "wandb", "--run", WANDB_RUN, "--json"], true),
    row(2, () => ["diagnose", LOGS, "--format", "tensorbord"]),
    row(2, () => ["diagnose", LOGS, "--format", "wandb", "--run", "nope"]),
    row(2, () => ["diagnose", "--merge", "--json"]),
    row(
      0,
      () => [
        "diagnose",
        F.run,
        "--window",
        "4",
        "--alpha",
        "0.01",
        "--min-effect",
        "entropy_collapse=0.2,clip_shift=0.1",
        "--only",
        "entropy_collapse,length_bias",
        "--json",
      ],
      true,
    ),
    row(0, () => ["diagnose", F.run, "--window", "4", "--skip", "clip_shift"]),
    row(2, () => ["diagnose", F.run, "--alpha", "1"]),
    row(2, () => ["diagnose", F.run, "--min-effect", "entropy_collapse=-1"]),
    row(2, () => ["diagnose", F.run, "--only", "entropy_changepoint"]),
    row(0, () => ["diagnose", F.run, "--window", "4", "--max-unreadable", "0.5"]),
    row(2, () => ["diagnose", F.run, "--max-unreadable", "2"]),
    row(0, () => [
      "diagnose",
      F.run,
      "--follow",
      "--poll",
      "0.1",
      "--until-step",
      "0",
      "--window",
      "4",
      "--json",
    ]),
    row(2, () => ["diagnose", F.batch, "--follow", "--until-step", "0"]),
    row(2, () => ["diagnose", F.run, "--follow", "--poll", "0"]),
  ],
  "demo-run": [
    row(0, () => [
      "demo-run",
      join(dir, "demo"),
      "--steps",
      "3",
      "--batch-size",
      "3",
      "--width",
      "4",
      "--seed",
      "1",
      "--f32",
      "--json",
    ]),
    row(0, () => ["demo-run", join(dir, "demo"), "--steps", "2", "--width", "4", "--force"]),
    row(2, () => ["demo-run", dir]),
    row(2, () => ["demo-run"]),
  ],
  frameworks: [row(0, () => ["frameworks"]), row(0, () => ["frameworks", "--json"])],
  explain: [
    row(0, () => ["explain", "--framework", "trl@v1.9.0"]),
    row(0, () => ["explain", "--framework", "trl@v1.9.0", "--config", F.grpoYaml, "--json"], true),
    row(0, () => [
      "explain",
      "--framework",
      "trl@v1.9.0",
      "--json",
      "--num-processes",
      "2",
      "--num-items-in-batch",
      "44",
      "--",
      "--loss_type",
      "dapo",
      "--num_iterations",
      "2",
    ]),
    row(0, () => [
      "explain",
      "--framework",
      "verl@1dda039b",
      "--config",
      F.verlArgs,
      "--batch",
      F.batch,
      "--names",
      "polgrad",
      "--strict",
      "--json",
    ]),
    row(0, () => ["explain", "--diff", "trl@v0.19.0", "trl@v1.9.0", "--json"]),
    row(0, () => ["explain", "--diff", "trl@v1.8.0", "trl@v1.9.0", "--config", F.grpoYaml]),
    row(2, () => [
      "explain",
      "--framework",
      "trl@v1.9.0",
      "--batch",
      F.batch,
      "--name",
      "logprobs=nope",
    ]),
    row(2, () => [
      "explain",
      "--framework",
      "trl@v1.9.0",
      "--batch",
      F.batch,
      "--response-slice",
      "x",
    ]),
    row(2, () => ["explain", "--framework", "trl@v9.9.9", "--json"], true),
    row(2, () => ["explain", "--framework", "trl@v1.9.0", "--", "--epsilon_hgh", "0.3"]),
    row(2, () => ["explain", "--framework", "trl@v1.9.0", "--config", F.missing]),
    row(2, () => ["explain", "--diff", "trl@v1.9.0"]),
  ],
  history: [
    row(0, () => ["history", "trl", "--key", "loss_type"]),
    row(0, () => ["history", "trl", "--key", "loss_type", "--json"], true),
    row(0, () => ["history", "openrlhf", "--json"]),
    row(2, () => ["history", "trl", "--key", "los_type"]),
    row(2, () => ["history", "nope"]),
  ],
  // playground serves until Ctrl-C: its success is run as a process by test/cli/playground.test.ts.
  playground: [
    row(2, () => ["playground", "--port", "70000", "--no-open"]),
    row(2, () => ["playground", F.missing, "--no-open"]),
  ],
  report: [
    row(0, () => ["report", "--out", join(dir, "builtin.html")], true),
    row(0, () => ["report", F.run, "--out", join(dir, "run-report.html"), "--json"], true),
    row(0, () => ["report", F.batch, "--out", join(dir, "seq.html"), "--sequence", "0,1"]),
    row(0, () => ["report", LOGS, "--format", "trainer_state", "--out", join(dir, "logs.html")]),
    row(2, () => ["report", F.batch, "--out", join(dir, "seq2.html"), "--sequence", "x"]),
    row(0, () => [
      "report",
      F.batch,
      "--out",
      join(dir, "b.html"),
      "--names",
      "polgrad",
      "--norm-len",
      "4",
    ]),
    row(0, () => ["report", F.run, "--out", join(dir, "r.html")], true),
    row(0, () => [
      "report",
      "--out",
      join(dir, "f.html"),
      "--framework",
      "trl@v1.9.0",
      "--framework-config",
      F.grpoYaml,
      "--num-processes",
      "2",
      "--num-items-in-batch",
      "40",
    ]),
    row(0, () => ["report", F.batch, "--out", join(dir, "s.html"), "--strict"]),
    row(2, () => ["report", F.batch, "--out", join(dir, "n.html"), "--name", "logprobs=nope"]),
    row(2, () => ["report", F.batch, "--out", join(dir, "n.html"), "--response-slice", "x"]),
    row(2, () => ["report", F.batch]),
    row(2, () => ["report", F.run, "--out", join(dir, "x.html"), "--framework", "trl@v1.9.0"]),
    row(2, () => ["report", F.missing, "--out", join(dir, "m.html")]),
  ],
  vectors: [
    row(0, () => [
      "vectors",
      "emit",
      "--algorithm",
      "grpo",
      "--cases",
      "2",
      "--seed",
      "3",
      "--shapes",
      "3x5",
      "--loss-rtol",
      "1e-10",
      "--grad-rtol",
      "1e-10",
      "--out",
      F.vecOut,
    ]),
    row(
      0,
      () => [
        "vectors",
        "emit",
        "--framework",
        "verl@1dda039b:vanilla:token-mean",
        "--cases",
        "1",
        "--out",
        F.vecOut,
        "--json",
      ],
      true,
    ),
    row(0, () => ["vectors", "emit", "--config", CFG, "--cases", "1", "--out", F.vecOut]),
    row(0, () => [
      "vectors",
      "emit",
      "--algorithm",
      "dr_grpo",
      "--norm-len",
      "16",
      "--cases",
      "1",
      "--out",
      F.vecOut,
    ]),
    row(
      0,
      () => ["vectors", "check", F.vec, "--outputs", join(F.vec, "expected.safetensors"), "--json"],
      true,
    ),
    row(1, () => ["vectors", "check", F.vec, "--outputs", join(F.vec, "inputs.safetensors")]),
    row(2, () => ["vectors", "emit", "--out", F.vecOut]),
    row(2, () => ["vectors", "emit", "--algorithm", "grpo", "--shapes", "4by8", "--out", F.vecOut]),
    row(2, () => ["vectors", "check", F.vec]),
    row(2, () => ["vectors", "check", F.missing, "--outputs", F.batch]),
    row(2, () => ["vectors", "check", F.vec, "--outputs", F.batch, "--cases", "3"]),
    row(2, () => ["vectors", "nope"]),
  ],
  deviations: [
    row(0, () => ["deviations", "--json"]),
    row(0, () => ["deviations", "--pairs"]),
    row(0, () => ["deviations", "--pairs", "--json"], true),
  ],
  drift: [
    row(1, () => ["drift", "--checkout", F.drift, "--framework", "verl", "--json"], true),
    row(2, () => ["drift", "--framework", "verl"]),
    row(2, () => ["drift", "--checkout", F.drift, "--framework", "nope", "--json"]),
  ],
  contract: [
    // rows: contract check --contract / contract table (adapter contracts)
    row(1, () => [
      "contract",
      "check",
      "--checkout",
      F.trl,
      "--contract",
      "papo-g-adapter",
      "--json",
    ]),
    row(2, () => [
      "contract",
      "check",
      "--checkout",
      F.trl,
      "--contract",
      "papo-g-adapter",
      "--vendored",
      F.missing,
    ]),
    // polgrad's own repository has no TRL trainer: the authors' rule passes nowhere, exit 1.
    row(
      1,
      () => ["contract", "table", "--git", join(fx, "../../../.git"), "--refs", "HEAD", "--json"],
      true,
    ),
    row(2, () => ["contract", "table", "--git", F.missing]),
    // rows: contract reduce --observed / contract liveness
    row(0, () => {
      // A γ = 0 dump: child = parent (bit-equal losses), gradients of F.batch's logprobs [2, 3].
      const g = [
        [0.1, -0.2, 0.3],
        [0.4, 0, 0],
      ];
      const p = join(dir, "observed.json");
      writeFileSync(
        p,
        JSON.stringify({ parent_grad: g, child_grad: g, parent_loss: [0.5], child_loss: [0.5] }),
      );
      return [
        "contract",
        "reduce",
        "papo_g_to_grpo",
        "--observed",
        p,
        "--batch",
        F.batch,
        "--precision",
        "fp32",
        "--decide",
        "calibrated",
        "--json",
      ];
    }),
    row(1, () => {
      const p = join(dir, "observed-leak.json");
      writeFileSync(p, JSON.stringify({ parent_grad: [1, 2], child_grad: [1, 3] }));
      return ["contract", "reduce", "papo_g_to_grpo", "--observed", p];
    }),
    row(2, () => ["contract", "reduce", "papo_g_to_grpo", "--observed", F.missing, "--json"]),
    row(0, () => {
      const d = mkdtempSync(join(dir, "live-"));
      writeFileSync(
        join(d, "step_0.json"),
        JSON.stringify({ perception_kl: [0], perception_gradient_norm: [0] }),
      );
      writeFileSync(
        join(d, "step_1.json"),
        JSON.stringify({ perception_kl: [0.1], perception_gradient_norm: [0.2] }),
      );
      return ["contract", "liveness", d, "--max-degenerate", "1", "--form", "official", "--json"];
    }),
    row(1, () => {
      const d = mkdtempSync(join(dir, "dead-"));
      writeFileSync(
        join(d, "step_0.json"),
        JSON.stringify({ perception_kl: [0], perception_gradient_norm: [0] }),
      );
      return ["contract", "liveness", d, "--max-degenerate", "0"];
    }),
    row(2, () => ["contract", "liveness", F.missing, "--json"]),
    row(1, () => ["contract", "check", "--checkout", F.trl, "--pin", "trl@v0.29.1", "--json"]),
    row(0, () => [
      "contract",
      "reduce",
      "dual_clip_to_pg_clip",
      "--batch",
      F.batch,
      "--precision",
      "fp64",
      "--seed",
      "1",
      "--pairs",
      "2",
      "--norm-len",
      "3",
      "--json",
    ]),
    row(2, () => [
      "contract",
      "reduce",
      "dual_clip_to_pg_clip",
      "--batch",
      F.batch,
      "--precision",
      "fp64",
      "--strict",
      "--pairs",
      "0",
    ]),
    row(2, () => ["contract"], true),
  ],
  contracts: [row(0, () => ["contracts"]), row(0, () => ["contracts", "--json"])],
  algorithms: [row(0, () => ["algorithms"]), row(0, () => ["algorithms", "--json"])],
  describe: [
    row(0, () => ["describe", "grpo", "--json"]),
    row(2, () => ["describe"]),
    row(2, () => ["describe", "grp", "--json"], true),
  ],
  coverage: [
    row(0, () => ["coverage"]),
    row(0, () => ["coverage", "--json"]),
    row(0, () => ["coverage", "--markdown"]),
    row(2, () => ["coverage", "--json", "--markdown"], true),
  ],
};

function expectKept(run: CliRun, code: 0 | 1 | 2): void {
  expect({ args: run.args, violations: contractViolations(run, code) }).toEqual({
    args: run.args,
    violations: [],
  });
}

describe("cli contract", () => {
  test("identity: the table has a row for every command and every option of COMMANDS", () => {
    const missing: string[] = [];
    for (const cmd of COMMANDS) {
      const rows = TABLE[cmd.name] ?? [];
      if (!rows.some((r) => r.code === 0 || r.code === 1) && !SERVES.has(cmd.name))
        missing.push(`${cmd.name} (a success row)`);
      const used = new Set(rows.flatMap((r) => r.args()).filter((a) => a.startsWith("--")));
      for (const o of Object.keys(cmd.options))
        if (!used.has(`--${o}`)) missing.push(`${cmd.name} --${o}`);
    }
    expect(Object.keys(TABLE).sort()).toEqual(COMMANDS.map((c) => c.name).sort());
    expect(missing).toEqual([]);
  });

  test("property: every row keeps the contract in-process (exit code, streams, schemas)", async () => {
    const broken: { args: readonly string[]; violations: string[] }[] = [];
    for (const rows of Object.values(TABLE))
      for (const r of rows) {
        const run = await runMain(r.args());
        const violations = contractViolations(run, r.code);
        if (violations.length > 0) broken.push({ args: run.args, violations });
      }
    expect(broken).toEqual([]);
  });

  test("property: the binary keeps the contract on a representative subset of rows", () => {
    const broken: { args: readonly string[]; violations: string[] }[] = [];
    for (const rows of Object.values(TABLE))
      for (const r of rows.filter((x) => x.bin)) {
        const run = runBin(r.args());
        const violations = contractViolations(run, r.code);
        if (violations.length > 0) broken.push({ args: run.args, violations });
      }
    expect(broken).toEqual([]);
  });

  test("rejects: every malformed option is one usage error naming the option", async () => {
    for (const cmd of COMMANDS) {
      const sub = cmd.name === "contract" ? ["check"] : [];
      const cases: { args: string[]; arg: string }[] = [
        { args: [cmd.name, ...sub, "--no-such-option"], arg: "option" },
      ];
      for (const [name, o] of Object.entries(cmd.options)) {
        const v = o.type === "string" ? ["x"] : [];
        cases.push({
          args: [cmd.name, ...sub, `--${name}`, ...v, `--${name}`, ...v],
          arg: `--${name}`,
        });
        if (o.type === "string")
          cases.push({ args: [cmd.name, ...sub, `--${name}`], arg: `--${name}` });
        else cases.push({ args: [cmd.name, ...sub, `--${name}=1`], arg: `--${name}` });
      }
      for (const c of cases) {
        const text = await runMain(c.args);
        expectKept(text, 2);
        expect(text.stderr, c.args.join(" ")).toContain(`: ${c.arg} must be`);
        const json = await runMain([...c.args, ...(c.args.includes("--json") ? [] : ["--json"])]);
        expectKept(json, 2);
      }
    }
  });

  test("regression: --cases -1 is one error line, not parseArgs' three-line message", () => {
    const r = runBin(["verify", "--algorithm", "grpo", "--cases", "-1"]);
    expect(r.stderr).toBe(
      'error[E_USAGE]: polgrad verify: --cases must be a positive integer; got "-1"\nHint: polgrad verify --help\n',
    );
    expect([r.code, r.stdout]).toEqual([2, ""]);
  });

  test("regression: a repeated flag is an error naming the flag, not the last one silently", async () => {
    const r = await runMain(["which", "--batch", F.batch, "--batch", F.missing, "--json"]);
    expectKept(r, 2);
    expect(JSON.parse(r.stderr).error).toMatchObject({ code: "E_USAGE", arg: "--batch" });
  });

  test("regression: hostile text in an argument cannot forge a line and long text is capped", async () => {
    const forged = await runMain(["which", "--norm-len", "1\nerror[E_FORGED]: pwned\u001b[2J"]);
    expectKept(forged, 2);
    expect(forged.stderr).not.toMatch(/^error\[E_FORGED\]/m);
    expect(forged.stderr).toContain("\\nerror[E_FORGED]: pwned\\u001b[2J");
    const huge = await runMain(["describe", "x".repeat(1_000_000)]);
    expectKept(huge, 2);
    const unknown = await runMain(["x".repeat(100_000), "--json"]);
    expectKept(unknown, 2);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ command: null, error: { code: "E_USAGE" } });
  });

  test("regression: a --json before any command still gets the json error document", async () => {
    const r = await runMain(["--json"]);
    expectKept(r, 2);
    expect(JSON.parse(r.stderr)).toMatchObject({ command: null, error: { code: "E_USAGE" } });
  });

  test("golden: --json error documents carry schema_version and the command", async () => {
    const r = await runMain(["describe", "grp", "--json"]);
    expect(JSON.parse(r.stderr)).toMatchObject({
      schema_version: 1,
      command: "describe",
      ok: false,
      error: {
        code: "E_UNKNOWN_NAME",
        fn: "getAlgorithm",
        suggestions: expect.arrayContaining(["grpo"]),
      },
    });
  });
});

/** Run the binary with stdout into a pipe that the reader closes after `keep` bytes. */
function closedEarly(
  args: readonly string[],
  keep: number,
): Promise<{ code: number | null; stderr: string; got: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, NO_COLOR: "1" },
    });
    let got = 0;
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      got += d.length;
      if (got >= keep) child.stdout.destroy();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("close", (code) => resolve({ code, stderr, got }));
  });
}

describe("output streams", () => {
  test("regression: a reader closing the pipe ends quietly with 141 and no stack trace", async () => {
    // The reader takes the first chunk and closes: the remaining ~1.4 MB meet a closed pipe.
    const ppo =
      '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.2},"aggregation":"token_mean"}';
    for (const args of [["loss", "--config", ppo, "--batch", F.big, "--json"]]) {
      const r = await closedEarly(args, 100);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 141, stderr: "" });
    }
  });

  test("regression: piping into head -c 100 in a shell gives the documented status and an empty stderr", () => {
    const sh = spawnSync(
      "bash",
      [
        "-c",
        `"$0" "$1" frameworks --json 2>"$2" | head -c 100 >/dev/null; echo "\${PIPESTATUS[0]}"`,
        process.execPath,
        BIN,
        join(dir, "err.txt"),
      ],
      { encoding: "utf8" },
    );
    expect(sh.stdout.trim()).toBe("141");
    expect(spawnSync("cat", [join(dir, "err.txt")], { encoding: "utf8" }).stdout).toBe("");
  });

  test.skipIf(!existsSync("/dev/full"))(
    "regression: a full device on stdout is one E_IO line and exit 2",
    () => {
      for (const json of [false, true]) {
        const fd = openSync("/dev/full", "w");
        const args = ["which", ...(json ? ["--json"] : [])];
        const r = spawnSync(process.execPath, [BIN, ...args], {
          stdio: ["ignore", fd, "pipe"],
          encoding: "utf8",
        });
        closeSync(fd);
        const run = { args, code: r.status, stdout: "", stderr: r.stderr };
        validateDocuments(run);
        expect(contractViolations(run, 2)).toEqual([]);
        if (json) expect(JSON.parse(r.stderr).error).toMatchObject({ code: "E_IO", arg: "stdout" });
        else
          expect(r.stderr).toMatch(/^error\[E_IO\]: polgrad: stdout must be writable; got ENOSPC/);
      }
    },
  );
});
