/**
 * The launch-script reader against bash itself: each script below is also run by /bin/bash with
 * an empty PATH, where every external command is caught by command_not_found_handle and written
 * down (as tools/record-corpus/corpus.py records the frameworks' own scripts), so the words bash
 * would hand the trainer are the expected value. Nothing is run but bash builtins.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { parseFrameworkConfig } from "../../../src/conformance/frameworkConfig/parse.js";
import { readLaunchScript } from "../../../src/conformance/frameworkConfig/shellScript.js";

const HANDLER = `
command_not_found_handle() {
  { set +x; } 2>/dev/null
  { printf '%s\\037' "$@"; } > "$REC/$EPOCHREALTIME-$BASHPID"
  return 0
}
`;

/** The words of every external command bash runs for `script`, in order. */
function bashCommands(script: string): string[][] {
  const d = mkdtempSync(join(tmpdir(), "polgrad-sh-"));
  try {
    writeFileSync(join(d, "h.sh"), HANDLER);
    writeFileSync(join(d, "s.sh"), script);
    execFileSync("mkdir", [join(d, "rec"), join(d, "home")]);
    try {
      execFileSync("/bin/bash", ["s.sh"], {
        cwd: d,
        env: { PATH: join(d, "nobin"), HOME: "~", BASH_ENV: join(d, "h.sh"), REC: join(d, "rec") },
        stdio: "ignore",
      });
    } catch {
      // set -e scripts may stop after the launch; what was recorded stands.
    }
    return readdirSync(join(d, "rec"))
      .sort((a, b) => Number.parseFloat(a) - Number.parseFloat(b))
      .map((n) =>
        readFileSync(join(d, "rec", n), "utf8")
          .split("\u001f")
          .slice(0, -1),
      );
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

const isVerl = (w: readonly string[]) => w.includes("verl.trainer.main_ppo");

const SHIPPED_LIKE = `#!/usr/bin/env bash
# A verl launch script in the forms the examples use.
set -xeuo pipefail
export VLLM_ATTENTION_BACKEND=XFORMERS
MODEL_PATH=\${MODEL_PATH:-Qwen/Qwen2.5-7B}
clip_low=\${CLIP_LOW:-0.2}
nproc=8; nnodes=2
total=$(( nproc * nnodes * 4 ))
name="run-$(date +%s)"
DATA=(
    data.train_batch_size=\${total}
    "data.train_files=['$HOME/a.parquet', '$HOME/b.parquet']"
)
EXTRA=()
EXTRA+=(actor_rollout_ref.actor.entropy_coeff=0.001)
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    "\${DATA[@]}" \\
    actor_rollout_ref.model.path=$MODEL_PATH \\
    actor_rollout_ref.actor.clip_ratio_low=\${clip_low} \\
    actor_rollout_ref.actor.clip_ratio_high=\${CLIP_HIGH:-0.28} \\
    trainer.experiment_name=$name \\
    trainer.logger='["console","wandb"]' \\
    "\${EXTRA[@]}" $@ 2>&1 | tee log.txt
`;

describe("readLaunchScript", () => {
  test("golden: a script as shipped gives the words bash gives", () => {
    const ours = readLaunchScript(SHIPPED_LIKE, "run.sh", isVerl);
    const bash = bashCommands(SHIPPED_LIKE).filter(isVerl);
    expect(bash).toHaveLength(1);
    expect(ours.map((l) => l.words)).toEqual(bash);
    // By hand: total = 8·2·4 = 64; $(date …) prints nothing here (nothing is run); "$@" is no word.
    expect(ours[0]?.words).toContain("data.train_batch_size=64");
    expect(ours[0]?.words).toContain("trainer.experiment_name=run-");
    expect(ours[0]?.words.at(-1)).toBe("actor_rollout_ref.actor.entropy_coeff=0.001");
    expect(ours[0]?.line).toBe(16);
    // parseFrameworkConfig detects the script and reads the trainer's command.
    const p = parseFrameworkConfig("verl", SHIPPED_LIKE, { source: "run.sh" });
    expect(p.form).toBe("script");
    expect(p.entries.find((e) => e.key === "actor_rollout_ref.actor.clip_ratio_high")?.value).toBe(
      0.28,
    );
  });

  test("golden: a default that reads a branch-set variable is refused by line, a certain one is read", () => {
    const branch = `case "$DEVICE" in
  npu) CLIP=0.15 ;;
  *) CLIP=0.2 ;;
esac
low=\${CLIP_LOW:-$CLIP}
python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.clip_ratio_low=$low
`;
    expect(() => readLaunchScript(branch, "b.sh", isVerl)).toThrow(
      /b\.sh line 6: the trainer.s command reads low, which line 3 sets inside a branch or loop/,
    );
    // Set again outside the branch, it is certain, and both readers agree.
    const certain = branch.replace("low=${CLIP_LOW:-$CLIP}", "CLIP=0.3\nlow=$CLIP");
    expect(readLaunchScript(certain, "c.sh", isVerl).map((l) => l.words)).toEqual(
      bashCommands(certain).filter(isVerl),
    );
  });

  test("rejects: two trainer commands, or none, are named; a here-document's body is not a command", () => {
    const two = "python3 -m verl.trainer.main_ppo a.b=1\npython3 -m verl.trainer.main_ppo a.b=2\n";
    expect(() => parseFrameworkConfig("verl", `set -x\n${two}`, { source: "t.sh" })).toThrow(
      /must run one verl trainer command; lines 2, 3 each run one/,
    );
    expect(() =>
      parseFrameworkConfig("verl", "set -x\npython3 prepare.py\n", { source: "n.sh" }),
    ).toThrow(/must run verl\.trainer\.main_ppo/);
    const doc = `cat <<EOF > x.txt
python3 -m verl.trainer.main_ppo a.b=9
EOF
python3 -m verl.trainer.main_ppo a.b=1
`;
    expect(readLaunchScript(doc, "h.sh", isVerl).map((l) => l.words)).toEqual(
      bashCommands(doc).filter(isVerl),
    );
  });
});
