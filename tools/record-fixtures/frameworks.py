#!/usr/bin/env python3
"""Record numeric fixtures from the real verl / OpenRLHF / TRL loss functions.

This script runs the loss code of three RL frameworks, each at two pinned commits, on
seeded float64 batches. It writes only numbers plus provenance as JSON under
``test/fixtures/frameworks/``. The TypeScript framework models are tested against them.

No framework code is copied into this repository. At record time the recorder reads each
pinned source file out of a local git repository (``git --git-dir=<dir> show
<commit>:<path>``, in memory), checks its SHA-256 against the constants below, parses it
with ``ast``, picks the needed top-level definitions (or one method of a class), and
``exec``s exactly those nodes in a namespace that holds real ``torch`` plus small,
documented stand-ins for the framework imports they reference (a config class, a
decorator, metric helpers, a fake trainer ``self``). Before ``exec`` it checks that every
global name the picked definitions read is either a builtin, another picked definition or
a listed stand-in.

Usage (see tools/record-fixtures/README.md for the full reproduction recipe):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/frameworks.py \
        --verl-git /path/to/verl.git --openrlhf-git /path/to/OpenRLHF.git \
        --trl-git /path/to/trl.git

Output files (JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs):

    verl@74a718a4.json  verl@1dda039b.json
    openrlhf@bc71bb19.json  openrlhf@3c3be623.json
    trl@v1.8.0.json  trl@f2cd5771.json
"""

from __future__ import annotations

import argparse
import ast
import builtins
import dataclasses
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
import types
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Optional, Tuple

TOOL_PATH = "tools/record-fixtures/frameworks.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "test" / "fixtures" / "frameworks"

# --------------------------------------------------------------------------------------
# Pinned upstream identity
# --------------------------------------------------------------------------------------

VERL_CORE = "verl/trainer/ppo/core_algos.py"
VERL_TF = "verl/utils/torch_functional.py"
VERL_ACTOR = "verl/workers/config/actor.py"
VERL_BASE = "verl/base_config.py"
ORL_LOSS = "openrlhf/models/loss.py"
ORL_UTILS = "openrlhf/models/utils.py"
TRL_TRAINER = "trl/trainer/grpo_trainer.py"
TRL_CONFIG = "trl/trainer/grpo_config.py"


@dataclasses.dataclass(frozen=True)
class Target:
    framework: str  # "verl" | "openrlhf" | "trl"
    repo: str
    commit: str
    label: str
    tag: Optional[str]
    role: str  # "polgrad pin" | "head"
    files: dict  # path -> sha256 (the whole file at `commit`)


TARGETS = (
    Target("verl", "verl-project/verl", "74a718a492092312f1004fe25369975137388849", "74a718a4",
           None, "polgrad pin", {
               VERL_CORE: "9114f9e16c87e4c9ebf2fa016baf733c9bbc819766b53c8968aaa9e8abcd7916",
               VERL_TF: "cb37d045dec2161d637e2633032cc97c97334e5547cea62dace42630c9683259",
               VERL_ACTOR: "0b789b145b9537f463e5a9d2a647ea186ce99a9ecc8bceac1e44e9cf6d6c704b",
               VERL_BASE: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
           }),
    Target("verl", "verl-project/verl", "1dda039b9c6311889a9c9a26040677e1254814f9", "1dda039b",
           None, "head", {
               VERL_CORE: "0ec87b90cba24fa0aa959adff573efb2cc49434d705621cf546be231e56a8932",
               VERL_TF: "9855e101c19b64c90d1f07bf47ce3e628751afe979b40d2b863ae6d16aa4cee1",
               VERL_ACTOR: "c2d9b63c54b4afb0826bdc434a8681f152e3e9a3147fac900172b1da0077b377",
               VERL_BASE: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
           }),
    Target("openrlhf", "OpenRLHF/OpenRLHF", "bc71bb19464aca306b33080b2d2bb45d154e2f49", "bc71bb19",
           None, "polgrad pin", {
               ORL_LOSS: "d1dea3b37cb4c647a1a4b2472fbaefb025ac7ffb50688408d33af4c66a957551",
               ORL_UTILS: "afea248aa7bb2fb09d3eebce9d582cb98a8f904425ba1698c2ee38ca46e8dcb1",
           }),
    Target("openrlhf", "OpenRLHF/OpenRLHF", "3c3be6234e0cb353e76bb8019947db9dfe99fca7", "3c3be623",
           None, "head", {
               ORL_LOSS: "21e97ce9a023663ac12f67df165e3d8cccb3ffc358c4765b5daf6fc02bd941a1",
               ORL_UTILS: "afea248aa7bb2fb09d3eebce9d582cb98a8f904425ba1698c2ee38ca46e8dcb1",
           }),
    Target("trl", "huggingface/trl", "95809b942eb5d11d0b06d749510d88be99230b73", "v1.8.0",
           "v1.8.0", "polgrad pin", {
               TRL_TRAINER: "52d9a6c1e298df35d0da4a6fa17874d750ee627f6ac15393c8860d74d1ba4917",
               TRL_CONFIG: "5886f05d8c2df8d9c39a8a7e3e7f2c10c1548733d224005430957354b954f8a1",
           }),
    Target("trl", "huggingface/trl", "f2cd57710ae345ea6428ae95363267fcf38a3dc8", "f2cd5771",
           None, "head", {
               TRL_TRAINER: "655d9ad98549290fd32381174bfca5cab9f849b839966edc9a4d3abe67dd97bc",
               TRL_CONFIG: "1798ed3b68df8b774aec133183703599af073eb7b37e6fc2076878a8f6f7ae29",
           }),
)

# --------------------------------------------------------------------------------------
# Recording rules (also written into every provenance block)
# --------------------------------------------------------------------------------------

SHAPES = ((4, 8), (3, 5), (2, 12), (5, 7))
CASES_PER_VARIANT = 4
LP_RANGE = (-8.0, -0.05)
OLD_GAP = (-2.0, 2.0)
OLD_GAP_WIDE = (-3.0, 2.0)
REF_GAP = (-1.5, 1.5)
ADV_RANGE = (-3.0, 3.0)
DUAL_CLIP_C = 3.0
KINK_MARGIN = 1e-9
MAX_WIDEN = 1000

SEED_RULE = (
    "seed = zlib.crc32(f'{framework}@{label}:{variant}:{i}'.encode()) & 0x7FFFFFFF for case "
    "i = 0..3 of a variant (framework is 'verl', 'openrlhf' or 'trl'; label is the file's "
    "label); every draw comes from torch.Generator().manual_seed(seed) on CPU in float64. "
    "The TS side cannot replay torch's RNG: seeds are provenance only, every input is "
    "embedded in the file."
)
INPUT_RULE = (
    "Case i has shape [B, T] = [(4, 8), (3, 5), (2, 12), (5, 7)][i % 4]. Draw order from "
    "the generator: row lengths L_b = randint(1..T) for each row; if every row has L_b = T, "
    "row r = randint(0..B-1) gets L_r = randint(1..T-1) (so at least one row is shorter "
    "than T); response_mask[b, t] = t < L_b (right-padded). Then logprobs ~ U[-8, -0.05] "
    "[B, T]; old_logprobs = logprobs + U[-2, 2]; ref_logprobs = logprobs + U[-1.5, 1.5]; "
    "advantages ~ U[-3, 3], [B, T] for verl and OpenRLHF and [B] for TRL. Uniforms are "
    "low + (high - low) * torch.rand(shape, generator=gen, dtype=float64). Padding "
    "positions hold in-range values drawn exactly like response positions (the frameworks "
    "multiply by the mask, so non-finite junk would poison them). Dual-clip variants (verl "
    "'vanilla:*', OpenRLHF 'ppo:token:dual-clip-3'): while no response token has ratio "
    "exp(clamp(lp - old, -20, 20)) > 3 with A < 0, old_logprobs = logprobs + U[-3, 2] and "
    "then advantages ~ U[-3, 3] are redrawn from the same generator (inputs hold the final "
    "draw; the case's old_logprobs_redraws counts the redraws, absent when 0). Every case "
    "is asserted to keep token ratios and sequence ratios (exp of the masked row mean of "
    "lp - old) more than 1e-9 away from 0.8, 1.2, 3.0 and 5.0, and |lp - ref| > 1e-9 on "
    "response tokens. ref_logprobs is included in inputs only for variants that read it; "
    "no variant enables rollout/vLLM importance-sampling correction, so no "
    "rollout_logprobs are drawn."
)
GRAD_RULE = (
    "logprobs is a float64 leaf with requires_grad=True (a fresh clone per variant call); "
    "grad_logprobs = torch.autograd.grad(loss, logprobs)[0], [B, T], exactly as produced "
    "(zeros at padding, possibly -0.0). old/ref logprobs and advantages are plain float64 "
    "tensors without grad."
)
JSON_RULE = (
    "JSON indent=1 with sorted keys; floats are Python repr (shortest round-trip float64); "
    "masks are booleans in the file (the dtype actually passed to the framework is recorded "
    "per variant as settings.response_mask_dtype); all outputs are finite (asserted)."
)

