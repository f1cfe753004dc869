#!/usr/bin/env python3
"""Record numeric fixtures of the vLLM importance-sampling (IS) corrections of OpenRLHF and TRL.

This recorder runs the real IS-correction code of OpenRLHF (``PolicyLoss`` with
``enable_vllm_is_correction=True``: tis, icepop, seq-mask-tis) and of TRL (the IS-ratio block of
``GRPOTrainer._generate_and_score_completions`` followed by the real ``_compute_loss``) at the
pins of ``frameworks.py``, on seeded float64 batches, and writes only numbers plus provenance to
``test/fixtures/frameworks/is-correction.json``.

No framework code is copied into this repository. Everything upstream is loaded the way
``frameworks.py`` loads it, with its helpers (imported as a module): each pinned file is read with
``git --git-dir=<dir> show <commit>:<path>`` in memory, its SHA-256 is checked against the
constants in ``frameworks.TARGETS``, it is parsed with ``ast``, and only the needed definitions are
compiled (with the upstream file name and line numbers) and executed with real torch. TRL's IS
ratio is not a function upstream: it is the ``if self.use_vllm and
self.vllm_importance_sampling_correction:`` block inside ``_generate_and_score_completions``. The
recorder finds that ``If`` statement with ``ast`` (by its test source, and as the one whose body
assigns ``vllm_importance_sampling_ratio``), checks that every name it reads is bound, and
executes it alone in a namespace binding exactly those names.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/isCorrection.py \\
        --openrlhf-git /path/to/OpenRLHF.git --trl-git /path/to/trl.git

Output (JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs):

    test/fixtures/frameworks/is-correction.json
"""

from __future__ import annotations

import argparse
import ast
import inspect
import math
import os
import platform
import shlex
import sys
import types
from pathlib import Path
from typing import Any, Callable, Optional

sys.dont_write_bytecode = True  # importing frameworks.py must not leave a __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import frameworks as fw  # noqa: E402  (the sibling recorder, guarded by `if __name__ == "__main__"`)

TOOL_PATH = "tools/record-fixtures/isCorrection.py"
DEFAULT_OUT = fw.REPO_ROOT / "test" / "fixtures" / "frameworks" / "is-correction.json"

# --------------------------------------------------------------------------------------
# Recording rules
# --------------------------------------------------------------------------------------

ROLLOUT_GAP_TOKEN = (-1.5, 1.5)  # OpenRLHF (all types) and TRL token_* modes
ROLLOUT_GAP_SEQUENCE = (-0.6, 0.6)  # TRL sequence_* modes: row products spread around 1
# Every bound used by any variant of the file. Token weights, row products and row geometric
# means of every case are kept more than KINK_MARGIN away from each of them.
IS_BOUNDS = (0.5, 0.8, 0.9, 1.1, 1.2, 3.0, 5.0)
MAX_REDRAWS = 1000
TRL_MAX_COMPLETION_LENGTH = 12  # >= every T of fw.SHAPES, so dr_grpo's B * 12 is one fixed norm_len

