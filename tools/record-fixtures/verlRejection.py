#!/usr/bin/env python3
"""Record numeric fixtures of verl's rollout rejection-sampling mask (``rollout_rs``).

This recorder runs the real ``compute_rollout_rejection_mask`` of verl
(``verl/trainer/ppo/rollout_corr_helper.py``) at the verl pins of ``frameworks.py`` that have it,
on seeded float64 batches, and writes only numbers plus provenance to
``test/fixtures/frameworks/verl-rejection.json``. The output recorded is the returned
``modified_response_mask`` (as 0/1 ints), not the metrics.

No framework code is copied into this repository. Everything upstream is loaded the way
``frameworks.py`` loads it, with its helpers (imported as a module): each pinned file is read with
``git --git-dir=<dir> show <commit>:<path>`` in memory, its SHA-256 is checked (the
``torch_functional.py`` hash is ``frameworks.TARGETS``' own; the ``rollout_corr_helper.py`` hashes
are pinned below), it is parsed with ``ast``, and only the needed top-level definitions are
compiled (with the upstream file name and line numbers) and executed with real torch. ``verl_F``
is bound to a module object holding only ``masked_sum`` and ``masked_mean`` picked from the pinned
``torch_functional.py``. Before ``exec`` the recorder checks that the free names of the picked
definitions are exactly the names it binds, and that every ``verl_F.<attr>`` they read is picked.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/verlRejection.py \\
        --verl-git /path/to/verl.git

Output (JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs):

    test/fixtures/frameworks/verl-rejection.json
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import math
import os
import platform
import shlex
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Optional

sys.dont_write_bytecode = True  # importing frameworks.py must not leave a __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import frameworks as fw  # noqa: E402  (the sibling recorder, guarded by `if __name__ == "__main__"`)

TOOL_PATH = "tools/record-fixtures/verlRejection.py"
DEFAULT_OUT = fw.REPO_ROOT / "test" / "fixtures" / "frameworks" / "verl-rejection.json"

VERL_RCH = "verl/trainer/ppo/rollout_corr_helper.py"
# SHA-256 of the whole rollout_corr_helper.py at each verl pin of frameworks.TARGETS that has it.
RCH_SHA256 = {
    "74a718a492092312f1004fe25369975137388849": "cc7cd16dde46e122fa267a2b7319910d2b1558fdd9724d3cc9eae248a2822f86",
    "1dda039b9c6311889a9c9a26040677e1254814f9": "763158342551bc4077805a8a009d959a7a2043c4d43b772fe6045f4a40932f3e",
}
RCH_PICKED = [
    "SAFETY_BOUND", "SUPPORTED_ROLLOUT_RS_OPTIONS", "TOKEN_LEVEL_ROLLOUT_RS_OPTIONS",
    "_parse_rollout_rs_thresholds", "compute_rollout_rejection_mask", "compute_rs_metrics",
]
TF_PICKED = ["masked_sum", "masked_mean"]
RCH_BOUND = ["Optional", "math", "torch", "verl_F"]  # exactly the free names of RCH_PICKED
STUBS = (
    "verl.utils.torch_functional (verl_F) is a plain module object holding only masked_sum and "
    "masked_mean, picked from the pinned verl/utils/torch_functional.py (its other imports are never "
    "executed). The picked rollout_corr_helper.py definitions run in a namespace holding real torch, "
    "math, typing.Optional and verl_F; the file's other imports (DataProto, RolloutCorrectionConfig, "
    "PolicyLossConfig) are not read by them and are not bound. Nothing else of verl is imported."
)

# (rollout_rs, rollout_rs_threshold, g): rollout_logprobs = old_logprobs + U[-g, g].
VARIANTS = (
    ("token_k1", "0.5_2.0", 1.5),
    ("token_k2", "0.5", 1.5),
    ("token_k3", "0.4", 1.5),
    ("seq_sum_k1", "0.5_2.0", 0.5),
    ("seq_mean_k1", "0.9_1.1", 0.3),
    ("seq_mean_k3", "0.05", 0.6),
    ("seq_max_k2", "1.0", 1.6),
    ("seq_sum_k3", "2.0", 1.2),
    ("token_k1,seq_max_k3", "0.3_3.0,1.0", 1.5),
    ("token_k1", "2.0", 1.5),
    # Asymmetric k1 bounds, wide enough that reading k1 as +lr instead of -lr flips many tokens
    # and rows (the direction of verl's k1 = -log_ratio is otherwise barely exercised).
    ("token_k1", "0.5_1.2", 1.5),
    ("seq_mean_k1", "0.6_1.05", 0.6),
)
MAX_REDRAWS = 1000

SEED_RULE = (
    "seed = zlib.crc32(f'verl@{label}:rejection:{variant}:{i}'.encode()) & 0x7FFFFFFF "
    "(frameworks.case_seed with variant 'rejection:<variant>', variant = '<rollout_rs>@<rollout_rs_"
    "threshold>') for case i = 0..3; every draw comes from torch.Generator().manual_seed(seed) on CPU "
    "in float64. The TS side cannot replay torch's RNG: seeds are provenance only, every input is "
    "embedded in the file."
)
INPUT_RULE = (
    "Case i has shape [B, T] = [(4, 8), (3, 5), (2, 12), (5, 7)][i % 4]. The generator first draws "
    "exactly what frameworks.py's draw_batch draws for verl, in its order (row lengths, right-padded "
    "ragged mask with at least one row shorter than T and no empty row, logprobs ~ U[-8, -0.05], "
    "old_logprobs = logprobs + U[-2, 2], ref_logprobs and [B, T] advantages (drawn, not used, not "
    "recorded)); the recorder asserts the result is bitwise frameworks.draw_batch's. Then, from the "
    "same generator, rollout_logprobs = old_logprobs + U[-g, g], [B, T], with the variant's g. "
    "Padding holds in-range values. The rollout stream alone is redrawn from the same generator "
    "(rollout_redraws counts the redraws, absent when 0) until (a) the returned mask differs from "
    "the given one at >= 1 response position and keeps >= 1 response position, and (b) every "
    "statistic of every option (token statistics at response positions; row statistics of every "
    "row) is more than 1e-9 from each of its bounds (k1: ln(lower), ln(upper); k2/k3: upper). "
    "seq_mean statistics are checked both as verl computes them (masked_sum / (L + 1e-8)) and as "
    "the exact mean (sum / L). verl is called as compute_rollout_rejection_mask(log_ratio = "
    "old_logprobs - rollout_logprobs, response_mask (float64 0/1), rollout_rs, rollout_rs_threshold)."
)
JSON_RULE = (
    "JSON indent=1 with sorted keys; floats are Python repr (shortest round-trip float64); "
    "inputs.response_mask is booleans (passed to verl as float64 0/1); "
    "outputs.modified_response_mask is 0/1 ints (verl returns it in the mask's dtype, float64, "
    "asserted to hold only 0.0 and 1.0)."
)

torch: Any = None  # populated in main()


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------


def has_rejection(git_dir: Path, commit: str) -> Optional[str]:
    """None if the pin has compute_rollout_rejection_mask in rollout_corr_helper.py, else why not."""
    proc = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{VERL_RCH}"], capture_output=True)
    if proc.returncode != 0:
        return f"no {VERL_RCH} at this pin"
    tree = ast.parse(proc.stdout.decode("utf-8"))
    if not any(isinstance(n, ast.FunctionDef) and n.name == "compute_rollout_rejection_mask" for n in tree.body):
        return f"no compute_rollout_rejection_mask in {VERL_RCH} at this pin"
    if commit not in RCH_SHA256:
        raise SystemExit(f"verl@{commit}: has {VERL_RCH} but no pinned SHA-256 in {TOOL_PATH}; review and pin it")
    return None


def rch_target(target: fw.Target) -> fw.Target:
    """The verl pin of frameworks.TARGETS, reading only torch_functional.py (its hash) and the helper."""
    return dataclasses.replace(target, files={fw.VERL_TF: target.files[fw.VERL_TF],
                                              VERL_RCH: RCH_SHA256[target.commit]})


def verl_f_attrs(nodes: list[ast.stmt]) -> set[str]:
    return {n.attr for top in nodes for n in ast.walk(top)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "verl_F"}


def load(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    tf_tree, tf_name = fw.parse(sources, target, fw.VERL_TF)
    tf_nodes = fw.pick_top_level(tf_tree, TF_PICKED, tf_name)
    if sorted(fw.free_globals(tf_nodes) - set(TF_PICKED)) != ["torch"]:
        raise SystemExit(f"{tf_name}: picked definitions read {sorted(fw.free_globals(tf_nodes))}")
    verl_f = types.ModuleType("verl.utils.torch_functional")
    tf_ns: dict[str, Any] = {"__name__": verl_f.__name__, "torch": torch}
    fw.exec_nodes(tf_nodes, tf_ns, tf_name)
    for name in TF_PICKED:
        setattr(verl_f, name, tf_ns[name])

    tree, filename = fw.parse(sources, target, VERL_RCH)
    nodes = fw.pick_top_level(tree, RCH_PICKED, filename)
    free = sorted(fw.free_globals(nodes) - set(RCH_PICKED))
    if free != RCH_BOUND:
        raise SystemExit(f"{filename}: picked definitions read {free}, the namespace binds {RCH_BOUND}")
    attrs = sorted(verl_f_attrs(nodes))
    if attrs != sorted(TF_PICKED):
        raise SystemExit(f"{filename}: picked definitions read verl_F.{attrs}, picked {TF_PICKED}")
    ns: dict[str, Any] = {"__name__": "verl.trainer.ppo.rollout_corr_helper", "torch": torch, "math": math,
                          "Optional": Optional, "verl_F": verl_f}
    fw.exec_nodes(nodes, ns, filename)
    lines = {fw.node_name(n): [n.lineno, n.end_lineno] for n in nodes}
    tf_lines = {fw.node_name(n): [n.lineno, n.end_lineno] for n in tf_nodes}
    return types.SimpleNamespace(ns=ns, lines=lines, tf_lines=tf_lines, free=free, verl_f_attrs=attrs)


# --------------------------------------------------------------------------------------
# Our side: the rules of each variant, and the statistics the recorder keeps off the bounds
# --------------------------------------------------------------------------------------


def option_rule(option: str, spec: str, log_clamp: float) -> dict[str, Any]:
    """Our wire-form RejectionRule for one verl option and its threshold entry."""
    stat, est = option.rsplit("_", 1)
    if est == "k1":
        if "_" in spec:
            lo, hi = (float(x) for x in spec.split("_", 1))
        else:
            hi = float(spec)
            lo = 1.0 / hi
    else:
        lo, hi = None, float(spec)
    return {"statistic": stat, "estimator": est, "lower": lo, "upper": hi, "log_clamp": log_clamp}


def variant_rules(rs: str, threshold: str, log_clamp: float) -> list[dict[str, Any]]:
    options = [o.strip() for o in rs.split(",") if o.strip()]
    specs = [s.strip() for s in threshold.split(",") if s.strip()]
    if len(specs) == 1:
        specs = specs * len(options)
    if len(options) != len(set(options)) or len(specs) != len(options):
        raise SystemExit(f"{rs}@{threshold}: not one distinct option per threshold")
    return [option_rule(o, s, log_clamp) for o, s in zip(options, specs)]


def rule_stats(rule: dict[str, Any], lr: Any, mask: Any) -> list[Any]:
    """The statistic(s) of ``rule`` that are compared against its bounds (float64, 1-D)."""
    x = torch.clamp(lr, min=-rule["log_clamp"], max=rule["log_clamp"])
    tok = {"k1": -x, "k2": 0.5 * x ** 2, "k3": torch.exp(x) - 1.0 - x}[rule["estimator"]]
    zero = torch.zeros((), dtype=torch.float64)
    length = mask.sum(dim=1).to(torch.float64)
    row_sum = torch.where(mask, tok, zero).sum(dim=1)
    if rule["statistic"] == "token":
        return [tok[mask]]
    if rule["statistic"] == "seq_sum":
        return [row_sum]
    if rule["statistic"] == "seq_mean":
        return [row_sum / length, row_sum / (length + 1e-8)]
    return [torch.where(mask, tok, torch.tensor(-math.inf, dtype=torch.float64)).max(dim=1).values]


def rule_bounds(rule: dict[str, Any]) -> list[float]:
    if rule["estimator"] == "k1":
        return [math.log(rule["lower"]), math.log(rule["upper"])]
    return [rule["upper"]]


def rule_keep(rule: dict[str, Any], lr: Any, mask: Any) -> Any:
    """[B, T] bool: the response positions ``rule`` keeps (exact means), for the cross-check."""
    s = rule_stats(rule, lr, mask)[0]
    b = rule_bounds(rule)
    ok = (s >= b[0]) & (s <= b[1]) if rule["estimator"] == "k1" else s <= b[0]
    if rule["statistic"] == "token":
        out = torch.zeros_like(mask)
        out[mask] = ok
        return out
    return ok.unsqueeze(1) & mask


def near_bound(rules: list[dict[str, Any]], lr: Any, mask: Any) -> bool:
    return any(bool(((s - edge).abs() <= fw.KINK_MARGIN).any())
               for r in rules for s in rule_stats(r, lr, mask) for edge in rule_bounds(r))


# --------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------


def call_verl(api: types.SimpleNamespace, rs: str, threshold: str, old: Any, rollout: Any, mask: Any) -> Any:
    m = mask.to(torch.float64)
    with torch.no_grad():
        out, _metrics = api.ns["compute_rollout_rejection_mask"](
            log_ratio=old - rollout, response_mask=m, rollout_rs=rs, rollout_rs_threshold=threshold)
    if out.dtype != torch.float64 or out.shape != m.shape:
        raise AssertionError(f"{rs}@{threshold}: modified_response_mask is {out.dtype} {tuple(out.shape)}")
    if not bool(((out == 0.0) | (out == 1.0)).all()) or bool((out > m).any()):
        raise AssertionError(f"{rs}@{threshold}: modified_response_mask is not a 0/1 sub-mask")
    return out == 1.0


def draw_case(api: types.SimpleNamespace, seed: int, shape: tuple[int, int], rs: str, threshold: str,
              gap: float, rules: list[dict[str, Any]]) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(seed)
    batch_size, width = shape
    lengths = [fw.randint(gen, 1, width) for _ in range(batch_size)]
    if all(length == width for length in lengths):
        row = fw.randint(gen, 0, batch_size - 1)
        lengths[row] = fw.randint(gen, 1, width - 1)
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    lp = fw.uniform(gen, (batch_size, width), *fw.LP_RANGE)
    old = lp + fw.uniform(gen, (batch_size, width), *fw.OLD_GAP)
    ref = lp + fw.uniform(gen, (batch_size, width), *fw.REF_GAP)
    adv = fw.uniform(gen, (batch_size, width), *fw.ADV_RANGE)
    reference = fw.draw_batch(seed, shape, False, False)
    for key, mine in (("mask", mask), ("lp", lp), ("old", old), ("ref", ref), ("adv", adv)):
        if not fw.bitwise_equal(mine, reference[key]):
            raise AssertionError(f"seed {seed}: {key} differs from frameworks.draw_batch")
    redraws = 0
    while True:
        rollout = old + fw.uniform(gen, (batch_size, width), -gap, gap)
        kept = call_verl(api, rs, threshold, old, rollout, mask)
        n_rejected = int((mask & ~kept).sum())
        if n_rejected > 0 and bool(kept.any()) and not near_bound(rules, old - rollout, mask):
            break
        redraws += 1
        if redraws > MAX_REDRAWS:
            raise SystemExit(f"seed {seed}: {rs}@{threshold} never rejects and keeps away from its bounds")
    lr = old - rollout
    mine = mask.clone()
    per_rule = []
    for r in rules:
        k = rule_keep(r, lr, mask)
        per_rule.append(int((mask & ~k).sum()))
        mine &= k
    if not torch.equal(mine, kept):
        raise AssertionError(f"seed {seed}: {rs}@{threshold}: the recorder's reading of the rules differs from verl")
    case: dict[str, Any] = {
        "seed": seed,
        "shape": list(shape),
        "inputs": {
            "logprobs": lp.tolist(),
            "old_logprobs": old.tolist(),
            "rollout_logprobs": rollout.tolist(),
            "response_mask": mask.tolist(),
        },
        "outputs": {"modified_response_mask": kept.to(torch.int64).tolist()},
        "tokens_rejected": n_rejected,
        "rows_touched": int((mask & ~kept).any(dim=1).sum()),
        "tokens_rejected_per_rule": per_rule,
    }
    if redraws:
        case["rollout_redraws"] = redraws
    return case


def record_variant(target: fw.Target, api: types.SimpleNamespace, rs: str, threshold: str,
                   gap: float) -> dict[str, Any]:
    log_clamp = float(api.ns["SAFETY_BOUND"])
    rules = variant_rules(rs, threshold, log_clamp)
    options = [o.strip() for o in rs.split(",") if o.strip()]
    parsed = api.ns["_parse_rollout_rs_thresholds"](options, threshold)
    for o, r in zip(options, rules):
        if parsed[o] != {"lower": r["lower"], "upper": r["upper"]}:
            raise AssertionError(f"{rs}@{threshold}: verl parses {o} as {parsed[o]}, our rule says {r}")
    name = f"{rs}@{threshold}"
    cases = []
    for i in range(fw.CASES_PER_VARIANT):
        shape = fw.SHAPES[i % len(fw.SHAPES)]
        seed = fw.case_seed("verl", target.label, f"rejection:{name}", i)
        cases.append(draw_case(api, seed, shape, rs, threshold, gap, rules))
    return {
        "framework": "verl",
        "pin": target.label,
        "commit": target.commit,
        "name": name,
        "rollout_rs": rs,
        "rollout_rs_threshold": threshold,
        "verl_thresholds": {o: parsed[o] for o in options},
        "rollout_gap": [-gap, gap],
        "config_rejection": rules,
        "description": (
            f"verl compute_rollout_rejection_mask(log_ratio = old - rollout, response_mask (float64), "
            f"rollout_rs='{rs}', rollout_rs_threshold='{threshold}'); outputs the returned "
            f"modified_response_mask. lr = clamp(log_ratio, +-SAFETY_BOUND {log_clamp!r}); k1 = -lr, k2 = "
            f"0.5 * lr**2, k3 = exp(lr) - 1 - lr; token_* compares per token, seq_sum_* / seq_mean_* the "
            f"masked row sum / masked_mean (sum / (L + 1e-8)), seq_max_* the row max over response tokens; "
            f"k1 keeps ln(lower) <= s <= ln(upper), k2/k3 keep s <= upper (inclusive); every option must "
            f"pass; the mask is response_mask * AND of the options."
        ),
        "cases": cases,
    }


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verl-git", default=os.environ.get("VERL_GIT"),
                        help="git directory (bare or work tree) of verl-project/verl (default: $VERL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    if not args.verl_git:
        parser.error("--verl-git (or $VERL_GIT) is required")

    sys.dont_write_bytecode = True
    import torch as _torch  # noqa: PLC0415
    torch = _torch
    fw.torch = _torch  # frameworks.py's helpers read its module global
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    if "--verl-git" not in " ".join(sys.argv[1:]):
        command = f"VERL_GIT={shlex.quote(args.verl_git)} {command}"

    git_dir = fw.git_dir_of(Path(args.verl_git).resolve())
    pins: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    variants: list[dict[str, Any]] = []
    for base in fw.TARGETS:
        if base.framework != "verl":
            continue
        identity = {"framework": "verl", "repo": f"https://github.com/{base.repo}", "commit": base.commit,
                    "label": base.label, "tag": base.tag, "role": base.role}
        fw.read_pinned_sources(git_dir, dataclasses.replace(base, files={}))  # the commit exists
        reason = has_rejection(git_dir, base.commit)
        if reason is not None:
            skipped.append({**identity, "reason": reason})
            continue
        target = rch_target(base)
        sources = fw.read_pinned_sources(git_dir, target)
        api = load(target, sources)
        names = []
        for rs, threshold, gap in VARIANTS:
            v = record_variant(target, api, rs, threshold, gap)
            variants.append(v)
            names.append(v["name"])
        pins.append({
            **identity,
            "files": [{"path": p, "sha256": s} for p, s in sorted(target.files.items())],
            "picked_definitions": {
                fw.VERL_TF: [f"{n} (lines {a}-{b})" for n, (a, b) in api.tf_lines.items()],
                VERL_RCH: [f"{n} (lines {a}-{b})" for n, (a, b) in api.lines.items()],
            },
            "free_names": api.free,
            "verl_F_attributes": api.verl_f_attrs,
            "functions": ["verl.trainer.ppo.rollout_corr_helper.compute_rollout_rejection_mask"],
            "safety_bound": float(api.ns["SAFETY_BOUND"]),
            "stubs": STUBS,
            "variants": names,
        })

    provenance = {
        "tool": TOOL_PATH,
        "command": command,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "dtype": "float64",
        "pins": pins,
        "skipped_pins": skipped,
        "loading": fw.LOADING_RULE + (
            " Here only verl/utils/torch_functional.py (masked_sum, masked_mean) and "
            "verl/trainer/ppo/rollout_corr_helper.py are read; the helper's SHA-256 values are pinned in "
            "verlRejection.py, torch_functional.py's are frameworks.TARGETS' own."
        ),
        "seed_rule": SEED_RULE,
        "input_rule": INPUT_RULE,
        "json_rule": JSON_RULE,
        "shapes": [list(s) for s in fw.SHAPES],
        "cases_per_variant": fw.CASES_PER_VARIANT,
        "kink_margin": fw.KINK_MARGIN,
        "config_rule": (
            "variants[].config_rejection is OUR policy-loss config field `rejection` in the snake_case wire "
            "form of src/io/configJson.ts, written from the upstream semantics: one rule per rollout_rs "
            "option, statistic token|seq_sum|seq_mean|seq_max and estimator k1|k2|k3 from the option name; "
            "k1 'lo_hi' is lower lo, upper hi; a single k1 value u is lower 1/u, upper u; a k2/k3 value u is "
            "upper u, lower null; log_clamp is verl's SAFETY_BOUND. The recorder asserts that verl's own "
            "_parse_rollout_rs_thresholds gives the same lower/upper. It is what the replay test "
            "(test/conformance/frameworks/verlRejection.fixtures.test.ts) runs, not an upstream value."
        ),
        "cross_check": (
            "For every case the recorder recomputes the kept mask from its rules (exact row means) and "
            "asserts it equals verl's modified_response_mask."
        ),
    }
    out = Path(args.out)
    fw.write_json(out, {"provenance": provenance, "variants": variants})
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(variants)} variants, "
          f"{sum(len(v['cases']) for v in variants)} cases)")
    for p in pins:
        print(f"pin verl@{p['label']}: {len(p['variants'])} variants")
    for s in skipped:
        print(f"skipped verl@{s['label']}: {s['reason']}")
    for v in variants:
        print(f"  {v['pin']} {v['name']}: rejected {[c['tokens_rejected'] for c in v['cases']]}, redraws "
              f"{[c.get('rollout_redraws', 0) for c in v['cases']]}, per rule "
              f"{[c['tokens_rejected_per_rule'] for c in v['cases']]}")


if __name__ == "__main__":
    main()