torch: Any = None  # populated in main()


# --------------------------------------------------------------------------------------
# Reading pinned sources from git
# --------------------------------------------------------------------------------------


def git_dir_of(path: Path) -> Path:
    """Accept a bare repository or a work tree (whose .git directory is then used)."""
    return path / ".git" if (path / ".git").is_dir() else path


def git(git_dir: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {git_dir}: {proc.stderr.decode().strip()}")
    return proc.stdout


def read_pinned_sources(git_dir: Path, target: Target) -> dict[str, str]:
    """Return {path: text} for every pinned file, after checking commit, tag and SHA-256."""
    probe = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{target.commit}^{{commit}}"],
                           capture_output=True)
    if probe.returncode != 0:
        raise SystemExit(f"{target.repo}: commit {target.commit} is not in {git_dir}")
    if target.tag is not None:
        tagged = git(git_dir, "rev-parse", "--verify", "--quiet", f"{target.tag}^{{commit}}").decode().strip()
        if tagged != target.commit:
            raise SystemExit(f"{target.repo}: tag {target.tag} is {tagged}, expected {target.commit}")
    out: dict[str, str] = {}
    for path, expected in sorted(target.files.items()):
        data = git(git_dir, "show", f"{target.commit}:{path}")
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise SystemExit(f"{target.repo}@{target.commit}:{path}: sha256 {actual}, expected {expected}")
        out[path] = data.decode("utf-8")
    return out


# --------------------------------------------------------------------------------------
# Picking definitions out of a parsed file and executing only those
# --------------------------------------------------------------------------------------


def node_name(node: ast.stmt) -> Optional[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def pick_top_level(tree: ast.Module, names: list[str], where: str) -> list[ast.stmt]:
    """The top-level statements defining ``names`` (each exactly once), in source order."""
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        name = node_name(node)
        if name in names:
            if name in found:
                raise SystemExit(f"{where}: {name} is defined more than once at top level")
            found[name] = node
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"{where}: definitions not found: {missing}")
    return sorted(found.values(), key=lambda n: n.lineno)


def pick_method(tree: ast.Module, class_name: str, method: str, where: str) -> ast.FunctionDef:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    if len(classes) != 1:
        raise SystemExit(f"{where}: expected one class {class_name}, found {len(classes)}")
    defs = [n for n in classes[0].body if isinstance(n, ast.FunctionDef) and n.name == method]
    if len(defs) != 1:
        raise SystemExit(f"{where}: expected one {class_name}.{method}, found {len(defs)}")
    return defs[0]


def pick_class(tree: ast.Module, class_name: str, where: str) -> ast.ClassDef:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    if len(classes) != 1:
        raise SystemExit(f"{where}: expected one class {class_name}, found {len(classes)}")
    return classes[0]


