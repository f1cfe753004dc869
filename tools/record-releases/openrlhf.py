#!/usr/bin/env python3
"""Record OpenRLHF release facts: every command-line flag of the PPO entry point, with its default.

Facts only (flag names, literal defaults, line numbers, file hashes); no upstream code is copied.
For each release the recorder reads ONE file at the release's commit:
  openrlhf/cli/train_ppo_ray.py
and, without importing or running it, parses it with `ast` and collects every
`<name>.add_argument(...)` call in source order. From v0.10.2 the flags are spelled with dotted
namespaces (`--actor.eps_clip_low_high`); they are still plain argparse flags in the same file and
are recorded as spelled. A `for <name> in (<literals>):` loop around add_argument calls (v0.10.2+,
the per-entity optimizer flags) is expanded: its body is recorded once per element, in loop order,
with the loop name bound to the element.

Per flag:
  key      the first option string, dashes included (further option strings are aliases; they are
           printed to stderr, not recorded);
  default  `ast.literal_eval` of `default=` (tuples become lists); inside an expanded loop the loop
           name is first replaced by its element and a conditional `a if <const> == <const> else b`
           is decided; anything still not a literal is recorded as {"expr": "<source text>"};
           no `default=`: false for action="store_true", true for action="store_false", else null;
  type     `ast.unparse` of `type=`, else "store_true"/"store_false" for those actions, else the
           action name; then " nargs=<n>" when `nargs=` is given; null when none of these is given;
  choices  `ast.literal_eval` of `choices=` as a list, else null;
  at       {path, line} of the add_argument call.

Usage:
  /usr/bin/python3 tools/record-releases/openrlhf.py --git DIR --out FILE
"""

import argparse
import ast
import hashlib
import json
import subprocess
import sys

from compact import write_facts

REPO = "OpenRLHF/OpenRLHF"
TOOL = "tools/record-releases/openrlhf.py"
ENTRY = "openrlhf/cli/train_ppo_ray.py"

TAGS = [
    "v0.8.4",
    "v0.8.5",
    "v0.8.6",
    "v0.8.7",
    "v0.8.8",
    "v0.8.9",
    "v0.8.9.post1",
    "v0.8.10",
    "v0.8.11",
    "v0.9.0",
    "v0.9.1",
    "v0.9.1.post1",
    "v0.9.2",
    "v0.9.3",
    "v0.9.4",
    "v0.9.5",
    "v0.9.6",
    "v0.9.7",
    "v0.9.8",
    "v0.9.9",
    "v0.9.10",
    "v0.10.0",
    "v0.10.1",
    "v0.10.1.post1",
    "v0.10.1.post2",
    "v0.10.2",
    "v0.10.3",
    "v0.10.4",
    "v0.11.0",
]

# Untagged commits read at their own date. One that is also a tag's commit is dropped (the tag
# entry is kept) and a note is printed to stderr.
UNTAGGED = [
    ("bc71bb19", "bc71bb19464aca306b33080b2d2bb45d154e2f49"),
    ("3c3be623", "3c3be6234e0cb353e76bb8019947db9dfe99fca7"),
]


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def note(msg):
    print(f"openrlhf.py: {msg}", file=sys.stderr)


