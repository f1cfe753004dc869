#!/usr/bin/env python3
"""Record the global-batch loss normalisers of verl and TRL, with empty (zero-token) rows.

Runs verl's compute_policy_loss_vanilla (through get_policy_loss_fn('vanilla'), so agg_loss gets
**config.global_batch_info exactly as the actor passes it: dp_size, batch_num_tokens, global_batch_size,
loss_scale_factor) and TRL's GRPOTrainer._compute_loss (loss types dapo, grpo, bnpo with
num_items_in_batch, accelerator.num_processes, current_gradient_accumulation_steps) on seeded float64
batches: per variant one case without and three cases with an all-False mask row, junk at padding. Writes
only numbers plus provenance (loss, autograd gradient w.r.t. the log-probabilities) to
test/fixtures/frameworks/global-normalisers.json.

No framework code is copied into this repository: upstream is loaded with frameworks.py's helpers and
surrogates.py's stand-ins (imported as modules), each pinned file read with git show in memory, SHA-256
checked, parsed with ast, and only the needed definitions executed with real torch. An independent model of
each normaliser must reproduce upstream's loss and gradient to 1e-11 relative; no number comes from it.

Usage:  PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/globalNormalisers.py \\
            --verl-git /path/to/verl.git --trl-git /path/to/trl.git   (output byte-stable across re-runs)
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import platform
import shlex
import sys
import types
import zlib
from pathlib import Path
from typing import Any, Callable, Optional

sys.dont_write_bytecode = True  # importing the sibling recorders must not leave a __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import frameworks as fw  # noqa: E402  (sibling recorders, guarded by `if __name__ == "__main__"`)
import surrogates as sg  # noqa: E402

TOOL_PATH = "tools/record-fixtures/globalNormalisers.py"
DEFAULT_OUT = fw.REPO_ROOT / "test" / "fixtures" / "frameworks" / "global-normalisers.json"
PINS = {"verl": "1dda039b", "trl": "f2cd5771"}  # labels in frameworks.TARGETS
VERL_CORE_PICKED = ["PolicyLossFn", "POLICY_LOSS_REGISTRY", "register_policy_loss", "get_policy_loss_fn",
                    "agg_loss", "compute_policy_loss_vanilla"]
VERL_ACTOR_FIELDS = ["clip_ratio", "clip_ratio_low", "clip_ratio_high", "clip_ratio_c", "global_batch_info",
                     "loss_scale_factor"]
SHAPES = ((4, 6), (5, 8), (4, 6), (5, 8))
CASES_PER_VARIANT = 4
LP_RANGE, GAP, ADV_RANGE = (-8.0, -0.05), (-1.5, 1.5), (-3.0, 3.0)
EDGES, EDGE_MARGIN, MAX_ATTEMPTS = (0.8, 1.2, 3.0), 1e-6, 10_000
JUNK = 123.0
MODEL_RTOL = 1e-11

SEED_RULE = (
    "Case i of a variant has the name f'{framework}@{pin}:{variant}:{i}'. Attempt 0 uses seed = "
    "zlib.crc32(name.encode()) & 0x7FFFFFFF; a rejected draw (see input_rule) moves to attempt k = 1, 2, ... "
    "with zlib.crc32((name + ':' + str(k)).encode()) & 0x7FFFFFFF. The recorded seed (and seed_attempt k) is "
    "the one used; every draw comes from torch.Generator().manual_seed(seed) on CPU in float64. Seeds are "
    "provenance only: every input is embedded in the file."
)
INPUT_RULE = (
    "Case i has shape [B, T] = [(4, 6), (5, 8), (4, 6), (5, 8)][i]. Draw order: row lengths L_b = randint(1..T) "
    "per row; for cases i >= 1 (case.empty_row is not null) row e = randint(0..B-1) then gets L_e = 0 (an "
    "all-False mask row); response_mask[b, t] = t < L_b (right-padded). Then logprobs ~ U[-8, -0.05] [B, T], "
    "old_logprobs = logprobs + U[-1.5, 1.5] [B, T], advantages ~ U[-3, 3], [B, T] for verl (per token) and [B] "
    "for TRL. U[a, b] = a + (b - a) * torch.rand(shape, generator, dtype=float64). A draw is rejected unless "
    "some non-empty row has 0 < L_b < T and every response token has |A| > 1e-6 and a ratio exp(lp - old) "
    "more than 1e-6 away from 0.8, 1.2 and 3.0 (PPO clip edges and verl's dual clip)."
)
JUNK_RULE = (
    "Every masked (padding) position of every [B, T] input (logprobs, old_logprobs and verl's advantages; "
    "the whole of an empty row) holds 123.0 in the recorded inputs. Each case is also run with the "
    "generator's in-range values at those positions; junk_reaches_output says whether the loss or gradient "
    "differ (bitwise, sign of zero ignored) between the two runs."
)
GRAD_RULE = (
    "logprobs is a float64 leaf with requires_grad=True (a fresh clone per call); grad_logprobs = "
    "torch.autograd.grad(loss, logprobs)[0], [B, T], exactly as produced (padding positions included). "
    "old_logprobs and advantages are plain float64 tensors."
)
MODEL_RULE = (
    "Each variant's normaliser (and the per-token PPO surrogate under it) is re-implemented independently in "
    "globalNormalisers.py from the description; the recorder asserts |model - upstream| <= 1e-11 * "
    "max|upstream| for the loss and grad_logprobs of every recorded (junk) case. A check only."
)

JSON_RULE = (
    "JSON indent=1 with sorted keys and a trailing newline; floats are Python repr (shortest round-trip float64); "
    "signed zeros are kept as produced by torch; masks are booleans; all outputs are finite (asserted)."
)

torch: Any = None  # populated in main()


# --- Loading ---


def load_verl(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    """verl core_algos: only the registry, agg_loss and compute_policy_loss_vanilla (+ masked_sum/mean)."""
    tf_tree, tf_name = fw.parse(sources, target, fw.VERL_TF)
    verl_f = types.ModuleType("verl.utils.torch_functional")
    tf_ns: dict[str, Any] = {"__name__": verl_f.__name__, "torch": torch}
    tf_nodes = fw.pick_top_level(tf_tree, sg.VERL_TF_PICKED, tf_name)
    fw.exec_nodes(tf_nodes, tf_ns, tf_name)
    for name in sg.VERL_TF_PICKED:
        setattr(verl_f, name, tf_ns[name])
    base_tree, base_name = fw.parse(sources, target, fw.VERL_BASE)
    base_ns: dict[str, Any] = {"__name__": "verl.base_config", "Any": Any}
    fw.exec_nodes([fw.pick_method(base_tree, "BaseConfig", "get", base_name)], base_ns, base_name)
    actor_cls, policy_cls = sg.make_config_classes(base_ns["get"])
    actor_tree, actor_name = fw.parse(sources, target, fw.VERL_ACTOR)
    actor_defaults = fw.dataclass_defaults(actor_tree, "ActorConfig", VERL_ACTOR_FIELDS, actor_name)
    core_tree, core_name = fw.parse(sources, target, fw.VERL_CORE)
    nodes = fw.pick_top_level(core_tree, VERL_CORE_PICKED, core_name)
    ns: dict[str, Any] = {"__name__": "verl.trainer.ppo.core_algos", "torch": torch, "verl_F": verl_f,
                          "Optional": Optional, "Any": Any, "Callable": Callable, "ActorConfig": actor_cls,
                          "AlgoConfig": sg.VerlAlgoConfigStub, "DictConfig": sg.OmegaconfDictConfigStub}
    fw.exec_nodes(nodes, ns, core_name)
    if sorted(ns["POLICY_LOSS_REGISTRY"]) != ["vanilla"]:
        raise SystemExit(f"{core_name}: registry holds {sorted(ns['POLICY_LOSS_REGISTRY'])}")
    agg = next(n for n in nodes if fw.node_name(n) == "agg_loss")
    agg_params = [a.arg for a in agg.args.args + agg.args.kwonlyargs]
    first, _ = sg.self_attrs([next(n for n in nodes if fw.node_name(n) == "compute_policy_loss_vanilla")], "config")
    if [actor_defaults[k] for k in VERL_ACTOR_FIELDS[:4]] != [0.2, 0.2, 0.2, 3.0]:
        raise SystemExit(f"{actor_name}: clip defaults {actor_defaults} differ from the model's 0.2 / 3.0")
    if not first <= set(actor_defaults):
        raise SystemExit(f"{core_name}: vanilla reads config fields {sorted(first - set(actor_defaults))}")
    # how the actor fills global_batch_info: ppo_loss's `config.global_batch_info[...] = ...` statements
    losses_tree, losses_name = fw.parse(sources, target, sg.VERL_LOSSES)
    ppo = next(n for n in losses_tree.body if isinstance(n, ast.FunctionDef) and n.name == "ppo_loss")
    fills = [f"line {s.lineno}: {ast.unparse(s)}" for s in ast.walk(ppo) if isinstance(s, ast.Assign)
             and "global_batch_info[" in ast.unparse(s.targets[0])]
    gbi_keys = sorted(ast.literal_eval(s.split("[", 1)[1].split("]", 1)[0]) for s in fills)
    if gbi_keys != sorted(agg_params[3:]):
        raise SystemExit(f"{losses_name}: ppo_loss fills {gbi_keys}, agg_loss takes {agg_params}")
    return types.SimpleNamespace(
        ns=ns, actor_cls=actor_cls, policy_cls=policy_cls, actor_defaults=actor_defaults, policy_defaults={},
        reads={"vanilla": (sorted(first), [])}, agg_params=agg_params, gbi_keys=gbi_keys, fills=fills,
        lines={fw.node_name(n): [n.lineno, n.end_lineno] for n in nodes},
        tf_lines={fw.node_name(n): [n.lineno, n.end_lineno] for n in tf_nodes})


# --- Upstream calls ---


def verl_call(api: types.SimpleNamespace, mode: str, gbi: dict[str, Any], mask: Any,
              inp: dict[str, Any]) -> dict[str, Any]:
    lp = inp["logprobs"].detach().clone().requires_grad_(True)
    cfg, values = sg.verl_config(api, ["vanilla"], {"global_batch_info": gbi})
    fn = api.ns["get_policy_loss_fn"]("vanilla")
    loss, metrics = fn(old_log_prob=inp["old_logprobs"].clone(), log_prob=lp, advantages=inp["advantages"].clone(),
                       response_mask=mask, loss_agg_mode=mode, config=cfg, rollout_is_weights=None)
    (grad,) = torch.autograd.grad(loss, lp)
    if not set(sg.verl_config_read(cfg)) <= set(values):
        raise AssertionError(f"config fields read but not provided: {sg.verl_config_read(cfg)}")
    return {"loss": loss.detach(), "grad_logprobs": grad, "metrics": {k: float(v) for k, v in sorted(metrics.items())},
            "config": values}


def trl_call(api: types.SimpleNamespace, cfg: dict[str, Any], world: dict[str, Any], mask: Any,
             inp: dict[str, Any]) -> dict[str, Any]:
    batch, width = mask.shape
    lp = inp["logprobs"].detach().clone().requires_grad_(True)
    obj = sg.trl_self(api, cfg, {}, lp, torch.zeros_like(lp))
    obj.current_gradient_accumulation_steps = world["current_gradient_accumulation_steps"]
    obj.accelerator = type("TwoProcessAccelerator", (sg.TrlAccelerator,), {"num_processes": 2})()  # identity gather
    assert obj.accelerator.num_processes == world["num_processes"]
    long = torch.long
    inputs = {
        "prompt_ids": torch.zeros((batch, 1), dtype=long), "prompt_mask": torch.ones((batch, 1), dtype=long),
        "completion_ids": torch.zeros((batch, width), dtype=long), "completion_mask": mask.to(long),
        "advantages": inp["advantages"].clone(), "old_per_token_logps": inp["old_logprobs"].clone(),
        "num_items_in_batch": torch.tensor(world["num_items_in_batch"], dtype=torch.long),
    }
    loss = obj._compute_loss(obj.model, inputs)
    (grad,) = torch.autograd.grad(loss, lp)
    return {"loss": loss.detach(), "grad_logprobs": grad}


# --- Independent models (checks only; see MODEL_RULE) ---


def model(spec: dict[str, Any], setting: dict[str, Any], mask: Any, inp: dict[str, Any]) -> dict[str, Any]:
    lp = inp["logprobs"].detach().clone().requires_grad_(True)
    old, a = inp["old_logprobs"], inp["advantages"]
    if spec["framework"] == "verl":
        r = torch.exp(torch.clamp(lp - old, -20.0, 20.0))
        ppo = torch.maximum(-a * r, -a * torch.clamp(r, 0.8, 1.2))
        tok = torch.where(a < 0, torch.minimum(-3.0 * a, ppo), ppo)
    else:
        r, a = torch.exp(lp - old), a[:, None]
        tok = -torch.minimum(r * a, torch.clamp(r, 0.8, 1.2) * a)
    rows = torch.where(mask, tok, torch.zeros((), dtype=torch.float64)).sum(-1)
    per_row_mean = rows / torch.clamp(mask.sum(-1).to(torch.float64), min=1.0)  # an empty row has rows = 0
    n_tok = float(mask.sum())
    g, w = setting.get("global_batch_info", {}), setting
    loss = {  # each normaliser, lazily
        "token-mean": lambda: rows.sum() / g["batch_num_tokens"] * g["dp_size"],
        "token-sum": lambda: rows.sum() * g["dp_size"],
        "seq-mean-token-sum": lambda: rows.sum() / g["global_batch_size"] * g["dp_size"],
        "seq-mean-token-sum-norm": lambda: rows.sum() / g["global_batch_size"] * g["dp_size"]
        / (g["loss_scale_factor"] or mask.shape[1]),
        "seq-mean-token-mean": lambda: per_row_mean.sum() / g["global_batch_size"] * g["dp_size"],
        "grpo": lambda: per_row_mean.mean() / w["current_gradient_accumulation_steps"],
        "bnpo": lambda: rows.sum() / max(n_tok, 1.0) / w["current_gradient_accumulation_steps"],
        "dapo": lambda: rows.sum() / (max(w["num_items_in_batch"], 1) / w["num_processes"]),
    }[spec["kind"]]()
    (grad,) = torch.autograd.grad(loss, lp)
    return {"loss": loss.detach(), "grad_logprobs": grad}


def close(where: str, got: Any, want: Any) -> None:
    scale = max(float(want.abs().max()), 1e-300)
    err = float((got - want).abs().max())
    if not err <= MODEL_RTOL * scale:
        raise AssertionError(f"{where}: model differs from upstream by {err:.3e} (scale {scale:.3e})")


# --- Variants ---

VERL_COMMON = (
    "verl compute_policy_loss_vanilla called through get_policy_loss_fn('vanilla') with the ActorConfig defaults "
    "(clip_ratio = clip_ratio_low = clip_ratio_high = 0.2, clip_ratio_c = 3.0): r = exp(clamp(lp - old, -20, 20)), "
    "l = max(-A r, -A clamp(r, 0.8, 1.2)), and for A < 0 l = min(-3 A, l) (dual clip); then agg_loss(loss_mat=l, "
    "loss_mask=m, loss_agg_mode, **config.global_batch_info). global_batch_info carries the four keys ppo_loss "
    "(verl/workers/utils/losses.py) always fills: dp_size, batch_num_tokens (the token count all-reduced over the "
    "DP group), global_batch_size (the trainer passes ppo_mini_batch_size * rollout.n, i.e. every sequence, empty "
    "or not) and loss_scale_factor (= ActorConfig.loss_scale_factor). Here: dp_size 2, batch_num_tokens 3 N (N = "
    "this shard's response-token count), global_batch_size 2 B_nonempty (B_nonempty = rows with L_b > 0) unless "
    "stated, loss_scale_factor None unless stated; the per-case setting holds the dict exactly as passed. "
    "masked_sum(x, m) = sum(where(m, x, 0) * m); response_mask is torch.bool. "
)
VERL_VARIANTS = [
    ("token-mean", "token-mean", {},
     "Mode token-mean reads dp_size and batch_num_tokens: loss = masked_sum(l, m) / batch_num_tokens * dp_size = "
     "sum(l m) / (3 N) * 2, i.e. 2/3 of the local token mean. Empty rows add nothing to numerator or denominator."),
    ("token-sum", "token-sum", {},
     "Mode token-sum reads only dp_size: loss = masked_sum(l, m) * dp_size = 2 * sum(l m) (no division at all; "
     "the DP gradient average then yields the global token sum)."),
    ("seq-mean-token-sum", "seq-mean-token-sum", {},
     "Mode seq-mean-token-sum reads dp_size and global_batch_size: s_b = sum_t(l m) (plain l * m product), seq_mask "
     "= float(L_b > 0); loss = masked_sum(s, seq_mask) / global_batch_size * dp_size = sum_b s_b / (2 B_nonempty) "
     "* 2 (equal to the local mean over non-empty rows; the local default would divide by seq_mask.sum() too)."),
    ("seq-mean-token-sum-norm", "seq-mean-token-sum-norm", {},
     "Mode seq-mean-token-sum-norm, loss_scale_factor None: as seq-mean-token-sum, then loss /= loss_mask.shape[-1] "
     "(the padded width T of this micro-batch, not a constant): sum_b s_b / (2 B_nonempty) * 2 / T."),
    ("seq-mean-token-sum-norm:loss_scale_factor-16", "seq-mean-token-sum-norm", {"loss_scale_factor": 16},
     "Mode seq-mean-token-sum-norm with loss_scale_factor 16: sum_b s_b / (2 B_nonempty) * 2 / 16 (the factor "
     "replaces T)."),
    ("seq-mean-token-mean", "seq-mean-token-mean", {},
     "Mode seq-mean-token-mean reads dp_size and global_batch_size: row means s_b = sum_t(l m) / (L_b + 1e-8) "
     "(L_b int64 + 1e-8 is float32 and equals L_b exactly for L_b >= 1; an empty row gives 0 / 1e-8 = 0), seq_mask "
     "= float(L_b > 0); loss = masked_sum(s, seq_mask) / global_batch_size * dp_size = sum_b s_b / (2 B_nonempty) "
     "* 2."),
    ("seq-mean-token-mean:global_batch_size-2B", "seq-mean-token-mean", {"global_batch_size": "2B"},
     "Mode seq-mean-token-mean with global_batch_size 2 B (every row counted, as the trainer's "
     "ppo_mini_batch_size * rollout.n counts them): loss = sum_b s_b / (2 B) * 2, so an empty row still enlarges "
     "the denominator although seq_mask drops it from the numerator (the local default, global_batch_size None, "
     "would divide by B_nonempty)."),
]
TRL_COMMON = (
    "TRL GRPOTrainer._compute_loss (fake trainer self from surrogates.trl_self, GRPOConfig defaults: epsilon 0.2, "
    "epsilon_high None -> 0.2, beta 0, delta None, importance_sampling_level 'token'; train mode) with per-token "
    "loss l = -min(c A_b, clamp(c, 0.8, 1.2) A_b), c = exp(lp - old) (no log-ratio clamp), summed as l * m with "
    "the long completion_mask. Every TRL variant runs in the same simulated world: inputs['num_items_in_batch'] = "
    "3 N (0-dim int64; upstream sets it to accelerator.gather(loss_mask.sum()).sum() over the whole generation "
    "batch), accelerator.num_processes = 2 (gather/reduce are identity: only metrics would see the other rank), "
    "current_gradient_accumulation_steps = 4; each loss type reads only part of it. "
)
TRL_VARIANTS = [
    ("dapo", "dapo",
     "loss_type dapo: normalizer = num_items_in_batch.clamp(min=1.0) / num_processes (int64 / int -> float32 "
     "tensor, exact here); loss = sum(l m) / (3 N / 2). current_gradient_accumulation_steps is NOT applied (the "
     "global token count already spans the accumulation window); empty rows add nothing."),
    ("grpo", "grpo",
     "loss_type grpo: loss = mean_b(sum_t(l m) / clamp(L_b, min=1)) / current_gradient_accumulation_steps = "
     "mean over ALL B rows / 4: an empty row contributes 0 but is counted in the mean over B. num_items_in_batch "
     "and num_processes are not read."),
    ("bnpo", "bnpo",
     "loss_type bnpo: loss = sum(l m) / clamp(sum(m), min=1) / current_gradient_accumulation_steps = local token "
     "mean / 4 (the local token count of this micro-batch, not num_items_in_batch; num_processes not read)."),
]


def specs() -> list[dict[str, Any]]:
    out = [{"name": f"verl:{n}", "framework": "verl", "kind": k, "over": o, "description": VERL_COMMON + d,
            "function": "verl.trainer.ppo.core_algos.compute_policy_loss_vanilla -> agg_loss"}
           for n, k, o, d in VERL_VARIANTS]
    out += [{"name": f"trl:{n}", "framework": "trl", "kind": k, "description": TRL_COMMON + d,
             "function": "trl.trainer.grpo_trainer.GRPOTrainer._compute_loss"} for n, k, d in TRL_VARIANTS]
    return out


def case_setting(spec: dict[str, Any], mask: Any) -> dict[str, Any]:
    n_tok, n_rows, nonempty = int(mask.sum()), mask.shape[0], int((mask.sum(-1) > 0).sum())
    if spec["framework"] == "verl":
        gbi = {"dp_size": 2, "batch_num_tokens": 3 * n_tok, "global_batch_size": 2 * nonempty,
               "loss_scale_factor": None}
        gbi.update({k: 2 * n_rows if v == "2B" else v for k, v in spec["over"].items()})
        return {"global_batch_info": gbi}
    return {"num_items_in_batch": 3 * n_tok, "num_processes": 2, "current_gradient_accumulation_steps": 4}


# --- Draws and recording ---


def draw(seed: int, shape: tuple[int, int], empty: bool, per_row_adv: bool) -> tuple[Any, Optional[int], dict]:
    gen = torch.Generator().manual_seed(seed)
    batch, width = shape
    lengths = [fw.randint(gen, 1, width) for _ in range(batch)]
    empty_row = fw.randint(gen, 0, batch - 1) if empty else None
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    if empty_row is not None:
        mask[empty_row] = False
    lp = fw.uniform(gen, (batch, width), *LP_RANGE)
    old = lp + fw.uniform(gen, (batch, width), *GAP)
    adv = fw.uniform(gen, (batch,) if per_row_adv else (batch, width), *ADV_RANGE)
    return mask, empty_row, {"logprobs": lp, "old_logprobs": old, "advantages": adv}


def accept(mask: Any, s: dict[str, Any]) -> bool:
    lengths = mask.sum(-1)
    a = s["advantages"][:, None].expand_as(mask) if s["advantages"].dim() == 1 else s["advantages"]
    r = torch.exp(s["logprobs"] - s["old_logprobs"])[mask]
    return (bool(((lengths > 0) & (lengths < mask.shape[1])).any()) and bool((a[mask].abs() > EDGE_MARGIN).all())
            and all(bool(((r - e).abs() > EDGE_MARGIN).all()) for e in EDGES))


def record_variant(spec: dict[str, Any], api: types.SimpleNamespace, target: fw.Target) -> dict[str, Any]:
    fwk, cases = spec["framework"], []
    for i, shape in enumerate(SHAPES[:CASES_PER_VARIANT]):
        base = f"{fwk}@{target.label}:{spec['name'].split(':', 1)[1]}:{i}"
        for attempt in range(MAX_ATTEMPTS):
            seed = zlib.crc32((base if attempt == 0 else f"{base}:{attempt}").encode()) & 0x7FFFFFFF
            mask, empty_row, clean = draw(seed, shape, i >= 1, fwk == "trl")
            if accept(mask, clean):
                break
        else:
            raise SystemExit(f"{base}: no acceptable draw")
        junk = {k: torch.where(mask, v, torch.tensor(JUNK, dtype=torch.float64)) if v.dim() == 2 else v.clone()
                for k, v in clean.items()}
        setting = case_setting(spec, mask)
        if fwk == "verl":
            run = lambda inp: verl_call(api, spec["kind"], dict(setting["global_batch_info"]), mask, inp)  # noqa: E731
        else:
            cfg = dict(api.defaults, loss_type=spec["kind"], max_completion_length=shape[1])
            run = lambda inp: trl_call(api, cfg, setting, mask, inp)  # noqa: E731
        out, twin = run(junk), run(clean)
        if fwk == "verl" and out["config"]["global_batch_info"] != setting["global_batch_info"]:
            raise AssertionError("global_batch_info was not passed as recorded")
        if not all(bool(torch.isfinite(t).all()) for t in (out["loss"], out["grad_logprobs"])):
            raise AssertionError(f"{base}: non-finite output")
        mod = model(spec, setting, mask, junk)
        close(f"{base} loss", mod["loss"], out["loss"])
        close(f"{base} grad_logprobs", mod["grad_logprobs"], out["grad_logprobs"])
        outputs = {"loss": float(out["loss"]), "grad_logprobs": out["grad_logprobs"].tolist(),
                   **({"metrics": out["metrics"]} if "metrics" in out else {})}
        reaches = any(not bool((out[k] == twin[k]).all()) for k in ("loss", "grad_logprobs"))
        cases.append({"seed": seed, "seed_attempt": attempt, "shape": list(shape), "empty_row": empty_row,
                      "junk": "123.0", "setting": setting, "outputs": outputs, "junk_reaches_output": reaches,
                      "inputs": {"response_mask": mask.tolist(), **{k: v.tolist() for k, v in junk.items()}}})
    if fwk == "verl":
        rule = {"called_via": "get_policy_loss_fn('vanilla')", "loss_agg_mode": spec["kind"],
                "config": {k: api.actor_defaults[k] for k in api.reads["vanilla"][0] if k != "global_batch_info"},
                "global_batch_info": "per case (case.setting.global_batch_info), passed as config.global_batch_info",
                "rollout_is_weights": None, "response_mask_dtype": "torch.bool"}
    else:
        rule = {"loss_type": spec["kind"], "mode": "train", "response_mask_dtype": "torch.long",
                "grpo_config": dict(api.defaults, loss_type=spec["kind"], max_completion_length="T (per case)"),
                "world": "per case (case.setting): num_items_in_batch, num_processes, "
                         "current_gradient_accumulation_steps"}
    return {"name": spec["name"], "framework": fwk, "pin": target.label, "commit": target.commit,
            "function": spec["function"], "setting": rule, "description": spec["description"], "cases": cases}


def pin_provenance(target: fw.Target, api: types.SimpleNamespace) -> dict[str, Any]:
    prov: dict[str, Any] = {"framework": target.framework, "repo": f"https://github.com/{target.repo}",
                            "commit": target.commit, "label": target.label,
                            "files": [{"path": p, "sha256": s} for p, s in sorted(target.files.items())]}
    if target.framework == "trl":
        return dict(prov, self_attributes_read=api.attrs, picked_definitions={
            fw.TRL_TRAINER: [f"GRPOTrainer.{n} (lines {a}-{b})" for n, (a, b) in api.lines.items()],
            fw.TRL_CONFIG: [f"GRPOConfig.{f} (default only)" for f in sg.TRL_CONFIG_FIELDS]}, stubs=sg.TRL_STUBS + (
            " Overrides in this file: current_gradient_accumulation_steps = 4 and accelerator = the same stand-in "
            "with num_processes = 2 (identity gather/reduce) are set on the instance after construction; "
            "inputs['num_items_in_batch'] = 3 N as a 0-dim int64 tensor instead of completion_mask.sum()."))
    return dict(prov, agg_loss_parameters=api.agg_params, ppo_loss_global_batch_info_statements=api.fills,
                actor_config_defaults=api.actor_defaults, picked_definitions={
        fw.VERL_CORE: [f"{n} (lines {a}-{b})" for n, (a, b) in api.lines.items()],
        fw.VERL_TF: [f"{n} (lines {a}-{b})" for n, (a, b) in api.tf_lines.items()],
        fw.VERL_BASE: ["BaseConfig.get"], fw.VERL_ACTOR: [f"ActorConfig.{f} (default only)" for f in VERL_ACTOR_FIELDS],
        sg.VERL_LOSSES: ["ppo_loss: parsed only (not executed), to quote its global_batch_info statements"]},
        stubs=("surrogates.py's ActorConfig stand-in (make_config_classes; get() is BaseConfig.get picked from the "
               "pinned base_config.py) carrying exactly the fields compute_policy_loss_vanilla reads "
               f"({', '.join(api.reads['vanilla'][0])}), every read asserted provided; AlgoConfig and DictConfig are "
               "empty stand-in classes (isinstance / annotations only); verl_F holds only the picked masked_sum and "
               "masked_mean. Nothing else of verl is imported."))


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verl-git", default=os.environ.get("VERL_GIT"), help="git dir of verl (default $VERL_GIT)")
    parser.add_argument("--trl-git", default=os.environ.get("TRL_GIT"), help="git dir of trl (default $TRL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    git_dirs = {"verl": args.verl_git, "trl": args.trl_git}
    for name, value in git_dirs.items():
        if not value:
            parser.error(f"--{name}-git (or ${name.upper()}_GIT) is required")
    import torch as _torch  # noqa: PLC0415
    torch = fw.torch = sg.torch = _torch  # the sibling modules' helpers read their module global
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    for name, env in (("verl", "VERL_GIT"), ("trl", "TRL_GIT")):
        if f"--{name}-git" not in " ".join(sys.argv[1:]):
            command = f"{env}={shlex.quote(git_dirs[name])} {command}"
    variants: list[dict[str, Any]] = []
    pins = []
    for fwk in ("verl", "trl"):
        base = next(t for t in fw.TARGETS if t.framework == fwk and t.label == PINS[fwk])
        files = ([fw.VERL_CORE, fw.VERL_TF, fw.VERL_ACTOR, fw.VERL_BASE, sg.VERL_LOSSES] if fwk == "verl"
                 else [fw.TRL_TRAINER, fw.TRL_CONFIG])
        target = dataclasses.replace(base, files={p: base.files.get(p) or sg.VERL_LOSSES_SHA256[base.commit]
                                                  for p in files})
        sources = fw.read_pinned_sources(fw.git_dir_of(Path(git_dirs[fwk]).resolve()), target)
        api = load_verl(target, sources) if fwk == "verl" else sg.load_trl(target, sources)
        variants += [record_variant(s, api, target) for s in specs() if s["framework"] == fwk]
        pins.append(pin_provenance(target, api))
    provenance = {
        "tool": TOOL_PATH, "command": command, "torch_version": torch.__version__,
        "python_version": platform.python_version(), "dtype": "float64", "pins": pins,
        "loading": fw.LOADING_RULE + (f" Here also {sg.VERL_LOSSES} (SHA-256 pinned in surrogates.py), parsed only "
                                      "to quote how ppo_loss fills config.global_batch_info; none of it is executed."),
        "seed_rule": SEED_RULE, "input_rule": INPUT_RULE, "junk_rule": JUNK_RULE, "grad_rule": GRAD_RULE,
        "model_rule": MODEL_RULE, "json_rule": JSON_RULE, "edge_margin": EDGE_MARGIN,
        "shapes": [list(s) for s in SHAPES], "cases_per_variant": CASES_PER_VARIANT,
    }
    out = Path(args.out)
    fw.write_json(out, {"provenance": provenance, "variants": variants})
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(variants)} variants, "
          f"{sum(len(v['cases']) for v in variants)} cases)")


if __name__ == "__main__":
    main()