def free_globals(nodes: list[ast.stmt]) -> set[str]:
    """Names read by ``nodes`` that nothing inside them binds and that are not builtins."""
    loaded: set[str] = set()
    bound: set[str] = set()
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.Name):
                (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
    return {name for name in loaded - bound if not hasattr(builtins, name)}


def exec_nodes(nodes: list[ast.stmt], namespace: dict[str, Any], filename: str) -> None:
    """Check the free names of ``nodes`` against ``namespace``, then execute them in it."""
    missing = sorted(free_globals(nodes) - set(namespace))
    if missing:
        raise SystemExit(f"{filename}: picked definitions read names with no binding: {missing}")
    code = compile(ast.Module(body=list(nodes), type_ignores=[]), filename, "exec")
    exec(code, namespace)  # noqa: S102 - the point of this tool: run pinned, hash-checked upstream code


def dataclass_defaults(tree: ast.Module, class_name: str, fields: list[str], where: str) -> dict[str, Any]:
    """Literal defaults of dataclass ``fields`` (``x: T = lit`` or ``field(default=lit)``)."""
    cls = pick_class(tree, class_name, where)
    out: dict[str, Any] = {}
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        name = node.target.id
        if name not in fields:
            continue
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "field":
            kw = {k.arg: k.value for k in value.keywords}
            if "default" in kw:
                out[name] = ast.literal_eval(kw["default"])
            elif isinstance(kw.get("default_factory"), ast.Name) and kw["default_factory"].id == "dict":
                out[name] = {}
            else:
                raise SystemExit(f"{where}: cannot read the default of {class_name}.{name}")
        else:
            out[name] = ast.literal_eval(value)
    missing = [f for f in fields if f not in out]
    if missing:
        raise SystemExit(f"{where}: {class_name} has no literal default for {missing}")
    return out


def parse(sources: dict[str, str], target: Target, path: str) -> tuple[ast.Module, str]:
    filename = f"{target.repo}@{target.commit[:8]}/{path}"
    return ast.parse(sources[path], filename=filename), filename


# --------------------------------------------------------------------------------------
# verl
# --------------------------------------------------------------------------------------

VERL_PICKED = [
    "PolicyLossFn", "POLICY_LOSS_REGISTRY", "register_policy_loss", "get_policy_loss_fn", "agg_loss",
    "compute_policy_loss", "compute_policy_loss_vanilla", "compute_policy_loss_gspo",
    "compute_policy_loss_cispo", "kl_penalty", "kl_penalty_forward",
]
VERL_TF_PICKED = ["masked_sum", "masked_mean", "clip_by_value"]
VERL_ACTOR_FIELDS = ["clip_ratio", "clip_ratio_low", "clip_ratio_high", "clip_ratio_c", "loss_agg_mode",
                     "loss_scale_factor", "global_batch_info"]
VERL_STUBS = (
    "verl.utils.torch_functional is a plain module object holding only masked_sum, masked_mean "
    "and clip_by_value, picked from the pinned torch_functional.py (its flash-attn / NPU / "
    "transformers / tensordict imports are never executed). ActorConfig is a stand-in class "
    "whose instance carries the ActorConfig dataclass defaults of clip_ratio, clip_ratio_low, "
    "clip_ratio_high, clip_ratio_c, loss_agg_mode, loss_scale_factor and global_batch_info, "
    "read with ast from the pinned verl/workers/config/actor.py (no __post_init__ validation, "
    "no other fields), and whose get() is BaseConfig.get picked from the pinned "
    "verl/base_config.py. AlgoConfig and omegaconf.DictConfig are empty stand-in classes "
    "(only used in isinstance checks and annotations). verl.utils.import_utils.deprecated is "
    "replaced by an identity decorator (upstream it only adds a FutureWarning). "
    "POLICY_LOSS_REGISTRY therefore holds only the picked registered losses (vanilla, gspo, "
    "cispo). Nothing else of verl is imported."
)


class VerlAlgoConfigStub:
    """Stand-in for verl.trainer.config.AlgoConfig (isinstance checks only)."""


class OmegaconfDictConfigStub:
    """Stand-in for omegaconf.DictConfig (annotations only)."""


def identity_deprecated(replacement: str = "") -> Callable[[Any], Any]:
    """Stand-in for verl.utils.import_utils.deprecated without the FutureWarning."""
    del replacement
    return lambda obj: obj


def load_verl(target: Target, sources: dict[str, str]) -> types.SimpleNamespace:
    tf_tree, tf_name = parse(sources, target, VERL_TF)
    verl_f = types.ModuleType("verl.utils.torch_functional")
    tf_ns: dict[str, Any] = {"__name__": verl_f.__name__, "torch": torch}
    exec_nodes(pick_top_level(tf_tree, VERL_TF_PICKED, tf_name), tf_ns, tf_name)
    for name in VERL_TF_PICKED:
        setattr(verl_f, name, tf_ns[name])

    base_tree, base_name = parse(sources, target, VERL_BASE)
    base_ns: dict[str, Any] = {"__name__": "verl.base_config", "Any": Any}
    exec_nodes([pick_method(base_tree, "BaseConfig", "get", base_name)], base_ns, base_name)

    actor_tree, actor_name = parse(sources, target, VERL_ACTOR)
    defaults = dataclass_defaults(actor_tree, "ActorConfig", VERL_ACTOR_FIELDS, actor_name)

    class ActorConfig:  # noqa: D401 - stand-in named like the upstream class for isinstance
        """Stand-in for verl.workers.config.ActorConfig carrying its dataclass defaults."""

        get = base_ns["get"]

        def __init__(self, **fields: Any) -> None:
            self.__dict__.update(fields)

    core_tree, core_name = parse(sources, target, VERL_CORE)
    ns: dict[str, Any] = {
        "__name__": "verl.trainer.ppo.core_algos",
        "torch": torch,
        "verl_F": verl_f,
        "Optional": Optional,
        "Any": Any,
        "Callable": Callable,
        "ActorConfig": ActorConfig,
        "AlgoConfig": VerlAlgoConfigStub,
        "DictConfig": OmegaconfDictConfigStub,
        "deprecated": identity_deprecated,
    }
    exec_nodes(pick_top_level(core_tree, VERL_PICKED, core_name), ns, core_name)
    return types.SimpleNamespace(ns=ns, ActorConfig=ActorConfig, defaults=defaults)


def verl_config(api: types.SimpleNamespace) -> Any:
    return api.ActorConfig(**{k: (dict(v) if isinstance(v, dict) else v) for k, v in api.defaults.items()})


def verl_variants(target: Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    ns = api.ns
    modes = ["token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm", "seq-mean-token-mean"]
    if target.role == "head":
        modes.append("token-sum")
    config_json = dict(sorted(api.defaults.items()))
    mask_note = (
        "response_mask is passed as torch.bool, as verl's engine loss (verl/workers/utils/losses.py "
        "ppo_loss: data['response_mask'].to(bool)) does."
    )
    variants: list[dict[str, Any]] = []

    def policy_call(loss_name: str, mode: str) -> Callable[[dict[str, Any]], Any]:
        def run(b: dict[str, Any]) -> Any:
            fn = ns["get_policy_loss_fn"](loss_name)
            loss, _metrics = fn(old_log_prob=b["old"], log_prob=b["lp"], advantages=b["adv"],
                                response_mask=b["mask"], loss_agg_mode=mode, config=verl_config(api),
                                rollout_is_weights=None)
            return loss
        return run

    def legacy_call(mode: str) -> Callable[[dict[str, Any]], Any]:
        def run(b: dict[str, Any]) -> Any:
            d = api.defaults
            return ns["compute_policy_loss"](
                b["old"], b["lp"], b["adv"], b["mask"], cliprange=d["clip_ratio"],
                cliprange_low=d["clip_ratio_low"], cliprange_high=d["clip_ratio_high"],
                clip_ratio_c=d["clip_ratio_c"], loss_agg_mode=mode)[0]
        return run

    agg_text = {
        "token-mean": "masked sum / (mask sum); no epsilon",
        "seq-mean-token-sum": "row sums, summed over rows with L_b > 0, / (number of such rows)",
        "seq-mean-token-sum-norm": "seq-mean-token-sum / loss_scale_factor; loss_scale_factor unset "
                                   "so it is loss_mask.shape[-1] = T, the padded width",
        "seq-mean-token-mean": "row sum / (L_b + 1e-8), summed over rows with L_b > 0, / their count. "
                               "With the bool mask L_b is int64 and L_b + 1e-8 becomes a float32 "
                               "tensor equal to L_b exactly, so the 1e-8 has no effect on these numbers "
                               "(it only shows with a float64 mask)",
        "token-sum": "masked sum * dp_size (dp_size 1); no normalizer (new since the polgrad pin)",
    }
    for mode in modes:
        variants.append({
            "name": f"vanilla:{mode}",
            "description": (
                "verl PPO clip with always-on dual clip: compute_policy_loss_vanilla via "
                "get_policy_loss_fn('vanilla'), ActorConfig defaults (clip 0.2/0.2, clip_ratio_c 3.0), "
                f"global_batch_info {{}}; agg_loss '{mode}': {agg_text[mode]}. Log-ratio clamped to "
                f"+-20 before exp. {mask_note}"
            ),
            "settings": {
                "function": "verl.trainer.ppo.core_algos.compute_policy_loss_vanilla",
                "called_via": "get_policy_loss_fn('vanilla')",
                "loss_agg_mode": mode,
                "config": config_json,
                "rollout_is_weights": None,
                "response_mask_dtype": "torch.bool",
            },
            "run": policy_call("vanilla", mode),
            "cross_check": legacy_call(mode),
            "dual_clip": True,
            "uses_ref": False,
        })
    variants.append({
        "name": "gspo",
        "description": (
            "verl compute_policy_loss_gspo via get_policy_loss_fn('gspo'), called with "
            "loss_agg_mode='token-mean', which it ignores: it always aggregates 'seq-mean-token-mean'. "
            "GSPO-token ratio exp(min(lp - sg[lp] + sg[masked row mean of (lp - old)], 10)) (value = "
            "sequence ratio, token-local gradient), loss max(-A*s, -A*clip(s, 0.8, 1.2)), no dual clip. "
            f"{mask_note} (so the seq-mean-token-mean 1e-8 has no effect, see vanilla:seq-mean-token-mean)."
        ),
        "settings": {
            "function": "verl.trainer.ppo.core_algos.compute_policy_loss_gspo",
            "called_via": "get_policy_loss_fn('gspo')",
            "loss_agg_mode": "token-mean",
            "loss_agg_mode_effective": "seq-mean-token-mean (hard-coded upstream)",
            "config": config_json,
            "rollout_is_weights": None,
            "response_mask_dtype": "torch.bool",
        },
        "run": policy_call("gspo", "token-mean"),
        "dual_clip": False,
        "uses_ref": False,
    })
    variants.append({
        "name": "cispo",
        "description": (
            "verl compute_policy_loss_cispo via get_policy_loss_fn('cispo'), loss_agg_mode='token-mean': "
            "per token -sg[clamp(exp(clamp(lp - old, +-20)), 0.8, 1.2)] * A * lp (two-sided clip), "
            f"agg_loss token-mean. {mask_note}"
        ),
        "settings": {
            "function": "verl.trainer.ppo.core_algos.compute_policy_loss_cispo",
            "called_via": "get_policy_loss_fn('cispo')",
            "loss_agg_mode": "token-mean",
            "config": config_json,
            "rollout_is_weights": None,
            "response_mask_dtype": "torch.bool",
        },
        "run": policy_call("cispo", "token-mean"),
        "dual_clip": False,
        "uses_ref": False,
    })
    kl_kinds = (
        ("k1", "k1", "kl", "lp - ref"),
        ("k2", "k2", "mse", "0.5 * (lp - ref)^2"),
        ("k3", "k3", "low_var_kl", "x = clamp(ref - lp, +-20); clamp(exp(x) - x - 1, -10, 10)"),
        ("abs", "abs", None, "|lp - ref|"),
        ("k3+", "k3+", "low_var_kl+", "straight-through: value of k3 (low_var_kl), gradient of "
                                      "0.5 * (lp - ref)^2"),
    )
    for label, kind, alias, formula in kl_kinds:
        def run(b: dict[str, Any], kind: str = kind) -> Any:
            kld = ns["kl_penalty"](logprob=b["lp"], ref_logprob=b["ref"], kl_penalty=kind)
            return ns["agg_loss"](loss_mat=kld, loss_mask=b["mask"], loss_agg_mode="token-mean")

        def alias_run(b: dict[str, Any], alias: Optional[str] = alias) -> Any:
            kld = ns["kl_penalty"](logprob=b["lp"], ref_logprob=b["ref"], kl_penalty=alias)
            return ns["agg_loss"](loss_mat=kld, loss_mask=b["mask"], loss_agg_mode="token-mean")

        variants.append({
            "name": f"kl:{label}",
            "description": (
                f"verl KL loss: agg_loss(kl_penalty(logprob, ref_logprob, '{kind}'), response_mask, "
                f"'token-mean') (the use_kl_loss term of ppo_loss, coefficient not applied). "
                f"kl_penalty '{kind}' = {formula}. old_logprobs and advantages are not read. {mask_note}"
            ),
            "settings": {
                "functions": ["verl.trainer.ppo.core_algos.kl_penalty",
                              "verl.trainer.ppo.core_algos.agg_loss"],
                "kl_penalty": kind,
                "kl_penalty_alias_checked_identical": alias,
                "loss_agg_mode": "token-mean",
                "global_batch_info": {},
                "response_mask_dtype": "torch.bool",
            },
            "run": run,
            "cross_check": alias_run if alias else None,
            "dual_clip": False,
            "uses_ref": True,
        })
    return variants


def verl_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "functions": [
            "verl.trainer.ppo.core_algos.get_policy_loss_fn",
            "verl.trainer.ppo.core_algos.compute_policy_loss_vanilla",
            "verl.trainer.ppo.core_algos.compute_policy_loss_gspo",
            "verl.trainer.ppo.core_algos.compute_policy_loss_cispo",
            "verl.trainer.ppo.core_algos.agg_loss",
            "verl.trainer.ppo.core_algos.kl_penalty",
            "verl.trainer.ppo.core_algos.kl_penalty_forward",
            "verl.utils.torch_functional.masked_sum",
            "verl.utils.torch_functional.masked_mean",
        ],
        "cross_checks": (
            "Not recorded, asserted bitwise: the deprecated compute_policy_loss(cliprange 0.2, "
            "cliprange_low 0.2, cliprange_high 0.2, clip_ratio_c 3.0) gives the same loss and "
            "gradient as compute_policy_loss_vanilla for every vanilla variant; kl_penalty aliases "
            "'kl', 'mse', 'low_var_kl', 'low_var_kl+' give the same loss and gradient as 'k1', 'k2', "
            "'k3', 'k3+'."
        ),
        "picked_definitions": {VERL_CORE: VERL_PICKED, VERL_TF: VERL_TF_PICKED,
                               VERL_BASE: ["BaseConfig.get"],
                               VERL_ACTOR: [f"ActorConfig.{f} (default only)" for f in VERL_ACTOR_FIELDS]},
        "stubs": VERL_STUBS,
        "settings": {
            "actor_config_defaults": dict(sorted(api.defaults.items())),
            "global_batch_info": "{} (the ActorConfig default): dp_size 1, batch_num_tokens / "
                                 "global_batch_size / loss_scale_factor None, so agg_loss uses the "
                                 "local batch statistics",
            "response_mask_dtype": "torch.bool",
        },
    }


# --------------------------------------------------------------------------------------
# OpenRLHF
# --------------------------------------------------------------------------------------

ORL_LOSS_PICKED = ["aggregate_loss", "PolicyLoss"]
ORL_UTILS_PICKED = ["compute_approx_kl", "masked_mean"]
ORL_STUBS = (
    "None beyond the namespace: aggregate_loss and PolicyLoss are picked from the pinned "
    "openrlhf/models/loss.py; its relative import 'from .utils import masked_mean' is satisfied "
    "by masked_mean picked from the pinned openrlhf/models/utils.py, together with "
    "compute_approx_kl. The namespace holds real torch, torch.nn, torch.nn.functional, "
    "torch.distributed and typing.Optional/Tuple. utils.py's 'import deepspeed' and its "
    "@torch.compile'd compute_entropy are never executed."
)


def load_openrlhf(target: Target, sources: dict[str, str]) -> types.SimpleNamespace:
    utils_tree, utils_name = parse(sources, target, ORL_UTILS)
    utils_ns: dict[str, Any] = {"__name__": "openrlhf.models.utils", "torch": torch, "Optional": Optional}
    exec_nodes(pick_top_level(utils_tree, ORL_UTILS_PICKED, utils_name), utils_ns, utils_name)
    loss_tree, loss_name = parse(sources, target, ORL_LOSS)
    import torch.distributed as dist  # noqa: PLC0415
    import torch.nn as nn  # noqa: PLC0415
    import torch.nn.functional as F  # noqa: PLC0415, N812
    ns: dict[str, Any] = {
        "__name__": "openrlhf.models.loss",
        "torch": torch, "nn": nn, "F": F, "dist": dist, "Optional": Optional, "Tuple": Tuple,
        "masked_mean": utils_ns["masked_mean"],
    }
    exec_nodes(pick_top_level(loss_tree, ORL_LOSS_PICKED, loss_name), ns, loss_name)
    ns["compute_approx_kl"] = utils_ns["compute_approx_kl"]
    import inspect  # noqa: PLC0415
    sig = str(inspect.signature(ns["compute_approx_kl"]))
    return types.SimpleNamespace(ns=ns, kl_signature=sig)


def openrlhf_variants(target: Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    ns = api.ns
    mask_note = ("action_mask is passed as torch.long, the dtype OpenRLHF's samples_generator builds it "
                 "with.")
    variants: list[dict[str, Any]] = []

    def policy(kwargs: dict[str, Any]) -> Callable[[dict[str, Any]], Any]:
        def run(b: dict[str, Any]) -> Any:
            fn = ns["PolicyLoss"](**kwargs)
            loss, _clip_ratio, _ppo_kl, _vllm_kl = fn(b["lp"], b["old"], b["adv"], action_mask=b["mask"],
                                                      rollout_log_probs=None)
            return loss
        return run

    ctor_defaults = {"clip_eps_low": 0.2, "clip_eps_high": 0.2, "dual_clip": None, "token_level_loss": True,
                     "policy_loss_type": "ppo", "enable_vllm_is_correction": False,
                     "vllm_is_truncated_threshold": None, "vllm_is_correction_type": "tis"}
    specs = (
        ("ppo:token", {"token_level_loss": True}, False,
         "PPO clip -min(r*A, clamp(r, 0.8, 1.2)*A) with r = exp(clamp(lp - old, +-20)), no dual "
         "clip; aggregate_loss token level without global info = masked_mean: sum(x*m)/sum(m)."),
        ("ppo:sample", {"token_level_loss": False}, False,
         "PPO clip as ppo:token; aggregate_loss sample level without global info: row sum / "
         "(L_b + 1e-8), then masked_mean over rows with L_b > 0. With the long mask L_b is int64 "
         "and L_b + 1e-8 becomes a float32 tensor equal to L_b exactly, so the 1e-8 has no "
         "effect on these numbers (it only shows with a float64 mask)."),
        ("ppo:token:dual-clip-3", {"token_level_loss": True, "dual_clip": 3.0}, True,
         "PPO clip with dual clip 3.0: for A < 0 the loss is -max(min(r*A, clamp(r)*A), 3*A); "
         "token-level masked mean."),
        ("gspo", {"policy_loss_type": "gspo"}, False,
         "GSPO: ratio = exp(masked row mean of (lp - old), denominator clamp(L_b, min=1)) * mask "
         "(true sequence ratio, gradient through the mean, no clamp), -min(s*A, clamp(s, 0.8, "
         "1.2)*A); policy_loss_type 'gspo' forces token_level_loss False (sample level, see "
         "ppo:sample)."),
    )
    for name, overrides, dual, text in specs:
        kwargs = dict(ctor_defaults)
        kwargs.update(overrides)
        variants.append({
            "name": name,
            "description": f"OpenRLHF PolicyLoss(**settings.constructor)(log_probs, old_log_probs, "
                           f"advantages, action_mask=mask, rollout_log_probs=None) with dp_size 1 and "
                           f"no batch_num_tokens / global_batch_size. {text} {mask_note}",
            "settings": {
                "function": "openrlhf.models.loss.PolicyLoss.forward",
                "constructor": dict(sorted(kwargs.items())),
                "forward": {"dp_size": 1, "batch_num_tokens": None, "global_batch_size": None,
                            "rollout_log_probs": None},
                "response_mask_dtype": "torch.long",
            },
            "run": policy(overrides),
            "dual_clip": dual,
            "uses_ref": False,
        })
    formulas = {"k1": "lp - ref", "k2": "(lp - ref)^2 / 2", "k3": "exp(-(lp - ref)) - 1 + (lp - ref)"}
    for est in ("k1", "k2", "k3"):
        def run(b: dict[str, Any], est: str = est) -> Any:
            kl = ns["compute_approx_kl"](b["lp"], b["ref"], kl_estimator=est)
            return ns["aggregate_loss"](kl, b["mask"])

        variants.append({
            "name": f"kl:{est}",
            "description": (
                f"OpenRLHF KL loss (the --algo.kl.use_loss term of ppo_actor, coefficient not applied): "
                f"aggregate_loss(compute_approx_kl(log_probs, base_log_probs, kl_estimator='{est}'), "
                f"action_mask) with the default token_level_loss=True and no global info = masked_mean. "
                f"{est} = {formulas[est]}, clamped to [-10, 10]. compute_approx_kl casts both inputs "
                f"to float32, so the KL, the loss and the gradient are float32 values (stored exactly "
                f"as float64): a model must round like float32 to match bit for bit. old_logprobs and "
                f"advantages are not read. {mask_note}"
            ),
            "settings": {
                "functions": ["openrlhf.models.utils.compute_approx_kl", "openrlhf.models.loss.aggregate_loss"],
                "compute_approx_kl_signature": api.kl_signature,
                "kl_estimator": est,
                "token_level_loss": True,
                "computation_dtype": "float32 (upstream .float() casts)",
                "response_mask_dtype": "torch.long",
            },
            "run": run,
            "dual_clip": False,
            "uses_ref": True,
        })
    return variants


def openrlhf_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "functions": [
            "openrlhf.models.loss.PolicyLoss.__init__",
            "openrlhf.models.loss.PolicyLoss.forward",
            "openrlhf.models.loss.aggregate_loss",
            "openrlhf.models.utils.masked_mean",
            "openrlhf.models.utils.compute_approx_kl",
        ],
        "picked_definitions": {ORL_LOSS: ORL_LOSS_PICKED, ORL_UTILS: ORL_UTILS_PICKED},
        "stubs": ORL_STUBS,
        "settings": {
            "policy_loss_constructor_defaults": {"clip_eps_low": 0.2, "clip_eps_high": 0.2, "dual_clip": None,
                                                 "token_level_loss": True, "policy_loss_type": "ppo",
                                                 "enable_vllm_is_correction": False},
            "loss_batch_info": "not passed (dp_size 1, batch_num_tokens None, global_batch_size None): "
                               "the local masked-mean fallbacks",
            "compute_approx_kl_signature": api.kl_signature,
            "response_mask_dtype": "torch.long",
        },
    }


# --------------------------------------------------------------------------------------
# TRL
# --------------------------------------------------------------------------------------

TRL_CONFIG_FIELDS = [
    "epsilon", "epsilon_high", "delta", "beta", "loss_type", "importance_sampling_level",
    "sapo_temperature_pos", "sapo_temperature_neg", "use_bias_correction_kl", "top_entropy_quantile",
    "off_policy_mask_threshold", "use_vllm", "vllm_importance_sampling_correction", "entropy_coef",
    "use_adaptive_entropy", "max_completion_length", "mask_truncated_completions",
]
TRL_STUBS = (
    "GRPOTrainer._compute_loss is picked out of the pinned grpo_trainer.py and called as a plain "
    "function with a fake `self` (class FakeGRPOTrainer in this recorder). The fake carries: "
    "args = a namespace of the GRPOConfig dataclass defaults read with ast from the pinned "
    "grpo_config.py (fields: " + ", ".join(TRL_CONFIG_FIELDS) + "), with the variant's overrides; "
    "the attributes GRPOTrainer.__init__ derives from them (loss_type, importance_sampling_level, "
    "epsilon_low = epsilon, epsilon_high = epsilon_high if set else epsilon, beta, "
    "max_completion_length, use_vllm, vllm_importance_sampling_correction, top_entropy_quantile, "
    "off_policy_mask_threshold, _entropy_bonus_enabled = entropy_coef != 0 or adaptive = False, "
    "aux_loss_enabled = False since the stub model is not MoE); current_gradient_accumulation_steps "
    "= 1; _metrics = {'train': defaultdict(list), 'eval': defaultdict(list)} (a sink); model = an "
    "object with training = True (mode 'train'); accelerator with num_processes = 1 and identity "
    "gather / gather_for_metrics / reduce(sum) (one process); and "
    "_get_per_token_logps_and_entropies returning (our logprobs leaf, zeros entropies [B, T] "
    "without grad, None aux loss) -- entropies must be a tensor because the entropy metric reads "
    "it, and they reach the loss only through the entropy bonus / top-entropy mask, both off. The "
    "stub checks that every keyword the call passes is a parameter of the pinned "
    "_get_per_token_logps_and_entropies. The module-level metric helpers nanmin/nanmax (from "
    "trl.trainer.utils) are replaced by equivalent NaN-ignoring min/max that only feed _metrics. "
    "inputs = {prompt_ids: zeros [B, 1] long, prompt_mask: ones [B, 1] long, completion_ids: zeros "
    "[B, T] long, completion_mask: the mask as torch.long, advantages: [B], old_per_token_logps, "
    "ref_per_token_logps (only when beta != 0), num_items_in_batch: completion_mask.sum() (an int64 "
    "0-dim tensor, as _generate_and_score_completions produces)}. No tool_mask, no vLLM "
    "importance_sampling_ratio, no multimodal keys."
)


def trl_nan_reduce(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def reduce(tensor: Any) -> Any:
        keep = tensor[~torch.isnan(tensor)]
        if keep.numel() == 0:
            return torch.tensor(float("nan"), dtype=tensor.dtype)
        return fn(keep)
    return reduce


class FakeAccelerator:
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


class FakeModel:
    training = True


class FakeGRPOTrainer:
    """The `self` that GRPOTrainer._compute_loss reads, for one micro-batch on one process."""

    def __init__(self, args: types.SimpleNamespace, logps: Any, real_params: set[str]) -> None:
        self.args = args
        self.loss_type = args.loss_type
        self.importance_sampling_level = args.importance_sampling_level
        self.epsilon_low = args.epsilon
        self.epsilon_high = args.epsilon_high if args.epsilon_high is not None else args.epsilon
        self.beta = args.beta
        self.max_completion_length = args.max_completion_length
        self.use_vllm = args.use_vllm
        self.vllm_importance_sampling_correction = args.vllm_importance_sampling_correction
        self.top_entropy_quantile = args.top_entropy_quantile
        self.off_policy_mask_threshold = args.off_policy_mask_threshold
        self.entropy_coef = args.entropy_coef
        self.use_adaptive_entropy = args.use_adaptive_entropy
        self._entropy_bonus_enabled = self.entropy_coef != 0.0 or self.use_adaptive_entropy
        self.aux_loss_enabled = False
        self.current_gradient_accumulation_steps = 1
        self._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}
        self.model = FakeModel()
        self.accelerator = FakeAccelerator()
        self._logps = logps
        self._real_params = real_params

    def _get_per_token_logps_and_entropies(self, model: Any, input_ids: Any, attention_mask: Any,
                                           logits_to_keep: int, **kwargs: Any) -> tuple[Any, Any, Any]:
        unknown = sorted(set(kwargs) - self._real_params)
        if unknown:
            raise AssertionError(f"_get_per_token_logps_and_entropies called with unknown keywords {unknown}")
        assert isinstance(model, FakeModel)
        assert logits_to_keep == self._logps.shape[1]
        assert input_ids.shape == attention_mask.shape
        return self._logps, torch.zeros_like(self._logps).detach(), None


def load_trl(target: Target, sources: dict[str, str]) -> types.SimpleNamespace:
    trainer_tree, trainer_name = parse(sources, target, TRL_TRAINER)
    method = pick_method(trainer_tree, "GRPOTrainer", "_compute_loss", trainer_name)
    if method.decorator_list:
        raise SystemExit(f"{trainer_name}: _compute_loss is decorated; update the recorder")
    getter = pick_method(trainer_tree, "GRPOTrainer", "_get_per_token_logps_and_entropies", trainer_name)
    real_params = {a.arg for a in getter.args.args + getter.args.kwonlyargs}
    ns: dict[str, Any] = {"__name__": "trl.trainer.grpo_trainer", "torch": torch,
                          "nanmin": trl_nan_reduce(torch.min), "nanmax": trl_nan_reduce(torch.max)}
    exec_nodes([method], ns, trainer_name)
    config_tree, config_name = parse(sources, target, TRL_CONFIG)
    defaults = dataclass_defaults(config_tree, "GRPOConfig", TRL_CONFIG_FIELDS, config_name)
    getter_sig = [a.arg for a in getter.args.args] + [a.arg for a in getter.args.kwonlyargs]
    return types.SimpleNamespace(compute_loss=ns["_compute_loss"], defaults=defaults, real_params=real_params,
                                 getter_params=getter_sig,
                                 method_lines=[method.lineno, method.end_lineno])


def trl_variants(target: Target, api: types.SimpleNamespace) -> list[dict[str, Any]]:
    d = api.defaults
    mask_note = "completion_mask is passed as torch.long, as TRL pads it."
    norm_text = {
        "grpo": "mean_b(sum_t m*l / max(L_b, 1)) / GA (GA = current_gradient_accumulation_steps = 1)",
        "bnpo": "sum(m*l) / max(N, 1) / GA (GA = 1)",
        "dr_grpo": "sum(m*l) / (B * max_completion_length) / GA with max_completion_length = T (the padded "
                   "width of the case), GA = 1",
        "dapo": "sum(m*l) / (num_items_in_batch / num_processes) with num_items_in_batch = N (all response "
                "tokens of the batch) and num_processes = 1",
        "cispo": "sum(m*l) / (num_items_in_batch / num_processes), as dapo",
        "sapo": "mean_b(sum_t m*l / max(L_b, 1)) / GA, as grpo",
    }
    token_text = {
        "grpo": "-min(c*A, clamp(c, 1 - 0.2, 1 + 0.2)*A)",
        "bnpo": "-min(c*A, clamp(c, 0.8, 1.2)*A)",
        "dr_grpo": "-min(c*A, clamp(c, 0.8, 1.2)*A)",
        "dapo": "-min(c*A, clamp(c, 0.8, 1.2)*A)",
        "cispo": "-sg[min(c, epsilon_high)]*A*lp with epsilon_high = 5.0 an absolute cap (ScaleRL); no "
                 "lower clip",
        "sapo": "-sigmoid(tau*(c - 1))*4/tau*A with tau = sapo_temperature_pos 1.0 if A > 0 else "
                "sapo_temperature_neg 1.05. Upstream builds tau with torch.where(A > 0, 1.0, 1.05) from two "
                "Python floats, which yields a float32 tensor: tau_neg is float32(1.05) = "
                "1.0499999523162842 in these numbers",
    }
    level_text = {
        "token": "c = exp(lp - old) per token (no log-ratio clamp)",
        "sequence": "c = exp(sum_t m*(lp - old) / clamp(L_b, min=1)), shape [B, 1], gradient through the "
                    "mean (GSPO)",
    }
    specs: list[tuple[str, str, str, dict[str, Any]]] = []
    for loss_type in ("grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo"):
        for level in ("token", "sequence"):
            overrides: dict[str, Any] = {"loss_type": loss_type, "importance_sampling_level": level}
            if loss_type == "cispo":
                overrides["epsilon_high"] = 5.0
            specs.append((f"{loss_type}:{level}", loss_type, level, overrides))
    specs.append(("dapo:token:beta-0.04", "dapo", "token", {"loss_type": "dapo", "importance_sampling_level":
                                                            "token", "beta": 0.04}))
    variants: list[dict[str, Any]] = []
    for name, loss_type, level, overrides in specs:
        settings = dict(d)
        settings.update(overrides)
        settings["max_completion_length"] = "T (the padded width of each case)"

        def run(b: dict[str, Any], overrides: dict[str, Any] = overrides) -> Any:
            args_dict = dict(d)
            args_dict.update(overrides)
            args_dict["max_completion_length"] = b["lp"].shape[1]
            args = types.SimpleNamespace(**args_dict)
            fake = FakeGRPOTrainer(args, b["lp"], api.real_params)
            B, T = b["lp"].shape
            inputs = {
                "prompt_ids": torch.zeros((B, 1), dtype=torch.long),
                "prompt_mask": torch.ones((B, 1), dtype=torch.long),
                "completion_ids": torch.zeros((B, T), dtype=torch.long),
                "completion_mask": b["mask"],
                "advantages": b["adv"],
                "old_per_token_logps": b["old"],
                "num_items_in_batch": b["mask"].sum(),
            }
            if args.beta != 0.0:
                inputs["ref_per_token_logps"] = b["ref"]
            return api.compute_loss(fake, fake.model, inputs)

        kl_text = ""
        if overrides.get("beta", 0.0) != 0.0:
            kl_text = (" Plus beta * k3 per token before aggregation, k3 = exp(ref - lp) - (ref - lp) - 1 "
                       "(no clamp), beta = 0.04, use_bias_correction_kl False.")
        eps_high = overrides.get("epsilon_high", d["epsilon_high"])
        variants.append({
            "name": name,
            "description": (
                f"TRL GRPOTrainer._compute_loss with loss_type='{loss_type}', importance_sampling_level="
                f"'{level}': {level_text[level]}; per-token loss {token_text[loss_type]}; normalizer "
                f"{norm_text[loss_type]}. epsilon 0.2, epsilon_high "
                f"{eps_high if eps_high is not None else 'None (= epsilon)'}, delta None, "
                f"beta {overrides.get('beta', d['beta'])}, no vLLM IS correction, no entropy bonus or "
                f"masks, training mode.{kl_text} Advantages are [B] (unsqueezed upstream). {mask_note}"
            ),
            "settings": {
                "function": "trl.trainer.grpo_trainer.GRPOTrainer._compute_loss",
                "grpo_config": dict(sorted(settings.items())),
                "num_items_in_batch": "completion_mask.sum() = N (int64 0-dim tensor)",
                "num_processes": 1,
                "current_gradient_accumulation_steps": 1,
                "mode": "train",
                "response_mask_dtype": "torch.long",
            },
            "run": run,
            "dual_clip": False,
            "uses_ref": overrides.get("beta", 0.0) != 0.0,
        })
    return variants


def trl_provenance(api: types.SimpleNamespace) -> dict[str, Any]:
    return {
        "functions": ["trl.trainer.grpo_trainer.GRPOTrainer._compute_loss"],
        "picked_definitions": {
            TRL_TRAINER: [f"GRPOTrainer._compute_loss (lines {api.method_lines[0]}-{api.method_lines[1]})"],
            TRL_CONFIG: [f"GRPOConfig.{f} (default only)" for f in TRL_CONFIG_FIELDS],
        },
        "stubs": TRL_STUBS,
        "get_per_token_logps_and_entropies_params": api.getter_params,
        "settings": {
            "grpo_config_defaults": dict(sorted(api.defaults.items())),
            "epsilon": 0.2,
            "cispo_epsilon_high": "5.0 (absolute cap, ScaleRL's recommendation; TRL's default would be "
                                  "epsilon = 0.2)",
            "max_completion_length": "T (padded width of each case), overriding the config default",
            "num_processes": 1,
            "current_gradient_accumulation_steps": 1,
            "response_mask_dtype": "torch.long",
        },
    }


# --------------------------------------------------------------------------------------
# Batches and recording
# --------------------------------------------------------------------------------------


def case_seed(framework: str, label: str, variant: str, index: int) -> int:
    return zlib.crc32(f"{framework}@{label}:{variant}:{index}".encode("utf-8")) & 0x7FFFFFFF


def uniform(gen: Any, shape: tuple[int, ...], low: float, high: float) -> Any:
    return low + (high - low) * torch.rand(shape, generator=gen, dtype=torch.float64)


def randint(gen: Any, low: int, high_inclusive: int) -> int:
    return int(torch.randint(low, high_inclusive + 1, (1,), generator=gen).item())


def dual_clip_binds(lp: Any, old: Any, adv: Any, mask: Any) -> bool:
    ratio = torch.exp(torch.clamp(lp - old, min=-20.0, max=20.0))
    adv_tok = adv.unsqueeze(1).expand_as(lp) if adv.dim() == 1 else adv
    return bool(((ratio > DUAL_CLIP_C) & (adv_tok < 0) & mask).any())


def check_away_from_kinks(name: str, b: dict[str, Any]) -> None:
    mask = b["mask"]
    z = torch.where(mask, b["lp"] - b["old"], torch.zeros((), dtype=torch.float64))
    token = torch.exp(z)[mask]
    seq = torch.exp(z.sum(dim=1) / mask.sum(dim=1).to(torch.float64))
    for edge in (0.8, 1.2, DUAL_CLIP_C, 5.0):
        if bool(((token - edge).abs() <= KINK_MARGIN).any()) or bool(((seq - edge).abs() <= KINK_MARGIN).any()):
            raise SystemExit(f"{name}: a ratio lies within {KINK_MARGIN} of the clip edge {edge}")
    if bool(((b["lp"] - b["ref"])[mask].abs() <= KINK_MARGIN).any()):
        raise SystemExit(f"{name}: |lp - ref| <= {KINK_MARGIN} on a response token")


def draw_batch(seed: int, shape: tuple[int, int], adv_per_row: bool, need_dual_clip: bool) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(seed)
    batch, width = shape
    lengths = [randint(gen, 1, width) for _ in range(batch)]
    if all(length == width for length in lengths):
        row = randint(gen, 0, batch - 1)
        lengths[row] = randint(gen, 1, width - 1)
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    lp = uniform(gen, (batch, width), *LP_RANGE)
    old = lp + uniform(gen, (batch, width), *OLD_GAP)
    ref = lp + uniform(gen, (batch, width), *REF_GAP)
    adv = uniform(gen, (batch,) if adv_per_row else (batch, width), *ADV_RANGE)
    redraws = 0
    if need_dual_clip:
        while not dual_clip_binds(lp, old, adv, mask):
            redraws += 1
            if redraws > MAX_WIDEN:
                raise SystemExit(f"seed {seed}: dual clip never binds")
            old = lp + uniform(gen, (batch, width), *OLD_GAP_WIDE)
            adv = uniform(gen, (batch,) if adv_per_row else (batch, width), *ADV_RANGE)
    return {"mask": mask, "lp": lp, "old": old, "ref": ref, "adv": adv, "redraws": redraws}


def call_variant(run: Callable[[dict[str, Any]], Any], batch: dict[str, Any], mask_dtype: Any) -> tuple[Any, Any]:
    lp = batch["lp"].detach().clone().requires_grad_(True)
    args = {"lp": lp, "old": batch["old"].clone(), "ref": batch["ref"].clone(), "adv": batch["adv"].clone(),
            "mask": batch["mask"].to(mask_dtype)}
    loss = run(args)
    if not (torch.is_tensor(loss) and loss.dim() == 0):
        raise AssertionError(f"loss is not a scalar tensor: {loss!r}")
    (grad,) = torch.autograd.grad(loss, lp)
    return loss.detach(), grad.detach()


def finite(label: str, *tensors: Any) -> None:
    for t in tensors:
        if not bool(torch.isfinite(t).all()):
            raise AssertionError(f"{label}: non-finite output")


def bitwise_equal(a: Any, b: Any) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all()) and bool(
        (torch.signbit(a) == torch.signbit(b)).all())


