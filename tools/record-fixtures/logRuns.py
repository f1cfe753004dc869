#!/usr/bin/env python3
"""Record whole simulated training runs as the frameworks log them, for `polgrad diagnose` (issue 34).

Writes test/fixtures/logs/runs/{collapse,healthy}/ and runs/provenance.json. Each run is 150
optimizer steps of the quantities the detectors read, drawn with numpy (seeded): every quantity a
level plus a linear drift plus Gaussian noise, the gradient norm log-normal; the `collapse` run's
entropy drops by 0.4 nats after step 100. Each run is written four ways, by the real writers:

- ``trl/checkpoint-{100,150}/trainer_state.json``: transformers' ``TrainerState.save_to_json``,
  each ``log_history`` entry built as ``Trainer.log`` builds it (the logs, ``epoch``, then
  ``step``), under TRL GRPOTrainer's metric names (checked against trl/trainer/grpo_trainer.py of
  a TRL mirror by textLogs.py's check);
- ``verl/gsm8k/qwen_grpo.jsonl``: verl's own ``FileLogger`` (verl/utils/tracking.py at 1dda039b,
  read with ``git show`` and exec'd, as textLogs.py does), under verl's metric names, with
  ``VERL_FILE_LOGGER_ROOT`` pointing at the run's ``verl/`` folder;
- ``tb-simple/runs/Dec05_12-00-00_host/``: tensorboardX ``add_scalar`` (``simple_value``), under
  TRL's names with the HF TensorBoardCallback's ``train/`` prefix;
- ``tb-tensor/``: ``torch.utils.tensorboard`` ``add_scalar(..., new_style=True)`` (a rank-0
  DT_FLOAT tensor), under verl's names as its tensorboard backend writes them.

Event files are renamed ``events.out.tfevents.1700000000.host`` (their bytes as written; the wall
times inside them come from the clock, so a re-run changes bytes, not values). Nothing of the
frameworks is copied into the repository.

Usage (see README.md; the same environment as textLogs.py):

    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/pytf:/tmp/pyfx /usr/bin/python3 \\
        tools/record-fixtures/logRuns.py --verl-git <verl mirror>/repo
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import tensorboardLogs  # noqa: E402  (the wheels of the TensorBoard writers)
import textLogs  # noqa: E402  (verl's FileLogger from a mirror)

STEPS = 150
COLLAPSE_AFTER = 100
DROP = 0.4
SEEDS = {"collapse": 11, "healthy": 5}

# quantity -> (TRL name, verl name)
NAMES = {
    "entropy": ("entropy", "actor/entropy"),
    "clip_total": ("clip_ratio/region_mean", "actor/pg_clipfrac"),
    "response_length": ("completions/mean_length", "response_length/mean"),
    "truncation_rate": ("completions/clipped_ratio", "response_length/clip_ratio"),
    "kl_ref": ("kl", None),
    "kl_old": (None, "actor/ppo_kl"),
    "zero_std_frac": ("frac_reward_zero_std", None),
    "reward_mean": ("reward", "critic/score/mean"),
    "grad_norm": ("grad_norm", "actor/grad_norm"),
}


def simulate(seed: int, collapse: bool) -> dict[str, list[float]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    t = np.arange(1, STEPS + 1, dtype=np.float64)

    def line(level: float, drift: float, sigma: float):
        return level + drift * t / STEPS + sigma * rng.standard_normal(STEPS)

    q = {
        "entropy": line(0.8, -0.3 * rng.uniform(), 0.02),
        "clip_total": line(0.1, 0.02 * rng.uniform(), 0.007),
        "response_length": line(300.0, 100.0 * (rng.uniform() - 0.5), 20.0),
        "truncation_rate": line(0.05, 0.02 * rng.uniform(), 0.007),
        "kl_ref": line(0.01, 0.04 * rng.uniform(), 0.002),
        "kl_old": line(0.002, 0.0, 0.0007),
        "zero_std_frac": line(0.2, 0.1 * rng.uniform(), 0.02),
        "reward_mean": line(0.3, 0.2 * rng.uniform(), 0.03),
        "grad_norm": np.exp(0.3 * rng.standard_normal(STEPS)),
    }
    if collapse:
        q["entropy"] = np.where(t > COLLAPSE_AFTER, q["entropy"] - DROP, q["entropy"])
    return {k: [float(x) for x in v] for k, v in q.items()}


def named(q: dict[str, list[float]], which: int, step: int, prefix: str = "") -> dict[str, float]:
    return {prefix + n[which]: q[k][step - 1] for k, n in NAMES.items() if n[which] is not None}


def write_trl(d: Path, q: dict[str, list[float]]) -> None:
    from transformers.trainer_callback import TrainerState

    history = []
    for step in range(1, STEPS + 1):
        logs = {**named(q, 0, step), "loss": 0.0, "learning_rate": 1e-6}
        # Trainer.log: logs["epoch"] = state.epoch; then {**logs, "step": global_step}.
        logs["epoch"] = step / STEPS
        history.append({**logs, "step": step})
        if step in (COLLAPSE_AFTER, STEPS):
            state = TrainerState(
                epoch=step / STEPS, global_step=step, max_steps=STEPS, logging_steps=1, save_steps=50
            )
            state.log_history = list(history)
            path = d / "trl" / f"checkpoint-{step}" / "trainer_state.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            state.save_to_json(str(path))


def write_verl(d: Path, q: dict[str, list[float]], FileLogger) -> None:
    root = d / "verl"
    root.mkdir(parents=True, exist_ok=True)
    os.environ.pop("VERL_FILE_LOGGER_PATH", None)
    os.environ["VERL_FILE_LOGGER_ROOT"] = str(root)
    logger = FileLogger("gsm8k", "qwen_grpo")
    for step in range(1, STEPS + 1):
        logger.log(named(q, 1, step), step)
    logger.finish()


def only_event_file(folder: str) -> str:
    found = glob.glob(os.path.join(folder, "events.out.tfevents.*"))
    if len(found) != 1:
        raise SystemExit(f"expected one event file in {folder}, found {found}")
    return found[0]


def write_tb(d: Path, q: dict[str, list[float]], work: str) -> dict[str, str]:
    import tensorboardX
    import torch
    from tensorboardX import SummaryWriter as TbxWriter
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    simple = os.path.join(work, f"simple-{d.name}")
    w = TbxWriter(simple)
    for step in range(1, STEPS + 1):
        for name, v in named(q, 0, step, "train/").items():
            w.add_scalar(name, v, step)
    w.close()
    tensor = os.path.join(work, f"tensor-{d.name}")
    w = TorchWriter(tensor)
    for step in range(1, STEPS + 1):
        for name, v in named(q, 1, step).items():
            w.add_scalar(name, v, step, new_style=True)
    w.close()
    for src, dst in (
        (simple, d / "tb-simple" / "runs" / "Dec05_12-00-00_host"),
        (tensor, d / "tb-tensor"),
    ):
        dst.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(only_event_file(src), dst / "events.out.tfevents.1700000000.host")
    return {"tensorboardX": tensorboardX.__version__, "torch": torch.__version__}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--verl-git", required=True)
    ap.add_argument("--out", default=str(ROOT / "test" / "fixtures" / "logs" / "runs"))
    args = ap.parse_args()
    out = Path(args.out)
    site = tempfile.mkdtemp(prefix="polgrad-logruns-")
    work = tempfile.mkdtemp(prefix="polgrad-logruns-out-")
    try:
        wheel_shas = tensorboardLogs.unpack_wheels(site)
        import numpy
        import orjson
        import transformers

        FileLogger, tracking_sha = textLogs.load_verl_file_logger(args.verl_git)
        shutil.rmtree(out, ignore_errors=True)
        writers = {}
        runs = {}
        for kind, seed in SEEDS.items():
            d = out / kind
            q = simulate(seed, kind == "collapse")
            write_trl(d, q)
            write_verl(d, q, FileLogger)
            writers = write_tb(d, q, work)
            runs[kind] = {"seed": seed, "entropy_drop_after_step": COLLAPSE_AFTER if kind == "collapse" else None}
        files = {
            str(p.relative_to(out)): {"bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
            for p in sorted(out.rglob("*"))
            if p.is_file()
        }
        prov = {
            "recorded_by": "tools/record-fixtures/logRuns.py",
            "command": "PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/pytf:/tmp/pyfx /usr/bin/python3 tools/record-fixtures/logRuns.py --verl-git <verl mirror>/repo",
            "steps": STEPS,
            "drop_nats": DROP,
            "runs": runs,
            "names": {k: {"trl": v[0], "verl": v[1]} for k, v in NAMES.items()},
            "writers": {
                "transformers": f"{transformers.__version__} TrainerState.save_to_json",
                "verl": f"FileLogger of verl {textLogs.VERL_COMMIT} verl/utils/tracking.py (sha256 {tracking_sha}), orjson {orjson.__version__}",
                "tensorboardX": f"{writers['tensorboardX']} SummaryWriter.add_scalar (simple_value)",
                "torch": f"{writers['torch']} torch.utils.tensorboard SummaryWriter.add_scalar(new_style=True)",
                "numpy": numpy.__version__,
            },
            "wheels_sha256": wheel_shas,
            "files": files,
        }
        (out / "provenance.json").write_text(json.dumps(prov, indent=2, sort_keys=True) + "\n")
    finally:
        shutil.rmtree(site, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
