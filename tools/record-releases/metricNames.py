#!/usr/bin/python3
"""Record the metric names TRL, verl and OpenRLHF log, per recorded release, with provenance.

For every release in src/conformance/releases/data/{trl,verl,openrlhf}.json this reads the
framework's source at the release's commit from its bare git mirror (`git show <commit>:<path>`),
parses each file with `ast` and records the metric names written into the framework's metric dicts,
each with its file and line. Names that are literal strings are recorded as they are; an f-string
with a variable part is recorded as a pattern (`rewards/{reward_func_name}/mean`, `pattern: true`).
Where the framework prefixes bare keys before logging (verl's `rename_dict(actor_output, "actor/")`,
`f"rollout_corr/{key}"`), the recorded name is the logged one and the prefixing line is noted.

TRL's GRPOTrainer also hands its metrics to transformers' `Trainer.log`, which adds `loss`,
`grad_norm`, `learning_rate`, `epoch`: those are recorded once per framework from the transformers
wheels under /opt/pypi*/files (read by zipfile), with the wheel's file name and SHA-256.

Only names, lines and hashes are written (src/diagnostics/data/metric-names.json); no upstream code.
Deterministic: a second run writes the same bytes. Python 3 standard library only.

    /usr/bin/python3 tools/record-releases/metricNames.py \
        --mirrors /work/.mirror --wheels '/opt/pypi*/files' --out src/diagnostics/data/metric-names.json
"""

import argparse
import ast
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile

FORMAT = "polgrad-metric-names/1"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOOL = "tools/record-releases/metricNames.py"
COMMAND = (
    "/usr/bin/python3 tools/record-releases/metricNames.py --mirrors /work/.mirror "
    "--wheels '/opt/pypi*/files' --out src/diagnostics/data/metric-names.json"
)

FRAMEWORKS = {
    "trl": {"repo": "huggingface/trl", "mirror": "huggingface+trl"},
    "verl": {"repo": "verl-project/verl", "mirror": "verl-project+verl"},
    "openrlhf": {"repo": "OpenRLHF/OpenRLHF", "mirror": "OpenRLHF+OpenRLHF"},
}

# The files read per framework (a file absent at a release is skipped and not listed).
FILES = {
    "trl": ["trl/trainer/grpo_trainer.py"],
    "verl": [
        "verl/workers/actor/dp_actor.py",
        "verl/trainer/ppo/core_algos.py",
        "verl/workers/utils/losses.py",
        "verl/workers/engine_workers.py",
        "verl/workers/fsdp_workers.py",
        "verl/trainer/ppo/metric_utils.py",
        "verl/trainer/ppo/rollout_corr_helper.py",
        "verl/utils/debug/metrics.py",
        "verl/trainer/ppo/ray_trainer.py",
        "verl/utils/metric/utils.py",
    ],
    "openrlhf": [
        "openrlhf/trainer/ppo_trainer.py",
        "openrlhf/trainer/ray/ppo_actor.py",
        "openrlhf/trainer/ray/ppo_critic.py",
        "openrlhf/trainer/ppo_utils/experience_maker.py",
        "openrlhf/trainer/ppo_utils/samples_generator.py",
        "openrlhf/utils/logging_utils.py",
    ],
}

# OpenRLHF: the dicts whose keys reach the logged status (short_status only feeds the progress bar).
OPENRLHF_TARGETS = {"status", "info", "metrics", "logs_dict", "logs", "stats", "experience.info", "samples.info", "self.info"}
# verl: a name with a slash written as a dict key is logged as is; these slash-free keys get a prefix.
VERL_ENGINE_FILES = ("verl/workers/utils/losses.py", "verl/workers/engine_workers.py")
NAME_RX = re.compile(r"^[A-Za-z0-9_@{}.\-]+(/[A-Za-z0-9_@{}.\-]+)*$")


def git_show(git_dir, commit, path):
    p = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], capture_output=True)
    return p.stdout if p.returncode == 0 else None


