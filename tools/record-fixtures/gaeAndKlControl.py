#!/usr/bin/env python3
"""Record numeric fixtures of GAE and the KL controllers of verl and OpenRLHF.

This recorder runs the real GAE and KL-controller code of verl and OpenRLHF at both pins of each
framework in ``frameworks.TARGETS``, on small seeded float64 batches (GAE) and hand-written step
sequences (controllers), and writes only numbers plus provenance to
``test/fixtures/frameworks/gae-kl-control.json``:

- verl: ``compute_gae_advantage_return`` of ``verl/trainer/ppo/core_algos.py`` (called as
  ``ray_trainer.compute_advantage`` calls it), with ``verl_F.masked_whiten`` from the pinned
  ``torch_functional.py``; the recursion block of that function (the statements from
  ``nextvalues = 0`` through ``advantages = torch.stack(...)``) is also executed alone to record
  the advantages before the function's internal whitening. ``AdaptiveKLController`` and
  ``FixedKLController``, constructed through ``get_kl_controller`` and updated with the keyword
  call of ``ray_trainer.apply_kl_penalty``.
- OpenRLHF: ``RemoteExperienceMaker.get_advantages_and_returns`` called as a plain function with a
  fake ``self``; ``AdaptiveKLController`` / ``FixedKLController`` of
  ``openrlhf/trainer/ppo_utils/kl_controller.py``, constructed by executing the ``if
  self.args.algo.kl.target:`` statement of ``BasePPOTrainer.__init__`` alone and updated with the
  positional call of ``BasePPOTrainer.train_step``.

No framework code is copied into this repository. Everything upstream is loaded the way
``frameworks.py`` loads it, with its helpers (imported as a module): each pinned file is read with
``git --git-dir=<dir> show <commit>:<path>`` in memory, its SHA-256 is checked (against
``frameworks.TARGETS`` for the files listed there, against ``EXTRA_FILES`` below for the others)
before anything is parsed, it is parsed with ``ast``, and only the needed definitions or
statements are compiled (with the upstream file name and line numbers) and executed with real
torch and numpy, in namespaces that bind the names they read (checked before execution).

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/gaeAndKlControl.py \\
        --verl-git /path/to/verl.git --openrlhf-git /path/to/OpenRLHF.git

Output (JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs):

    test/fixtures/frameworks/gae-kl-control.json
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import platform
import shlex
import sys
import types
from collections import defaultdict
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Optional, Tuple

sys.dont_write_bytecode = True  # importing frameworks.py must not leave a __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import frameworks as fw  # noqa: E402  (the sibling recorder, guarded by `if __name__ == "__main__"`)

TOOL_PATH = "tools/record-fixtures/gaeAndKlControl.py"
DEFAULT_OUT = fw.REPO_ROOT / "test" / "fixtures" / "frameworks" / "gae-kl-control.json"

# --------------------------------------------------------------------------------------
# Pinned upstream identity: files beyond frameworks.TARGETS, same pins
# --------------------------------------------------------------------------------------

VERL_RAY_TRAINER = "verl/trainer/ppo/ray_trainer.py"
ORL_EXPERIENCE_MAKER = "openrlhf/trainer/ppo_utils/experience_maker.py"
ORL_KL_CONTROLLER = "openrlhf/trainer/ppo_utils/kl_controller.py"
ORL_PPO_TRAINER = "openrlhf/trainer/ppo_trainer.py"

EXTRA_FILES = {
    "74a718a492092312f1004fe25369975137388849": {
        VERL_RAY_TRAINER: "e636912ae2be46b6ff7152f6473feab3af5db962f744903dc55f7d26d58d7d73",
    },
    "1dda039b9c6311889a9c9a26040677e1254814f9": {
        VERL_RAY_TRAINER: "eb41f99ccc66976eab14ebe35aa1aa5b7318e02469240ef1569ac4c884c94312",
    },
    "bc71bb19464aca306b33080b2d2bb45d154e2f49": {
        ORL_EXPERIENCE_MAKER: "435c748a5b8043026426d6d48319f4343d7fe4d4253769fdeb940ed7cdc0b769",
        ORL_KL_CONTROLLER: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        ORL_PPO_TRAINER: "55ab0902b650b6823fbb9658dd9c2a8019518b6518f268b9bfcd64007a4da90f",
    },
    "3c3be6234e0cb353e76bb8019947db9dfe99fca7": {
        ORL_EXPERIENCE_MAKER: "435c748a5b8043026426d6d48319f4343d7fe4d4253769fdeb940ed7cdc0b769",
        ORL_KL_CONTROLLER: "c361744647ed284507c4643a68c06ac6056c0d6f1c575a036f8d1e0050abe30c",
        ORL_PPO_TRAINER: "018793477824576836bd6b4007502126785f9c9eb8d71a59e3d2cb30ec3020c6",
    },
}
USED_FILES = {
    "verl": [fw.VERL_CORE, fw.VERL_TF, VERL_RAY_TRAINER],
    "openrlhf": [ORL_EXPERIENCE_MAKER, ORL_KL_CONTROLLER, ORL_PPO_TRAINER],
}

# --------------------------------------------------------------------------------------
# Recording rules
# --------------------------------------------------------------------------------------

JUNK = 123.0  # value at masked positions of values and rewards in junk cases
PROBE_JUNK = -7.25  # the padding probe re-runs each case with this value at the same positions
CLIP = 0.2  # the proportional-error clip of both controllers (checked in the source)
EDGE_MARGIN = 1e-9  # every step's proportional error keeps this distance from +-CLIP

GAMMA_LAMS = ((1.0, 1.0), (0.99, 0.95), (0.9, 0.5))
MASK_KINDS = ("right", "interior")
GAE_LAYOUTS = {
    "right": (
        {"shape": [4, 6], "mask": "right", "padding": "junk"},
        {"shape": [3, 8], "mask": "right", "padding": "junk"},
        {"shape": [5, 3], "mask": "right", "padding": "clean"},
        {"shape": [2, 7], "mask": "right", "padding": "junk"},
    ),
    "interior": (
        {"shape": [3, 7], "mask": "interior", "padding": "junk"},
        {"shape": [4, 8], "mask": "interior", "padding": "junk"},
        {"shape": [2, 5], "mask": "interior", "padding": "clean"},
        {"shape": [5, 6], "mask": "interior", "padding": "junk"},
    ),
}

# Controller cases: (init_kl_coef, target_kl, horizon, [(current_kl, n_steps), ...]). Hand-written so that
# the +-0.2 clip of the proportional error binds in some steps and not in others (asserted per case), with
# negative and zero KL estimates, an exactly-on-target step, and (case 3) one step where
# proportional_error * n_steps / horizon < -1, so the multiplier is negative.
KL_CASES = (
    (0.1, 6.0, 10000, [(0.0, 256), (6.6, 256), (9.0, 256), (5.4, 256), (7.5, 256), (4.2, 256), (6.0, 256)]),
    (0.05, 0.1, 500, [(0.15, 64), (0.11, 64), (0.02, 64), (0.095, 64), (-0.03, 64), (0.13, 64), (0.1, 64),
                      (0.085, 64)]),
    (0.1, 0.1, 10000, [(0.3, 512), (0.1075, 1024), (0.05, 128), (0.0915, 2048), (0.25, 4096)]),
    (0.05, 6.0, 500, [(3.0, 1024), (6.9, 1024), (1.5, 2600), (12.0, 2048), (5.7, 512), (0.6, 700)]),
)
FIXED_COEFS = (0.1, 0.05, 0.001, 0.0)

SEED_RULE = (
    "GAE: seed = zlib.crc32(f'{framework}@{label}:gae-kl:{variant}:{i}'.encode()) & 0x7FFFFFFF "
    "(frameworks.case_seed with variant 'gae-kl:<variant>') for case i = 0..3 of a variant; every draw comes "
    "from torch.Generator().manual_seed(seed) on CPU in float64 (uniforms are low + (high - low) * "
    "torch.rand(shape, generator=gen, dtype=float64), integers frameworks.randint). No case is redrawn. The TS "
    "side cannot replay torch's RNG: seeds are provenance only, every input is embedded in the file. KL "
    "controllers: hand-written step sequences, seed null."
)
INPUT_RULE = (
    "GAE cases: the layout (shape [B, T], mask kind, padding) is fixed per case index (see the case's layout "
    "field; B 2..5, T 3..8). Draw order: mask, values, dense rewards, outcome. 'right' masks are right-padded "
    "with row lengths randint(1..T) (if every row has length T, a random row gets randint(1..T-1)); "
    "'interior' masks (multi-turn: observation spans inside the response) have row lengths randint(3..T) "
    "(same fix-up with randint(3..T-1)) and, in every row with probability 1/2 and in one randomly chosen row "
    "always, a zero span [s, e) with s = randint(1..L-2), e = randint(s+1..L-1), so the first and last "
    "response tokens are kept and every span lies strictly inside the response. values ~ U[-1, 1]; rewards = "
    "U[-0.1, 0.1] on every response token (a per-token KL-penalty-like term) plus an outcome U[-1, 1] added "
    "at the last response token. Positions where the mask is 0 (right padding and interior spans) hold "
    "123.0 ('junk') or 0.0 ('clean') in BOTH values and rewards, as layout.padding says (cases 0, 1, 3 junk, "
    "case 2 clean). KL-controller cases: (init_kl_coef, target_kl, horizon) and the step inputs "
    "(current_kl, n_steps) are hand-written (KL_CASES in the recorder); per step the case's clip_binds entry "
    "says whether |current_kl / target_kl - 1| > 0.2 (computed by the recorder from the inputs in float64, not "
    "an upstream output); every step's current_kl / target_kl - 1 is asserted to be more than 1e-9 away from "
    "+-0.2, and every adaptive case has at least one binding and one non-binding step. Fixed-controller cases "
    "reuse the step sequences of the adaptive cases with kl_coef 0.1, 0.05, 0.001, 0.0."
)
JUNK_RULE = (
    "padding_value is the value stored at masked positions of the case's token-level inputs (those listed in "
    "padding_inputs: values and rewards). The recorder re-runs the same case with -7.25 at exactly those "
    "positions: padding_affects lists the outputs whose values change (-0.0 equal to 0.0); "
    "padding_affects_zero_sign_only lists the outputs where only the sign of some zeros changes (upstream "
    "multiplies a padding-derived value by a 0 mask, and x * 0 is -0.0 for negative x); junk_reaches_output "
    "is true when padding_value is 123.0 and padding_affects is not empty. Only finite junk is used: both "
    "GAE implementations multiply masked values by 0, so NaN/Inf padding would poison every output through "
    "NaN * 0 = NaN, and that is not recorded. KL-controller cases carry none of these fields."
)
JSON_RULE = (
    "JSON indent=1 with sorted keys; finite floats are Python repr (shortest round-trip float64); "
    "non-finite floats would be the strings 'NaN', 'Infinity', '-Infinity' (none occurs: every output is "
    "asserted finite); masks are booleans (the dtype passed upstream is in setting.response_mask_dtype); "
    "signed zeros are kept (-0.0). Each variant's dtypes field gives the torch dtype of every recorded tensor "
    "output; controller values are recorded as float64 whatever their Python type (value_types lists the "
    "type name after construction and after each update)."
)
LOADING_RULE = fw.LOADING_RULE + (
    " Files outside frameworks.TARGETS (verl/trainer/ppo/ray_trainer.py, "
    "openrlhf/trainer/ppo_utils/experience_maker.py, kl_controller.py and openrlhf/trainer/ppo_trainer.py) are "
    "pinned in this recorder's EXTRA_FILES with the same check. ray_trainer.py is only parsed (never executed) "
    "to assert the calls it makes (checked_source_text). Inline upstream logic (verl's GAE recursion block and "
    "OpenRLHF's controller-selection `if` statement) is found with ast, compiled alone with the upstream file "
    "name and line numbers, and executed in a namespace binding exactly its free names (asserted)."
)

torch: Any = None  # populated in main()
np: Any = None


# --------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------


def require_call(tree: ast.AST, text: str, where: str) -> int:
    """Assert that ``tree`` contains exactly one call whose unparsed text is ``text``; its line."""
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n) == text]
    if len(hits) != 1:
        raise SystemExit(f"{where}: expected one call `{text}`, found {len(hits)}")
    return hits[0].lineno


def to_json(x: Any) -> Any:
    """Tensors / numbers to JSON values (non-finite floats as strings, -0.0 kept)."""
    if torch.is_tensor(x):
        if x.dtype == torch.bool:
            return x.tolist()
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
    """Bitwise equality of tensors, NaN equal to NaN, sign of zero respected."""
    if not (torch.is_tensor(b) and a.dtype == b.dtype and a.shape == b.shape):
        return False
    both_nan = torch.isnan(a) & torch.isnan(b)
    eq = (a == b) & (torch.signbit(a) == torch.signbit(b))
    return bool((both_nan | eq).all())


def diff_kind(a: Any, b: Any) -> str:
    """'none', 'zero_sign' (only the sign of some zeros differs) or 'value'."""
    if same(a, b):
        return "none"
    if torch.is_tensor(b) and a.dtype == b.dtype and a.shape == b.shape:
        both_nan = torch.isnan(a) & torch.isnan(b)
        if bool((both_nan | (a == b)).all()):
            return "zero_sign"
    return "value"


def close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    a = a.to(torch.float64)
    b = b.to(torch.float64)
    return bool((torch.abs(a - b) <= atol + rtol * torch.abs(b)).all())


def gae_draw(gen: Any, layout: dict[str, Any]) -> dict[str, Any]:
    batch, width = layout["shape"]
    mask = fw.mask_rows(gen, batch, width, layout["mask"])
    values = fw.uniform(gen, (batch, width), -1.0, 1.0)
    rewards = fw.uniform(gen, (batch, width), -0.1, 0.1)
    outcome = fw.uniform(gen, (batch,), -1.0, 1.0)
    for b, t in enumerate(fw.last_positions(mask)):
        rewards[b, t] = rewards[b, t] + outcome[b]
    pad = JUNK if layout["padding"] == "junk" else 0.0
    return {"values": torch.where(mask, values, torch.full_like(values, pad)),
            "rewards": torch.where(mask, rewards, torch.full_like(rewards, pad)), "mask": mask}


def fmt_gl(gamma: float, lam: float, lam_name: str) -> str:
    return f"gamma={gamma!r},{lam_name}={lam!r}"


# --------------------------------------------------------------------------------------
# verl
# --------------------------------------------------------------------------------------

VERL_GAE = "compute_gae_advantage_return"
VERL_CORE_PICKED = ["AdvantageEstimator", "ADV_ESTIMATOR_REGISTRY", "register_adv_est", "get_adv_estimator_fn",
                    "AdaptiveKLController", "FixedKLController", "get_kl_controller", VERL_GAE]
VERL_TF_PICKED = ["masked_sum", "masked_mean", "masked_var", "masked_whiten"]
VERL_BLOCK_FIRST = "nextvalues = 0"
VERL_BLOCK_LAST = "advantages = torch.stack(advantages_reversed[::-1], dim=1)"
VERL_BLOCK_FREE = ["gamma", "lam", "response_mask", "token_level_rewards", "torch", "values"]
VERL_GAE_CALL = ("core_algos.compute_gae_advantage_return(token_level_rewards=data.batch['token_level_rewards'], "
                 "values=data.batch['values'], response_mask=data.batch['response_mask'], gamma=gamma, lam=lam)")
VERL_UPDATE_CALL = "kl_ctrl.update(current_kl=current_kl, n_steps=batch_size)"
VERL_FACTORY_CALL = "core_algos.get_kl_controller(self.config.algorithm.kl_ctrl)"
VERL_STUBS = (
    "verl_F (verl.utils.torch_functional) is a plain module object holding only masked_sum, masked_mean, "
    "masked_var and masked_whiten picked from the pinned torch_functional.py. The namespace of core_algos.py "
    "holds real torch, numpy as np, collections.defaultdict, enum.Enum and typing.Optional/Any/Callable; "
    "ADV_ESTIMATOR_REGISTRY therefore holds only compute_gae_advantage_return, which "
    "get_adv_estimator_fn('gae') is asserted to return. The GAE function is called directly with keyword "
    "arguments, as ray_trainer.compute_advantage calls it (checked in the pinned ray_trainer.py, which is "
    "parsed but not executed). kl_ctrl is a namespace with the fields get_kl_controller reads (type, kl_coef, "
    "target_kl, horizon), standing in for the algorithm.kl_ctrl config. Nothing else of verl is imported."
)
VERL_MASK_NOTE = (
    "response_mask is passed as torch.int64, as verl's trainer builds it (compute_response_mask: "
    "attention_mask[:, -response_length:])."
)
WHITEN_TEXT = (
    "masked_whiten(x, m) (shift_mean True): mean = masked_sum(x, m) / (sum(m) + 1e-8), masked_sum(x, m) = "
    "sum(where(m, x, 0) * m); var = masked_mean((x - mean)^2, m) * c with the Bessel factor c = N / (N - 1), "
    "N = sum(m) (raises for N <= 1); result (x - mean) * rsqrt(var + 1e-8) at EVERY position (padding and "
    "interior spans included; the result is not multiplied by the mask). With the int64 mask N is an int64 "
    "tensor, so N + 1e-8 is a float32 tensor equal to N exactly (the 1e-8 has no effect) and c = N / (N - 1) "
    "is computed as a float32 tensor (c is float32-rounded, e.g. N = 7: 1.1666666269302368)"
)


def find_statement_range(body: list[ast.stmt], first: str, last: str, where: str) -> list[ast.stmt]:
    texts = [ast.unparse(s) for s in body]
    firsts = [i for i, t in enumerate(texts) if t == first]
    lasts = [i for i, t in enumerate(texts) if t == last]
    if len(firsts) != 1 or len(lasts) != 1 or lasts[0] < firsts[0]:
        raise SystemExit(f"{where}: cannot find the block ({len(firsts)} starts, {len(lasts)} ends)")
    return body[firsts[0]: lasts[0] + 1]


def load_verl(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    tf_tree, tf_name = fw.parse(sources, target, fw.VERL_TF)
    verl_f = types.ModuleType("verl.utils.torch_functional")
    tf_ns: dict[str, Any] = {"__name__": verl_f.__name__, "torch": torch}
    fw.exec_nodes(fw.pick_top_level(tf_tree, VERL_TF_PICKED, tf_name), tf_ns, tf_name)
    for name in VERL_TF_PICKED:
        setattr(verl_f, name, tf_ns[name])

    core_tree, core_name = fw.parse(sources, target, fw.VERL_CORE)
    ns: dict[str, Any] = {
        "__name__": "verl.trainer.ppo.core_algos", "torch": torch, "np": np, "defaultdict": defaultdict,
        "Enum": Enum, "Optional": Optional, "Any": Any, "Callable": Callable, "verl_F": verl_f,
    }
    nodes = fw.pick_top_level(core_tree, VERL_CORE_PICKED, core_name)
    fw.exec_nodes(nodes, ns, core_name)
    lines = {fw.node_name(n): [n.lineno, n.end_lineno] for n in nodes}
    if ns["get_adv_estimator_fn"]("gae") is not ns[VERL_GAE]:
        raise SystemExit(f"{core_name}: get_adv_estimator_fn('gae') is not {VERL_GAE}")

    # The recursion block inside `with torch.no_grad():` of the GAE function, executed alone.
    gae_node = [n for n in nodes if fw.node_name(n) == VERL_GAE][0]
    withs = [s for s in gae_node.body if isinstance(s, ast.With)]
    if len(withs) != 1:
        raise SystemExit(f"{core_name}: expected one `with` statement in {VERL_GAE}")
    block = find_statement_range(withs[0].body, VERL_BLOCK_FIRST, VERL_BLOCK_LAST, core_name)
    if sorted(fw.free_globals(block)) != VERL_BLOCK_FREE:
        raise SystemExit(f"{core_name}: the GAE block reads {sorted(fw.free_globals(block))}")
    gae_text = ast.unparse(gae_node)
    whitens = "advantages = verl_F.masked_whiten(advantages, response_mask)" in gae_text
    tail = [ast.unparse(s) for s in withs[0].body[withs[0].body.index(block[-1]) + 1:]]
    if tail != ["returns = advantages + values", "advantages = verl_F.masked_whiten(advantages, response_mask)"]:
        raise SystemExit(f"{core_name}: unexpected statements after the GAE recursion: {tail}")
    adaptive_text = ast.unparse([n for n in nodes if fw.node_name(n) == "AdaptiveKLController"][0])
    if "np.clip(current_kl / target - 1, -0.2, 0.2)" not in adaptive_text:
        raise SystemExit(f"{core_name}: AdaptiveKLController.update no longer clips at +-0.2")

    rt_tree, rt_name = fw.parse(sources, target, VERL_RAY_TRAINER)
    checked = {text: require_call(rt_tree, text, rt_name) for text in (VERL_GAE_CALL, VERL_UPDATE_CALL,
                                                                       VERL_FACTORY_CALL)}
    return types.SimpleNamespace(ns=ns, verl_f=verl_f, lines=lines, block=block, block_name=core_name,
                                 block_lines=[block[0].lineno, block[-1].end_lineno], whitens=whitens,
                                 checked=checked)


def verl_gae_variants(target: fw.Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    ns = api.ns
    specs: list[dict[str, Any]] = []

    def run_block(d: dict[str, Any], gamma: float, lam: float) -> Any:
        env = {"__name__": "verl.trainer.ppo.core_algos", "token_level_rewards": d["rewards"].clone(),
               "values": d["values"].clone(), "response_mask": d["mask"].to(torch.int64), "gamma": gamma,
               "lam": lam, "torch": torch}
        with torch.no_grad():
            fw.exec_statements(api.block, env, api.block_name)
        return env["advantages"]

    for kind in MASK_KINDS:
        for gamma, lam in GAMMA_LAMS:
            def run(d: dict[str, Any], gamma: float = gamma, lam: float = lam) -> dict[str, Any]:
                mask = d["mask"].to(torch.int64)
                a, r = ns[VERL_GAE](token_level_rewards=d["rewards"].clone(), values=d["values"].clone(),
                                    response_mask=mask, gamma=gamma, lam=lam)
                raw = run_block(d, gamma, lam)
                if not same(api.verl_f.masked_whiten(raw, mask), a):
                    raise AssertionError("verl GAE: masked_whiten(block advantages) differs from the return")
                if not same(raw + d["values"], r):
                    raise AssertionError("verl GAE: block advantages + values differ from the returns")
                return {"advantages": a, "returns": r, "advantages_before_whiten": raw}

            name = f"gae:{kind}:{fmt_gl(gamma, lam, 'lam')}"
            specs.append({
                "name": name,
                "function": "verl.trainer.ppo.core_algos.compute_gae_advantage_return",
                "called_via": "direct keyword call, as ray_trainer.compute_advantage makes it",
                "setting": {"gamma": gamma, "lam": lam, "mask_kind": kind, "response_mask_dtype": "torch.int64",
                            "gamma_lam_types": "Python float", "values_dtype": "torch.float64",
                            "token_level_rewards_dtype": "torch.float64"},
                "description": (
                    f"verl compute_gae_advantage_return(token_level_rewards, values, response_mask, gamma={gamma!r}, "
                    f"lam={lam!r}) under torch.no_grad. Backwards over t = T-1..0 with nextvalues = 0 and lastgaelam = "
                    "0 (Python ints) at the start: delta_t = (r_t + gamma * nextvalues) - v_t; lastgaelam_ = delta_t + "
                    "(gamma * lam) * lastgaelam (gamma * lam is a Python float product, computed first); then "
                    "nextvalues = v_t * m_t + (1 - m_t) * nextvalues and lastgaelam = lastgaelam_ * m_t + (1 - m_t) * "
                    "lastgaelam; A_t = lastgaelam. So at a masked position (right padding or an interior observation "
                    "span) nothing is reset and nothing is discounted: nextvalues and lastgaelam are CARRIED through "
                    "unchanged (x * 0 + 1 * carry), the masked r_t and v_t are dropped (finite padding values are "
                    "multiplied by 0), A_t there equals the carried lastgaelam (0 on right padding, the advantage of "
                    "the next response token inside a span), and the first response token before a span bootstraps "
                    "from the value of the next response token after it with a single gamma (the span is skipped as "
                    "if absent). returns = A + values at EVERY position, computed BEFORE whitening from the "
                    "un-whitened A (so at masked positions returns = carry + the padding value: junk lands in "
                    "returns). Then advantages = masked_whiten(A, response_mask): the function WHITENS INTERNALLY "
                    "(at both pins) and the returned advantages are not multiplied by the mask. "
                    + WHITEN_TEXT + ". Outputs: advantages and returns as returned; advantages_before_whiten is A, "
                    "from executing the recursion block of the function (its statements from `nextvalues = 0` "
                    "through `advantages = torch.stack(advantages_reversed[::-1], dim=1)`) alone on the same "
                    "inputs; the recorder asserts masked_whiten(advantages_before_whiten, mask) and "
                    "advantages_before_whiten + values reproduce the two outputs bitwise. " + VERL_MASK_NOTE),
                "layouts": GAE_LAYOUTS[kind], "run": run,
                "inputs": lambda d: {"token_level_rewards": d["rewards"], "values": d["values"],
                                     "response_mask": d["mask"]},
                "ref": ("verl", gamma, lam),
            })
    return specs


def verl_controller_variants(target: fw.Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    ns = api.ns
    specs: list[dict[str, Any]] = []

    def make_run(kind: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        cls = ns["AdaptiveKLController"] if kind == "adaptive" else ns["FixedKLController"]

        def run(c: dict[str, Any]) -> dict[str, Any]:
            kl_ctrl = types.SimpleNamespace(type=kind, kl_coef=c["kl_coef"], target_kl=c.get("target_kl", 0.1),
                                            horizon=c.get("horizon", 10000))
            ctl = ns["get_kl_controller"](kl_ctrl)
            if type(ctl) is not cls:
                raise AssertionError(f"get_kl_controller({kind}) returned {type(ctl).__name__}")
            values, types_ = [ctl.value], [type_name(ctl.value)]
            for step in c["steps"]:
                ctl.update(current_kl=step["current_kl"], n_steps=step["n_steps"])
                values.append(ctl.value)
                types_.append(type_name(ctl.value))
            return {"value_after_init": float(values[0]), "values_after_update": [float(v) for v in values[1:]],
                    "value_types": types_}
        return run

    adaptive_desc = (
        "verl AdaptiveKLController (core_algos.py), constructed by get_kl_controller(kl_ctrl) with kl_ctrl.type = "
        "'adaptive' (it asserts horizon > 0 and calls AdaptiveKLController(init_kl_coef=kl_ctrl.kl_coef, "
        "target_kl=kl_ctrl.target_kl, horizon=kl_ctrl.horizon)); value = init_kl_coef. Each "
        "update(current_kl=..., n_steps=...) (ray_trainer.apply_kl_penalty's call: current_kl = the batch mean of "
        "the per-row masked-mean KL as a Python float, n_steps = batch_size, after beta = value has been used "
        "for this batch's rewards) computes proportional_error = np.clip(current_kl / target - 1, -0.2, 0.2) "
        "(a numpy.float64; the division first, then - 1, then the clip), mult = 1 + proportional_error * "
        "n_steps / horizon (evaluated as 1 + ((proportional_error * n_steps) / horizon)), and value = value * "
        "mult. There is no clamp on mult or on the value: when proportional_error * n_steps / horizon < -1 the "
        "coefficient turns negative (case 3, step 2, 0-based) and later updates keep multiplying the negative value. "
        "After the first update value is a numpy.float64. Outputs: value_after_init and the value after every "
        "update.")
    fixed_desc = (
        "verl FixedKLController (core_algos.py), constructed by get_kl_controller(kl_ctrl) with kl_ctrl.type = "
        "'fixed' (FixedKLController(kl_coef=kl_ctrl.kl_coef)); value = kl_coef, and update(current_kl, n_steps) "
        "is a no-op (`pass`), so the value never changes. Outputs: value_after_init and the value after every "
        "update.")
    for kind, desc in (("adaptive", adaptive_desc), ("fixed", fixed_desc)):
        specs.append({
            "name": f"{kind}_kl_controller",
            "function": f"verl.trainer.ppo.core_algos.{'AdaptiveKLController' if kind == 'adaptive' else 'FixedKLController'}",
            "called_via": "get_kl_controller(kl_ctrl) then .update(current_kl=..., n_steps=...) per step",
            "setting": {"kl_ctrl.type": kind, "constructor_keywords": (
                ["init_kl_coef", "target_kl", "horizon"] if kind == "adaptive" else ["kl_coef"]),
                "update_call": VERL_UPDATE_CALL, "clip": CLIP},
            "description": desc, "run": make_run(kind), "controller": kind,
            "arg_names": {"init": "kl_coef" if kind == "fixed" else "init_kl_coef", "target": "target_kl",
                          "current": "current_kl"},
        })
    return specs


def verl_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "picked_definitions": {
            fw.VERL_CORE: [f"{n} (lines {api.lines[n][0]}-{api.lines[n][1]})" for n in VERL_CORE_PICKED]
            + [f"the recursion block of {VERL_GAE} (`{VERL_BLOCK_FIRST}` through `{VERL_BLOCK_LAST}`, lines "
               f"{api.block_lines[0]}-{api.block_lines[1]}), executed alone for advantages_before_whiten"],
            fw.VERL_TF: VERL_TF_PICKED,
            VERL_RAY_TRAINER: ["parsed only, for checked_source_text; nothing executed"],
        },
        "gae_whitens_internally": api.whitens,
        "checked_source_text": {
            **{f"{VERL_RAY_TRAINER}: `{t}` (line {line})": True for t, line in sorted(api.checked.items())},
            f"{fw.VERL_CORE}: `np.clip(current_kl / target - 1, -0.2, 0.2)` in AdaptiveKLController": True,
            f"{fw.VERL_CORE}: after the recursion block exactly `returns = advantages + values` and "
            "`advantages = verl_F.masked_whiten(advantages, response_mask)`": True,
        },
        "stubs": VERL_STUBS,
    }


# --------------------------------------------------------------------------------------
# OpenRLHF
# --------------------------------------------------------------------------------------

ORL_SELECT_TEST = "self.args.algo.kl.target"
ORL_UPDATE_CALL = ("self.kl_ctl.update(status['kl'], self.args.rollout.batch_size * "
                   "self.args.rollout.n_samples_per_prompt)")
ORL_GAE_CALL = ("self.get_advantages_and_returns(experience.values, reward, experience.action_mask, "
                "args.algo.advantage.gamma, args.algo.advantage.lambd)")
ORL_STUBS = (
    "RemoteExperienceMaker.get_advantages_and_returns is picked out of the pinned experience_maker.py (with "
    "its @torch.no_grad() decorator; module names bound: real torch, typing.Tuple) and called as a plain "
    "function with a fake `self` (an empty namespace; the method reads nothing from self) and positional "
    "arguments (values, rewards, action_mask, gamma, lambd), as compute_advantages_and_returns calls it "
    "(checked). AdaptiveKLController and FixedKLController are picked from the pinned kl_controller.py "
    "(module names bound: real numpy as np). The controller is constructed by executing the `if "
    "self.args.algo.kl.target:` statement of BasePPOTrainer.__init__ (pinned ppo_trainer.py) alone, with "
    "self = a namespace holding args.algo.kl.{init_coef, target, horizon} and the two picked classes bound; "
    "it is updated with the positional call of BasePPOTrainer.train_step (checked): update(current, n_steps), "
    "n_steps = rollout.batch_size * rollout.n_samples_per_prompt."
)


def load_openrlhf(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    em_tree, em_name = fw.parse(sources, target, ORL_EXPERIENCE_MAKER)
    method = fw.pick_method(em_tree, "RemoteExperienceMaker", "get_advantages_and_returns", em_name)
    ns: dict[str, Any] = {"__name__": "openrlhf.trainer.ppo_utils.experience_maker", "torch": torch,
                          "Tuple": Tuple}
    fw.exec_nodes([method], ns, em_name)
    gae_line = require_call(em_tree, ORL_GAE_CALL, em_name)
    mtext = ast.unparse(method)
    for needle in ("values = action_mask * values", "rewards = action_mask * rewards",
                   "nextvalues = values[:, t + 1] if t < response_length - 1 else 0.0"):
        if needle not in mtext:
            raise SystemExit(f"{em_name}: get_advantages_and_returns no longer contains {needle!r}")

    kl_tree, kl_name = fw.parse(sources, target, ORL_KL_CONTROLLER)
    kl_ns: dict[str, Any] = {"__name__": "openrlhf.trainer.ppo_utils.kl_controller", "np": np}
    kl_nodes = fw.pick_top_level(kl_tree, ["AdaptiveKLController", "FixedKLController"], kl_name)
    fw.exec_nodes(kl_nodes, kl_ns, kl_name)
    if "np.clip(current / target - 1, -0.2, 0.2)" not in ast.unparse(kl_nodes[0]):
        raise SystemExit(f"{kl_name}: AdaptiveKLController.update no longer clips at +-0.2")

    tr_tree, tr_name = fw.parse(sources, target, ORL_PPO_TRAINER)
    init = fw.pick_method(tr_tree, "BasePPOTrainer", "__init__", tr_name)
    select = [n for n in ast.walk(init) if isinstance(n, ast.If) and ast.unparse(n.test) == ORL_SELECT_TEST]
    if len(select) != 1:
        raise SystemExit(f"{tr_name}: expected one `if {ORL_SELECT_TEST}:` in BasePPOTrainer.__init__")
    update_line = require_call(tr_tree, ORL_UPDATE_CALL, tr_name)
    return types.SimpleNamespace(
        ns=ns, kl_ns=kl_ns, select=select[0], select_name=tr_name,
        method_lines=[method.lineno, method.end_lineno],
        kl_lines={fw.node_name(n): [n.lineno, n.end_lineno] for n in kl_nodes},
        select_lines=[select[0].lineno, select[0].end_lineno], select_text=ast.unparse(select[0]),
        checked={f"{ORL_EXPERIENCE_MAKER}: `{ORL_GAE_CALL}` (line {gae_line})": True,
                 f"{ORL_PPO_TRAINER}: `{ORL_UPDATE_CALL}` (line {update_line})": True})


def openrlhf_gae_variants(target: fw.Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    ns = api.ns
    specs: list[dict[str, Any]] = []
    for kind in MASK_KINDS:
        for gamma, lam in GAMMA_LAMS:
            def run(d: dict[str, Any], gamma: float = gamma, lam: float = lam) -> dict[str, Any]:
                fake = types.SimpleNamespace()
                a, r = ns["get_advantages_and_returns"](fake, d["values"].clone(), d["rewards"].clone(),
                                                        d["mask"].to(torch.int64), gamma, lam)
                return {"advantages": a, "returns": r}

            specs.append({
                "name": f"gae:{kind}:{fmt_gl(gamma, lam, 'lambd')}",
                "function": "openrlhf.trainer.ppo_utils.experience_maker.RemoteExperienceMaker."
                            "get_advantages_and_returns",
                "called_via": "plain function with a fake self, positional (values, rewards, action_mask, gamma, "
                              "lambd) as compute_advantages_and_returns calls it",
                "setting": {"gamma": gamma, "lambd": lam, "mask_kind": kind, "response_mask_dtype": "torch.int64",
                            "gamma_lambd_types": "Python float", "values_dtype": "torch.float64",
                            "rewards_dtype": "torch.float64"},
                "description": (
                    f"OpenRLHF RemoteExperienceMaker.get_advantages_and_returns(values, rewards, action_mask, "
                    f"gamma={gamma!r}, lambd={lam!r}) (@torch.no_grad; self unused). First values = action_mask * "
                    "values and rewards = action_mask * rewards (masked positions become 0, or -0.0 for negative "
                    "padding values). Then backwards over t = T-1..0 with lastgaelam = 0 (Python int): nextvalues = "
                    "values[:, t + 1] (the MASKED values tensor) if t < T - 1 else 0.0; delta_t = (r_t + gamma * "
                    "nextvalues) - v_t; lastgaelam = delta_t + (gamma * lambd) * lastgaelam (gamma * lambd is a "
                    "Python float product, computed first); A_t = lastgaelam. The mask enters ONLY through zeroing "
                    "values and rewards: nextvalues and lastgaelam are neither carried nor reset at masked "
                    "positions, they run through them as ordinary steps with r = v = 0. On right padding every delta "
                    "is 0 and lastgaelam starts at 0, so A = 0 there; inside an interior observation span each "
                    "masked step discounts by gamma * lambd, the masked step just before the next response token "
                    "has delta = gamma * v_next, and the response token before the span bootstraps from "
                    "nextvalues = 0 (the masked value) instead of the value after the span. returns = A + values "
                    "(the masked values) at every position, so returns = A at masked positions (0 on right "
                    "padding). No whitening inside this function (compute_advantages_and_returns whitens gae "
                    "advantages afterwards, over all experiences, in float32 statistics: that block is recorded in "
                    "advantages.json as the OpenRLHF whiten variants; it is not applied here). Outputs: "
                    "advantages (detached) and returns, float64. Inputs are float64 (in training the values and "
                    "rewards arrive as float32)."),
                "layouts": GAE_LAYOUTS[kind], "run": run,
                "inputs": lambda d: {"rewards": d["rewards"], "values": d["values"], "action_mask": d["mask"]},
                "ref": ("openrlhf", gamma, lam),
            })
    return specs


def openrlhf_controller_variants(target: fw.Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []

    def make_run(kind: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        cls = api.kl_ns["AdaptiveKLController"] if kind == "adaptive" else api.kl_ns["FixedKLController"]

        def run(c: dict[str, Any]) -> dict[str, Any]:
            kl = types.SimpleNamespace(init_coef=c["init_coef"], target=c["target"], horizon=c["horizon"])
            owner = types.SimpleNamespace(args=types.SimpleNamespace(algo=types.SimpleNamespace(kl=kl)))
            fw.exec_statements([api.select], {"__name__": "openrlhf.trainer.ppo_trainer", "self": owner,
                                           "AdaptiveKLController": api.kl_ns["AdaptiveKLController"],
                                           "FixedKLController": api.kl_ns["FixedKLController"]}, api.select_name)
            ctl = owner.kl_ctl
            if type(ctl) is not cls:
                raise AssertionError(f"the selection statement built {type(ctl).__name__}, expected {kind}")
            values, types_ = [ctl.value], [type_name(ctl.value)]
            for step in c["steps"]:
                ctl.update(step["current_kl"], step["n_steps"])
                values.append(ctl.value)
                types_.append(type_name(ctl.value))
            return {"value_after_init": float(values[0]), "values_after_update": [float(v) for v in values[1:]],
                    "value_types": types_}
        return run

    adaptive_desc = (
        "OpenRLHF AdaptiveKLController (openrlhf/trainer/ppo_utils/kl_controller.py), selected and constructed by "
        f"BasePPOTrainer.__init__'s statement `{api.select_text.splitlines()[0]} ...`: a TRUTHY "
        "args.algo.kl.target gives AdaptiveKLController(init_coef, target, horizon) (positional), otherwise "
        "FixedKLController(init_coef). value = init_coef. Each update(current, n_steps) (train_step's call: "
        "current = status['kl'], n_steps = rollout.batch_size * rollout.n_samples_per_prompt, only when 'kl' is "
        "in status) computes proportional_error = np.clip(current / target - 1, -0.2, 0.2) (numpy.float64; "
        "division, then - 1, then the clip), mult = 1 + proportional_error * n_steps / horizon (evaluated as 1 + "
        "((proportional_error * n_steps) / horizon)), value = value * mult: the same arithmetic as verl's "
        "controller. No clamp on mult or the value: it turns negative when proportional_error * n_steps / "
        "horizon < -1 (case 3, step 2, 0-based). After the first update value is a numpy.float64. Upstream's own comment "
        "at the update call says 'TODO: KL controller must be FixedKLController; AdaptiveKLController is "
        "incompatible here.' Outputs: value_after_init and the value after every update.")
    fixed_desc = (
        "OpenRLHF FixedKLController (openrlhf/trainer/ppo_utils/kl_controller.py), built by "
        "BasePPOTrainer.__init__'s selection statement when args.algo.kl.target is falsy (here None, the CLI "
        "default): FixedKLController(init_coef); value = init_coef and update(current, n_steps) is a no-op "
        "(`pass`). Outputs: value_after_init and the value after every update.")
    for kind, desc in (("adaptive", adaptive_desc), ("fixed", fixed_desc)):
        specs.append({
            "name": f"{kind}_kl_controller",
            "function": "openrlhf.trainer.ppo_utils.kl_controller."
                        f"{'AdaptiveKLController' if kind == 'adaptive' else 'FixedKLController'}",
            "called_via": f"the `if {ORL_SELECT_TEST}:` statement of BasePPOTrainer.__init__, then "
                          ".update(current, n_steps) per step (positional)",
            "setting": {"args.algo.kl.target": "per case (input target)" if kind == "adaptive" else None,
                        "constructor_positional": (["init_coef", "target", "horizon"] if kind == "adaptive"
                                                   else ["init_coef"]),
                        "update_call": ORL_UPDATE_CALL, "clip": CLIP},
            "description": desc, "run": make_run(kind), "controller": kind,
            "arg_names": {"init": "init_coef", "target": "target", "current": "current"},
        })
    return specs


def openrlhf_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "picked_definitions": {
            ORL_EXPERIENCE_MAKER: [f"RemoteExperienceMaker.get_advantages_and_returns (lines "
                                   f"{api.method_lines[0]}-{api.method_lines[1]})"],
            ORL_KL_CONTROLLER: [f"{n} (lines {v[0]}-{v[1]})" for n, v in sorted(api.kl_lines.items())],
            ORL_PPO_TRAINER: [f"BasePPOTrainer.__init__: only its `if {ORL_SELECT_TEST}:` statement, lines "
                              f"{api.select_lines[0]}-{api.select_lines[1]}"],
        },
        "checked_source_text": {
            **api.checked,
            f"{ORL_KL_CONTROLLER}: `np.clip(current / target - 1, -0.2, 0.2)` in AdaptiveKLController": True,
            f"{ORL_EXPERIENCE_MAKER}: `values = action_mask * values`, `rewards = action_mask * rewards`, "
            "`nextvalues = values[:, t + 1] if t < response_length - 1 else 0.0`": True,
        },
        "stubs": ORL_STUBS,
    }


# --------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------


def type_name(v: Any) -> str:
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def outputs_json(out: dict[str, Any]) -> dict[str, Any]:
    return {k: to_json(v) for k, v in sorted(out.items())}


def finite(label: str, out: dict[str, Any]) -> None:
    for k, v in out.items():
        if torch.is_tensor(v) and not bool(torch.isfinite(v).all()):
            raise AssertionError(f"{label}: non-finite output {k}")


def record_gae_variant(target: fw.Target, spec: dict[str, Any]) -> dict[str, Any]:
    cases = []
    dtypes: dict[str, str] = {}
    for i, layout in enumerate(spec["layouts"]):
        seed = fw.case_seed(target.framework, target.label, f"gae-kl:{spec['name']}", i)
        d = gae_draw(torch.Generator().manual_seed(seed), layout)
        out = spec["run"](d)
        out_again = spec["run"](d)
        for key in out:
            if not same(out[key], out_again[key]):
                raise AssertionError(f"{spec['name']}:{i}: {key} differs between two identical runs")
            dt = str(out[key].dtype)
            if dtypes.setdefault(key, dt) != dt:
                raise AssertionError(f"{spec['name']}:{i}: output {key} is {dt}, another case gave {dtypes[key]}")
        finite(f"{target.label}:{spec['name']}:{i}", out)
        cross_check_gae(target, spec, d, out, i)
        inputs = {k: (v.tolist() if v.dtype == torch.bool else to_json(v)) for k, v in spec["inputs"](d).items()}
        probe = dict(d)
        pad_pos = ~d["mask"]
        for k in ("values", "rewards"):
            probe[k] = torch.where(pad_pos, torch.full_like(d[k], PROBE_JUNK), d[k])
        out_probe = spec["run"](probe)
        kinds = {k: diff_kind(out[k], out_probe[k]) for k in out}
        affects = sorted(k for k, v in kinds.items() if v == "value")
        pad_value = JUNK if layout["padding"] == "junk" else 0.0
        cases.append({
            "seed": seed, "layout": dict(sorted(layout.items())), "inputs": inputs, "outputs": outputs_json(out),
            "padding_value": pad_value,
            "padding_inputs": sorted(k for k in spec["inputs"](d) if k not in ("response_mask", "action_mask")),
            "padding_affects": affects,
            "padding_affects_zero_sign_only": sorted(k for k, v in kinds.items() if v == "zero_sign"),
            "junk_reaches_output": bool(pad_value != 0.0 and affects),
        })
    return variant_json(target, spec, cases, dict(sorted(dtypes.items())))


def controller_cases(spec: dict[str, Any]) -> list[dict[str, Any]]:
    names = spec["arg_names"]
    out = []
    for i, (init, target_kl, horizon, steps) in enumerate(KL_CASES):
        binds = []
        for current, _ in steps:
            err = current / target_kl - 1
            if abs(abs(err) - CLIP) <= EDGE_MARGIN:
                raise SystemExit(f"KL case {i}: current {current} puts the error within {EDGE_MARGIN} of the clip")
            binds.append(abs(err) > CLIP)
        if not (any(binds) and not all(binds)):
            raise SystemExit(f"KL case {i}: the clip must bind in some steps and not in others")
        step_list = [{"current_kl": c, "n_steps": n} for c, n in steps]
        if spec["controller"] == "adaptive":
            run_in = {names["init"]: init, names["target"]: target_kl, "horizon": horizon, "steps": step_list}
            inputs = {names["init"]: init, names["target"]: target_kl, "horizon": horizon,
                      "steps": [{names["current"]: c, "n_steps": n} for c, n in steps]}
        else:
            coef = FIXED_COEFS[i]
            run_in = {names["init"]: coef, "target": None, "horizon": 10000, "steps": step_list}
            inputs = {names["init"]: coef, "steps": [{names["current"]: c, "n_steps": n} for c, n in steps]}
        out.append({"run_in": run_in, "inputs": inputs, "clip_binds": binds})
    return out


def ref_controller(kind: str, init: float, target_kl: float, horizon: int, steps: list[dict[str, Any]]) -> list[float]:
    value = init
    values = [value]
    for s in steps:
        if kind == "adaptive":
            err = min(max(s["current_kl"] / target_kl - 1, -CLIP), CLIP)
            value = value * (1 + err * s["n_steps"] / horizon)
        values.append(value)
    return values


def record_controller_variant(target: fw.Target, spec: dict[str, Any]) -> dict[str, Any]:
    cases = []
    for i, c in enumerate(controller_cases(spec)):
        run_in = dict(c["run_in"])
        if target.framework == "verl":
            run_in = {"kl_coef": run_in.get("init_kl_coef", run_in.get("kl_coef")),
                      "target_kl": run_in.get("target_kl", 0.1), "horizon": run_in["horizon"],
                      "steps": run_in["steps"]}
            init, tkl = run_in["kl_coef"], run_in["target_kl"]
        else:
            init, tkl = run_in["init_coef"], run_in["target"]
        out = spec["run"](run_in)
        if out != spec["run"](run_in):
            raise AssertionError(f"{spec['name']}:{i}: two identical runs differ")
        ref = ref_controller(spec["controller"], init, tkl, run_in["horizon"], run_in["steps"])
        got = [out["value_after_init"]] + out["values_after_update"]
        if got != ref:  # the same IEEE float64 operations in the same order: bitwise equal
            raise AssertionError(f"{target.label}:{spec['name']}:{i}: upstream {got} differs from the description {ref}")
        if not all(math.isfinite(v) for v in got):
            raise AssertionError(f"{spec['name']}:{i}: non-finite value")
        cases.append({"seed": None, "inputs": c["inputs"], "outputs": outputs_json(out), "clip_binds": c["clip_binds"]})
    return variant_json(target, spec, cases, {})


def variant_json(target: fw.Target, spec: dict[str, Any], cases: list[dict[str, Any]],
                 dtypes: dict[str, str]) -> dict[str, Any]:
    return {
        "framework": target.framework, "pin": target.label, "commit": target.commit, "name": spec["name"],
        "function": spec["function"], "called_via": spec["called_via"], "setting": spec["setting"],
        "description": spec["description"], "dtypes": dtypes, "cases": cases,
    }


# --------------------------------------------------------------------------------------
# Independent re-computation of the descriptions (asserted, not recorded)
# --------------------------------------------------------------------------------------


def ref_gae(framework: str, r: Any, v: Any, m: Any, gamma: float, lam: float) -> tuple[Any, Any]:
    """Plain-Python GAE per the descriptions: (advantages before any whitening, returns)."""
    batch, width = r.shape
    adv = torch.zeros((batch, width), dtype=torch.float64)
    ret = torch.zeros((batch, width), dtype=torch.float64)
    gl = gamma * lam
    for b in range(batch):
        rr, vv, mm = r[b].tolist(), v[b].tolist(), m[b].tolist()
        if framework == "openrlhf":
            vv = [x if keep else 0.0 for x, keep in zip(vv, mm)]
            rr = [x if keep else 0.0 for x, keep in zip(rr, mm)]
        nv, last = 0.0, 0.0
        for t in reversed(range(width)):
            if framework == "verl":
                new = (rr[t] + gamma * nv - vv[t]) + gl * last
                if mm[t]:
                    nv, last = vv[t], new
            else:
                nxt = vv[t + 1] if t < width - 1 else 0.0
                last = (rr[t] + gamma * nxt - vv[t]) + gl * last
            adv[b, t] = last
            ret[b, t] = last + vv[t]
    return adv, ret


def ref_whiten_int_mask(x: Any, m: Any) -> Any:
    mf = m.to(torch.float64)
    n = int(m.sum())
    mean = (torch.where(m, x, torch.zeros_like(x)) * mf).sum() / n
    c = float(np.float32(n) / np.float32(n - 1))
    var = (torch.where(m, (x - mean) ** 2, torch.zeros_like(x)) * mf).sum() / n * c
    return (x - mean) / math.sqrt(float(var) + 1e-8)


def cross_check_gae(target: fw.Target, spec: dict[str, Any], d: dict[str, Any], out: dict[str, Any], i: int) -> None:
    framework, gamma, lam = spec["ref"]
    adv, ret = ref_gae(framework, d["rewards"], d["values"], d["mask"], gamma, lam)
    label = f"{target.label}:{spec['name']}:{i}"
    raw = out["advantages_before_whiten"] if framework == "verl" else out["advantages"]
    if not close(raw, adv, 1e-12, 1e-13) or not close(out["returns"], ret, 1e-12, 1e-13):
        raise AssertionError(f"{label}: upstream differs from the description's recursion")
    if framework == "verl" and not close(out["advantages"], ref_whiten_int_mask(adv, d["mask"]), 1e-10, 1e-12):
        raise AssertionError(f"{label}: upstream whitened advantages differ from the description")


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------

NOT_RECORDED = [
    {"framework": "verl", "pin": "all", "variant": "gae with NaN/Inf padding",
     "reason": "not recorded: masked values are multiplied by 0 (v * m, lastgaelam_ * m), so non-finite padding "
               "poisons every output (NaN * 0 = NaN); only finite junk (123.0) is used"},
    {"framework": "verl", "pin": "all", "variant": "apply_kl_penalty / use_pf_ppo",
     "reason": "not recorded: only the controller and GAE; the reward shaping with beta = value and the "
               "current_kl statistic of ray_trainer.apply_kl_penalty, and the pf_ppo reweighting after GAE, are "
               "outside this file"},
    {"framework": "openrlhf", "pin": "all", "variant": "gae with NaN/Inf padding",
     "reason": "not recorded: action_mask * values and action_mask * rewards turn non-finite padding into NaN (NaN * 0), which then poisons every output through nextvalues and lastgaelam"},
    {"framework": "openrlhf", "pin": "all", "variant": "gae through compute_advantages_and_returns",
     "reason": "not recorded here: the caller's compute_reward shaping and float32-statistics whitening of gae "
               "advantages are the same code paths recorded in advantages.json (reinforce / whiten variants); this "
               "file records get_advantages_and_returns itself"},
    {"framework": "all", "pin": "all", "variant": "proportional error exactly at +-0.2",
     "reason": "not recorded: every step keeps |current / target - 1| more than 1e-9 away from 0.2 (both sides of "
               "np.clip give the same value there anyway)"},
]


def main() -> None:
    global torch, np
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verl-git", default=os.environ.get("VERL_GIT"),
                        help="git directory of verl-project/verl (default: $VERL_GIT)")
    parser.add_argument("--openrlhf-git", default=os.environ.get("OPENRLHF_GIT"),
                        help="git directory of OpenRLHF/OpenRLHF (default: $OPENRLHF_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    git_dirs = {"verl": args.verl_git, "openrlhf": args.openrlhf_git}
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
    for name, env in (("verl", "VERL_GIT"), ("openrlhf", "OPENRLHF_GIT")):
        if f"--{name}-git" not in " ".join(sys.argv[1:]):
            command = f"{env}={shlex.quote(git_dirs[name])} {command}"

    pins: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    variants: list[dict[str, Any]] = []
    for target in fw.TARGETS:
        if target.framework not in git_dirs:
            continue
        git_dir = fw.git_dir_of(Path(git_dirs[target.framework]).resolve())
        sources, files = fw.pinned_sources_for(git_dir, target, USED_FILES, EXTRA_FILES)
        if target.framework == "verl":
            api = load_verl(target, sources)
            gae_specs, ctl_specs, prov = verl_gae_variants(target, api), verl_controller_variants(target, api), \
                verl_provenance(api)
        else:
            api = load_openrlhf(target, sources)
            gae_specs, ctl_specs, prov = openrlhf_gae_variants(target, api), \
                openrlhf_controller_variants(target, api), openrlhf_provenance(api)
        pins.append({"framework": target.framework, "repo": f"https://github.com/{target.repo}",
                     "commit": target.commit, "label": target.label, "tag": target.tag, "role": target.role,
                     "files": [{"path": p, "sha256": s} for p, s in sorted(files.items())], **prov,
                     "variants": [s["name"] for s in gae_specs + ctl_specs]})
        for spec in gae_specs:
            variants.append(record_gae_variant(target, spec))
        for spec in ctl_specs:
            variants.append(record_controller_variant(target, spec))

    provenance = {
        "tool": TOOL_PATH,
        "command": command,
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "dtype": "float64 inputs and outputs (controller coefficients are Python / numpy float64)",
        "pins": pins,
        "loading": LOADING_RULE,
        "seed_rule": SEED_RULE,
        "input_rule": INPUT_RULE,
        "junk_rule": JUNK_RULE,
        "json_rule": JSON_RULE,
        "cross_check": (
            "Not recorded, asserted: for every GAE case the recorder re-computes the recursion of the variant's "
            "description in plain Python float64 and requires agreement within rtol 1e-12 / atol 1e-13 (verl: "
            "advantages_before_whiten and returns; OpenRLHF: advantages and returns), and for verl the whitened "
            "advantages within rtol 1e-10 of a float64 whitening with the float32 Bessel factor; for every "
            "controller case the coefficient sequence must equal value *= 1 + min(max(current / target - 1, "
            "-0.2), 0.2) * n_steps / horizon (adaptive) or stay constant (fixed) BITWISE. verl's returned "
            "advantages and returns are also asserted to equal masked_whiten(advantages_before_whiten, mask) and "
            "advantages_before_whiten + values bitwise. Every case is run twice and required to be bitwise "
            "identical."
        ),
        "gae_layouts": {k: [dict(sorted(l.items())) for l in v] for k, v in GAE_LAYOUTS.items()},
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
