#!/usr/bin/env python3
"""Record the argument names a TRL GRPO launch accepts beside GRPOConfig's own fields.

A TRL config file or command line (`trl grpo`, `accelerate launch … grpo.py`) is parsed by
HfArgumentParser into several dataclasses at once. GRPOConfig's own fields are recorded per release
by trl.py (src/conformance/releases/data/trl.json). This recorder records the others, as names
only, each with the source that declares it:

  TrainingArguments  transformers/training_args.py in each transformers wheel on this machine
                     (GRPOConfig subclasses it; the union over the wheels, since a TRL release
                     runs on a range of transformers versions);
  ScriptArguments    trl/scripts/utils.py,
  ModelConfig        trl/trainer/model_config.py,
  GRPOScriptArguments trl/scripts/grpo.py,
  trl CLI            the `trl` command's own options (every "--name" string literal in trl/cli.py,
                     trl/cli/*.py, trl/commands/*.py: `--accelerate_config`),
  <Name>             any @dataclass of examples/scripts/*grpo*.py,
                     each at every release listed in src/conformance/releases/data/trl.json (the
                     union over those releases);
  open-r1 <Name>     with --open-r1-git: GRPOConfig, GRPOScriptArguments and ScriptArguments of
                     huggingface/open-r1's src/open_r1/configs.py (what its GRPO script,
                     src/open_r1/grpo.py, parses beside TRL's ModelConfig) at each open-r1 commit
                     of test/fixtures/frameworks/corpus/open-r1.json.

Fields are the annotated assignments (`name: type = …`) of the class body, read with `ast`; no
code is imported or run. Output: src/conformance/releases/trlArgumentKeys.ts (GENERATED: the
names by source, and the provenance: wheel file names and SHA-256s, the TRL releases read (their
commits are in trl.json) and per file each distinct SHA-256 with the releases where it holds).

Usage:
  /usr/bin/python3 tools/record-releases/trlArguments.py --git /work/.mirror/huggingface+trl/repo \
      --open-r1-git /work/.mirror/huggingface+open-r1/repo
"""

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import zipfile

TOOL = "tools/record-releases/trlArguments.py"
OUT = "src/conformance/releases/trlArgumentKeys.ts"
WHEELS = [
    "/opt/pypi-more/files/transformers-4.57.6-py3-none-any.whl",
    "/opt/pypi/files/transformers-5.17.0-py3-none-any.whl",
    "/opt/pypi-more/files/transformers-5.18.0-py3-none-any.whl",
]
OPEN_R1_CONFIGS = "src/open_r1/configs.py"
OPEN_R1_CLASSES = ("GRPOConfig", "GRPOScriptArguments", "ScriptArguments")
TRL_FILES = {
    "trl/scripts/utils.py": "ScriptArguments",
    "trl/trainer/model_config.py": "ModelConfig",
    "trl/scripts/grpo.py": "GRPOScriptArguments",
}


def fields(text, cls=None):
    """{class name: [field names]} of the dataclasses (or of `cls`) in a module's text."""
    out = {}
    for node in ast.parse(text).body:
        if not isinstance(node, ast.ClassDef):
            continue
        if cls is not None and node.name != cls:
            continue
        if cls is None and not any(
            (isinstance(d, ast.Name) and d.id == "dataclass")
            or (isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "dataclass")
            for d in node.decorator_list
        ):
            continue
        out[node.name] = [
            s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        ]
    return out


