import { describe, expect, test } from "vitest";
import { diffExplanations } from "../../../src/conformance/frameworkConfig/diff.js";
import { builtinBatchFor } from "../../../src/conformance/frameworkConfig/evaluationBatch.js";
import {
  explainFrameworkConfig,
  resolveFrameworkConfig,
} from "../../../src/conformance/frameworkConfig/explain.js";
import { keyHistory } from "../../../src/conformance/frameworkConfig/history.js";
import { evaluateResolution } from "../../../src/conformance/frameworkConfig/resolution.js";
import { windowNote } from "../../../src/conformance/frameworkConfig/window.js";
import { ConfigError } from "../../../src/errors.js";
import { BUILTIN_BATCH } from "../../../src/which/index.js";
import { BUILTIN_WITH_REF } from "./_releaseFixtures.js";

describe("explainFrameworkConfig", () => {
  test("golden: the fitted built-in batch tiles rows and synthesises only what the plan reads", () => {
    const A = "actor_rollout_ref.actor.";
    // verl v0.7.1's old actor splits into micro-batches of 6 rows: lcm(4, 6) = 12 rows, row i = row i mod 4.
    const micro = resolveFrameworkConfig("verl@v0.7.1", `${A}ppo_micro_batch_size_per_gpu=6`, {
      form: "args",
    });
    const b = builtinBatchFor(BUILTIN_BATCH, [micro]);
    if ("tooLarge" in b) throw new Error("fits");
    expect(b.inputs.advantages).toEqual([
      1.5, -0.8, 0.6, -1.2, 1.5, -0.8, 0.6, -1.2, 1.5, -0.8, 0.6, -1.2,
    ]);
    expect(b.inputs.rolloutLogprobs).toBeUndefined();
    expect(b.inputs.entropies).toBeUndefined();
    expect(b.notes).toHaveLength(1);
    expect(evaluateResolution(micro, b.inputs).microBatches).toHaveLength(2);
    // An entropy bonus reads entropies: −logprobs; TRL's vLLM IS correction reads the rollout's
    // logprobs: old − 0.05·(−1)^(b+t), so row 0 token 0 is old − 0.05 and token 1 old + 0.05.
    const ent = resolveFrameworkConfig("verl@v0.7.1", `${A}entropy_coeff=0.01`, { form: "args" });
    const e = builtinBatchFor(BUILTIN_BATCH, [ent]);
    if ("tooLarge" in e) throw new Error("fits");
    const lp = BUILTIN_BATCH.logprobs as number[][];
    expect((e.inputs.entropies as number[][])[1]?.[2]).toBe(-(lp[1]?.[2] as number));
    const is = resolveFrameworkConfig(
      "trl@v1.9.0",
      "--use_vllm --vllm_importance_sampling_correction true",
    );
    const r = builtinBatchFor(BUILTIN_BATCH, [is]);
    if ("tooLarge" in r) throw new Error("fits");
    const old = BUILTIN_BATCH.oldLogprobs as number[][];
    expect((r.inputs.rolloutLogprobs as number[][])[0]?.[0]).toBe((old[0]?.[0] as number) - 0.05);
    expect((r.inputs.rolloutLogprobs as number[][])[0]?.[1]).toBe((old[0]?.[1] as number) + 0.05);
    expect(() => evaluateResolution(is, r.inputs)).not.toThrow();
    // Both sides of a diff share one batch: lcm(4, 6, 10) = 60 rows.
    const ten = resolveFrameworkConfig("verl@v0.7.1", `${A}ppo_micro_batch_size_per_gpu=10`, {
      form: "args",
    });
    const both = builtinBatchFor(BUILTIN_BATCH, [micro, ten]);
    expect("tooLarge" in both ? 0 : (both.inputs.advantages as number[]).length).toBe(60);
  });

  test("regression: OpenRLHF nested YAML is read as the dotted flags it spells, not listed as ignored and resolved as PPO", () => {
    // Issue 33: `actor:\n  policy_loss_type: gspo` was "Ignored: --actor" and explained as ppo.
    const nested = resolveFrameworkConfig("openrlhf@v0.11.0", "actor:\n  policy_loss_type: gspo\n");
    const dotted = resolveFrameworkConfig("openrlhf@v0.11.0", "--actor.policy_loss_type gspo");
    expect(nested.ignored).toEqual([]);
    expect(nested.plan.config).toEqual(dotted.plan.config);
    expect(nested.plan.config.ratio).toBe("sequence");
  });

  test("golden: every key is classified: read, recorded but not read (ignored), another engine's (ignored), +added (warned), unknown (refused)", () => {
    const A = "actor_rollout_ref.actor.";
    const res = resolveFrameworkConfig(
      "verl@v0.9.0",
      `${A}clip_ratio_high=0.28 trainer.save_freq=20 ${A}megatron.param_offload=True +${A}policy_loss.tau_pos=1.0 actor_rollout_ref.rollout.engine_kwargs.vllm.foo=1`,
      { form: "args" },
    );
    expect(res.settings.find((x) => x.key === `${A}clip_ratio_high`)?.value).toBe(0.28);
    // trainer.save_freq is verl's (recorded) and does not touch the loss; megatron.param_offload is
    // a key of verl's Megatron config (_generated_ppo_megatron_trainer.yaml), recorded beside the
    // FSDP one; engine_kwargs.vllm is a recorded open mapping; +tau_pos adds a key verl's config lacks.
    expect(res.ignored.map((x) => x.key).sort()).toEqual(
      [
        "trainer.save_freq",
        `${A}megatron.param_offload`,
        `${A}policy_loss.tau_pos`,
        "actor_rollout_ref.rollout.engine_kwargs.vllm.foo",
      ].sort(),
    );
    expect(res.warnings.map((w) => w.code)).toContain("verl-plus-key-unread");
    // A key no config of the release has is refused as Hydra refuses it, with did-you-mean.
    expect(() =>
      resolveFrameworkConfig("verl@v0.9.0", "trainer.save_frq=20", { form: "args" }),
    ).toThrow(
      /trainer\.save_frq in the config is not a key of verl@v0\.9\.0 \(Hydra refuses .*did you mean "trainer\.save_freq"/,
    );
    expect(() => resolveFrameworkConfig("openrlhf@v0.11.0", "--actor.num_node 1")).toThrow(
      /--actor\.num_node .* is not a key of openrlhf@v0\.11\.0 \(OpenRLHF's argparse refuses it\)/,
    );
  });

  test("rejects: a key that changes the loss in a way polgrad does not model is refused by name", () => {
    expect(() =>
      resolveFrameworkConfig("verl@1dda039b", "model_engine=megatron", { form: "args" }),
    ).toThrow(/model_engine = "megatron" .*polgrad models the FSDP \(dp\) actor's loss/);
    expect(() =>
      resolveFrameworkConfig("verl@1dda039b", "distillation.enabled=true", { form: "args" }),
    ).toThrow(/distillation\.enabled = true/);
    // TRL switches to the Liger GRPO loss from v0.25.0 (grpo_trainer.py: self.use_liger_kernel);
    // before, use_liger_kernel only patches the model's kernels.
    expect(() => resolveFrameworkConfig("trl@v0.25.0", "--use_liger_kernel true")).toThrow(
      /use_liger_kernel = true .*Liger's fused linear GRPO loss/,
    );
    expect(() => resolveFrameworkConfig("trl@v0.24.0", "--use_liger_kernel true")).not.toThrow();
  });

  test("golden: a batch that is not one optimizer-step window of the configured sizes says so", () => {
    // verl: ppo_mini_batch_size × rollout.n = 2 × 2 = 4 rows is one window of the built-in batch.
    const A = "actor_rollout_ref.actor.";
    const fits = resolveFrameworkConfig(
      "verl@v0.9.0",
      `${A}ppo_mini_batch_size=2 actor_rollout_ref.rollout.n=2`,
      { form: "args" },
    );
    expect(windowNote(fits, 4)).toBeNull();
    // The defaults: 256 × 1 = 256 rows.
    expect(windowNote(resolveFrameworkConfig("verl@v0.9.0"), 4)).toBe(
      "the batch has B = 4 rows, but one optimizer-step window of this config is ppo_mini_batch_size × rollout.n = 256 × 1 (one mini-batch, dp 1) = 256 rows: the loss is the one of a window of 4 rows",
    );
    // OpenRLHF: train_batch_size rows; TRL: per_device_train_batch_size × steps_per_generation.
    expect(
      windowNote(resolveFrameworkConfig("openrlhf@v0.9.0", "--train_batch_size 4"), 4),
    ).toBeNull();
    const trl = resolveFrameworkConfig(
      "trl@v1.9.0",
      "--per_device_train_batch_size 2 --gradient_accumulation_steps 4",
    );
    expect(windowNote(trl, 8)).toBeNull();
    expect(windowNote(trl, 4)).toContain(
      "per_device_train_batch_size × steps_per_generation = 2 × 4",
    );
    // Without per_device_train_batch_size (TRL's default is taken from TrainingArguments) no window is claimed.
    expect(windowNote(resolveFrameworkConfig("trl@v1.9.0"), 4)).toBeNull();
  });

  test("golden: TRL with steps_per_generation > gradient_accumulation_steps warns that one generation feeds several optimizer steps", () => {
    // generation_batch_size 8 / (per_device 1 × 1 process) = 8 micro-batches per generation; GA 4:
    // two optimizer steps (TRL docs' lora_without_regret recipe).
    const r = resolveFrameworkConfig(
      "trl@v1.9.0",
      "--generation_batch_size 8 --gradient_accumulation_steps 4 --per_device_train_batch_size 1",
    );
    const w = r.warnings.find((x) => x.code === "trl-several-steps-per-generation");
    expect(w?.message).toContain(
      "steps_per_generation = 8 > gradient_accumulation_steps = 4: one generation batch feeds 2 optimizer steps",
    );
    expect(
      resolveFrameworkConfig("trl@v1.9.0", "--gradient_accumulation_steps 4").warnings.map(
        (x) => x.code,
      ),
    ).not.toContain("trl-several-steps-per-generation");
  });

  test("golden: TRL's TrainingArguments, CLI dataclass fields and options are known and ignored; a typo is refused with did-you-mean", () => {
    const r = resolveFrameworkConfig(
      "trl@v1.9.0",
      "--output_dir out --per_device_eval_batch_size 4 --use_peft --accelerate_config zero2 --loss_type grpo",
    );
    expect(r.ignored.map((x) => x.key).sort()).toEqual(
      ["accelerate_config", "output_dir", "per_device_eval_batch_size", "use_peft"].sort(),
    );
    expect(() => resolveFrameworkConfig("trl@v1.9.0", "--lerning_rate 1e-6")).toThrow(
      /lerning_rate .* is not a key of trl@v1\.9\.0 \(TRL's argument parser refuses it\) \(did you mean "learning_rate"\?\)$/,
    );
    expect(() => resolveFrameworkConfig("trl@v1.9.0", "trl grpo --config grpo.yaml")).toThrow(
      /config "grpo\.yaml" .* names a file whose keys TRL reads as the defaults/,
    );
  });

  test("rejects: a launch through another trainer (a verl recipe's main, trl rloo) is refused by its entry point", () => {
    expect(() =>
      resolveFrameworkConfig(
        "verl@v0.7.1",
        "python3 -m recipe.dapo.main_dapo actor_rollout_ref.actor.clip_ratio_low=0.2",
      ),
    ).toThrow(
      /launches recipe\.dapo\.main_dapo; polgrad resolves the config of verl\.trainer\.main_ppo/,
    );
    expect(() => resolveFrameworkConfig("trl@v1.9.0", "trl rloo --beta 0.1")).toThrow(
      /launches trl rloo/,
    );
    // The trainers polgrad resolves pass: verl's main_ppo, a GRPO script, `trl grpo`.
    expect(() =>
      resolveFrameworkConfig("verl@v0.7.1", "python3 -m verl.trainer.main_ppo trainer.nnodes=1"),
    ).not.toThrow();
    expect(() =>
      resolveFrameworkConfig(
        "trl@v1.9.0",
        "accelerate launch examples/scripts/grpo_vlm.py --beta 0.1",
      ),
    ).not.toThrow();
    expect(() => resolveFrameworkConfig("trl@v1.9.0", "trl grpo --beta 0.1")).not.toThrow();
  });

  test("golden: TRL v1.9.0's default is dapo with an on-policy ratio", () => {
    const e = explainFrameworkConfig("trl@v1.9.0");
    const r = e.resolution;
    expect(r.settings.find((s) => s.key === "loss_type")).toMatchObject({
      value: "dapo",
      source: "default",
    });
    expect(r.plan.onPolicy).toBe(true);
    // On-policy the ratio is 1 and the clip cannot bind: ℓ = −A per token, token mean over N = 20:
    // −(1.5·2 − 0.8·4 + 0.6·6 − 1.2·8) / 20 = −(3 − 3.2 + 3.6 − 9.6) / 20 = 6.2 / 20 = 0.31.
    expect(evaluateResolution(r, BUILTIN_WITH_REF).loss).toBeCloseTo(0.31, 15);
    expect(e.nearest.differences[0]?.component).toBe("old_logprobs");
    // A user's epsilon then has no effect, and the explanation says so.
    const w = explainFrameworkConfig("trl@v1.9.0", "epsilon_high: 0.28\n").resolution.warnings;
    expect(w.map((x) => x.code)).toContain("trl-on-policy-clip-inert");
  });

  test("golden: TRL cispo with the default epsilon_high warns that every weight is capped at 0.2", () => {
    const r = explainFrameworkConfig(
      "trl@v1.9.0",
      "--loss_type cispo --num_iterations 2",
    ).resolution;
    expect(r.plan.onPolicy).toBe(false);
    expect(r.plan.config.cispo).toEqual({ cap: 0.2 });
    expect(r.warnings.map((x) => x.code)).toContain("trl-cispo-default-cap");
  });

  test("golden: OpenRLHF before v0.10.4 averages micro-batch means; the default micro-batch of 1 row (v0.10.0+) makes token-mean a mean of row means", () => {
    const old = explainFrameworkConfig("openrlhf@v0.10.3").resolution;
    const now = explainFrameworkConfig("openrlhf@v0.11.0").resolution;
    expect(old.warnings.map((x) => x.code)).toContain("openrlhf-micro-batch-one");
    const lo = evaluateResolution(old, BUILTIN_WITH_REF);
    const hi = evaluateResolution(now, BUILTIN_WITH_REF);
    expect(lo.microBatches).toHaveLength(4);
    // Four one-row token means averaged = the seq-mean-token-mean of the same clipped loss.
    const seq = explainFrameworkConfig(
      "openrlhf@v0.11.0",
      "--actor.policy_loss_type ppo",
    ).resolution;
    expect(hi.loss).not.toBeCloseTo(lo.loss, 6);
    expect(seq.plan.config.aggregation).toBe("token_mean");
  });

  test("golden: verl's old actor ignores loss_scale_factor (a warning, the key marked inert); the engine uses it", () => {
    const A = "actor_rollout_ref.actor.";
    const args = `${A}loss_agg_mode=seq-mean-token-sum-norm ${A}loss_scale_factor=16`;
    const old = resolveFrameworkConfig("verl@v0.7.1", args, { form: "args" });
    expect(old.warnings.map((w) => w.code)).toContain("verl-loss-scale-factor-inert");
    expect(old.settings.find((s) => s.key === `${A}loss_scale_factor`)?.effective).toBe(false);
    const engine = resolveFrameworkConfig("verl@1dda039b", args, { form: "args" });
    expect(engine.warnings.map((w) => w.code)).not.toContain("verl-loss-scale-factor-inert");
    expect(engine.settings.find((s) => s.key === `${A}loss_scale_factor`)?.effective).toBe(true);
    expect(engine.plan.config.normLen).toBe(16);
  });

  test("golden: verl's deprecated global ppo_micro_batch_size is converted as the FSDP worker converts it (old actor up to v0.5.0), validated as verl validates it, refused where verl's worker refuses it", () => {
    const A = "actor_rollout_ref.actor.";
    const world = `${A}ppo_mini_batch_size=32 actor_rollout_ref.rollout.n=4 trainer.n_gpus_per_node=4 trainer.nnodes=2`;
    const cfg = (micro: string) =>
      resolveFrameworkConfig("verl@v0.5.0", `${world} ${micro}`, { form: "args" });
    // fsdp_workers.py: ppo_micro_batch_size //= n_gpus // ulysses_sequence_parallel_size:
    // 16 // (4·2 // 1) = 2 rows per GPU; with sequence parallelism 2, 16 // (8 // 2) = 4.
    const global = cfg(`${A}ppo_micro_batch_size=16`);
    expect(global.plan.microBatches).toEqual({ rows: 2 });
    expect(global.plan.batchMeaning).toContain("16 // (8 // 1) = 2 rows");
    expect(
      cfg(`${A}ppo_micro_batch_size=16 ${A}ulysses_sequence_parallel_size=2`).plan.microBatches,
    ).toEqual({ rows: 4 });
    // The same loss as the per-GPU key it becomes, on a batch the split divides.
    const perGpu = cfg(`${A}ppo_micro_batch_size_per_gpu=2`);
    expect(perGpu.plan.microBatches).toEqual({ rows: 2 });
    const fitted = builtinBatchFor(BUILTIN_WITH_REF, [global]);
    if ("tooLarge" in fitted) throw new Error("fits");
    expect(evaluateResolution(global, fitted.inputs).loss).toBe(
      evaluateResolution(perGpu, fitted.inputs).loss,
    );
    // The key was listed as ignored before (issue 33): it is a setting now, and effective.
    expect(global.ignored.map((x) => x.key)).not.toContain(`${A}ppo_micro_batch_size`);
    expect(global.settings.find((x) => x.key === `${A}ppo_micro_batch_size`)?.effective).toBe(true);
    // v0.6.0–v0.7.1: the worker converts it, then its ActorConfig sees both keys and refuses.
    expect(() =>
      resolveFrameworkConfig("verl@v0.7.1", `${world} ${A}ppo_micro_batch_size=16`, {
        form: "args",
      }),
    ).toThrow(/ppo_micro_batch_size must be null at this release .*ActorConfig raises ValueError/);
    // The engine (v0.8.0+) normalises by global counts: the split does not change the loss.
    const engine = resolveFrameworkConfig("verl@v0.8.0", `${world} ${A}ppo_micro_batch_size=16`, {
      form: "args",
    });
    expect(engine.plan.microBatches).toBe(1);
    // verl's own refusals, quoted: both keys, mini % micro, micro·sp < n_gpus.
    for (const [micro, re] of [
      [`${A}ppo_micro_batch_size=16 ${A}ppo_micro_batch_size_per_gpu=2`, /You have set both/],
      [`${A}ppo_micro_batch_size=12`, /must be a divisor of ppo_mini_batch_size \(32\).*got 12/],
      [
        `${A}ppo_micro_batch_size=4`,
        /at least n_gpus \/ ulysses_sequence_parallel_size = 8 \/ 1 .*got 4/,
      ],
    ] as const)
      expect(() => cfg(micro), micro).toThrow(re);
    // Neither set: verl refuses; polgrad evaluates one micro-batch and says so.
    expect(cfg("").warnings.map((w) => w.code)).toContain("verl-micro-batch-unset");
    // use_dynamic_bsz skips the checks (verl's own condition).
    expect(cfg(`${A}use_dynamic_bsz=true`).warnings.map((w) => w.code)).not.toContain(
      "verl-micro-batch-unset",
    );
  });

  test("golden: verl's bypass_mode is the configured loss against the rollout's logprobs; the correction keys that do not reach the workers are warned", () => {
    const RC = "algorithm.rollout_correction.";
    const A = "actor_rollout_ref.actor.";
    const base = `${A}ppo_micro_batch_size_per_gpu=2 data.train_batch_size=512 actor_rollout_ref.rollout.calculate_log_probs=true`;
    const bypass = resolveFrameworkConfig(
      "verl@v0.7.1",
      `${base} ${RC}bypass_mode=true ${RC}rollout_is=token ${RC}loss_type=reinforce`,
      { form: "args" },
    );
    expect(bypass.plan.oldStream).toBe("rollout");
    expect(bypass.plan.config.isCorrection ?? null).toBeNull();
    const w = bypass.warnings.find((x) => x.code === "verl-bypass-correction-unread");
    expect(w?.message).toContain('compute loss_mode "vanilla" against the rollout\'s logprobs');
    expect(w?.message).toContain(
      `${RC}rollout_is = "token", ${RC}loss_type = "reinforce" do not reach the loss`,
    );
    // The same loss as plain vanilla on a batch whose old logprobs are the rollout's.
    const plain = resolveFrameworkConfig("verl@v0.7.1", base, { form: "args" });
    const fitted = builtinBatchFor(BUILTIN_WITH_REF, [bypass]);
    if ("tooLarge" in fitted) throw new Error("fits");
    const inputs = fitted.inputs;
    const swapped = { ...inputs, oldLogprobs: inputs.rolloutLogprobs as number[][] };
    expect(evaluateResolution(bypass, inputs).loss).toBe(evaluateResolution(plain, swapped).loss);
    expect(evaluateResolution(bypass, inputs).loss).not.toBe(
      evaluateResolution(plain, inputs).loss,
    );
    // One mini-batch and one epoch: the old actor's on-policy shortcut (ratio 1) wins.
    const onPolicy = resolveFrameworkConfig(
      "verl@v0.7.1",
      `${base.replace("=512", "=256")} ${RC}bypass_mode=true`,
      { form: "args" },
    );
    expect(onPolicy.plan.onPolicy).toBe(true);
    expect(onPolicy.plan.oldStream).toBeUndefined();
    // The bypass loss itself (loss_mode bypass_mode, as verl's docs ask beside bypass_mode) is a
    // loss mode verl registers and polgrad does not model: refused naming it, not as unknown.
    expect(() =>
      resolveFrameworkConfig(
        "verl@1dda039b",
        `${base} ${RC}bypass_mode=true ${A}policy_loss.loss_mode=bypass_mode`,
        { form: "args" },
      ),
    ).toThrow(/bypass_mode is verl's bypass loss .* which polgrad does not model yet/);
    // Without the rollout's logprobs verl raises; so does polgrad, naming the key.
    expect(() =>
      resolveFrameworkConfig("verl@v0.8.0", `${RC}bypass_mode=true`, { form: "args" }),
    ).toThrow(
      /actor_rollout_ref\.rollout\.calculate_log_probs must be true when algorithm\.rollout_correction\.bypass_mode is true/,
    );
  });

  test("rejects: an unknown loss key with did-you-mean, a wrong type, an unmodelled mode", () => {
    expect(() => explainFrameworkConfig("trl@v1.9.0", "--epsilon_hgh 0.3")).toThrow(
      /did you mean "epsilon_high"/,
    );
    expect(() => explainFrameworkConfig("trl@v0.14.0", "--loss_type dapo")).toThrow(
      /not defined at trl@v0\.14\.0/,
    );
    expect(() => explainFrameworkConfig("trl@v1.9.0", "--beta high")).toThrow(ConfigError);
    expect(() =>
      explainFrameworkConfig(
        "verl@1dda039b",
        "actor_rollout_ref.actor.policy_loss.loss_mode=clip_cov",
      ),
    ).toThrow(/covariance/);
    // Keys that do not touch the loss are listed, not rejected.
    expect(explainFrameworkConfig("trl@v1.9.0", "report_to: wandb\n").resolution.ignored).toEqual([
      { key: "report_to", value: "wandb" },
    ]);
  });
});

describe("keyHistory", () => {
  test("golden: TRL's loss_type appears at v0.16 and its default changes to dapo", () => {
    const h = keyHistory("trl", "loss_type");
    const changed = h.rows.filter((r) => r.changed).map((r) => r.label);
    // v0.16.0: the hard-coded loss becomes a clipped token mean (no loss_type key yet);
    // v0.17.0: loss_type appears, default bnpo (the same token mean, divisors clamped);
    // v0.22.0: the default becomes dapo (num_items_in_batch).
    for (const l of ["v0.16.0", "v0.17.0", "v0.22.0"]) expect(changed).toContain(l);
    expect(h.rows.find((r) => r.label === "v0.15.2")?.semantics).toMatch(/seq_mean_token_mean/);
    expect(h.rows.find((r) => r.label === "v0.16.0")?.semantics).toMatch(/token_mean/);
    expect(h.rows.find((r) => r.label === "f2cd5771")).toMatchObject({
      default: "dapo",
      defined: true,
    });
    expect(h.rows.find((r) => r.label === "v1.9.0")?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("diffExplanations", () => {
  test("golden: TRL v0.19.0 → v1.9.0 changes the default loss_type and the aggregation", () => {
    const a = explainFrameworkConfig("trl@v0.19.0");
    const b = explainFrameworkConfig("trl@v1.9.0");
    const d = diffExplanations(a, b, { a: "trl@v0.19.0", b: "trl@v1.9.0" });
    expect(d.settings.find((s) => s.key === "loss_type")).toEqual({
      key: "loss_type",
      a: "bnpo",
      b: "dapo",
    });
    expect(d.algebra.map((x) => x.component)).toContain("aggregation");
  });
});
