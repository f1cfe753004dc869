#!/usr/bin/env python3
"""Record OpenRLHF's own loss on the launch configs OpenRLHF ships: numbers and provenance only.

Reads test/fixtures/frameworks/corpus/loss-cases.json (tools/record-corpus/lossCases.mjs: per
distinct OpenRLHF launch config that polgrad explains, the user flags polgrad's resolution read,
the newest release that explains it, and the row count its micro-batches need) and runs each
through OpenRLHF's own ppo_train at that release with the machinery of openrlhfReleases.py (same
pinned files and hashes, same stand-ins, float64 torch), on a seeded ragged batch of that many rows
drawn by openrlhfReleases.draw_random (named "openrlhf-corpus/<case index>"). As there, the batch
is one optimizer-step window on one rank (train_batch_size := its rows).

Usage (from the repository root; Debian's python3 with torch):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/openrlhfCorpus.py \\
        --openrlhf-git /work/.mirror/OpenRLHF+OpenRLHF/repo

Output: test/fixtures/frameworks/corpus/losses-openrlhf.json (indent=1, sorted keys, byte-stable).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpusCommon as C  # noqa: E402
import openrlhfReleases as O  # noqa: E402

TOOL_PATH = "tools/record-fixtures/openrlhfCorpus.py"


def main() -> None:
    git_dir, _torch, command, all_cases = C.start(__doc__, TOOL_PATH, "openrlhf-git", "OPENRLHF_GIT")
    O.torch = _torch
    O.check_facts_file()
    by_label = {r.label: r for r in O.RELEASES}
    loaded: dict = {}
    recorded, skipped, prov = [], [], {}
    for index, case in enumerate(all_cases):
        if case["framework"] != "openrlhf":
            continue
        rel = by_label.get(case["release"])
        if rel is None:
            skipped.append({"index": index, "reason": f"release {case['release']} is not one openrlhfReleases records"})
            continue
        if rel.label not in loaded:
            loaded[rel.label] = O.load_release(rel, O.read_release(git_dir, rel))
            prov[rel.label] = {"commit": rel.commit, "files": dict(sorted(rel.files.items()))}
        ld = loaded[rel.label]
        raw = O.draw_random(f"openrlhf-corpus/{index}", case["rows"], False)
        try:
            result = O.run_case(ld, case["settings"], O.prepared(raw))
        except (SystemExit, O.StandInError) as e:
            skipped.append({"index": index, "reason": f"{type(e).__name__}: {e}"})
            continue
        if "raises" in result:
            skipped.append({"index": index, "reason": f"upstream raises: {result['raises']}"})
            continue
        grad = result["grad"]
        if not bool(_torch.isfinite(grad).all()) or not O.finite_float(result["loss"]):
            skipped.append({"index": index, "reason": "non-finite output upstream"})
            continue
        recorded.append({
            "index": index, "name": f"corpus/{index}", "release": rel.label, "config": case["settings"],
            "world": {}, "num_items_in_batch": None, "batch": O.batch_json(raw), "loss": result["loss"],
            "grad_logprobs": grad.tolist(),
            "micro_batches": [{"rows": m["rows"], "loss": m["loss"]} for m in result["micro_batches"]],
        })
    C.write("openrlhf", {"tool": TOOL_PATH, "command": command, "repo": "OpenRLHF/OpenRLHF", "torch": _torch.__version__,
                     "releases": prov}, recorded, skipped)


if __name__ == "__main__":
    main()
