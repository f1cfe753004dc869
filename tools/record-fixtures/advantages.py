#!/usr/bin/env python3
"""Record numeric fixtures of the advantage estimators of verl, OpenRLHF and TRL.

This recorder runs the real advantage code of the three frameworks at the pins of
``frameworks.py`` (both pins of each), on small seeded batches, and writes only numbers plus
provenance to ``test/fixtures/frameworks/advantages.json``:

- verl: the advantage functions of ``verl/trainer/ppo/core_algos.py`` (fetched through
  ``get_adv_estimator_fn`` and asserted to be the picked definitions), called with the keyword
  arguments verl's trainer passes, and ``verl.utils.torch_functional.masked_whiten``.
- OpenRLHF: ``RemoteExperienceMaker.compute_advantages_and_returns`` (with its
  ``get_cumulative_returns``) called as a plain function with a fake ``self``, and the
  token-level whitening ``if`` block of that method executed alone.
- TRL: the advantage block of ``GRPOTrainer._generate_and_score_completions`` (the statements
  from ``num_generations = ...`` through ``advantages = torch.nan_to_num(...)``) executed alone,
  with ``self.reward_weights`` built by the ``if args.reward_weights is not None:`` statement of
  ``GRPOTrainer.__init__`` and ``scale_rewards`` passed through the legacy-bool statement of
  ``GRPOConfig.__post_init__``.

No framework code is copied into this repository. Everything upstream is loaded the way
``frameworks.py`` loads it, with its helpers (imported as a module): each pinned file is read with
``git --git-dir=<dir> show <commit>:<path>`` in memory, its SHA-256 is checked (against
``frameworks.TARGETS`` for the files listed there, against ``EXTRA_FILES`` below for the others)
before anything is parsed, it is parsed with ``ast``, and only the needed definitions or
statements are compiled (with the upstream file name and line numbers) and executed with real
torch, in namespaces that bind exactly the names they read.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/advantages.py \\
        --verl-git /path/to/verl.git --openrlhf-git /path/to/OpenRLHF.git --trl-git /path/to/trl.git

Output (JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs):

    test/fixtures/frameworks/advantages.json
"""

from __future__ import annotations

import argparse
import ast
import itertools
import math
import os
import platform
import shlex
import sys
import types
import zlib
from collections import defaultdict
from enum import Enum
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

sys.dont_write_bytecode = True  # importing frameworks.py must not leave a __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import frameworks as fw  # noqa: E402  (the sibling recorder, guarded by `if __name__ == "__main__"`)

TOOL_PATH = "tools/record-fixtures/advantages.py"
DEFAULT_OUT = fw.REPO_ROOT / "test" / "fixtures" / "frameworks" / "advantages.json"

# --------------------------------------------------------------------------------------
# Pinned upstream identity: files beyond frameworks.TARGETS, same pins
# --------------------------------------------------------------------------------------

VERL_GROUPWISE = "verl/utils/groupwise.py"
ORL_EXPERIENCE_MAKER = "openrlhf/trainer/ppo_utils/experience_maker.py"
ORL_LENGTH_PENALTY = "openrlhf/trainer/ppo_utils/length_penalty.py"
TRL_UTILS = "trl/trainer/utils.py"

EXTRA_FILES = {
    "74a718a492092312f1004fe25369975137388849": {
        VERL_GROUPWISE: "409403d0002ff0d1fd1c41812163b1cfa52a52248677aab00e6ffcf3b937b442",
    },
    "1dda039b9c6311889a9c9a26040677e1254814f9": {
        VERL_GROUPWISE: "409403d0002ff0d1fd1c41812163b1cfa52a52248677aab00e6ffcf3b937b442",
    },
    "bc71bb19464aca306b33080b2d2bb45d154e2f49": {
        ORL_EXPERIENCE_MAKER: "435c748a5b8043026426d6d48319f4343d7fe4d4253769fdeb940ed7cdc0b769",
        ORL_LENGTH_PENALTY: "71f73c4a720a18a1ba3e4d223293c03f4f82d7f1fcbe3163d643f8b1c6e932b0",
    },
    "3c3be6234e0cb353e76bb8019947db9dfe99fca7": {
        ORL_EXPERIENCE_MAKER: "435c748a5b8043026426d6d48319f4343d7fe4d4253769fdeb940ed7cdc0b769",
        ORL_LENGTH_PENALTY: "71f73c4a720a18a1ba3e4d223293c03f4f82d7f1fcbe3163d643f8b1c6e932b0",
    },
    "95809b942eb5d11d0b06d749510d88be99230b73": {
        TRL_UTILS: "f5968ce2239a8b1d37294d6d6ffba25131075f07cfccef28649def51c01f1a6d",
    },
    "f2cd57710ae345ea6428ae95363267fcf38a3dc8": {
        TRL_UTILS: "ebdf6145e76ca552cb323d074c9429d6ee9eb94d129dfd823385f8211a3f208f",
    },
}
USED_FILES = {
    "verl": [fw.VERL_CORE, fw.VERL_TF, fw.VERL_BASE, VERL_GROUPWISE],
    "openrlhf": [ORL_EXPERIENCE_MAKER, ORL_LENGTH_PENALTY, fw.ORL_UTILS],
    "trl": [fw.TRL_TRAINER, fw.TRL_CONFIG, TRL_UTILS],
}

# --------------------------------------------------------------------------------------
# Recording rules
# --------------------------------------------------------------------------------------

JUNK = 123.0  # value at masked positions of token-level inputs in junk cases
PROBE_JUNK = -7.25  # the padding probe re-runs each case with this value at the same positions
TIE_MARGIN = 1e-6
MAX_REDRAWS = 1000

SEED_RULE = (
    "seed = zlib.crc32(f'{framework}@{label}:advantages:{variant}:{i}'.encode()) & 0x7FFFFFFF "
    "(frameworks.case_seed with variant 'advantages:<variant>') for case i = 0..3 of a variant; "
    "every draw comes from torch.Generator().manual_seed(seed) on CPU in float64 "
    "(uniforms are low + (high - low) * torch.rand(shape, generator=gen, dtype=float64), integers "
    "frameworks.randint). When a draw breaks the no-accidental-tie rule, the whole case is redrawn "
    "with seed crc32(... + f':{k}') for k = 1, 2, ...; the recorded seed is the one used. The TS "
    "side cannot replay torch's RNG: seeds are provenance only, every input is embedded in the file."
)
INPUT_RULE = (
    "Each case's layout is fixed by the variant's layout table (shape, group sizes, reward "
    "placement, padding value, deliberate ties; see the case's layout field). Masks: 'right' masks "
    "are right-padded with row lengths randint(1..T) (if every row has length T, a random row gets "
    "randint(1..T-1)); 'interior' masks (multi-turn: observation spans inside the response) have "
    "row lengths randint(3..T) and, in every row of length >= 3 with probability 1/2 and in at "
    "least one row always, a zero span [s, e) with 1 <= s < e <= L-1 (so the first and last "
    "response tokens are kept). Groups: verl index = uid strings 'uid-<g>' in group order, "
    "permuted by torch.randperm when layout.shuffle is true; OpenRLHF and TRL groups are "
    "contiguous blocks of n_samples_per_prompt / num_generations rows (their fixed layout). "
    "Outcome rewards R ~ U[-1, 1]; verl token_level_rewards put R at the last response token "
    "('last') or U[-0.5, 0.5] on every response token ('dense'); REINFORCE++/ReMax token rewards "
    "are U[-0.1, 0.1] on response tokens plus R at the last response token; masked_whiten values "
    "and OpenRLHF whitening advantages are U[-2, 2]; OpenRLHF kl is U[-0.2, 0.4] on action tokens; "
    "ReMax reward_baselines ~ U[-1, 1]; TRL rewards_per_func ~ U[-1, 1] rounded to float32. "
    "Positions where the mask is 0 hold 123.0 ('junk') or 0.0 ('clean') as layout.padding says. "
    "Outside the deliberate ties listed in layout.deliberate, every pair of rows in a group has "
    "scores (what the estimator groups on: verl row sums over all T positions, the OpenRLHF / TRL "
    "rewards, and each TRL reward column and weighted sum) more than 1e-6 apart. Deliberate ties "
    "copy whole rows (mask row and token row, or the reward values), so tied scores are bitwise "
    "equal."
)
JUNK_RULE = (
    "padding_value is the value stored at masked positions of the case's token-level inputs "
    "(those listed in padding_inputs). The recorder re-runs the same case with -7.25 at exactly those "
    "positions: padding_affects lists the outputs whose values change (NaN equal to NaN, -0.0 equal to "
    "0.0); padding_affects_zero_sign_only lists the outputs where only the sign of some zeros changes "
    "(upstream multiplies a padding-derived value by a 0 mask, and x * 0 is -0.0 for negative x); "
    "junk_reaches_output is true when padding_value is 123.0 and padding_affects is not empty. "
    "Cases without token-level inputs (TRL) carry none of these fields."
)
JSON_RULE = (
    "JSON indent=1 with sorted keys; finite floats are Python repr (shortest round-trip float64; "
    "float32 values are stored exactly as float64); non-finite floats are the strings 'NaN', "
    "'Infinity', '-Infinity'; masks are booleans (the dtype passed upstream is in "
    "setting.response_mask_dtype); signed zeros are kept (-0.0). Each variant's dtypes field gives "
    "the torch dtype of every recorded tensor output."
)
LOADING_RULE = fw.LOADING_RULE + (
    " Files outside frameworks.TARGETS (verl/utils/groupwise.py, "
    "openrlhf/trainer/ppo_utils/experience_maker.py and length_penalty.py, trl/trainer/utils.py) are "
    "pinned in this recorder's EXTRA_FILES with the same check. Inline upstream logic (the OpenRLHF "
    "whitening block, the TRL advantage block, the TRL reward-weights statement of __init__ and the "
    "scale_rewards statement of GRPOConfig.__post_init__) is found with ast, compiled alone with the "
    "upstream file name and line numbers, and executed in a namespace binding exactly its free "
    "names (asserted)."
)

torch: Any = None  # populated in main()
np: Any = None


# --------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------


def top_level_names(tree: ast.Module) -> set[str]:
    return {n for n in (fw.node_name(node) for node in tree.body) if n is not None}


def future_imports(tree: ast.Module) -> list[ast.stmt]:
    """The file's `from __future__ import ...` statements (kept so annotations behave as upstream)."""
    return [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]


def uniform(gen: Any, shape: tuple[int, ...], low: float, high: float) -> Any:
    return fw.uniform(gen, shape, low, high)