SEED_RULE = (
    "seed = zlib.crc32(f'{framework}@{label}:is-correction:{variant}:{i}'.encode()) & 0x7FFFFFFF "
    "(frameworks.case_seed with variant 'is-correction:<variant>') for case i = 0..3 of a variant; "
    "every draw comes from torch.Generator().manual_seed(seed) on CPU in float64. The TS side "
    "cannot replay torch's RNG: seeds are provenance only, every input is embedded in the file."
)
INPUT_RULE = (
    "Case i has shape [B, T] = [(4, 8), (3, 5), (2, 12), (5, 7)][i % 4]. The generator first draws "
    "exactly what frameworks.py's draw_batch draws, in its order (row lengths, right-padded ragged "
    "mask with at least one row shorter than T, logprobs ~ U[-8, -0.05], old_logprobs = logprobs + "
    "U[-2, 2], ref_logprobs = logprobs + U[-1.5, 1.5] (drawn but not used), advantages ~ U[-3, 3], "
    "[B, T] for OpenRLHF and [B] for TRL); the recorder asserts the result is bitwise "
    "frameworks.draw_batch's. Then, from the same generator, rollout_logprobs = old_logprobs + "
    "U[g], [B, T], with g = [-1.5, 1.5] for OpenRLHF and TRL token_* modes and g = [-0.6, 0.6] for "
    "TRL sequence_* modes (per-token gaps small enough that row products exp(sum) spread around 1, "
    "large enough that some exceed 3). Padding holds in-range values drawn like response positions "
    "(the frameworks multiply by the mask). The rollout stream alone is redrawn from the same "
    "generator (the case's rollout_redraws counts the redraws, absent when 0) while the case does "
    "not exercise its variant's bounds (at the variant's bounded level, at least one response token "
    "or row must lie outside [lower, cap] and at least one inside; lower 0 and cap +inf where "
    "unset) or while a token weight exp(old - rollout), a row product exp(sum_t m*(old - rollout)) "
    "or a row geometric mean exp(mean_t m*(old - rollout)) lies within 1e-9 of any bound in "
    "[0.5, 0.8, 0.9, 1.1, 1.2, 3.0, 5.0]. Policy ratios are asserted as in frameworks.py: token and "
    "sequence ratios more than 1e-9 from 0.8, 1.2, 3.0 and 5.0. tokens_outside / rows_outside count "
    "the response tokens / rows whose weight at the variant's bounded level lies outside its "
    "bounds (null for the level that has no bounds in the variant)."
)
GRAD_RULE = fw.GRAD_RULE
JSON_RULE = fw.JSON_RULE

torch: Any = None  # populated in main()


# --------------------------------------------------------------------------------------
# Batches
# --------------------------------------------------------------------------------------


def weights_of(batch: dict[str, Any]) -> dict[str, Any]:
    """Token weights, row products and row geometric means of old - rollout on response tokens."""
    mask = batch["mask"]
    d = torch.where(mask, batch["old"] - batch["rollout"], torch.zeros((), dtype=torch.float64))
    row_sum = d.sum(dim=1)
    return {
        "token": torch.exp(d)[mask],
        "sequence": torch.exp(row_sum),
        "geometric": torch.exp(row_sum / mask.sum(dim=1).to(torch.float64)),
    }


def near_bound(batch: dict[str, Any]) -> bool:
    w = weights_of(batch)
    return any(bool(((x - edge).abs() <= fw.KINK_MARGIN).any()) for x in w.values() for edge in IS_BOUNDS)


def outside(batch: dict[str, Any], level: str, lower: Optional[float], cap: Optional[float]) -> tuple[int, int]:
    """(outside, inside) counts of the weights at ``level`` against [lower, cap]."""
    x = weights_of(batch)[level]
    lo = -math.inf if lower is None else lower
    hi = math.inf if cap is None else cap
    out = int(((x < lo) | (x > hi)).sum())
    return out, int(x.numel()) - out


def draw_is_batch(seed: int, shape: tuple[int, int], adv_per_row: bool, gap: tuple[float, float],
                  bounded: tuple[str, Optional[float], Optional[float]]) -> dict[str, Any]:
    """frameworks.draw_batch's draws, then the rollout stream from the same generator."""
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
    adv = fw.uniform(gen, (batch_size,) if adv_per_row else (batch_size, width), *fw.ADV_RANGE)
    reference = fw.draw_batch(seed, shape, adv_per_row, False)
    for key, mine in (("mask", mask), ("lp", lp), ("old", old), ("ref", ref), ("adv", adv)):
        if not fw.bitwise_equal(mine, reference[key]):
            raise AssertionError(f"seed {seed}: {key} differs from frameworks.draw_batch")
    batch = {"mask": mask, "lp": lp, "old": old, "ref": ref, "adv": adv, "redraws": 0}
    level, lower, cap = bounded
    redraws = 0
    while True:
        batch["rollout"] = old + fw.uniform(gen, (batch_size, width), *gap)
        n_out, n_in = outside(batch, level, lower, cap)
        if n_out > 0 and n_in > 0 and not near_bound(batch):
            break
        redraws += 1
        if redraws > MAX_REDRAWS:
            raise SystemExit(f"seed {seed}: the bounds are never exercised")
    batch["rollout_redraws"] = redraws
    return batch


def call_is_variant(run: Callable[[dict[str, Any], Any], Any], batch: dict[str, Any]) -> tuple[Any, Any]:
    """frameworks.call_variant with the rollout stream (long mask) passed alongside."""
    rollout = batch["rollout"].clone()
    return fw.call_variant(lambda b: run(b, rollout), batch, torch.long)


