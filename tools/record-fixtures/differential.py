#!/usr/bin/env python3
"""Record a randomized differential fixture of polgrad 0.2.0's ``policy_loss``.

This recorder runs the *real* Python polgrad 0.2.0 (PyTorch autograd, float64) on several
hundred seeded random cases. Each case has a random valid ``PolicyLossConfig`` (every option
polgrad 0.2.0 has) and a random ragged "polgrad-style" batch (about as in polgrad's README:
logprobs <= 0, old_logprobs = logprobs + sigma * randn, so some old/ref log-probs are
positive). It writes only numbers plus provenance to
``test/fixtures/polgrad/differential.json``. The TypeScript port replays the cases.

No polgrad code is copied into this repository. Loading, the pinned SHA-256 check, the seed,
junk and JSON rules, the kink-margin check and the provenance block all come from the
sibling recorder ``polgrad_core.py``, imported as a module.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/differential.py \\
        --polgrad-src /tmp/polgrad/src

Output: one JSON file, byte-stable across re-runs. The provenance block is written with
indent=1, then one case per line (compact separators) to keep the file small and diff-friendly.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import math
import os
import shlex
import sys
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True  # importing polgrad_core.py must not leave a __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
import polgrad_core as core  # noqa: E402  (the sibling recorder; its main() is guarded)

TOOL_PATH = "tools/record-fixtures/differential.py"
DEFAULT_OUT = core.REPO_ROOT / "test" / "fixtures" / "polgrad" / "differential.json"
N_CASES = 400
PLAN_NAME = "differential:plan"

# Fixed corner shapes (B, T) with their counts; the rest of the plan is drawn (see PLAN_RULE).
CORNER_SHAPES = (
    ((32, 128), 2), ((1, 128), 4), ((32, 1), 3), ((1, 1), 6), ((16, 64), 2), ((32, 16), 2),
    ((4, 128), 2), ((32, 4), 2), ((1, 32), 3), ((2, 1), 2),
)
N_MEDIUM = 20  # B in 6..16, T in 16..48
SMALL_B, SMALL_T = (1, 8), (1, 12)
PLAN_RULE = (
    f"Shapes are planned up front from torch.Generator().manual_seed(crc32({PLAN_NAME!r}) & "
    f"0x7FFFFFFF): the fixed corners {[[list(s), n] for s, n in CORNER_SHAPES]} ([B, T], count), "
    f"{N_MEDIUM} medium shapes with B in 6..16 and T in 16..48, and the rest small shapes with B "
    f"in {SMALL_B[0]}..{SMALL_B[1]} and T in {SMALL_T[0]}..{SMALL_T[1]}; the list is then "
    f"shuffled (torch.randperm, same generator) and case i gets shape i. Case names are "
    f"'diff-000' .. 'diff-{N_CASES - 1:03d}'."
)

EPS_PRESETS = (0.2, 0.28, 0.1, 0.3, 0.05, 0.02, 0.4, 3e-4, 4e-4, 1e-3, 1e-4)
EPS_RANGE = (1e-4, 0.4)
RATIO_CAP_PRESETS = (1.5, 2.0, 3.0)
IS_CAP_PRESETS = (1.2, 1.5, 2.0, 3.0, 5.0, 10.0)
KL_COEF_PRESETS = (0.001, 0.01, 0.04, 0.05, 0.1, 0.3)
SIGMA_DEFAULT = (0.1, 0.1, 0.1, 0.02, 0.05, 0.3, 0.6)
SIGMA_DUAL = (0.1, 0.3, 0.6)
ROW_SHIFT_DUAL = (0.3, 0.6)  # dual-clip only: per-row offset scale, so the cap can bind
SIGMA_SMALL_EPS = (1e-3, 2e-3, 5e-3, 0.01, 0.1)
SIGMA_REF = (0.05, 0.1, 0.3)
SIGMA_ROLLOUT = (0.01, 0.05, 0.1, 0.3)
README_SCALES = (0.1, 0.25, 0.5, 1.0, 1.0, 1.0, 2.0, 4.0)
LOGIT_SCALES = (1.0, 3.0, 6.0)
VOCAB = 16

INPUT_RULE = (
    "The config is drawn first, once, from torch.Generator().manual_seed(config_seed) with "
    "config_seed = crc32(case_name + ':config') & 0x7FFFFFFF (see config_rule; recorded as "
    "'config_seed'). The batch then comes from the case generator of seed_rule, in this order. "
    "Mask: polgrad_core.ragged_mask with B and T fixed to the planned shape (lengths 1..T, one "
    "row forced shorter than T when T > 1), except that with p 0.08 (T > 1) all rows are full. "
    "Logprobs: 'readme' style (p 0.6) -k*U[0,1) with k from "
    f"{list(README_SCALES)}, or 'log_softmax' style: logits = s*randn(B,T,{VOCAB}) with s from "
    f"{list(LOGIT_SCALES)}, one token per position sampled by torch.multinomial from "
    "softmax(logits), logprob = log_softmax(logits) at that token (all <= 0). old_logprobs = "
    f"logprobs + sigma*randn, sigma from {list(SIGMA_DEFAULT)} (dual-clip cases: "
    f"{list(SIGMA_DUAL)}, plus a per-row offset rho*randn(B,1) with rho from "
    f"{list(ROW_SHIFT_DUAL)}; ratio sequence/sequence_token with min eps < 0.01: "
    f"{list(SIGMA_SMALL_EPS)}), so old_logprobs are positive wherever logprobs are near 0. "
    "advantages: randn [B] (p 0.75) or randn [B, T]; with p 0.1 one "
    "random row's advantages are set to exactly 0. ref_logprobs (only when kl is set) = "
    f"logprobs + sigma_ref*randn, sigma_ref from {list(SIGMA_REF)}. rollout_logprobs (only when "
    f"is_correction is set) = old_logprobs + tau*randn, tau from {list(SIGMA_ROLLOUT)}. "
    "Rejection (polgrad_core.policy_draw_ok): for pg_clip/cispo every response-position token "
    "ratio and row sequence ratio is > 1e-6 from each clip edge (1-eps_low, 1+eps_high, "
    "ratio_cap); dual-clip batches are redrawn until some A<0 response token has its used ratio "
    "> ratio_cap; abs KL keeps |ref - logprobs| > 1e-6. A rejected attempt redraws the whole "
    "batch (not the config) from the next seed of seed_rule; 'seed' is the one used."
)
CONFIG_RULE = (
    "ratio/surrogate: surrogate uniform over pg_clip, pg, reinforce, cispo; ratio uniform over "
    "token, sequence, sequence_token (reinforce: token only); pg/reinforce have clip null. "
    "eps draw: p 0.5 a preset from "
    f"{list(EPS_PRESETS)}, else log-uniform on [{EPS_RANGE[0]}, {EPS_RANGE[1]}]. pg_clip eps "
    "pattern uniform over symmetric (eps_low = eps_high = eps), clip_higher (eps_high = "
    "min(0.4, eps_low*U[1, 1.6))), gspo (3e-4/4e-4), independent (two eps draws); ratio_cap "
    f"with p 0.3: a preset from {list(RATIO_CAP_PRESETS)} or (p 0.4) U[1.2, 3.5). cispo: eps_high "
    "an eps draw, eps_low null (one-sided) with p 0.5 else an eps draw, ratio_cap null. "
    "aggregation uniform over the four modes. A drawn norm_len is, uniformly, < T "
    "(randint 1..T-1; only when T > 1), = T, or > T (T + randint 1..T+8). Policy norm_len: a "
    "drawn value under token_sum_norm; otherwise null, or (p 0.1, or when a token_sum_norm KL "
    "inherits it) a drawn value the policy's own mode ignores. is_correction: null (p 0.5) or "
    "{level token|sequence (fair coin), cap a preset from "
    f"{list(IS_CAP_PRESETS)} or (p 0.3) U[1.05, 4)}}. kl: null (p 0.4) or {{kind uniform over "
    f"k1, k2, k3, abs; coef a preset from {list(KL_COEF_PRESETS)} or (p 0.3) log-uniform on "
    "[1e-3, 0.5]; aggregation null (inherit, p 0.55) or one of the four modes (token_sum_norm with weight 2/5, the others 1/5 each); norm_len: when the "
    "KL's effective mode is token_sum_norm, its own drawn value (p 0.5) or null (inherit the "
    "policy's); otherwise null, or (p 0.1) a drawn value that is ignored}."
)


# --------------------------------------------------------------------------------------
# Small draw helpers on top of polgrad_core's uniform/randint
# --------------------------------------------------------------------------------------


def coin(gen: Any, p: float) -> bool:
    return bool(core.uniform(gen, (1,), 0.0, 1.0).item() < p)


def choice(gen: Any, options: Any) -> Any:
    return options[core.randint(gen, 0, len(options) - 1)]


def log_uniform(gen: Any, low: float, high: float) -> float:
    return math.exp(core.uniform(gen, (1,), math.log(low), math.log(high)).item())


def randn(gen: Any, shape: tuple[int, ...]) -> Any:
    return core.torch.randn(shape, generator=gen, dtype=core.torch.float64)


def draw_eps(gen: Any) -> float:
    return choice(gen, EPS_PRESETS) if coin(gen, 0.5) else log_uniform(gen, *EPS_RANGE)


def draw_norm_len(gen: Any, width: int) -> tuple[int, str]:
    relation = choice(gen, ("lt", "eq", "gt") if width > 1 else ("eq", "gt"))
    if relation == "lt":
        return core.randint(gen, 1, width - 1), "lt_T"
    if relation == "eq":
        return width, "eq_T"
    return width + core.randint(gen, 1, width + 8), "gt_T"


# --------------------------------------------------------------------------------------
# Config and batch
# --------------------------------------------------------------------------------------


def draw_config(gen: Any, width: int) -> tuple[Any, dict[str, str]]:
    """A random valid PolicyLossConfig and its coverage labels."""
    pg = core.pg
    A = pg.Aggregation
    labels: dict[str, str] = {}
    surrogate = choice(gen, tuple(pg.SurrogateKind))
    ratio = pg.RatioKind.TOKEN
    if surrogate is not pg.SurrogateKind.REINFORCE:
        ratio = choice(gen, tuple(pg.RatioKind))
    clip = None
    variant = surrogate.value
    if surrogate is pg.SurrogateKind.PG_CLIP:
        pattern = choice(gen, ("symmetric", "clip_higher", "gspo", "independent"))
        if pattern == "gspo":
            low, high = 3e-4, 4e-4
        elif pattern == "symmetric":
            low = high = draw_eps(gen)
        elif pattern == "clip_higher":
            low = draw_eps(gen)
            high = min(EPS_RANGE[1], low * core.uniform(gen, (1,), 1.0, 1.6).item())
        else:
            low, high = draw_eps(gen), draw_eps(gen)
        cap = None
        if coin(gen, 0.3):
            cap = core.uniform(gen, (1,), 1.2, 3.5).item() if coin(gen, 0.4) else choice(
                gen, RATIO_CAP_PRESETS)
        clip = pg.ClipConfig(eps_low=low, eps_high=high, ratio_cap=cap)
        labels["pg_clip_eps_pattern"] = pattern
        variant = "pg_clip_dual" if cap is not None else "pg_clip"
    elif surrogate is pg.SurrogateKind.CISPO:
        high = draw_eps(gen)
        low = None if coin(gen, 0.5) else draw_eps(gen)
        clip = pg.ClipConfig(eps_low=low, eps_high=high, ratio_cap=None)
        variant = "cispo_one_sided" if low is None else "cispo_two_sided"
    labels["surrogate_variant"] = variant

    aggregation = choice(gen, tuple(A))
    norm_len = None
    labels["norm_len"] = "null"
    if aggregation is A.TOKEN_SUM_NORM:
        norm_len, labels["norm_len"] = draw_norm_len(gen, width)
    elif coin(gen, 0.1):
        norm_len, _ = draw_norm_len(gen, width)
        labels["norm_len"] = "set_ignored"

    is_correction = None
    if coin(gen, 0.5):
        level = "token" if coin(gen, 0.5) else "sequence"
        cap = core.uniform(gen, (1,), 1.05, 4.0).item() if coin(gen, 0.3) else choice(
            gen, IS_CAP_PRESETS)
        is_correction = pg.ISCorrectionConfig(cap=cap, level=level)

    kl = None
    labels["kl_aggregation"] = labels["kl_norm_len"] = "no_kl"
    if coin(gen, 0.6):
        kind = choice(gen, tuple(pg.KLEstimator))
        coef = log_uniform(gen, 1e-3, 0.5) if coin(gen, 0.3) else choice(gen, KL_COEF_PRESETS)
        kl_agg = None if coin(gen, 0.55) else choice(gen, (*A, A.TOKEN_SUM_NORM))
        labels["kl_aggregation"] = "inherit" if kl_agg is None else kl_agg.value
        kl_norm = None
        if (kl_agg or aggregation) is A.TOKEN_SUM_NORM:
            if coin(gen, 0.5):
                kl_norm, relation = draw_norm_len(gen, width)
                labels["kl_norm_len"] = f"own_{relation}"
            else:
                labels["kl_norm_len"] = "inherit"
                if norm_len is None:
                    norm_len, _ = draw_norm_len(gen, width)
                    labels["norm_len"] = "set_for_kl_only"
        elif coin(gen, 0.1):
            kl_norm, _ = draw_norm_len(gen, width)
            labels["kl_norm_len"] = "set_ignored"
        else:
            labels["kl_norm_len"] = "null"
        kl = pg.KLLossConfig(kind=kind, coef=coef, aggregation=kl_agg, norm_len=kl_norm)

    cfg = pg.PolicyLossConfig(ratio=ratio, surrogate=surrogate, clip=clip,
                              aggregation=aggregation, norm_len=norm_len,
                              is_correction=is_correction, kl=kl)
    return cfg, labels


def draw_logprobs(gen: Any, shape: tuple[int, int]) -> tuple[Any, str]:
    torch = core.torch
    if coin(gen, 0.6):
        return -choice(gen, README_SCALES) * core.uniform(gen, shape, 0.0, 1.0), "readme"
    logits = choice(gen, LOGIT_SCALES) * randn(gen, (*shape, VOCAB))
    logp = torch.log_softmax(logits, dim=-1)
    tokens = torch.multinomial(logp.exp().reshape(-1, VOCAB), 1, generator=gen)
    return logp.reshape(-1, VOCAB).gather(1, tokens).reshape(shape), "log_softmax"


def old_sigma(gen: Any, cfg: Any) -> float:
    clip = cfg.clip
    if clip is not None and clip.ratio_cap is not None:
        return choice(gen, SIGMA_DUAL)
    if clip is not None and cfg.ratio is not core.pg.RatioKind.TOKEN:
        if min(e for e in (clip.eps_low, clip.eps_high) if e is not None) < 0.01:
            return choice(gen, SIGMA_SMALL_EPS)
    return choice(gen, SIGMA_DEFAULT)


def draw_batch(gen: Any, shape: tuple[int, int], cfg: Any) -> dict[str, Any] | None:
    """A junk-free batch for ``cfg``, or None when polgrad_core.policy_draw_ok rejects it."""
    torch = core.torch
    batch, width = shape
    labels: dict[str, str] = {}
    if width > 1 and coin(gen, 0.08):
        mask = torch.ones(shape, dtype=torch.bool)
    else:
        mask, _ = core.ragged_mask(gen, (batch, batch), (width, width))
    logprobs, labels["logprob_style"] = draw_logprobs(gen, shape)
    sigma = old_sigma(gen, cfg)
    labels["old_sigma"] = repr(sigma)
    old = logprobs + sigma * randn(gen, shape)
    if cfg.clip is not None and cfg.clip.ratio_cap is not None:
        old = old + choice(gen, ROW_SHIFT_DUAL) * randn(gen, (batch, 1))
    labels["advantages"] = "[B]" if coin(gen, 0.75) else "[B,T]"
    advantages = randn(gen, (batch,) if labels["advantages"] == "[B]" else shape)
    if coin(gen, 0.1):
        advantages[core.randint(gen, 0, batch - 1)] = 0.0
        labels["zero_advantage_row"] = "yes"
    data = {"mask": mask, "logprobs": logprobs, "old": old, "advantages": advantages}
    if cfg.kl is not None:
        data["ref"] = logprobs + choice(gen, SIGMA_REF) * randn(gen, shape)
    if cfg.is_correction is not None:
        data["rollout"] = old + choice(gen, SIGMA_ROLLOUT) * randn(gen, shape)
    if not core.policy_draw_ok(cfg, data):
        return None
    return {"labels": labels, **data}


# --------------------------------------------------------------------------------------
# Running one case
# --------------------------------------------------------------------------------------

# (input name, key in the drawn data, junk stream index as in polgrad_core)
STREAMS = (("logprobs", "logprobs", 0), ("old_logprobs", "old", 1), ("advantages", "advantages", 2),
           ("ref_logprobs", "ref", 3), ("rollout_logprobs", "rollout", 4))


def torch_equal(a: Any, b: Any) -> bool:
    """Value equality of two outputs (tensors via torch.equal, so -0.0 == 0.0)."""
    if core.torch.is_tensor(a):
        return bool(core.torch.equal(a, b))
    return a == b


def asdict_config(cfg: Any) -> dict[str, Any]:
    """``dataclasses.asdict`` with enums replaced by their ``.value``."""
    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value.value if isinstance(value, enum.Enum) else value
    return plain(dataclasses.asdict(cfg))


def evaluate(cfg: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """polgrad's policy_loss on ``inputs`` with ``loss.backward()`` into a logprobs leaf."""
    logprobs = core.leaf(inputs["logprobs"])
    result = core.pg.policy_loss(cfg, **{**inputs, "logprobs": logprobs})
    result.loss.backward()
    return {
        "loss": float(result.loss.detach()),
        "kl_loss": None if result.kl_loss is None else float(result.kl_loss.detach()),
        "grad_logprobs": logprobs.grad,
        "per_token_objective": result.per_token_objective.detach(),
        "ratio": result.ratio,
        "clipped_low": result.clipped_low,
        "clipped_high": result.clipped_high,
    }


