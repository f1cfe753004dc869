/**
 * Enforces src/conformance/releases/trlArguments.ts: the keys a TRL GRPO launch takes beside
 * GRPOConfig (TrainingArguments and TRL's CLI dataclasses), per release, as
 * tools/record-releases/trlArguments.py recorded them in data/trl-arguments.json, and that the
 * recorded SHA-256s are those of the upstream files (the huggingface/trl mirror and the wheels).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, test } from "vitest";
import {
  _resetTrlArguments,
  loadTrlArguments,
  trlArgumentKeys,
} from "../../../src/conformance/releases/trlArguments.js";
import { IoError, UnknownNameError } from "../../../src/errors.js";

const MIRROR = "/work/.mirror/huggingface+trl/repo";

interface Run {
  from: string;
  to: string;
  [k: string]: unknown;
}
interface Data {
  expanded: Record<string, number>;
  transformers: {
    wheels: { version: string; wheel: string; wheelSha256: string; sha256: string; line: number }[];
    fields: { key: string; runs: Run[] }[];
  };
  trl: {
    releases: { label: string; commit: string }[];
    classes: { class: string; runs: (Run & { path: string; line: number; sha256: string })[] }[];
    fields: { key: string; class: string; runs: (Run & { line: number })[] }[];
  };
}

const data = JSON.parse(
  readFileSync(
    new URL("../../../src/conformance/releases/data/trl-arguments.json", import.meta.url),
    "utf8",
  ),
) as Data;
const labels = data.trl.releases.map((r) => r.label);
const trlLabels = (
  JSON.parse(
    readFileSync(
      new URL("../../../src/conformance/releases/data/trl.json", import.meta.url),
      "utf8",
    ),
  ) as { releases: { label: string; commit: string }[] }
).releases;

/** The run of `runs` that holds at `label` (release order of the file). */
function at<R extends Run>(runs: readonly R[], label: string): R | undefined {
  const i = labels.indexOf(label);
  return runs.find((r) => labels.indexOf(r.from) <= i && i <= labels.indexOf(r.to));
}

const sha256 = (b: Buffer): string => createHash("sha256").update(b).digest("hex");

afterEach(() => _resetTrlArguments());

