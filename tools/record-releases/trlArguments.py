#!/usr/bin/env python3
"""Record the argument names a TRL GRPO launch accepts beside GRPOConfig's own fields.

A TRL config file or command line (`trl grpo`, `accelerate launch … grpo.py`) is parsed by
HfArgumentParser into several dataclasses at once. GRPOConfig's own fields are recorded per release
by trl.py (src/conformance/releases/data/trl.json). This recorder records the others. Facts only
(field names, literal defaults, line numbers, file hashes); no upstream code is copied, imported or
run: every file is parsed with `ast`.

Output 1: src/conformance/releases/data/trl-arguments.json (`--out`; format
"polgrad-trl-arguments/1", read by src/conformance/releases/trlArguments.ts):

  transformers.wheels  one entry per transformers wheel in WHEELS, read with zipfile: `version`
                       (the wheel's METADATA `Version:`, which must match its file name), `wheel`
                       (file name) and `wheelSha256` (SHA-256 of the wheel file), `path`
                       (transformers/training_args.py) and `sha256` (SHA-256 of that member's
                       bytes), `class` (TrainingArguments) and `line` (of its `class` statement).
  transformers.fields  every dataclass field of TrainingArguments' own class body (an annotated
                       assignment `name: type = …` whose annotation is not ClassVar), each once with
                       `runs` over the wheels (in WHEELS order, `from`/`to` versions inclusive) of
                       its `line` and `default`.
  trl.releases         label and commit of every release in src/conformance/releases/data/trl.json
                       (each commit must exist in the mirror).
  trl.classes          per release, the dataclasses parsed beside GRPOConfig, each with `runs` of its
                       `path`, `line`, `sha256` (of the file at the commit, as
                       `git show COMMIT:PATH | sha256sum`) and `bases` (ast.unparse of each base):
                       - GRPOScriptArguments and every other top-level @dataclass of
                         trl/scripts/grpo.py;
                       - every class named in the `dataclass_types = (…)` tuple of
                         trl/scripts/grpo.py other than GRPOConfig and the classes of that file
                         (ModelConfig at every release, DatasetMixtureConfig from v0.22.0), and
                         ScriptArguments (GRPOScriptArguments' base): each where `trl.<Name>`
                         resolves, following `from .x import Name` statements of the package's
                         `__init__.py` files (any nesting, e.g. under `if TYPE_CHECKING:`) from
                         trl/__init__.py to the file with a top-level `class Name` (so
                         trl/scripts/utils.py, not trl/scripts/vllm_serve.py, for ScriptArguments);
                       - every top-level @dataclass of examples/scripts/*grpo*.py (none at any
                         recorded release; the scripts parse TRL's ScriptArguments, GRPOConfig and
                         ModelConfig).
                       ScriptArguments, ModelConfig and GRPOScriptArguments must be found at every
                       release, and no two recorded classes may share a name, or it refuses to run.
  trl.fields           every field of those class bodies (as for TrainingArguments; inherited fields
                       are recorded with the class that declares them), each (key, class) once with
                       `runs` over the releases (`from`/`to` labels inclusive) of its `line` and
                       `default`.
  expanded             the number of wheels, TrainingArguments rows, releases, (release, class) rows
                       and (release, field) rows, which the loader checks.

Defaults: `ast.literal_eval` of `field(default=…)` or of a plain `= value` (None -> null, tuple ->
list); otherwise {"expr": "<ast.unparse>"}; a default factory {"expr": "default_factory=<…>"}; a
field without a default {"expr": null}.

Output 2 (unchanged): src/conformance/releases/trlArgumentKeys.ts, the names-only union by source
(TrainingArguments, ScriptArguments, ModelConfig, GRPOScriptArguments, example dataclasses, and the
`trl` command's own options: every "--name" string literal in trl/cli.py, trl/cli/*.py,
trl/commands/*.py) with the wheels' and files' SHA-256s, imported by the TRL config reader.

Usage:
  /usr/bin/python3 tools/record-releases/trlArguments.py --git /work/.mirror/huggingface+trl/repo
"""

import argparse
import ast
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import zipfile

