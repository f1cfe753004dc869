#!/usr/bin/env python3
"""Record numeric fixtures of the newer policy-gradient surrogates of verl and TRL.

This recorder runs the real loss code of verl (registered policy losses of
``verl/trainer/ppo/core_algos.py``: sapo, gspo (GSPO-token), geo_mean (GMPO), dro, dppo_tv,
dppo_kl, clip_cov, kl_cov, gpg, plus the entropy-bonus block of ``verl/workers/utils/losses.py``
``ppo_loss``) and of TRL (``GRPOTrainer._compute_loss`` with loss types sapo, luspo, vespo,
cispo, the off-policy sequence mask (OPSM), top-entropy-quantile token masking and the static /
adaptive entropy bonus) on seeded float64 batches with junk at the padding positions, and writes
only numbers plus provenance to ``test/fixtures/frameworks/surrogates.json``. Every case records
the loss, its gradient with respect to the log-probabilities (torch autograd) and the extra
outputs (metrics, masks, selections, controller state).

No framework code is copied into this repository. Everything upstream is loaded the way
``frameworks.py`` loads it, with its helpers (imported as a module): each pinned file is read with
``git --git-dir=<dir> show <commit>:<path>`` in memory, its SHA-256 is checked (the
``frameworks.TARGETS`` hashes; ``verl/workers/utils/losses.py``'s are pinned below), it is parsed
with ``ast``, and only the needed definitions are compiled (with the upstream file name and line
numbers) and executed with torch. verl's entropy bonus is not a function upstream: it is the
``if entropy is not None:`` statement of ``ppo_loss`` that assigns ``entropy_loss``; the recorder
finds it with ``ast``, compiles it alone and executes it in a namespace binding exactly its free
names (as ``isCorrection.py`` does for TRL's IS block).

The recorder runs the head pins (verl 1dda039b, TRL f2cd5771) and records their numbers. It then
runs the same cases through the older pins of ``frameworks.TARGETS`` (verl 74a718a4, TRL v1.8.0)
wherever the definitions exist there, and records per variant whether the loss, gradients and
masks are bitwise identical (numbers are stored again only where they differ).

Every recorded formula is also re-derived by an independent model written in this file from the
variant's ``description``; the recorder asserts that the model reproduces upstream's loss and
gradients (relative 1e-11) on the in-range-padding twin of every case. The model is a check
only: no number in the file comes from it.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/surrogates.py \\
        --verl-git /path/to/verl.git --trl-git /path/to/trl.git

Output (JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs):

    test/fixtures/frameworks/surrogates.json
"""

from __future__ import annotations

import argparse
import ast
import builtins
import dataclasses
import math
import os
import platform
import shlex
import sys
import time
import types
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Optional

sys.dont_write_bytecode = True  # importing frameworks.py must not leave a __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import frameworks as fw  # noqa: E402  (the sibling recorder, guarded by `if __name__ == "__main__"`)

TOOL_PATH = "tools/record-fixtures/surrogates.py"
DEFAULT_OUT = fw.REPO_ROOT / "test" / "fixtures" / "frameworks" / "surrogates.json"

VERL_LOSSES = "verl/workers/utils/losses.py"
# SHA-256 of the whole verl/workers/utils/losses.py at each verl pin of frameworks.TARGETS.
VERL_LOSSES_SHA256 = {
    "74a718a492092312f1004fe25369975137388849": "c6dfeb10900054e96b432633b975f3e3a535d3358a4ad13eeda9f730c5942d4a",
    "1dda039b9c6311889a9c9a26040677e1254814f9": "c6dfeb10900054e96b432633b975f3e3a535d3358a4ad13eeda9f730c5942d4a",
}
PRIMARY = {"verl": "1dda039b", "trl": "f2cd5771"}  # labels in frameworks.TARGETS: numbers come from these
SECONDARY = {"verl": "74a718a4", "trl": "v1.8.0"}  # re-run on the same cases, compared bitwise

# --------------------------------------------------------------------------------------
# Recording rules (also written into the provenance block)
# --------------------------------------------------------------------------------------

SHAPES = ((4, 8), (3, 5), (2, 6), (4, 3))
CASES_PER_VARIANT = 4
EDGE_MARGIN = 1e-6
MAX_ATTEMPTS = 10_000
FINITE_JUNK = 123.0
NONFINITE_JUNK = (math.nan, math.inf, -math.inf)
STREAMS = ("logprobs", "old_logprobs", "advantages", "entropies", "sampling_logprobs", "importance_sampling_ratio")
LP_RANGE = (-8.0, -0.05)
ADV_RANGE = (-3.0, 3.0)
MODEL_RTOL = 1e-11

SEED_RULE = (
    "Case i of a variant has the name f'{framework}@{pin}:{variant}:{i}' (pin is the 8-character head "
    "label). Attempt 0 uses seed = zlib.crc32(name.encode()) & 0x7FFFFFFF; when a draw is rejected "
    "(a quantity within 1e-6 of a clip edge, kink or threshold, or a required feature absent), attempt "
    "k = 1, 2, ... uses zlib.crc32((name + ':' + str(k)).encode()) & 0x7FFFFFFF. The recorded 'seed' "
    "(and 'seed_attempt' k) is the one actually used; every draw comes from "
    "torch.Generator().manual_seed(seed) on CPU in float64. verl clip_cov additionally calls "
    "torch.manual_seed(seed) (the global CPU generator, which its torch.randperm uses) immediately "
    "before each upstream call; that is recorded as setting.torch_manual_seed and case.torch_manual_seed. "
    "The TS side cannot replay torch's RNG: seeds are provenance only, every input is embedded."
)
INPUT_RULE = (
    "Case i has shape [B, T] = [(4, 8), (3, 5), (2, 6), (4, 3)][i % 4]. Draw order from the generator: "
    "row lengths L_b = randint(1..T) per row; if every row has L_b = T, row r = randint(0..B-1) gets "
    "L_r = randint(1..T-1) (at least one row shorter than T, no empty rows); response_mask[b, t] = t < "
    "L_b (right-padded). Then logprobs ~ U[lp] [B, T] (default U[-8, -0.05]); old_logprobs = logprobs + "
    "U[gap] [B, T] (per variant, see variants[].draw; gspo:clamp-10 draws old = logprobs - U[8, 12] "
    "[B, 1] - U[-0.5, 0.5] [B, T]); advantages ~ U[-3, 3], [B, T] for verl (per token; [B, 1] "
    "repeated over T where draw.row_advantages) and [B] for TRL; then, where the variant reads them, "
    "entropies ~ U[draw.entropies] [B, T], sampling_logprobs = old_logprobs + U[draw.sampling_gap] [B, "
    "T] and importance_sampling_ratio = exp(U[draw.is_log_ratio]) [B, T]. U[a, b] is a + (b - a) * "
    "torch.rand(shape, generator, dtype=float64). The whole draw is rejected (next attempt, see "
    "seed_rule) unless every response token / row keeps more than 1e-6 away from the variant's clip "
    "edges, kinks and thresholds (listed in variants[].draw.avoid) and the case exercises the variant's "
    "features (variants[].draw.require). For TRL luspo:token (whose padding enters the loss) the kink "
    "checks also cover padding positions."
)
JUNK_RULE = (
    "The recorded inputs hold junk at masked (padding) positions of every [B, T] input stream: 123.0, "
    "or, in every 5th junk-carrying case of the file (0-based running index over those cases, in file "
    "order, % 5 == 4), non-finite junk cycling NaN, +Inf, -Inf over the masked positions in row-major "
    "order, offset by the stream's index in [logprobs, old_logprobs, advantages, entropies, "
    "sampling_logprobs, importance_sampling_ratio] (k-th masked position gets [NaN, Inf, -Inf][(k + "
    "stream) % 3]). [B] vectors carry no junk. case.junk says which ('123.0', 'nonfinite' or "
    "'in-range'). Each case is also run on its in-range twin (the same draws, padding holding the "
    "generator's in-range values); junk_reaches_output is true when any recorded output differs "
    "between the two (NaN equals NaN, -0.0 equals 0.0), and junk_reaches lists which. Junk that reaches "
    "the loss or gradient is recorded as produced, not hidden. TRL luspo:token also records the in-range "
    "twins as cases (junk 'in-range', padding_pair_of = index of the junk case) so the padding "
    "sensitivity is visible as two cases identical except for the padding values; those twins do not "
    "count in the running index."
)
JSON_RULE = (
    "JSON indent=1 with sorted keys and a trailing newline; finite floats are Python repr (shortest "
    "round-trip float64); non-finite floats are the strings 'NaN', 'Infinity', '-Infinity'; signed "
    "zeros are kept as produced by torch; masks (response_mask, and 0/1 masks returned by upstream "
    "helpers) are booleans; integer outputs (randperm, token indices) are integers."
)
GRAD_RULE = (
    "logprobs is a float64 leaf with requires_grad=True (a fresh clone per call); grad_logprobs = "
    "torch.autograd.grad(loss, logprobs)[0], [B, T], exactly as produced (including padding positions, "
    "NaN where junk reaches it, possibly -0.0). Where entropies are an input of the loss (verl entropy "
    "bonus, TRL entropy bonus) they are a float64 leaf too and grad_entropies is recorded; in TRL "
    "variants without the bonus the entropies are only a metric / mask input and carry no grad. "
    "old_logprobs, advantages, sampling_logprobs and importance_sampling_ratio are plain tensors."
)
MODEL_RULE = (
    "Each variant's formula (its description) is re-implemented independently in surrogates.py (function "
    "models, not upstream code) and run on the in-range twin of every case; the recorder asserts "
    f"|model - upstream| <= {MODEL_RTOL} * max(1, max|upstream|) for the loss and each recorded gradient, "
    "and equality of the recorded masks/selections. The model is a check only; every number in the file "
    "is upstream's."
)

torch: Any = None  # populated in main()


# --------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF


def away(x: Any, edges: tuple[float, ...]) -> bool:
    x = x.reshape(-1)
    return all(bool(((x - e).abs() > EDGE_MARGIN).all()) for e in edges)


def jnum(v: float) -> Any:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def jsonable(x: Any) -> Any:
    """Tensors / floats / dicts / lists to the JSON rules (non-finite as strings, masks as booleans)."""
    if torch.is_tensor(x):
        if x.dtype == torch.bool:
            return x.tolist()
        if x.dtype in (torch.int64, torch.int32):
            return x.tolist()
        return jsonable(x.detach().to(torch.float64).tolist())
    if isinstance(x, bool) or x is None or isinstance(x, str) or isinstance(x, int):
        return x
    if isinstance(x, float):
        return jnum(x)
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    raise TypeError(f"cannot serialise {type(x)}")


def same_value(a: Any, b: Any, bitwise: bool) -> bool:
    """NaN == NaN; -0.0 == 0.0 unless bitwise (then sign bits must match too)."""
    if torch.is_tensor(a) or torch.is_tensor(b):
        if not (torch.is_tensor(a) and torch.is_tensor(b)) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype in (torch.bool, torch.int64, torch.int32):
            return bool((a == b).all())
        eq = (a == b) | (torch.isnan(a) & torch.isnan(b))
        if bitwise:
            eq = eq & ((torch.signbit(a) == torch.signbit(b)) | torch.isnan(a))
        return bool(eq.all())
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and (not bitwise or math.copysign(1.0, a) == math.copysign(1.0, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], bitwise) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y, bitwise) for x, y in zip(a, b))
    return a == b


def differing(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            out.append(prefix + key)
        elif isinstance(a[key], dict) and isinstance(b[key], dict):
            out.extend(differing(a[key], b[key], prefix + key + "."))
        elif not same_value(a[key], b[key], bitwise=False):
            out.append(prefix + key)
    return out


def close(label: str, got: Any, want: Any) -> None:
    scale = max(1.0, float(want.abs().max()))
    err = float((got - want).abs().max())
    if not err <= MODEL_RTOL * scale:
        raise AssertionError(f"{label}: model differs from upstream by {err:.3e} (scale {scale:.3e})")


def with_junk(x: Any, mask: Any, kind: str, stream: int) -> Any:
    out = x.clone()
    if kind == "in-range" or x.dim() != 2:
        return out
    for k, (b, t) in enumerate((~mask).nonzero().tolist()):
        out[b, t] = NONFINITE_JUNK[(k + stream) % 3] if kind == "nonfinite" else FINITE_JUNK
    return out


def self_attrs(nodes: list[ast.AST], owner: str = "self") -> tuple[set[str], dict[str, set[str]]]:
    """``owner.X`` attributes read in ``nodes``, and ``owner.X.Y`` second-level reads per X."""
    first: set[str] = set()
    second: dict[str, set[str]] = defaultdict(set)
    for top in nodes:
        for n in ast.walk(top):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == owner:
                first.add(n.attr)
            if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute)
                    and isinstance(n.value.value, ast.Name) and n.value.value.id == owner):
                second[n.value.attr].add(n.attr)
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get"
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == owner and n.args
                    and isinstance(n.args[0], ast.Constant)):
                first.add(n.args[0].value)
    first.discard("get")
    return first, second


