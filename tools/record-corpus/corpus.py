#!/usr/bin/env python3
"""Record the launch configs the frameworks ship: the trainer's settings, not the scripts.

For each recorded release of a framework (the releases of src/conformance/releases/data/<fw>.json;
open-r1 at its mirror's head) the recorder reads, at the release's commit:

  verl      examples/**/*.sh, recipe/**/*.sh
  openrlhf  examples/scripts/*.sh
  trl       examples/scripts/*grpo*.py and trl/scripts/grpo.py (the shell commands of the module
            docstring), docs/source/*.md (```bash/```sh/```shell blocks; ```python blocks that call
            GRPOConfig(...))
  open-r1   recipes/**/grpo/*.yaml (a `trl`-style config file, recorded as its mapping, read by
            yaml.safe_load as TRL's parser does), with the TRL release setup.py pins (`pins`)

and extracts the trainer's command line WITHOUT running anything upstream: a shell text is run by
`/bin/bash` in an empty temporary folder with an empty PATH, so that every external command
(python3, ray, deepspeed, torchrun, accelerate, trl, rm, pip, ...) is not found and bash calls
`command_not_found_handle`, which this recorder defines to write the command's words (as bash
expanded them: variables, arrays, defaults, line continuations, quotes) to a file and return
(0, or 1 for `python -c` probes, as on a machine without NPUs). Builtins run as bash runs them.
Nothing is downloaded, installed or written outside the temporary folder (HOME is inside it).

A command is a trainer launch when one of its words is a trainer entry point:
  verl      -m verl.trainer.main_ppo, -m recipe.<name>.main_*, or a script path ending in
            verl/trainer/main_ppo.py / recipe/<name>/main_*.py
  openrlhf  -m/--module openrlhf.cli.train_ppo_ray (or openrlhf.cli.train_ppo, recorded with its
            entry point so the test can refuse it by name)
  trl       `trl grpo`, or a script whose file name contains "grpo"
other commands (SFT, DPO, reward-model, data preparation, generation) are counted under
`skipped`, by entry point.

Per launch the recorder commits: the entry point, the words before it (`launcher`, e.g.
`accelerate launch --num_processes 7`) and after it (`args`, the trainer's settings in the
framework's spelling), and provenance: repo, path, the line of the entry point in the file, and
per release where the same path yields the same words, `seen`: [label, line, SHA-256 of the file]
(the commit of each label is in `releases`).
A ```python GRPOConfig(...) call is recorded as `kwargs`: each keyword's `ast.literal_eval`, or
{"expr": "<source>"} when it is not a literal. A string value over 200 characters (a chat template, a
prompt) is recorded as its length and hash: it affects no loss and is upstream's text.

Usage:
  /usr/bin/python3 tools/record-corpus/corpus.py --framework verl --git DIR --out FILE
"""

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import signal
import tempfile
import time

TOOL = "tools/record-corpus/corpus.py"
REPOS = {
    "verl": "verl-project/verl",
    "openrlhf": "OpenRLHF/OpenRLHF",
    "trl": "huggingface/trl",
    "open-r1": "huggingface/open-r1",
}

HANDLER = r"""
RANDOM=1
# A script traced with `set -x` into `2>&1 | tee log` writes its trace into a pipe whose reader
# (tee, not found here) has gone: SIGPIPE would kill the writer in the middle of a record.
trap '' PIPE
command_not_found_handle() {
  { set +x; } 2>/dev/null
  # One file per command: the commands of a pipeline run at once.
  { printf '%s\037' "${BASH_LINENO[0]}"; printf '%s\037' "$@"; } > "$POLGRAD_REC/$EPOCHREALTIME-$BASHPID"
  case "$1 $2" in
    python*" -c") return 1 ;;
  esac
  return 0
}
"""


def git(repo, *a):
    return subprocess.run(["git", "-C", repo, *a], check=True, capture_output=True).stdout


