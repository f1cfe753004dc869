#!/usr/bin/env python3
"""Carry polgrad 0.2.0's own framework fixtures over, checked by re-running them.

polgrad 0.2.0 ships four recorded fixture files under ``tests/fixtures/`` (44 cases: its
``VENDORED`` verl / OpenRLHF wrappers and its verl / TRL reimplementations, each on seeded
float64 inputs, with the loss and the gradient w.r.t. ``logprobs`` torch 2.13 gave). This
recorder reads them from a polgrad checkout at the pinned commit, checks their SHA-256, re-runs
every case through polgrad's ``VENDORED`` callable here (Debian's torch) as an independent check
that the numbers are the code's, and writes the cases, polgrad's recorded outputs and the
re-run's deviation to ``test/fixtures/polgrad/framework_fixtures.json``. No polgrad code is
copied: polgrad is imported at record time through ``polgrad_core.py`` (which pins the SHA-256
of every file it imports, the vendored framework files included).

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/polgradFrameworkFixtures.py \\
        --polgrad-src /tmp/polgrad/src
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import polgrad_core as core  # noqa: E402  (the sibling recorder; its main() is guarded)

TOOL_PATH = "tools/record-fixtures/polgradFrameworkFixtures.py"
DEFAULT_OUT = core.REPO_ROOT / "test" / "fixtures" / "polgrad" / "framework_fixtures.json"

# The four fixture files of polgrad 0.2.0 (commit core.POLGRAD_COMMIT) and their SHA-256.
FIXTURE_SHA256 = {
    "tests/fixtures/openrlhf_losses.json": "fa2922daf43cdc025ecea406bd92ca7222c7774b863befb36f321a82bbd5a139",
    "tests/fixtures/trl_reimpl_losses.json": "8725b064a9cd36dc8b4df01b90cca64a0d2fc3e590b4e58c994af4e8d2d8fe16",
    "tests/fixtures/verl_losses.json": "860a64b64c648aa05d16a8d13e7e4d15f5ddea0bd9b3a9b1b03cb78c40289c1a",
    "tests/fixtures/verl_reimpl_losses.json": "e4891c0064e2399e020adacd98637229498084504011c9e49debc98778cdc538",
}
# The re-run must reproduce polgrad's recorded numbers this closely (torch 2.13 vs Debian's).
RERUN_TOLERANCE = 1e-14


def rerun(fn: Any, case: dict[str, Any]) -> tuple[float, float]:
    """Re-run one case; return the loss's relative and the gradient's norm-wise deviation."""
    torch = core.torch
    x = case["inputs"]
    lp = torch.tensor(x["logprobs"], dtype=torch.float64, requires_grad=True)
    loss = fn(
        logprobs=lp,
        old_logprobs=torch.tensor(x["old_logprobs"], dtype=torch.float64),
        advantages=torch.tensor(x["advantages"], dtype=torch.float64),
        response_mask=torch.tensor(x["response_mask"], dtype=torch.bool),
    )
    (grad,) = torch.autograd.grad(loss, lp)
    want_loss = case["outputs"]["loss"]
    want_grad = torch.tensor(case["outputs"]["grad_logprobs"], dtype=torch.float64)
    loss_dev = abs(float(loss) - want_loss) / max(abs(want_loss), 1e-300)
    scale = max(float(want_grad.abs().max()), 1e-300)
    grad_dev = float((grad - want_grad).abs().max()) / scale
    return loss_dev, grad_dev


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--polgrad-src", default=os.environ.get("POLGRAD_SRC"))
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args()
    if not args.polgrad_src:
        parser.error("--polgrad-src (or POLGRAD_SRC) is required")
    src = Path(args.polgrad_src).resolve()
    root = src.parent
    core.verify_checkout(root)
    files: dict[str, Any] = {}
    for rel, expected in FIXTURE_SHA256.items():
        digest = core.sha256_file(root / rel)
        if digest != expected:
            raise SystemExit(f"sha256 mismatch for {rel}: expected {expected}, got {digest}")
        files[rel] = json.loads((root / rel).read_text(encoding="utf-8"))
    sources = core.load_polgrad(src)
    vendored = sys.modules["polgrad.conformance.harness"].VENDORED

    cases = []
    worst = 0.0
    for rel, doc in files.items():
        framework = doc["provenance"]["framework"]
        for variant, group in doc["variants"].items():
            fn = vendored[(framework, variant)]
            for index, case in enumerate(group):
                loss_dev, grad_dev = rerun(fn, case)
                worst = max(worst, loss_dev, grad_dev)
                if max(loss_dev, grad_dev) > RERUN_TOLERANCE:
                    raise SystemExit(
                        f"{rel} {variant}[{index}]: the re-run deviates from polgrad's recording "
                        f"(loss {loss_dev:.3g}, grad {grad_dev:.3g})"
                    )
                cases.append({
                    "file": rel,
                    "key": f"{framework}/{variant}",
                    "index": index,
                    "seed": case["seed"],
                    "shape": case["shape"],
                    "inputs": case["inputs"],
                    "outputs": case["outputs"],
                })

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    core.TOOL_PATH = TOOL_PATH
    payload = {
        "provenance": core.provenance(command, sources, {
            "what": "polgrad 0.2.0's four framework fixture files, carried over case by case: "
                    "inputs and polgrad's recorded outputs as they are in the files (recorded "
                    "by polgrad's tools/record_fixtures.py on torch 2.13.0; the masks are bool, "
                    "and polgrad's verl / OpenRLHF wrappers convert them to float64 before "
                    "calling the framework code). Each case was re-run here through polgrad's "
                    "VENDORED callable and reproduced the recording to "
                    f"{RERUN_TOLERANCE:g} (worst deviation {worst:.3g}).",
            "seed_rule": "polgrad's own: seed = crc32('framework:variant:index') & 0x7FFFFFFF "
                         "(tools/record_fixtures.py of polgrad); the seeds are provenance only, "
                         "every input is embedded.",
            "junk_rule": "polgrad's _sample_case: padding positions hold values drawn from the "
                         "same ranges as response positions (logprobs U[-8, -0.05], gap "
                         "U[-2, 2], advantages U[-3, 3]), so old_logprobs can be above 0 "
                         "anywhere.",
            "fixture_sha256": FIXTURE_SHA256,
            "fixture_provenance": {rel: doc["provenance"] for rel, doc in files.items()},
            "rerun_tolerance": RERUN_TOLERANCE,
            "rerun_worst_deviation": worst,
        }),
        "cases": cases,
    }
    core.write_json(Path(args.out), payload)
    print(f"wrote {args.out}: {len(cases)} cases, re-run worst deviation {worst:.3g}")


if __name__ == "__main__":
    main()
