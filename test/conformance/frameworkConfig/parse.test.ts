import { describe, expect, test } from "vitest";
import { resolveFrameworkConfig } from "../../../src/conformance/frameworkConfig/explain.js";
import {
  parseFrameworkConfig,
  tokenizeArgs,
} from "../../../src/conformance/frameworkConfig/parse.js";
import { ConfigError } from "../../../src/errors.js";

const kv = (p: ReturnType<typeof parseFrameworkConfig>) =>
  Object.fromEntries(p.entries.map((e) => [e.key, e.value]));

describe("parseFrameworkConfig", () => {
  test("golden: the three frameworks' forms give the same entries", () => {
    // TRL: a GRPOConfig YAML, the same as JSON, and as --key value / --key=value arguments.
    const want = { loss_type: "dapo", epsilon_high: 0.28, beta: 0.01, use_vllm: true };
    expect(
      kv(
        parseFrameworkConfig(
          "trl",
          "loss_type: dapo\nepsilon_high: 0.28\nbeta: 0.01\nuse_vllm: true\n",
        ),
      ),
    ).toEqual(want);
    expect(kv(parseFrameworkConfig("trl", JSON.stringify(want)))).toEqual(want);
    const args = parseFrameworkConfig(
      "trl",
      "trl grpo --loss_type dapo \\\n  --epsilon_high=0.28 --beta 0.01 --use_vllm # colocate\n",
    );
    expect(kv(args)).toEqual(want);
    expect(args.form).toBe("args");
    expect(args.skipped).toEqual(["trl", "grpo"]);
    // verl: nested YAML, dotted keys, Hydra overrides after the launcher.
    const verl = {
      "actor_rollout_ref.actor.loss_agg_mode": "seq-mean-token-mean",
      "actor_rollout_ref.actor.policy_loss.loss_mode": "gspo",
      "algorithm.adv_estimator": "grpo",
    };
    const nested =
      "actor_rollout_ref:\n  actor:\n    loss_agg_mode: seq-mean-token-mean\n    policy_loss:\n      loss_mode: gspo\nalgorithm:\n  adv_estimator: grpo\n";
    expect(kv(parseFrameworkConfig("verl", nested))).toEqual(verl);
    expect(kv(parseFrameworkConfig("verl", JSON.stringify(verl)))).toEqual(verl);
    const ov = parseFrameworkConfig(
      "verl",
      "python3 -m verl.trainer.main_ppo \\\n actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-mean \\\n +actor_rollout_ref.actor.policy_loss.loss_mode=gspo algorithm.adv_estimator=grpo\n",
    );
    expect(kv(ov)).toEqual(verl);
    expect(ov.skipped).toEqual(["python3", "-m", "verl.trainer.main_ppo"]);
    // OpenRLHF: an arguments file (nargs 2 is a list) and a flag → value mapping, dashes kept.
    const orl = {
      "--advantage_estimator": "group_norm",
      "--eps_clip_low_high": [0.2, 0.28],
      "--use_kl_loss": true,
    };
    expect(
      kv(
        parseFrameworkConfig(
          "openrlhf",
          "--advantage_estimator group_norm\n--eps_clip_low_high 0.2 0.28\n--use_kl_loss\n",
        ),
      ),
    ).toEqual(orl);
    expect(
      kv(
        parseFrameworkConfig(
          "openrlhf",
          '"--advantage_estimator": group_norm\n"--eps_clip_low_high": [0.2, 0.28]\n"--use_kl_loss": true\n',
        ),
      ),
    ).toEqual(orl);
  });

  test("golden: values are YAML scalars; None is null; the last of two equal keys wins in its first place", () => {
    const p = parseFrameworkConfig(
      "trl",
      "--delta None --epsilon 1e-1 --loss_type 'dr_grpo' --delta 2",
    );
    expect(p.entries.map((e) => [e.key, e.value])).toEqual([
      ["delta", 2],
      ["epsilon", 0.1],
      ["loss_type", "dr_grpo"],
    ]);
    expect(kv(parseFrameworkConfig("trl", "--delta None"))).toEqual({ delta: null });
    expect(tokenizeArgs("a \"b c\" 'd#e' f#g # comment\nh", "x")).toEqual([
      "a",
      "b c",
      "d#e",
      "f#g",
      "h",
    ]);
  });

  test("rejects: malformed text with a ConfigError naming the source", () => {
    const bad = (fw: "trl" | "verl" | "openrlhf", text: string, re: RegExp) => {
      const run = () => parseFrameworkConfig(fw, text, { source: "grpo.yaml" });
      expect(run).toThrow(ConfigError);
      expect(run).toThrow(re);
    };
    bad("trl", "--loss_type 'dapo", /grpo\.yaml has an unterminated ' quote/);
    bad("trl", "loss_type: [dapo\n", /must be YAML or JSON/);
    bad("trl", "- 1\n- 2\n", /must be a mapping/);
    bad("verl", "a.b=1 c", /verl overrides must be key=value/);
    bad("trl", "--epsilon .inf", /must be finite/);
    // A deeply nested text is refused before the YAML parser could overflow its stack.
    bad(
      "trl",
      `a: ${"[".repeat(5000)}${"]".repeat(5000)}`,
      /must nest at most 64 levels .*got 5000/,
    );
    const block = `a:\n${Array.from({ length: 80 }, (_, i) => `${" ".repeat(2 * i + 2)}k${i}:`).join("\n")} 1\n`;
    bad("verl", block, /must nest at most 64 levels .*got 80/);
    // Brackets inside quotes and comments do not count.
    expect(
      parseFrameworkConfig("trl", `loss_type: "${"[".repeat(100)}" # ${"{".repeat(100)}\n`).entries,
    ).toHaveLength(1);
  });

  test("golden: a duplicate YAML key is read as yaml.safe_load reads it, the last value winning, with a warning naming both lines", () => {
    // TRL reads its config file with yaml.safe_load, which keeps the last of two equal keys.
    const p = parseFrameworkConfig("trl", "beta: 0.1\nloss_type: dapo\nbeta: 0.04\n", {
      source: "grpo.yaml",
    });
    expect(p.entries.find((e) => e.key === "beta")?.value).toBe(0.04);
    expect(p.warnings).toEqual([
      "grpo.yaml: key beta on lines 1 and 3 (the last value wins, as yaml.safe_load reads it)",
    ]);
    const r = resolveFrameworkConfig("trl@v1.9.0", "beta: 0.1\nbeta: 0.04\n");
    expect(r.warnings.map((w) => w.code)).toContain("config-duplicate-key");
    // Nested (verl): the dotted path names it.
    const v = parseFrameworkConfig("verl", "a:\n  b: 1\n  b: 2\n");
    expect(v.warnings).toEqual([
      "the config: key a.b on lines 2 and 3 (the last value wins, as yaml.safe_load reads it)",
    ]);
  });

  test("golden: verl's --config-name, group@package=option and ~key are read against the release's facts; another folder is refused by name", () => {
    const launch = (opts: string) =>
      `python3 -m verl.trainer.main_ppo ${opts} actor_rollout_ref.actor.clip_ratio_high=0.28`;
    // main_ppo's own folder, spelled as verl's examples spell it; the name with or without .yaml.
    for (const opts of [
      "--config-path=config --config-name=ppo_megatron_trainer.yaml",
      "--config-path ./config --config-name ppo_megatron_trainer",
      "-cp /home/u/verl/verl/trainer/config -cn ppo_megatron_trainer",
    ]) {
      const p = parseFrameworkConfig("verl", launch(opts));
      expect(p.configName, opts).toBe("ppo_megatron_trainer");
      expect(kv(p), opts).toEqual({ "actor_rollout_ref.actor.clip_ratio_high": 0.28 });
    }
    // The default config is the release itself: explained as without the option.
    const plain = resolveFrameworkConfig("verl@v0.7.1", launch(""));
    const named = resolveFrameworkConfig("verl@v0.7.1", launch("--config-name=ppo_trainer"));
    expect(named.algebra).toEqual(plain.algebra);
    // ppo_megatron_trainer's recorded default actor.strategy is megatron (its expanded file at
    // v0.7.1, the flat file at v0.4.1): refused naming the key and the option that chose it.
    for (const rel of ["verl@v0.4.1", "verl@v0.7.1", "verl@1dda039b"])
      expect(() =>
        resolveFrameworkConfig(rel, launch("--config-name ppo_megatron_trainer")),
      ).toThrow(
        /actor_rollout_ref\.actor\.strategy = "megatron" \(the default of --config-name ppo_megatron_trainer, in the config\): selects another actor engine/,
      );
    // A name the release does not ship, with did-you-mean.
    expect(() => resolveFrameworkConfig("verl@v0.7.1", launch("--config-name ppo_trainr"))).toThrow(
      /--config-name "ppo_trainr" is not a config verl\.trainer\.main_ppo ships at verl@v0\.7\.1 \(verl\/trainer\/config has ppo_trainer, ppo_megatron_trainer\).*did you mean "ppo_trainer"/,
    );
    // Another folder, a further search folder, a group selection and a deletion: refused by name.
    for (const [opts, re] of [
      [
        "--config-path=./examples/sglang_multiturn/config",
        /--config-path "\.\/examples\/sglang_multiturn\/config" makes verl load its config from another folder/,
      ],
      ["--config-dir /x", /--config-dir "\/x" makes verl load its config from a further folder/],
    ] as const)
      expect(() => parseFrameworkConfig("verl", launch(opts)), opts).toThrow(re);
    // group@package=option is read, and checked against the release's recorded groups: the
    // default option is the release itself; another option it ships is refused naming it; an
    // option it does not ship is refused with the ones it does.
    const sel = parseFrameworkConfig("verl", launch("actor@actor_rollout_ref.actor=dp_actor"));
    expect(sel.groupSelections).toEqual([
      {
        group: "actor",
        package: "actor_rollout_ref.actor",
        option: "dp_actor",
        token: "actor@actor_rollout_ref.actor=dp_actor",
      },
    ]);
    expect(resolveFrameworkConfig("verl@1dda039b", sel).algebra).toEqual(
      resolveFrameworkConfig("verl@1dda039b", launch("")).algebra,
    );
    expect(() =>
      resolveFrameworkConfig(
        "verl@1dda039b",
        launch("actor@actor_rollout_ref.actor=megatron_actor"),
      ),
    ).toThrow(
      /selects option "megatron_actor" of config group actor at actor_rollout_ref\.actor instead of the default "dp_actor"/,
    );
    expect(() =>
      resolveFrameworkConfig("verl@1dda039b", launch("actor@actor_rollout_ref.actor=mlite_actor")),
    ).toThrow(
      /which verl\/trainer\/config\/actor does not ship at verl@1dda039b \(it ships actor, dp_actor, megatron_actor, torchtitan_actor, veomni_actor\)/,
    );
    expect(() =>
      resolveFrameworkConfig("verl@v0.4.1", launch("actor@actor_rollout_ref.actor=dp_actor")),
    ).toThrow(
      /selects a config group ppo_trainer does not compose at actor_rollout_ref\.actor at verl@v0\.4\.1 \(it composes no recorded group\)/,
    );
    // ~key: deleting a key the loss does not read is listed as ignored; one it reads, or a
    // subtree holding one, is refused naming it; a key the release lacks, as Hydra refuses it.
    const del = resolveFrameworkConfig("verl@1dda039b", launch("~trainer.logger"));
    expect(del.ignored.map((x) => x.key)).toContain("~trainer.logger");
    expect(del.algebra).toEqual(resolveFrameworkConfig("verl@1dda039b", launch("")).algebra);
    expect(() =>
      resolveFrameworkConfig("verl@1dda039b", launch("~actor_rollout_ref.actor.clip_ratio_c")),
    ).toThrow(
      /"~actor_rollout_ref\.actor\.clip_ratio_c" deletes actor_rollout_ref\.actor\.clip_ratio_c, which the loss reads/,
    );
    expect(() =>
      resolveFrameworkConfig("verl@1dda039b", launch("~actor_rollout_ref.actor.policy_loss")),
    ).toThrow(/deletes actor_rollout_ref\.actor\.policy_loss\.loss_mode.*which the loss reads/);
    expect(() => resolveFrameworkConfig("verl@1dda039b", launch("~trainer.logr"))).toThrow(
      /deletes trainer\.logr, which is not a key of verl@1dda039b \(Hydra refuses it\).*did you mean "trainer\.logger"/,
    );
  });
});