def releases_of(framework, repo, root):
    if framework == "open-r1":
        commit = git(repo, "rev-parse", "HEAD").decode().strip()
        return [{"label": commit[:8], "commit": commit}]
    with open(os.path.join(root, f"src/conformance/releases/data/{framework}.json")) as f:
        facts = json.load(f)
    return [{"label": r["label"], "commit": r["commit"]} for r in facts["releases"]]


def files_at(framework, repo, commit):
    names = git(repo, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
    out = []
    for n in names:
        if framework == "verl" and re.match(r"^(examples|recipe)/.*\.sh$", n):
            out.append((n, "shell"))
        elif framework == "openrlhf" and re.match(r"^examples/scripts/[^/]*\.sh$", n):
            out.append((n, "shell"))
        elif framework == "trl":
            if re.match(r"^examples/scripts/[^/]*grpo[^/]*\.py$", n) or n == "trl/scripts/grpo.py":
                out.append((n, "docstring"))
            elif re.match(r"^docs/source/[^/]*\.md$", n):
                out.append((n, "markdown"))
        elif framework == "open-r1" and re.match(r"^recipes/.*/grpo/[^/]*\.yaml$", n):
            out.append((n, "yaml"))
    return out


def run_shell(text):
    """The words of every external command `text` runs, with the line bash reports."""
    with tempfile.TemporaryDirectory() as d:
        for sub in ("home", "bin", "cwd"):
            os.mkdir(os.path.join(d, sub))
        with open(os.path.join(d, "handler.sh"), "w") as f:
            f.write(HANDLER)
        with open(os.path.join(d, "cwd", "script.sh"), "w") as f:
            f.write(text)
        rec = os.path.join(d, "rec")
        os.mkdir(rec)
        env = {
            "HOME": os.path.join(d, "home"),
            "PATH": os.path.join(d, "bin"),
            "BASH_ENV": os.path.join(d, "handler.sh"),
            "POLGRAD_REC": rec,
        }
        # Its own process group: commands a script starts in the background (`cmd &`) are waited
        # for (up to the same limit) before the records are read.
        proc = subprocess.Popen(
            ["/bin/bash", "script.sh"],
            cwd=os.path.join(d, "cwd"),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.01)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        names = sorted(os.listdir(rec), key=lambda n: (float(n.split("-")[0]), n))
        chunks = [open(os.path.join(rec, n), "rb").read().decode("utf-8", "replace") for n in names]
    cmds = []
    for chunk in chunks:
        parts = chunk.split("\x1f")[:-1]
        if len(parts) < 2:
            print(f"  an empty command record in {TOOL}'s run (skipped): {chunk!r}", file=sys.stderr)
            continue
        # The temporary folder's paths are not the script's: HOME reads as ~, the working folder as .
        words = [w.replace(env["HOME"], "~").replace(os.path.join(d, "cwd"), ".") for w in parts[1:]]
        cmds.append({"bashLine": int(parts[0] or 0), "words": words})
    return cmds


VERL_MODULE = re.compile(r"^(verl\.trainer\.main_ppo|recipe\.[\w.]+\.main_\w+|verl\.trainer\.[\w.]+|recipe\.[\w.]+)$")
VERL_SCRIPT = re.compile(r"(^|/)(verl/trainer/main_ppo\.py|recipe/[\w/]+/main_\w+\.py)$")


def entry_of(framework, words):
    """(first word, last word, entry point name) of the entry point in `words`, or None."""
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if framework == "verl":
            if w == "-m" and nxt is not None and (nxt.startswith("verl.") or nxt.startswith("recipe.")):
                return i, i + 1, nxt
            if VERL_SCRIPT.search(w):
                return i, i, w
        elif framework == "openrlhf":
            if w in ("-m", "--module") and nxt is not None and nxt.startswith("openrlhf.cli."):
                return i, i + 1, nxt
            if re.search(r"openrlhf/cli/\w+\.py$", w):
                return i, i, w
        elif framework == "trl":
            if w == "trl" and nxt is not None and not nxt.startswith("-"):
                return i, i + 1, f"trl {nxt}"
            if w.endswith(".py") and "grpo" in os.path.basename(w):
                return i, i, w
            if w == "-m" and nxt is not None and "grpo" in nxt:
                return i, i + 1, nxt
    return None


def is_trainer(framework, entry):
    if framework == "verl":
        if re.search(r"main_(eval|generation)|data_process|sft", entry):
            return False
        return re.search(r"main_ppo|\.main_\w+$|/main_\w+\.py$|fully_async_main", entry) is not None
    if framework == "openrlhf":
        return "train_ppo" in entry
    if framework == "trl":
        return "grpo" in entry
    return False


DOC_CMD = re.compile(r"^\s*((CUDA_VISIBLE_DEVICES|[A-Z_]+)=\S+\s+)*(accelerate\s+launch|python3?|trl\s+\w+|torchrun|deepspeed)\b")


def docstring_commands(text):
    """Shell commands in a module docstring: from a line starting like a launch to the end of its continuation."""
    try:
        doc = ast.get_docstring(ast.parse(text)) or ""
    except SyntaxError:
        return []
    lines = doc.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if DOC_CMD.match(lines[i]):
            block = [lines[i]]
            while block[-1].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                block.append(lines[i])
            out.append("\n".join(block))
        i += 1
    return out


FENCE = re.compile(r"^```(\w*)\s*$")


def markdown_blocks(text):
    """(language, first line number, body) of every fenced block."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i].strip())
        if m is not None and lines[i].strip() != "```":
            lang = m.group(1)
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            out.append((lang, start + 1, "\n".join(lines[start:j])))
            i = j + 1
            continue
        i += 1
    return out


def grpo_config_calls(code):
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name != "GRPOConfig":
                continue
            kw = {}
            for k in node.keywords:
                if k.arg is None:
                    continue
                try:
                    v = ast.literal_eval(k.value)
                    if isinstance(v, tuple):
                        v = list(v)
                    json.dumps(v)
                except Exception:
                    v = {"expr": ast.unparse(k.value)}
                kw[k.arg] = v
            out.append((node.lineno, kw))
    return out


def line_of(text, entry, start=1):
    for n, line in enumerate(text.splitlines(), 1):
        if n >= start and entry in line:
            return n
    return start


LONG = 200


def elide(v):
    """A string longer than LONG characters (a chat template, a prompt) as its length and hash: no
    such value affects the loss, and the text is upstream's, not a setting."""
    if isinstance(v, str) and len(v) > LONG:
        # A `key=value` word keeps its key: only the value is upstream's text.
        m = re.match(r"^([+~]{0,2}[A-Za-z_][\w.\-/@]*=)(.*)$", v, re.S)
        head, body = (m.group(1), m.group(2)) if m is not None else ("", v)
        return f"{head}<elided: {len(body)} characters, sha256 {hashlib.sha256(body.encode()).hexdigest()[:16]}>"
    if isinstance(v, list):
        return [elide(x) for x in v]
    if isinstance(v, dict):
        return {k: elide(x) for k, x in v.items()}
    return v


def launch(kind, words, got):
    first, last, entry = got
    return {"kind": kind, "entry": entry, "launcher": elide(words[:first]), "args": elide(words[last + 1:])}


def launches_in(framework, path, kind, text, skipped):
    """Every trainer launch in one file: (line, record) pairs."""
    out = []
    if kind == "yaml":
        import yaml  # Debian's python3-yaml; safe_load keeps the last of duplicate keys, as TRL's reader does

        out.append((1, {"kind": "yaml-file", "entry": "trl grpo --config", "launcher": [], "mapping": elide(yaml.safe_load(text))}))
        return out
    if kind == "markdown":
        for lang, start, body in markdown_blocks(text):
            if lang in ("bash", "sh", "shell", "console"):
                body2 = "\n".join(l[2:] if l.startswith("$ ") else l for l in body.splitlines())
                for cmd in run_shell(body2):
                    got = entry_of(framework, cmd["words"])
                    if got is None:
                        continue
                    if not is_trainer(framework, got[2]):
                        skipped[got[2]] = skipped.get(got[2], 0) + 1
                        continue
                    line = start + max(cmd["bashLine"] - 1, 0)
                    out.append((line, launch("markdown-shell", cmd["words"], got)))
            elif lang == "python":
                for ln, kw in grpo_config_calls(body):
                    out.append((start + ln - 1, {"kind": "markdown-python", "entry": "GRPOConfig", "launcher": [], "kwargs": elide(kw)}))
        return out
    if kind == "docstring":
        for cmdtext in docstring_commands(text):
            for cmd in run_shell(cmdtext):
                got = entry_of(framework, cmd["words"])
                if got is None:
                    continue
                first = cmdtext.splitlines()[0].strip()
                out.append((line_of(text, first), launch("docstring-shell", cmd["words"], got)))
        return out
    for cmd in run_shell(text):
        got = entry_of(framework, cmd["words"])
        if got is None:
            continue
        entry = got[2]
        if not is_trainer(framework, entry):
            skipped[entry] = skipped.get(entry, 0) + 1
            continue
        out.append((line_of(text, entry.split("/")[-1]), launch("shell", cmd["words"], got)))
    return out


def trl_pin(repo, commit):
    """The TRL release open-r1's setup.py pins (`"trl...==X"`), with its line."""
    text = git(repo, "show", f"{commit}:setup.py").decode()
    for n, line in enumerate(text.splitlines(), 1):
        m = re.search(r'"trl(\[[^]]*\])?==([\w.]+)"', line)
        if m is not None:
            return {"trl": "v" + m.group(2), "path": "setup.py", "line": n}
    raise SystemExit("open-r1: setup.py pins no trl release")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framework", required=True, choices=sorted(REPOS))
    ap.add_argument("--git", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rels = releases_of(a.framework, a.git, root)
    entries = {}
    order = []
    skipped = {}
    for rel in rels:
        for path, kind in files_at(a.framework, a.git, rel["commit"]):
            data = git(a.git, "show", f"{rel['commit']}:{path}")
            sha = hashlib.sha256(data).hexdigest()
            text = data.decode("utf-8", "replace")
            for line, rec in launches_in(a.framework, path, kind, text, skipped):
                body = json.dumps(rec, sort_keys=True)
                key = (path, body)
                if key not in entries:
                    entries[key] = {"path": path, "line": line, **rec, "seen": []}
                    order.append(key)
                e = entries[key]
                if not any(s[0] == rel["label"] for s in e["seen"]):
                    e["seen"].append([rel["label"], line, sha])
        print(f"{rel['label']}: {len(order)} distinct launches so far", file=sys.stderr)
    out = []
    ids = {}
    for key in order:
        e = entries[key]
        n = ids.get(e["path"], 0) + 1
        ids[e["path"]] = n
        out.append({"id": f"{e['path']}#{n}", **{k: v for k, v in e.items() if k != "line"}})
    doc = {
        "format": "polgrad-config-corpus/1",
        "notice": f"GENERATED by {TOOL} from {REPOS[a.framework]}; the trainer settings of the launch configs it ships (words as bash expands them), with provenance; no upstream script is copied. Do not edit.",
        "framework": a.framework,
        "repo": REPOS[a.framework],
        "recordedBy": {"tool": TOOL, "command": f"/usr/bin/python3 {TOOL} --framework {a.framework} --git {a.git} --out {a.out}"},
        "releases": [{"label": r["label"], "commit": r["commit"]} for r in rels],
        "skipped": dict(sorted(skipped.items())),
        **({"pins": trl_pin(a.git, rels[0]["commit"])} if a.framework == "open-r1" else {}),
        "launches": out,
    }
    # One launch per line: a re-recording's diff shows which launches changed.
    head = {k: v for k, v in doc.items() if k != "launches"}
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    text += ',\n "launches": [\n' + ",\n".join(json.dumps(l, ensure_ascii=False) for l in out) + "\n ]\n}\n"
    json.loads(text)
    with open(a.out, "w") as f:
        f.write(text)
    print(f"{len(out)} launches, {sum(len(e['seen']) for e in out)} (launch, release) pairs; skipped {sum(skipped.values())}", file=sys.stderr)


if __name__ == "__main__":
    main()