# --------------------------------------------------------------------------------------
# OpenRLHF
# --------------------------------------------------------------------------------------

ORL_TYPES = (
    # (type, [low, high]) -- [0.5, 5.0] is OpenRLHF's CLI default (--algo.advantage.is_correction_threshold)
    ("tis", (0.5, 5.0)), ("tis", (0.8, 1.2)),
    ("icepop", (0.5, 5.0)), ("icepop", (0.8, 1.2)),
    ("seq-mask-tis", (0.5, 5.0)), ("seq-mask-tis", (0.9, 1.1)),
)
ORL_TEXT = {
    "tis": "TIS: per-token weight sg[clamp(exp(old - rollout), low, high)] times the PPO per-token loss",
    "icepop": "IcePop: per-token weight sg[exp(old - rollout)] if low <= it <= high, else 0",
    "seq-mask-tis": "seq-mask-tis: the row's geometric mean g_b = exp(masked_mean_t(old - rollout)) "
                    "filters rows (g_b in [low, high] keeps the row, else every token gets 0); kept "
                    "tokens are weighted by the UNCLAMPED sg[exp(old - rollout)] (the upstream comment "
                    "says 'correction coefficients still use TIS (token-level clamp)', but the code "
                    "applies no clamp)",
}


def has_openrlhf_is(sources: dict[str, str]) -> bool:
    text = sources[fw.ORL_LOSS]
    return all(s in text for s in ('"icepop"', '"seq-mask-tis"', "rollout_log_probs", "vllm_is_truncated_threshold"))


def openrlhf_is_variants(api: types.SimpleNamespace) -> list[dict[str, Any]]:
    ns = api.ns
    variants = []
    for kind, (low, high) in ORL_TYPES:
        ctor = {"clip_eps_low": 0.2, "clip_eps_high": 0.2, "dual_clip": None, "token_level_loss": True,
                "policy_loss_type": "ppo", "enable_vllm_is_correction": True,
                "vllm_is_truncated_threshold": [low, high], "vllm_is_correction_type": kind}

        def run(b: dict[str, Any], rollout: Any, ctor: dict[str, Any] = ctor) -> Any:
            fn = ns["PolicyLoss"](**ctor)
            loss, _clip_ratio, _ppo_kl, _vllm_kl = fn(b["lp"], b["old"], b["adv"], action_mask=b["mask"],
                                                      rollout_log_probs=rollout)
            return loss

        if kind == "seq-mask-tis":
            is_corr: dict[str, Any] = {"level": "token", "cap": None,
                                       "row_mask": {"level": "geometric", "lower": low, "cap": high}}
            bounded = ("geometric", low, high)
        else:
            is_corr = {"level": "token", "cap": high, "lower": low}
            if kind == "icepop":
                is_corr["mode"] = "mask"
            bounded = ("token", low, high)
        variants.append({
            "name": f"ppo:token:{kind}:{low!r}-{high!r}",
            "description": (
                f"OpenRLHF PolicyLoss(**setting.constructor)(log_probs, old_log_probs, advantages, "
                f"action_mask=mask, rollout_log_probs=rollout) with dp_size 1 and no batch_num_tokens / "
                f"global_batch_size; loss = the first return value. PPO clip -min(r*A, clamp(r, 0.8, "
                f"1.2)*A), r = exp(clamp(lp - old, +-20)); {ORL_TEXT[kind]}, low = {low!r}, high = "
                f"{high!r}; token-level masked mean sum(m*w*l)/sum(m) (the weight never changes the "
                f"denominator). action_mask is torch.long."
            ),
            "setting": {
                "function": "openrlhf.models.loss.PolicyLoss.forward",
                "constructor": dict(sorted(ctor.items())),
                "forward": {"rollout_log_probs": "rollout_logprobs", "dp_size": 1, "batch_num_tokens": None,
                            "global_batch_size": None},
                "response_mask_dtype": "torch.long",
            },
            "config": {"ratio": "token", "surrogate": "pg_clip",
                       "clip": {"eps_low": 0.2, "eps_high": 0.2, "ratio_cap": None},
                       "aggregation": "token_mean", "norm_len": None, "is_correction": is_corr, "kl": None},
            "run": run,
            "gap": ROLLOUT_GAP_TOKEN,
            "bounded": bounded,
        })
    return variants


