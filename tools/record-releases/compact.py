"""The compact release-facts format (`polgrad-release-facts/1`), shared by the three recorders.

A recorder builds the per-release view in memory (every release with all its keys, as
`RecordedReleaseFacts` in src/conformance/releases/types.ts) and `write_facts` writes it
de-duplicated:

- `keys`: the key table, each key once, in order of first appearance (the first release's source
  order, then each later release's new keys in its source order). A key's `runs` give its value
  (`default`, `type`, `choices`) once per run of consecutive releases where the key is present with
  that value: `{"from": label, "to": label, ...}`, both ends inclusive.
- `releases`: each release's identity and files, `keyRanges` (its keys in source order as
  `[first, count]` ranges of key-table indices), `keyLines` (each key's declaration line, in the same
  order) and `keyFile` (the index in `files` of the file every key is declared in, or one index per
  key when they differ).
- `expanded`: the provenance of the expansion: the number of releases, of (release, key) rows, and
  the SHA-256 of the expanded `releases` list serialised as JavaScript's `JSON.stringify` does, so
  a reader checks that it expands to exactly what the recorder read
  (test/conformance/releases/releaseFacts.test.ts).

`load_expanded` reads a file back into the per-release view.
"""

import hashlib
import json
from decimal import Decimal

FORMAT = "polgrad-release-facts/1"


def js_number(x):
    """A number as JavaScript's Number.prototype.toString writes it (shortest round trip)."""
    if isinstance(x, int) and abs(x) < 2**53:
        return str(x)
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"non-finite number {x!r} is not JSON")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    t = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    k = len(digits)
    n = t.exponent + k  # the value is 0.digits × 10^n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mant}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def js_json(v):
    """`JSON.stringify(v)` of a JSON value, byte for byte (no whitespace, object order kept)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return js_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(js_json(x) for x in v) + "]"
    if isinstance(v, dict):
        for k in v:
            if k.isdigit():
                raise ValueError(f"object key {k!r}: JavaScript would reorder integer-like keys")
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + js_json(x) for k, x in v.items()) + "}"
    raise ValueError(f"not a JSON value: {v!r}")


def canonical_releases(releases):
    """The expanded releases with every object's fields in the order the TypeScript loader builds."""
    return [
        {
            "label": r["label"],
            "tag": r["tag"],
            "commit": r["commit"],
            "date": r["date"],
            "files": [{"path": f["path"], "sha256": f["sha256"]} for f in r["files"]],
            "keys": [
                {
                    "key": k["key"],
                    "default": k["default"],
                    "type": k["type"],
                    "choices": k["choices"],
                    "at": {"path": k["at"]["path"], "line": k["at"]["line"]},
                }
                for k in r["keys"]
            ],
            **canonical_configs(r),
        }
        for r in releases
    ]


def canonical_configs(r):
    """A release's named configs (verl's --config-name) and config groups, only where the recorder
    gives them."""
    out = {}
    if "configs" in r:
        out["configs"] = [
            {"name": c["name"], "file": c["file"], "values": [{"key": v["key"], "default": v["default"]} for v in c["values"]]}
            for c in r["configs"]
        ]
    if "groups" in r:
        out["groups"] = [
            {"group": g["group"], "package": g["package"], "default": g["default"], "options": list(g["options"])}
            for g in r["groups"]
        ]
    return out


def expanded_provenance(releases):
    canon = canonical_releases(releases)
    return {
        "releases": len(canon),
        "keyRows": sum(len(r["keys"]) for r in canon),
        "sha256": hashlib.sha256(js_json(canon).encode("utf-8")).hexdigest(),
    }