def present_defaults(tree: ast.Module, cls: str, fields: list[str], where: str) -> dict[str, Any]:
    """fw.dataclass_defaults for the fields the class defines (a field absent at a pin is skipped)."""
    node = fw.pick_class(tree, cls, where)
    defined = {n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return fw.dataclass_defaults(tree, cls, [f for f in fields if f in defined], where)


# --------------------------------------------------------------------------------------
# verl
# --------------------------------------------------------------------------------------

VERL_FUNCS = {
    "vanilla": "compute_policy_loss_vanilla", "sapo": "compute_policy_loss_sapo",
    "gspo": "compute_policy_loss_gspo", "geo_mean": "compute_policy_loss_geo_mean",
    "dro": "compute_policy_loss_dro", "dppo_tv": "compute_policy_loss_dppo_tv",
    "dppo_kl": "compute_policy_loss_dppo_kl", "clip_cov": "compute_policy_loss_clip_cov",
    "kl_cov": "compute_policy_loss_kl_cov", "gpg": "compute_policy_loss_gpg",
}
VERL_CORE_BASE = ["PolicyLossFn", "POLICY_LOSS_REGISTRY", "register_policy_loss", "get_policy_loss_fn", "agg_loss"]
VERL_TF_PICKED = ["masked_sum", "masked_mean"]
VERL_ACTOR_FIELDS = ["clip_ratio", "clip_ratio_low", "clip_ratio_high", "clip_ratio_c", "global_batch_info",
                     "tau_pos", "tau_neg", "entropy_coeff", "loss_agg_mode"]
VERL_POLICY_FIELDS = ["clip_cov_ratio", "clip_cov_lb", "clip_cov_ub", "kl_cov_ratio", "ppo_kl_coef", "dro_beta"]
VERL_ENTROPY_TEST = "entropy is not None"
VERL_ENTROPY_BOUND = ["Metric", "agg_loss", "config", "entropy", "loss_agg_mode", "metric_aggregation", "metrics",
                      "policy_loss", "response_mask"]
VERL_STUBS = (
    "verl.utils.torch_functional is a plain module object holding only masked_sum and masked_mean, picked "
    "from the pinned torch_functional.py. The core_algos namespace binds torch to a module proxy that "
    "forwards every attribute to real torch, except that torch.randperm is wrapped to also log its "
    "argument and result (clip_cov's random pick; the result is real torch.randperm's). ActorConfig is a "
    "stand-in class named like the upstream one (for isinstance) whose instance carries exactly the "
    "fields the called function reads (found with ast: config.<field>, config.get('<field>'), "
    "config.policy_loss.<field>), with the ActorConfig / PolicyLossConfig dataclass defaults read with ast "
    "from the pinned verl/workers/config/actor.py unless the variant's setting overrides them; its get() "
    "is BaseConfig.get picked from the pinned verl/base_config.py; config.policy_loss is a like stand-in "
    "for PolicyLossConfig. The recorder also logs every field read at run time and asserts it was "
    "provided. AlgoConfig and omegaconf.DictConfig are empty stand-in classes (isinstance / annotations "
    "only). global_batch_info is {} (the ActorConfig default: dp_size 1, local batch statistics). The "
    "entropy-bonus block of ppo_loss runs in a namespace binding exactly its free names: agg_loss (the "
    "picked one), config, entropy, loss_agg_mode, policy_loss (= the pg loss of the policy function), "
    "response_mask, metrics = {}, Metric = a record class (value, aggregation) and metric_aggregation = "
    "'AggregationType.MEAN' (what ppo_loss picks with dp_size 1 and no global batch info). Nothing else "
    "of verl is imported."
)


class VerlAlgoConfigStub:
    """Stand-in for verl.trainer.config.AlgoConfig (isinstance checks only)."""


class OmegaconfDictConfigStub:
    """Stand-in for omegaconf.DictConfig (annotations only)."""


class MetricStub:
    """Stand-in for verl.utils.metric.Metric: records value and aggregation."""

    def __init__(self, value: Any, aggregation: Any) -> None:
        self.value = value
        self.aggregation = aggregation


class TorchProxy(types.ModuleType):
    """Forwards to real torch; torch.randperm is real too but its calls are logged."""

    def __init__(self, real: Any) -> None:
        super().__init__("torch")
        self._real = real
        self.randperm_log: list[tuple[tuple[Any, ...], dict[str, Any], Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def randperm(self, *args: Any, **kwargs: Any) -> Any:
        out = self._real.randperm(*args, **kwargs)
        self.randperm_log.append((args, kwargs, out.clone()))
        return out


def make_config_classes(base_get: Callable[..., Any]) -> tuple[type, type]:
    def init(self: Any, **fields: Any) -> None:
        object.__setattr__(self, "_read", set())
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def getattribute(self: Any, name: str) -> Any:
        if not name.startswith("_") and name != "get":
            object.__getattribute__(self, "_read").add(name)
        return object.__getattribute__(self, name)

    attrs = {"get": base_get, "__init__": init, "__getattribute__": getattribute}
    actor = type("ActorConfig", (), dict(attrs, __doc__="Stand-in for verl.workers.config.ActorConfig."))
    policy = type("PolicyLossConfig", (), dict(attrs, __doc__="Stand-in for verl PolicyLossConfig."))
    return actor, policy


def find_entropy_block(tree: ast.Module, where: str) -> tuple[ast.If, ast.FunctionDef]:
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "ppo_loss"]
    if len(funcs) != 1:
        raise SystemExit(f"{where}: expected one ppo_loss")
    found = []
    for node in ast.walk(funcs[0]):
        if isinstance(node, ast.If) and ast.unparse(node.test) == VERL_ENTROPY_TEST:
            assigned = {t.id for s in ast.walk(node) if isinstance(s, ast.Assign) for t in s.targets
                        if isinstance(t, ast.Name)}
            if "entropy_loss" in assigned:
                found.append(node)
    if len(found) != 1:
        raise SystemExit(f"{where}: expected one entropy-bonus block `if {VERL_ENTROPY_TEST}:`, found {len(found)}")
    return found[0], funcs[0]


def block_free_names(node: ast.stmt) -> list[str]:
    """fw.free_globals plus names that are augmented-assigned (read before they are written)."""
    free = fw.free_globals([node])
    free |= {n.target.id for n in ast.walk(node) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    return sorted(free)


def load_verl(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    tf_tree, tf_name = fw.parse(sources, target, fw.VERL_TF)
    verl_f = types.ModuleType("verl.utils.torch_functional")
    tf_ns: dict[str, Any] = {"__name__": verl_f.__name__, "torch": torch}
    tf_nodes = fw.pick_top_level(tf_tree, VERL_TF_PICKED, tf_name)
    fw.exec_nodes(tf_nodes, tf_ns, tf_name)
    for name in VERL_TF_PICKED:
        setattr(verl_f, name, tf_ns[name])

    base_tree, base_name = fw.parse(sources, target, fw.VERL_BASE)
    base_ns: dict[str, Any] = {"__name__": "verl.base_config", "Any": Any}
    fw.exec_nodes([fw.pick_method(base_tree, "BaseConfig", "get", base_name)], base_ns, base_name)
    actor_cls, policy_cls = make_config_classes(base_ns["get"])

    actor_tree, actor_name = fw.parse(sources, target, fw.VERL_ACTOR)
    actor_defaults = present_defaults(actor_tree, "ActorConfig", VERL_ACTOR_FIELDS, actor_name)
    policy_defaults = present_defaults(actor_tree, "PolicyLossConfig", VERL_POLICY_FIELDS, actor_name)

    core_tree, core_name = fw.parse(sources, target, fw.VERL_CORE)
    defined = {fw.node_name(n) for n in core_tree.body}
    funcs = {reg: fn for reg, fn in VERL_FUNCS.items() if fn in defined}
    nodes = fw.pick_top_level(core_tree, VERL_CORE_BASE + sorted(funcs.values()), core_name)
    proxy = TorchProxy(torch)
    ns: dict[str, Any] = {
        "__name__": "verl.trainer.ppo.core_algos", "torch": proxy, "verl_F": verl_f, "Optional": Optional,
        "Any": Any, "Callable": Callable, "ActorConfig": actor_cls, "AlgoConfig": VerlAlgoConfigStub,
        "DictConfig": OmegaconfDictConfigStub,
    }
    verl_f_reads = sorted({n.attr for top in nodes for n in ast.walk(top) if isinstance(n, ast.Attribute)
                           and isinstance(n.value, ast.Name) and n.value.id == "verl_F"})
    if not set(verl_f_reads) <= set(VERL_TF_PICKED):
        raise SystemExit(f"{core_name}: picked definitions read verl_F.{verl_f_reads}")
    fw.exec_nodes(nodes, ns, core_name)
    registered = sorted(ns["POLICY_LOSS_REGISTRY"])
    if registered != sorted(funcs):
        raise SystemExit(f"{core_name}: registry holds {registered}, expected {sorted(funcs)}")
    reads: dict[str, tuple[list[str], list[str]]] = {}
    for reg, fn in funcs.items():
        node = next(n for n in nodes if fw.node_name(n) == fn)
        first, second = self_attrs([node], "config")
        policy_fields = sorted(second.get("policy_loss", set()))
        unknown = (first - set(actor_defaults) - {"policy_loss"}) | (set(policy_fields) - set(policy_defaults))
        if unknown:
            raise SystemExit(f"{core_name}: {fn} reads config fields without a known default: {sorted(unknown)}")
        reads[reg] = (sorted(first), policy_fields)
    lines = {fw.node_name(n): [n.lineno, n.end_lineno] for n in nodes}

    losses_tree, losses_name = fw.parse(sources, target, VERL_LOSSES)
    block, ppo_loss = find_entropy_block(losses_tree, losses_name)
    free = block_free_names(block)
    if free != VERL_ENTROPY_BOUND:
        raise SystemExit(f"{losses_name}: the entropy block reads {free}, expected {VERL_ENTROPY_BOUND}")
    first, _ = self_attrs([block], "config")
    reads["entropy_block"] = (sorted(first), [])
    code = compile(ast.Module(body=[block], type_ignores=[]), losses_name, "exec")
    return types.SimpleNamespace(
        ns=ns, proxy=proxy, actor_cls=actor_cls, policy_cls=policy_cls, actor_defaults=actor_defaults,
        policy_defaults=policy_defaults, funcs=funcs, reads=reads, lines=lines,
        tf_lines={fw.node_name(n): [n.lineno, n.end_lineno] for n in tf_nodes}, entropy_code=code,
        entropy_lines=[block.lineno, block.end_lineno], ppo_loss_lines=[ppo_loss.lineno, ppo_loss.end_lineno],
        entropy_free=free, verl_f_reads=verl_f_reads)


def verl_config(api: types.SimpleNamespace, registries: list[str], overrides: dict[str, Any]) -> tuple[Any, dict]:
    """The stand-in config with exactly the fields the given definitions read, and those values."""
    first: set[str] = set()
    policy: set[str] = set()
    for reg in registries:
        a, p = api.reads[reg]
        first |= set(a)
        policy |= set(p)
    values: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    for name in sorted(first - {"policy_loss"}):
        value = overrides.get(name, api.actor_defaults[name])
        values[name] = dict(value) if isinstance(value, dict) else value
        fields[name] = dict(value) if isinstance(value, dict) else value
    if "policy_loss" in first:
        sub = {name: overrides.get(f"policy_loss.{name}", api.policy_defaults[name]) for name in sorted(policy)}
        fields["policy_loss"] = api.policy_cls(**sub)
        values["policy_loss"] = dict(sub)
    return api.actor_cls(**fields), values


def verl_config_read(cfg: Any) -> list[str]:
    read = set(object.__getattribute__(cfg, "_read"))
    if "policy_loss" in read:
        read |= {f"policy_loss.{x}" for x in object.__getattribute__(cfg.policy_loss, "_read")}
    return sorted(read)


def verl_run(api: types.SimpleNamespace, spec: dict[str, Any], mask: Any, inp: dict[str, Any],
             seed: int) -> dict[str, Any]:
    lp = inp["logprobs"].detach().clone().requires_grad_(True)
    old = inp["old_logprobs"].clone()
    adv = inp["advantages"].clone()
    registry = spec["registry"]
    regs = [registry] + (["entropy_block"] if spec["kind"] == "entropy" else [])
    cfg, _values = verl_config(api, regs, spec["overrides"])
    fn = api.ns["get_policy_loss_fn"](registry)
    out: dict[str, Any] = {}
    if registry == "clip_cov":
        torch.manual_seed(seed)
        api.proxy.randperm_log.clear()
    loss, metrics = fn(old_log_prob=old, log_prob=lp, advantages=adv, response_mask=mask,
                       loss_agg_mode=spec["mode"], config=cfg, rollout_is_weights=None)
    wrt = [lp]
    if spec["kind"] == "entropy":
        ent = inp["entropies"].detach().clone().requires_grad_(True)
        ns: dict[str, Any] = {"__name__": "verl.workers.utils.losses", "agg_loss": api.ns["agg_loss"],
                              "config": cfg, "entropy": ent, "loss_agg_mode": spec["mode"], "policy_loss": loss,
                              "response_mask": mask, "metrics": {}, "Metric": MetricStub,
                              "metric_aggregation": "AggregationType.MEAN"}
        if sorted(k for k in ns if k != "__name__") != api.entropy_free:
            raise AssertionError("entropy block namespace does not bind exactly its free names")
        exec(api.entropy_code, ns)  # noqa: S102 - pinned, hash-checked upstream code
        out["entropy_loss"] = ns["metrics"]["actor/entropy_loss"].value.detach().clone()
        out["pg_loss"] = loss.detach().clone()
        loss = ns["policy_loss"]
        wrt.append(ent)
    grads = torch.autograd.grad(loss, wrt)
    out["loss"] = loss.detach().clone()
    out["grad_logprobs"] = grads[0]
    if spec["kind"] == "entropy":
        out["grad_entropies"] = grads[1]
    out["metrics"] = {k: float(v) for k, v in sorted(metrics.items())}
    if registry == "clip_cov":
        log = list(api.proxy.randperm_log)
        if len(log) > 1:
            raise AssertionError("clip_cov called torch.randperm more than once")
        out["clip_cov_randperm"] = ({"n": int(log[0][0][0]), "perm": log[0][2]} if log else None)
    read = verl_config_read(cfg)
    provided = set(_values) | {f"policy_loss.{k}" for k in _values.get("policy_loss", {})}
    if not set(read) <= provided:
        raise AssertionError(f"{spec['name']}: config fields read but not provided: {sorted(set(read) - provided)}")
    if spec.get("ignores_mode"):
        cfg2, _ = verl_config(api, regs, spec["overrides"])
        lp2 = inp["logprobs"].detach().clone().requires_grad_(True)
        loss2, _m = fn(old_log_prob=old, log_prob=lp2, advantages=adv, response_mask=mask,
                       loss_agg_mode="seq-mean-token-mean", config=cfg2, rollout_is_weights=None)
        (g2,) = torch.autograd.grad(loss2, [lp2])
        if not (same_value(loss2.detach(), out["loss"], True) and same_value(g2, out["grad_logprobs"], True)):
            raise AssertionError(f"{spec['name']}: the result depends on loss_agg_mode")
    return out


# --------------------------------------------------------------------------------------
# TRL
# --------------------------------------------------------------------------------------

TRL_HELPERS = ["get_high_entropy_mask", "get_off_policy_mask", "get_gamma_weights"]
TRL_CONFIG_FIELDS = [
    "epsilon", "epsilon_high", "delta", "beta", "loss_type", "importance_sampling_level", "sapo_temperature_pos",
    "sapo_temperature_neg", "vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg",
    "use_bias_correction_kl", "top_entropy_quantile", "off_policy_mask_threshold", "use_vllm",
    "vllm_importance_sampling_correction", "entropy_coef", "use_adaptive_entropy", "entropy_coef_min",
    "entropy_coef_max", "entropy_coef_delta", "entropy_target", "max_completion_length",
]
TRL_NOT_PROVIDED = {"router_aux_loss_coef"}  # read only when aux_loss_enabled (False: the stub model is not MoE)
TRL_STUBS = (
    "GRPOTrainer._compute_loss, get_high_entropy_mask, get_off_policy_mask (@staticmethod) and "
    "get_gamma_weights (@staticmethod @torch.no_grad()) are picked out of the pinned grpo_trainer.py and "
    "become the methods of a stub class; its instance `self` carries exactly the attributes those methods "
    "read (found with ast; router_aux_loss_coef is not provided because it is read only when "
    "aux_loss_enabled, which is False), derived from the variant's grpo_config as GRPOTrainer.__init__ "
    "derives them: loss_type, importance_sampling_level, epsilon_low = epsilon, epsilon_high = "
    "epsilon_high if not None else epsilon, beta, max_completion_length, use_vllm, "
    "vllm_importance_sampling_correction, top_entropy_quantile, off_policy_mask_threshold, entropy_coef, "
    "use_adaptive_entropy, _entropy_bonus_enabled = entropy_coef != 0.0 or use_adaptive_entropy, "
    "_last_world_entropy (inf as after __init__, unless setting.trainer_state sets it), "
    "_entropy_window_stats = None, aux_loss_enabled = False, current_gradient_accumulation_steps = 1, "
    "_metrics = {'train': defaultdict(list), 'eval': defaultdict(list)}, model = an object with training = "
    "True, accelerator = one process (num_processes 1, sync_gradients True, identity gather / "
    "gather_for_metrics / pad_across_processes, reduce(sum) identity), args = a namespace of exactly the "
    "self.args fields read. _get_per_token_logps_and_entropies is a stub returning (our logprobs leaf, the "
    "entropies, None); it checks that every keyword passed is a parameter of the pinned method and that "
    "compute_entropy=True. Entropies are the case's entropies input where the variant has one, otherwise "
    "zeros (a metric input only, not recorded). The helpers are wrapped on the instance to capture what "
    "they return (off_policy_mask, entropy_mask, phi_seq), unchanged. nanmin/nanmax (trl.trainer.utils) "
    "are NaN-ignoring min/max that only feed _metrics. inputs = {prompt_ids zeros [B, 1] long, "
    "prompt_mask ones [B, 1] long, completion_ids zeros [B, T] long, completion_mask = the mask as "
    "torch.long, advantages [B], old_per_token_logps, num_items_in_batch = completion_mask.sum() (0-dim "
    "int64), plus sampling_per_token_logps / importance_sampling_ratio where the variant has them}."
)


class TrlAccelerator:
    num_processes = 1
    sync_gradients = True

    @staticmethod
    def gather(x: Any) -> Any:
        return x

    @staticmethod
    def gather_for_metrics(x: Any) -> Any:
        return x

    @staticmethod
    def reduce(x: Any, reduction: str = "sum") -> Any:
        assert reduction == "sum"
        return x

    @staticmethod
    def pad_across_processes(x: Any, dim: int = 0, pad_index: Any = 0) -> Any:
        assert dim == 0
        return x


class TrlModel:
    training = True


def trl_getter(self: Any, model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int,
               **kwargs: Any) -> tuple[Any, Any, Any]:
    unknown = sorted(set(kwargs) - self._stub_params)
    if unknown:
        raise AssertionError(f"_get_per_token_logps_and_entropies called with unknown keywords {unknown}")
    assert kwargs.get("compute_entropy") is True
    assert isinstance(model, TrlModel)
    assert logits_to_keep == self._stub_logps.shape[1]
    assert input_ids.shape == attention_mask.shape
    return self._stub_logps, self._stub_entropies, None


def load_trl(target: fw.Target, sources: dict[str, str]) -> types.SimpleNamespace:
    tree, filename = fw.parse(sources, target, fw.TRL_TRAINER)
    method = fw.pick_method(tree, "GRPOTrainer", "_compute_loss", filename)
    if method.decorator_list:
        raise SystemExit(f"{filename}: _compute_loss is decorated; update the recorder")
    helpers = [fw.pick_method(tree, "GRPOTrainer", h, filename) for h in TRL_HELPERS]
    getter = fw.pick_method(tree, "GRPOTrainer", "_get_per_token_logps_and_entropies", filename)
    real_params = {a.arg for a in getter.args.args + getter.args.kwonlyargs}
    ns: dict[str, Any] = {"__name__": "trl.trainer.grpo_trainer", "torch": torch, "math": math,
                          "nanmin": fw.trl_nan_reduce(torch.min), "nanmax": fw.trl_nan_reduce(torch.max)}
    fw.exec_nodes([method] + helpers, ns, filename)
    first, second = self_attrs([method] + helpers)
    methods = {"_get_per_token_logps_and_entropies", *TRL_HELPERS}
    attrs = sorted(first - methods - TRL_NOT_PROVIDED)
    args_fields = sorted(second.get("args", set()))
    acc_attrs = sorted(second.get("accelerator", set()))
    missing_acc = [a for a in acc_attrs if not hasattr(TrlAccelerator, a)]
    if missing_acc:
        raise SystemExit(f"{filename}: the methods read accelerator.{missing_acc}, not in the stub")
    stub_cls = type("GRPOTrainerStub", (), {
        "__doc__": "Stub GRPOTrainer: pinned _compute_loss and helpers, stub getter.",
        "_compute_loss": ns["_compute_loss"],
        "get_high_entropy_mask": ns["get_high_entropy_mask"],
        "get_off_policy_mask": ns["get_off_policy_mask"],
        "get_gamma_weights": ns["get_gamma_weights"],
        "_get_per_token_logps_and_entropies": trl_getter,
    })
    config_tree, config_name = fw.parse(sources, target, fw.TRL_CONFIG)
    defaults = fw.dataclass_defaults(config_tree, "GRPOConfig", TRL_CONFIG_FIELDS, config_name)
    unknown_args = sorted(set(args_fields) - set(TRL_CONFIG_FIELDS))
    if unknown_args:
        raise SystemExit(f"{filename}: the methods read self.args.{unknown_args}, not read from the config")
    lines = {"_compute_loss": [method.lineno, method.end_lineno]}
    lines.update({h.name: [h.lineno, h.end_lineno] for h in helpers})
    return types.SimpleNamespace(stub_cls=stub_cls, defaults=defaults, real_params=real_params, attrs=attrs,
                                 args_fields=args_fields, acc_attrs=acc_attrs, lines=lines,
                                 getter_params=[a.arg for a in getter.args.args + getter.args.kwonlyargs])


def trl_self(api: types.SimpleNamespace, cfg: dict[str, Any], state: dict[str, Any], logps: Any,
             entropies: Any) -> Any:
    values = {
        "args": types.SimpleNamespace(**{f: cfg[f] for f in api.args_fields}),
        "loss_type": cfg["loss_type"], "importance_sampling_level": cfg["importance_sampling_level"],
        "epsilon_low": cfg["epsilon"],
        "epsilon_high": cfg["epsilon_high"] if cfg["epsilon_high"] is not None else cfg["epsilon"],
        "beta": cfg["beta"], "max_completion_length": cfg["max_completion_length"], "use_vllm": cfg["use_vllm"],
        "vllm_importance_sampling_correction": cfg["vllm_importance_sampling_correction"],
        "top_entropy_quantile": cfg["top_entropy_quantile"],
        "off_policy_mask_threshold": cfg["off_policy_mask_threshold"],
        "entropy_coef": state.get("entropy_coef", cfg["entropy_coef"]),
        "use_adaptive_entropy": cfg["use_adaptive_entropy"],
        "_entropy_bonus_enabled": cfg["entropy_coef"] != 0.0 or cfg["use_adaptive_entropy"],
        "_last_world_entropy": state.get("_last_world_entropy", math.inf),
        "_entropy_window_stats": None, "aux_loss_enabled": False, "current_gradient_accumulation_steps": 1,
        "_metrics": {"train": defaultdict(list), "eval": defaultdict(list)}, "model": TrlModel(),
        "accelerator": TrlAccelerator(),
    }
    if sorted(values) != api.attrs:
        raise AssertionError(f"stub self provides {sorted(values)}, the pinned methods read {api.attrs}")
    obj = api.stub_cls()
    obj.__dict__.update(values)
    obj._stub_logps = logps
    obj._stub_entropies = entropies
    obj._stub_params = api.real_params
    obj._stub_captured = {}
    for name in TRL_HELPERS:
        inner = getattr(obj, name)

        def wrapper(*a: Any, _inner: Callable[..., Any] = inner, _name: str = name, **k: Any) -> Any:
            result = _inner(*a, **k)
            obj._stub_captured[_name] = result.detach().clone()
            return result
        setattr(obj, name, wrapper)
    return obj


def trl_run(api: types.SimpleNamespace, spec: dict[str, Any], mask: Any, inp: dict[str, Any],
            seed: int) -> dict[str, Any]:
    del seed
    batch, width = mask.shape
    mask_l = mask.to(torch.long)
    lp = inp["logprobs"].detach().clone().requires_grad_(True)
    if "entropies" in inp:
        ent = inp["entropies"].detach().clone().requires_grad_(spec.get("entropy_grad", False))
    else:
        ent = torch.zeros_like(lp).detach()
    obj = trl_self(api, spec["grpo_config"], spec.get("state", {}), lp, ent)
    inputs = {
        "prompt_ids": torch.zeros((batch, 1), dtype=torch.long),
        "prompt_mask": torch.ones((batch, 1), dtype=torch.long),
        "completion_ids": torch.zeros((batch, width), dtype=torch.long),
        "completion_mask": mask_l,
        "advantages": inp["advantages"].clone(),
        "old_per_token_logps": inp["old_logprobs"].clone(),
        "num_items_in_batch": mask_l.sum(),
    }
    if "sampling_logprobs" in inp:
        inputs["sampling_per_token_logps"] = inp["sampling_logprobs"].clone()
    if "importance_sampling_ratio" in inp:
        inputs["importance_sampling_ratio"] = inp["importance_sampling_ratio"].clone()
    loss = obj._compute_loss(obj.model, inputs)
    wrt = [lp] + ([ent] if ent.requires_grad else [])
    grads = torch.autograd.grad(loss, wrt)
    out: dict[str, Any] = {"loss": loss.detach().clone(), "grad_logprobs": grads[0]}
    if ent.requires_grad:
        out["grad_entropies"] = grads[1]
    metrics = {}
    for key, vals in sorted(obj._metrics["train"].items()):
        if len(vals) != 1:
            raise AssertionError(f"metric {key} logged {len(vals)} times")
        metrics[key] = float(vals[0])
    out["metrics"] = metrics
    cap = obj._stub_captured
    if "get_off_policy_mask" in cap:
        out["off_policy_mask"] = cap["get_off_policy_mask"].to(torch.bool)
    if "get_high_entropy_mask" in cap:
        out["entropy_mask"] = cap["get_high_entropy_mask"]
    if "get_gamma_weights" in cap:
        out["phi_seq"] = cap["get_gamma_weights"]
    if spec["grpo_config"]["use_adaptive_entropy"]:
        out["state_after"] = {"entropy_coef": float(obj.entropy_coef),
                              "_last_world_entropy": float(obj._last_world_entropy),
                              "_entropy_window_stats": obj._entropy_window_stats}
    return out


# --------------------------------------------------------------------------------------
# Independent models (checks only; see MODEL_RULE)
# --------------------------------------------------------------------------------------


def m_agg(x: Any, mf: Any, mode: str) -> Any:
    if mode == "token-mean":
        return (x * mf).sum() / mf.sum()
    if mode == "seq-mean-token-mean":
        return ((x * mf).sum(-1) / mf.sum(-1)).mean()
    raise ValueError(mode)


def verl_model(spec: dict[str, Any], mask: Any, inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    lp = inp["logprobs"].detach().clone().requires_grad_(True)
    old, a = inp["old_logprobs"], inp["advantages"]
    mf = mask.to(torch.float64)
    cfg = dict(spec["config_values"])
    reg = spec["registry"]
    d = lp - old
    r20 = torch.exp(torch.clamp(d, -20.0, 20.0))
    extras: dict[str, Any] = {}
    if reg == "sapo":
        tau = torch.where(a > 0, torch.tensor(cfg["tau_pos"], dtype=torch.float64),
                          torch.tensor(cfg["tau_neg"], dtype=torch.float64))
        tok = -torch.sigmoid(tau * (r20 - 1.0)) * (4.0 / tau) * a
        loss = m_agg(tok, mf, "seq-mean-token-mean")
    elif reg == "gspo":
        z = (d * mf).sum(-1) / mf.sum(-1)
        s = torch.exp(torch.clamp(lp - lp.detach() + z.detach()[:, None], max=10.0))
        tok = torch.maximum(-a * s, -a * torch.clamp(s, 1 - cfg["clip_ratio_low"], 1 + cfg["clip_ratio_high"]))
        loss = m_agg(tok, mf, "seq-mean-token-mean")
    elif reg == "geo_mean":
        dd = torch.where(a > 0, torch.clamp(d, max=cfg["clip_ratio_high"]), torch.clamp(d, min=-cfg["clip_ratio_low"]))
        rho = torch.exp((dd * mf).sum(-1) / mf.sum(-1))
        abar = (a * mf).sum(-1) / mf.sum(-1)
        loss = (-abar * rho).mean()
    elif reg in ("dppo_tv", "dppo_kl"):
        rt = torch.clamp(r20, max=cfg["clip_ratio_c"]).detach()
        p, po = torch.exp(lp.detach()), torch.exp(old)
        if reg == "dppo_tv":
            valid = torch.where(a > 0, p - po <= cfg["clip_ratio_high"], p - po >= -cfg["clip_ratio_low"])
        else:
            bkl = po * (old - lp.detach()) + (1 - po) * torch.log((1 - po + 1e-8) / (1 - p + 1e-8))
            valid = torch.where(a > 0, (bkl <= cfg["clip_ratio_high"]) | (p <= po),
                                (bkl <= cfg["clip_ratio_low"]) | (p >= po))
        tok = -a * rt * lp * valid.to(torch.float64)
        loss = m_agg(tok, mf, spec["mode"])
    elif reg == "gpg":
        loss = m_agg(-lp * a, mf, spec["mode"])
    elif reg == "dro":
        beta = cfg["policy_loss"]["dro_beta"]
        loss = m_agg(-(lp * a - 0.5 * beta * d * d), mf, spec["mode"])
    elif reg == "clip_cov":
        pl = cfg["policy_loss"]
        r = torch.exp(d)
        l1, l2 = -a * r, -a * torch.clamp(r, 1 - cfg["clip_ratio_low"], 1 + cfg["clip_ratio_high"])
        n_tok = int(mask.sum())
        cov = (a - (a * mf).sum() / n_tok) * (lp.detach() - (lp.detach() * mf).sum() / n_tok)
        cand = (cov > pl["clip_cov_lb"]) & (cov < pl["clip_cov_ub"]) & mask & ~(l2 > l1)
        cand_idx = cand.nonzero()
        clip_num = max(int(pl["clip_cov_ratio"] * n_tok), 1)
        rp = out["clip_cov_randperm"]
        if rp is None:
            assert len(cand_idx) == 0
            chosen = cand_idx[:0]
        else:
            assert rp["n"] == len(cand_idx), "candidate count differs from randperm's n"
            chosen = cand_idx[rp["perm"][: min(clip_num, len(cand_idx))]]
        corr = torch.ones_like(a)
        corr[chosen[:, 0], chosen[:, 1]] = 0.0
        loss = m_agg(torch.maximum(l1, l2) * corr, mf, spec["mode"])
        extras["clip_cov_candidates"] = cand_idx
        extras["clip_cov_selected"] = chosen
    elif reg == "kl_cov":
        pl = cfg["policy_loss"]
        r = torch.exp(d)
        va, vl = a[mask], lp.detach()[mask]
        cov = (va - va.mean()) * (vl - vl.mean())
        k = max(1, int(len(cov) * pl["kl_cov_ratio"]))
        order = torch.sort(cov, descending=True).values
        if k < len(cov) and not float(order[k - 1] - order[k]) > EDGE_MARGIN:
            raise AssertionError("kl_cov top-k boundary tie")
        top = torch.topk(cov, k).indices
        sel = torch.zeros(len(cov), dtype=torch.bool)
        sel[top] = True
        selected = torch.zeros_like(mask)
        selected[mask] = sel
        tok = -a * r + pl["ppo_kl_coef"] * d.abs() * selected.to(torch.float64)
        loss = m_agg(tok, mf, spec["mode"])
        extras["kl_cov_selected"] = selected.nonzero()
    elif reg == "vanilla":
        lo, hi, c = cfg["clip_ratio_low"], cfg["clip_ratio_high"], cfg["clip_ratio_c"]
        c1 = torch.maximum(-a * r20, -a * torch.clamp(r20, 1 - lo, 1 + hi))
        tok = torch.where(a < 0, torch.minimum(-a * c, c1), c1)
        loss = m_agg(tok, mf, spec["mode"])
    else:
        raise ValueError(reg)
    wrt = [lp]
    if spec["kind"] == "entropy":
        ent = inp["entropies"].detach().clone().requires_grad_(True)
        loss = loss - cfg["entropy_coeff"] * m_agg(ent, mf, spec["mode"])
        wrt.append(ent)
    grads = torch.autograd.grad(loss, wrt)
    res = {"loss": loss.detach(), "grad_logprobs": grads[0], **extras}
    if spec["kind"] == "entropy":
        res["grad_entropies"] = grads[1]
    return res


def trl_model(spec: dict[str, Any], mask: Any, inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    del out
    cfg = spec["grpo_config"]
    state = spec.get("state", {})
    lp = inp["logprobs"].detach().clone().requires_grad_(True)
    old, a = inp["old_logprobs"], inp["advantages"][:, None]
    mf = mask.to(torch.float64)
    big_l = mf.sum(-1, keepdim=True)
    n_tok = mf.sum()
    d = lp - old
    if cfg["importance_sampling_level"] == "token":
        c = torch.exp(d)
    else:
        c = torch.exp((d * mf).sum(-1, keepdim=True) / big_l)
    eps_lo = cfg["epsilon"]
    eps_hi = cfg["epsilon_high"] if cfg["epsilon_high"] is not None else cfg["epsilon"]
    lt = cfg["loss_type"]
    extras: dict[str, Any] = {}
    if lt == "cispo":
        tok = -torch.clamp(c, max=eps_hi).detach() * a * lp
    elif lt in ("grpo", "dapo", "luspo"):
        tok = -torch.minimum(c * a, torch.clamp(c, 1 - eps_lo, 1 + eps_hi) * a)
    elif lt == "sapo":
        f32 = lambda v: float(torch.tensor(v, dtype=torch.float32))  # noqa: E731
        tau = torch.where(a > 0, torch.tensor(f32(cfg["sapo_temperature_pos"]), dtype=torch.float64),
                          torch.tensor(f32(cfg["sapo_temperature_neg"]), dtype=torch.float64))
        tok = -torch.sigmoid(tau * (c - 1)) * 4 / tau * a
    elif lt == "vespo":
        s = (torch.clamp(d.detach(), -20.0, 20.0) * mf).sum(-1, keepdim=True)
        if "importance_sampling_ratio" in inp:
            s = s + torch.clamp(torch.log(inp["importance_sampling_ratio"]), math.log(1e-8), 20.0).sum(-1, keepdim=True)
        lw = torch.clamp(s, math.log(1e-8), 20.0)
        k = torch.where(a >= 0, torch.tensor(cfg["vespo_k_pos"]), torch.tensor(cfg["vespo_k_neg"])).double()
        lam = torch.where(a >= 0, torch.tensor(cfg["vespo_lambda_pos"]), torch.tensor(cfg["vespo_lambda_neg"])).double()
        phi = torch.exp(lam + k * lw - lam * torch.exp(lw))
        tok = -phi * a * lp
        extras["phi_seq"] = phi
    else:
        raise ValueError(lt)
    if cfg["off_policy_mask_threshold"] is not None:
        samp = inp.get("sampling_logprobs", old)
        avg = ((samp - lp.detach()) * mf).sum(-1, keepdim=True) / big_l
        keep = (a >= 0) | (avg <= cfg["off_policy_mask_threshold"])
        tok = tok * keep.to(torch.float64)
        extras["off_policy_mask"] = keep
    eff = mf
    if cfg["top_entropy_quantile"] < 1.0:
        vals = torch.sort(inp["entropies"][mask].to(torch.float32).to(torch.float64)).values
        pos = (len(vals) - 1) * (1.0 - cfg["top_entropy_quantile"])
        lo_i = int(math.floor(pos))
        thr = vals[lo_i] + (pos - lo_i) * (vals[min(lo_i + 1, len(vals) - 1)] - vals[lo_i])
        emask = (inp["entropies"] >= thr) & mask
        tok = tok * emask.to(torch.float64)
        eff = mf * emask.to(torch.float64)
        extras["entropy_mask"] = emask
    if lt in ("grpo", "sapo"):
        loss = ((tok * mf).sum(-1) / big_l[:, 0]).mean()
    elif lt in ("dapo", "cispo", "vespo"):
        loss = (tok * mf).sum() / n_tok
    elif lt == "luspo":
        loss = (tok * big_l).mean()
    else:
        raise ValueError(lt)
    wrt = [lp]
    if cfg["entropy_coef"] != 0.0 or cfg["use_adaptive_entropy"]:
        ent = inp["entropies"].detach().clone().requires_grad_(True)
        if lt in ("dapo", "cispo", "vespo"):
            bonus = (ent * eff).sum() / n_tok
        else:
            bonus = (ent * eff).sum() / eff.sum()
        coef = state.get("entropy_coef", cfg["entropy_coef"])
        if cfg["use_adaptive_entropy"]:
            last = state.get("_last_world_entropy", math.inf)
            apply = coef if last <= cfg["entropy_target"] else 0.0
            world = float((inp["entropies"] * eff).sum() / eff.sum())
            if world <= cfg["entropy_target"]:
                new = min(coef + cfg["entropy_coef_delta"], cfg["entropy_coef_max"])
            else:
                new = max(coef - cfg["entropy_coef_delta"], cfg["entropy_coef_min"])
            extras["state_after"] = {"entropy_coef": new, "_last_world_entropy": world}
        else:
            apply = coef
        loss = loss - apply * bonus
        wrt.append(ent)
    grads = torch.autograd.grad(loss, wrt)
    res = {"loss": loss.detach(), "grad_logprobs": grads[0], **extras}
    if len(wrt) == 2:
        res["grad_entropies"] = grads[1]
    return res


def check_model(where: str, spec: dict[str, Any], model: dict[str, Any], ref: dict[str, Any]) -> None:
    close(f"{where} loss", model["loss"], ref["loss"])
    close(f"{where} grad_logprobs", model["grad_logprobs"], ref["grad_logprobs"])
    if "grad_entropies" in ref:
        close(f"{where} grad_entropies", model["grad_entropies"], ref["grad_entropies"])
    for key in ("off_policy_mask", "entropy_mask"):
        if key in ref and not same_value(model[key].to(torch.bool), ref[key].to(torch.bool), False):
            raise AssertionError(f"{where}: model {key} differs")
    if "phi_seq" in ref:
        close(f"{where} phi_seq", model["phi_seq"], ref["phi_seq"])
    if "state_after" in ref:
        for k, v in model["state_after"].items():
            if not abs(v - ref["state_after"][k]) <= MODEL_RTOL * max(1.0, abs(v)):
                raise AssertionError(f"{where}: model state_after.{k} differs")
    if spec.get("registry") == "clip_cov":
        sel = model["clip_cov_selected"]
        if len(sel) and bool((ref["grad_logprobs"][sel[:, 0], sel[:, 1]] != 0).any()):
            raise AssertionError(f"{where}: a clip_cov-selected token has a non-zero gradient")


# --------------------------------------------------------------------------------------
# Draws and acceptance
# --------------------------------------------------------------------------------------


def draw(spec: dict[str, Any], seed: int, shape: tuple[int, int]) -> tuple[Any, dict[str, Any]]:
    gen = torch.Generator().manual_seed(seed)
    batch, width = shape
    lengths = [fw.randint(gen, 1, width) for _ in range(batch)]
    if all(length == width for length in lengths):
        row = fw.randint(gen, 0, batch - 1)
        lengths[row] = fw.randint(gen, 1, width - 1)
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    dr = spec["draw"]
    lp = fw.uniform(gen, (batch, width), *dr.get("lp", LP_RANGE))
    if "row_offset" in dr:
        off = fw.uniform(gen, (batch, 1), *dr["row_offset"])
        old = lp - off - fw.uniform(gen, (batch, width), *dr["gap"])
    else:
        old = lp + fw.uniform(gen, (batch, width), *dr["gap"])
    if spec["framework"] == "trl":
        adv = fw.uniform(gen, (batch,), *ADV_RANGE)
    elif dr.get("row_advantages"):
        adv = fw.uniform(gen, (batch, 1), *ADV_RANGE).expand(batch, width).clone()
    else:
        adv = fw.uniform(gen, (batch, width), *ADV_RANGE)
    streams = {"logprobs": lp, "old_logprobs": old, "advantages": adv}
    if "entropies" in dr:
        streams["entropies"] = fw.uniform(gen, (batch, width), *dr["entropies"])
    if "sampling_gap" in dr:
        streams["sampling_logprobs"] = old + fw.uniform(gen, (batch, width), *dr["sampling_gap"])
    if "is_log_ratio" in dr:
        streams["importance_sampling_ratio"] = torch.exp(fw.uniform(gen, (batch, width), *dr["is_log_ratio"]))
    return mask, streams


def tok_adv(s: dict[str, Any]) -> Any:
    a = s["advantages"]
    return a[:, None].expand_as(s["logprobs"]) if a.dim() == 1 else a


def accept(spec: dict[str, Any], mask: Any, s: dict[str, Any], index: int) -> bool:
    lp, old = s["logprobs"], s["old_logprobs"]
    a = tok_adv(s)
    sel = torch.ones_like(mask) if spec.get("padding_matters") else mask
    if not away(a[mask], (0.0,)):
        return False
    mf = mask.to(torch.float64)
    d = lp - old
    big_l = mf.sum(-1)
    z = (d * mf).sum(-1) / big_l
    fam = spec["family"]
    req = True
    if fam == "verl:sapo":
        pass
    elif fam == "verl:gspo":
        if not away(torch.exp(z), (0.8, 1.2)) or not away(z, (10.0,)):
            return False
        if "row_offset" in spec["draw"]:
            req = bool((z > 10).any()) and bool((z < 10).any()) and bool((a[mask] < 0).any())
    elif fam == "verl:geo_mean":
        c = spec["config_values"]
        if not away(d[mask], (c["clip_ratio_high"], -c["clip_ratio_low"])):
            return False
        clipped = ((d > c["clip_ratio_high"]) & (a > 0)) | ((d < -c["clip_ratio_low"]) & (a < 0))
        req = bool((clipped & mask).any()) and bool((~clipped & mask).any())
    elif fam in ("verl:dppo_tv", "verl:dppo_kl"):
        c = spec["config_values"]
        p, po = torch.exp(lp), torch.exp(old)
        r = torch.exp(d)
        if not away(r[mask], (c["clip_ratio_c"],)) or not away((p - po)[mask], (0.0,)):
            return False
        if fam == "verl:dppo_tv":
            if not away((p - po)[mask], (c["clip_ratio_high"], -c["clip_ratio_low"])):
                return False
            valid = torch.where(a > 0, p - po <= c["clip_ratio_high"], p - po >= -c["clip_ratio_low"])
        else:
            bkl = po * (old - lp) + (1 - po) * torch.log((1 - po + 1e-8) / (1 - p + 1e-8))
            if not away(bkl[mask], (c["clip_ratio_high"], c["clip_ratio_low"])):
                return False
            valid = torch.where(a > 0, (bkl <= c["clip_ratio_high"]) | (p <= po),
                                (bkl <= c["clip_ratio_low"]) | (p >= po))
        req = (bool((~valid & mask).any()) and bool((valid & mask & (r > c["clip_ratio_c"])).any())
               and bool((valid & mask & (r < c["clip_ratio_c"])).any()))
    elif fam == "verl:clip_cov":
        c = spec["config_values"]
        pl = c["policy_loss"]
        r = torch.exp(d)
        if not away(r[mask], (1 - c["clip_ratio_low"], 1 + c["clip_ratio_high"])):
            return False
        n_tok = int(mask.sum())
        cov = (a - (a * mf).sum() / n_tok) * (lp - (lp * mf).sum() / n_tok)
        if not away(cov[mask], (pl["clip_cov_lb"], pl["clip_cov_ub"])):
            return False
        clipped = (-a * torch.clamp(r, 1 - c["clip_ratio_low"], 1 + c["clip_ratio_high"])) > (-a * r)
        cand = (cov > pl["clip_cov_lb"]) & (cov < pl["clip_cov_ub"]) & mask & ~clipped
        clip_num = max(int(pl["clip_cov_ratio"] * n_tok), 1)
        req = int(cand.sum()) > clip_num and bool((clipped & mask).any())
    elif fam == "verl:kl_cov":
        pl = spec["config_values"]["policy_loss"]
        if not away(d[mask], (0.0,)):
            return False
        va, vl = a[mask], lp[mask]
        cov = torch.sort((va - va.mean()) * (vl - vl.mean()), descending=True).values
        k = max(1, int(len(cov) * pl["kl_cov_ratio"]))
        req = k < len(cov) and float(cov[k - 1] - cov[k]) > EDGE_MARGIN
    elif fam == "verl:vanilla":
        r = torch.exp(d)
        if not away(r[mask], (0.8, 1.2, 3.0)):
            return False
    elif fam == "trl":
        cfg = spec["grpo_config"]
        eps_lo = cfg["epsilon"]
        eps_hi = cfg["epsilon_high"] if cfg["epsilon_high"] is not None else cfg["epsilon"]
        level = cfg["importance_sampling_level"]
        c = torch.exp(d)[sel] if level == "token" else torch.exp(z)
        lt = cfg["loss_type"]
        if lt in ("grpo", "dapo", "luspo"):
            if not away(c, (1 - eps_lo, 1 + eps_hi)):
                return False
            req = bool(((c < 1 - eps_lo) | (c > 1 + eps_hi)).any())
        elif lt == "cispo":
            if not away(c, (eps_hi,)):
                return False
            req = bool((c > eps_hi).any()) and bool((c < eps_hi).any())
        elif lt == "vespo":
            ssum = (torch.clamp(d, -20, 20) * mf).sum(-1)
            if "importance_sampling_ratio" in s:
                ssum = ssum + torch.clamp(torch.log(s["importance_sampling_ratio"]), math.log(1e-8), 20.0).sum(-1)
            if not away(ssum, (math.log(1e-8), 20.0)):
                return False
        if cfg["off_policy_mask_threshold"] is not None:
            samp = s.get("sampling_logprobs", old)
            avg = ((samp - lp) * mf).sum(-1) / big_l
            delta = cfg["off_policy_mask_threshold"]
            if not away(avg, (delta,)):
                return False
            dropped = (s["advantages"] < 0) & (avg > delta)
            kept_by_sign = (s["advantages"] >= 0) & (avg > delta)
            req = req and bool(dropped.any()) and bool((~dropped).any()) and bool(kept_by_sign.any())
        eff = mf
        if cfg["top_entropy_quantile"] < 1.0:
            h = s["entropies"]
            thr = torch.quantile(h[mask].float(), 1.0 - cfg["top_entropy_quantile"])
            if not away(h[mask] - float(thr), (0.0,)):
                return False
            kept = (h >= float(thr)) & mask
            req = req and bool(kept.any()) and bool((~kept & mask).any())
            eff = mf * kept.to(torch.float64)
        if cfg["use_adaptive_entropy"]:
            world = (s["entropies"] * eff).sum() / eff.sum()
            if not away(world, (cfg["entropy_target"],)):
                return False
            # even cases measure world entropy <= entropy_target (coefficient goes up), odd cases above it
            req = req and (bool(world <= cfg["entropy_target"]) == (index % 2 == 0))
    return req


# --------------------------------------------------------------------------------------
# Variants
# --------------------------------------------------------------------------------------

VERL_MASK_NOTE = ("response_mask is torch.bool (as verl's ppo_loss passes it), so every L_b + 1e-8 becomes a "
                  "float32 tensor equal to L_b exactly and the 1e-8 has no effect on these numbers.")
AGG_TEXT = {
    "token-mean": "agg_loss 'token-mean' = masked_sum(x, m) / sum(m), where masked_sum is sum(where(m, x, 0) * m) "
                  "(so non-finite padding values do not reach the value; they can still reach the gradient through "
                  "0 * NaN / 0 * Inf in the backward of upstream ops)",
    "seq-mean-token-mean": "agg_loss 'seq-mean-token-mean' = sum_b [sum_t(x * m) / (L_b + 1e-8)] * s_b / sum_b s_b with s_b "
                           "= 1[L_b > 0]; the row sums use a plain x * m product, so NaN/Inf at padding reach the "
                           "loss (NaN * 0 = NaN)",
}


def verl_specs(api: types.SimpleNamespace) -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []

    def add(name: str, registry: str, mode: str, family: str, draw_: dict[str, Any], description: str,
            overrides: Optional[dict[str, Any]] = None, kind: str = "policy", ignores_mode: bool = False) -> None:
        if registry not in api.funcs:
            return
        overrides = overrides or {}
        regs = [registry] + (["entropy_block"] if kind == "entropy" else [])
        _cfg, values = verl_config(api, regs, overrides)
        fn = api.funcs[registry]
        setting: dict[str, Any] = {
            "policy_loss_fn": registry, "called_via": f"get_policy_loss_fn('{registry}')",
            "loss_agg_mode": mode, "config": values, "rollout_is_weights": None,
            "response_mask_dtype": "torch.bool",
        }
        if ignores_mode:
            setting["loss_agg_mode_effective"] = ("seq-mean-token-mean (hard-coded)" if registry != "geo_mean"
                                                  else "none: plain torch.mean over rows (hard-coded)")
        if registry == "clip_cov":
            setting["torch_manual_seed"] = "the case seed, immediately before each call (see seed_rule)"
        if kind == "entropy":
            setting["entropy_block"] = (f"{VERL_LOSSES} ppo_loss, the `if {VERL_ENTROPY_TEST}:` statement, lines "
                                        f"{api.entropy_lines[0]}-{api.entropy_lines[1]}")
            setting["metric_aggregation"] = "AggregationType.MEAN"
        functions = [f"verl.trainer.ppo.core_algos.{fn}"]
        if kind == "entropy":
            functions.append("verl.workers.utils.losses.ppo_loss (entropy-bonus block)")
        specs.append({"name": name, "framework": "verl", "registry": registry, "mode": mode, "family": family,
                      "draw": draw_, "description": description + " " + VERL_MASK_NOTE, "overrides": overrides,
                      "kind": kind, "ignores_mode": ignores_mode, "setting": setting, "config_values": values,
                      "function": functions[0] if len(functions) == 1 else functions})

    d = api.actor_defaults
    pd = api.policy_defaults
    sapo_text = (
        "verl compute_policy_loss_sapo: r = exp(clamp(lp - old, -20, 20)); tau = torch.where(A > 0, tau_pos, tau_neg) "
        "with both taus built by torch.as_tensor(config.tau_*, dtype=advantages.dtype) (float64, so no float32 "
        "rounding, unlike TRL); gate = sigmoid(tau * (r - 1.0)) * (4.0 / tau); per-token loss = -gate * A (no clip, "
        "no detach; d gate / d r = sigmoid'(.) * 4 = 1 at r = 1); A = 0 takes tau_neg. Aggregation is hard-coded "
        "agg_loss(..., 'seq-mean-token-mean', **global_batch_info) whatever loss_agg_mode says (the recorder asserts "
        "'seq-mean-token-mean' gives bitwise the same): " + AGG_TEXT["seq-mean-token-mean"] + ". Metrics: "
        "pg_clipfrac = pg_clipfrac_lower = 0.0 always; ppo_kl = masked_mean(-(clamped lp - old)) = sum(where(m, x, "
        "0)*m) / (sum(m) + 1e-8).")
    add("sapo", "sapo", "token-mean", "verl:sapo", {"gap": [-2.0, 2.0], "avoid": ["A = 0"]},
        f"{sapo_text} Defaults tau_pos {d['tau_pos']}, tau_neg {d['tau_neg']}.", ignores_mode=True)
    add("sapo:tau_pos-0.5:tau_neg-2.0", "sapo", "token-mean", "verl:sapo", {"gap": [-2.0, 2.0], "avoid": ["A = 0"]},
        f"{sapo_text} Non-default tau_pos 0.5, tau_neg 2.0.", {"tau_pos": 0.5, "tau_neg": 2.0}, ignores_mode=True)
    gspo_text = (
        "verl compute_policy_loss_gspo (GSPO-token): z_b = sum_t((lp - old) * m) / clamp(L_b, min=1) (no +-20 "
        "clamp); log s_bt = lp - sg[lp] + sg[z_b], then clamped with torch.clamp(., max=10.0) (the clamp passes "
        "zero gradient where the value exceeds 10), s = exp(log s) (value = sequence ratio exp(z_b), gradient "
        "token-local d s / d lp_bt = s); per-token loss max(-A * s, -A * clamp(s, 1 - clip_ratio_low, 1 + "
        "clip_ratio_high)) (torch.maximum: equal branches split the gradient half/half, total unchanged), no dual "
        "clip. Aggregation hard-coded 'seq-mean-token-mean' whatever loss_agg_mode says (asserted): "
        + AGG_TEXT["seq-mean-token-mean"] + ". z_b uses (lp - old) * m, so NaN/Inf padding poison the whole row. "
        "Metrics: pg_clipfrac = masked_mean(pg_losses2 > pg_losses1); pg_clipfrac_lower = 0.0; ppo_kl = "
        "masked_mean(-(lp - old)).")
    add("gspo", "gspo", "token-mean", "verl:gspo", {"gap": [-0.6, 0.6], "avoid": ["seq ratio 0.8, 1.2", "z_b 10"]},
        f"{gspo_text} clip_ratio_low {d['clip_ratio_low']}, clip_ratio_high {d['clip_ratio_high']} (defaults).",
        ignores_mode=True)
    add("gspo:clamp-10", "gspo", "token-mean", "verl:gspo",
        {"gap": [-0.5, 0.5], "row_offset": [8.0, 12.0], "avoid": ["seq ratio 0.8, 1.2", "z_b 10"],
         "require": ["a row with z_b > 10", "a row with z_b < 10", "a token with A < 0"]},
        f"{gspo_text} This variant draws old = lp - U[8, 12] per row - U[-0.5, 0.5] so that some rows have z_b > 10: "
        "there log s is clamped to 10, the loss uses s = e^10 and the gradient of those tokens is exactly zero "
        "(for A > 0 the clip branch already gives zero gradient; for A < 0 the unclipped branch -A*s wins and the "
        "clamp kills its gradient).", ignores_mode=True)
    geo_text = (
        "verl compute_policy_loss_geo_mean (GMPO, registered as 'geo_mean'): d = lp - old (no +-20 clamp; the "
        "upstream clamp line is commented out); sgn = sign(A); dc = clamp(d, -clip_ratio_low, clip_ratio_high); "
        "d* = sgn * min(sgn * d, sgn * dc) (torch.min: equal arguments split the gradient half/half, total "
        "unchanged) = for A > 0 min(d, clip_ratio_high), for A < 0 max(d, -clip_ratio_low) (only the side that "
        "binds for sign(A); A = 0 gives d* = 0); rho_b = exp(sum_t(d* * m) / (L_b + 1e-8)); Abar_b = sum_t(A * "
        "m) / (L_b + 1e-8) (the token advantages are averaged; GMPO assumes a per-row A); per-row loss -Abar_b * "
        "rho_b; loss = torch.mean over all B rows (ignores loss_agg_mode and global_batch_info entirely, not "
        "agg_loss; an empty row would count with loss 0). The log-space clip e^+-clip_ratio (0.2 by default) is "
        "narrower than the GMPO paper's e^+-0.4. Sums use x * m, so NaN/Inf padding reach the loss. Metrics: "
        "pg_clipfrac = masked_mean((d != dc) * (A > 0)), pg_clipfrac_lower = masked_mean((d != dc) * (A < 0)) "
        "(any clamp activity, not only the binding side), ppo_kl = masked_mean(-d).")
    add("geo_mean", "geo_mean", "token-mean", "verl:geo_mean",
        {"gap": [-0.6, 0.6], "avoid": ["d = +-clip"], "require": ["a binding clip", "a free token"]},
        f"{geo_text} Defaults clip_ratio = clip_ratio_low = clip_ratio_high = {d['clip_ratio']}; per-token random "
        "advantages.", ignores_mode=True)
    add("geo_mean:clip-0.4:row-advantages", "geo_mean", "token-mean", "verl:geo_mean",
        {"gap": [-1.0, 1.0], "row_advantages": True, "avoid": ["d = +-clip"],
         "require": ["a binding clip", "a free token"]},
        f"{geo_text} Here clip_ratio, clip_ratio_low and clip_ratio_high are all set to 0.4 (the paper's e^+-0.4; "
        "setting clip_ratio alone would not change clip_ratio_low / clip_ratio_high, whose ActorConfig defaults "
        "are 0.2, not None), and the advantages are constant along each row (GRPO outcome advantages broadcast "
        "over T; padding still holds junk).",
        {"clip_ratio": 0.4, "clip_ratio_low": 0.4, "clip_ratio_high": 0.4}, ignores_mode=True)
    for mode in ("token-mean", "seq-mean-token-mean"):
        add(f"dro:beta-0.1:{mode}", "dro", mode, "verl:dro", {"gap": [-2.0, 2.0], "avoid": ["A = 0"]},
            "verl compute_policy_loss_dro: per-token loss = -(lp * A - 0.5 * dro_beta * (lp - old)^2) (no detach, no "
            "clamp, old_logprobs enter only the penalty: d loss_tok / d lp = -A + dro_beta * (lp - old)); "
            f"{AGG_TEXT[mode]}. policy_loss.dro_beta = 0.1 here; its PolicyLossConfig "
            f"default is {pd.get('dro_beta')!r}, with which the function raises ValueError (dro_beta must be > 0). "
            "Metrics: ppo_kl = masked_mean(-(lp - old)). New since verl 74a718a4 (absent there).",
            {"policy_loss.dro_beta": 0.1})
    dppo_common = (
        "per-token loss = -A * sg[clamp(r, max=clip_ratio_c)] * lp * valid with r = exp(clamp(lp - old, -20, 20)), "
        "clip_ratio_c = config.get('clip_ratio_c', 20.0) = 3.0 (ActorConfig always defines clip_ratio_c = 3.0, so "
        "the 20.0 fallback of the code never applies), valid = sg[float] of a boolean mask on p = exp(lp), "
        "p_old = exp(old) with the clip_ratio_* fields reinterpreted as divergence thresholds (defaults "
        f"clip_ratio_low = clip_ratio_high = {d['clip_ratio_low']}); the gradient is -A * sg[trunc r] * valid per "
        "token (REINFORCE-like through lp, not through r)")
    for mode in ("token-mean", "seq-mean-token-mean"):
        add(f"dppo_tv:{mode}", "dppo_tv", mode, "verl:dppo_tv",
            {"lp": [-2.5, -0.02], "gap": [-1.5, 1.5], "avoid": ["p - p_old = 0, +clip_ratio_high, -clip_ratio_low",
                                                               "r = clip_ratio_c", "A = 0"],
             "require": ["an invalid token", "a valid token with r > 3", "a valid token with r < 3"]},
            f"verl compute_policy_loss_dppo_tv (DPPO-Binary-TV): {dppo_common}; valid = where(A > 0, p - p_old <= "
            f"clip_ratio_high, p - p_old >= -clip_ratio_low) (A = 0 uses the second test); {AGG_TEXT[mode]}. "
            "Metrics: pg_clipfrac = masked_mean(1 - valid); pg_clipfrac_lower = masked_mean((r > clip_ratio_c) * "
            "valid); ppo_kl = masked_mean(-(clamped lp - old)). exp(123.0) junk makes p huge at padding but stays "
            "finite.")
        add(f"dppo_kl:{mode}", "dppo_kl", mode, "verl:dppo_kl",
            {"lp": [-2.5, -0.02], "gap": [-1.5, 1.5], "avoid": ["binary KL = clip_ratio_*", "p = p_old",
                                                               "r = clip_ratio_c", "A = 0"],
             "require": ["an invalid token", "a valid token with r > 3", "a valid token with r < 3"]},
            f"verl compute_policy_loss_dppo_kl (DPPO-Binary-KL): {dppo_common}; binary KL = p_old * (old - lp) + (1 "
            "- p_old) * log((1 - p_old + 1e-8) / (1 - p + 1e-8)) (natural log, the 1e-8 inside both terms); valid "
            "= where(A > 0, (KL <= clip_ratio_high) | (p <= p_old), (KL <= clip_ratio_low) | (p >= p_old)); "
            f"{AGG_TEXT[mode]}. Metrics as dppo_tv. With 123.0 junk, 1 - p is negative at padding and the log is "
            "NaN there, but valid is only used through the masked aggregation.")
    clip_cov_text = (
        "verl compute_policy_loss_clip_cov (Clip-Cov): r = exp(lp - old) (no +-20 clamp); l1 = -A * r, l2 = -A * "
        "clamp(r, 1 - clip_ratio_low, 1 + clip_ratio_high); clip_by_origin = (l2 > l1) & m; cov = (A - "
        "masked_mean(A, m)) * (lp - masked_mean(sg[lp], m)) with masked_mean = masked_sum / (sum(m) + 1e-8) (= "
        "exact mean with the bool mask), set to -inf at padding and at clip_by_origin; candidates = nonzero((cov "
        "< clip_cov_ub) & (cov > clip_cov_lb) & m) in row-major order; clip_num = max(int(clip_cov_ratio * "
        "sum(m)), 1) (int truncation); if there are candidates, perm = torch.randperm(len(candidates)) from the "
        "GLOBAL torch generator and the first min(clip_num, len) candidates in perm order get corr = 0 (corr = 1 "
        "elsewhere); per-token loss max(l1, l2) * corr (no dual clip). The selection depends only on values "
        "(cov has no gradient path into the loss). Outputs clip_cov_randperm (n and the permutation "
        "torch.randperm returned, captured) and clip_cov_selected / clip_cov_candidates ([b, t] pairs; derived "
        "by the recorder from its own covariance and the captured permutation and asserted consistent: n equals "
        "the candidate count, and every selected token has gradient 0). Metrics: pg_clipfrac = masked_mean(corr "
        "== 0) (the fraction of cov-selected tokens, NOT the PPO clip fraction); ppo_kl = masked_mean(-(lp - "
        "old)). Selection is non-deterministic unless the global generator is seeded; the recorder seeds it "
        "with the case seed right before each call")
    for mode in ("token-mean", "seq-mean-token-mean"):
        add(f"clip_cov:{mode}", "clip_cov", mode, "verl:clip_cov",
            {"gap": [-0.5, 0.5], "avoid": ["r = 1 -+ clip", "cov = clip_cov_lb, clip_cov_ub", "A = 0"],
             "require": ["more candidates than clip_num", "a PPO-clipped token"]},
            f"{clip_cov_text}; {AGG_TEXT[mode]}. Defaults clip_cov_ratio {pd['clip_cov_ratio']}, clip_cov_lb "
            f"{pd['clip_cov_lb']}, clip_cov_ub {pd['clip_cov_ub']}, clip 0.2/0.2 (so clip_num = 1 here).")
    add("clip_cov:ratio-0.2:token-mean", "clip_cov", "token-mean", "verl:clip_cov",
        {"gap": [-0.5, 0.5], "avoid": ["r = 1 -+ clip", "cov = clip_cov_lb, clip_cov_ub", "A = 0"],
         "require": ["more candidates than clip_num", "a PPO-clipped token"]},
        f"{clip_cov_text}; {AGG_TEXT['token-mean']}. Non-default policy_loss.clip_cov_ratio = 0.2 (clip_num = "
        "int(0.2 * N) >= 1 tokens zeroed), clip_cov_lb 1.0, clip_cov_ub 5.0.", {"policy_loss.clip_cov_ratio": 0.2})
    kl_cov_text = (
        "verl compute_policy_loss_kl_cov (KL-Cov): r = exp(lp - old) (no +-20 clamp); base per-token loss -A * r "
        "(plain IS policy gradient, no clip); over the valid tokens in row-major order (A and sg[lp] gathered "
        "with a boolean index, on CPU) cov = (A - mean(A)) * (lp - mean(lp)) with plain means over valid tokens; "
        "k = max(1, int(N * kl_cov_ratio)); the k tokens with the LARGEST cov (torch.topk largest=True, signed, "
        "no bounds; deterministic given the inputs, ties excepted, none here) get -A * r + ppo_kl_coef * |lp - "
        "old| (gradient of |.| is sign(lp - old)); (the code's k = min(kl_cov_ratio, N) guard is always "
        "non-zero). kl_cov_selected lists those tokens ([b, t]), derived by the recorder's own top-k (a check "
        "that reproduces upstream's loss and gradient with it). Metrics: ppo_kl = masked_mean(|lp - old|). The "
        "code's fallback ppo_kl_coef (1.0, when the field is None) and its docstring ('Defaults to 1') differ "
        f"from the PolicyLossConfig default {pd['ppo_kl_coef']}, which is what runs")
    for mode in ("token-mean", "seq-mean-token-mean"):
        add(f"kl_cov:{mode}", "kl_cov", mode, "verl:kl_cov",
            {"gap": [-0.5, 0.5], "avoid": ["lp = old", "top-k boundary tie", "A = 0"]},
            f"{kl_cov_text}; {AGG_TEXT[mode]}. Defaults kl_cov_ratio {pd['kl_cov_ratio']} (k = 1 here), "
            f"ppo_kl_coef {pd['ppo_kl_coef']}.")
    add("kl_cov:ratio-0.2:token-mean", "kl_cov", "token-mean", "verl:kl_cov",
        {"gap": [-0.5, 0.5], "avoid": ["lp = old", "top-k boundary tie", "A = 0"]},
        f"{kl_cov_text}; {AGG_TEXT['token-mean']}. Non-default policy_loss.kl_cov_ratio = 0.2 (k = max(1, int(0.2 * "
        f"N))), ppo_kl_coef {pd['ppo_kl_coef']}.", {"policy_loss.kl_cov_ratio": 0.2})
    for mode in ("token-mean", "seq-mean-token-mean"):
        add(f"gpg:{mode}", "gpg", mode, "verl:gpg", {"gap": [-2.0, 2.0], "avoid": ["A = 0"]},
            f"verl compute_policy_loss_gpg (GPG / plain REINFORCE): per-token loss = -lp * A (old_logprobs unused); "
            f"{AGG_TEXT[mode]}. Returns an empty metrics dict.")
    for mode in ("token-mean", "seq-mean-token-mean"):
        add(f"entropy_bonus:vanilla:{mode}", "vanilla", mode, "verl:vanilla",
            {"gap": [-2.0, 2.0], "entropies": [0.05, 3.0], "avoid": ["r = 0.8, 1.2, 3.0", "A = 0"]},
            "verl's entropy bonus as ppo_loss applies it (verl/workers/utils/losses.py, the `if entropy is not None:` "
            "block executed alone): policy_loss = pg_loss - entropy_coeff * agg_loss(entropy, response_mask, "
            f"loss_agg_mode, **global_batch_info), i.e. the same aggregation as the pg loss; {AGG_TEXT[mode]}; "
            "entropy carries gradient (grad_entropies = -entropy_coeff * d agg / d H). pg_loss = "
            "compute_policy_loss_vanilla with the ActorConfig defaults (PPO clip 0.2/0.2 on r = exp(clamp(lp - "
            "old, +-20)), dual clip for A < 0 at clip_ratio_c 3.0: loss_tok = where(A < 0, min(-3 * A, max(-A*r, "
            "-A*clip(r))), max(-A*r, -A*clip(r)))). entropy_coeff = 0.01 here (ActorConfig default "
            f"{d['entropy_coeff']!r}, with which the term is 0 * agg - still NaN if agg is NaN). Outputs also "
            "entropy_loss (the metric value, = the aggregated entropy) and pg_loss.",
            {"entropy_coeff": 0.01}, kind="entropy")
    return specs


def trl_specs(api: types.SimpleNamespace) -> list[dict[str, Any]]:
    d = api.defaults
    specs: list[dict[str, Any]] = []
    ratio_text = {
        "token": "c = exp(lp - old) per token (no log-ratio clamp)",
        "sequence": "c_b = exp(sum_t(m * (lp - old)) / clamp(L_b, min=1)), shape [B, 1], gradient through the mean "
                    "(GSPO); (lp - old) * m with the long mask, so NaN/Inf padding poison the row",
    }
    norm_text = {
        "grpo": "loss = mean_b(sum_t(x * m) / clamp(L_b, min=1)) / GA (GA = current_gradient_accumulation_steps = 1)",
        "sapo": "loss = mean_b(sum_t(x * m) / clamp(L_b, min=1)) / GA (as grpo, GA = 1)",
        "dapo": "loss = sum(x * m) / (clamp(num_items_in_batch, min=1) / num_processes) with num_items_in_batch = N "
                "(this batch's token count), one process",
        "cispo": "loss = sum(x * m) / (clamp(num_items_in_batch, min=1) / num_processes), as dapo",
        "vespo": "loss = sum(x * m) / (clamp(num_items_in_batch, min=1) / num_processes), as dapo",
        "luspo": "loss = mean(x * L_b) / GA over ALL entries of x (torch.mean of per_token_loss * mask.sum(1, "
                 "keepdim=True)), GA = 1",
    }
    ppo_tok = "-min(c * A, clamp(c, 1 - epsilon, 1 + epsilon_high) * A) (epsilon_high None = epsilon; delta None)"

    def add(name: str, overrides: dict[str, Any], draw_: dict[str, Any], text: str,
            state: Optional[dict[str, Any]] = None, pair: bool = False, entropy_grad: bool = False,
            padding_matters: bool = False) -> None:
        cfg = dict(d)
        cfg.update(overrides)
        lt = cfg["loss_type"]
        level = cfg["importance_sampling_level"]
        tail = (f" Ratio: {ratio_text[level]}. Aggregation: {norm_text[lt]}. Multipliers on the per-token loss, in "
                "order: OPSM mask, top-entropy mask, vLLM IS ratio (never for vespo), then + beta * k3 (beta 0 here, "
                "so no KL). " + ("The per-token loss is aggregated WITHOUT the mask (see above)" if lt == "luspo"
                                  and level == "token" else "The per-token loss is summed as x * m with the long mask")
                + " (NaN/Inf at padding reach the loss: NaN * 0 = NaN, and the gradient via 0 * NaN in the backward). "
                "completion_mask is torch.long; vLLM IS correction off unless stated. Metrics are _compute_loss's "
                "self._metrics['train'] entries (global masked means over one process; some are float32 values).")
        setting: dict[str, Any] = {
            "function": "trl.trainer.grpo_trainer.GRPOTrainer._compute_loss",
            "grpo_config": dict(sorted(cfg.items())),
            "num_items_in_batch": "completion_mask.sum() = N (int64 0-dim tensor)",
            "num_processes": 1, "current_gradient_accumulation_steps": 1, "mode": "train",
            "response_mask_dtype": "torch.long",
            "trainer_state": {"entropy_coef": (state or {}).get("entropy_coef", cfg["entropy_coef"]),
                              "_last_world_entropy": (state or {}).get("_last_world_entropy", "Infinity"),
                              "_entropy_window_stats": None},
        }
        if "sampling_gap" in draw_:
            setting["inputs_extra"] = "sampling_per_token_logps = the case's sampling_logprobs"
        if "is_log_ratio" in draw_:
            setting["inputs_extra"] = ("importance_sampling_ratio = the case's importance_sampling_ratio, given "
                                       "directly (not computed by the IS block)")
        specs.append({"name": name, "framework": "trl", "family": "trl", "grpo_config": cfg, "draw": draw_,
                      "description": text + tail, "state": state or {}, "pair_padding": pair,
                      "entropy_grad": entropy_grad, "padding_matters": padding_matters, "setting": setting,
                      "function": "trl.trainer.grpo_trainer.GRPOTrainer._compute_loss"})

    sapo_t = ("TRL loss_type 'sapo': per-token loss = -sigmoid(tau * (c - 1)) * 4 / tau * A with tau = "
              "torch.where(A > 0, sapo_temperature_pos, sapo_temperature_neg) built from two Python floats, which "
              "gives a FLOAT32 tensor: tau is the float32 rounding of the config values (1.05 -> "
              "1.0499999523162842), then promoted to float64 in the product; A = 0 takes the negative temperature; "
              "no clip, no detach.")
    add("sapo:token", {"loss_type": "sapo"}, {"gap": [-2.0, 2.0], "avoid": ["A = 0"]},
        f"{sapo_t} Defaults sapo_temperature_pos {d['sapo_temperature_pos']}, sapo_temperature_neg "
        f"{d['sapo_temperature_neg']}.")
    add("sapo:sequence", {"loss_type": "sapo", "importance_sampling_level": "sequence"},
        {"gap": [-2.0, 2.0], "avoid": ["A = 0"]}, f"{sapo_t} Default temperatures; sequence-level ratio.")
    add("sapo:token:temps-0.5-1.3", {"loss_type": "sapo", "sapo_temperature_pos": 0.5, "sapo_temperature_neg": 1.3},
        {"gap": [-2.0, 2.0], "avoid": ["A = 0"]},
        f"{sapo_t} Non-default sapo_temperature_pos 0.5 (exact in float32), sapo_temperature_neg 1.3 (float32 "
        "1.2999999523162842 is what runs).")
    luspo_t = (f"TRL loss_type 'luspo': per-token loss {ppo_tok}, the grpo/dapo clipped surrogate; the LUSPO "
               "aggregation multiplies it by the row length L_b and takes torch.mean.")
    add("luspo:sequence", {"loss_type": "luspo", "importance_sampling_level": "sequence"},
        {"gap": [-0.6, 0.6], "avoid": ["c = 0.8, 1.2"], "require": ["a clipped row"]},
        f"{luspo_t} At the recommended importance_sampling_level 'sequence' per_token_loss is [B, 1], so loss = "
        "mean_b(L_b * l_b) / GA: padding enters only through the sequence ratio's masked mean.")
    add("luspo:token", {"loss_type": "luspo"},
        {"gap": [-0.6, 0.6], "avoid": ["c = 0.8, 1.2 (all positions, padding included)"], "require": ["a clipped token"]},
        f"{luspo_t} At importance_sampling_level 'token' (GRPOTrainer only warns) per_token_loss is [B, T] and "
        "the mean runs over all B * T entries WITHOUT the mask: loss = sum_{b,t} L_b * l_bt / (B * T) / GA, so "
        "padding positions contribute -L_b * min(c * A, clip(c) * A) with their own (junk) logprobs, the loss "
        "depends on padding values, and padding positions get the non-zero gradient -L_b * A * c / (B * T) "
        "(when unclipped). The cases come in pairs (junk case, then its in-range twin with padding_pair_of) to "
        "show it; variant.padding_sensitivity summarises.", pair=True, padding_matters=True)
    vespo_t = ("TRL loss_type 'vespo' (get_gamma_weights, @torch.no_grad so phi is detached): s_b = sum_t(clamp(lp "
               "- old, -20, 20) * m) (a SUM, not a mean; the c of the ratio branch is unused) [+ sum over ALL T "
               "positions of clamp(log(importance_sampling_ratio), ln(1e-8), 20) when that input is present, no "
               "mask]; log_w = clamp(s_b, ln(1e-8), 20); w = exp(log_w); (k, lambda) = (vespo_k_pos, "
               "vespo_lambda_pos) where A >= 0 else (vespo_k_neg, vespo_lambda_neg), built by torch.where from "
               "Python floats (float32; exact for the defaults 2, 3, 3, 2), lambda clamped min 1e-4; phi_b = "
               "exp(lambda + k * log_w - lambda * w).nan_to_num(nan=0, posinf=0, neginf=0) (phi(1) = 1); per-token "
               "loss = -phi_b * A * lp; the vLLM IS ratio is NOT multiplied in afterwards for vespo. phi_seq is the "
               "captured [B, 1] helper output.")
    add("vespo:token", {"loss_type": "vespo"}, {"gap": [-0.6, 0.6], "avoid": ["A = 0", "s_b = ln 1e-8, 20"]},
        f"{vespo_t} Defaults k_pos {d['vespo_k_pos']}, lambda_pos {d['vespo_lambda_pos']}, k_neg {d['vespo_k_neg']}, "
        f"lambda_neg {d['vespo_lambda_neg']}; no IS ratio input.")
    add("vespo:token:is-ratio", {"loss_type": "vespo", "use_vllm": True, "vllm_importance_sampling_correction": True},
        {"gap": [-0.6, 0.6], "is_log_ratio": [-0.5, 0.5], "avoid": ["A = 0", "s_b = ln 1e-8, 20"]},
        f"{vespo_t} Default k/lambda; use_vllm and vllm_importance_sampling_correction True, and "
        "inputs['importance_sampling_ratio'] is the case's importance_sampling_ratio (exp(U[-0.5, 0.5]) at "
        "response positions, junk at padding). Its log is summed over all T positions without the mask, so "
        "padding values of the IS ratio enter phi (TRL's own IS block puts exactly 1 there, log 1 = 0, so this "
        "only bites with other padding).")
    cispo_t = ("TRL loss_type 'cispo': per-token loss = -sg[clamp(c, max=epsilon_high)] * A * lp where "
               "epsilon_high is an ABSOLUTE cap on the ratio (not 1 + eps) and there is no lower clip; the gradient "
               "is -sg[min(c, cap)] * A per token.")
    add("cispo:token", {"loss_type": "cispo"}, {"gap": [-2.0, 2.0], "avoid": ["c = cap"],
                                                "require": ["a capped token", "an uncapped token"]},
        f"{cispo_t} With the GRPOConfig default epsilon_high None, GRPOTrainer uses epsilon_high = epsilon = "
        f"{d['epsilon']}, so the cap is c <= 0.2: almost every token is capped (ScaleRL recommends 5.0).")
    add("cispo:token:epsilon_high-5.0", {"loss_type": "cispo", "epsilon_high": 5.0},
        {"gap": [-2.0, 2.0], "avoid": ["c = cap"], "require": ["a capped token", "an uncapped token"]},
        f"{cispo_t} epsilon_high 5.0 (the ScaleRL cap).")
    opsm_t = ("OPSM (off_policy_mask_threshold = delta, get_off_policy_mask, DeepSeek-V3.2): kl_bt = "
              "sampling_per_token_logps - sg[lp] where sampling_per_token_logps = inputs.get('sampling_per_token_"
              "logps', old_per_token_logps) (the CURRENT logprobs, detached, not old); avg_b = sum_t(kl * m) / "
              "clamp(L_b, min=1); keep_b = (A_b >= 0) | (avg_b <= delta) as the mask's dtype (long), [B, 1]; the "
              "per-token loss is multiplied by keep (before the entropy mask and IS ratio). off_policy_mask is the "
              "captured helper output (as booleans).")
    add("opsm-0.5:dapo:token", {"loss_type": "dapo", "off_policy_mask_threshold": 0.5},
        {"gap": [-2.0, 2.0], "avoid": ["c = 0.8, 1.2", "avg_b = delta", "A = 0"],
         "require": ["a dropped row", "a kept row", "a clipped token"]},
        f"{opsm_t} delta 0.5 (the config doc's example); no sampling logprobs, so kl = old - sg[lp]. Per-token loss "
        f"{ppo_tok} (loss_type dapo, the default).")
    add("opsm-0.5:dapo:token:sampling-logps", {"loss_type": "dapo", "off_policy_mask_threshold": 0.5},
        {"gap": [-2.0, 2.0], "sampling_gap": [-1.0, 1.0], "avoid": ["c = 0.8, 1.2", "avg_b = delta", "A = 0"],
         "require": ["a dropped row", "a kept row", "a clipped token"]},
        f"{opsm_t} delta 0.5 with inputs['sampling_per_token_logps'] = the case's sampling_logprobs (old + U[-1, "
        f"1]), as in vLLM mode; vllm_importance_sampling_correction stays False here. Per-token loss {ppo_tok}.")
    add("opsm-0.5:grpo:sequence", {"loss_type": "grpo", "importance_sampling_level": "sequence",
                                   "off_policy_mask_threshold": 0.5},
        {"gap": [-2.0, 2.0], "avoid": ["c = 0.8, 1.2", "avg_b = delta", "A = 0"],
         "require": ["a dropped row", "a kept row", "a clipped row"]},
        f"{opsm_t} delta 0.5, kl = old - sg[lp], with loss_type grpo at the sequence level (per-token loss {ppo_tok} "
        "on the [B, 1] ratio).")
    ent_t = ("Top-entropy token mask (top_entropy_quantile = rho < 1, get_high_entropy_mask): thr = "
             "torch.quantile(H[m].float(), 1 - rho) (FLOAT32 values, linear interpolation); entropy_mask = "
             "(H * m.float() >= thr) & m.bool() (the float64 entropies compared with the float32 threshold); the "
             "per-token loss is multiplied by it. entropies are an input here (the model's per-token entropies, "
             "no gradient since the entropy bonus is off); entropy_mask is the captured helper output. No case "
             "has an entropy within 1e-6 of thr (the recorder redraws), so the float32 rounding never decides "
             "a token here.")
    add("top-entropy-0.2:dapo:token", {"loss_type": "dapo", "top_entropy_quantile": 0.2},
        {"gap": [-2.0, 2.0], "entropies": [0.05, 4.0], "avoid": ["c = 0.8, 1.2", "H = thr"],
         "require": ["a kept and a dropped token", "a clipped token"]},
        f"{ent_t} rho 0.2 (the paper's 80/20 rule), per-token loss {ppo_tok}.")
    add("top-entropy-0.5:grpo:token", {"loss_type": "grpo", "top_entropy_quantile": 0.5},
        {"gap": [-2.0, 2.0], "entropies": [0.05, 4.0], "avoid": ["c = 0.8, 1.2", "H = thr"],
         "require": ["a kept and a dropped token", "a clipped token"]},
        f"{ent_t} rho 0.5, loss_type grpo, per-token loss {ppo_tok}. The grpo row normaliser still divides by "
        "L_b (all response tokens), not by the kept count.")
    bonus_t = ("Entropy bonus (_entropy_bonus_enabled = entropy_coef != 0 or use_adaptive_entropy): effective_mask = "
               "m (or m * entropy_mask with top_entropy_quantile < 1); for dapo/cispo/vespo entropy_loss = "
               "sum(H * eff) / normalizer (the same clamp(num_items_in_batch, min=1) / num_processes as the policy "
               "term), otherwise sum(H * eff) / clamp(sum(eff), min=1) / normalizer (GA); loss = loss - apply_coef * "
               "entropy_loss with apply_coef = entropy_coef (static) or, adaptive, entropy_coef if "
               "_last_world_entropy <= entropy_target else 0.0 (the previous step's state). Entropies carry "
               "gradient here (grad_entropies).")
    adapt_t = (" Adaptive update after the loss (train mode, sync_gradients True): window_stats = [sum(H * eff), "
               "sum(eff)] (detached); world = window[0] / clamp(window[1], min=1); entropy_coef <- min(coef + "
               "entropy_coef_delta, entropy_coef_max) if world <= entropy_target else max(coef - entropy_coef_delta, "
               "entropy_coef_min); _last_world_entropy <- world; _entropy_window_stats <- None. outputs.state_after "
               "records them; metrics.entropy_coef is the updated coefficient. Defaults entropy_coef_delta "
               f"{d['entropy_coef_delta']}, entropy_coef_min {d['entropy_coef_min']}, entropy_coef_max "
               f"{d['entropy_coef_max']}, entropy_target {d['entropy_target']}.")
    add("entropy-bonus:static-0.01:dapo:token", {"loss_type": "dapo", "entropy_coef": 0.01},
        {"gap": [-2.0, 2.0], "entropies": [0.05, 4.0], "avoid": ["c = 0.8, 1.2"], "require": ["a clipped token"]},
        f"{bonus_t} Static entropy_coef 0.01 (default {d['entropy_coef']}), loss_type dapo, per-token loss {ppo_tok}.",
        entropy_grad=True)
    add("entropy-bonus:static-0.01:grpo:token", {"loss_type": "grpo", "entropy_coef": 0.01},
        {"gap": [-2.0, 2.0], "entropies": [0.05, 4.0], "avoid": ["c = 0.8, 1.2"], "require": ["a clipped token"]},
        f"{bonus_t} Static entropy_coef 0.01, loss_type grpo (entropy term = global token mean of H / GA, while "
        f"the policy term is a mean of row means), per-token loss {ppo_tok}.", entropy_grad=True)
    add("entropy-bonus:static-0.01:top-entropy-0.5:dapo:token",
        {"loss_type": "dapo", "entropy_coef": 0.01, "top_entropy_quantile": 0.5},
        {"gap": [-2.0, 2.0], "entropies": [0.05, 4.0], "avoid": ["c = 0.8, 1.2", "H = thr"],
         "require": ["a kept and a dropped token", "a clipped token"]},
        f"{bonus_t} Static entropy_coef 0.01 with top_entropy_quantile 0.5: the bonus sums only the kept "
        f"(high-entropy) tokens but still divides by num_items_in_batch = all N tokens. {ent_t}", entropy_grad=True)
    add("entropy-bonus:adaptive:first-window:dapo:token",
        {"loss_type": "dapo", "entropy_coef": 0.01, "use_adaptive_entropy": True},
        {"gap": [-2.0, 2.0], "entropies": [0.0, 0.4], "avoid": ["c = 0.8, 1.2", "world entropy = entropy_target"],
         "require": ["a clipped token"]},
        f"{bonus_t} Adaptive, initial entropy_coef 0.01, trainer state as after __init__ (_last_world_entropy = "
        "inf): inf > entropy_target, so apply_coef = 0 and the bonus is 0 * entropy_loss (still NaN when "
        f"entropy_loss is NaN), yet the gradient w.r.t. entropies is present (zeros).{adapt_t}", entropy_grad=True)
    add("entropy-bonus:adaptive:below-target:dapo:token",
        {"loss_type": "dapo", "entropy_coef": 0.01, "use_adaptive_entropy": True},
        {"gap": [-2.0, 2.0], "entropies": [0.0, 0.4], "avoid": ["c = 0.8, 1.2", "world entropy = entropy_target"],
         "require": ["a clipped token"]},
        f"{bonus_t} Adaptive with trainer state entropy_coef 0.01 and _last_world_entropy 0.1 (<= entropy_target "
        f"0.2, so the bonus is applied with 0.01).{adapt_t}",
        state={"entropy_coef": 0.01, "_last_world_entropy": 0.1}, entropy_grad=True)
    return specs


# --------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------

JUNK_COUNTER = [0]


def draw_accepted(spec: dict[str, Any], base: str, shape: tuple[int, int],
                  index: int) -> tuple[int, int, Any, dict[str, Any]]:
    for attempt in range(MAX_ATTEMPTS):
        seed = seed_of(base if attempt == 0 else f"{base}:{attempt}")
        mask, streams = draw(spec, seed, shape)
        if accept(spec, mask, streams, index):
            return seed, attempt, mask, streams
    raise SystemExit(f"{base}: no acceptable draw in {MAX_ATTEMPTS} attempts")


def record_inputs(mask: Any, inp: dict[str, Any]) -> dict[str, Any]:
    out = {"response_mask": mask}
    for key in STREAMS:
        if key in inp:
            out[key] = inp[key]
    return jsonable(out)


def outputs_json(out: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    res = dict(out)
    if res.get("clip_cov_randperm") is not None:
        res["clip_cov_randperm"] = {"n": res["clip_cov_randperm"]["n"], "perm": res["clip_cov_randperm"]["perm"]}
    for key in ("clip_cov_candidates", "clip_cov_selected", "kl_cov_selected"):
        if key in extras:
            res[key] = extras[key]
    return jsonable(dict(sorted(res.items())))


def comparable(out: dict[str, Any], framework: str) -> dict[str, Any]:
    """What is compared bitwise across pins (TRL metrics changed definition between the pins)."""
    return {k: v for k, v in out.items() if not (framework == "trl" and k == "metrics")}


def record_variant(spec: dict[str, Any], head: types.SimpleNamespace, others: list[types.SimpleNamespace],
                   runner: Callable[..., dict[str, Any]], model: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    fwk = spec["framework"]
    cases: list[dict[str, Any]] = []
    other_results = {o.target.label: True for o in others}
    other_outputs: dict[str, list[Any]] = {o.target.label: [] for o in others}
    for i in range(CASES_PER_VARIANT):
        shape = SHAPES[i % len(SHAPES)]
        base = f"{fwk}@{head.target.label}:{spec['name']}:{i}"
        seed, attempt, mask, clean = draw_accepted(spec, base, shape, i)
        kind = "nonfinite" if JUNK_COUNTER[0] % 5 == 4 else "123.0"
        JUNK_COUNTER[0] += 1
        junk = {k: with_junk(v, mask, kind, STREAMS.index(k)) for k, v in clean.items()}
        out = runner(head.api, spec, mask, junk, seed)
        ref = runner(head.api, spec, mask, clean, seed)
        where = f"{base} (seed {seed})"
        mod = model(spec, mask, clean, ref)
        check_model(where, spec, mod, ref)
        extras = {k: v for k, v in mod.items() if k in ("clip_cov_candidates", "clip_cov_selected", "kl_cov_selected")}
        reaches = differing(comparable(out, fwk), comparable(ref, fwk))
        for o in others:
            o_out = runner(o.api, spec, mask, junk, seed)
            same = same_value(comparable(o_out, fwk), comparable(out, fwk), bitwise=True)
            o_ref = runner(o.api, spec, mask, clean, seed)
            same = same and same_value(comparable(o_ref, fwk), comparable(ref, fwk), bitwise=True)
            other_results[o.target.label] &= same
            other_outputs[o.target.label].append(o_out)
        case: dict[str, Any] = {
            "seed": seed, "seed_attempt": attempt, "shape": list(shape), "junk": kind,
            "inputs": record_inputs(mask, junk), "outputs": outputs_json(out, extras),
            "junk_reaches_output": bool(reaches), "junk_reaches": reaches,
        }
        if spec.get("registry") == "clip_cov":
            case["torch_manual_seed"] = seed
        cases.append(case)
        if spec.get("pair_padding"):
            twin = {
                "seed": seed, "seed_attempt": attempt, "shape": list(shape), "junk": "in-range",
                "padding_pair_of": len(cases) - 1, "inputs": record_inputs(mask, clean),
                "outputs": outputs_json(ref, extras), "junk_reaches_output": False, "junk_reaches": [],
            }
            cases.append(twin)
    variant: dict[str, Any] = {
        "name": spec["name"], "framework": fwk, "pin": head.target.label, "commit": head.target.commit,
        "function": spec["function"], "setting": spec["setting"], "description": spec["description"],
        "draw": spec["draw"], "cases": cases,
        "other_pins": [],
    }
    for o in others:
        entry = {"pin": o.target.label, "commit": o.target.commit,
                 "compared": "loss, gradients, masks, selections" + ("" if fwk == "trl" else ", metrics")
                 + " (bitwise, on the junk case and its in-range twin)",
                 "result": "identical" if other_results[o.target.label] else "differs"}
        if not other_results[o.target.label]:
            entry["outputs"] = [outputs_json(x, {}) for x in other_outputs[o.target.label]]
        variant["other_pins"].append(entry)
    if spec.get("pair_padding"):
        pairs = []
        for j in range(0, len(cases), 2):
            a_, b_ = cases[j]["outputs"], cases[j + 1]["outputs"]
            msk = cases[j]["inputs"]["response_mask"]
            pad = [(r, t) for r, row in enumerate(msk) for t, m in enumerate(row) if not m]
            pairs.append({
                "cases": [j, j + 1], "junk": cases[j]["junk"],
                "loss_differs": a_["loss"] != b_["loss"],
                "grad_at_padding_junk": [a_["grad_logprobs"][r][t] for r, t in pad],
                "grad_at_padding_in_range": [b_["grad_logprobs"][r][t] for r, t in pad],
                "grad_at_padding_nonzero": {
                    "junk": any(a_["grad_logprobs"][r][t] != 0.0 for r, t in pad),
                    "in_range": any(b_["grad_logprobs"][r][t] != 0.0 for r, t in pad)},
                "grad_at_response_differs": any(
                    a_["grad_logprobs"][r][t] != b_["grad_logprobs"][r][t]
                    for r, row in enumerate(msk) for t, m in enumerate(row) if m),
            })
        variant["padding_sensitivity"] = pairs
    return variant


@dataclasses.dataclass
class Loaded:
    target: fw.Target
    api: types.SimpleNamespace


def verl_target(base: fw.Target) -> fw.Target:
    if base.commit not in VERL_LOSSES_SHA256:
        raise SystemExit(f"verl@{base.commit}: no pinned SHA-256 for {VERL_LOSSES} in {TOOL_PATH}")
    return dataclasses.replace(base, files={**base.files, VERL_LOSSES: VERL_LOSSES_SHA256[base.commit]})


def pin_provenance(loaded: Loaded, role: str) -> dict[str, Any]:
    t, api = loaded.target, loaded.api
    prov: dict[str, Any] = {
        "framework": t.framework, "repo": f"https://github.com/{t.repo}", "commit": t.commit, "label": t.label,
        "tag": t.tag, "role": role,
        "files": [{"path": p, "sha256": s} for p, s in sorted(t.files.items())],
    }
    if t.framework == "verl":
        prov["picked_definitions"] = {
            fw.VERL_CORE: [f"{n} (lines {a}-{b})" for n, (a, b) in api.lines.items()],
            fw.VERL_TF: [f"{n} (lines {a}-{b})" for n, (a, b) in api.tf_lines.items()],
            fw.VERL_BASE: ["BaseConfig.get"],
            fw.VERL_ACTOR: [f"ActorConfig.{f} (default only)" for f in sorted(api.actor_defaults)]
            + [f"PolicyLossConfig.{f} (default only)" for f in sorted(api.policy_defaults)],
            VERL_LOSSES: [f"ppo_loss (lines {api.ppo_loss_lines[0]}-{api.ppo_loss_lines[1]}): only its "
                          f"`if {VERL_ENTROPY_TEST}:` entropy-bonus statement, lines {api.entropy_lines[0]}-"
                          f"{api.entropy_lines[1]}"],
        }
        prov["registered_policy_losses_picked"] = sorted(api.funcs)
        prov["config_fields_read"] = {reg: {"config": a, "config.policy_loss": p} for reg, (a, p) in
                                      sorted(api.reads.items())}
        prov["entropy_block_free_names"] = api.entropy_free
        prov["verl_F_attributes"] = api.verl_f_reads
        prov["defaults"] = {"ActorConfig": jsonable(dict(sorted(api.actor_defaults.items()))),
                            "PolicyLossConfig": jsonable(dict(sorted(api.policy_defaults.items())))}
        prov["stubs"] = VERL_STUBS
    else:
        prov["picked_definitions"] = {
            fw.TRL_TRAINER: [f"GRPOTrainer.{n} (lines {a}-{b})" for n, (a, b) in api.lines.items()],
            fw.TRL_CONFIG: [f"GRPOConfig.{f} (default only)" for f in TRL_CONFIG_FIELDS],
        }
        prov["self_attributes_read"] = api.attrs
        prov["self_args_fields_read"] = api.args_fields
        prov["accelerator_attributes_read"] = api.acc_attrs
        prov["get_per_token_logps_and_entropies_params"] = api.getter_params
        prov["defaults"] = {"GRPOConfig": jsonable(dict(sorted(api.defaults.items())))}
        prov["stubs"] = TRL_STUBS
    return prov


def main() -> None:
    global torch
    started = time.monotonic()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verl-git", default=os.environ.get("VERL_GIT"),
                        help="git directory (bare or work tree) of verl-project/verl (default: $VERL_GIT)")
    parser.add_argument("--trl-git", default=os.environ.get("TRL_GIT"),
                        help="git directory of huggingface/trl (default: $TRL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    git_dirs = {"verl": args.verl_git, "trl": args.trl_git}
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
    for name, env in (("verl", "VERL_GIT"), ("trl", "TRL_GIT")):
        if f"--{name}-git" not in " ".join(sys.argv[1:]):
            command = f"{env}={shlex.quote(git_dirs[name])} {command}"

    loaded: dict[str, Loaded] = {}
    for base in fw.TARGETS:
        if base.framework not in git_dirs:
            continue
        git_dir = fw.git_dir_of(Path(git_dirs[base.framework]).resolve())
        target = verl_target(base) if base.framework == "verl" else base
        sources = fw.read_pinned_sources(git_dir, target)
        api = load_verl(target, sources) if base.framework == "verl" else load_trl(target, sources)
        loaded[base.label] = Loaded(target, api)

    variants: list[dict[str, Any]] = []
    for fwk, make_specs, runner, model in (("verl", verl_specs, verl_run, verl_model),
                                           ("trl", trl_specs, trl_run, trl_model)):
        head = loaded[PRIMARY[fwk]]
        old = loaded[SECONDARY[fwk]]
        for spec in make_specs(head.api):
            others = [old] if (fwk == "trl" or spec["registry"] in old.api.funcs) else []
            v = record_variant(spec, head, others, runner, model)
            if not others:
                v["other_pins"].append({"pin": old.target.label, "commit": old.target.commit,
                                        "result": "absent",
                                        "reason": f"{VERL_FUNCS[spec['registry']]} is not defined at this pin"})
            variants.append(v)

    skipped = [
        {"name": "verl vanilla, cispo (and gspo under its own name in frameworks.py)", "reason":
         "already recorded by frameworks.py (verl@1dda039b.json, verl@74a718a4.json); vanilla is used here only "
         "as the pg term of entropy_bonus:vanilla:*"},
        {"name": "verl gmpo", "reason": "GMPO is registered as 'geo_mean' (recorded as geo_mean*); there is no "
         "'gmpo' registry name"},
        {"name": "verl gspo_token", "reason": "verl's registered 'gspo' IS the GSPO-token form (sg sequence "
         "weight times the token ratio, log clamp max 10); recorded as gspo and gspo:clamp-10"},
        {"name": "verl bypass_mode", "reason": "not a surrogate of its own: it reruns vanilla or the unregistered "
         "compute_policy_loss_reinforce against rollout logprobs with rollout_corr_helper's IS weights and "
         "rejection mask (rollout correction, outside this file)"},
        {"name": "verl compute_entropy_loss", "reason": "takes logits [B, T, V] (verl_F.entropy_from_logits) and "
         "is kept only for backward compatibility; ppo_loss applies the bonus through the entropy block recorded "
         "as entropy_bonus:vanilla:*"},
        {"name": "TRL grpo, bnpo, dr_grpo, dapo (plain)", "reason": "already recorded by frameworks.py "
         "(trl@f2cd5771.json, trl@v1.8.0.json); dapo and grpo appear here only under OPSM, top-entropy and "
         "entropy-bonus variants"},
        {"name": "TRL vespo at importance_sampling_level 'sequence'", "reason": "vespo ignores the ratio branch "
         "(coef_1 unused; GRPOTrainer warns to keep 'token'), so the numbers equal vespo:token"},
        {"name": "TRL experimental gspo_token trainer", "reason": "trl/experimental/gspo_token/grpo_trainer.py is "
         "not part of the pinned grpo_trainer.py; not loaded"},
        {"name": "TRL liger loss (use_liger_kernel)", "reason": "a separate fused kernel path (compute_liger_loss), "
         "which rejects top_entropy_quantile < 1 and the entropy bonus"},
        {"name": "OpenRLHF", "reason": "none of these surrogates exist there (entropy bonus aside, not asked)"},
    ]
    provenance = {
        "tool": TOOL_PATH,
        "command": command,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "dtype": "float64",
        "pins": [pin_provenance(loaded[PRIMARY["verl"]], "head: recorded"),
                 pin_provenance(loaded[SECONDARY["verl"]], "older pin: compared"),
                 pin_provenance(loaded[PRIMARY["trl"]], "head: recorded"),
                 pin_provenance(loaded[SECONDARY["trl"]], "older pin: compared")],
        "loading": fw.LOADING_RULE + (
            f" Here also {VERL_LOSSES} (SHA-256 pinned in surrogates.py): only the `if {VERL_ENTROPY_TEST}:` "
            "statement of ppo_loss that assigns entropy_loss, found with ast, compiled alone with the upstream "
            "file name and line numbers, and executed in a namespace binding exactly its free names."
        ),
        "seed_rule": SEED_RULE,
        "input_rule": INPUT_RULE,
        "junk_rule": JUNK_RULE,
        "grad_rule": GRAD_RULE,
        "json_rule": JSON_RULE,
        "model_rule": MODEL_RULE,
        "edge_margin": EDGE_MARGIN,
        "shapes": [list(s) for s in SHAPES],
        "cases_per_variant": CASES_PER_VARIANT,
        "other_pins_rule": (
            "Every variant is also run, on the same inputs (junk and in-range twin), through the older pin of "
            "its framework wherever the definitions exist there (verl 74a718a4, TRL v1.8.0); other_pins[].result "
            "is 'identical' when loss, gradients, masks and selections (and verl metrics) are bitwise identical "
            "(NaN matches NaN, sign bits compared), 'differs' (then other_pins[].outputs holds that pin's outputs "
            "per case), or 'absent'. TRL metrics are not compared: their definitions changed between the pins."
        ),
    }
    out = Path(args.out)
    fw.write_json(out, {"provenance": provenance, "variants": variants, "skipped": skipped})
    n_cases = sum(len(v["cases"]) for v in variants)
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(variants)} variants, {n_cases} cases, "
          f"{time.monotonic() - started:.1f} s)")
    for v in variants:
        flags = "".join("J" if c["junk_reaches_output"] else "." for c in v["cases"])
        attempts = [c["seed_attempt"] for c in v["cases"]]
        print(f"  {v['framework']}@{v['pin']} {v['name']}: junk reaches [{flags}], attempts {attempts}, "
              f"other pins {[(o['pin'], o['result']) for o in v['other_pins']]}")


if __name__ == "__main__":
    main()
