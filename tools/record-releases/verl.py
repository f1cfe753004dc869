#!/usr/bin/env python3
"""Record verl release facts: every leaf key of the PPO trainer config, with its default.

Facts only (key names, literal defaults, line numbers, file hashes); no upstream code is copied.
For each release the recorder reads, at the release's commit:
  verl/trainer/config/_generated_ppo_trainer.yaml  (the fully expanded FSDP config), if present,
  else verl/trainer/config/ppo_trainer.yaml        (v0.4.1: a flat file with no Hydra defaults list);
then every other verl/trainer/config/_generated_ppo_<engine>_trainer.yaml (Megatron, VeOmni,
TorchTitan; sorted by path), whose keys the first file lacks are appended after its keys, each with
its own file (a key both files hold keeps the FSDP file's default). v0.4.1 has no generated files:
its flat verl/trainer/config/ppo_megatron_trainer.yaml stands for the Megatron config.

It also records the PPO trainer configs a run can name with Hydra's `--config-name` (main_ppo's
config folder, verl/trainer/config): `ppo_trainer` (the default, no values of its own) and
`ppo_megatron_trainer` (its expanded file), each with the file it is read from and the keys whose
value differs from the FSDP config's, in file order (`configs`, docs/conformance/releases.md).

Usage:
  /usr/bin/python3 tools/record-releases/verl.py --git DIR --out FILE
"""

import argparse
import hashlib
import json
import re
import subprocess
import sys

import yaml

from compact import write_facts

REPO = "verl-project/verl"
TOOL = "tools/record-releases/verl.py"

# (label, tag or None, revision to resolve). Sorted chronologically by committer date below.
RELEASES = [
    ("v0.4.1", "v0.4.1", "v0.4.1"),
    ("v0.5.0", "v0.5.0", "v0.5.0"),
    ("v0.6.0", "v0.6.0", "v0.6.0"),
    ("v0.6.1", "v0.6.1", "v0.6.1"),
    ("v0.7.0", "v0.7.0", "v0.7.0"),
    ("v0.7.1", "v0.7.1", "v0.7.1"),
    ("v0.8.0", "v0.8.0", "v0.8.0"),
    ("v0.9.0", "v0.9.0", "v0.9.0"),
    ("74a718a4", None, "74a718a492092312f1004fe25369975137388849"),
    ("1dda039b", None, "1dda039b9c6311889a9c9a26040677e1254814f9"),
]

GENERATED = "verl/trainer/config/_generated_ppo_trainer.yaml"
SOURCE = "verl/trainer/config/ppo_trainer.yaml"
# The Megatron config a run names with --config-name ppo_megatron_trainer: expanded from v0.5.0,
# a flat file at v0.4.1.
MEGATRON = ("verl/trainer/config/_generated_ppo_megatron_trainer.yaml", "verl/trainer/config/ppo_megatron_trainer.yaml")

# OmegaConf (which Hydra uses to load these files) reads `1e-6` as a float; plain YAML 1.1 reads it
# as a string because it has no dot. Apply the OmegaConf reading to plain (unquoted) scalars only.
EXP_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")

STR_TAG = "tag:yaml.org,2002:str"
TYPE_NAMES = {
    type(None): "null",
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    list: "list",
    dict: "dict",
}


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def file_exists(gitdir, commit, path):
    out = git(gitdir, "ls-tree", "--name-only", commit, "--", path).decode()
    return out.strip() == path