def git(repo, *a):
    return subprocess.run(["git", "-C", repo, *a], check=True, capture_output=True).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git", required=True)
    ap.add_argument("--open-r1-git")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    names = {}  # name -> set of sources
    wheels = []
    for w in WHEELS:
        data = open(w, "rb").read()
        with zipfile.ZipFile(w) as z:
            src = z.read("transformers/training_args.py")
        for n in fields(src.decode(), "TrainingArguments").get("TrainingArguments", []):
            names.setdefault(n, set()).add("TrainingArguments")
        wheels.append({"wheel": os.path.basename(w), "sha256": hashlib.sha256(data).hexdigest(),
                       "training_args_sha256": hashlib.sha256(src).hexdigest()})
    with open(os.path.join(root, "src/conformance/releases/data/trl.json")) as f:
        releases = [(r["label"], r["commit"]) for r in json.load(f)["releases"]]
    per_release = []
    for label, commit in releases:
        tree = git(a.git, "ls-tree", "-r", "--name-only", commit).decode().split()
        files = {}
        for path in sorted(tree):
            if path in TRL_FILES:
                cls = TRL_FILES[path]
                text = git(a.git, "show", f"{commit}:{path}")
                for n in fields(text.decode(), cls).get(cls, []):
                    names.setdefault(n, set()).add(cls)
                files[path] = hashlib.sha256(text).hexdigest()
            elif re.fullmatch(r"trl/cli\.py|trl/cli/[^/]*\.py|trl/commands/[^/]*\.py", path):
                # The trl command's own options (`--accelerate_config`): every "--name" string literal.
                text = git(a.git, "show", f"{commit}:{path}")
                for n in re.findall(r"[\"']--([A-Za-z_][\w]*)[\"']", text.decode()):
                    names.setdefault(n, set()).add("trl CLI")
                files[path] = hashlib.sha256(text).hexdigest()
            elif re.fullmatch(r"examples/scripts/[^/]*grpo[^/]*\.py", path):
                text = git(a.git, "show", f"{commit}:{path}")
                for cls, fs in fields(text.decode()).items():
                    for n in fs:
                        names.setdefault(n, set()).add(cls)
                files[path] = hashlib.sha256(text).hexdigest()
        per_release.append({"release": label, "commit": commit, "files": files})
    open_r1 = []
    if a.open_r1_git:
        with open(os.path.join(root, "test/fixtures/frameworks/corpus/open-r1.json")) as f:
            commits = [r["commit"] for r in json.load(f)["releases"]]
        for commit in commits:
            text = git(a.open_r1_git, "show", f"{commit}:{OPEN_R1_CONFIGS}")
            for cls, fs in fields(text.decode()).items():
                if cls in OPEN_R1_CLASSES:
                    for n in fs:
                        names.setdefault(n, set()).add(f"open-r1 {cls}")
            open_r1.append({"commit": commit, "path": OPEN_R1_CONFIGS, "sha256": hashlib.sha256(text).hexdigest()})
    keys = {n: sorted(s) for n, s in sorted(names.items())}
    # Per file, each distinct SHA-256 with the releases where the file has it (commits in trl.json).
    files = {}
    for r in per_release:
        for path, sha in r["files"].items():
            files.setdefault(path, {}).setdefault(sha, []).append(r["release"])
    command = f"/usr/bin/python3 {TOOL} --git {a.git}" + (f" --open-r1-git {a.open_r1_git}" if a.open_r1_git else "")
    prov = {"tool": TOOL, "command": command, "wheels": wheels,
            "trlReleases": [r["release"] for r in per_release], "trlFiles": files,
            "openR1": {"repo": "huggingface/open-r1", "files": open_r1}}
    body = ",\n".join(f"  {json.dumps(n)}: {json.dumps(s)}" for n, s in keys.items())
    text = (
        f"// GENERATED by {TOOL} from transformers wheels, huggingface/trl and huggingface/open-r1; names only. Do not edit.\n"
        "/** The argument names a TRL GRPO launch accepts beside GRPOConfig's fields, by declaring class. */\n"
        f"export const TRL_ARGUMENT_KEYS: Readonly<Record<string, readonly string[]>> = {{\n{body},\n}};\n\n"
        "/** Where the names were read. */\n"
        "// biome-ignore format: generated data, one line\n"
        f"export const TRL_ARGUMENT_PROVENANCE = {json.dumps(prov)} as const;\n"
    )
    with open(os.path.join(root, OUT), "w") as f:
        f.write(text)
    print(f"{len(keys)} names ({sum('TrainingArguments' in s for s in keys.values())} TrainingArguments)")


if __name__ == "__main__":
    main()