def batch_inputs(drawn: dict[str, Any], junk: str) -> dict[str, Any]:
    """policy_loss keyword inputs; ``junk`` is 'none', '123.0' or 'nonfinite' (JUNK_RULE)."""
    mask = drawn["mask"]
    inputs: dict[str, Any] = {}
    for input_name, key, stream in STREAMS:
        value = drawn.get(key)
        if value is not None and value.dim() == 2 and junk != "none":
            value = core.with_junk(value, mask, junk == "nonfinite", stream)
        if value is not None:
            inputs[input_name] = value
        if input_name == "advantages":
            inputs["response_mask"] = mask
    return inputs


def record_case(index: int, shape: tuple[int, int]) -> tuple[dict[str, Any], dict[str, str]]:
    name = f"diff-{index:03d}"
    config_seed = core.case_seed(f"{name}:config", 0)
    cfg, config_labels = draw_config(core.torch.Generator().manual_seed(config_seed), shape[1])
    seed, drawn = core.draw_with_retries(name, lambda gen: draw_batch(gen, shape, cfg))
    mask = drawn["mask"]
    config = core.config_json(cfg)
    assert config == asdict_config(cfg), (config, asdict_config(cfg))
    junk = "none" if bool(mask.all()) else ("nonfinite" if index % 5 == 4 else "123.0")
    inputs = batch_inputs(drawn, junk)
    outputs = evaluate(cfg, inputs)
    for key, value in outputs.items():
        core.assert_finite(f"{name}.{key}", value)
    # Padding must not matter: the junk-free batch (drawn values at padding) gives equal outputs.
    for key, value in evaluate(cfg, batch_inputs(drawn, "none")).items():
        if not torch_equal(value, outputs[key]):
            raise AssertionError(f"{name}.{key}: padding junk changed polgrad's output")

    labels = {**config_labels, **drawn["labels"]}
    labels["junk"] = junk
    respond = lambda key: drawn[key][mask]  # noqa: E731
    labels["old_positive"] = "yes" if bool((respond("old") > 0).any()) else "no"
    if cfg.kl is not None:
        labels["ref_positive"] = "yes" if bool((respond("ref") > 0).any()) else "no"
    labels["any_clipped_low"] = "yes" if bool(outputs["clipped_low"].any()) else "no"
    labels["any_clipped_high"] = "yes" if bool(outputs["clipped_high"].any()) else "no"
    counts = {"tokens": int(mask.sum()), "cells": mask.numel(),
              "old_positive_tokens": int((respond("old") > 0).sum()),
              "ref_positive_tokens": int((respond("ref") > 0).sum()) if "ref" in drawn else 0,
              "ref_tokens": int(mask.sum()) if "ref" in drawn else 0}
    case = {"name": name, "config_seed": config_seed, "seed": seed, "shape": list(shape),
            "config": config,
            "inputs": inputs, "outputs": outputs}
    return case, {**labels, **{f"#{k}": v for k, v in counts.items()}}


