#!/usr/bin/env python3
"""Record TRL's own loss on the GRPO configs TRL and open-r1 ship: numbers and provenance only.

Reads test/fixtures/frameworks/corpus/loss-cases.json (tools/record-corpus/lossCases.mjs: per
distinct TRL config that polgrad explains, the user settings polgrad's resolution read, the newest
release that explains it, and the row count its micro-batches need) and runs each through TRL's
own GRPOTrainer loss path at that release with the machinery of trlReleases.py (same pinned files
and hashes, same stand-ins, float64 torch), on a seeded ragged batch of that many rows drawn by
verlReleases.draw_random (named "trl-corpus/<case index>"). As there, the batch is one process's
generation batch (per_device_train_batch_size := rows / steps_per_generation, one process); the
world is gradient_accumulation_steps from the settings (TrainingArguments' default 1). A case
that sets generation_batch_size is skipped, with the reason: that batch rule would change the
steps_per_generation TRL derives from it.

Usage (from the repository root; Debian's python3 with torch):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/trlCorpus.py \\
        --trl-git /work/.mirror/huggingface+trl/repo

Output: test/fixtures/frameworks/corpus/losses-trl.json (indent=1, sorted keys, byte-stable).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpusCommon as C  # noqa: E402
import trlReleases as T  # noqa: E402

TOOL_PATH = "tools/record-fixtures/trlCorpus.py"


def main() -> None:
    git_dir, _torch, command, all_cases = C.start(__doc__, TOOL_PATH, "trl-git", "TRL_GIT")
    T.torch = _torch
    T._verl.torch = _torch
    facts = T.check_against_facts(T.read_facts())
    by_label = {r.label: r for r in T.RELEASES}
    loaded: dict = {}
    recorded, skipped, prov = [], [], {}
    for index, case in enumerate(all_cases):
        if case["framework"] != "trl":
            continue
        rel = by_label.get(case["release"])
        if rel is None:
            skipped.append({"index": index, "reason": f"release {case['release']} is not one trlReleases records"})
            continue
        if rel.label not in loaded:
            loaded[rel.label] = T.load_release(rel, T._verl.read_release(git_dir, rel), facts[rel.label])
            prov[rel.label] = {"commit": rel.commit, "files": dict(sorted(rel.files.items()))}
        ld = loaded[rel.label]
        settings = case["settings"]
        if "generation_batch_size" in settings:
            # trlReleases.make_args sets per_device_train_batch_size = rows / steps_per_generation,
            # which with a given generation_batch_size changes the steps_per_generation TRL derives.
            skipped.append({"index": index, "reason": "generation_batch_size is set: the recorder's batch rule "
                            "(per_device_train_batch_size := rows / steps_per_generation) would change the "
                            "steps_per_generation TRL derives from it"})
            continue
        world = {"num_processes": 1, "gradient_accumulation_steps": settings.get("gradient_accumulation_steps", 1)}
        config = {k: v for k, v in settings.items() if k != "num_processes"}
        raw = T._verl.draw_random(f"trl-corpus/{index}", case["rows"], False)
        try:
            result = T.run_case(ld, config, world, raw)
        except (SystemExit, T.UpstreamRaised, KeyError, ValueError, RuntimeError, TypeError) as e:
            skipped.append({"index": index, "reason": f"{type(e).__name__}: {e}"})
            continue
        grad = result["grad"]
        if not bool(_torch.isfinite(grad).all()) or not math.isfinite(result["loss"]):
            skipped.append({"index": index, "reason": "non-finite output upstream"})
            continue
        recorded.append({
            "index": index, "name": f"corpus/{index}", "release": rel.label, "config": config, "world": world,
            "num_items_in_batch": result["num_items_in_batch"], "batch": T._verl.batch_json(raw),
            "loss": T.to_json_floats(result["loss"]), "grad_logprobs": T.to_json_floats(grad.tolist()),
            "micro_batches": [{"rows": m["rows"], "loss": T.to_json_floats(m["loss"])} for m in result["micro"]],
        })
    C.write("trl", {"tool": TOOL_PATH, "command": command, "repo": "huggingface/trl", "torch": _torch.__version__,
                     "releases": prov}, recorded, skipped)


if __name__ == "__main__":
    main()