TOOL = "tools/record-releases/trlArguments.py"
OUT = "src/conformance/releases/trlArgumentKeys.ts"
JSON_OUT = "src/conformance/releases/data/trl-arguments.json"
TRL_JSON = "src/conformance/releases/data/trl.json"
FORMAT = "polgrad-trl-arguments/1"
WHEELS = [
    "/opt/pypi-more/files/transformers-4.57.6-py3-none-any.whl",
    "/opt/pypi/files/transformers-5.17.0-py3-none-any.whl",
    "/opt/pypi-more/files/transformers-5.18.0-py3-none-any.whl",
]
TRL_FILES = {
    "trl/scripts/utils.py": "ScriptArguments",
    "trl/trainer/model_config.py": "ModelConfig",
    "trl/scripts/grpo.py": "GRPOScriptArguments",
}
GRPO_SCRIPT = "trl/scripts/grpo.py"
EXAMPLE = re.compile(r"examples/scripts/[^/]*grpo[^/]*\.py")
REQUIRED = ("ScriptArguments", "ModelConfig", "GRPOScriptArguments")


def to_recorded(value):
    """A Python literal as JSON (None -> null, tuple -> list); ValueError where JSON has none."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(value)
        return value
    if isinstance(value, (list, tuple)):
        return [to_recorded(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) and not k.isdigit() for k in value):
        return {k: to_recorded(v) for k, v in value.items()}
    raise ValueError(value)


def literal_or_expr(node):
    try:
        return to_recorded(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return {"expr": ast.unparse(node)}


def default_of(value):
    """The recorded default of a field's right-hand side (None: no default)."""
    if value is None:
        return {"expr": None}
    f = value.func if isinstance(value, ast.Call) else None
    if (isinstance(f, ast.Name) and f.id == "field") or (isinstance(f, ast.Attribute) and f.attr == "field"):
        kws = {kw.arg: kw.value for kw in value.keywords if kw.arg is not None}
        if "default" in kws:
            return literal_or_expr(kws["default"])
        if "default_factory" in kws:
            return {"expr": "default_factory=" + ast.unparse(kws["default_factory"])}
        return {"expr": None}
    return literal_or_expr(value)


def is_classvar(annotation):
    t = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(t, ast.Name) and t.id == "ClassVar") or (isinstance(t, ast.Attribute) and t.attr == "ClassVar")


def is_dataclass(node):
    for d in node.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        if (isinstance(d, ast.Name) and d.id == "dataclass") or (isinstance(d, ast.Attribute) and d.attr == "dataclass"):
            return True
    return False


def class_fields(node, where):
    """[(name, line, default)] of a class body's dataclass fields, in source order."""
    out = []
    for s in node.body:
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and not is_classvar(s.annotation):
            if any(n == s.target.id for n, _, _ in out):
                raise ValueError(f"{where}: field {s.target.id} declared twice")
            out.append((s.target.id, s.lineno, default_of(s.value)))
    return out


def top_classes(tree):
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def sha(data):
    return hashlib.sha256(data).hexdigest()


def record_wheels():
    wheels, rows = [], []
    for w in WHEELS:
        data = open(w, "rb").read()
        name = os.path.basename(w)
        with zipfile.ZipFile(w) as z:
            src = z.read("transformers/training_args.py")
            meta = [n for n in z.namelist() if re.fullmatch(r"transformers-[^/]+\.dist-info/METADATA", n)]
            if len(meta) != 1:
                raise ValueError(f"{name}: expected one transformers-*.dist-info/METADATA, found {meta}")
            version = re.search(r"^Version: (\S+)$", z.read(meta[0]).decode(), re.M).group(1)
        if not name.startswith(f"transformers-{version}-"):
            raise ValueError(f"{name}: METADATA says version {version}")
        node = top_classes(ast.parse(src)).get("TrainingArguments")
        if node is None or not is_dataclass(node):
            raise ValueError(f"{name}: no top-level @dataclass TrainingArguments")
        wheels.append({"version": version, "wheel": name, "wheelSha256": sha(data),
                       "path": "transformers/training_args.py", "sha256": sha(src),
                       "class": "TrainingArguments", "line": node.lineno})
        rows.append((version, class_fields(node, f"{name}:TrainingArguments")))
    return wheels, rows