def compact(obj):
    """The compact form of a RecordedReleaseFacts-shaped dict."""
    releases = obj["releases"]
    labels = [r["label"] for r in releases]
    if len(set(labels)) != len(labels):
        raise ValueError("two releases share a label")
    index = {}  # key name -> key-table index
    table = []  # {"key", "runs"}
    last = []  # per key: (release index, value text) of its open run
    out_releases = []
    for ri, r in enumerate(releases):
        paths = [f["path"] for f in r["files"]]
        seq = []
        files = []
        for k in r["keys"]:
            name = k["key"]
            if name not in index:
                index[name] = len(table)
                table.append({"key": name, "runs": []})
                last.append(None)
            ki = index[name]
            if ki in seq:
                raise ValueError(f"{r['label']}: key {name!r} recorded twice")
            seq.append(ki)
            if k["at"]["path"] not in paths:
                raise ValueError(f"{r['label']}: {name} is declared in {k['at']['path']}, not a recorded file")
            files.append(paths.index(k["at"]["path"]))
            value = {"default": k["default"], "type": k["type"], "choices": k["choices"]}
            text = js_json(value) + json.dumps(value, ensure_ascii=False)  # 1 and 1.0 stay apart
            runs = table[ki]["runs"]
            if last[ki] is not None and last[ki] == (ri - 1, text):
                runs[-1]["to"] = r["label"]
            else:
                runs.append({"from": r["label"], "to": r["label"], **value})
            last[ki] = (ri, text)
        ranges = []
        for ki in seq:
            if ranges and ranges[-1][0] + ranges[-1][1] == ki:
                ranges[-1][1] += 1
            else:
                ranges.append([ki, 1])
        out_releases.append(
            {
                "label": r["label"],
                "tag": r["tag"],
                "commit": r["commit"],
                "date": r["date"],
                "files": [{"path": f["path"], "sha256": f["sha256"]} for f in r["files"]],
                "keyFile": files[0] if files and all(f == files[0] for f in files) else (0 if not files else files),
                "keyRanges": ranges,
                "keyLines": [k["at"]["line"] for k in r["keys"]],
                **canonical_configs(r),
            }
        )
    return {
        "format": FORMAT,
        "notice": f"GENERATED by {obj['recordedBy']['tool']} from {obj['repo']}; facts only (key names, literal defaults, hashes). Do not edit.",
        "framework": obj["framework"],
        "repo": obj["repo"],
        "recordedBy": obj["recordedBy"],
        "expanded": expanded_provenance(releases),
        "releases": out_releases,
        "keys": table,
    }


def dumps(c):
    """The compact form as text: one line per release and per key, for readable diffs."""
    one = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)  # noqa: E731
    head = ",\n".join(f" {one(k)}: {one(c[k])}" for k in ("format", "notice", "framework", "repo", "recordedBy", "expanded"))
    rel = ",\n".join(f"  {one(r)}" for r in c["releases"])
    keys = ",\n".join(f"  {one(k)}" for k in c["keys"])
    return f'{{\n{head},\n "releases": [\n{rel}\n ],\n "keys": [\n{keys}\n ]\n}}\n'


def expand(c):
    """The per-release view of a compact object (the inverse of `compact`)."""
    if c.get("format") != FORMAT:
        raise ValueError(f"format must be {FORMAT}; got {c.get('format')!r}")
    order = {r["label"]: i for i, r in enumerate(c["releases"])}
    values = []
    for k in c["keys"]:
        at = {}
        for run in k["runs"]:
            for i in range(order[run["from"]], order[run["to"]] + 1):
                at[i] = {"default": run["default"], "type": run["type"], "choices": run["choices"]}
        values.append(at)
    releases = []
    for ri, r in enumerate(c["releases"]):
        seq = [ki for first, count in r["keyRanges"] for ki in range(first, first + count)]
        if len(seq) != len(r["keyLines"]):
            raise ValueError(f"{r['label']}: {len(seq)} keys but {len(r['keyLines'])} lines")
        kf = r["keyFile"]
        keys = []
        for j, ki in enumerate(seq):
            fi = kf if isinstance(kf, int) else kf[j]
            keys.append({"key": c["keys"][ki]["key"], **values[ki][ri],
                         "at": {"path": r["files"][fi]["path"], "line": r["keyLines"][j]}})
        releases.append({"label": r["label"], "tag": r["tag"], "commit": r["commit"], "date": r["date"],
                         "files": r["files"], "keys": keys, **canonical_configs(r)})
    return {"framework": c["framework"], "repo": c["repo"], "recordedBy": c["recordedBy"], "releases": releases}


def write_facts(obj, out):
    """Write `obj` (RecordedReleaseFacts-shaped) compactly to `out`, after checking that it expands back."""
    c = compact(obj)
    if canonical_releases(expand(c)["releases"]) != canonical_releases(obj["releases"]):
        raise AssertionError("compact form does not expand to the recorded facts")
    text = dumps(c)
    if json.loads(text) != c:
        raise AssertionError("compact text does not parse back")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return c


def load_expanded(path):
    """Read a compact facts file and return its per-release view (for the fixture recorders)."""
    with open(path, encoding="utf-8") as f:
        return expand(json.load(f))