def openrlhf_is_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "functions": ["openrlhf.models.loss.PolicyLoss.__init__", "openrlhf.models.loss.PolicyLoss.forward",
                      "openrlhf.models.loss.aggregate_loss", "openrlhf.models.utils.masked_mean"],
        "picked_definitions": {fw.ORL_LOSS: fw.ORL_LOSS_PICKED, fw.ORL_UTILS: fw.ORL_UTILS_PICKED},
        "forward_signature": str(inspect.signature(api.ns["PolicyLoss"].forward)),
        "constructor_signature": str(inspect.signature(api.ns["PolicyLoss"].__init__)),
        "stubs": fw.ORL_STUBS,
        "threshold_default": "[0.5, 5.0]: the default of --algo.advantage.is_correction_threshold in "
                             "openrlhf/cli/train_ppo_ray.py at both pins (read by hand, not loaded)",
    }


# --------------------------------------------------------------------------------------
# TRL
# --------------------------------------------------------------------------------------

TRL_IS_TEST = "self.use_vllm and self.vllm_importance_sampling_correction"
TRL_IS_FIELDS = ["vllm_importance_sampling_mode", "vllm_importance_sampling_clip_max",
                 "vllm_importance_sampling_clip_min", "vllm_importance_sampling_cap"]
# (mode, clip_max, clip_min); clip_max 3.0 and clip_min None are TRL's GRPOConfig defaults.
TRL_IS_SETTINGS = (
    ("token_truncate", 3.0, None), ("token_truncate", 3.0, 0.5),
    ("token_mask", 3.0, None),
    ("sequence_truncate", 3.0, None),
    ("sequence_mask", 3.0, None), ("sequence_mask", 3.0, 0.5),
)
# (loss_type, importance_sampling_level, extra GRPOConfig overrides, our config pieces)
TRL_LOSSES = (
    ("grpo", "token", {}, {"ratio": "token", "aggregation": "seq_mean_token_mean"}),
    ("grpo", "sequence", {}, {"ratio": "sequence", "aggregation": "seq_mean_token_mean"}),
    ("bnpo", "token", {}, {"ratio": "token", "aggregation": "token_mean"}),
    ("dr_grpo", "token", {}, {"ratio": "token", "aggregation": "token_sum_norm",
                              "norm_len": TRL_MAX_COMPLETION_LENGTH}),
    ("dapo", "token", {}, {"ratio": "token", "aggregation": "token_mean"}),
    ("cispo", "token", {"epsilon_high": 5.0}, {"ratio": "token", "surrogate": "cispo",
                                               "clip": {"eps_low": None, "eps_high": 4.0, "ratio_cap": None},
                                               "aggregation": "token_mean"}),
)
TRL_SKIPPED = {
    "sapo": "no sapo surrogate in our policy-loss config (a soft sigmoid gate)",
    "dapo:token:beta-0.04": "adds a KL term and a ref stream; outside the IS question (not recorded)",
    "bnpo/dr_grpo/dapo/cispo at importance_sampling_level sequence": "not recorded; the sequence "
    "ratio is covered by grpo:sequence, the normalisers by the token-level variants",
}
TRL_LOSS_TEXT = {
    "grpo": "mean_b(sum_t m*w*l / max(L_b, 1))",
    "bnpo": "sum(m*w*l) / max(N, 1)",
    "dr_grpo": f"sum(m*w*l) / (B * max_completion_length), max_completion_length = {TRL_MAX_COMPLETION_LENGTH}",
    "dapo": "sum(m*w*l) / num_items_in_batch, num_items_in_batch = N, one process",
    "cispo": "per-token -sg[min(c, 5.0)]*A*lp (epsilon_high 5.0, an absolute cap); sum(m*w*l) / "
             "num_items_in_batch",
}