def module_file(tree_paths, dotted):
    base = dotted.replace(".", "/")
    for p in (base + ".py", base + "/__init__.py"):
        if p in tree_paths:
            return p
    return None


def resolve_export(show, tree_paths, name):
    """(path, ClassDef) of `trl.<name>`: follow `from .x import name` from trl/__init__.py."""
    path, package, seen = "trl/__init__.py", "trl", set()
    while path not in seen:
        seen.add(path)
        tree = ast.parse(show(path), filename=path)
        node = top_classes(tree).get(name)
        if node is not None:
            return path, node
        nxt = None
        for s in ast.walk(tree):
            if isinstance(s, ast.ImportFrom) and any(a.name == name and a.asname is None for a in s.names):
                parts = package.split(".")
                if s.level:
                    parts = parts[: len(parts) - (s.level - 1)]
                    dotted = ".".join(parts + ([s.module] if s.module else []))
                else:
                    dotted = s.module
                nxt = module_file(tree_paths, dotted)
                if nxt is not None:
                    break
        if nxt is None:
            return None
        path = nxt
        package = nxt[: -len("/__init__.py")].replace("/", ".") if nxt.endswith("/__init__.py") else nxt[:-3].rsplit("/", 1)[0].replace("/", ".")
    return None


def dataclass_types(tree):
    """The names in `dataclass_types = (…)` of a module (empty when it has none)."""
    for s in ast.walk(tree):
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "dataclass_types" for t in s.targets):
            if isinstance(s.value, ast.Tuple):
                return [e.id for e in s.value.elts if isinstance(e, ast.Name)]
    return []


def record_release(gitdir, label, commit):
    """{class: (source path, line, sha256, bases, [(field, line, default)])} at one commit."""
    tree_paths = set(git(gitdir, "ls-tree", "-r", "--name-only", commit).decode().splitlines())
    cache = {}

    def show(path):
        if path not in cache:
            cache[path] = git(gitdir, "show", f"{commit}:{path}")
        return cache[path].decode("utf-8")

    found = {}

    def add(path, node):
        if node.name in found:
            raise ValueError(f"{label}: class {node.name} found in {found[node.name][0]} and {path}")
        where = f"{label}:{path}:{node.lineno} {node.name}"
        found[node.name] = (path, node.lineno, sha(cache[path]), [ast.unparse(b) for b in node.bases],
                            class_fields(node, where))

    grpo = ast.parse(show(GRPO_SCRIPT), filename=GRPO_SCRIPT)
    local = top_classes(grpo)
    for node in local.values():
        if is_dataclass(node):
            add(GRPO_SCRIPT, node)
    wanted = [n for n in dataclass_types(grpo) if n != "GRPOConfig" and n not in local]
    for n in wanted + [b for b in ("ScriptArguments",) if b not in wanted]:
        hit = resolve_export(show, tree_paths, n)
        if hit is None:
            raise ValueError(f"{label}: trl.{n} does not resolve to a top-level class")
        add(*hit)
    for path in sorted(p for p in tree_paths if EXAMPLE.fullmatch(p)):
        for node in top_classes(ast.parse(show(path), filename=path)).values():
            if is_dataclass(node):
                add(path, node)
    missing = [n for n in REQUIRED if n not in found]
    if missing:
        raise ValueError(f"{label}: {', '.join(missing)} not found")
    return found


def runs_add(table, index, ident, label, value, prev_label):
    """Extend ident's open run when it held `value` at prev_label, else open a new run."""
    if ident not in index:
        index[ident] = len(table)
        table.append({**dict(ident), "runs": []})
    runs = table[index[ident]]["runs"]
    text = json.dumps(value, sort_keys=True)
    if runs and runs[-1]["to"] == prev_label and json.dumps({k: runs[-1][k] for k in value}, sort_keys=True) == text:
        runs[-1]["to"] = label
    else:
        runs.append({"from": label, "to": label, **value})


