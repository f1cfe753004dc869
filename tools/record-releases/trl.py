#!/usr/bin/python3
"""Record TRL release facts: every dataclass field declared in the body of `GRPOConfig`.

Facts only (key names, literal defaults, choices, line numbers, file hashes); no upstream code is
copied. For each release the recorder reads, at the release's commit:
  trl/trainer/grpo_config.py   (parsed with `ast`; the fields of the `GRPOConfig` class body)
  trl/trainer/grpo_trainer.py  (hashed only, so a reader can tell which trainer the facts go with)

Fields inherited from a base class (transformers' TrainingArguments, or TRL's own `_BaseConfig`
in later releases) are NOT recorded unless `GRPOConfig` redeclares them in its own body.

Defaults: the literal of `field(default=...)` or of a plain `= value` (`ast.literal_eval`; None ->
null, tuple -> list); otherwise `{"expr": "<ast.unparse>"}`, and for a default factory
`{"expr": "default_factory=<ast.unparse>"}`. Choices: a literal list under "choices" in the field's
`metadata={...}`, else the values of a top-level `Literal[...]` annotation, else null.

Usage:
  /usr/bin/python3 tools/record-releases/trl.py --git DIR [--out FILE]
"""

import argparse
import ast
import hashlib
import json
import math
import re
import subprocess
import sys

from compact import write_facts

REPO = "huggingface/trl"
TOOL = "tools/record-releases/trl.py"
DEFAULT_OUT = "src/conformance/releases/data/trl.json"
CONFIG = "trl/trainer/grpo_config.py"
TRAINER = "trl/trainer/grpo_trainer.py"
CLASS = "GRPOConfig"

# Every non-release-candidate tag from v0.14.0 through v1.9.0, in version order, then the untagged
# head commit. Each entry: (label, tag or None, revision to resolve).
TAGS = [
    "v0.14.0",
    "v0.15.0", "v0.15.1", "v0.15.2",
    "v0.16.0", "v0.16.1",
    "v0.17.0",
    "v0.18.0", "v0.18.1", "v0.18.2",
    "v0.19.0", "v0.19.1",
    "v0.20.0",
    "v0.21.0",
    "v0.22.0", "v0.22.1", "v0.22.2",
    "v0.23.0", "v0.23.1",
    "v0.24.0",
    "v0.25.0", "v0.25.1",
    "v0.26.0", "v0.26.1", "v0.26.2",
    "v0.27.0", "v0.27.1", "v0.27.2",
    "v0.28.0",
    "v0.29.0", "v0.29.1",
    "v1.0.0",
    "v1.1.0",
    "v1.2.0",
    "v1.3.0",
    "v1.4.0",
    "v1.5.0", "v1.5.1",
    "v1.6.0",
    "v1.7.0", "v1.7.1",
    "v1.8.0",
    "v1.9.0",
]
HEAD = "f2cd57710ae345ea6428ae95363267fcf38a3dc8"
RELEASES = [(t, t, t) for t in TAGS] + [(HEAD[:8], None, HEAD)]

VERSION_TAG = re.compile(r"^v(\d+)\.(\d+)(?:\.(\d+))?$")


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def version_key(tag):
    m = VERSION_TAG.match(tag)
    return tuple(int(g or 0) for g in m.groups()) if m else None


def check_tags(gitdir):
    """Refuse to run when a listed tag is missing; warn about unlisted final tags in the range."""
    try:
        present = set(git(gitdir, "tag", "--list").decode().split())
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"trl.py: cannot list tags of {gitdir}: {e}; refusing to run")
    missing = [t for t in TAGS if t not in present]
    if missing:
        sys.exit(f"trl.py: tag(s) missing from {gitdir}: {', '.join(missing)}; refusing to run")
    lo, hi = version_key(TAGS[0]), version_key(TAGS[-1])
    extra = sorted(
        (t for t in present if t not in TAGS and version_key(t) and lo <= version_key(t) <= hi),
        key=version_key,
    )
    if extra:
        print(f"trl.py: warning: unlisted tag(s) in range, not recorded: {', '.join(extra)}", file=sys.stderr)