def to_recorded(value):
    """Map a Python literal to a RecordedValue (tuples and sets become lists)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"non-finite float {value!r}")
        return value
    if isinstance(value, (list, tuple)):
        return [to_recorded(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_recorded(v) for k, v in value.items()}
    raise ValueError(f"unsupported literal {value!r} ({type(value).__name__})")


class Bind(ast.NodeTransformer):
    """Replace loop-bound names by their constant and decide constant conditionals."""

    def __init__(self, env):
        self.env = env

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            return ast.copy_location(ast.Constant(self.env[node.id]), node)
        return node

    def visit_JoinedStr(self, node):
        self.generic_visit(node)
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            elif (
                isinstance(v, ast.FormattedValue)
                and v.conversion == -1
                and v.format_spec is None
                and isinstance(v.value, ast.Constant)
                and isinstance(v.value.value, str)
            ):
                parts.append(v.value.value)
            else:
                return node
        return ast.copy_location(ast.Constant("".join(parts)), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        t = node.test
        if (
            isinstance(t, ast.Compare)
            and len(t.ops) == 1
            and isinstance(t.ops[0], (ast.Eq, ast.NotEq))
            and isinstance(t.left, ast.Constant)
            and isinstance(t.comparators[0], ast.Constant)
        ):
            same = t.left.value == t.comparators[0].value
            if isinstance(t.ops[0], ast.NotEq):
                same = not same
            return node.body if same else node.orelse
        return node


def bound(node, env):
    if not env:
        return node
    return Bind(env).visit(ast.parse(ast.unparse(node), mode="eval").body)


def literal(node, env, text):
    """(True, value) for a literal expression, else (False, source text)."""
    try:
        return True, ast.literal_eval(bound(node, env))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, text


def string_of(node, env, what, line):
    ok, value = literal(node, env, None)
    if not ok or not isinstance(value, str):
        raise ValueError(f"line {line}: {what} is not a string literal: {ast.unparse(node)}")
    return value


def has_add_argument(node):
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"
        for n in ast.walk(node)
    )


def add_argument_calls(node):
    calls = [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "add_argument"
        and isinstance(n.func.value, ast.Name)
    ]
    if len(calls) != sum(
        1 for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"
    ):
        raise ValueError(f"line {node.lineno}: add_argument on something other than a plain name")
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def record_call(call, env, source, path):
    line = call.lineno
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise ValueError(f"line {line}: *args/**kwargs in add_argument")
    names = [string_of(a, env, "option string", line) for a in call.args]
    if not names or not names[0].startswith("-"):
        raise ValueError(f"line {line}: not an optional flag: {names!r}")
    if len(names) > 1:
        note(f"{path}:{line}: {names[0]} has aliases {names[1:]} (not recorded)")
    kw = {}
    for k in call.keywords:
        if k.arg in kw:
            raise ValueError(f"line {line}: duplicate keyword {k.arg}")
        kw[k.arg] = k.value

    action = None
    if "action" in kw:
        action = string_of(kw["action"], env, "action", line)

    if "default" in kw:
        node = kw["default"]
        ok, value = literal(node, env, ast.get_source_segment(source, node) or ast.unparse(node))
        default = to_recorded(value) if ok else {"expr": value}
    elif action == "store_true":
        default = False
    elif action == "store_false":
        default = True
    else:
        default = None

    parts = []
    if "type" in kw:
        parts.append(ast.unparse(kw["type"]))
    elif action is not None:
        parts.append(action)
    if "nargs" in kw:
        ok, nargs = literal(kw["nargs"], env, None)
        if not ok:
            raise ValueError(f"line {line}: nargs is not a literal")
        parts.append(f"nargs={nargs}")
    typ = " ".join(parts) if parts else None

    choices = None
    if "choices" in kw:
        ok, value = literal(kw["choices"], env, None)
        if not ok or not isinstance(value, (list, tuple)):
            raise ValueError(f"line {line}: choices is not a literal list")
        choices = to_recorded(list(value))

    return {
        "key": names[0],
        "default": default,
        "type": typ,
        "choices": choices,
        "at": {"path": path, "line": line},
    }


def walk_block(stmts, env, source, path, out):
    for stmt in stmts:
        if isinstance(stmt, ast.For):
            if not has_add_argument(stmt):
                continue
            if not isinstance(stmt.target, ast.Name) or stmt.orelse:
                raise ValueError(f"line {stmt.lineno}: unsupported loop around add_argument")
            try:
                items = ast.literal_eval(bound(stmt.iter, env))
            except ValueError:
                raise ValueError(f"line {stmt.lineno}: loop over a non-literal around add_argument")
            for item in items:
                walk_block(stmt.body, {**env, stmt.target.id: item}, source, path, out)
        elif isinstance(stmt, (ast.If, ast.While)):
            if has_add_argument(stmt.test):
                raise ValueError(f"line {stmt.lineno}: add_argument in a condition")
            walk_block(stmt.body, env, source, path, out)
            walk_block(stmt.orelse, env, source, path, out)
        elif isinstance(stmt, ast.Try):
            walk_block(stmt.body, env, source, path, out)
            for h in stmt.handlers:
                walk_block(h.body, env, source, path, out)
            walk_block(stmt.orelse, env, source, path, out)
            walk_block(stmt.finalbody, env, source, path, out)
        elif isinstance(stmt, (ast.With, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            walk_block(stmt.body, env, source, path, out)
        else:
            for call in add_argument_calls(stmt):
                out.append(record_call(call, env, source, path))


def flags(text, path):
    tree = ast.parse(text, filename=path)
    out = []
    walk_block(tree.body, {}, text, path, out)
    seen = set()
    for k in out:
        if k["key"] in seen:
            raise ValueError(f"{path}: flag {k['key']} defined twice")
        seen.add(k["key"])
    return out


def record_release(gitdir, label, tag, rev):
    commit = git(gitdir, "rev-parse", "--verify", rev + "^{commit}").decode().strip()
    if tag is None and commit != rev:
        raise ValueError(f"{label}: {rev} resolved to {commit}")
    date = git(gitdir, "log", "-1", "--format=%cs", commit).decode().strip()
    stamp = int(git(gitdir, "log", "-1", "--format=%ct", commit).decode().strip())
    data = git(gitdir, "show", f"{commit}:{ENTRY}")
    release = {
        "label": label,
        "tag": tag,
        "commit": commit,
        "date": date,
        "files": [{"path": ENTRY, "sha256": hashlib.sha256(data).hexdigest()}],
        "keys": flags(data.decode("utf-8"), ENTRY),
    }
    return stamp, release


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git", required=True, help="bare git directory of OpenRLHF/OpenRLHF")
    ap.add_argument("--out", required=True, help="JSON file to write (the compact format of compact.py)")
    args = ap.parse_args(argv)

    recorded = [record_release(args.git, t, t, t) for t in TAGS]
    tagged = {r["commit"]: r["label"] for _, r in recorded}
    for label, commit in UNTAGGED:
        if commit in tagged:
            note(f"{label} ({commit}) is the commit of tag {tagged[commit]}; keeping the tag entry only")
            continue
        recorded.append(record_release(args.git, label, None, commit))
    stamps = [s for s, _ in recorded]
    if len(set(stamps)) != len(stamps):
        raise ValueError("two releases share a committer timestamp; order would be ambiguous")
    recorded.sort(key=lambda sr: sr[0])
    obj = {
        "framework": "openrlhf",
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
