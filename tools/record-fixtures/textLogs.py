"""Record the text metric-log fixtures of test/fixtures/logs/ (issue 34) with the real writers.

(a) jsonl/: verl's own FileLogger (verl/utils/tracking.py at 1dda039b), its class read from a
    verl git mirror with `git show` and exec'd (nothing of verl is copied into the repository),
    writing through orjson as verl does.
(b) trainer_state/out/checkpoint-{2,10}/trainer_state.json: transformers' TrainerState and its
    save_to_json; each log_history entry is built as Trainer.log builds it (logs + "epoch", then
    "step": global_step), with the metric names of TRL's GRPOTrainer, each checked to occur as
    `self._metrics[mode]["..."]` in trl/trainer/grpo_trainer.py of a TRL git mirror.
(c) wandb/: W&B history exports written with pandas: run.history()-like frames saved with
    to_csv (index kept, as in W&B's docs), to_json(orient="records", lines=True) and
    to_json(orient="records"); and a chart export (Step, "<run> - <metric>", __MIN, __MAX, all
    cells quoted) modelled on public exports: no W&B app was reached.

Usage (see README.md):
  PYTHONPATH=<transformers 5.17.0, orjson, pandas> /usr/bin/python3 tools/record-fixtures/textLogs.py \
      --verl-git <verl mirror>/repo --trl-git <trl mirror>/repo
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

VERL_COMMIT = "1dda039b9c6311889a9c9a26040677e1254814f9"
ROOT = Path(__file__).resolve().parents[2]


def git_show(git_dir: str, rev_path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", rev_path], check=True, capture_output=True, text=True
    ).stdout


def load_verl_file_logger(git_dir: str):
    source = git_show(git_dir, f"{VERL_COMMIT}:verl/utils/tracking.py")
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "FileLogger")
    module = ast.Module(body=[cls], type_ignores=[])
    import orjson

    scope = {"os": os, "orjson": orjson}
    exec(compile(module, f"verl@{VERL_COMMIT[:8]}/verl/utils/tracking.py", "exec"), scope)
    digest = hashlib.sha256(source.encode()).hexdigest()
    return scope["FileLogger"], digest


def record_jsonl(out: Path, git_dir: str) -> dict:
    import numpy as np

    FileLogger, digest = load_verl_file_logger(git_dir)
    path = out / "jsonl" / "gsm8k_grpo.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    os.environ["VERL_FILE_LOGGER_PATH"] = str(path)
    logger = FileLogger("verl_grpo_example_gsm8k", "qwen2.5_0.5b_grpo")
    # Validation before training (step 0), as RayPPOTrainer.fit logs val_metrics first.
    logger.log({"val-core/openai/gsm8k/acc/mean@1": np.float64(0.25)}, step=0)
    for step in range(1, 5):
        metrics = {
            "actor/entropy": np.float64(1.5 - 0.125 * step),
            "actor/pg_loss": np.float32(-0.015625 * step),
            "actor/pg_clipfrac": 0.0625 * step,
            "actor/ppo_kl": np.float64(0.001 * step),
            "actor/grad_norm": float("nan") if step == 3 else 0.5 + step,
            "critic/score/mean": np.float64(0.25 * step),
            "response_length/mean": np.int64(100 + step),
            "response_length/clip_ratio": 0.0,
            "timing_s/gen": float("inf") if step == 4 else 2.0 * step,
        }
        logger.log(data=metrics, step=step)
        if step == 2:
            # A second line of the same step: the validation run inside the training loop.
            logger.log(data={"val-core/openai/gsm8k/acc/mean@1": np.float64(0.5)}, step=step)
    logger.finish()
    return {"writer": f"verl FileLogger (verl/utils/tracking.py at {VERL_COMMIT})", "tracking_py_sha256": digest}


TRL_TRAIN = [
    "num_tokens",
    "completions/mean_length",
    "completions/min_length",
    "completions/max_length",
    "completions/clipped_ratio",
    "rewards/{f}/mean",
    "rewards/{f}/std",
    "reward",
    "reward_std",
    "frac_reward_zero_std",
    "kl",
    "entropy",
    "clip_ratio/low_mean",
    "clip_ratio/low_min",
    "clip_ratio/high_mean",
    "clip_ratio/high_max",
    "clip_ratio/region_mean",
]


def check_trl_names(git_dir: str) -> dict:
    head = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    source = git_show(git_dir, f"{head}:trl/trainer/grpo_trainer.py")
    found = set(re.findall(r'self\._metrics\[mode\]\[f?"([^"]+)"\]', source))
    for name in TRL_TRAIN:
        key = name.replace("{f}", "{reward_func_name}")
        if key not in found:
            raise SystemExit(f"{name} is not a GRPOTrainer metric at trl {head}")
    return {"trl_commit": head, "grpo_trainer_py_sha256": hashlib.sha256(source.encode()).hexdigest()}


def trl_entry(step: int) -> dict:
    logs = {"loss": 0.01 * step, "grad_norm": float("nan") if step == 4 else 0.25 * step, "learning_rate": 1e-6 * (11 - step)}
    for k, name in enumerate(TRL_TRAIN):
        logs[name.replace("{f}", "accuracy_reward")] = step + k / 32
    # TRL logs None for a metric with no valid value in the window (GRPOTrainer.log).
    logs["rewards/accuracy_reward/std"] = None if step == 6 else logs["rewards/accuracy_reward/std"]
    return logs


def record_trainer_state(out: Path) -> dict:
    import transformers
    from transformers.trainer_callback import TrainerState

    history = []

    for step in range(1, 11):
        state_epoch = step / 5
        entries = [trl_entry(step)]
        if step % 5 == 0:
            entries.append({"eval_loss": 0.5 / step, "eval_reward": 0.1 * step, "eval_runtime": 1.5, "eval_samples_per_second": 8.0})
        if step == 10:
            entries.append({"train_runtime": 12.5, "train_samples_per_second": 6.4, "train_steps_per_second": 0.8, "total_flos": 0.0, "train_loss": 0.055})
        for logs in entries:
            # Trainer.log (transformers trainer.py): logs["epoch"] = state.epoch; {**logs, "step": global_step}.
            logs["epoch"] = state_epoch
            history.append({**logs, "step": step})
        if step in (2, 10):
            state = TrainerState(epoch=state_epoch, global_step=step, max_steps=10, logging_steps=1, eval_steps=5, save_steps=2)
            state.log_history = list(history)
            path = out / "trainer_state" / "out" / f"checkpoint-{step}" / "trainer_state.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            state.save_to_json(str(path))

    return {"writer": f"transformers {transformers.__version__} TrainerState.save_to_json"}


def history_frame():
    import pandas as pd

    rows = []
    for step in range(0, 6):
        row = {"_step": step, "_runtime": 10.0 * step + 0.5, "_timestamp": 1750000000.0 + 10 * step, "train/loss": 1.0 / (step + 1), "train/global_step": step * 2}
        if step % 2 == 0:
            row["eval/reward"] = 0.1 * step
        if step == 3:
            row["train/loss"] = float("inf")
        rows.append(row)
    return pd.DataFrame(rows)


def record_wandb(out: Path) -> dict:
    import csv

    import pandas as pd

    d = out / "wandb"
    d.mkdir(parents=True, exist_ok=True)
    df = history_frame()
    df.to_csv(d / "history.csv")
    df.to_json(d / "history.jsonl", orient="records", lines=True)
    df.to_json(d / "history.json", orient="records")
    runs = {"lively-sun-3": [0, 1, 2, 3], "bright-moon-4": [0, 2, 4]}
    steps = sorted({s for v in runs.values() for s in v})
    cols = {"Step": steps}
    for run, have in runs.items():
        for metric, f in (("train/loss", lambda s: 2.0 / (s + 1)), ("train/reward", lambda s: 0.25 * s)):
            vals = [f(s) if s in have else None for s in steps]
            cols[f"{run} - {metric}"] = vals
            cols[f"{run} - {metric}__MIN"] = vals
            cols[f"{run} - {metric}__MAX"] = vals
    pd.DataFrame(cols).to_csv(d / "wandb_export_2026-01-02T03_04_05.678+00_00.csv", index=False, quoting=csv.QUOTE_ALL)
    return {"writer": f"pandas {pd.__version__}"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--verl-git", required=True)
    ap.add_argument("--trl-git", required=True)
    ap.add_argument("--out", default=str(ROOT / "test" / "fixtures" / "logs"))
    args = ap.parse_args()
    out = Path(args.out)
    import numpy
    import orjson
    import pandas

    provenance = {
        "recorder": "tools/record-fixtures/textLogs.py",
        "command": "PYTHONPATH=<transformers 5.17.0 + deps>:<orjson, pandas> /usr/bin/python3 tools/record-fixtures/textLogs.py --verl-git <verl mirror> --trl-git <trl mirror>",
        "python": sys.version.split()[0],
        "versions": {"numpy": numpy.__version__, "orjson": orjson.__version__, "pandas": pandas.__version__},
        "jsonl": record_jsonl(out, args.verl_git),
        "trainer_state": {**record_trainer_state(out), **check_trl_names(args.trl_git)},
        "wandb": {**record_wandb(out), "chart_export": "modelled on public W&B chart exports (wandb/wandb#5349): not produced by the W&B app"},
    }
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "provenance.json")
    provenance["sha256"] = {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    (out / "provenance.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    for p in files:
        print(p.relative_to(out), p.stat().st_size)


if __name__ == "__main__":
    main()