def find_trl_is_block(tree: ast.Module, where: str) -> tuple[ast.If, ast.FunctionDef]:
    method = fw.pick_method(tree, "GRPOTrainer", "_generate_and_score_completions", where)
    found = []
    for node in ast.walk(method):
        if isinstance(node, ast.If) and ast.unparse(node.test) == TRL_IS_TEST:
            assigned = {t.id for stmt in ast.walk(node) if isinstance(stmt, ast.Assign)
                        for t in stmt.targets if isinstance(t, ast.Name)}
            if "vllm_importance_sampling_ratio" in assigned:
                found.append(node)
    if len(found) != 1:
        raise SystemExit(f"{where}: expected one IS-ratio block `if {TRL_IS_TEST}:`, found {len(found)}")
    return found[0], method


def self_attributes(node: ast.AST) -> list[str]:
    return sorted({n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
                   and isinstance(n.value, ast.Name) and n.value.id == "self"})


def load_trl_is(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    api = fw.load_trl(target, sources)
    tree, filename = fw.parse(sources, target, fw.TRL_TRAINER)
    block, method = find_trl_is_block(tree, filename)
    free = sorted(fw.free_globals([block]))
    attrs = self_attributes(block)
    expected_attrs = ["use_vllm", "vllm_importance_sampling_clip_max", "vllm_importance_sampling_clip_min",
                      "vllm_importance_sampling_correction", "vllm_importance_sampling_mode"]
    if attrs != expected_attrs:
        raise SystemExit(f"{filename}: the IS block reads self.{attrs}, expected {expected_attrs}")
    code = compile(ast.Module(body=[block], type_ignores=[]), filename, "exec")
    config_tree, config_name = fw.parse(sources, target, fw.TRL_CONFIG)
    is_defaults = fw.dataclass_defaults(config_tree, "GRPOConfig", TRL_IS_FIELDS, config_name)
    compute = ast.unparse(fw.pick_method(tree, "GRPOTrainer", "_compute_loss", filename))
    if 'per_token_loss = per_token_loss * inputs["importance_sampling_ratio"]' not in compute.replace("'", '"'):
        raise SystemExit(f"{filename}: _compute_loss does not apply inputs['importance_sampling_ratio']")
    api.is_code = code
    api.is_free = free
    api.is_attrs = attrs
    api.is_lines = [block.lineno, block.end_lineno]
    api.is_method_lines = [method.lineno, method.end_lineno]
    api.is_defaults = is_defaults
    return api


def trl_is_ratio(api: types.SimpleNamespace, settings: dict[str, Any], old: Any, rollout: Any, mask: Any) -> Any:
    """Execute the pinned IS-ratio block alone; return its vllm_importance_sampling_ratio."""
    stub_self = types.SimpleNamespace(
        use_vllm=True, vllm_importance_sampling_correction=True,
        vllm_importance_sampling_mode=settings["vllm_importance_sampling_mode"],
        vllm_importance_sampling_clip_max=settings["vllm_importance_sampling_clip_max"],
        vllm_importance_sampling_clip_min=settings["vllm_importance_sampling_clip_min"])
    ns: dict[str, Any] = {"__name__": "trl.trainer.grpo_trainer", "torch": torch, "math": math,
                          "self": stub_self, "old_per_token_logps": old, "sampling_per_token_logps": rollout,
                          "completion_mask": mask, "tool_mask": None}
    bound = sorted(k for k in ns if k != "__name__")
    if bound != api.is_free:
        raise SystemExit(f"the IS block reads {api.is_free}, the namespace binds {bound}")
    with torch.no_grad():
        exec(api.is_code, ns)  # noqa: S102 - pinned, hash-checked upstream code
    return ns["vllm_importance_sampling_ratio"]


def has_trl_is(target: fw.Target, sources: dict[str, str]) -> bool:
    tree, filename = fw.parse(sources, target, fw.TRL_TRAINER)
    try:
        find_trl_is_block(tree, filename)
    except SystemExit:
        return False
    return "vllm_importance_sampling_clip_min" in sources[fw.TRL_CONFIG]


def trl_is_variants(api: types.SimpleNamespace) -> list[dict[str, Any]]:
    d = api.defaults
    variants = []
    for loss_type, level, extra, ours in TRL_LOSSES:
        for mode, clip_max, clip_min in TRL_IS_SETTINGS:
            sequence_is = mode.startswith("sequence")
            overrides: dict[str, Any] = {
                "loss_type": loss_type, "importance_sampling_level": level, **extra,
                "use_vllm": True, "vllm_importance_sampling_correction": True,
                "vllm_importance_sampling_mode": mode, "vllm_importance_sampling_clip_max": clip_max,
                "vllm_importance_sampling_clip_min": clip_min,
                "max_completion_length": TRL_MAX_COMPLETION_LENGTH,
            }
            grpo_config = dict(d)
            grpo_config.update({k: v for k, v in api.is_defaults.items() if k != "vllm_importance_sampling_cap"})
            grpo_config.update(overrides)

            def run(b: dict[str, Any], rollout: Any, grpo_config: dict[str, Any] = grpo_config) -> Any:
                ratio = trl_is_ratio(api, grpo_config, b["old"], rollout, b["mask"])
                args = types.SimpleNamespace(**grpo_config)
                fake = fw.FakeGRPOTrainer(args, b["lp"], api.real_params)
                B, T = b["lp"].shape
                inputs = {
                    "prompt_ids": torch.zeros((B, 1), dtype=torch.long),
                    "prompt_mask": torch.ones((B, 1), dtype=torch.long),
                    "completion_ids": torch.zeros((B, T), dtype=torch.long),
                    "completion_mask": b["mask"],
                    "advantages": b["adv"],
                    "old_per_token_logps": b["old"],
                    "importance_sampling_ratio": ratio,
                    "sampling_per_token_logps": rollout,
                    "num_items_in_batch": b["mask"].sum(),
                }
                return api.compute_loss(fake, fake.model, inputs)

            is_corr: dict[str, Any] = {"level": "sequence" if sequence_is else "token", "cap": clip_max}
            if clip_min is not None:
                is_corr["lower"] = clip_min
            if mode.endswith("_mask"):
                is_corr["mode"] = "mask"
            config = {"ratio": ours["ratio"], "surrogate": ours.get("surrogate", "pg_clip"),
                      "clip": ours.get("clip", {"eps_low": 0.2, "eps_high": 0.2, "ratio_cap": None}),
                      "aggregation": ours["aggregation"], "norm_len": ours.get("norm_len"),
                      "is_correction": is_corr, "kl": None}
            weight_text = (
                "rho_b = exp(sum_t m*(old - rollout)) per row, [B, 1] (the product of the token weights)"
                if sequence_is else "rho = exp(m*(old - rollout)) per token (1 at padding)")
            bound_text = (f"clamp(rho, min={clip_min!r}, max={clip_max!r})" if mode.endswith("_truncate") else
                          f"rho masked_fill to 0 where rho < {clip_min if clip_min is not None else '-inf'} or "
                          f"rho > {clip_max!r}")
            tag = f"{mode}:max-{clip_max!r}" + ("" if clip_min is None else f":min-{clip_min!r}")
            variants.append({
                "name": f"{loss_type}:{level}:{tag}",
                "description": (
                    f"TRL: the IS-ratio block of GRPOTrainer._generate_and_score_completions (executed alone) "
                    f"gives inputs['importance_sampling_ratio'] = {bound_text}, {weight_text}, from "
                    f"old_per_token_logps = old_logprobs, sampling_per_token_logps = rollout_logprobs, "
                    f"completion_mask, tool_mask None; then the real GRPOTrainer._compute_loss with "
                    f"loss_type '{loss_type}', importance_sampling_level '{level}', use_vllm True, "
                    f"vllm_importance_sampling_correction True multiplies the per-token loss by it "
                    f"(detached) before aggregation: {TRL_LOSS_TEXT[loss_type]}. epsilon 0.2, delta None, "
                    f"beta 0, one process, GA 1, training mode, advantages [B]. completion_mask is "
                    f"torch.long. Stub trainer as in frameworks.py."
                ),
                "setting": {
                    "functions": ["trl.trainer.grpo_trainer.GRPOTrainer._generate_and_score_completions "
                                  f"(the `if {TRL_IS_TEST}:` IS-ratio block)",
                                  "trl.trainer.grpo_trainer.GRPOTrainer._compute_loss"],
                    "grpo_config": dict(sorted(grpo_config.items())),
                    "num_items_in_batch": "completion_mask.sum() = N (int64 0-dim tensor)",
                    "num_processes": 1,
                    "current_gradient_accumulation_steps": 1,
                    "tool_mask": None,
                    "mode": "train",
                    "response_mask_dtype": "torch.long",
                },
                "config": config,
                "run": run,
                "gap": ROLLOUT_GAP_SEQUENCE if sequence_is else ROLLOUT_GAP_TOKEN,
                "bounded": ("sequence" if sequence_is else "token", clip_min, clip_max),
            })
    return variants


def trl_is_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "functions": ["trl.trainer.grpo_trainer.GRPOTrainer._generate_and_score_completions (IS-ratio block)",
                      "trl.trainer.grpo_trainer.GRPOTrainer._compute_loss"],
        "picked_definitions": {
            fw.TRL_TRAINER: [
                f"GRPOTrainer._generate_and_score_completions (lines {api.is_method_lines[0]}-"
                f"{api.is_method_lines[1]}): only its `if {TRL_IS_TEST}:` statement, lines "
                f"{api.is_lines[0]}-{api.is_lines[1]}",
                f"GRPOTrainer._compute_loss (lines {api.method_lines[0]}-{api.method_lines[1]})",
            ],
            fw.TRL_CONFIG: [f"GRPOConfig.{f} (default only)" for f in fw.TRL_CONFIG_FIELDS + TRL_IS_FIELDS],
        },
        "is_block_free_names": api.is_free,
        "is_block_self_attributes": api.is_attrs,
        "is_block_namespace": (
            "exactly the free names of the block: self = a namespace with use_vllm True, "
            "vllm_importance_sampling_correction True and the variant's vllm_importance_sampling_mode / "
            "_clip_max / _clip_min; old_per_token_logps = old_logprobs; sampling_per_token_logps = "
            "rollout_logprobs; completion_mask = the mask (torch.long); tool_mask = None; torch; math. "
            "Executed under torch.no_grad(), as upstream."
        ),
        "stubs": fw.TRL_STUBS + (
            " For these fixtures the inputs also hold importance_sampling_ratio (the block's result) and "
            "sampling_per_token_logps (= rollout_logprobs, read only by the off-policy mask, which is off), "
            "and args also hold the vllm_importance_sampling_* fields."
        ),
        "config_defaults": dict(sorted(api.is_defaults.items())),
        "get_per_token_logps_and_entropies_params": api.getter_params,
    }