def to_recorded(value, where):
    """Map a Python literal to a RecordedValue (None -> null, tuple -> list)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"{where}: non-finite float {value!r} is not representable in JSON")
        return value
    if isinstance(value, (list, tuple)):
        return [to_recorded(v, where) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{where}: dict key {k!r} is not a string")
            out[k] = to_recorded(v, where)
        return out
    raise ValueError(f"{where}: unsupported literal {value!r} ({type(value).__name__})")


def literal_or_expr(node, where):
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return {"expr": ast.unparse(node)}
    return to_recorded(value, where)


def is_field_call(node):
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "field") or (isinstance(f, ast.Attribute) and f.attr == "field")


def literal_choices(annotation, where):
    """Values of a top-level `Literal[...]` annotation, else None."""
    if not isinstance(annotation, ast.Subscript):
        return None
    base = annotation.value
    name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
    if name != "Literal":
        return None
    sl = annotation.slice
    items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return [to_recorded(ast.literal_eval(e), where) for e in items]


def metadata_choices(call, where):
    """A literal list under "choices" in `metadata={...}` of a field() call, else None."""
    for kw in call.keywords:
        if kw.arg != "metadata" or not isinstance(kw.value, ast.Dict):
            continue
        for k, v in zip(kw.value.keys, kw.value.values):
            if isinstance(k, ast.Constant) and k.value == "choices":
                try:
                    value = ast.literal_eval(v)
                except ValueError:
                    return None
                if isinstance(value, (list, tuple)):
                    return to_recorded(value, where)
                return None
    return None


def is_classvar(annotation):
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(target, ast.Name) and target.id == "ClassVar") or (
        isinstance(target, ast.Attribute) and target.attr == "ClassVar"
    )


def config_keys(text, path):
    tree = ast.parse(text, filename=path)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == CLASS]
    if len(classes) != 1:
        raise ValueError(f"{path}: expected one top-level class {CLASS}, found {len(classes)}")
    keys = []
    seen = set()
    for stmt in classes[0].body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        if is_classvar(stmt.annotation):
            continue
        name = stmt.target.id
        where = f"{path}:{stmt.lineno} {name}"
        if name in seen:
            raise ValueError(f"{where}: field declared twice")
        seen.add(name)
        choices = None
        if stmt.value is None:
            raise ValueError(f"{where}: field has no default; this recorder does not expect that")
        if is_field_call(stmt.value):
            kws = {kw.arg: kw.value for kw in stmt.value.keywords if kw.arg is not None}
            if stmt.value.args:
                raise ValueError(f"{where}: field() with positional arguments")
            if "default" in kws:
                default = literal_or_expr(kws["default"], where)
            elif "default_factory" in kws:
                default = {"expr": "default_factory=" + ast.unparse(kws["default_factory"])}
            else:
                raise ValueError(f"{where}: field() without default or default_factory")
            choices = metadata_choices(stmt.value, where)
        else:
            default = literal_or_expr(stmt.value, where)
        if choices is None:
            choices = literal_choices(stmt.annotation, where)
        keys.append(
            {
                "key": name,
                "default": default,
                "type": ast.unparse(stmt.annotation),
                "choices": choices,
                "at": {"path": path, "line": stmt.lineno},
            }
        )
    return keys


def record_release(gitdir, label, tag, rev):
    commit = git(gitdir, "rev-parse", "--verify", "--quiet", rev + "^{commit}").decode().strip()
    if tag is None and commit != rev:
        raise ValueError(f"{label}: {rev} resolved to {commit}")
    date = git(gitdir, "log", "-1", "--format=%cs", commit).decode().strip()
    files = []
    keys = None
    for path in (CONFIG, TRAINER):
        data = git(gitdir, "show", f"{commit}:{path}")
        files.append({"path": path, "sha256": hashlib.sha256(data).hexdigest()})
        if path == CONFIG:
            keys = config_keys(data.decode("utf-8"), path)
    return {"label": label, "tag": tag, "commit": commit, "date": date, "files": files, "keys": keys}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git", required=True, help="bare git directory of huggingface/trl")
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"JSON file to write, in the compact format of compact.py (default {DEFAULT_OUT})")
    args = ap.parse_args(argv)

    check_tags(args.git)
    try:
        git(args.git, "cat-file", "-e", HEAD + "^{commit}")
    except subprocess.CalledProcessError:
        sys.exit(f"trl.py: commit {HEAD} missing from {args.git}; refusing to run")

    releases = [record_release(args.git, *r) for r in RELEASES]
    for prev, cur in zip(releases, releases[1:]):
        if cur["date"] < prev["date"]:
            print(f"trl.py: warning: {cur['label']} ({cur['date']}) predates {prev['label']} ({prev['date']})",
                  file=sys.stderr)
    for r in releases:
        shas = " ".join(f"{f['path'].rsplit('/', 1)[-1]}={f['sha256'][:12]}" for f in r["files"])
        print(f"{r['label']:<9} {r['date']} {r['commit'][:12]} keys={len(r['keys']):<3} {shas}")

    obj = {
        "framework": "trl",
        "repo": REPO,
        "recordedBy": {
            "tool": TOOL,
            "command": f"/usr/bin/python3 {TOOL} --git {args.git} --out {args.out}",
        },
        "releases": releases,
    }
    c = write_facts(obj, args.out)
    e = c["expanded"]
    print(f"wrote {args.out}: {e['releases']} releases, {e['keyRows']} key rows as {len(c['keys'])} keys, expanded sha256 {e['sha256'][:16]}")


if __name__ == "__main__":
    main(sys.argv[1:])