def to_recorded(value):
    """Map a constructed YAML value to a RecordedValue (interpolations become {"expr": text})."""
    if isinstance(value, str):
        return {"expr": value} if "${" in value else value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"non-finite float {value!r} is not representable")
        return value
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, list):
        return [to_recorded(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_recorded(v) for k, v in value.items()}
    raise ValueError(f"unsupported YAML value {value!r} ({type(value).__name__})")


def construct(loader, node):
    """Construct a node's value, applying the OmegaConf float reading to plain scalars."""
    if isinstance(node, yaml.ScalarNode):
        if node.tag == STR_TAG and node.style is None and EXP_FLOAT.match(node.value):
            return float(node.value.replace("_", ""))
        return loader.construct_object(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return [construct(loader, n) for n in node.value]
    if isinstance(node, yaml.MappingNode):
        out = {}
        for k, v in node.value:
            out[loader.construct_object(k, deep=True)] = construct(loader, v)
        return out
    raise ValueError(f"unsupported node {node!r}")


def leaf_keys(text, path):
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
    finally:
        loader.dispose()
    if not isinstance(root, yaml.MappingNode):
        raise ValueError(f"{path}: top level is not a mapping")
    keys = []

    def walk(node, prefix):
        seen = set()
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                raise ValueError(f"{path}: non-scalar key at line {knode.start_mark.line + 1}")
            name = knode.value
            if name in seen:
                raise ValueError(f"{path}: duplicate key {name!r} at line {knode.start_mark.line + 1}")
            seen.add(name)
            dotted = prefix + [name]
            if not prefix and name == "defaults":
                raise ValueError(f"{path}: has a Hydra defaults list; this recorder does not resolve it")
            if isinstance(vnode, yaml.MappingNode) and vnode.value:
                walk(vnode, dotted)
                continue
            value = construct(loader, vnode)
            keys.append(
                {
                    "key": ".".join(dotted),
                    "default": to_recorded(value),
                    "type": "yaml:" + TYPE_NAMES[type(value)],
                    "choices": None,
                    "at": {"path": path, "line": knode.start_mark.line + 1},
                }
            )

    walk(root, [])
    return keys


def record_release(gitdir, label, tag, rev):
    commit = git(gitdir, "rev-parse", "--verify", rev + "^{commit}").decode().strip()
    if tag is None and commit != rev:
        raise ValueError(f"{label}: {rev} resolved to {commit}")
    date = git(gitdir, "log", "-1", "--format=%cs", commit).decode().strip()
    stamp = int(git(gitdir, "log", "-1", "--format=%ct", commit).decode().strip())
    path = GENERATED if file_exists(gitdir, commit, GENERATED) else SOURCE
    data = git(gitdir, "show", f"{commit}:{path}")
    keys = leaf_keys(data.decode("utf-8"), path)
    files = [{"path": path, "sha256": hashlib.sha256(data).hexdigest()}]
    # The other engines' expanded configs (Megatron, VeOmni, TorchTitan): their keys that the FSDP
    # config lacks, appended in file order. A run that selects another engine is refused by the
    # resolver; these keys are recorded so that they read as the release's own keys (known, not
    # read by the FSDP loss) rather than as typos.
    seen = {k["key"] for k in keys}
    fsdp = {k["key"]: k["default"] for k in keys}
    others = sorted(
        n
        for n in git(gitdir, "ls-tree", "--name-only", commit, "--", "verl/trainer/config/").decode().split()
        if re.fullmatch(r"verl/trainer/config/_generated_ppo_\w+_trainer\.yaml", n) and n != GENERATED
    )
    if path == SOURCE and file_exists(gitdir, commit, MEGATRON[1]):
        others.append(MEGATRON[1])
    configs = [{"name": "ppo_trainer", "file": 0, "values": []}]
    for other in others:
        odata = git(gitdir, "show", f"{commit}:{other}")
        okeys = leaf_keys(odata.decode("utf-8"), other)
        added = [k for k in okeys if k["key"] not in seen]
        seen.update(k["key"] for k in added)
        keys.extend(added)
        files.append({"path": other, "sha256": hashlib.sha256(odata).hexdigest()})
        if other in MEGATRON:
            differ = [{"key": k["key"], "default": k["default"]} for k in okeys
                      if k["key"] in fsdp and repr(k["default"]) != repr(fsdp[k["key"]])]
            configs.append({"name": "ppo_megatron_trainer", "file": len(files) - 1, "values": differ})
    groups = config_groups(gitdir, commit) if path == GENERATED else []
    release = {
        "label": label,
        "tag": tag,
        "commit": commit,
        "date": date,
        "files": files,
        "keys": keys,
        "configs": configs,
        "groups": groups,
    }
    return stamp, release


def config_groups(gitdir, commit):
    """The config groups ppo_trainer.yaml's defaults list composes at a package (`group@pkg: option`),
    each with its default option (`${model_engine}` read as the list's own model_engine entry) and
    the options verl/trainer/config/<group>/ ships, in the list's order."""
    doc = yaml.safe_load(git(gitdir, "show", f"{commit}:{SOURCE}").decode("utf-8"))
    entries = [e for e in doc.get("defaults", []) if isinstance(e, dict) and len(e) == 1]
    engine = next((v for e in entries for k, v in e.items() if k == "model_engine"), None)
    names = git(gitdir, "ls-tree", "--name-only", commit, "--", "verl/trainer/config/").decode().split()
    out = []
    for e in entries:
        (key, option), = e.items()
        if "@" not in key or not isinstance(option, str):
            continue
        group, package = key.split("@", 1)
        if engine is not None:
            option = option.replace("${model_engine}", engine)
        if "${" in option:
            raise ValueError(f"{commit}: {key}: an interpolation this recorder does not resolve: {option}")
        folder = f"verl/trainer/config/{group}"
        files = git(gitdir, "ls-tree", "--name-only", commit, "--", folder + "/").decode().split() if folder in names else []
        options = sorted(f[len(folder) + 1:-5] for f in files if f.endswith(".yaml"))
        out.append({"group": group, "package": package, "default": option, "options": options})
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git", required=True, help="bare git directory of verl-project/verl")
    ap.add_argument("--out", required=True, help="JSON file to write (the compact format of compact.py)")
    args = ap.parse_args(argv)

    recorded = [record_release(args.git, *r) for r in RELEASES]
    recorded.sort(key=lambda sr: sr[0])
    obj = {
        "framework": "verl",
        "repo": REPO,
        "recordedBy": {
            "tool": TOOL,
            "command": f"/usr/bin/python3 {TOOL} --git {args.git} --out {args.out}",
        },
        "releases": [r for _, r in recorded],
    }
    c = write_facts(obj, args.out)
    e = c["expanded"]
    print(f"wrote {args.out}: {e['releases']} releases, {e['keyRows']} key rows as {len(c['keys'])} keys, expanded sha256 {e['sha256'][:16]}")


if __name__ == "__main__":
    main(sys.argv[1:])
