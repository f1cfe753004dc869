"""What the corpus loss recorders (verlCorpus.py, openrlhfCorpus.py, trlCorpus.py) share: the
command line (a git mirror), float64 single-thread torch, the cases they read and the file they
write (indent=1, sorted keys, byte-stable). Numbers and provenance only."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT / "test" / "fixtures" / "frameworks" / "corpus"
CASES = CORPUS / "loss-cases.json"


def start(doc: str, tool: str, flag: str, env: str):
    """(the mirror's git dir, torch, the command line, the cases of loss-cases.json)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(f"--{flag}", default=os.environ.get(env))
    args = parser.parse_args()
    given = getattr(args, flag.replace("-", "_"))
    if not given:
        parser.error(f"--{flag} (or ${env}) is required")
    git_dir = Path(given).resolve()
    if (git_dir / ".git").is_dir():
        git_dir = git_dir / ".git"
    import torch  # noqa: PLC0415

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    command = shlex.join([sys.executable, tool, *sys.argv[1:]])
    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    return git_dir, torch, command, cases


def write(framework: str, provenance: dict, recorded: list, skipped: list) -> None:
    """Write corpus/losses-<framework>.json and report the counts."""
    payload = {"provenance": {**provenance, "cases": "test/fixtures/frameworks/corpus/loss-cases.json",
                              "dtype": "float64", "skipped": skipped}, "cases": recorded}
    out = CORPUS / f"losses-{framework}.json"
    out.write_text(json.dumps(payload, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    print(f"{len(recorded)} recorded, {len(skipped)} skipped", file=sys.stderr)