MASK_DTYPES = {"verl": "bool", "openrlhf": "long", "trl": "long"}


def record_target(target: Target, variants: list[dict[str, Any]], notes: list[str]) -> dict[str, Any]:
    mask_dtype = getattr(torch, MASK_DTYPES[target.framework])
    adv_per_row = target.framework == "trl"
    out: dict[str, Any] = {}
    for spec in variants:
        cases = []
        eps_probe: list[float] = []
        for i in range(CASES_PER_VARIANT):
            name = spec["name"]
            shape = SHAPES[i % len(SHAPES)]
            seed = case_seed(target.framework, target.label, name, i)
            batch = draw_batch(seed, shape, adv_per_row, spec["dual_clip"])
            check_away_from_kinks(f"{target.framework}@{target.label}:{name}:{i}", batch)
            loss, grad = call_variant(spec["run"], batch, mask_dtype)
            finite(f"{target.label}:{name}:{i}", loss, grad)
            if spec.get("cross_check") is not None:
                loss2, grad2 = call_variant(spec["cross_check"], batch, mask_dtype)
                if not (bitwise_equal(loss, loss2) and bitwise_equal(grad, grad2)):
                    raise AssertionError(f"{target.label}:{name}:{i}: cross-check differs")
            if name in ("vanilla:seq-mean-token-mean", "ppo:sample", "gspo"):
                loss_f64, _ = call_variant(spec["run"], batch, torch.float64)
                eps_probe.append(abs(float(loss_f64) - float(loss)) / max(abs(float(loss)), 1e-300))
            inputs: dict[str, Any] = {
                "logprobs": batch["lp"].tolist(),
                "old_logprobs": batch["old"].tolist(),
                "advantages": batch["adv"].tolist(),
                "response_mask": batch["mask"].tolist(),
            }
            if spec["uses_ref"]:
                inputs["ref_logprobs"] = batch["ref"].tolist()
            case = {
                "seed": seed,
                "shape": list(shape),
                "inputs": inputs,
                "outputs": {"loss": float(loss.item()), "grad_logprobs": grad.to(torch.float64).tolist()},
            }
            if batch["redraws"]:
                case["old_logprobs_redraws"] = batch["redraws"]
            cases.append(case)
        if eps_probe and target.framework != "trl":
            notes.append(f"{target.framework}@{target.label} {spec['name']}: max rel |loss(float64 mask) - "
                         f"loss({MASK_DTYPES[target.framework]} mask)| = {max(eps_probe):.3e}")
        out[spec["name"]] = {"description": spec["description"], "settings": spec["settings"], "cases": cases}
    return dict(sorted(out.items()))