def record_json(gitdir, out):
    wheels, rows = record_wheels()
    t_index, t_fields, prev = {}, [], None
    for version, fs in rows:
        for name, line, default in fs:
            runs_add(t_fields, t_index, (("key", name),), version, {"line": line, "default": default}, prev)
        prev = version
    with open(TRL_JSON, encoding="utf-8") as f:
        releases = [{"label": r["label"], "commit": r["commit"]} for r in json.load(f)["releases"]]
    c_index, classes, f_index, fields_, prev = {}, [], {}, [], None
    class_rows = field_rows = 0
    for r in releases:
        try:
            git(gitdir, "cat-file", "-e", r["commit"] + "^{commit}")
        except subprocess.CalledProcessError:
            sys.exit(f"trlArguments.py: commit {r['commit']} ({r['label']}) missing from {gitdir}; refusing to run")
        found = record_release(gitdir, r["label"], r["commit"])
        for cls, (path, line, digest, bases, fs) in found.items():
            runs_add(classes, c_index, (("class", cls),), r["label"],
                     {"path": path, "line": line, "sha256": digest, "bases": bases}, prev)
            for name, fline, default in fs:
                runs_add(fields_, f_index, (("key", name), ("class", cls)), r["label"],
                         {"line": fline, "default": default}, prev)
            class_rows += 1
            field_rows += len(fs)
        prev = r["label"]
        print(f"{r['label']:<9} {r['commit'][:12]} " + " ".join(f"{c}={len(v[4])}" for c, v in found.items()))
    obj = {
        "format": FORMAT,
        "notice": f"GENERATED by {TOOL} from transformers wheels and huggingface/trl; facts only (field names, literal defaults, lines, hashes). Do not edit.",
        "recordedBy": {"tool": TOOL, "command": f"/usr/bin/python3 {TOOL} --git {gitdir} --out {out}"},
        "expanded": {"wheels": len(wheels), "trainingArgumentsRows": sum(len(fs) for _, fs in rows),
                     "releases": len(releases), "classRows": class_rows, "fieldRows": field_rows},
        "transformers": {"wheels": wheels, "fields": t_fields},
        "trl": {"repo": "huggingface/trl", "releases": releases, "classes": classes, "fields": fields_},
    }
    one = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)  # noqa: E731
    lines = lambda xs: ",\n".join(f"   {one(x)}" for x in xs)  # noqa: E731
    head = ",\n".join(f" {one(k)}: {one(obj[k])}" for k in ("format", "notice", "recordedBy", "expanded"))
    text = (
        f"{{\n{head},\n"
        f' "transformers": {{\n  "wheels": [\n{lines(wheels)}\n  ],\n  "fields": [\n{lines(t_fields)}\n  ]\n }},\n'
        f' "trl": {{\n  "repo": "huggingface/trl",\n  "releases": [\n{lines(releases)}\n  ],\n'
        f'  "classes": [\n{lines(classes)}\n  ],\n  "fields": [\n{lines(fields_)}\n  ]\n }}\n}}\n'
    )
    if json.loads(text) != obj:
        raise AssertionError("written text does not parse back to the recorded object")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    e = obj["expanded"]
    print(f"wrote {out}: {e['wheels']} wheels ({e['trainingArgumentsRows']} TrainingArguments rows as {len(t_fields)} keys), "
          f"{e['releases']} releases ({e['classRows']} class rows, {e['fieldRows']} field rows as {len(fields_)} (key, class)), {len(text)} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git", required=True, help="bare git directory of huggingface/trl")
    ap.add_argument("--out", default=JSON_OUT, help=f"the JSON file to write (default {JSON_OUT})")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.chdir(root)
    record_json(a.git, a.out)
    write_ts_keys(a, root)


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


def write_ts_keys(a, root):
    """The names-only union (src/conformance/releases/trlArgumentKeys.ts), as before the JSON."""
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
    keys = {n: sorted(s) for n, s in sorted(names.items())}
    # Per file, each distinct SHA-256 with the releases where the file has it (commits in trl.json).
    files = {}
    for r in per_release:
        for path, sha in r["files"].items():
            files.setdefault(path, {}).setdefault(sha, []).append(r["release"])
    prov = {"tool": TOOL, "command": f"/usr/bin/python3 {TOOL} --git {a.git}", "wheels": wheels,
            "trlReleases": [r["release"] for r in per_release], "trlFiles": files}
    body = ",\n".join(f"  {json.dumps(n)}: {json.dumps(s)}" for n, s in keys.items())
    text = (
        f"// GENERATED by {TOOL} from transformers wheels and huggingface/trl; names only. Do not edit.\n"
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