# --------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------


def record_variant(target: fw.Target, spec: dict[str, Any]) -> dict[str, Any]:
    adv_per_row = target.framework == "trl"
    level, lower, cap = spec["bounded"]
    cases = []
    for i in range(fw.CASES_PER_VARIANT):
        shape = fw.SHAPES[i % len(fw.SHAPES)]
        seed = fw.case_seed(target.framework, target.label, f"is-correction:{spec['name']}", i)
        batch = draw_is_batch(seed, shape, adv_per_row, spec["gap"], spec["bounded"])
        where = f"{target.framework}@{target.label}:{spec['name']}:{i}"
        fw.check_away_from_kinks(where, batch)
        loss, grad = call_is_variant(spec["run"], batch)
        fw.finite(where, loss, grad)
        n_out, _ = outside(batch, level, lower, cap)
        case: dict[str, Any] = {
            "seed": seed,
            "shape": list(shape),
            "inputs": {
                "logprobs": batch["lp"].tolist(),
                "old_logprobs": batch["old"].tolist(),
                "rollout_logprobs": batch["rollout"].tolist(),
                "advantages": batch["adv"].tolist(),
                "response_mask": batch["mask"].tolist(),
            },
            "outputs": {"loss": float(loss.item()), "grad_logprobs": grad.to(torch.float64).tolist()},
            "tokens_outside": n_out if level == "token" else None,
            "rows_outside": n_out if level != "token" else None,
        }
        if batch["rollout_redraws"]:
            case["rollout_redraws"] = batch["rollout_redraws"]
        cases.append(case)
    return {
        "framework": target.framework,
        "pin": target.label,
        "commit": target.commit,
        "name": spec["name"],
        "description": spec["description"],
        "setting": spec["setting"],
        "config": spec["config"],
        "bounded_level": level,
        "cases": cases,
    }


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--openrlhf-git", default=os.environ.get("OPENRLHF_GIT"),
                        help="git directory of OpenRLHF/OpenRLHF (default: $OPENRLHF_GIT)")
    parser.add_argument("--trl-git", default=os.environ.get("TRL_GIT"),
                        help="git directory of huggingface/trl (default: $TRL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    git_dirs = {"openrlhf": args.openrlhf_git, "trl": args.trl_git}
    for name, value in git_dirs.items():
        if not value:
            parser.error(f"--{name}-git (or ${name.upper()}_GIT) is required")

    sys.dont_write_bytecode = True
    import torch as _torch  # noqa: PLC0415
    torch = _torch
    fw.torch = _torch  # frameworks.py's helpers read its module global
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    for name, env in (("openrlhf", "OPENRLHF_GIT"), ("trl", "TRL_GIT")):
        if f"--{name}-git" not in " ".join(sys.argv[1:]):
            command = f"{env}={shlex.quote(git_dirs[name])} {command}"

    pins: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    variants: list[dict[str, Any]] = []
    for target in fw.TARGETS:
        if target.framework not in git_dirs:
            continue
        git_dir = fw.git_dir_of(Path(git_dirs[target.framework]).resolve())
        sources = fw.read_pinned_sources(git_dir, target)
        identity = {"framework": target.framework, "repo": f"https://github.com/{target.repo}",
                    "commit": target.commit, "label": target.label, "tag": target.tag, "role": target.role,
                    "files": [{"path": p, "sha256": s} for p, s in sorted(target.files.items())]}
        if target.framework == "openrlhf":
            if not has_openrlhf_is(sources):
                skipped.append({**identity, "reason": "no tis/icepop/seq-mask-tis vLLM IS code at this pin"})
                continue
            api = fw.load_openrlhf(target, sources)
            specs, prov = openrlhf_is_variants(api), openrlhf_is_provenance(api)
        else:
            if not has_trl_is(target, sources):
                skipped.append({**identity, "reason": "no IS-ratio block with clip_min at this pin"})
                continue
            api = load_trl_is(target, sources)
            specs, prov = trl_is_variants(api), trl_is_provenance(api)
        pins.append({**identity, **prov, "variants": [s["name"] for s in specs]})
        for spec in specs:
            variants.append(record_variant(target, spec))

    provenance = {
        "tool": TOOL_PATH,
        "command": command,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "dtype": "float64",
        "pins": pins,
        "skipped_pins": skipped,
        "skipped_variants": {"trl": TRL_SKIPPED},
        "loading": fw.LOADING_RULE + (
            " TRL's IS ratio is the one `if self.use_vllm and self.vllm_importance_sampling_correction:` "
            "statement of GRPOTrainer._generate_and_score_completions whose body assigns "
            "vllm_importance_sampling_ratio, found with ast, compiled alone with the upstream file name and "
            "line numbers, and executed in a namespace binding exactly its free names."
        ),
        "seed_rule": SEED_RULE,
        "input_rule": INPUT_RULE,
        "grad_rule": GRAD_RULE,
        "json_rule": JSON_RULE,
        "shapes": [list(s) for s in fw.SHAPES],
        "cases_per_variant": fw.CASES_PER_VARIANT,
        "is_bounds_avoided": list(IS_BOUNDS),
        "kink_margin": fw.KINK_MARGIN,
        "rollout_gaps": {"openrlhf": list(ROLLOUT_GAP_TOKEN), "trl token_*": list(ROLLOUT_GAP_TOKEN),
                         "trl sequence_*": list(ROLLOUT_GAP_SEQUENCE)},
        "config_rule": (
            "variants[].config is OUR policy-loss config in the snake_case wire form of "
            "src/io/configJson.ts (parsePolicyLossConfig), written by hand from the upstream semantics; "
            "it is what the replay test runs, not an upstream value. trl max_completion_length is fixed at "
            f"{TRL_MAX_COMPLETION_LENGTH} (not T as in frameworks.py) so dr_grpo's B * max_completion_length "
            "is one config (token_sum_norm, norm_len 12) for every case."
        ),
    }
    out = Path(args.out)
    fw.write_json(out, {"provenance": provenance, "variants": variants})
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(variants)} variants, "
          f"{sum(len(v['cases']) for v in variants)} cases)")
    for p in pins:
        print(f"pin {p['framework']}@{p['label']}: {len(p['variants'])} variants")
    for s in skipped:
        print(f"skipped {s['framework']}@{s['label']}: {s['reason']}")


if __name__ == "__main__":
    main()