def write_json(path: Path, payload: dict[str, Any]) -> None:
    text = json.dumps(payload, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


LOADERS = {
    "verl": (load_verl, verl_variants, verl_provenance),
    "openrlhf": (load_openrlhf, openrlhf_variants, openrlhf_provenance),
    "trl": (load_trl, trl_variants, trl_provenance),
}
LOADING_RULE = (
    "Each pinned file is read with `git --git-dir=<dir> show <commit>:<path>` (in memory, nothing "
    "is written to disk), its SHA-256 is checked against the recorder's constant, it is parsed "
    "with ast, and only the definitions listed in picked_definitions are compiled (with the "
    "upstream file name and line numbers) and executed in a namespace of real torch plus the "
    "stand-ins described in stubs; every global name they read is checked to be bound first."
)


# --------------------------------------------------------------------------------------
# Helpers shared by the sibling recorders (advantages.py, gaeAndKlControl.py import this module)
# --------------------------------------------------------------------------------------


def pinned_sources_for(
    git_dir: Path,
    target: Target,
    used_files: dict[str, list[str]],
    extra_files: dict[str, dict[str, str]],
) -> tuple[dict[str, str], dict[str, str]]:
    """Read and hash-check exactly the files a recorder loads (``used_files`` by framework), at
    ``target``'s commit; a file outside ``target.files`` takes its pin from ``extra_files``."""
    files = {}
    for path in used_files[target.framework]:
        sha = target.files.get(path) or extra_files.get(target.commit, {}).get(path)
        if sha is None:
            raise SystemExit(f"{target.repo}@{target.label}: no pinned sha256 for {path}")
        files[path] = sha
    sources = read_pinned_sources(git_dir, dataclasses.replace(target, files=files))
    return sources, files


def exec_statements(stmts: list[ast.stmt], namespace: dict[str, Any], filename: str) -> None:
    """Execute statements after asserting that the namespace binds exactly their free names."""
    free = sorted(free_globals(stmts))
    bound = sorted(k for k in namespace if k != "__name__" and not k.startswith("__"))
    if free != bound:
        raise SystemExit(f"{filename}: the block reads {free}, the namespace binds {bound}")
    code = compile(ast.Module(body=list(stmts), type_ignores=[]), filename, "exec")
    exec(code, namespace)


def mask_rows(gen: Any, batch: int, width: int, kind: str) -> Any:
    """A [B, T] bool mask: 'right' (right-padded ragged) or 'interior' (zero spans inside rows)."""
    import torch  # noqa: PLC0415  (torch is imported where a recorder runs, as elsewhere here)

    if kind == "right":
        lengths = [randint(gen, 1, width) for _ in range(batch)]
        if all(length == width for length in lengths):
            row = randint(gen, 0, batch - 1)
            lengths[row] = randint(gen, 1, width - 1)
        return torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    if kind == "interior":
        assert width >= 4
        lengths = [randint(gen, 3, width) for _ in range(batch)]
        if all(length == width for length in lengths):
            row = randint(gen, 0, batch - 1)
            lengths[row] = randint(gen, 3, width - 1)
        mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
        forced = randint(gen, 0, batch - 1)
        for b in range(batch):
            coin = randint(gen, 0, 1)
            if b == forced or coin == 1:
                length = lengths[b]
                s = randint(gen, 1, length - 2)
                e = randint(gen, s + 1, length - 1)
                mask[b, s:e] = False
        return mask
    raise ValueError(kind)


def last_positions(mask: Any) -> list[int]:
    """The last response position of each row of a [B, T] bool mask."""
    import torch  # noqa: PLC0415

    return [int(torch.nonzero(mask[b]).max()) for b in range(mask.shape[0])]


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verl-git", default=os.environ.get("VERL_GIT"),
                        help="git directory (bare or work tree) of verl-project/verl (default: $VERL_GIT)")
    parser.add_argument("--openrlhf-git", default=os.environ.get("OPENRLHF_GIT"),
                        help="git directory of OpenRLHF/OpenRLHF (default: $OPENRLHF_GIT)")
    parser.add_argument("--trl-git", default=os.environ.get("TRL_GIT"),
                        help="git directory of huggingface/trl (default: $TRL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output directory")
    args = parser.parse_args()
    git_dirs = {"verl": args.verl_git, "openrlhf": args.openrlhf_git, "trl": args.trl_git}
    for fw, value in git_dirs.items():
        if not value:
            parser.error(f"--{fw}-git (or ${fw.upper()}_GIT) is required")
    out = Path(args.out)

    sys.dont_write_bytecode = True
    import torch as _torch  # noqa: PLC0415
    torch = _torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    command_parts = [sys.executable, TOOL_PATH, *sys.argv[1:]]
    command = shlex.join(command_parts)
    for fw, env in (("verl", "VERL_GIT"), ("openrlhf", "OPENRLHF_GIT"), ("trl", "TRL_GIT")):
        if f"--{fw}-git" not in " ".join(sys.argv[1:]):
            command = f"{env}={shlex.quote(git_dirs[fw])} {command}"

    notes: list[str] = []
    written = []
    for target in TARGETS:
        git_dir = git_dir_of(Path(git_dirs[target.framework]).resolve())
        sources = read_pinned_sources(git_dir, target)
        load, make_variants, make_prov = LOADERS[target.framework]
        api = load(target, sources)
        variants = make_variants(target, api)
        recorded = record_target(target, variants, notes)
        prov = {
            "framework": target.framework,
            "repo": f"https://github.com/{target.repo}",
            "commit": target.commit,
            "label": target.label,
            "tag": target.tag,
            "role": target.role,
            "files": [{"path": p, "sha256": s} for p, s in sorted(target.files.items())],
            "loading": LOADING_RULE,
            "tool": TOOL_PATH,
            "command": command,
            "torch_version": torch.__version__,
            "python_version": platform.python_version(),
            "dtype": "float64",
            "seed_rule": SEED_RULE,
            "input_rule": INPUT_RULE,
            "grad_rule": GRAD_RULE,
            "json_rule": JSON_RULE,
            "shapes": [list(s) for s in SHAPES],
            "cases_per_variant": CASES_PER_VARIANT,
        }
        prov.update(make_prov(api))
        path = out / f"{target.framework}@{target.label}.json"
        write_json(path, {"provenance": prov, "variants": recorded})
        n_cases = sum(len(v["cases"]) for v in recorded.values())
        written.append((path, len(recorded), n_cases))

    for path, n_var, n_cases in written:
        print(f"wrote {path} ({path.stat().st_size} bytes, {n_var} variants, {n_cases} cases)")
    for note in notes:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