describe("trlArgumentKeys", () => {
  test("golden: recorded keys and sources, read from the upstream mirror", () => {
    // The releases are trl.json's, in its order.
    expect(data.trl.releases).toEqual(trlLabels.map((r) => ({ label: r.label, commit: r.commit })));
    expect(labels.length).toBe(44);
    for (const label of labels) {
      const keys = trlArgumentKeys(label);
      // transformers/training_args.py, class TrainingArguments, in each of the three wheels.
      for (const k of ["output_dir", "report_to", "logging_steps", "save_strategy", "bf16"])
        expect([label, k, keys.get(k)]).toEqual([label, k, { source: "TrainingArguments" }]);
      for (const k of ["num_train_epochs", "max_steps", "lr_scheduler_type", "warmup_ratio"])
        expect(keys.get(k)?.source).toBe("TrainingArguments");
      for (const k of ["gradient_checkpointing", "push_to_hub", "eval_strategy"])
        expect(keys.get(k)?.source).toBe("TrainingArguments");
      expect(keys.get("per_device_eval_batch_size")?.source).toBe("TrainingArguments");
      expect(keys.get("use_liger_kernel")?.source).toBe("TrainingArguments");
      // GRPOConfig redeclares learning_rate; it is a TrainingArguments field as well.
      expect(keys.get("learning_rate")?.source).toBe("TrainingArguments");
      // trl/scripts/utils.py: class ScriptArguments (dataset_name, dataset_train_split).
      expect(keys.get("dataset_name")?.source).toBe("ScriptArguments");
      expect(keys.get("dataset_train_split")?.source).toBe("ScriptArguments");
      // trl/trainer/model_config.py: class ModelConfig.
      for (const k of ["model_name_or_path", "use_peft", "lora_r", "lora_alpha", "lora_dropout"])
        expect([label, k, keys.get(k)?.source]).toEqual([label, k, "ModelConfig"]);
      expect(keys.get("lora_target_modules")?.source).toBe("ModelConfig");
      expect(keys.get("attn_implementation")?.source).toBe("ModelConfig");
      // trl/scripts/grpo.py: class GRPOScriptArguments(ScriptArguments).
      expect(keys.get("reward_model_name_or_path")?.source).toBe("GRPOScriptArguments");
      // A key only GRPOConfig declares is not one of these.
      expect(keys.has("beta")).toBe(false);
      expect(keys.has("num_generations")).toBe(false);
    }
    // ModelConfig's use_peft: `use_peft: bool = field(default=False, …)` at
    // trl/trainer/model_config.py:105 (v0.14.0) and :103 (v1.9.0).
    const usePeft = data.trl.fields.find((f) => f.key === "use_peft" && f.class === "ModelConfig");
    expect(at(usePeft?.runs ?? [], "v0.14.0")).toMatchObject({ line: 105, default: false });
    expect(at(usePeft?.runs ?? [], "v1.9.0")).toMatchObject({ line: 103, default: false });
    // reward_funcs: GRPOScriptArguments from v0.18.0 (trl/scripts/grpo.py:55); v0.17.0's has only
    // reward_model_name_or_path.
    for (const label of labels) {
      const want =
        labels.indexOf(label) >= labels.indexOf("v0.18.0") ? "GRPOScriptArguments" : undefined;
      expect([label, trlArgumentKeys(label).get("reward_funcs")?.source]).toEqual([label, want]);
    }
    const rf = data.trl.fields.find((f) => f.key === "reward_funcs");
    expect(rf?.runs[0]).toMatchObject({ from: "v0.18.0", line: 55, default: null });
    // torch_dtype through v0.26.2, dtype from v0.23.0 (both ModelConfig).
    expect(trlArgumentKeys("v0.22.2").has("dtype")).toBe(false);
    expect(trlArgumentKeys("v0.23.0").get("dtype")?.source).toBe("ModelConfig");
    expect(trlArgumentKeys("v0.26.2").get("torch_dtype")?.source).toBe("ModelConfig");
    expect(trlArgumentKeys("v0.27.0").get("torch_dtype")).toBeUndefined();
    // DatasetMixtureConfig: in grpo.py's dataclass_types from v0.22.0.
    expect(trlArgumentKeys("v0.21.0").has("datasets")).toBe(false);
    expect(trlArgumentKeys("v0.22.0").get("datasets")?.source).toBe("DatasetMixtureConfig");
    // The counts the recorder printed.
    expect(data.expanded).toEqual({
      wheels: 3,
      trainingArgumentsRows: 357,
      releases: 44,
      classRows: 162,
      fieldRows: 1294,
    });
    expect(data.transformers.wheels.map((w) => w.version)).toEqual(["4.57.6", "5.17.0", "5.18.0"]);
  });

  test("identity: the map is computed once per release and refuses an unrecorded label", () => {
    expect(trlArgumentKeys("v1.9.0")).toBe(trlArgumentKeys("v1.9.0"));
    expect(() => trlArgumentKeys("v1.9")).toThrow(UnknownNameError);
  });

  test("golden: loadTrlArguments checks the format and the counts", () => {
    expect(() => loadTrlArguments({ format: "x" })).toThrow(IoError);
    expect(() => loadTrlArguments({ ...data, format: "polgrad-trl-arguments/1", trl: 1 })).toThrow(
      IoError,
    );
    const fewer = { ...data, expanded: { ...data.expanded, fieldRows: 1 } };
    expect(() => loadTrlArguments(fewer)).toThrow(/fieldRows/);
    loadTrlArguments(data);
    expect(trlArgumentKeys("v0.14.0").get("use_peft")).toEqual({ source: "ModelConfig" });
  });

  test("identity: the recorded SHA-256s are git show's of the mirror (v0.14.0, v1.9.0) and the wheels'", () => {
    if (!existsSync(MIRROR)) {
      console.log(`skipped the mirror check: ${MIRROR} is absent (fetch github:huggingface/trl)`);
    } else {
      for (const label of ["v0.14.0", "v1.9.0"]) {
        const commit = data.trl.releases.find((r) => r.label === label)?.commit as string;
        const classes = data.trl.classes.flatMap((c) => {
          const run = at(c.runs, label);
          return run === undefined ? [] : [{ cls: c.class, ...run }];
        });
        expect(classes.map((c) => c.cls).sort()).toEqual(
          label === "v0.14.0"
            ? ["GRPOScriptArguments", "ModelConfig", "ScriptArguments"]
            : ["DatasetMixtureConfig", "GRPOScriptArguments", "ModelConfig", "ScriptArguments"],
        );
        for (const c of classes) {
          const bytes = execFileSync("git", ["-C", MIRROR, "show", `${commit}:${c.path}`], {
            maxBuffer: 1 << 26,
          });
          expect([label, c.path, sha256(bytes)]).toEqual([label, c.path, c.sha256]);
          const line = bytes.toString("utf8").split("\n")[c.line - 1];
          expect(line).toMatch(new RegExp(`^class ${c.cls}\\b`));
        }
      }
    }
    for (const w of data.transformers.wheels) {
      const file = ["/opt/pypi-more/files", "/opt/pypi/files"]
        .map((d) => `${d}/${w.wheel}`)
        .find((p) => existsSync(p));
      if (file === undefined) {
        console.log(`skipped the wheel check: ${w.wheel} is absent from /opt/pypi*/files`);
        continue;
      }
      expect([w.wheel, sha256(readFileSync(file))]).toEqual([w.wheel, w.wheelSha256]);
    }
  });
});