# --------------------------------------------------------------------------------------
# Plan, coverage, output
# --------------------------------------------------------------------------------------


def plan_shapes() -> list[tuple[int, int]]:
    torch = core.torch
    gen = torch.Generator().manual_seed(zlib.crc32(PLAN_NAME.encode()) & 0x7FFFFFFF)
    shapes = [shape for shape, count in CORNER_SHAPES for _ in range(count)]
    shapes += [(core.randint(gen, 6, 16), core.randint(gen, 16, 48)) for _ in range(N_MEDIUM)]
    while len(shapes) < N_CASES:
        shapes.append((core.randint(gen, *SMALL_B), core.randint(gen, *SMALL_T)))
    order = torch.randperm(N_CASES, generator=gen).tolist()
    return [shapes[i] for i in order]


def coverage_counts(cases: list[dict[str, Any]], labels: list[dict[str, str]]) -> dict[str, Any]:
    table: dict[str, Counter] = {}

    def count(option: str, value: Any) -> None:
        table.setdefault(option, Counter())[str(value)] += 1

    for case, lab in zip(cases, labels):
        cfg = case["config"]
        count("ratio", cfg["ratio"])
        count("surrogate", cfg["surrogate"])
        count("aggregation", cfg["aggregation"])
        count("is_correction", "null" if cfg["is_correction"] is None
              else cfg["is_correction"]["level"])
        count("kl.kind", "null" if cfg["kl"] is None else cfg["kl"]["kind"])
        if cfg["clip"] is not None:
            count("clip.eps_low", "null" if cfg["clip"]["eps_low"] is None else "set")
            count("clip.ratio_cap", "null" if cfg["clip"]["ratio_cap"] is None else "set")
        count("batch B", f"{case['shape'][0]:>2}" if case["shape"][0] in (1, 32) else "2..16")
        count("batch T", f"{case['shape'][1]:>3}" if case["shape"][1] in (1, 128) else "2..64")
        for key, value in lab.items():
            if not key.startswith("#"):
                count(key, value)
    return {option: dict(sorted(counter.items())) for option, counter in sorted(table.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--polgrad-src", default=os.environ.get("POLGRAD_SRC"),
                        help="src/ of a polgrad checkout at the pinned commit "
                             "(default: $POLGRAD_SRC)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    if not args.polgrad_src:
        parser.error("--polgrad-src (or POLGRAD_SRC) is required")
    src = Path(args.polgrad_src).resolve()
    core.verify_checkout(src.parent)
    sources = core.load_polgrad(src)
    command = "PYTHONDONTWRITEBYTECODE=1 " + shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    if "--polgrad-src" not in sys.argv[1:]:
        command = f"POLGRAD_SRC={shlex.quote(args.polgrad_src)} {command}"

    shapes = plan_shapes()
    cases, labels = [], []
    for index, shape in enumerate(shapes):
        case, lab = record_case(index, shape)
        cases.append(case)
        labels.append(lab)

    coverage = coverage_counts(cases, labels)
    totals = {key[1:]: sum(lab[key] for lab in labels)
              for key in ("#tokens", "#cells", "#old_positive_tokens", "#ref_tokens",
                          "#ref_positive_tokens")}
    shape_counts = Counter(f"{b}x{t}" for b, t in shapes)
    summary = {
        "n_cases": len(cases),
        "response_tokens_total": totals["tokens"],
        "cells_total": totals["cells"],
        "old_logprobs_positive_tokens": totals["old_positive_tokens"],
        "cases_with_positive_old_logprobs": coverage["old_positive"].get("yes", 0),
        "ref_logprobs_tokens": totals["ref_tokens"],
        "ref_logprobs_positive_tokens": totals["ref_positive_tokens"],
        "cases_with_positive_ref_logprobs": coverage["ref_positive"].get("yes", 0),
        "shapes": dict(sorted(shape_counts.items(), key=lambda kv: tuple(map(int, kv[0].split("x"))))),
    }
    prov = core.provenance(command, sources, {
        "tool": TOOL_PATH,
        "function": "polgrad.policy_loss",
        "plan_rule": PLAN_RULE,
        "input_rule": INPUT_RULE,
        "config_rule": CONFIG_RULE,
        "junk_rule": core.JUNK_RULE + " Here the case index is the number in the case name; "
                     "cases without padding carry no junk.",
        "grad_rule": "grad_logprobs = logprobs.grad after result.loss.backward(), with logprobs "
                     "(junk included) a float64 leaf with requires_grad.",
        "outputs_rule": "loss, kl_loss (unscaled, null without kl), grad_logprobs [B,T], "
                        "per_token_objective [B,T], ratio [B,T] (1.0 at masked), clipped_low and "
                        "clipped_high [B,T] booleans; every output is asserted finite.",
        "layout": "{provenance, cases}; cases one per line: {name, seed, shape [B, T], config "
                  "(polgrad snake_case field names; clip/is_correction/kl null when None), inputs "
                  "{logprobs, old_logprobs, advantages ([B] or [B,T]), response_mask, "
                  "ref_logprobs (only with kl), rollout_logprobs (only with is_correction)}, "
                  "outputs}.",
        "summary": summary,
        "coverage": coverage,
    })
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(core.encode(c), separators=(",", ":"), allow_nan=False, ensure_ascii=False)
             for c in cases]
    head = json.dumps(core.encode(prov), indent=1, allow_nan=False, ensure_ascii=False)
    out.write_text('{"provenance": ' + head + ',\n"cases": [\n' + ",\n".join(lines) + "\n]}\n",
                   encoding="utf-8")

    width = max(len(option) for option in coverage)
    for option, counts in coverage.items():
        cells = ", ".join(f"{value}: {n}" for value, n in counts.items())
        print(f"{option:<{width}}  {cells}", file=sys.stderr)
    print(json.dumps({k: v for k, v in summary.items() if k != "shapes"}), file=sys.stderr)
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(cases)} cases)")


if __name__ == "__main__":
    main()
