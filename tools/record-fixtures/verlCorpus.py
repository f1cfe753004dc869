#!/usr/bin/env python3
"""Record verl's own loss on the launch configs verl ships: numbers and provenance only.

Reads test/fixtures/frameworks/corpus/loss-cases.json (tools/record-corpus/lossCases.mjs: per
distinct verl launch config that polgrad explains, the user settings polgrad's resolution read,
the newest release that explains it, and the row count its micro-batches need) and runs each
through verl's own actor loss at that release with the machinery of verlReleases.py (same
pinned files and hashes, same stand-ins, same float64 torch), on a seeded ragged batch of that
many rows drawn by verlReleases.draw_random (named "verl-corpus/<case index>").

verlReleases.run_case models the batch as one whole mini-batch on one rank (it sets
ppo_mini_batch_size to the batch's rows), as polgrad's verl resolution does. So the settings it is
given are the actor's (`actor_rollout_ref.actor.*`, its `policy_loss.*`), the rollout
correction's (`algorithm.rollout_correction.*`) and calculate_log_probs; data.train_batch_size
only where it equals ppo_mini_batch_size (the v0.6-v0.7.1 one-mini-batch shortcut). The other
settings (rollout.n, trainer.*, algorithm.adv_estimator, ...) set the world or the advantages,
which the batch file stands for; they are listed per case under `world`.

Usage (from the repository root; Debian's python3 with torch: scripts/install-torch.sh):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/verlCorpus.py \\
        --verl-git /work/.mirror/verl-project+verl/repo

Output: test/fixtures/frameworks/corpus/losses-verl.json (indent=1, sorted keys, byte-stable).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpusCommon as C  # noqa: E402
import verlReleases as V  # noqa: E402

TOOL_PATH = "tools/record-fixtures/verlCorpus.py"


def actor_config(settings: dict) -> tuple[dict, dict]:
    """(the settings run_case takes, the world settings left to the batch)."""
    config, world = {}, {}
    mini = settings.get(V.A + "ppo_mini_batch_size", 256)
    for key, value in settings.items():
        if key.startswith(V.A) or key.startswith(V.RC) or key == V.CALC_LP:
            config[key] = value
        elif key in V.WORLD_KEYS and V.A + "ppo_micro_batch_size" in settings:
            # The world the deprecated global micro-batch size is divided over.
            config[key] = value
        elif key == V.TRAIN_BS and value == mini:
            config[key] = value
        else:
            world[key] = value
    return config, world


def main() -> None:
    git_dir, _torch, command, all_cases = C.start(__doc__, TOOL_PATH, "verl-git", "VERL_GIT")
    V.torch = _torch
    by_label = {r.label: r for r in V.RELEASES}
    loaded: dict = {}
    recorded, skipped, prov = [], [], {}
    for index, case in enumerate(all_cases):
        if case["framework"] != "verl":
            continue
        rel = by_label.get(case["release"])
        if rel is None:
            skipped.append({"index": index, "reason": f"release {case['release']} is not one verlReleases records"})
            continue
        if rel.label not in loaded:
            sources = V.read_release(git_dir, rel)
            registry = V.registered_losses(V.ast.parse(sources[V.CORE]))
            ld = V.load_release(rel, sources, [m for m in V.WANTED_LOSS_MODES if m in registry])
            ld.rollout_calc_lp = bool(V.yaml_rollout_calc_lp(sources[rel.yaml]))
            ld.normalize = (V.normalize_block(sources[V.FSDP_WORKERS], V.FSDP_WORKERS)
                            if V.FSDP_WORKERS in sources else None)
            loaded[rel.label] = ld
            prov[rel.label] = {"commit": rel.commit, "files": dict(sorted(rel.files.items())), "path": rel.path}
        ld = loaded[rel.label]
        config, world = actor_config(case["settings"])
        raw = V.draw_random(f"verl-corpus/{index}", case["rows"], False)
        try:
            result = V.run_case(ld, config, V.prepared(raw))
        except (SystemExit, NotImplementedError, KeyError, ValueError, RuntimeError) as e:
            skipped.append({"index": index, "reason": f"{type(e).__name__}: {e}"})
            continue
        grad = result["grad"]
        if not bool(_torch.isfinite(grad).all()) or not math.isfinite(result["loss"]):
            skipped.append({"index": index, "reason": "non-finite output"})
            continue
        recorded.append({
            "index": index, "name": f"corpus/{index}", "release": rel.label, "config": case["settings"],
            "run_with": config, "world": world, "batch": V.batch_json(raw),
            "loss": V.to_json_floats(result["loss"]), "grad_logprobs": V.to_json_floats(grad.tolist()),
        })
    C.write("verl", {"tool": TOOL_PATH, "command": command, "repo": "verl-project/verl", "torch": _torch.__version__,
                     "releases": prov}, recorded, skipped)


if __name__ == "__main__":
    main()