def key_text(node):
    """(name, pattern) of a literal or f-string key; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, False
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                parts.append("{" + ast.unparse(v.value) + "}")
        return "".join(parts), True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
        return str(node.left.value).replace("%s", "{" + ast.unparse(node.right) + "}"), True
    return None


def parents(tree):
    up = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            up[c] = n
    return up


def dict_keys_written(tree, target_ok):
    """(key node, target text) of keys written into dicts whose target text passes `target_ok`:
    `t["k"]` subscripts in a store or an append (`t["k"].append`), `t = {"k": …}`, `t.update({"k": …})`."""
    up = parents(tree)
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript):
            t = ast.unparse(n.value)
            if not target_ok(t):
                continue
            p = up.get(n)
            store = isinstance(n.ctx, ast.Store) or (
                isinstance(p, ast.Attribute) and p.attr in ("append", "extend") and p.value is n
            )
            if store:
                out.append((n.slice, t))
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict):
            for tg in n.targets:
                t = ast.unparse(tg)
                if target_ok(t):
                    out.extend((k, t) for k in n.value.keys if k is not None)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.value, ast.Dict):
            t = ast.unparse(n.target)
            if target_ok(t):
                out.extend((k, t) for k in n.value.keys if k is not None)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "update"
            and target_ok(ast.unparse(n.func.value))
        ):
            for a in n.args:
                if isinstance(a, ast.Dict):
                    out.extend((k, ast.unparse(n.func.value)) for k in a.keys if k is not None)
    return out


def all_dict_keys(tree):
    """Every literal or f-string dict key and store-subscript key in the file (verl's slash names)."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Dict):
            out.extend(k for k in n.keys if k is not None)
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            out.append(n.slice)
    return out


def find_line(tree, pred):
    for n in sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if pred(n):
            return n.lineno
    return None


def is_call(n, func_suffix, first_arg=None, second_arg=None):
    if not isinstance(n, ast.Call):
        return False
    f = ast.unparse(n.func)
    if not (f == func_suffix or f.endswith("." + func_suffix)):
        return False
    if second_arg is not None:
        return len(n.args) > 1 and isinstance(n.args[1], ast.Constant) and n.args[1].value == second_arg
    return True


def fstring_starting(n, prefix):
    return isinstance(n, ast.JoinedStr) and n.values and isinstance(n.values[0], ast.Constant) and str(
        n.values[0].value
    ).startswith(prefix)


def percent_prefix(n, prefix):
    return (
        isinstance(n, ast.BinOp)
        and isinstance(n.op, ast.Mod)
        and isinstance(n.left, ast.Constant)
        and str(n.left.value).startswith(prefix)
    )


# ---------------------------------------------------------------------------------------------


def record_trl(files):
    names = []
    notes = []
    src = files.get("trl/trainer/grpo_trainer.py")
    if src is None:
        return names, notes
    path = "trl/trainer/grpo_trainer.py"
    tree = ast.parse(src)
    ok = lambda t: t == "self._metrics" or t.startswith("self._metrics[")  # noqa: E731
    for k, t in dict_keys_written(tree, ok):
        if t == "self._metrics" and isinstance(k, ast.Constant) and k.value in ("train", "eval"):
            continue
        kt = key_text(k)
        if kt is None:  # a variable key: the user's log_metric names
            names.append({"name": "{" + ast.unparse(k) + "}", "path": path, "line": k.lineno, "pattern": True,
                          "note": "any name a reward function logs through log_metric"})
            continue
        name, pattern = kt
        e = {"name": name, "path": path, "line": k.lineno}
        if pattern:
            e["pattern"] = True
            e["note"] = "one name per reward function"
        names.append(e)
    line = find_line(tree, lambda n: fstring_starting(n, "eval_"))
    notes.append({"what": "eval-mode metrics are logged as eval_<name>; train-mode ones without a prefix",
                  "path": path, "line": line} if line else
                 {"what": "no eval_ prefix: train and eval metrics share names", "path": path, "line": None})
    return names, notes


def record_verl(files):
    names = []
    notes = []
    trainer = files.get("verl/trainer/ppo/ray_trainer.py")
    ttree = ast.parse(trainer) if trainer else None
    rename_line = ttree and find_line(ttree, lambda n: is_call(n, "rename_dict", second_arg="actor/"))
    mfu_line = ttree and find_line(
        ttree, lambda n: is_call(n, "pop") and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value == "actor/mfu"
    )
    if rename_line:
        notes.append({"what": "engine-worker keys without a slash are logged as actor/<key> (rename_dict)",
                      "path": "verl/trainer/ppo/ray_trainer.py", "line": rename_line})
    for path in FILES["verl"]:
        src = files.get(path)
        if src is None:
            continue
        tree = ast.parse(src)
        if path == "verl/utils/metric/utils.py":
            line = find_line(tree, lambda n: isinstance(n, ast.FunctionDef) and n.name == "reduce_metrics")
            if line:
                notes.append({"what": "reduce_metrics: each name's list is reduced (max if the name contains max, "
                              "min if min, else mean, or a Metric's own aggregation); names are logged as is",
                              "path": path, "line": line})
            continue
        if path == "verl/trainer/ppo/rollout_corr_helper.py":
            pline = find_line(tree, lambda n: fstring_starting(n, "rollout_corr/"))
            if pline:
                notes.append({"what": "the helper's bare keys are logged as rollout_corr/<key>", "path": path, "line": pline})
            for k, _t in dict_keys_written(tree, lambda t: t == "metrics"):
                kt = key_text(k)
                if kt is None or "/" in kt[0]:
                    continue
                e = {"name": "rollout_corr/" + kt[0], "path": path, "line": k.lineno,
                     "note": "a bare key the helper logs as rollout_corr/<key>"}
                if kt[1]:
                    e["pattern"] = True
                names.append(e)
            continue
        for k in all_dict_keys(tree):
            kt = key_text(k)
            if kt is None or "/" not in kt[0] or not NAME_RX.match(kt[0]) or kt[0].startswith(("verl/", "rollout_corr/")):
                continue
            e = {"name": kt[0], "path": path, "line": k.lineno}
            if kt[1]:
                e["pattern"] = True
            names.append(e)
        if path in VERL_ENGINE_FILES and rename_line:
            target = (lambda t: t == "metrics") if path.endswith("losses.py") else (lambda t: t == "final_metrics")
            for k, _t in dict_keys_written(tree, target):
                kt = key_text(k)
                if kt is None or kt[1] or "/" in kt[0]:
                    continue
                if kt[0] == "mfu" and mfu_line:
                    continue  # popped and logged as perf/mfu/actor
                names.append({"name": "actor/" + kt[0], "path": path, "line": k.lineno,
                              "note": "an engine-worker key the trainer logs as actor/<key> (rename_dict)"})
    return names, notes


def record_openrlhf(files):
    names = []
    notes = []
    for path in FILES["openrlhf"]:
        src = files.get(path)
        if src is None:
            continue
        tree = ast.parse(src)
        if path in ("openrlhf/trainer/ppo_trainer.py", "openrlhf/utils/logging_utils.py"):
            for prefix in ("train/", "eval/"):
                line = find_line(tree, lambda n: percent_prefix(n, prefix + "%s") or fstring_starting(n, prefix + "{"))
                if line:
                    notes.append({"what": f"the wandb/tensorboard loggers log every status key as {prefix}<name>",
                                  "path": path, "line": line, "prefix": prefix})
        if path == "openrlhf/utils/logging_utils.py":
            continue
        for k, _t in dict_keys_written(tree, lambda t: t in OPENRLHF_TARGETS):
            kt = key_text(k)
            if kt is None:
                if isinstance(k, ast.Name) and k.id != "ds":  # metrics[ds]: a per-dataset eval accumulator
                    names.append({"name": "{" + k.id + "}", "path": path, "line": k.lineno, "pattern": True,
                                  "note": "a key the code copies from another dict (reward extra_logs, metrics)"})
                continue
            if kt[0].startswith("_") or kt[0] in ("generated_samples",):
                continue
            e = {"name": kt[0], "path": path, "line": k.lineno}
            if kt[1]:
                e["pattern"] = True
            names.append(e)
    return names, notes


RECORDERS = {"trl": record_trl, "verl": record_verl, "openrlhf": record_openrlhf}


def record_release(fw, git_dir, rel):
    files, read = {}, []
    for path in FILES[fw]:
        data = git_show(git_dir, rel["commit"], path)
        if data is None:
            continue
        files[path] = data.decode("utf-8")
        read.append({"path": path, "sha256": hashlib.sha256(data).hexdigest()})
    names, notes = RECORDERS[fw](files)
    # One row per name: its first (file order, line) occurrence.
    order = {f["path"]: i for i, f in enumerate(read)}
    first = {}
    for e in sorted(names, key=lambda e: (order[e["path"]], e["line"], e["name"])):
        first.setdefault(e["name"], e)
    return read, sorted(first.values(), key=lambda e: e["name"]), notes


def record_trainer_names(wheel_globs):
    """transformers' Trainer log keys and the logger prefix rewrite, per wheel found."""
    wheels = sorted({p for g in wheel_globs for p in glob.glob(os.path.join(g, "transformers-*.whl"))},
                    key=lambda p: os.path.basename(p))
    rows, prefixes = [], []
    for w in wheels:
        with open(w, "rb") as f:
            wsha = hashlib.sha256(f.read()).hexdigest()
        z = zipfile.ZipFile(w)
        src = z.read("transformers/trainer.py")
        tree = ast.parse(src)
        seen = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and ast.unparse(n.value) == "logs":
                kt = key_text(n.slice)
                if kt and not kt[1]:
                    seen[kt[0]] = min(seen.get(kt[0], n.lineno), n.lineno)
        at = {"wheel": os.path.basename(w), "wheelSha256": wsha, "path": "transformers/trainer.py",
              "sha256": hashlib.sha256(src).hexdigest()}
        rows.append({**at, "names": [{"name": k, "line": seen[k]} for k in sorted(seen)]})
        isrc = z.read("transformers/integrations/integration_utils.py")
        itree = ast.parse(isrc)
        fn = next((n for n in ast.walk(itree) if isinstance(n, ast.FunctionDef) and n.name == "rewrite_logs"), None)
        if fn is not None:
            consts = sorted({c.value for c in ast.walk(fn) if isinstance(c, ast.Constant) and isinstance(c.value, str)})
            prefixes.append({"wheel": os.path.basename(w), "path": "transformers/integrations/integration_utils.py",
                             "sha256": hashlib.sha256(isrc).hexdigest(), "line": fn.lineno,
                             "what": "rewrite_logs (TensorBoard, W&B and other callbacks): eval_<name> -> eval/<name>, "
                                     "test_<name> -> test/<name>, any other <name> -> train/<name>",
                             "strings": consts})
    return rows, prefixes


def build(mirrors, wheel_globs):
    out = {"format": FORMAT,
           "notice": f"GENERATED by {TOOL}; facts only (metric names, lines, hashes). Do not edit.",
           "recordedBy": {"tool": TOOL, "command": COMMAND}, "frameworks": {}}
    for fw, meta in FRAMEWORKS.items():
        git_dir = os.path.join(mirrors, meta["mirror"], "repo")
        with open(os.path.join(ROOT, "src", "conformance", "releases", "data", f"{fw}.json"), encoding="utf-8") as f:
            releases = json.load(f)["releases"]
        table, index, rels = [], {}, []
        for r in releases:
            read, names, notes = record_release(fw, git_dir, r)
            paths = [f["path"] for f in read]
            rows = []
            for e in names:
                key = (e["name"], bool(e.get("pattern")), e.get("note"))
                if key not in index:
                    index[key] = len(table)
                    entry = {"name": e["name"]}
                    if e.get("pattern"):
                        entry["pattern"] = True
                    if e.get("note"):
                        entry["note"] = e["note"]
                    table.append(entry)
                rows.append([index[key], paths.index(e["path"]), e["line"]])
            logging = [{**n, "file": paths.index(n["path"]) if n["path"] in paths else None} for n in notes]
            for n in logging:
                del n["path"]
            rels.append({"label": r["label"], "commit": r["commit"], "files": read, "logging": logging, "names": rows})
        # The name table sorted by name; rows re-indexed and sorted by name.
        order = sorted(range(len(table)), key=lambda i: (table[i]["name"], json.dumps(table[i], sort_keys=True)))
        remap = {old: new for new, old in enumerate(order)}
        table = [table[i] for i in order]
        for r in rels:
            r["names"] = sorted([[remap[a], b, c] for a, b, c in r["names"]])
        out["frameworks"][fw] = {"repo": meta["repo"], "names": table, "releases": rels}
    trainer, prefixes = record_trainer_names(wheel_globs)
    out["frameworks"]["trl"]["trainer"] = {
        "what": "transformers Trainer.log adds these keys to every GRPOTrainer log (train mode); "
                "recorded from the transformers wheels found, not from a TRL release",
        "wheels": trainer, "loggerPrefixes": prefixes}
    return out


def dumps(obj):
    one = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=False)  # noqa: E731
    lines = ["{"]
    head = [f' "{k}": {one(obj[k])},' for k in ("format", "notice", "recordedBy")]
    lines.extend(head)
    lines.append(' "frameworks": {')
    fws = list(obj["frameworks"].items())
    for i, (fw, d) in enumerate(fws):
        lines.append(f'  "{fw}": {{')
        lines.append(f'   "repo": {one(d["repo"])},')
        if "trainer" in d:
            lines.append(f'   "trainer": {one(d["trainer"])},')
        lines.append('   "names": [')
        lines.append(",\n".join(f"    {one(n)}" for n in d["names"]))
        lines.append("   ],")
        lines.append('   "releases": [')
        lines.append(",\n".join(f"    {one(r)}" for r in d["releases"]))
        lines.append("   ]")
        lines.append("  }" + ("," if i < len(fws) - 1 else ""))
    lines.append(" }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--wheels", default="/opt/pypi*/files", help="glob of folders holding transformers wheels")
    ap.add_argument("--out", default=os.path.join(ROOT, "src", "diagnostics", "data", "metric-names.json"))
    a = ap.parse_args(argv)
    obj = build(a.mirrors, sorted(glob.glob(a.wheels)))
    text = dumps(obj)
    if json.loads(text) != obj:
        raise AssertionError("written text does not parse back to the recording")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    for fw, d in obj["frameworks"].items():
        counts = [len(r["names"]) for r in d["releases"]]
        print(f"{fw}: {len(d['releases'])} releases, {len(d['names'])} distinct names, {min(counts)}-{max(counts)} per release")


if __name__ == "__main__":
    main(sys.argv[1:])