def to_json(x: Any) -> Any:
    """Tensors / arrays / floats to JSON values (non-finite floats as strings, -0.0 kept)."""
    if torch.is_tensor(x):
        if x.dtype == torch.bool:
            return x.tolist()
        return to_json(x.tolist())
    if isinstance(x, np.ndarray):
        return to_json(x.tolist())
    if isinstance(x, (list, tuple)):
        return [to_json(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return x
    raise TypeError(f"cannot encode {type(x)}")


def same(a: Any, b: Any) -> bool:
    """Bitwise equality of outputs, NaN equal to NaN, sign of zero respected."""
    if torch.is_tensor(a):
        if not (torch.is_tensor(b) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        if a.dtype == torch.bool or not a.is_floating_point():
            return bool((a == b).all())
        both_nan = torch.isnan(a) & torch.isnan(b)
        eq = (a == b) & (torch.signbit(a) == torch.signbit(b))
        return bool((both_nan | eq).all())
    return a == b


def diff_kind(a: Any, b: Any) -> str:
    """'none', 'zero_sign' (only the sign of some zeros differs) or 'value'."""
    if same(a, b):
        return "none"
    if torch.is_tensor(a) and torch.is_tensor(b) and a.dtype == b.dtype and a.shape == b.shape \
            and a.is_floating_point():
        both_nan = torch.isnan(a) & torch.isnan(b)
        if bool((both_nan | (a == b)).all()):
            return "zero_sign"
    return "value"


def groups_of(index: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(index):
        out[g].append(i)
    return dict(out)


def no_accidental_tie(values: list[float], groups: dict[str, list[int]], allowed: set[frozenset]) -> bool:
    for rows in groups.values():
        for a, b in itertools.combinations(rows, 2):
            if frozenset((a, b)) in allowed:
                continue
            if abs(values[a] - values[b]) <= TIE_MARGIN:
                return False
    return True


def deliberate_pairs(groups: dict[str, list[int]], deliberate: dict[str, str]) -> set[frozenset]:
    """Row pairs that are tied on purpose: all rows of a zero-spread group, the first two of a tie."""
    pairs: set[frozenset] = set()
    for g, kind in deliberate.items():
        rows = groups[g]
        chosen = rows if kind == "zero_spread" else rows[:2]
        pairs.update(frozenset(p) for p in itertools.combinations(chosen, 2))
    return pairs


def tie_rows(groups: dict[str, list[int]], deliberate: dict[str, str]) -> list[tuple[int, int]]:
    """(source, copy) row pairs implementing the deliberate ties."""
    out = []
    for g, kind in deliberate.items():
        rows = groups[g]
        chosen = rows if kind == "zero_spread" else rows[:2]
        out.extend((chosen[0], r) for r in chosen[1:])
    return out


def seeded(name: str, target: fw.Target, i: int, attempt: int) -> int:
    base = fw.case_seed(target.framework, target.label, f"advantages:{name}", i)
    if attempt == 0:
        return base
    text = f"{target.framework}@{target.label}:advantages:{name}:{i}:{attempt}"
    return zlib.crc32(text.encode("utf-8")) & 0x7FFFFFFF


# --------------------------------------------------------------------------------------
# verl
# --------------------------------------------------------------------------------------

VERL_ADV_FUNCS = {
    # registry key -> upstream definition
    "grpo": "compute_grpo_outcome_advantage",
    "grpo_vectorized": "compute_grpo_vectorized_outcome_advantage",
    "gdpo": "compute_gdpo_outcome_advantage",
    "grpo_passk": "compute_grpo_passk_outcome_advantage",
    "reinforce_plus_plus_baseline": "compute_reinforce_plus_plus_baseline_outcome_advantage",
    "rloo": "compute_rloo_outcome_advantage",
    "opo": "compute_opo_outcome_advantage",
    "reinforce_plus_plus": "compute_reinforce_plus_plus_outcome_advantage",
    "remax": "compute_remax_outcome_advantage",
    "gpg": "compute_gpg_outcome_advantage",
    "rloo_vectorized": "compute_rloo_vectorized_outcome_advantage",
}
VERL_CORE_BASE = ["AdvantageEstimator", "ADV_ESTIMATOR_REGISTRY", "register_adv_est", "get_adv_estimator_fn"]
VERL_TF_ADV_PICKED = ["masked_sum", "masked_mean", "masked_var", "masked_whiten"]
VERL_GROUPWISE_PICKED = ["_resolve_device", "_to_1d_numpy_object_array", "as_torch_index", "group_mean_std"]
VERL_STUBS = (
    "verl_F (verl.utils.torch_functional) is a plain module object holding only masked_sum, "
    "masked_mean, masked_var and masked_whiten picked from the pinned torch_functional.py. "
    "as_torch_index and group_mean_std (with their helpers _resolve_device and "
    "_to_1d_numpy_object_array) are picked from the pinned verl/utils/groupwise.py, executed with "
    "its `from __future__ import annotations`; its import verl.utils.device.get_device_name is "
    "replaced by a function returning 'cpu' (never called: core_algos passes device=scores.device). "
    "AlgoConfig is a stand-in class whose instances carry exactly the fields listed in a variant's "
    "setting.config and whose get() is BaseConfig.get picked from the pinned verl/base_config.py. "
    "The namespace of core_algos.py holds real torch, numpy as np, collections.defaultdict, "
    "enum.Enum and typing.Optional/Any/Callable. ADV_ESTIMATOR_REGISTRY therefore holds only the "
    "picked estimators; every function is fetched with get_adv_estimator_fn(<key>) and asserted to "
    "be the picked definition. Nothing else of verl is imported."
)
VERL_MASK_NOTE = (
    "response_mask is passed as torch.int64, as verl's trainer builds it (compute_response_mask: "
    "attention_mask[:, -response_length:])."
)
WHITEN_TEXT = (
    "masked_whiten(x, m): mean = masked_sum(x, m) / (sum(m) + 1e-8), masked_sum(x, m) = "
    "sum(where(m, x, 0) * m); var = masked_mean((x - mean)^2, m) * c with the Bessel factor c = "
    "N / (N - 1), N = sum(m) (raises for N <= 1); result (x - mean) * rsqrt(var + 1e-8) at EVERY "
    "position (padding included), + mean again when shift_mean is False. With the int64 mask N is an "
    "int64 tensor, so N + 1e-8 is a float32 tensor equal to N exactly (the 1e-8 has no effect) and "
    "c = N / (N - 1) is computed as a float32 tensor (c is float32-rounded, e.g. N = 7: "
    "1.1666666269302368)"
)


class AlgoConfigStubBase:
    """Base of the per-load AlgoConfig stand-in (fields set per call)."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def load_verl_adv(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    tf_tree, tf_name = fw.parse(sources, target, fw.VERL_TF)
    verl_f = types.ModuleType("verl.utils.torch_functional")
    tf_ns: dict[str, Any] = {"__name__": verl_f.__name__, "torch": torch}
    fw.exec_nodes(fw.pick_top_level(tf_tree, VERL_TF_ADV_PICKED, tf_name), tf_ns, tf_name)
    for name in VERL_TF_ADV_PICKED:
        setattr(verl_f, name, tf_ns[name])

    gw_tree, gw_name = fw.parse(sources, target, VERL_GROUPWISE)
    gw_ns: dict[str, Any] = {"__name__": "verl.utils.groupwise", "os": os, "np": np, "torch": torch,
                             "Optional": Optional, "Any": Any, "get_device_name": lambda: "cpu"}
    fw.exec_nodes(future_imports(gw_tree) + fw.pick_top_level(gw_tree, VERL_GROUPWISE_PICKED, gw_name),
                  gw_ns, gw_name)

    base_tree, base_name = fw.parse(sources, target, fw.VERL_BASE)
    base_ns: dict[str, Any] = {"__name__": "verl.base_config", "Any": Any}
    fw.exec_nodes([fw.pick_method(base_tree, "BaseConfig", "get", base_name)], base_ns, base_name)

    class AlgoConfig(AlgoConfigStubBase):  # noqa: D401 - stand-in named like the upstream class
        """Stand-in for verl.trainer.config.AlgoConfig carrying the fields a variant sets."""

        get = base_ns["get"]

    core_tree, core_name = fw.parse(sources, target, fw.VERL_CORE)
    present = top_level_names(core_tree)
    available = {k: v for k, v in VERL_ADV_FUNCS.items() if v in present}
    ns: dict[str, Any] = {
        "__name__": "verl.trainer.ppo.core_algos", "torch": torch, "np": np, "defaultdict": defaultdict,
        "Enum": Enum, "Optional": Optional, "Any": Any, "Callable": Callable, "AlgoConfig": AlgoConfig,
        "verl_F": verl_f, "as_torch_index": gw_ns["as_torch_index"], "group_mean_std": gw_ns["group_mean_std"],
    }
    picked = VERL_CORE_BASE + sorted(available.values())
    nodes = fw.pick_top_level(core_tree, picked, core_name)
    fw.exec_nodes(nodes, ns, core_name)
    lines = {fw.node_name(n): [n.lineno, n.end_lineno] for n in nodes}
    rpp_carries = False
    if "reinforce_plus_plus" in available:
        rpp_node = [n for n in nodes if fw.node_name(n) == available["reinforce_plus_plus"]][0]
        rpp_carries = "running_return * (1 - response_mask[:, t])" in ast.unparse(rpp_node)
    fns = {}
    for key, name in available.items():
        fn = ns["get_adv_estimator_fn"](key)
        if fn is not ns[name]:
            raise SystemExit(f"{core_name}: get_adv_estimator_fn({key!r}) is not {name}")
        fns[key] = fn
    return types.SimpleNamespace(ns=ns, fns=fns, verl_f=verl_f, AlgoConfig=AlgoConfig, picked=picked,
                                 lines=lines, available=available, rpp_carries=rpp_carries)


# Case layouts. Each entry: shape (B, T), group sizes (verl: uid groups), reward placement,
# mask kind, padding ('junk' 123.0 / 'clean' 0.0), shuffle of the uid order, deliberate ties.
VERL_GROUP_LAYOUTS = (
    {"shape": [8, 5], "groups": [3, 1, 2, 2], "rewards": "last", "mask": "right", "padding": "junk",
     "shuffle": True, "deliberate": {}},
    {"shape": [6, 7], "groups": [2, 1, 3], "rewards": "dense", "mask": "right", "padding": "junk",
     "shuffle": False, "deliberate": {}},
    {"shape": [5, 3], "groups": [4, 1], "rewards": "last", "mask": "right", "padding": "clean",
     "shuffle": True, "deliberate": {}, "zero_reward_row": True},
    {"shape": [7, 4], "groups": [3, 3, 1], "rewards": "last", "mask": "right", "padding": "junk",
     "shuffle": False, "deliberate": {"uid-0": "zero_spread", "uid-1": "tie"}},
)
VERL_PASSK_LAYOUTS = (
    {"shape": [8, 5], "groups": [3, 3, 2], "rewards": "last", "mask": "right", "padding": "junk",
     "shuffle": True, "deliberate": {}},
    {"shape": [6, 7], "groups": [2, 4], "rewards": "dense", "mask": "right", "padding": "junk",
     "shuffle": False, "deliberate": {}},
    {"shape": [5, 3], "groups": [3, 2], "rewards": "last", "mask": "right", "padding": "clean",
     "shuffle": True, "deliberate": {}},
    {"shape": [6, 4], "groups": [3, 3], "rewards": "last", "mask": "right", "padding": "junk",
     "shuffle": False, "deliberate": {"uid-0": "zero_spread", "uid-1": "tie"}},
)
VERL_TOKEN_LAYOUTS = (
    {"shape": [4, 6], "mask": "right", "padding": "junk"},
    {"shape": [3, 7], "mask": "interior", "padding": "junk"},
    {"shape": [5, 4], "mask": "right", "padding": "clean"},
    {"shape": [2, 5], "mask": "interior", "padding": "junk"},
)
GDPO_KEYS = ["format_reward", "accuracy_reward", "length_reward"]
GDPO_WEIGHTS = [1.0, 0.5, 0.3]
GDPO_PROMPT_LEN = 2


def verl_group_draw(gen: Any, layout: dict[str, Any], gdpo: bool = False) -> dict[str, Any]:
    batch, width = layout["shape"]
    assert sum(layout["groups"]) == batch
    index = [f"uid-{g}" for g, size in enumerate(layout["groups"]) for _ in range(size)]
    if layout["shuffle"]:
        perm = torch.randperm(batch, generator=gen).tolist()
        index = [index[p] for p in perm]
    mask = fw.mask_rows(gen, batch, width, layout["mask"])
    outcome = uniform(gen, (batch,), -1.0, 1.0)
    dense = uniform(gen, (batch, width), -0.5, 0.5)
    components = uniform(gen, (batch, len(GDPO_KEYS)), -1.0, 1.0) if gdpo else None
    groups = groups_of(index)
    if layout.get("zero_reward_row"):
        outcome[groups["uid-0"][0]] = 0.0
    for src, dst in tie_rows(groups, layout["deliberate"]):
        mask[dst] = mask[src]
        outcome[dst] = outcome[src]
        dense[dst] = dense[src]
        if components is not None:
            components[dst] = components[src]
    pad = JUNK if layout["padding"] == "junk" else 0.0
    tlr = torch.zeros((batch, width), dtype=torch.float64)
    if layout["rewards"] == "last":
        for b, t in enumerate(fw.last_positions(mask)):
            tlr[b, t] = outcome[b]
    else:
        tlr = torch.where(mask, dense, tlr)
    tlr = torch.where(mask, tlr, torch.full_like(tlr, pad))
    return {"token_level_rewards": tlr, "response_mask": mask, "index": index, "components": components,
            "groups": groups}


def verl_token_draw(gen: Any, layout: dict[str, Any], kind: str) -> dict[str, Any]:
    batch, width = layout["shape"]
    mask = fw.mask_rows(gen, batch, width, layout["mask"])
    pad = JUNK if layout["padding"] == "junk" else 0.0
    out: dict[str, Any] = {"response_mask": mask}
    if kind == "whiten":
        values = uniform(gen, (batch, width), -2.0, 2.0)
        out["values"] = torch.where(mask, values, torch.full_like(values, pad))
        return out
    tok = uniform(gen, (batch, width), -0.1, 0.1)
    outcome = uniform(gen, (batch,), -1.0, 1.0)
    for b, t in enumerate(fw.last_positions(mask)):
        tok[b, t] = tok[b, t] + outcome[b]
    out["token_level_rewards"] = torch.where(mask, tok, torch.full_like(tok, pad))
    if kind == "remax":
        out["reward_baselines"] = uniform(gen, (batch,), -1.0, 1.0)
    return out


def verl_variants(target: fw.Target, api: types.SimpleNamespace) -> tuple[list[dict[str, Any]], list[dict]]:
    ns = api.ns
    fns = api.fns
    AlgoConfig = api.AlgoConfig
    long = torch.int64
    specs: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    core = "verl.trainer.ppo.core_algos."

    def group_inputs(d: dict[str, Any]) -> dict[str, Any]:
        return {"token_level_rewards": d["token_level_rewards"], "response_mask": d["response_mask"],
                "index": d["index"]}

    def uid_array(index: list[str]) -> Any:
        return np.array(index, dtype=object)

    def pair(a: Any, r: Any) -> dict[str, Any]:
        return {"advantages": a, "returns": r}

    # -- grpo (the loop version), called as ray_trainer.compute_advantage calls it
    for norm in (True, False):
        def run(d: dict[str, Any], norm: bool = norm) -> dict[str, Any]:
            a, r = fns["grpo"](token_level_rewards=d["token_level_rewards"],
                               response_mask=d["response_mask"].to(long), index=uid_array(d["index"]),
                               norm_adv_by_std_in_grpo=norm)
            return pair(a, r)
        formula = ("A_b = (s_b - mean_g) / (std_g + epsilon)" if norm else "A_b = s_b - mean_g (no std)")
        specs.append({
            "name": f"grpo:norm_adv_by_std_in_grpo={norm}", "key": "grpo",
            "setting": {"norm_adv_by_std_in_grpo": norm, "epsilon": 1e-6, "epsilon_passed": False,
                        "config": None, "response_mask_dtype": "torch.int64"},
            "description": (
                "verl compute_grpo_outcome_advantage(token_level_rewards, response_mask, index=uid, "
                f"norm_adv_by_std_in_grpo={norm}), the call ray_trainer.compute_advantage makes (epsilon not "
                "passed: default 1e-6). s_b = token_level_rewards[b].sum() over ALL T positions (the mask is "
                "not applied before the sum, so padding values count). Rows are grouped by uid in a dict. "
                "Group of size >= 2: mean_g = torch.mean, std_g = torch.std (unbiased, / (n - 1)), float64. "
                "Singleton: mean_g = torch.tensor(0.0) and std_g = torch.tensor(1.0), both float32 0-dim, so "
                "std_g + 1e-6 is the float32 1.0000009536743164 (not 1.000001). "
                f"{formula}; output A_b * response_mask[b, t] as [B, T] (zeros at padding, -0.0 where A_b < 0), "
                "and returns is the same tensor. A zero-spread group gives A = 0 only when torch.mean returns the tied "
                "value exactly (it does in these cases; a one-ulp miss would leave a tiny residue, as gpg case 3 at "
                "74a718a4 shows). "
                + VERL_MASK_NOTE),
            "layouts": VERL_GROUP_LAYOUTS, "draw": verl_group_draw, "inputs": group_inputs, "run": run,
            "padding_inputs": ["token_level_rewards"], "grouped": True,
        })

    # -- grpo_vectorized
    if "grpo_vectorized" in fns:
        for norm in (True, False):
            def run(d: dict[str, Any], norm: bool = norm) -> dict[str, Any]:
                a, r = fns["grpo_vectorized"](token_level_rewards=d["token_level_rewards"],
                                              response_mask=d["response_mask"].to(long),
                                              index=uid_array(d["index"]), norm_adv_by_std_in_grpo=norm,
                                              config=AlgoConfig(norm_adv_by_std_in_grpo=norm))
                return pair(a, r)
            formula = ("(s_b - mean_g) / (std_g + epsilon) with std_g + 1e-6 computed in float32" if norm
                       else "s_b - mean_g")
            specs.append({
                "name": f"grpo_vectorized:norm_adv_by_std_in_grpo={norm}", "key": "grpo_vectorized",
                "setting": {"norm_adv_by_std_in_grpo": norm, "epsilon": 1e-6, "epsilon_passed": False,
                            "config": {"norm_adv_by_std_in_grpo": norm}, "response_mask_dtype": "torch.int64"},
                "description": (
                    "verl compute_grpo_vectorized_outcome_advantage(token_level_rewards, response_mask, index, "
                    f"norm_adv_by_std_in_grpo={norm}, config) called directly (ray_trainer's generic branch does "
                    "not pass norm_adv_by_std_in_grpo, so through the trainer it is always True; config is not "
                    "read). s_b = row sum over all T positions (float64); g = as_torch_index(uid) (np.unique "
                    "factorisation); group_mean_std(s, g, eps=0.0) works in FLOAT32: s is cast to float32, "
                    "count/sum by index_add_, mean = sum / max(count, 1), var = sum((s - mean)^2) / max(count - 1, "
                    "1), std = sqrt(clamp(var, min=0.0)); singleton groups get mean 0, std 1. Then in float64 "
                    f"with the float32 statistics: A_b = {formula} (float32 + python float stays float32); output "
                    "A_b * mask as [B, T] (float64), returns = advantages. The float32 statistics make this differ "
                    "from the loop version by ~1e-7 relative, and a zero-spread group does not give exactly 0: the float32 "
                    "mean can miss the tied value by an ulp and std = sqrt(var) is then tiny but positive (case 3). "
                    + VERL_MASK_NOTE),
                "layouts": VERL_GROUP_LAYOUTS, "draw": verl_group_draw, "inputs": group_inputs, "run": run,
                "padding_inputs": ["token_level_rewards"], "grouped": True,
            })
    else:
        skipped.append({"variant": "grpo_vectorized", "reason": "compute_grpo_vectorized_outcome_advantage "
                        "is not defined at this pin"})

    # -- gdpo
    if "gdpo" in fns:
        for weighted in (True, False):
            weights = GDPO_WEIGHTS if weighted else None

            def run(d: dict[str, Any], weights: Optional[list[float]] = weights) -> dict[str, Any]:
                mask = d["response_mask"].to(long)
                batch, _ = mask.shape
                ntb = {"uid": uid_array(d["index"])}
                for k, key in enumerate(GDPO_KEYS):
                    ntb[key] = d["reward_components"][:, k].tolist()
                fake_batch = {"prompts": torch.zeros((batch, GDPO_PROMPT_LEN), dtype=long),
                              "attention_mask": torch.cat([torch.ones((batch, GDPO_PROMPT_LEN), dtype=long), mask],
                                                          dim=1)}
                cfg = AlgoConfig(gdpo_reward_keys=list(GDPO_KEYS), gdpo_reward_weights=weights,
                                 norm_adv_by_std_in_grpo=True)
                a, r = fns["gdpo"](token_level_rewards=d["token_level_rewards"], response_mask=mask,
                                   index=ntb["uid"], config=cfg, non_tensor_batch=ntb, batch=fake_batch)
                return pair(a, r)

            def inputs(d: dict[str, Any]) -> dict[str, Any]:
                out = group_inputs(d)
                out["reward_components"] = d["reward_components"]
                return out

            wtext = (f"w = torch.tensor({GDPO_WEIGHTS}, dtype=float32) (0.3 is float32 0.30000001192092896)"
                     if weighted else "w = ones(K, float32) (gdpo_reward_weights None)")
            specs.append({
                "name": "gdpo:weighted" if weighted else "gdpo:unweighted", "key": "gdpo",
                "setting": {"config": {"gdpo_reward_keys": list(GDPO_KEYS), "gdpo_reward_weights": weights,
                                       "norm_adv_by_std_in_grpo": True},
                            "epsilon": 1e-6, "epsilon_passed": False, "norm_adv_by_std_in_grpo": True,
                            "non_tensor_batch": "{uid, <key>: reward_components[:, k] as a list of Python floats}",
                            "batch": {"prompts": f"zeros [B, {GDPO_PROMPT_LEN}] int64",
                                      "attention_mask": f"cat(ones [B, {GDPO_PROMPT_LEN}], response_mask) int64"},
                            "response_mask_dtype": "torch.int64"},
                "description": (
                    "verl compute_gdpo_outcome_advantage(token_level_rewards, response_mask, index, config, "
                    "non_tensor_batch, batch) as ray_trainer's gdpo branch calls it (norm_adv_by_std_in_grpo not "
                    "passed: default True; config.norm_adv_by_std_in_grpo is not read). For each key k of "
                    f"config.gdpo_reward_keys {GDPO_KEYS}: r_k = np.asarray(non_tensor_batch[k], float32) placed in "
                    "a float32 zeros [B, T] at column valid_response_length = attention_mask[:, prompt_len:].sum(1) "
                    "- 1 (the last response token of a right-padded mask); A_k = compute_grpo_outcome_advantage("
                    "that tensor, ...) (the grpo loop, in float32 here: mean/std of the float32 scores, singleton "
                    f"mean 0 / std 1, (s - mean) / (std + 1e-6), times mask); {wtext}; A = sum_k w_k * A_k (float32); "
                    "advantages = masked_whiten(A, mask) * mask (shift_mean True), float32; returns = advantages. "
                    "token_level_rewards is only used for its device, so its padding junk does not reach the "
                    "output. " + WHITEN_TEXT + ". " + VERL_MASK_NOTE),
                "layouts": VERL_GROUP_LAYOUTS, "draw": lambda gen, layout: verl_group_draw(gen, layout, gdpo=True),
                "inputs": inputs, "run": run, "padding_inputs": ["token_level_rewards"], "grouped": True,
                "gdpo": True,
            })
    else:
        skipped.append({"variant": "gdpo", "reason": "compute_gdpo_outcome_advantage is not defined at this pin"})

    # -- grpo_passk
    if "grpo_passk" in fns:
        for norm in (True, False):
            def run(d: dict[str, Any], norm: bool = norm) -> dict[str, Any]:
                a, r = fns["grpo_passk"](token_level_rewards=d["token_level_rewards"],
                                         response_mask=d["response_mask"].to(long), index=uid_array(d["index"]),
                                         config=AlgoConfig(norm_adv_by_std_in_grpo=norm))
                return pair(a, r)
            specs.append({
                "name": f"grpo_passk:norm_adv_by_std_in_grpo={norm}", "key": "grpo_passk",
                "setting": {"config": {"norm_adv_by_std_in_grpo": norm}, "epsilon": 1e-6, "epsilon_passed": False,
                            "response_mask_dtype": "torch.int64"},
                "description": (
                    "verl compute_grpo_passk_outcome_advantage(token_level_rewards, response_mask, index, config) "
                    f"with config.norm_adv_by_std_in_grpo = {norm} (read with config.get). s_b = row sum over all "
                    "T positions. Per group (size >= 2 required, else ValueError; no singletons here): "
                    "topk(s_g, 2) gives r_max, r_2nd and the row i_max of the maximum; A[i_max] = r_max - r_2nd"
                    + (" divided by (torch.std(s_g) + 1e-6) (unbiased std)" if norm else "") +
                    "; every other row gets 0. Output A_b * mask as [B, T]; returns = advantages. A tie for the "
                    "maximum gives A = 0 for the whole group whichever row topk picks. " + VERL_MASK_NOTE),
                "layouts": VERL_PASSK_LAYOUTS, "draw": verl_group_draw, "inputs": group_inputs, "run": run,
                "padding_inputs": ["token_level_rewards"], "grouped": True,
            })
    else:
        skipped.append({"variant": "grpo_passk", "reason": "not defined at this pin"})

    simple_group = (
        ("reinforce_plus_plus_baseline", "reinforce_plus_plus_baseline",
         "verl compute_reinforce_plus_plus_baseline_outcome_advantage(token_level_rewards, response_mask, index, "
         "config). s_b = row sum over all T positions; mean_g = torch.mean of the group (singleton: "
         "torch.tensor(0.0)); a_b = s_b - mean_g; tiled to [B, T] and multiplied by the mask; then advantages = "
         "masked_whiten(a * m, m) * m (shift_mean True: re-centred by the TOKEN-weighted mean, scaled by the "
         "token-weighted Bessel std); returns = advantages. " + WHITEN_TEXT + ". " + VERL_MASK_NOTE),
        ("rloo", "rloo",
         "verl compute_rloo_outcome_advantage(token_level_rewards, response_mask, index, config) (the loop "
         "version). s_b = row sum over all T positions; group of n >= 2: A_b = s_b * n / (n - 1) - mean_g * n / "
         "(n - 1) (evaluated in that order, float64), i.e. n/(n-1) * (s_b - mean_g) = s_b - mean of the others; "
         "a SINGLETON KEEPS ITS RAW s_b (the row is not modified). Output A_b * mask as [B, T]; returns = "
         "advantages. " + VERL_MASK_NOTE),
        ("rloo_vectorized", "rloo_vectorized",
         "verl compute_rloo_vectorized_outcome_advantage(token_level_rewards, response_mask, index, config). s_b "
         "= row sum over all T positions; inv = np.unique(index, return_inverse=True)[1]; c_b = bincount(inv)[inv] "
         "as float64; A_b = ((c_b * s_b - bincount(inv, weights=s)[inv]) / clamp_min(c_b - 1, 1)) * (c_b > 1), so "
         "a SINGLETON GETS 0 (unlike the loop version, which keeps raw s_b). Output A_b * mask as [B, T]; "
         "returns = advantages. " + VERL_MASK_NOTE),
        ("opo", "opo",
         "verl compute_opo_outcome_advantage(token_level_rewards, response_mask, index, config). L_b = "
         "response_mask[b].sum() (int64); s_b = row sum over all T positions; group of size >= 2: baseline b_g = "
         "sum_j(L_j * s_j) / sum_j(L_j) (length-weighted mean); singleton: b = torch.tensor(0.0); A_b = s_b - "
         "b_g, no std. Output A_b * mask as [B, T]; returns = advantages. " + VERL_MASK_NOTE),
        ("gpg", "gpg",
         "verl compute_gpg_outcome_advantage(token_level_rewards, response_mask, index, config) with the "
         "defaults f_norm = 1.0, alpha = 1.0 (alpha is overwritten). s_b = row sum over all T positions; m = "
         "count_nonzero(s); alpha = B / m.clamp(min=1), a Python int divided by an int64 tensor, i.e. a FLOAT32 "
         "tensor (e.g. 5/4 exact, 7/6 float32-rounded); mean_g = torch.mean (singleton: 0.0); the std is computed "
         "but never used; A_b = alpha * (s_b - mean_g) / f_norm (a zero-spread group can keep a float64 "
         "rounding residue: case 3 at 74a718a4 gives 5.7e-14, its mean being one ulp off). Output A_b * mask as [B, T]; returns = "
         "advantages. " + VERL_MASK_NOTE),
    )
    for name, key, text in simple_group:
        if key not in fns:
            skipped.append({"variant": name, "reason": f"{VERL_ADV_FUNCS[key]} is not defined at this pin"})
            continue

        def run(d: dict[str, Any], key: str = key) -> dict[str, Any]:
            a, r = fns[key](token_level_rewards=d["token_level_rewards"], response_mask=d["response_mask"].to(long),
                            index=uid_array(d["index"]), config=AlgoConfig())
            return pair(a, r)
        specs.append({
            "name": name, "key": key,
            "setting": {"config": {}, "epsilon": 1e-6, "epsilon_passed": False, "response_mask_dtype": "torch.int64"},
            "description": text, "layouts": VERL_GROUP_LAYOUTS, "draw": verl_group_draw, "inputs": group_inputs,
            "run": run, "padding_inputs": ["token_level_rewards"], "grouped": True,
        })

    # -- reinforce_plus_plus
    if "reinforce_plus_plus" in fns:
        carries = api.rpp_carries
        for gamma in (1.0, 0.9):
            def run(d: dict[str, Any], gamma: float = gamma) -> dict[str, Any]:
                a, r = fns["reinforce_plus_plus"](token_level_rewards=d["token_level_rewards"],
                                                  response_mask=d["response_mask"].to(long),
                                                  config=AlgoConfig(gamma=gamma))
                return pair(a, r)
            if carries:
                rec = ("new_t = r_t + gamma * run; returns_t = new_t * m_t; run = new_t * m_t + run * (1 - m_t) "
                       "(on masked positions, interior observation spans included, the running return is carried "
                       "through unchanged and returns_t = 0; padding values are multiplied by 0, so finite junk "
                       "does not reach the outputs)")
            else:
                rec = ("run = r_t + gamma * run; returns_t = run; run = run * m_t (the running return is RESET to 0 "
                       "at every masked position, interior observation spans included, and returns_t at a masked "
                       "position is r_t + gamma * run, i.e. the padding value itself lands in returns)")
            specs.append({
                "name": f"reinforce_plus_plus:gamma={gamma!r}", "key": "reinforce_plus_plus",
                "setting": {"config": {"gamma": gamma}, "response_mask_dtype": "torch.int64"},
                "description": (
                    "verl compute_reinforce_plus_plus_outcome_advantage(token_level_rewards, response_mask, config) "
                    f"with config.gamma = {gamma!r}. Backwards over t = T-1..0 with run = 0 (Python int) at the start: "
                    f"{rec}. advantages = masked_whiten(returns, m) * m (shift_mean True); returns as computed. "
                    + WHITEN_TEXT + ". " + VERL_MASK_NOTE),
                "layouts": VERL_TOKEN_LAYOUTS, "draw": lambda gen, layout: verl_token_draw(gen, layout, "rpp"),
                "inputs": lambda d: {"token_level_rewards": d["token_level_rewards"],
                                     "response_mask": d["response_mask"]},
                "run": run, "padding_inputs": ["token_level_rewards"], "grouped": False,
            })
    else:
        skipped.append({"variant": "reinforce_plus_plus", "reason": "not defined at this pin"})

    # -- remax
    if "remax" in fns:
        def run_remax(d: dict[str, Any]) -> dict[str, Any]:
            a, r = fns["remax"](token_level_rewards=d["token_level_rewards"], reward_baselines=d["reward_baselines"],
                                response_mask=d["response_mask"].to(long), config=AlgoConfig())
            return pair(a, r)
        specs.append({
            "name": "remax", "key": "remax",
            "setting": {"config": {}, "response_mask_dtype": "torch.int64"},
            "description": (
                "verl compute_remax_outcome_advantage(token_level_rewards, reward_baselines, response_mask, config). "
                "returns = reverse cumulative sum over t of (token_level_rewards * m) (flip, cumsum, flip), so a "
                "masked position holds the masked sum of everything after it (non-zero inside interior observation "
                "spans, 0 on right padding); advantages = returns - reward_baselines[b] * m[b, t] (the baseline is "
                "subtracted only on response tokens). No whitening. " + VERL_MASK_NOTE),
            "layouts": VERL_TOKEN_LAYOUTS, "draw": lambda gen, layout: verl_token_draw(gen, layout, "remax"),
            "inputs": lambda d: {"token_level_rewards": d["token_level_rewards"], "response_mask": d["response_mask"],
                                 "reward_baselines": d["reward_baselines"]},
            "run": run_remax, "padding_inputs": ["token_level_rewards"], "grouped": False,
        })
    else:
        skipped.append({"variant": "remax", "reason": "not defined at this pin"})

    # -- masked_whiten itself
    for shift_mean, mask_dtype in ((True, torch.int64), (False, torch.int64), (True, torch.float64)):
        def run_w(d: dict[str, Any], shift_mean: bool = shift_mean, mask_dtype: Any = mask_dtype) -> dict[str, Any]:
            return {"whitened": api.verl_f.masked_whiten(d["values"], d["response_mask"].to(mask_dtype),
                                                         shift_mean=shift_mean)}
        dtype_name = str(mask_dtype)
        extra = ("" if mask_dtype == torch.int64 else
                 " With this float64 mask the 1e-8 in mean = sum / (N + 1e-8) does take effect and the Bessel "
                 "factor N / (N - 1) is float64 (compare masked_whiten:shift_mean=True, the int64 mask verl's "
                 "trainer uses).")
        specs.append({
            "name": f"masked_whiten:shift_mean={shift_mean}" + ("" if mask_dtype == torch.int64 else ":float64-mask"),
            "key": None, "function": "verl.utils.torch_functional.masked_whiten",
            "setting": {"shift_mean": shift_mean, "response_mask_dtype": dtype_name},
            "description": (
                f"verl verl.utils.torch_functional.masked_whiten(values, mask, shift_mean={shift_mean}). "
                + WHITEN_TEXT.replace("With the int64 mask", "With an int64 mask") + ". The result is NOT "
                "multiplied by the mask: padding positions hold (x_pad - mean) * rsqrt(var + 1e-8)"
                + (" + mean" if not shift_mean else "") + ", so padding junk reaches them." + extra),
            "layouts": VERL_TOKEN_LAYOUTS, "draw": lambda gen, layout: verl_token_draw(gen, layout, "whiten"),
            "inputs": lambda d: {"values": d["values"], "response_mask": d["response_mask"]},
            "run": run_w, "padding_inputs": ["values"], "grouped": False,
        })

    for spec in specs:
        spec.setdefault("function", core + VERL_ADV_FUNCS[spec["key"]] if spec.get("key") else None)
        spec["called_via"] = (f"get_adv_estimator_fn({spec['key']!r})" if spec.get("key") else
                              "verl_F.masked_whiten")
    return specs, skipped


def verl_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "picked_definitions": {
            fw.VERL_CORE: [f"{n} (lines {api.lines[n][0]}-{api.lines[n][1]})" for n in api.picked],
            fw.VERL_TF: VERL_TF_ADV_PICKED,
            VERL_GROUPWISE: ["from __future__ import annotations"] + VERL_GROUPWISE_PICKED,
            fw.VERL_BASE: ["BaseConfig.get"],
        },
        "registry_keys": sorted(api.fns),
        "stubs": VERL_STUBS,
    }


# --------------------------------------------------------------------------------------
# OpenRLHF
# --------------------------------------------------------------------------------------

ORL_WHITEN_TEST = "args.algo.advantage.estimator in ['gae', 'reinforce', 'reinforce_baseline']"
ORL_LP_PICKED = ["apply_overlong_penalty", "apply_stop_properly_penalty", "apply_length_penalties"]
ORL_STUBS = (
    "RemoteExperienceMaker.compute_advantages_and_returns and get_cumulative_returns are picked out of the "
    "pinned experience_maker.py and called with a fake `self` = a namespace holding strategy.args (the "
    "nested args of setting.args), advantage_estimator = args.algo.advantage.estimator, kl_ctl.value = "
    "setting.kl_coef (a FixedKLController's value) and the picked get_cumulative_returns / "
    "get_advantages_and_returns bound to it. The method's module names are bound to: real torch and "
    "itertools; typing.List/Tuple; compute_reward picked from the pinned openrlhf/models/utils.py (its "
    "`import deepspeed` is never executed); apply_length_penalties (with apply_overlong_penalty and "
    "apply_stop_properly_penalty) picked from the pinned length_penalty.py, a no-op here because "
    "args.reward.overlong_buffer_len and stop_properly_penalty_coef are None; logger = a sink that records "
    "warning/info messages (recorded per case as logged_warnings); Experience = a plain attribute class "
    "(the upstream dataclass is only an annotation here). One Experience holds the whole batch: index = "
    "[0..B-1], rewards [B], kl [B, T], action_mask [B, T] int64 (as samples_generator builds it), "
    "response_length = action_mask.sum(1), truncated None, info {}."
)


class OrlExperience:
    """Stand-in for openrlhf.trainer.ppo_utils.experience.Experience (attribute bag)."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class RecordingLogger:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def warning(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self.messages.append(str(msg))

    def info(self, msg: str, *args: Any, **kwargs: Any) -> None:
        pass


def load_openrlhf_adv(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    utils_tree, utils_name = fw.parse(sources, target, fw.ORL_UTILS)
    utils_ns: dict[str, Any] = {"__name__": "openrlhf.models.utils", "torch": torch, "Optional": Optional,
                                "Tuple": Tuple, "Union": Union}
    fw.exec_nodes(fw.pick_top_level(utils_tree, ["compute_reward"], utils_name), utils_ns, utils_name)

    logger = RecordingLogger()
    lp_tree, lp_name = fw.parse(sources, target, ORL_LENGTH_PENALTY)
    lp_ns: dict[str, Any] = {"__name__": "openrlhf.trainer.ppo_utils.length_penalty", "List": List,
                             "logger": logger}
    fw.exec_nodes(fw.pick_top_level(lp_tree, ORL_LP_PICKED, lp_name), lp_ns, lp_name)

    em_tree, em_name = fw.parse(sources, target, ORL_EXPERIENCE_MAKER)
    methods = [fw.pick_method(em_tree, "RemoteExperienceMaker", m, em_name)
               for m in ("compute_advantages_and_returns", "get_advantages_and_returns", "get_cumulative_returns")]
    ns: dict[str, Any] = {"__name__": "openrlhf.trainer.ppo_utils.experience_maker", "torch": torch,
                          "itertools": itertools, "List": List, "Tuple": Tuple, "Experience": OrlExperience,
                          "compute_reward": utils_ns["compute_reward"],
                          "apply_length_penalties": lp_ns["apply_length_penalties"], "logger": logger}
    fw.exec_nodes(methods, ns, em_name)
    caar = methods[0]
    whiten = [n for n in caar.body if isinstance(n, ast.If) and ast.unparse(n.test) == ORL_WHITEN_TEST]
    if len(whiten) != 1:
        raise SystemExit(f"{em_name}: expected one `if {ORL_WHITEN_TEST}:` in compute_advantages_and_returns")
    block = whiten[0]
    block_text = ast.unparse(block)
    for needle in ("var.clamp(min=1e-08).rsqrt()", ".float()", "no_std_norm"):
        if needle not in block_text:
            raise SystemExit(f"{em_name}: the whitening block no longer contains {needle!r}")
    group_text = ast.unparse([n for n in caar.body if isinstance(n, ast.If)
                              and ast.unparse(n.test) == "args.algo.advantage.estimator == 'rloo'"][0])
    if "rewards.std(-1, keepdim=True) + 1e-09" not in group_text:
        raise SystemExit(f"{em_name}: group_norm no longer divides by (std + 1e-9)")
    return types.SimpleNamespace(
        ns=ns, logger=logger, whiten_block=block, whiten_name=em_name,
        lines={m.name: [m.lineno, m.end_lineno] for m in methods},
        whiten_lines=[block.lineno, block.end_lineno])


def orl_args(estimator: str, n: int, gamma: float, no_std_norm: bool) -> types.SimpleNamespace:
    ns = types.SimpleNamespace
    return ns(algo=ns(advantage=ns(estimator=estimator, gamma=gamma, lambd=1.0, no_std_norm=no_std_norm)),
              rollout=ns(n_samples_per_prompt=n, max_new_tokens=None),
              reward=ns(clip_range=(-10.0, 10.0), overlong_buffer_len=None, overlong_penalty_factor=1.0,
                        stop_properly_penalty_coef=None),
              data=ns(max_len=None))


def orl_args_json(estimator: str, gamma: float, no_std_norm: bool) -> dict[str, Any]:
    return {"algo.advantage.estimator": estimator, "algo.advantage.gamma": gamma, "algo.advantage.lambd": 1.0,
            "algo.advantage.no_std_norm": no_std_norm, "rollout.n_samples_per_prompt": "per case (input n)",
            "reward.clip_range": [-10.0, 10.0], "reward.overlong_buffer_len": None,
            "reward.stop_properly_penalty_coef": None}


ORL_KL_COEF = 0.01  # --algo.kl.init_coef default; a FixedKLController's value
ORL_GROUP_LAYOUTS = (
    {"shape": [8, 5], "n": 4, "mask": "right", "padding": "junk", "deliberate": {}},
    {"shape": [6, 7], "n": 3, "mask": "right", "padding": "junk", "deliberate": {}},
    {"shape": [4, 3], "n": 2, "mask": "right", "padding": "clean", "deliberate": {}},
    {"shape": [6, 4], "n": 3, "mask": "right", "padding": "junk",
     "deliberate": {"g0": "zero_spread", "g1": "tie"}},
)
ORL_REINFORCE_LAYOUTS = (
    {"shape": [8, 5], "n": 4, "mask": "right", "padding": "junk", "deliberate": {}},
    {"shape": [6, 7], "n": 2, "mask": "interior", "padding": "junk", "deliberate": {}},
    {"shape": [4, 3], "n": 1, "mask": "right", "padding": "clean", "deliberate": {}},
    {"shape": [5, 6], "n": 1, "mask": "right", "padding": "junk", "deliberate": {}, "big_reward": 12.5},
)
ORL_WHITEN_LAYOUTS = (
    {"shape": [4, 6], "mask": "right", "padding": "junk"},
    {"shape": [3, 7], "mask": "interior", "padding": "junk"},
    {"shape": [5, 4], "mask": "right", "padding": "clean"},
    {"shape": [2, 5], "mask": "right", "padding": "junk"},
)


def orl_draw(gen: Any, layout: dict[str, Any]) -> dict[str, Any]:
    batch, width = layout["shape"]
    n = layout["n"]
    assert batch % n == 0
    mask = fw.mask_rows(gen, batch, width, layout["mask"])
    rewards = uniform(gen, (batch,), -1.0, 1.0)
    kl = uniform(gen, (batch, width), -0.2, 0.4)
    groups = {f"g{g}": list(range(g * n, (g + 1) * n)) for g in range(batch // n)}
    for src, dst in tie_rows(groups, layout["deliberate"]):
        rewards[dst] = rewards[src]
    if layout.get("big_reward") is not None:
        rewards[0] = layout["big_reward"]
    pad = JUNK if layout["padding"] == "junk" else 0.0
    kl = torch.where(mask, kl, torch.full_like(kl, pad))
    return {"rewards": rewards, "kl": kl, "action_mask": mask, "n_samples_per_prompt": n, "groups": groups}


def orl_whiten_draw(gen: Any, layout: dict[str, Any]) -> dict[str, Any]:
    batch, width = layout["shape"]
    mask = fw.mask_rows(gen, batch, width, layout["mask"])
    adv = uniform(gen, (batch, width), -2.0, 2.0)
    pad = JUNK if layout["padding"] == "junk" else 0.0
    return {"advantages": torch.where(mask, adv, torch.full_like(adv, pad)), "action_mask": mask}


def openrlhf_variants(target: fw.Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    ns = api.ns
    specs: list[dict[str, Any]] = []
    caar_name = "openrlhf.trainer.ppo_utils.experience_maker.RemoteExperienceMaker.compute_advantages_and_returns"

    def make_run(estimator: str, gamma: float, no_std_norm: bool) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def run(d: dict[str, Any]) -> dict[str, Any]:
            n = d["n_samples_per_prompt"]
            args = orl_args(estimator, n, gamma, no_std_norm)
            mask = d["action_mask"].to(torch.long)
            exp = OrlExperience(index=list(range(mask.shape[0])), rewards=d["rewards"].clone(), kl=d["kl"].clone(),
                                action_mask=mask, values=None, info={}, response_length=mask.sum(dim=1),
                                truncated=None, advantages=None, returns=None)
            fake = types.SimpleNamespace(strategy=types.SimpleNamespace(args=args), advantage_estimator=estimator,
                                         kl_ctl=types.SimpleNamespace(value=ORL_KL_COEF))
            fake.get_cumulative_returns = types.MethodType(ns["get_cumulative_returns"], fake)
            fake.get_advantages_and_returns = types.MethodType(ns["get_advantages_and_returns"], fake)
            api.logger.messages.clear()
            out = ns["compute_advantages_and_returns"](fake, [exp])
            assert len(out) == 1 and out[0] is exp
            result = {"advantages": exp.advantages, "returns": exp.returns, "info_return": exp.info["return"]}
            if "group_reward_std" in exp.info:
                result["info_group_reward_std"] = exp.info["group_reward_std"]
            result["logged_warnings"] = list(api.logger.messages)
            result["gamma_after"] = args.algo.advantage.gamma
            return result
        return run

    base = (
        "OpenRLHF RemoteExperienceMaker.compute_advantages_and_returns(self, [experience]) (fake self, one "
        "Experience with the whole batch; @torch.no_grad). Steps, as the code runs: apply_length_penalties (no-op: "
        "no overlong buffer, no stop-properly coef); rewards [B] reordered by experience.index (identity here) and "
        "viewed as [B/n, n] with n = n_samples_per_prompt (contiguous groups); info_group_reward_std = "
        "rewards.std(-1) (unbiased) repeated per row when n > 1; "
    )
    tail_return = (
        "then per experience compute_reward(shaped, kl_coef = kl_ctl.value = 0.01, kl, action_mask, "
        "reward_clip_range = (-10, 10)): the shaped scalar is clamped to [-10, 10] and scattered (as kl.dtype) to "
        "eos = T - 1 - argmax(fliplr(action_mask)) (the last action token), and -kl_coef * kl is added at EVERY "
        "position (padding included); returns = get_cumulative_returns(reward, action_mask, gamma): rewards = "
        "action_mask * reward, then backwards cum = reward_t + gamma * cum (cum starts as float32 zeros [B]) and "
        "returns_t = cum at every position (interior masked positions carry the running sum; right padding gets 0 "
        "because the masked rewards after the eos are 0); advantages = returns.clone(); info_return = "
        "reward.sum(-1) over ALL T positions (so -kl_coef * padding kl is included). "
    )
    whiten_text = (
        "Then token-level whitening over all experiences: all = cat(advantages.flatten()).float() (FLOAT32), m = "
        "cat(action_mask.flatten()) (int64), N = m.sum(); mean = sum(all * m) / N; {scale}; advantages = "
        "(advantages - mean) * rstd at every position, where mean and rstd are float32 0-dim tensors computed from the "
        "float32 copy while advantages itself stays float64 (so the result is float64 with float32 statistics). "
        "Padding positions become (0 - mean) * rstd (or the interior carry minus mean). "
    )
    scale_std = "var = sum((all - mean)^2 * m) / N (BIASED, /N); rstd = var.clamp(min=1e-8).rsqrt()"
    scale_none = "no_std_norm: rstd = 1 (Python int), centring only"
    group_specs = (
        ("group_norm", "group_norm", 1.0, False,
         "shaped = (R - mean_g) / (std_g + 1e-9) with torch.std (unbiased) over the n rows of the group (a "
         "zero-spread group gives 0 / (0 + 1e-9) = 0 when torch.mean returns the tied value exactly, as in these "
         "cases); ", False),
        ("group_norm:gamma=0.9", "group_norm", 0.9, False,
         "shaped = (R - mean_g) / (std_g + 1e-9) as group_norm; args.algo.advantage.gamma = 0.9 is overwritten "
         "to 1.0 (with a logged warning) before the returns, so the numbers equal group_norm's; ", False),
        ("dr_grpo", "dr_grpo", 1.0, False, "shaped = R - mean_g; ", False),
        ("rloo", "rloo", 1.0, False, "shaped = R - (sum_g R - R) / (n - 1); ", False),
        ("reinforce_baseline", "reinforce_baseline", 1.0, False, "shaped = R - mean_g; ", True),
        ("reinforce_baseline:no_std_norm", "reinforce_baseline", 1.0, True, "shaped = R - mean_g; ", True),
    )
    for name, est, gamma, nsn, shaping, whitened in group_specs:
        desc = base + shaping + tail_return
        if whitened:
            desc += whiten_text.format(scale=scale_none if nsn else scale_std)
        else:
            desc += f"No whitening for {est} (only gae, reinforce and reinforce_baseline are whitened). "
        specs.append({
            "name": name, "function": caar_name,
            "setting": {"args": orl_args_json(est, gamma, nsn), "kl_coef": ORL_KL_COEF, "experiences": 1,
                        "response_mask_dtype": "torch.int64", "rewards_dtype": "torch.float64",
                        "kl_dtype": "torch.float64"},
            "description": desc + "Inputs are float64 (in training OpenRLHF's rewards and kl arrive as float32).",
            "layouts": ORL_GROUP_LAYOUTS, "draw": orl_draw,
            "inputs": lambda d: {"rewards": d["rewards"], "kl": d["kl"], "action_mask": d["action_mask"],
                                 "n_samples_per_prompt": d["n_samples_per_prompt"]},
            "run": make_run(est, gamma, nsn), "padding_inputs": ["kl"], "grouped": True,
        })
    for gamma, nsn in ((1.0, False), (0.9, False), (0.9, True)):
        name = f"reinforce:gamma={gamma!r}" + (":no_std_norm" if nsn else "")
        desc = base + "shaped = R (no baseline); " + tail_return.replace("gamma)", f"gamma = {gamma!r})") + \
            whiten_text.format(scale=scale_none if nsn else scale_std)
        specs.append({
            "name": name, "function": caar_name,
            "setting": {"args": orl_args_json("reinforce", gamma, nsn), "kl_coef": ORL_KL_COEF, "experiences": 1,
                        "response_mask_dtype": "torch.int64", "rewards_dtype": "torch.float64",
                        "kl_dtype": "torch.float64"},
            "description": desc + "Inputs are float64 (in training OpenRLHF's rewards and kl arrive as float32).",
            "layouts": ORL_REINFORCE_LAYOUTS, "draw": orl_draw,
            "inputs": lambda d: {"rewards": d["rewards"], "kl": d["kl"], "action_mask": d["action_mask"],
                                 "n_samples_per_prompt": d["n_samples_per_prompt"]},
            "run": make_run("reinforce", gamma, nsn), "padding_inputs": ["kl"], "grouped": True,
        })

    block = api.whiten_block
    for nsn in (False, True):
        def run_w(d: dict[str, Any], nsn: bool = nsn) -> dict[str, Any]:
            mask = d["action_mask"].to(torch.long)
            exp = OrlExperience(advantages=d["advantages"].clone(), action_mask=mask)
            env = {"__name__": "openrlhf.trainer.ppo_utils.experience_maker",
                   "args": orl_args("reinforce", 1, 1.0, nsn), "experiences": [exp], "torch": torch}
            with torch.no_grad():
                fw.exec_statements([block], env, api.whiten_name)
            return {"advantages": exp.advantages}
        specs.append({
            "name": "whiten" + (":no_std_norm" if nsn else ""),
            "function": caar_name + " (the `if " + ORL_WHITEN_TEST + ":` block alone)",
            "setting": {"args": {"algo.advantage.estimator": "reinforce", "algo.advantage.no_std_norm": nsn},
                        "experiences": 1, "response_mask_dtype": "torch.int64", "advantages_dtype": "torch.float64"},
            "description": (
                "OpenRLHF's token-level advantage whitening: the `if " + ORL_WHITEN_TEST + ":` statement of "
                "compute_advantages_and_returns executed alone (free names args, experiences, torch) on one "
                "Experience holding the given float64 advantages and int64 action_mask. "
                + whiten_text.format(scale=scale_none if nsn else scale_std).replace(
                    "Padding positions become (0 - mean) * rstd (or the interior carry minus mean). ",
                    "Padding values are excluded from the statistics (multiplied by 0) but are whitened like "
                    "every other position, so padding junk reaches the output at those positions.")),
            "layouts": ORL_WHITEN_LAYOUTS, "draw": orl_whiten_draw,
            "inputs": lambda d: {"advantages": d["advantages"], "action_mask": d["action_mask"]},
            "run": run_w, "padding_inputs": ["advantages"], "grouped": False,
        })
    return specs


def openrlhf_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "picked_definitions": {
            ORL_EXPERIENCE_MAKER: [f"RemoteExperienceMaker.{m} (lines {v[0]}-{v[1]})" for m, v in sorted(api.lines.items())]
            + [f"the `if {ORL_WHITEN_TEST}:` block of compute_advantages_and_returns (lines "
               f"{api.whiten_lines[0]}-{api.whiten_lines[1]}), executed alone for the whiten variants"],
            fw.ORL_UTILS: ["compute_reward"],
            ORL_LENGTH_PENALTY: ORL_LP_PICKED,
        },
        "stubs": ORL_STUBS,
        "checked_source_text": ["(rewards.std(-1, keepdim=True) + 1e-09) in the group_norm branch",
                                "var.clamp(min=1e-08).rsqrt(), .float() and no_std_norm in the whitening block"],
    }


# --------------------------------------------------------------------------------------
# TRL
# --------------------------------------------------------------------------------------

TRL_BLOCK_FIRST = "num_generations = self.num_generations if mode == 'train' else self.num_generations_eval"
TRL_BLOCK_LAST = "advantages = torch.nan_to_num(advantages, nan=0.0)"
TRL_WEIGHTS_TEST = "args.reward_weights is not None"
TRL_ADV_CONFIG_FIELDS = ["scale_rewards", "multi_objective_aggregation", "reward_weights", "num_generations",
                         "num_generations_eval"]
TRL_STUBS = (
    "The advantage block (the statements of GRPOTrainer._generate_and_score_completions from `num_generations "
    "= ...` through `advantages = torch.nan_to_num(advantages, nan=0.0)`) runs in a namespace binding exactly "
    "its free names: self = a namespace with multi_objective_aggregation, scale_rewards, reward_weights, "
    "reward_funcs (K placeholders, only len() is read), num_generations and num_generations_eval; mode "
    "('train' or 'eval' per case); rewards_per_func (the case's [B, K] input; upstream _calculate_rewards "
    "builds it as float32 with None -> NaN, gathered over all processes); device = cpu; torch; nanstd picked "
    "from the pinned trl/trainer/utils.py. self.reward_weights comes from executing the `if "
    "args.reward_weights is not None:` statement of GRPOTrainer.__init__ (free names args, reward_funcs, self, "
    "torch), which builds a float32 tensor. self.scale_rewards comes from executing the `self.scale_rewards = "
    "{True: 'group', False: 'none'}.get(...)` statement of GRPOConfig.__post_init__ on the configured value. "
    "One process: the process slice that follows the block is the whole batch and is not executed."
)


def find_statement_range(body: list[ast.stmt], first: str, last: str, where: str) -> list[ast.stmt]:
    texts = [ast.unparse(s) for s in body]
    firsts = [i for i, t in enumerate(texts) if t == first]
    lasts = [i for i, t in enumerate(texts) if t == last]
    if len(firsts) != 1 or len(lasts) != 1 or lasts[0] < firsts[0]:
        raise SystemExit(f"{where}: cannot find the advantage block ({len(firsts)} starts, {len(lasts)} ends)")
    return body[firsts[0]: lasts[0] + 1]


def load_trl_adv(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    utils_tree, utils_name = fw.parse(sources, target, TRL_UTILS)
    utils_ns: dict[str, Any] = {"__name__": "trl.trainer.utils", "torch": torch}
    nanstd_node = fw.pick_top_level(utils_tree, ["nanstd"], utils_name)
    fw.exec_nodes(future_imports(utils_tree) + nanstd_node, utils_ns, utils_name)

    tree, filename = fw.parse(sources, target, fw.TRL_TRAINER)
    method = fw.pick_method(tree, "GRPOTrainer", "_generate_and_score_completions", filename)
    block = find_statement_range(method.body, TRL_BLOCK_FIRST, TRL_BLOCK_LAST, filename)
    block_text = "\n".join(ast.unparse(s) for s in block)
    if block_text.count("1e-4") + block_text.count("0.0001") < 1:
        raise SystemExit(f"{filename}: the advantage block no longer uses 1e-4")
    eps_sites = block_text.count("+ 0.0001)")
    init = fw.pick_method(tree, "GRPOTrainer", "__init__", filename)
    weights_if = [n for n in ast.walk(init) if isinstance(n, ast.If) and ast.unparse(n.test) == TRL_WEIGHTS_TEST]
    if len(weights_if) != 1:
        raise SystemExit(f"{filename}: expected one `if {TRL_WEIGHTS_TEST}:` in GRPOTrainer.__init__")

    config_tree, config_name = fw.parse(sources, target, fw.TRL_CONFIG)
    post = fw.pick_method(config_tree, "GRPOConfig", "__post_init__", config_name)
    legacy = [n for n in ast.walk(post) if isinstance(n, ast.Assign) and len(n.targets) == 1
              and ast.unparse(n.targets[0]) == "self.scale_rewards"]
    if len(legacy) != 1:
        raise SystemExit(f"{config_name}: expected one `self.scale_rewards = ...` in GRPOConfig.__post_init__")
    defaults = fw.dataclass_defaults(config_tree, "GRPOConfig", TRL_ADV_CONFIG_FIELDS, config_name)
    if defaults["num_generations"] != TRL_DEFAULT_NUM_GENERATIONS:
        raise SystemExit(f"{config_name}: GRPOConfig.num_generations default is {defaults['num_generations']}")
    return types.SimpleNamespace(
        nanstd=utils_ns["nanstd"], block=block, filename=filename, config_name=config_name,
        weights_if=weights_if[0], legacy=legacy[0], defaults=defaults,
        free=sorted(fw.free_globals(block)), eps_sites=eps_sites,
        block_lines=[block[0].lineno, block[-1].end_lineno], method_lines=[method.lineno, method.end_lineno],
        weights_lines=[weights_if[0].lineno, weights_if[0].end_lineno],
        legacy_lines=[legacy[0].lineno, legacy[0].end_lineno], legacy_text=ast.unparse(legacy[0]),
        nanstd_lines=[nanstd_node[0].lineno, nanstd_node[0].end_lineno],
        block_dump=ast.dump(ast.Module(body=block, type_ignores=[])))


def trl_run_block(api: types.SimpleNamespace, scale_rewards: Any, aggregation: str, weights: Optional[list[float]],
                  rewards_per_func: Any, num_generations: int, num_generations_eval: Optional[int],
                  mode: str) -> dict[str, Any]:
    k = rewards_per_func.shape[1]
    reward_funcs = [f"reward_func_{i}" for i in range(k)]
    conf = types.SimpleNamespace(scale_rewards=scale_rewards)
    fw.exec_statements([api.legacy], {"__name__": "trl.trainer.grpo_config", "self": conf}, api.config_name)
    owner = types.SimpleNamespace()
    fw.exec_statements([api.weights_if], {"__name__": "trl.trainer.grpo_trainer",
                                       "args": types.SimpleNamespace(reward_weights=weights),
                                       "reward_funcs": reward_funcs, "self": owner, "torch": torch}, api.filename)
    stub_self = types.SimpleNamespace(
        multi_objective_aggregation=aggregation, scale_rewards=conf.scale_rewards,
        reward_weights=owner.reward_weights, reward_funcs=reward_funcs,
        num_generations=num_generations, num_generations_eval=num_generations_eval)
    env = {"__name__": "trl.trainer.grpo_trainer", "self": stub_self, "mode": mode,
           "rewards_per_func": rewards_per_func.clone(), "device": torch.device("cpu"), "torch": torch,
           "nanstd": api.nanstd}
    with torch.no_grad():
        fw.exec_statements(api.block, env, api.filename)
    out = {"advantages": env["advantages"], "rewards": env["rewards"], "std_rewards": env["std_rewards"],
           "unscorable_mask": env["unscorable_mask"], "is_std_zero": env["is_std_zero"],
           "reward_weights_used": owner.reward_weights, "scale_rewards_effective": conf.scale_rewards}
    if "mean_grouped_rewards" in env:
        out["mean_grouped_rewards"] = env["mean_grouped_rewards"]
    return out


TRL_LAYOUTS = (
    {"k": 2, "group_size": 4, "prompts": 2, "mode": "train", "nan": [], "deliberate": {},
     "weights": [1.0, 0.5]},
    # row 2 unscorable (every reward NaN); rows 4 and 5 too, so row 3 is its group's only scorable row
    {"k": 3, "group_size": 3, "prompts": 2, "mode": "train",
     "nan": [[0, 2], [2, 0], [2, 1], [2, 2], [3, 1], [4, 0], [4, 1], [4, 2], [5, 0], [5, 1], [5, 2]],
     "deliberate": {}, "weights": [1.0, 0.5, 0.3]},
    {"k": 2, "group_size": 3, "prompts": 2, "mode": "train", "nan": [],
     "deliberate": {"g0": "zero_spread", "g1": "tie"}, "weights": [0.7, 0.3]},
    {"k": 2, "group_size": 1, "prompts": 3, "mode": "eval", "nan": [[1, 0], [1, 1]], "deliberate": {},
     "weights": None},
)


TRL_DEFAULT_NUM_GENERATIONS = 8  # GRPOConfig.num_generations default at both pins (asserted at load)


def trl_draw(gen: Any, layout: dict[str, Any], dtype: Any) -> dict[str, Any]:
    g = layout["group_size"]
    batch = g * layout["prompts"]
    values = uniform(gen, (batch, layout["k"]), -1.0, 1.0).to(dtype)
    groups = {f"g{p}": list(range(p * g, (p + 1) * g)) for p in range(layout["prompts"])}
    for src, dst in tie_rows(groups, layout["deliberate"]):
        values[dst] = values[src]
    for r, c in layout["nan"]:
        values[r, c] = float("nan")
    train = layout["mode"] == "train"
    return {"rewards_per_func": values, "groups": groups, "mode": layout["mode"], "reward_weights": layout["weights"],
            "num_generations": g if train else TRL_DEFAULT_NUM_GENERATIONS,
            "num_generations_eval": None if train else g, "group_size": g}


def trl_inputs(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d[k] for k in ("rewards_per_func", "reward_weights", "num_generations", "num_generations_eval", "mode")}


def trl_variants(target: fw.Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []
    fn = "trl.trainer.grpo_trainer.GRPOTrainer._generate_and_score_completions (advantage block)"
    common = (
        "TRL's advantage block of GRPOTrainer._generate_and_score_completions, executed alone, for one process. "
        "rewards_per_func [B, K] ({dtype}); w = self.reward_weights, a float32 tensor built by GRPOTrainer.__init__ "
        "(torch.tensor(reward_weights, float32), or ones(K) when reward_weights is None); G = num_generations in "
        "mode 'train', num_generations_eval in mode 'eval'; groups are contiguous blocks of G rows. unscorable_b = "
        "every reward of row b is NaN. "
    )
    nanstd_text = (
        "nanstd(x) = sqrt(nanmean((x - nanmean(x))^2) * c) with c = count / (count - 1) over the non-NaN entries "
        "(count is int64, so c is a float32 tensor) and c = NaN when count <= 1"
    )
    sum_text = {
        "group": "std_b = nanstd of the row's group (G > 1; std = zeros when G == 1); A = (R - mean_g) / (std_b + 1e-4)",
        "batch": "std = nanstd(R) over the whole batch (zeros when B == 1), while the centring stays the GROUP nanmean; "
                 "A = (R - mean_g) / (std + 1e-4)",
        "none": "A = R - mean_g (std_b = nanstd of the group is computed only for the is_std_zero metric)",
    }
    scale_settings = (("group", "group"), ("batch", "batch"), ("none", "none"), (True, "group"), (False, "none"))
    for dtype in (torch.float32, torch.float64):
        for given, effective in scale_settings:
            if dtype == torch.float64 and given != "group":
                continue
            label = f"legacy-{given}" if isinstance(given, bool) else given
            name = f"sum_then_normalize:scale_rewards={label}" + (":float64-rewards" if dtype == torch.float64 else "")
            legacy_note = (f"scale_rewards={given!r} is first mapped by GRPOConfig.__post_init__ "
                           f"({api.legacy_text}) to {effective!r}. " if isinstance(given, bool) else "")
            f64_note = ("NOT TRL's dtype: upstream rewards_per_func is always float32; this variant feeds float64 "
                        "rewards (the float32 weights then multiply float64 values) for a float64 model. "
                        if dtype == torch.float64 else "")

            def run(d: dict[str, Any], given: Any = given) -> dict[str, Any]:
                return trl_run_block(api, given, "sum_then_normalize", d["reward_weights"], d["rewards_per_func"],
                                     d["num_generations"], d["num_generations_eval"], d["mode"])
            specs.append({
                "name": name, "function": fn,
                "setting": {"multi_objective_aggregation": "sum_then_normalize", "scale_rewards": given,
                            "scale_rewards_effective": effective, "reward_weights": "per case (input)",
                            "num_processes": 1, "rewards_per_func_dtype": str(dtype), "epsilon": 1e-4},
                "description": (
                    common.format(dtype=str(dtype)) + legacy_note + f64_note +
                    "R_b = nansum_k(rewards_per_func[b, k] * w_k) (NaN entries skipped; a row with some NaN sums the "
                    "rest), then R_b = NaN for unscorable rows; mean_g = nanmean over the group (unscorable rows "
                    f"excluded); {sum_text[effective]}; {nanstd_text}. Finally advantages = nan_to_num(A, nan=0.0): an "
                    "unscorable row gets advantage 0.0, and so does every row of a group whose nanstd is NaN (a "
                    "group with a single scorable row) when the std is divided by. A zero-spread group gives exactly 0 "
                    "only when nanmean reproduces the tied value; with float32 rewards it can round off by an ulp, "
                    "and then std is ~1e-8 instead of 0 and A is a rounding residue (e.g. ~3e-4 under 'group' "
                    "scaling), not 0 (case 2 at some pins). Outputs: advantages [B] and the block's rewards, std_rewards, "
                    "mean_grouped_rewards, unscorable_mask and is_std_zero (isclose(std, 0), logging only)."),
                "layouts": TRL_LAYOUTS, "draw": lambda gen, layout, dtype=dtype: trl_draw(gen, layout, dtype),
                "inputs": trl_inputs,
                "run": run, "padding_inputs": [], "grouped": True, "trl": True,
            })

    def run_nts(d: dict[str, Any]) -> dict[str, Any]:
        return trl_run_block(api, "group", "normalize_then_sum", d["reward_weights"], d["rewards_per_func"],
                             d["num_generations"], d["num_generations_eval"], d["mode"])
    specs.append({
        "name": "normalize_then_sum", "function": fn,
        "setting": {"multi_objective_aggregation": "normalize_then_sum", "scale_rewards": "group (not read)",
                    "reward_weights": "per case (input)", "num_processes": 1,
                    "rewards_per_func_dtype": "torch.float32", "epsilon": 1e-4},
        "description": (
            common.format(dtype="torch.float32") +
            "multi_objective_aggregation 'normalize_then_sum' (GDPO): per reward function k and group, z = (r - "
            "nanmean_g(r)) / (nanstd_g(r) + 1e-4) (std_k = zeros when G == 1); R_b = nansum_k(z[b, k] * w_k); R_b = "
            "NaN for unscorable rows (a scorable row whose every z is NaN, e.g. the only scorable row of its group "
            "where nanstd is NaN, gets R = nansum = 0.0, not NaN, and so takes part in the batch statistics; case 1); "
            "then a BATCH-level A = (R - nanmean(R)) / (nanstd(R) + 1e-4) (std zeros when "
            f"B == 1); {nanstd_text}; advantages = nan_to_num(A, nan=0.0). scale_rewards is not read."),
        "layouts": TRL_LAYOUTS, "draw": lambda gen, layout: trl_draw(gen, layout, torch.float32),
        "inputs": trl_inputs,
        "run": run_nts, "padding_inputs": [], "grouped": True, "trl": True,
    })
    return specs


def trl_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "picked_definitions": {
            fw.TRL_TRAINER: [
                f"GRPOTrainer._generate_and_score_completions (lines {api.method_lines[0]}-{api.method_lines[1]}): "
                f"only its statements from `{TRL_BLOCK_FIRST}` through `{TRL_BLOCK_LAST}`, lines "
                f"{api.block_lines[0]}-{api.block_lines[1]}",
                f"GRPOTrainer.__init__: only its `if {TRL_WEIGHTS_TEST}:` statement, lines "
                f"{api.weights_lines[0]}-{api.weights_lines[1]}",
            ],
            fw.TRL_CONFIG: [f"GRPOConfig.__post_init__: only `{api.legacy_text}`, lines {api.legacy_lines[0]}-"
                            f"{api.legacy_lines[1]}"] + [f"GRPOConfig.{f} (default only)" for f in TRL_ADV_CONFIG_FIELDS],
            TRL_UTILS: [f"nanstd (lines {api.nanstd_lines[0]}-{api.nanstd_lines[1]})"],
        },
        "block_free_names": api.free,
        "config_defaults": dict(sorted(api.defaults.items())),
        "epsilon": "1e-4, the `+ 1e-4` of the block (checked in the source)",
        "epsilon_sites_in_block": api.eps_sites,
        "stubs": TRL_STUBS,
    }


# --------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------


def scores_of(spec: dict[str, Any], d: dict[str, Any]) -> list[list[float]]:
    """What the estimator groups on, for the no-accidental-tie rule (one list per checked quantity)."""
    if spec.get("trl"):
        x = d["rewards_per_func"].to(torch.float64)
        w = torch.tensor(d["reward_weights"] if d["reward_weights"] else [1.0] * x.shape[1], dtype=torch.float64)
        unscorable = torch.isnan(x).all(dim=1)
        weighted = torch.where(unscorable, torch.full_like(x[:, 0], float("nan")), (torch.nan_to_num(x, nan=0.0)
                                                                                    * w).sum(dim=1))
        cols = [x[:, k].tolist() for k in range(x.shape[1])] + [weighted.tolist()]
        # NaN entries are not scores: give each a distinct far-away sentinel so they never count as ties
        return [[v if not math.isnan(v) else 1e3 * (i + 1) for i, v in enumerate(c)] for c in cols]
    if "rewards" in d:
        return [d["rewards"].tolist()]
    if spec.get("gdpo"):
        return [d["components"][:, k].tolist() for k in range(d["components"].shape[1])]
    return [d["token_level_rewards"].sum(dim=-1).tolist()]


def draw_case(spec: dict[str, Any], target: fw.Target, i: int) -> tuple[int, dict[str, Any], dict[str, Any]]:
    layout = spec["layouts"][i]
    for attempt in range(MAX_REDRAWS):
        seed = seeded(spec["name"], target, i, attempt)
        gen = torch.Generator().manual_seed(seed)
        d = spec["draw"](gen, layout)
        if d.get("components") is not None:
            d["reward_components"] = d["components"]
        if not spec["grouped"]:
            return seed, layout, d
        groups = d["groups"]
        allowed = deliberate_pairs(groups, layout.get("deliberate", {}))
        if all(no_accidental_tie(s, groups, allowed) for s in scores_of(spec, d)):
            return seed, layout, d
    raise SystemExit(f"{spec['name']}: no tie-free draw in {MAX_REDRAWS} attempts")


def mask_of(d: dict[str, Any]) -> Any:
    return d["response_mask"] if "response_mask" in d else d["action_mask"]


def outputs_json(out: dict[str, Any]) -> dict[str, Any]:
    return {k: to_json(v) for k, v in sorted(out.items())}


def dtypes_of(out: dict[str, Any]) -> dict[str, str]:
    return {k: str(v.dtype) for k, v in sorted(out.items()) if torch.is_tensor(v)}


def record_variant(target: fw.Target, spec: dict[str, Any]) -> dict[str, Any]:
    cases = []
    dtypes: Optional[dict[str, str]] = None
    for i in range(len(spec["layouts"])):
        seed, layout, d = draw_case(spec, target, i)
        out = spec["run"](d)
        out_again = spec["run"](d)
        for key in out:
            if not same(out[key], out_again[key]):
                raise AssertionError(f"{spec['name']}:{i}: {key} differs between two identical runs")
        dtypes = dtypes or {}
        for key, dt in dtypes_of(out).items():
            if dtypes.setdefault(key, dt) != dt:
                raise AssertionError(f"{spec['name']}:{i}: output {key} is {dt}, another case gave {dtypes[key]}")
        inputs = {}
        for k, v in spec["inputs"](d).items():
            if k in ("response_mask", "action_mask"):
                inputs[k] = v.bool().tolist()
            else:
                inputs[k] = to_json(v)
        case: dict[str, Any] = {"seed": seed, "layout": to_layout_json(layout), "inputs": inputs,
                                "outputs": outputs_json(out)}
        if spec["padding_inputs"]:
            probe = dict(d)
            pad_pos = ~mask_of(d)
            for k in spec["padding_inputs"]:
                probe[k] = torch.where(pad_pos, torch.full_like(d[k], PROBE_JUNK), d[k])
            out_probe = spec["run"](probe)
            kinds = {k: diff_kind(out[k], out_probe[k]) for k in out}
            affects = sorted(k for k, v in kinds.items() if v == "value")
            pad_value = JUNK if layout["padding"] == "junk" else 0.0
            case["padding_value"] = pad_value
            case["padding_inputs"] = list(spec["padding_inputs"])
            case["padding_affects"] = affects
            case["padding_affects_zero_sign_only"] = sorted(k for k, v in kinds.items() if v == "zero_sign")
            case["junk_reaches_output"] = bool(pad_value != 0.0 and affects)
        cases.append(case)
    return {
        "framework": target.framework,
        "pin": target.label,
        "commit": target.commit,
        "name": spec["name"],
        "function": spec["function"],
        "called_via": spec.get("called_via"),
        "setting": spec["setting"],
        "description": spec["description"],
        "dtypes": dict(sorted((dtypes or {}).items())),
        "cases": cases,
    }


def to_layout_json(layout: dict[str, Any]) -> dict[str, Any]:
    return {k: (dict(sorted(v.items())) if isinstance(v, dict) else v) for k, v in sorted(layout.items())}


# --------------------------------------------------------------------------------------
# Independent re-computation of the descriptions (asserted, not recorded)
# --------------------------------------------------------------------------------------


def close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    a = a.to(torch.float64)
    b = b.to(torch.float64)
    nan = torch.isnan(a) & torch.isnan(b)
    return bool((nan | (torch.abs(a - b) <= atol + rtol * torch.abs(b))).all())


def ref_whiten(x: Any, m: Any, shift_mean: bool = True) -> Any:
    mf = m.to(torch.float64)
    n = mf.sum()
    mean = (x * mf).sum() / n
    var = (((x - mean) ** 2) * mf).sum() / n * n / (n - 1)
    w = (x - mean) / torch.sqrt(var + 1e-8)
    return w if shift_mean else w + mean


def ref_verl(name: str, d: dict[str, Any]) -> Optional[Any]:
    """The advantages the description says, in plain float64 (None: not re-computed)."""
    m = d.get("response_mask")
    mf = m.to(torch.float64) if m is not None else None
    if name.startswith("masked_whiten"):
        return ref_whiten(d["values"], m, "shift_mean=True" in name)
    if name.startswith("reinforce_plus_plus:") or name == "remax":
        return None  # pin-dependent recurrences; checked through their returns below
    s = d["token_level_rewards"].sum(dim=-1)
    groups = groups_of(d["index"])
    a = torch.zeros_like(s)
    if name.startswith("grpo_vectorized:"):
        # float32 statistics, as group_mean_std computes them
        for rows in groups.values():
            v = s[rows].to(torch.float32)
            n = len(rows)
            mean = v.sum() / n if n > 1 else torch.tensor(0.0)
            std = torch.sqrt(((v - mean) ** 2).sum() / (n - 1)) if n > 1 else torch.tensor(1.0)
            for r in rows:
                a[r] = (s[r] - mean) / (std + 1e-6) if "True" in name else s[r] - mean
        return a.unsqueeze(-1) * mf
    for rows in groups.values():
        v = s[rows]
        n = len(rows)
        mean = v.mean() if n > 1 else torch.tensor(0.0, dtype=torch.float64)
        std = v.std() if n > 1 else torch.tensor(1.0, dtype=torch.float64)
        for j, r in enumerate(rows):
            if name.startswith("grpo:") or name.startswith("grpo_vectorized:"):
                a[r] = (s[r] - mean) / (std + 1e-6) if "True" in name else s[r] - mean
            elif name == "rloo":
                a[r] = s[r] if n == 1 else (s[r] - mean) * n / (n - 1)
            elif name == "rloo_vectorized":
                a[r] = 0.0 if n == 1 else (s[r] - mean) * n / (n - 1)
            elif name == "opo":
                if n == 1:
                    a[r] = s[r]
                else:
                    lens = mf[rows].sum(dim=1)
                    a[r] = s[r] - (lens * v).sum() / lens.sum()
            elif name == "gpg":
                alpha = len(s) / max(int((s != 0).sum()), 1)
                a[r] = alpha * (s[r] - mean)
            elif name == "reinforce_plus_plus_baseline":
                a[r] = s[r] - mean
            elif name.startswith("grpo_passk"):
                top = torch.sort(v, descending=True).values
                best = rows[int(torch.argmax(v))]
                gap = top[0] - top[1]
                if "True" in name:
                    gap = gap / (v.std() + 1e-6)
                a[r] = gap if (r == best or gap == 0) else 0.0
            elif name.startswith("gdpo"):
                return None
    if name == "reinforce_plus_plus_baseline":
        return ref_whiten(a.unsqueeze(-1) * mf, m) * mf
    return a.unsqueeze(-1) * mf


def ref_verl_returns(name: str, d: dict[str, Any], carries: bool) -> Optional[Any]:
    if not (name.startswith("reinforce_plus_plus:") or name == "remax"):
        return None
    r = d["token_level_rewards"]
    mf = d["response_mask"].to(torch.float64)
    if name == "remax":
        return torch.flip(torch.cumsum(torch.flip(r * mf, [1]), 1), [1])
    gamma = float(name.split("=")[1])
    out = torch.zeros_like(r)
    run = torch.zeros(r.shape[0], dtype=torch.float64)
    for t in reversed(range(r.shape[1])):
        new = r[:, t] + gamma * run
        if carries:
            out[:, t] = new * mf[:, t]
            run = new * mf[:, t] + run * (1 - mf[:, t])
        else:
            out[:, t] = new
            run = new * mf[:, t]
    return out


def ref_openrlhf(name: str, d: dict[str, Any]) -> Any:
    m = d["action_mask"].to(torch.float64)
    if name.startswith("whiten"):
        a = d["advantages"]
        n = m.sum()
        mean = (a * m).sum() / n
        if "no_std_norm" in name:
            return a - mean
        var = (((a - mean) ** 2) * m).sum() / n
        return (a - mean) / torch.sqrt(torch.clamp(var, min=1e-8))
    n_s = d["n_samples_per_prompt"]
    r = d["rewards"].reshape(-1, n_s)
    est = name.split(":")[0]
    if est == "group_norm":
        r = (r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True) + 1e-9)
    elif est in ("dr_grpo", "reinforce_baseline"):
        r = r - r.mean(-1, keepdim=True)
    elif est == "rloo":
        r = r - (r.sum(-1, keepdim=True) - r) / (n_s - 1)
    r = torch.clamp(r.reshape(-1), -10, 10)
    gamma = 0.9 if (est == "reinforce" and "0.9" in name) else 1.0
    tok = -ORL_KL_COEF * d["kl"]
    for b, t in enumerate(fw.last_positions(d["action_mask"])):
        tok[b, t] = tok[b, t] + r[b]
    tok = tok * m
    ret = torch.zeros_like(tok)
    cum = torch.zeros(tok.shape[0], dtype=torch.float64)
    for t in reversed(range(tok.shape[1])):
        cum = tok[:, t] + gamma * cum
        ret[:, t] = cum
    if est in ("reinforce", "reinforce_baseline"):
        n = m.sum()
        mean = (ret * m).sum() / n
        if "no_std_norm" in name:
            return ret - mean
        var = (((ret - mean) ** 2) * m).sum() / n
        return (ret - mean) / torch.sqrt(torch.clamp(var, min=1e-8))
    return ret


def ref_trl(name: str, d: dict[str, Any]) -> Any:
    x = d["rewards_per_func"].to(torch.float64)
    k = x.shape[1]
    w = torch.tensor(d["reward_weights"] if d["reward_weights"] else [1.0] * k, dtype=torch.float32).to(torch.float64)
    g = d["group_size"]
    unscorable = torch.isnan(x).all(dim=1)

    def nstd(v: Any) -> Any:
        keep = v[~torch.isnan(v)]
        return keep.std() if keep.numel() > 1 else torch.tensor(float("nan"), dtype=torch.float64)

    if name == "normalize_then_sum":
        z = torch.zeros_like(x)
        for p in range(x.shape[0] // g):
            for c in range(k):
                v = x[p * g:(p + 1) * g, c]
                sd = nstd(v) if g > 1 else torch.tensor(0.0, dtype=torch.float64)
                z[p * g:(p + 1) * g, c] = (v - torch.nanmean(v)) / (sd + 1e-4)
        rr = torch.nansum(z * w, dim=1)
        rr[unscorable] = float("nan")
        sd = nstd(rr) if rr.numel() > 1 else torch.tensor(0.0, dtype=torch.float64)
        return torch.nan_to_num((rr - torch.nanmean(rr)) / (sd + 1e-4), nan=0.0)
    rr = torch.nansum(x * w, dim=1)
    rr[unscorable] = float("nan")
    a = torch.zeros_like(rr)
    scale = name.split("scale_rewards=")[1].split(":")[0]
    scale = {"legacy-True": "group", "legacy-False": "none"}.get(scale, scale)
    batch_sd = nstd(rr) if rr.numel() > 1 else torch.tensor(0.0, dtype=torch.float64)
    for p in range(rr.shape[0] // g):
        v = rr[p * g:(p + 1) * g]
        centred = v - torch.nanmean(v)
        if scale == "group":
            sd = nstd(v) if g > 1 else torch.tensor(0.0, dtype=torch.float64)
            centred = centred / (sd + 1e-4)
        elif scale == "batch":
            centred = centred / (batch_sd + 1e-4)
        a[p * g:(p + 1) * g] = centred
    return torch.nan_to_num(a, nan=0.0)


def cross_check(target: fw.Target, spec: dict[str, Any], variant: dict[str, Any], carries: bool) -> None:
    """Re-draw each case and compare the upstream result with the description's formula."""
    for i in range(len(spec["layouts"])):
        _, _, d = draw_case(spec, target, i)
        out = spec["run"](d)
        name = spec["name"]
        if target.framework == "verl":
            ref = ref_verl(name, d)
            key = "whitened" if name.startswith("masked_whiten") else "advantages"
            if ref is not None and not close(out[key], ref, 1e-5, 1e-6):
                raise AssertionError(f"{target.label}:{name}:{i}: upstream differs from the description")
            ret = ref_verl_returns(name, d, carries)
            if ret is not None and not close(out["returns"], ret, 1e-12, 1e-12):
                raise AssertionError(f"{target.label}:{name}:{i}: returns differ from the description")
        elif target.framework == "openrlhf":
            ref = ref_openrlhf(name, d)
            if not close(out["advantages"], ref, 1e-5, 1e-6):
                raise AssertionError(f"{target.label}:{name}:{i}: upstream differs from the description")
        else:
            ref = ref_trl(name, d)
            keep = torch.ones(ref.shape[0], dtype=torch.bool)
            if d["rewards_per_func"].dtype == torch.float32:
                # float32 nanmean of identical values can round away from them: a zero-spread group's
                # advantage is then a rounding residue (recorded as upstream gives it), not 0
                layout = spec["layouts"][i]
                for g, kind in layout["deliberate"].items():
                    if kind == "zero_spread":
                        keep[d["groups"][g]] = False
            if not close(out["advantages"][keep], ref[keep], 1e-5, 1e-5):
                raise AssertionError(f"{target.label}:{name}:{i}: upstream differs from the description")


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------

# Every requested estimator exists at both pins of its framework, so `skipped` holds only these
# deliberate omissions (pin "all"); a definition missing at a pin would add an entry per pin.
NOT_RECORDED = [
    {"framework": "verl", "pin": "all", "variant": "gae",
     "reason": "not recorded here: GAE is value-based (not requested for this file)"},
    {"framework": "verl", "pin": "all", "variant": "optimal_token_baseline, tir_optimal_token_baseline",
     "reason": "not recorded: they need old_log_probs and sum_pi_squared (a full-vocabulary statistic)"},
    {"framework": "openrlhf", "pin": "all", "variant": "gae",
     "reason": "not recorded here: GAE is value-based (not requested for this file)"},
    {"framework": "trl", "pin": "all", "variant": "multi-process slicing",
     "reason": "one process only: the process slice after the advantage block is the whole batch"},
]


def main() -> None:
    global torch, np
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verl-git", default=os.environ.get("VERL_GIT"),
                        help="git directory of verl-project/verl (default: $VERL_GIT)")
    parser.add_argument("--openrlhf-git", default=os.environ.get("OPENRLHF_GIT"),
                        help="git directory of OpenRLHF/OpenRLHF (default: $OPENRLHF_GIT)")
    parser.add_argument("--trl-git", default=os.environ.get("TRL_GIT"),
                        help="git directory of huggingface/trl (default: $TRL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    git_dirs = {"verl": args.verl_git, "openrlhf": args.openrlhf_git, "trl": args.trl_git}
    for name, value in git_dirs.items():
        if not value:
            parser.error(f"--{name}-git (or ${name.upper()}_GIT) is required")

    import numpy as _np  # noqa: PLC0415
    import torch as _torch  # noqa: PLC0415
    torch = _torch
    np = _np
    fw.torch = _torch  # frameworks.py's helpers read its module global
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    for name, env in (("verl", "VERL_GIT"), ("openrlhf", "OPENRLHF_GIT"), ("trl", "TRL_GIT")):
        if f"--{name}-git" not in " ".join(sys.argv[1:]):
            command = f"{env}={shlex.quote(git_dirs[name])} {command}"

    pins: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    variants: list[dict[str, Any]] = []
    block_dumps: dict[str, str] = {}
    for target in fw.TARGETS:
        git_dir = fw.git_dir_of(Path(git_dirs[target.framework]).resolve())
        sources, files = fw.pinned_sources_for(git_dir, target, USED_FILES, EXTRA_FILES)
        carries = False
        if target.framework == "verl":
            api = load_verl_adv(target, sources)
            specs, skip = verl_variants(target, api)
            prov = verl_provenance(api)
            carries = api.rpp_carries
            for s in skip:
                skipped.append({"framework": target.framework, "pin": target.label, "commit": target.commit, **s})
        elif target.framework == "openrlhf":
            api = load_openrlhf_adv(target, sources)
            specs, prov = openrlhf_variants(target, api), openrlhf_provenance(api)
        else:
            api = load_trl_adv(target, sources)
            specs, prov = trl_variants(target, api), trl_provenance(api)
            block_dumps[target.label] = api.block_dump
        pins.append({"framework": target.framework, "repo": f"https://github.com/{target.repo}",
                     "commit": target.commit, "label": target.label, "tag": target.tag, "role": target.role,
                     "files": [{"path": p, "sha256": s} for p, s in sorted(files.items())], **prov,
                     "variants": [s["name"] for s in specs]})
        for spec in specs:
            variant = record_variant(target, spec)
            cross_check(target, spec, variant, carries)
            variants.append(variant)

    provenance = {
        "tool": TOOL_PATH,
        "command": command,
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "dtype": "float64 inputs, except TRL rewards_per_func (float32, as TRL builds it) and verl gdpo's "
                 "reward components (cast to float32 by upstream); per-variant output dtypes in variants[].dtypes",
        "pins": pins,
        "loading": LOADING_RULE,
        "seed_rule": SEED_RULE,
        "input_rule": INPUT_RULE,
        "junk_rule": JUNK_RULE,
        "json_rule": JSON_RULE,
        "cross_check": (
            "Not recorded, asserted: for every case the recorder re-computes the advantages from the variant's "
            "description in plain float64 torch and requires agreement within rtol 1e-5 / atol 1e-6 (1e-5 for "
            "TRL; float32 statistics upstream), and for verl reinforce_plus_plus / remax the returns within 1e-12; "
            "gdpo is not re-computed. Every case is also run twice and required to be bitwise identical."
        ),
        "trl_advantage_block_identical_across_pins": len(set(block_dumps.values())) == 1,
    }
    skipped.extend(NOT_RECORDED)
    out = Path(args.out)
    fw.write_json(out, {"provenance": provenance, "variants": variants, "skipped": skipped})
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(variants)} variants, "
          f"{sum(len(v['cases']) for v in variants)} cases)")
    for p in pins:
        print(f"pin {p['framework']}@{p['label']}: {len(p['variants'])} variants")
    for s in skipped:
        print(f"skipped {s['framework']}@{s['pin']} {s['variant']}: {s['reason']}")


if __name__ == "__main__":
    main()
