#!/usr/bin/env python3
"""Record verl's whole actor loss at ten releases: numbers and provenance only.

For every release in RELEASES this script reads the release's actor loss path out of a
local git repository of verl-project/verl (``git --git-dir=<dir> show <commit>:<path>``,
in memory), checks each file's SHA-256 against the constants below, parses it with
``ast``, picks the needed top-level definitions (or one method of a class), checks their
free global names, and ``exec``s exactly those nodes in a namespace that holds real
``torch`` plus small documented stand-ins. It then runs seeded float64 batches through
that code and writes only numbers plus provenance to
``test/fixtures/frameworks/verl-releases.json``.

Two loss paths are recorded:

* ``old_actor`` (v0.4.1 .. v0.7.1, where ``trainer.use_legacy_worker_impl: auto`` selects
  the legacy FSDP worker): ``DataParallelPPOActor.update_policy`` from
  ``verl/workers/actor/dp_actor.py`` is executed itself, with a stand-in ``self`` whose
  ``_forward_micro_batch`` returns rows of a float64 leaf tensor of log-probs. The
  micro-batch split, the 1/gradient_accumulation factor and the backward calls are
  upstream's own.
* ``engine`` (v0.8.0 onward; the legacy actor file is gone): ``ppo_loss`` from
  ``verl/workers/utils/losses.py`` is executed with the global batch info of one data
  parallel rank that holds the whole mini-batch.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/verlReleases.py \
        --verl-git /work/.mirror/verl-project+verl/repo

Output: JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs.
"""

from __future__ import annotations

import argparse
import contextlib
import ast
import builtins
import dataclasses
import hashlib
import json
import logging
import math
import os
import platform
import shlex
import subprocess
import sys
import types
import zlib
from pathlib import Path
from typing import Any, Callable, Optional

TOOL_PATH = "tools/record-fixtures/verlReleases.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "test" / "fixtures" / "frameworks" / "verl-releases.json"
BUILTIN_BATCH_FILE = REPO_ROOT / "test" / "fixtures" / "polgrad" / "which_example.json"

# --------------------------------------------------------------------------------------
# Pinned upstream identity
# --------------------------------------------------------------------------------------

DP_ACTOR = "verl/workers/actor/dp_actor.py"
LOSSES = "verl/workers/utils/losses.py"
CORE = "verl/trainer/ppo/core_algos.py"
# The FSDP worker, whose "normalize config" block converts the global micro-batch size (old actor).
FSDP_WORKERS = "verl/workers/fsdp_workers.py"
TF = "verl/utils/torch_functional.py"
ACTOR_CFG = "verl/workers/config/actor.py"
BASE_CFG = "verl/base_config.py"
GEN_YAML = "verl/trainer/config/_generated_ppo_trainer.yaml"
OLD_YAML = "verl/trainer/config/ppo_trainer.yaml"
RC_HELPER = "verl/trainer/ppo/rollout_corr_helper.py"


@dataclasses.dataclass(frozen=True)
class Release:
    label: str
    tag: Optional[str]
    commit: str
    path: str  # "old_actor" | "engine"
    yaml: str  # the config file whose actor section gives the defaults
    files: dict  # path -> sha256 of the whole file at `commit`
    full: bool  # True: record the per-key cases too (case 2); False: only `default`


RELEASES = (
    Release("v0.4.1", "v0.4.1", "8d9e350ea58c7ad4b50dd14d9dcb50577242c55f", "old_actor", OLD_YAML, {
        FSDP_WORKERS: "57a23566cebe8088ecd5c83518b9fa222051aa147fb21bd451e85163e8ede178",
        DP_ACTOR: "e2119325c4666b1c341e7761752f5e674f33ef5ec33008237a435697426ed923",
        CORE: "32692646dc70018e33cc133919ae8c27858a7323d215b4fe43824afa2853791b",
        TF: "fb6eae2e6561adf9622adcaf0552db38d2e887ef74701e2556e647ca3c290a94",
        OLD_YAML: "27ff485445de6e6aa3fb458c2deeec88aca9cd09303b859aa83caa03b6786ce7",
    }, False),
    Release("v0.5.0", "v0.5.0", "8fdc4d3f202f41461f4de9f42a637228e342668b", "old_actor", GEN_YAML, {
        FSDP_WORKERS: "79598ab019228a331825e315ff474322460162ae7adb436e1097ec2a32780f62",
        DP_ACTOR: "48c18d13a5ab47dfac0a85a713130f894c45ed81c7256f8af3ab32d6ffba8ef7",
        CORE: "87176b44551fdfe749940ff91bf9d3ad8ecb44a8000d7bbf1bab86e3425427d5",
        TF: "7133e257bc12afd3a527c9bd706418f39f740d43def556f4c5b9f8525108dece",
        GEN_YAML: "2038dd7a3a264d3f66176dbdc277a71ced22e3e7da474392807daf1ab8e4cb2f",
    }, False),
    Release("v0.6.0", "v0.6.0", "ddd86f527a4af75095e4677b02b5aa272913a088", "old_actor", GEN_YAML, {
        FSDP_WORKERS: "f49de6aa3676c6dc96e24315ebdefc7aa714e1a84661a3cea3a65b9fa2cf6a3b",
        DP_ACTOR: "df0a431f9fc06593f8d0af38411084b907c256779768320b9c193e3b4abdbabc",
        CORE: "6c7623538d142c2aba3288b48bf97cb92dec9d3f9930e079acde15714dd0e9d4",
        TF: "62d1dccf1958de62056279349e1ce55be6836a1bd49f231bf71246c9dd8d72cc",
        ACTOR_CFG: "87de306ad891c60f3db2fc1bc9eca65ecd7446a24d48fb1e401085d6f8b6ff15",
        BASE_CFG: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
        GEN_YAML: "1558343e0126e7713eb59113866aaa4f9ddde2e78d9084fc060f6ebaa7fc60d1",
    }, False),
    Release("v0.6.1", "v0.6.1", "d62da4950573d7a4b7ef2362337952e7ab59e78d", "old_actor", GEN_YAML, {
        FSDP_WORKERS: "ac75354db92440f6bed447a8272b77e62d5d64f33430ef43c50c1fc309e9376c",
        DP_ACTOR: "ec53e7a8b88e2b9dbdca40af07fd84b1e1b735cdf75378ab284383640b44f5bf",
        CORE: "e7817157e4f13e9f85d65321a9e81f5eef1cc9d18d70fe73ca54a2026213528c",
        TF: "62d1dccf1958de62056279349e1ce55be6836a1bd49f231bf71246c9dd8d72cc",
        ACTOR_CFG: "3c7995168f04789a2aea6af7f15083058089f7f7d28005bdc68b0574481489b4",
        BASE_CFG: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
        GEN_YAML: "4f669d56454f6ce0a20bdd2e5b0a342ba6942b7d7298cfef45e6639ef13b6d92",
    }, False),
    Release("v0.7.0", "v0.7.0", "f9c855f7cf04d603c9546bc01776c74806a879c1", "old_actor", GEN_YAML, {
        FSDP_WORKERS: "54e0cce9ca9b4e8d2430a4064798e3a47a0bd345d5102c078597395bdbe8a5ed",
        DP_ACTOR: "2f708de798943838c9724a127506ac6a9ec41532fc39b417056fb9bd10e57504",
        CORE: "5a9ac50f7fd1c5fcc1d9a6fea3a6f47cdd9ea716f752fa501915661b1cfbef2f",
        TF: "811aadb6c480a3ebd02f2242981a513d056ceb309347aebd6eff9ba5e52590ec",
        ACTOR_CFG: "6563a071f1fb20b1367bcaccf294252ef1f0afd6e56ec3b8e6907819dfd580ab",
        BASE_CFG: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
        GEN_YAML: "36477de64fdd3a9e492e7e4f0d175635b7a33d082873af622b062af167e91eb1",
        RC_HELPER: "e33a30b5385ab09be4b6b14913967d17329b583818dd15e69aa79f3ff0a706e3",
    }, False),
    Release("v0.7.1", "v0.7.1", "bec9ef74768dd201881cd4e54cd0385e87caae27", "old_actor", GEN_YAML, {
        FSDP_WORKERS: "ce52e8b085e599fe997d9ad494fb1761c7d82609359d81ca1a75e8f4fbcbea74",
        DP_ACTOR: "1a7d0d5551d5422b61068868062b013c968fc28ce605e9240708a13e3e625793",
        CORE: "bd5c2a262df55ec143af4392ae3f702c56497a76c6e6b5b641cc5e67760fd432",
        TF: "cb37d045dec2161d637e2633032cc97c97334e5547cea62dace42630c9683259",
        ACTOR_CFG: "7239c17110aaf9a4d6672cc5619651330dc0730a13401d3a225d86547f6839df",
        BASE_CFG: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
        GEN_YAML: "ff147f54da7b20729106a3dc105781fade5aad4b3e00e3d944830b6d932d4cc2",
        RC_HELPER: "d7c584d1c3f2fd31e4c2e508e32a7a54b12b94284cd441f1f1c7889f5258c304",
    }, True),
    Release("v0.8.0", "v0.8.0", "7aed6b230776f963fa09509c10d9c3a767d1102c", "engine", GEN_YAML, {
        LOSSES: "701a0bf7cd7c0fa3cde670379d44cce5755bcd44222e8866716e69d27a400b5d",
        CORE: "37fa248bdeeef4311dfa40b799786fd8bd6cd6013319223d2540685fce80f843",
        TF: "cb37d045dec2161d637e2633032cc97c97334e5547cea62dace42630c9683259",
        ACTOR_CFG: "42440e8b08a0fd04d24e96da67feb7014eb2d6ff1fa82ccad6b66b012094685a",
        BASE_CFG: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
        GEN_YAML: "69c55114d6ab12c4f09e8c0a93e11870c3229aceb86e309e02fc51a770dbfcc4",
    }, False),
    Release("74a718a4", None, "74a718a492092312f1004fe25369975137388849", "engine", GEN_YAML, {
        LOSSES: "c6dfeb10900054e96b432633b975f3e3a535d3358a4ad13eeda9f730c5942d4a",
        CORE: "9114f9e16c87e4c9ebf2fa016baf733c9bbc819766b53c8968aaa9e8abcd7916",
        TF: "cb37d045dec2161d637e2633032cc97c97334e5547cea62dace42630c9683259",
        ACTOR_CFG: "0b789b145b9537f463e5a9d2a647ea186ce99a9ecc8bceac1e44e9cf6d6c704b",
        BASE_CFG: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
        GEN_YAML: "dffe158c6e7bfcabe2c4b0f6599c1b66903d5392a988026cc6a1349846734ed9",
    }, False),
    Release("v0.9.0", "v0.9.0", "483b8a009ba3a97563edee3a19887e4862b8094a", "engine", GEN_YAML, {
        LOSSES: "c6dfeb10900054e96b432633b975f3e3a535d3358a4ad13eeda9f730c5942d4a",
        CORE: "0ec87b90cba24fa0aa959adff573efb2cc49434d705621cf546be231e56a8932",
        TF: "9855e101c19b64c90d1f07bf47ce3e628751afe979b40d2b863ae6d16aa4cee1",
        ACTOR_CFG: "c2ac6718a6cd5b89e321348409f2323719c348b74b6e6989a1373e6b1a94fcac",
        BASE_CFG: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
        GEN_YAML: "9f90900fb1e85ecdcac69b9cbeac450fa7e6d322d119b22e83f44bf02e9c3b1b",
    }, False),
    Release("1dda039b", None, "1dda039b9c6311889a9c9a26040677e1254814f9", "engine", GEN_YAML, {
        LOSSES: "c6dfeb10900054e96b432633b975f3e3a535d3358a4ad13eeda9f730c5942d4a",
        CORE: "0ec87b90cba24fa0aa959adff573efb2cc49434d705621cf546be231e56a8932",
        TF: "9855e101c19b64c90d1f07bf47ce3e628751afe979b40d2b863ae6d16aa4cee1",
        ACTOR_CFG: "c2d9b63c54b4afb0826bdc434a8681f152e3e9a3147fac900172b1da0077b377",
        BASE_CFG: "a313fdc081a3983193980a475b9b572b125fe95da92c459f05db810a14f62050",
        GEN_YAML: "ed87d107dc9315f104ed33bfc705da8af70323d20329a6f79a4c84ee5e20d4c5",
        RC_HELPER: "763158342551bc4077805a8a009d959a7a2043c4d43b772fe6045f4a40932f3e",
    }, True),
)

A = "actor_rollout_ref.actor."
RC = "algorithm.rollout_correction."
CALC_LP = "actor_rollout_ref.rollout.calculate_log_probs"
TRAIN_BS = "data.train_batch_size"

# Loss modes recorded as per-key cases. clip_cov / kl_cov select tokens by covariance with
# random tie-breaking; the loss modes bypass_mode / rollout_correction are set only in the
# driver's copy of the config (apply_bypass_mode), which the actor workers never see: all four
# are skipped as loss modes (see SKIPPED); algorithm.rollout_correction.bypass_mode is recorded
# as the trainer runs it (bypass()).
WANTED_LOSS_MODES = ("dppo_tv", "dppo_kl", "gspo", "sapo", "gpg", "geo_mean", "cispo", "dro")
KL_TYPES = ("k1", "k2", "abs", "k3+")  # the default type low_var_kl is the plain use_kl_loss case
SKIPPED = (
    "policy_loss.loss_mode clip_cov and kl_cov: they pick the clipped / penalised tokens by "
    "covariance rank with random selection among candidates (torch.randperm), not a "
    "deterministic function of the batch. policy_loss.loss_mode bypass_mode (v0.7.x onward) "
    "and rollout_correction (v0.6.1) as loss modes: apply_bypass_mode writes them into the "
    "driver's copy of actor.policy_loss after init_workers gave the actor workers theirs, so no "
    "worker computes them; algorithm.rollout_correction.bypass_mode=true is recorded as the "
    "Ray trainer runs it: verl's apply_bypass_mode on the batch (old_log_probs := "
    "rollout_log_probs, with a copy of the config as the driver's), no rollout correction, "
    "the workers' configured loss. kl_loss_type 'full' needs full logits. "
    "entropy_coeff and rollout_correction cases are not recorded on the built-in batch "
    "because it has no entropies / rollout_logprobs stream. use_dynamic_bsz (token-budget "
    "micro-batches) is not recorded. v0.7.0 and v0.7.1 ship verl/workers/utils/losses.py too, "
    "but their default (use_legacy_worker_impl: auto) runs the old actor, which is what is "
    "recorded there. Per-key cases are recorded only at v0.7.1 and 1dda039b; every other "
    "release has only the 'default' case."
)

# --------------------------------------------------------------------------------------
# Reading pinned sources from git
# --------------------------------------------------------------------------------------


def git(git_dir: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {git_dir}: {proc.stderr.decode().strip()}")
    return proc.stdout


def read_release(git_dir: Path, rel: Release) -> dict[str, str]:
    probe = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{rel.commit}^{{commit}}"],
                           capture_output=True)
    if probe.returncode != 0:
        raise SystemExit(f"commit {rel.commit} ({rel.label}) is not in {git_dir}")
    if rel.tag is not None:
        tagged = git(git_dir, "rev-parse", "--verify", "--quiet", f"{rel.tag}^{{commit}}").decode().strip()
        if tagged != rel.commit:
            raise SystemExit(f"tag {rel.tag} is {tagged}, expected {rel.commit}")
    out = {}
    for path, expected in sorted(rel.files.items()):
        data = git(git_dir, "show", f"{rel.commit}:{path}")
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise SystemExit(f"{rel.label}:{path}: sha256 {actual}, expected {expected}")
        out[path] = data.decode("utf-8")
    return out


# --------------------------------------------------------------------------------------
# Picking definitions and executing only those
# --------------------------------------------------------------------------------------


def node_name(node: ast.stmt) -> Optional[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def free_names(nodes: list[ast.AST]) -> set[str]:
    """Names the nodes read that nothing inside them binds and that are not builtins."""
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
    return {n for n in loaded - bound if not hasattr(builtins, n)}


def top_level(tree: ast.Module, where: str) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        name = node_name(node)
        if name is None:
            continue
        if name in out:
            raise SystemExit(f"{where}: {name} is defined more than once at top level")
        out[name] = node
    return out


def pick_closure(tree: ast.Module, roots: list[str], where: str) -> list[ast.stmt]:
    """``roots`` plus every top-level definition of the same file they (transitively) read."""
    defs = top_level(tree, where)
    missing = [r for r in roots if r not in defs]
    if missing:
        raise SystemExit(f"{where}: definitions not found: {missing}")
    picked: dict[str, ast.stmt] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in picked:
            continue
        picked[name] = defs[name]
        for dep in sorted(free_names([defs[name]])):
            if dep in defs and dep not in picked:
                todo.append(dep)
    return sorted(picked.values(), key=lambda n: n.lineno)


def registered_losses(tree: ast.Module) -> dict[str, str]:
    """{loss_mode: function name} for every top-level @register_policy_loss("...") def."""
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) and dec.func.id == "register_policy_loss"
                    and dec.args and isinstance(dec.args[0], ast.Constant)):
                out[dec.args[0].value] = node.name
    return out


def pick_method(tree: ast.Module, cls: str, method: str, where: str) -> ast.FunctionDef:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    if len(classes) != 1:
        raise SystemExit(f"{where}: expected one class {cls}")
    defs = [n for n in classes[0].body if isinstance(n, ast.FunctionDef) and n.name == method]
    if len(defs) != 1:
        raise SystemExit(f"{where}: expected one {cls}.{method}")
    return defs[0]


def exec_nodes(nodes: list[ast.stmt], namespace: dict[str, Any], filename: str) -> None:
    missing = sorted(free_names(nodes) - set(namespace))
    if missing:
        raise SystemExit(f"{filename}: picked definitions read names with no binding: {missing}")
    code = compile(ast.Module(body=list(nodes), type_ignores=[]), filename, "exec")
    exec(code, namespace)  # noqa: S102 - the point of this tool: run pinned, hash-checked upstream code


def literal_or_unresolved(node: Optional[ast.expr], what: str) -> Any:
    if node is None:
        return Unresolved(f"{what}: no default")
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "field":
        kw = {k.arg: k.value for k in node.keywords}
        if "default" in kw:
            return literal_or_unresolved(kw["default"], what)
        fac = kw.get("default_factory")
        if isinstance(fac, ast.Name) and fac.id in ("dict", "list"):
            return {} if fac.id == "dict" else []
        return Unresolved(f"{what}: default_factory {ast.unparse(fac) if fac is not None else '?'}")
    return Unresolved(f"{what}: non-literal default")


def dataclass_fields(tree: ast.Module, cls: str, where: str) -> dict[str, Any]:
    """Every annotated field of ``cls`` with its literal default (Unresolved when not literal)."""
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    if len(classes) != 1:
        raise SystemExit(f"{where}: expected one class {cls}")
    out = {}
    for node in classes[0].body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = literal_or_unresolved(node.value, f"{cls}.{node.target.id}")
    return out


# --------------------------------------------------------------------------------------
# Stand-ins
# --------------------------------------------------------------------------------------


class Unresolved:
    """A config value the recorder does not resolve (interpolation, factory). Any use raises."""

    def __init__(self, what: str) -> None:
        object.__setattr__(self, "_what", what)

    def __repr__(self) -> str:
        return f"Unresolved({self._what!r})"

    def _fail(self, *_a: Any, **_k: Any) -> Any:
        raise RuntimeError(f"upstream code read an unresolved config value: {self._what}")

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __float__ = __int__ = _fail
    __add__ = __radd__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __sub__ = __rsub__ = _fail
    __hash__ = None  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"upstream code read an unresolved config value: {self._what} (.{name})")


class ConfigNode:
    """Attribute / item / ``in`` access over a fixed set of values (base of the config stand-ins)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __contains__(self, key: str) -> bool:
        return key in self.__dict__

    def keys(self) -> list[str]:
        return list(self.__dict__)


def omegaconf_like_get(self: ConfigNode, key: str, default: Any = None) -> Any:
    """Stand-in for omegaconf.DictConfig.get: the value when the key exists, else the default."""
    return self.__dict__.get(key, default)


class DictConfigNode(ConfigNode):
    """Stand-in for an omegaconf.DictConfig node (the trainer's algorithm.rollout_correction)."""

    get = omegaconf_like_get


def build_node(cls: type, values: dict[str, Any], children: dict[str, type], path: str) -> ConfigNode:
    out = {}
    for key, value in values.items():
        if isinstance(value, dict) and key in children:
            out[key] = build_node(children[key], value, {}, f"{path}.{key}")
        elif isinstance(value, dict) and not value:
            out[key] = {}  # a dataclass default_factory=dict field (e.g. global_batch_info): a fresh dict
        elif isinstance(value, dict):
            out[key] = Unresolved(f"{path}.{key} (nested section not given to the loss)")
        elif isinstance(value, str) and "${" in value:
            out[key] = Unresolved(f"{path}.{key} = {value}")
        else:
            out[key] = value
    return cls(out)


class TensorDictStandIn:
    """Stand-in for tensordict.TensorDict / DataProto.batch: named tensors (+ plain values)."""

    def __init__(self, items: dict[str, Any]) -> None:
        self._items = dict(items)

    def _rows(self) -> int:
        sizes = {v.shape[0] for v in self._items.values() if hasattr(v, "shape")}
        if len(sizes) != 1:
            raise RuntimeError(f"inconsistent batch sizes {sizes}")
        return sizes.pop()

    @property
    def batch_size(self) -> list[int]:
        return [self._rows()]

    def keys(self) -> list[str]:
        return list(self._items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._items[key] = value

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return self._rows()

    def get(self, key: str, default: Any = None) -> Any:
        return self._items.get(key, default)

    def select(self, *keys: str) -> "TensorDictStandIn":
        return TensorDictStandIn({k: self._items[k] for k in keys})

    def to_padded_tensor(self) -> "TensorDictStandIn":
        return self  # every stream is already a padded [B, T] tensor

    def to(self, _device: Any) -> "TensorDictStandIn":
        return self

    def split(self, size: int) -> list["TensorDictStandIn"]:
        n = self._rows()
        return [TensorDictStandIn({k: (v[i:i + size] if hasattr(v, "shape") else v) for k, v in self._items.items()})
                for i in range(0, n, size)]


class DataProtoStandIn:
    """Stand-in for verl.protocol.DataProto: tensors + non-tensor dict + meta_info."""

    def __init__(self, tensors: dict[str, Any], non_tensor: Optional[dict] = None, meta: Optional[dict] = None):
        self.batch = TensorDictStandIn(tensors)
        self.non_tensor_batch = dict(non_tensor or {})
        self.meta_info = dict(meta or {})

    @classmethod
    def from_dict(cls, tensors: dict[str, Any], **_kw: Any) -> "DataProtoStandIn":
        return cls(tensors)

    def __len__(self) -> int:
        return len(self.batch)

    def select(self, batch_keys: Optional[list] = None, non_tensor_batch_keys: Optional[list] = None,
               meta_info_keys: Optional[list] = None, deepcopy: bool = False) -> "DataProtoStandIn":
        del meta_info_keys, deepcopy
        keys = list(batch_keys) if batch_keys is not None else self.batch.keys()
        nt = list(non_tensor_batch_keys) if non_tensor_batch_keys is not None else list(self.non_tensor_batch)
        return DataProtoStandIn({k: self.batch[k] for k in keys}, {k: self.non_tensor_batch[k] for k in nt},
                                self.meta_info)

    def split(self, size: int) -> list["DataProtoStandIn"]:
        if self.non_tensor_batch:
            raise RuntimeError("non-tensor data is not used by this recorder")
        return [DataProtoStandIn(td._items, {}, self.meta_info) for td in self.batch.split(size)]

    def to(self, _device: Any) -> "DataProtoStandIn":
        return self

    def union(self, other: "DataProtoStandIn") -> "DataProtoStandIn":
        for key in other.batch.keys():
            if key in self.batch:
                raise RuntimeError(f"union: key {key} already present")
            self.batch[key] = other.batch[key]
        return self


class GPUMemoryLoggerStandIn:
    """Stand-in for verl.utils.profiler.GPUMemoryLogger: the decorator returns the function."""

    def __init__(self, role: str = "", logger: Any = None) -> None:
        del role, logger

    def __call__(self, fn: Callable) -> Callable:
        return fn


def append_to_dict_standin(data: dict, new: dict) -> None:
    """Stand-in for verl.utils.py_functional.append_to_dict (metrics bookkeeping only)."""
    for key, value in new.items():
        data.setdefault(key, []).append(value)


def no_dynamic_bsz(*_a: Any, **_k: Any) -> Any:
    raise RuntimeError("use_dynamic_bsz is not recorded")


class AggregationTypeStandIn:
    """Stand-in for verl.utils.metric.AggregationType (only compared / passed on)."""

    MEAN = "mean"
    SUM = "sum"


class MetricStandIn:
    """Stand-in for verl.utils.metric.Metric: holds a value; metrics are not recorded."""

    def __init__(self, value: Any = None, aggregation: Any = None) -> None:
        self.value = value
        self.aggregation = aggregation

    @classmethod
    def from_dict(cls, metrics: dict, aggregation: Any = None) -> dict:
        return {k: cls(value=v, aggregation=aggregation) for k, v in metrics.items()}


def identity_padding(tensor: Any, data: Any) -> Any:
    """Stand-in for verl.workers.utils.padding.no_padding_2_padding (see STUBS)."""
    del data
    return tensor


def identity_deprecated(replacement: str = "") -> Callable[[Any], Any]:
    del replacement
    return lambda obj: obj


class AlgoConfigStandIn:
    """Stand-in for verl.trainer.config.AlgoConfig (isinstance checks only)."""


STUBS = (
    "Only picked upstream definitions run; nothing of verl is imported. verl_F is a module "
    "object holding the definitions picked from the release's verl/utils/torch_functional.py "
    "(masked_sum / masked_mean and what they read). The actor config is a stand-in object "
    "(class named ActorConfig from v0.6.0, when verl converts the actor config with "
    "omega_conf_to_dataclass; a DictConfig-like object at v0.4.1 and v0.5.0, when the actor "
    "gets the OmegaConf node) carrying: the literal defaults of the ActorConfig / "
    "PolicyLossConfig dataclasses read with ast from verl/workers/config/actor.py (v0.6.0+), "
    "overlaid by the actor section of the release's composed config yaml "
    "(verl/trainer/config/_generated_ppo_trainer.yaml, ppo_trainer.yaml at v0.4.1), overlaid "
    "by the case's config keys. Its get() is BaseConfig.get picked from verl/base_config.py "
    "(v0.6.0+) or a DictConfig.get stand-in (value if the key exists, else the default). "
    "Interpolated or non-literal values (e.g. rollout_n, nested optim / fsdp sections) are "
    "an Unresolved object that raises if upstream code reads it (none did). "
    "ppo_mini_batch_size is set to B and ppo_micro_batch_size_per_gpu to the case's value "
    "(B when unset, see rules) as the FSDP worker's normalisation would leave them on a "
    "single rank with rollout.n = 1. AlgoConfig and DictConfig annotations/isinstance "
    "targets are empty classes; the 'deprecated' and GPUMemoryLogger decorators are "
    "identities. Old actor: DataProto / TensorDict are small containers (select, split into "
    "contiguous row chunks, to(device) = identity); get_device_id returns 'cpu'; "
    "append_to_dict appends metrics to lists; the dynamic-batch helpers raise (never "
    "called). The stand-in self has actor_module.train() and actor_optimizer.zero_grad() as "
    "no-ops, scaler None, ulysses_sequence_parallel_size 1, use_prefix_grouper False, and "
    "_forward_micro_batch(micro_batch, temperature, calculate_entropy) returning rows "
    "input_ids[:, 0] of one float64 leaf tensor of log-probs (and of the entropies stream "
    "when calculate_entropy, else None), as (entropy, log_prob) before v0.7.1 and as "
    "{'log_probs', 'entropys'} at v0.7.1, as the release's update_policy unpacks it. "
    "torch.Tensor.backward is wrapped for the duration of update_policy to record each "
    "micro-batch loss before calling the real backward; _optimizer_step records the "
    "accumulated leaf gradient and stops update_policy (the second mini-batch never runs). "
    "Engine: losses.ppo_loss gets model_output {'log_probs': leaf, 'entropy': entropies "
    "(only when calculate_entropy or entropy_coeff != 0, as the trainer sets "
    "calculate_entropy)}; no_padding_2_padding is the identity because the recorder already "
    "holds the padded [B, T] log-probs (upstream it slices the model's packed output into "
    "[B, T] with 0.0 at padding); data is a TensorDict stand-in whose select(...) / "
    "to_padded_tensor() keep the given padded tensors and which carries dp_size, "
    "batch_num_tokens and global_batch_size as plain ints; Metric / AggregationType are "
    "value holders. Rollout correction: compute_rollout_correction_and_add_to_batch (with "
    "everything of rollout_corr_helper.py it reads) is picked and run on a DataProto "
    "stand-in (from_dict, union) holding old_log_probs, rollout_log_probs and the int64 "
    "response_mask, with the release yaml's algorithm.rollout_correction section (plus the "
    "case keys) as a DictConfig-like node, exactly where ray_trainer calls it before the "
    "actor update; the resulting response_mask and rollout_is_weights go into the actor batch."
)

# --------------------------------------------------------------------------------------
# Loading one release
# --------------------------------------------------------------------------------------

torch: Any = None  # set in main()


@dataclasses.dataclass
class Loaded:
    rel: Release
    core_ns: dict
    run_entry: Callable  # update_policy(self, data) or ppo_loss(config, model_output, data)
    entry_node: ast.FunctionDef
    rc_ns: Optional[dict]
    picked: list
    actor_values: dict  # merged defaults of the actor section (plain values / nested dicts)
    policy_values: dict
    rc_values: dict
    config_cls: type
    policy_cls: type
    notes: list
    outputs_dict: bool
    rollout_calc_lp: bool = False


def parse(sources: dict, rel: Release, path: str) -> tuple[ast.Module, str]:
    name = f"verl-project/verl@{rel.commit[:8]}/{path}"
    return ast.parse(sources[path], filename=name), name


def load_release(rel: Release, sources: dict, wanted_modes: list[str]) -> Loaded:
    import yaml  # noqa: PLC0415 - Debian python3-yaml; only used to read the pinned config file

    picked: list[str] = []
    notes: list[str] = []

    tf_tree, tf_name = parse(sources, rel, TF)
    tf_nodes = pick_closure(tf_tree, ["masked_sum", "masked_mean"], tf_name)
    tf_ns: dict[str, Any] = {"__name__": "verl.utils.torch_functional", "torch": torch}
    exec_nodes(tf_nodes, tf_ns, tf_name)
    verl_f = types.ModuleType("verl.utils.torch_functional")
    for node in tf_nodes:
        setattr(verl_f, node_name(node), tf_ns[node_name(node)])
    picked += [f"{TF}:{node_name(n)}" for n in tf_nodes]

    # ---- config defaults
    cfg_doc = yaml.safe_load(sources[rel.yaml])
    actor_yaml = cfg_doc["actor_rollout_ref"]["actor"]
    rc_yaml = (cfg_doc.get("algorithm") or {}).get("rollout_correction") or {}
    if cfg_doc["actor_rollout_ref"]["rollout"]["n"] != 1:
        raise SystemExit(f"{rel.label}: rollout.n default is not 1")
    dataclass_based = ACTOR_CFG in rel.files
    if dataclass_based:
        cfg_tree, cfg_name = parse(sources, rel, ACTOR_CFG)
        actor_dc = dataclass_fields(cfg_tree, "ActorConfig", cfg_name)
        policy_dc = dataclass_fields(cfg_tree, "PolicyLossConfig", cfg_name)
        base_tree, base_name = parse(sources, rel, BASE_CFG)
        base_ns: dict[str, Any] = {"__name__": "verl.base_config", "Any": Any}
        exec_nodes([pick_method(base_tree, "BaseConfig", "get", base_name)], base_ns, base_name)
        picked += [f"{BASE_CFG}:BaseConfig.get", f"{ACTOR_CFG}:ActorConfig (field defaults only)",
                   f"{ACTOR_CFG}:PolicyLossConfig (field defaults only)"]
        getter = base_ns["get"]
    else:
        actor_dc, policy_dc = {}, {}
        getter = omegaconf_like_get
    picked.append(f"{rel.yaml}:actor_rollout_ref.actor" + (", algorithm.rollout_correction" if rc_yaml else "")
                  + " (values only)")
    actor_values = dict(actor_dc)
    policy_values = dict(policy_dc)
    for key, value in actor_yaml.items():
        if key == "policy_loss":
            for pk, pv in value.items():
                check_default(notes, rel, f"policy_loss.{pk}", policy_dc, pk, pv)
                policy_values[pk] = pv
        else:
            check_default(notes, rel, key, actor_dc, key, value)
            actor_values[key] = value
    actor_values.pop("policy_loss", None)

    class_name = "ActorConfig" if dataclass_based else "DictConfig"
    config_cls = type(class_name, (ConfigNode,), {"get": getter, "__doc__": f"stand-in ({rel.label})"})
    policy_cls = type("PolicyLossConfig" if dataclass_based else "DictConfig", (ConfigNode,),
                      {"get": getter, "__doc__": f"stand-in ({rel.label})"})

    # ---- core_algos
    core_tree, core_name = parse(sources, rel, CORE)
    registry = registered_losses(core_tree)
    roots = ["agg_loss", "kl_penalty", "get_policy_loss_fn", "register_policy_loss", "POLICY_LOSS_REGISTRY"]
    if "vanilla" in registry:
        roots.append(registry["vanilla"])
    else:
        roots.append("compute_policy_loss")  # v0.4.1 / v0.5.0: the actor calls it directly for vanilla
    for mode in wanted_modes:
        roots.append(registry[mode])
    core_nodes = pick_closure(core_tree, roots, core_name)
    core_ns: dict[str, Any] = {
        "__name__": "verl.trainer.ppo.core_algos", "torch": torch, "verl_F": verl_f, "Optional": Optional,
        "Any": Any, "Callable": Callable, "ActorConfig": config_cls, "AlgoConfig": AlgoConfigStandIn,
        "DictConfig": config_cls if not dataclass_based else type("DictConfig", (), {}),
        "deprecated": identity_deprecated, "math": math,
    }
    exec_nodes(core_nodes, core_ns, core_name)
    picked += [f"{CORE}:{node_name(n)}" for n in core_nodes]
    have = sorted(core_ns["POLICY_LOSS_REGISTRY"])
    need = sorted(set(wanted_modes) | ({"vanilla"} if "vanilla" in registry else set()))
    if have != need:
        raise SystemExit(f"{rel.label}: registry holds {have}, expected {need}")

    # ---- the loss path
    outputs_dict = False
    if rel.path == "old_actor":
        actor_tree, actor_name = parse(sources, rel, DP_ACTOR)
        entry = pick_method(actor_tree, "DataParallelPPOActor", "update_policy", actor_name)
        ns = {
            "__name__": "verl.workers.actor.dp_actor", "torch": torch, "DataProto": DataProtoStandIn,
            "GPUMemoryLogger": GPUMemoryLoggerStandIn, "logger": logging.getLogger("verl-releases-standin"),
            "get_device_id": lambda: "cpu", "append_to_dict": append_to_dict_standin,
            "prepare_dynamic_batch": no_dynamic_bsz, "rearrange_micro_batches": no_dynamic_bsz,
        }
        for name in ("agg_loss", "kl_penalty", "get_policy_loss_fn", "compute_policy_loss"):
            if name in core_ns:
                ns[name] = core_ns[name]
        exec_nodes([entry], ns, actor_name)
        run_entry = ns["update_policy"]
        picked.append(f"{DP_ACTOR}:DataParallelPPOActor.update_policy")
        keys = {n.slice.value for n in ast.walk(entry) if isinstance(n, ast.Subscript)
                and isinstance(n.value, ast.Name) and n.value.id == "outputs" and isinstance(n.slice, ast.Constant)}
        if keys:
            if not keys <= {"log_probs", "entropys"}:
                raise SystemExit(f"{rel.label}: update_policy reads model outputs {sorted(keys)}")
            outputs_dict = True
    else:
        loss_tree, loss_name = parse(sources, rel, LOSSES)
        entry = top_level(loss_tree, loss_name)["ppo_loss"]
        ns = {
            "__name__": "verl.workers.utils.losses", "torch": torch, "TensorDict": TensorDictStandIn,
            "ActorConfig": config_cls, "no_padding_2_padding": identity_padding,
            "AggregationType": AggregationTypeStandIn, "Metric": MetricStandIn,
            "agg_loss": core_ns["agg_loss"], "kl_penalty": core_ns["kl_penalty"],
            "get_policy_loss_fn": core_ns["get_policy_loss_fn"],
        }
        exec_nodes([entry], ns, loss_name)
        run_entry = ns["ppo_loss"]
        picked.append(f"{LOSSES}:ppo_loss")

    rc_ns = None
    if RC_HELPER in rel.files:
        rc_tree, rc_name = parse(sources, rel, RC_HELPER)
        # The driver's bypass step: apply_bypass_mode (v0.7.0+) or apply_rollout_correction (v0.6.1).
        bypass_fn = next((n for n in ("apply_bypass_mode", "apply_rollout_correction")
                          if n in top_level(rc_tree, rc_name)), None)
        roots = ["compute_rollout_correction_and_add_to_batch"] + ([bypass_fn] if bypass_fn else [])
        rc_nodes = pick_closure(rc_tree, roots, rc_name)
        rc_ns = {"__name__": "verl.trainer.ppo.rollout_corr_helper", "torch": torch, "verl_F": verl_f,
                 "math": math, "Optional": Optional, "Any": Any, "DataProto": DataProtoStandIn,
                 "RolloutCorrectionConfig": ConfigNode, "PolicyLossConfig": policy_cls}
        exec_nodes(rc_nodes, rc_ns, rc_name)
        picked += [f"{RC_HELPER}:{node_name(n)}" for n in rc_nodes]
    return Loaded(rel, core_ns, run_entry, entry, rc_ns, picked, actor_values, policy_values, dict(rc_yaml),
                  config_cls, policy_cls, notes, outputs_dict)


LOSS_KEYS = ("clip_ratio", "clip_ratio_low", "clip_ratio_high", "clip_ratio_c", "loss_agg_mode",
             "loss_scale_factor", "entropy_coeff", "calculate_entropy", "use_kl_loss", "kl_loss_coef",
             "kl_loss_type", "tau_pos", "tau_neg", "ppo_epochs", "ppo_mini_batch_size",
             "ppo_micro_batch_size_per_gpu", "use_dynamic_bsz", "loss_mode", "dro_beta")


def check_default(notes: list, rel: Release, label: str, dc: dict, key: str, yaml_value: Any) -> None:
    """Note any loss-relevant key whose yaml value differs from the dataclass default."""
    if key not in LOSS_KEYS or key not in dc or isinstance(dc[key], Unresolved):
        return
    if dc[key] != yaml_value or (type(dc[key]) is bool) != (type(yaml_value) is bool):
        notes.append(f"{rel.label}: {label} yaml default {yaml_value!r} differs from dataclass default {dc[key]!r} "
                     "(the yaml value is used)")


# --------------------------------------------------------------------------------------
# Config for one case
# --------------------------------------------------------------------------------------


def normalize_block(source: str, where: str) -> Any:
    """The FSDP worker's "normalize config" statement for the actor, compiled with its file and
    lines: the `if self._is_actor:` of ActorRolloutRefWorker.__init__ whose first statement scales
    self.config.actor.ppo_mini_batch_size (by rollout.n, then per rank)."""
    tree = ast.parse(source, filename=where)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "self._is_actor"):
            continue
        first = node.body[0]
        if isinstance(first, ast.AugAssign) and ast.unparse(first.target) == "self.config.actor.ppo_mini_batch_size":
            return compile(ast.Module(body=[node], type_ignores=[]), where, "exec")
    raise SystemExit(f"{where}: no actor normalize-config block")


def normalized_micro(ld: Loaded, mini: int, n: int, global_micro: int, n_gpus: int, sp: int) -> tuple[int, int]:
    """Run the worker's block on a stand-in self: (the rank's mini-batch, rows per micro-batch)."""
    ns = types.SimpleNamespace
    actor = ns(ppo_mini_batch_size=mini, ppo_micro_batch_size=global_micro, ppo_micro_batch_size_per_gpu=None)
    me = ns(_is_actor=True, config=ns(actor=actor, rollout=ns(n=n)), device_mesh=ns(size=lambda: n_gpus),
            ulysses_sequence_parallel_size=sp)
    exec(ld.normalize, {"self": me})  # noqa: S102 (verl's own statement, picked by ast)
    return actor.ppo_mini_batch_size, actor.ppo_micro_batch_size_per_gpu


WORLD_KEYS = ("trainer.n_gpus_per_node", "trainer.nnodes", "actor_rollout_ref.rollout.n")


def case_config(ld: Loaded, config: dict, rows: int) -> tuple[ConfigNode, dict, int, int]:
    """(actor config stand-in, rollout-correction values, micro size, number of mini-batches)."""
    actor = dict(ld.actor_values)
    policy = dict(ld.policy_values)
    rc = dict(ld.rc_values)
    micro = None
    n_mini = 2
    for key, value in config.items():
        if key.startswith(A + "policy_loss."):
            sub = key[len(A + "policy_loss."):]
            if sub not in policy:
                raise SystemExit(f"{ld.rel.label}: unknown key {key}")
            policy[sub] = value
        elif key.startswith(A):
            sub = key[len(A):]
            if sub not in actor:
                raise SystemExit(f"{ld.rel.label}: unknown key {key}")
            if sub == "ppo_micro_batch_size_per_gpu":
                micro = value
            else:
                actor[sub] = value
        elif key.startswith(RC):
            sub = key[len(RC):]
            if sub not in rc:
                raise SystemExit(f"{ld.rel.label}: unknown key {key}")
            rc[sub] = value
        elif key == CALC_LP:
            pass  # checked by the caller: rollout_log_probs only exist when the rollout computes them
        elif key in WORLD_KEYS:
            pass  # the world the global micro-batch size is divided over (below)
        elif key == TRAIN_BS:
            if value != actor["ppo_mini_batch_size"]:
                raise SystemExit("only data.train_batch_size == ppo_mini_batch_size is modelled")
            n_mini = 1
        else:
            raise SystemExit(f"unsupported key {key}")
    global_micro = config.get(A + "ppo_micro_batch_size")
    if global_micro is not None:
        if ld.rel.path != "old_actor":
            raise SystemExit("the global micro-batch size is recorded on the old actor only")
        n_gpus = config.get("trainer.n_gpus_per_node", 8) * config.get("trainer.nnodes", 1)
        per_rank, micro = normalized_micro(ld, config[A + "ppo_mini_batch_size"],
                                           config.get("actor_rollout_ref.rollout.n", 1), global_micro, n_gpus,
                                           config.get(A + "ulysses_sequence_parallel_size", 1))
        # The batch stands for the rank's mini-batch (per_rank rows in the run; the release cases
        # choose sizes where it is the batch's rows, a corpus case's batch has the rows its micro
        # split needs): the split is verl's micro, whatever per_rank is.
        del per_rank
        actor["ppo_micro_batch_size"] = None
    actor["ppo_mini_batch_size"] = rows
    actor["ppo_micro_batch_size_per_gpu"] = rows if micro is None else micro
    node = build_node(ld.config_cls, {**actor, "policy_loss": policy}, {"policy_loss": ld.policy_cls},
                      "actor_rollout_ref.actor")
    return node, rc, actor["ppo_micro_batch_size_per_gpu"], n_mini


# --------------------------------------------------------------------------------------
# Running one case
# --------------------------------------------------------------------------------------


class StopAfterFirstStep(Exception):
    pass


def rollout_correction(ld: Loaded, rc_values: dict, b: dict) -> tuple[Any, Optional[Any]]:
    """Run the release's trainer-side IS / RS step. Returns (response_mask int64, weights or None)."""
    if ld.rc_ns is None:
        raise SystemExit(f"{ld.rel.label}: rollout correction is not loaded")
    batch = DataProtoStandIn({"old_log_probs": b["old"], "rollout_log_probs": b["rollout"],
                              "response_mask": b["mask_i64"].clone()})
    rc_node = build_node(DictConfigNode, rc_values, {}, "algorithm.rollout_correction")
    out, _metrics = ld.rc_ns["compute_rollout_correction_and_add_to_batch"](batch, rc_node)
    mask = out.batch["response_mask"]
    if mask.dtype != torch.int64:
        raise SystemExit(f"rollout correction returned a {mask.dtype} mask")
    return mask, out.batch.get("rollout_is_weights", None)


def bypass(ld: Loaded, rc_values: dict, b: dict, policy_values: dict) -> dict:
    """The driver's bypass step run as the Ray trainer runs it: verl's apply_bypass_mode (or v0.6.1's
    apply_rollout_correction) on the batch, with the driver's copy of actor.policy_loss; the actor
    workers keep their own copy (made at init_workers), so the loss they compute is the configured
    one, against the old_log_probs the driver set. Returns the batch with those old_log_probs."""
    if ld.rc_ns is None:
        raise SystemExit(f"{ld.rel.label}: {RC_HELPER} is not pinned at this release")
    fn = ld.rc_ns.get("apply_bypass_mode") or ld.rc_ns.get("apply_rollout_correction")
    if fn is None:
        raise SystemExit(f"{ld.rel.label}: no bypass step in {RC_HELPER}")
    omegaconf = types.ModuleType("omegaconf")
    omegaconf.open_dict = lambda _cfg: contextlib.nullcontext()
    sys.modules["omegaconf"] = omegaconf
    batch = DataProtoStandIn({"old_log_probs": b["old"].clone(), "rollout_log_probs": b["rollout"],
                              "response_mask": b["mask_i64"].clone()})
    driver_copy = dict(policy_values)
    rc_node = build_node(DictConfigNode, rc_values, {}, "algorithm.rollout_correction")
    fn(batch=batch, rollout_corr_config=rc_node, policy_loss_config=driver_copy)
    return {**b, "old": batch.batch["old_log_probs"]}


def run_case(ld: Loaded, config: dict, b: dict) -> dict:
    rows, width = b["lp"].shape
    cfg, rc_values, micro, n_mini = case_config(ld, config, rows)
    mask_i64 = b["mask_i64"]
    weights = None
    if config.get(RC + "bypass_mode", False):
        if not (config.get(CALC_LP, False) or ld.rollout_calc_lp):
            raise SystemExit(f"{ld.rel.label}: bypass mode needs {CALC_LP}=true")
        b = bypass(ld, rc_values, b, dict(ld.policy_values))
    elif any(k.startswith(RC) for k in config):
        if not (config.get(CALC_LP, False) or ld.rollout_calc_lp):
            raise SystemExit(f"{ld.rel.label}: rollout correction needs {CALC_LP}=true")
        mask_i64, weights = rollout_correction(ld, rc_values, b)
    calc_entropy = bool(cfg.calculate_entropy) if "calculate_entropy" in cfg else False
    need_entropy = calc_entropy or cfg.entropy_coeff != 0
    if need_entropy and b["ent"] is None:
        raise SystemExit("this case needs an entropies stream")
    if ld.rel.path == "old_actor":
        return run_old_actor(ld, cfg, b, mask_i64, weights, micro, n_mini)
    return run_engine(ld, cfg, b, mask_i64, weights, need_entropy)


def run_old_actor(ld: Loaded, cfg: ConfigNode, b: dict, mask_i64: Any, weights: Any, micro: int,
                  n_mini: int) -> dict:
    rows, width = b["lp"].shape
    reps = n_mini
    lp_all = torch.cat([b["lp"]] * reps).detach().clone().requires_grad_(True)
    ent_all = torch.cat([b["ent"]] * reps) if b["ent"] is not None else None
    tensors = {
        "responses": torch.zeros(rows * reps, width, dtype=torch.int64),
        "input_ids": torch.cat([torch.arange(rows * reps, dtype=torch.int64)[:, None],
                                torch.zeros(rows * reps, width, dtype=torch.int64)], dim=1),
        "attention_mask": torch.cat([torch.ones(rows * reps, 1, dtype=torch.int64), torch.cat([mask_i64] * reps)], 1),
        "position_ids": torch.arange(width + 1, dtype=torch.int64).expand(rows * reps, width + 1).clone(),
        "response_mask": torch.cat([mask_i64] * reps),
        "old_log_probs": torch.cat([b["old"]] * reps),
        "advantages": torch.cat([b["adv"]] * reps),
        "ref_log_prob": torch.cat([b["ref"]] * reps),
    }
    if weights is not None:
        tensors["rollout_is_weights"] = torch.cat([weights] * reps)
    data = DataProtoStandIn(tensors, {}, {"temperature": 1.0, "pad_token_id": 0})
    forwards: list[list[int]] = []
    losses: list[float] = []
    captured: dict[str, Any] = {}

    def forward(micro_batch: Any, temperature: float = 1.0, calculate_entropy: bool = False) -> Any:
        del temperature
        idx = micro_batch["input_ids"][:, 0]
        forwards.append([int(i) for i in idx])
        log_prob = lp_all.index_select(0, idx)
        entropy = ent_all.index_select(0, idx) if calculate_entropy else None
        if ld.outputs_dict:
            out = {"log_probs": log_prob}
            if calculate_entropy:
                out["entropys"] = entropy
            return out
        return entropy, log_prob

    def optimizer_step() -> Any:
        captured["grad"] = None if lp_all.grad is None else lp_all.grad.detach().clone()
        raise StopAfterFirstStep()

    fake_self = types.SimpleNamespace(
        actor_module=types.SimpleNamespace(train=lambda: None),
        actor_optimizer=types.SimpleNamespace(zero_grad=lambda: None),
        config=cfg, ulysses_sequence_parallel_size=1, scaler=None, use_prefix_grouper=False,
        _forward_micro_batch=forward, _optimizer_step=optimizer_step,
    )
    real_backward = torch.Tensor.backward

    def recording_backward(self: Any, *args: Any, **kwargs: Any) -> Any:
        losses.append(float(self.detach().item()))
        return real_backward(self, *args, **kwargs)

    torch.Tensor.backward = recording_backward
    try:
        ld.run_entry(fake_self, data)
        raise SystemExit("update_policy returned without an optimizer step")
    except StopAfterFirstStep:
        pass
    finally:
        torch.Tensor.backward = real_backward
    if len(forwards) != len(losses):
        raise SystemExit(f"{len(forwards)} forwards but {len(losses)} backward calls")
    expect = [list(range(i, min(i + micro, rows))) for i in range(0, rows, micro)]
    if forwards != expect:
        raise SystemExit(f"micro-batches {forwards}, expected {expect}")
    total = 0.0
    for value in losses:
        total += value
    grad = captured["grad"][:rows]
    if reps > 1 and captured["grad"][rows:].abs().sum().item() != 0.0:
        raise SystemExit("gradient reached the second mini-batch")
    return {"loss": total, "grad": grad, "micro_batches": [{"rows": r, "loss": v} for r, v in zip(forwards, losses)]}


def run_engine(ld: Loaded, cfg: ConfigNode, b: dict, mask_i64: Any, weights: Any, need_entropy: bool) -> dict:
    rows, _width = b["lp"].shape
    lp = b["lp"].detach().clone().requires_grad_(True)
    items = {
        "response_mask": mask_i64, "old_log_probs": b["old"], "advantages": b["adv"], "ref_log_prob": b["ref"],
        # global batch info of a single data-parallel rank holding the whole mini-batch:
        "dp_size": 1, "batch_num_tokens": int(mask_i64.sum().item()), "global_batch_size": rows,
    }
    if weights is not None:
        items["rollout_is_weights"] = weights
    if not cfg.use_kl_loss:
        del items["ref_log_prob"]  # the trainer only computes ref log-probs when a reference is used
    model_output = {"log_probs": lp}
    if need_entropy:
        model_output["entropy"] = b["ent"]
    loss, _metrics = ld.run_entry(cfg, model_output, TensorDictStandIn(items))
    (grad,) = torch.autograd.grad(loss, lp)
    value = float(loss.detach().item())
    return {"loss": value, "grad": grad, "micro_batches": [{"rows": list(range(rows)), "loss": value}]}


# --------------------------------------------------------------------------------------
# Batches
# --------------------------------------------------------------------------------------

EDGES = (0.8, 0.9, 1.2, 1.28, 1.5, 3.0, 2.0, 1.0 / 1.05, 1.05, 0.95)
BATCH_RULE = (
    "Every case is ONE WHOLE MINI-BATCH ON ONE RANK (dp_size 1, rollout.n 1). Streams are "
    "[B, T] float64, right-padded; advantages are given per row ([B]) and passed to verl as "
    "the [B, T] tensor adv[b, t] = advantages[b] where response_mask[b, t] else 0.0; "
    "response_mask is passed as torch.int64 (the dtype of verl's batch response_mask, see "
    "rules) and the engine's ppo_loss turns it into bool itself. 'builtin' is "
    "test/fixtures/polgrad/which_example.json key 'batch' (B=4, T=8; its logprobs / "
    "old_logprobs at padding are used as stored; ref_logprobs := old_logprobs; it has no "
    "entropies and no rollout_logprobs). Random batches (named random0 (B=4), random1 "
    "(B=6), random_empty (B=4, one row emptied)) are the same at every release: seed = "
    "zlib.crc32(name) & 0x7FFFFFFF, attempt k >= 1 uses crc32(name + ':' + str(k)); draws "
    "from torch.Generator().manual_seed(seed), float64, in this order: T = randint(5..8); "
    "row lengths L_b = randint(1..T); for random_empty row r = randint(0..B-1) gets L_r = 0; "
    "logprobs = U[-3, -0.5]; old = logprobs + 0.3 * N(0,1); ref = logprobs + 0.1 * N(0,1); "
    "rollout_logprobs = old + 0.05 * N(0,1); advantages ~ N(0,1) [B]; entropies = U[0.1, 3] "
    "(randint via torch.randint, U via low + (high-low) * torch.rand, N via torch.randn, each "
    "with the generator). Every stream is then 0.0 at padding. An attempt is rejected unless "
    "some row has 0 < L < T, every old / ref / rollout value at a response token is < -0.01 "
    "(so exp() < 1 for DPPO's binary KL), some response token has A > 0 and ratio "
    "exp(lp - old) > 1.2 and some has A < 0 and ratio < 0.8 (both PPO clip sides bind), and "
    "token ratios, sequence-mean ratios and rollout IS ratios exp(old - rollout) stay more "
    "than 1e-9 away from the edges 0.8, 0.9, 1.2, 1.28, 1.5, 2.0, 3.0, 0.95, 1/1.05, 1.05. "
    "Each case embeds its batch (or the string 'builtin'). The recorded numbers: loss = the "
    "sum, in micro-batch order, of the scalar losses passed to backward (old actor: each "
    "already multiplied by upstream's micro-batch factor; engine: the single ppo_loss value); "
    "grad_logprobs = d loss / d logprobs by torch autograd (old actor: the leaf gradient "
    "accumulated by upstream's backward calls at the optimizer step; engine: "
    "torch.autograd.grad), float64, [B, T], as produced (zeros at padding, possibly -0.0); "
    "micro_batches lists each micro-batch's row indices (explicit list, in order) and its "
    "backward loss. old/ref/rollout log-probs, advantages and entropies carry no gradient: "
    "in a real model the entropy depends on the logits too, that path is not in "
    "grad_logprobs. Optimizer-side gradient clipping (grad_clip) is not applied."
)


def draw_random(name: str, rows: int, empty_row: bool) -> dict:
    for attempt in range(1000):
        seed = zlib.crc32((name if attempt == 0 else f"{name}:{attempt}").encode()) & 0x7FFFFFFF
        g = torch.Generator().manual_seed(seed)
        width = int(torch.randint(5, 9, (1,), generator=g).item())
        lengths = [int(torch.randint(1, width + 1, (1,), generator=g).item()) for _ in range(rows)]
        if empty_row:
            lengths[int(torch.randint(0, rows, (1,), generator=g).item())] = 0
        mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]

        def u(lo: float, hi: float) -> Any:
            return lo + (hi - lo) * torch.rand(rows, width, generator=g, dtype=torch.float64)

        lp = u(-3.0, -0.5)
        old = lp + 0.3 * torch.randn(rows, width, generator=g, dtype=torch.float64)
        ref = lp + 0.1 * torch.randn(rows, width, generator=g, dtype=torch.float64)
        rollout = old + 0.05 * torch.randn(rows, width, generator=g, dtype=torch.float64)
        adv = torch.randn(rows, generator=g, dtype=torch.float64)
        ent = u(0.1, 3.0)
        zero = torch.zeros((), dtype=torch.float64)
        lp, old, ref, rollout, ent = (torch.where(mask, x, zero) for x in (lp, old, ref, rollout, ent))
        if not any(0 < n < width for n in lengths):
            continue
        if max(old[mask].max().item(), ref[mask].max().item(), rollout[mask].max().item()) >= -0.01:
            continue
        a2 = adv[:, None].expand(rows, width)
        ratio = torch.exp(lp - old)
        if not (bool((mask & (a2 > 0) & (ratio > 1.2)).any()) and bool((mask & (a2 < 0) & (ratio < 0.8)).any())):
            continue
        lens = mask.sum(-1).clamp(min=1)
        seq_ratio = torch.exp(((lp - old) * mask).sum(-1) / lens)
        is_ratio = torch.exp(old - rollout)
        probes = torch.cat([ratio[mask], seq_ratio, is_ratio[mask], torch.exp(((old - rollout) * mask).sum(-1))])
        if any(bool((probes - e).abs().min() <= 1e-9) for e in EDGES):
            continue
        return {"name": name, "seed": seed, "lp": lp, "old": old, "ref": ref, "rollout": rollout, "adv_row": adv,
                "ent": ent, "mask": mask}
    raise SystemExit(f"{name}: no acceptable draw")


def load_builtin() -> dict:
    data = json.loads(BUILTIN_BATCH_FILE.read_text(encoding="utf-8"))["batch"]
    f64 = torch.float64
    lp = torch.tensor(data["logprobs"], dtype=f64)
    old = torch.tensor(data["old_logprobs"], dtype=f64)
    mask = torch.tensor(data["response_mask"], dtype=torch.bool)
    return {"name": "builtin", "lp": lp, "old": old, "ref": old.clone(), "rollout": None,
            "adv_row": torch.tensor(data["advantages"], dtype=f64), "ent": None, "mask": mask}


def prepared(raw: dict) -> dict:
    mask = raw["mask"]
    rows, width = mask.shape
    adv = torch.where(mask, raw["adv_row"][:, None].expand(rows, width), torch.zeros((), dtype=torch.float64))
    return {"lp": raw["lp"], "old": raw["old"], "ref": raw["ref"], "rollout": raw["rollout"], "ent": raw["ent"],
            "adv": adv.contiguous(), "mask_i64": mask.to(torch.int64)}


def batch_json(raw: dict) -> Any:
    if raw["name"] == "builtin":
        return "builtin"
    return {
        "logprobs": raw["lp"].tolist(), "old_logprobs": raw["old"].tolist(), "ref_logprobs": raw["ref"].tolist(),
        "rollout_logprobs": raw["rollout"].tolist(), "advantages": raw["adv_row"].tolist(),
        "response_mask": raw["mask"].tolist(), "entropies": raw["ent"].tolist(),
    }


# --------------------------------------------------------------------------------------
# Case lists
# --------------------------------------------------------------------------------------


def case_specs(ld: Loaded, registry: dict, agg_modes: list[str]) -> list[tuple[str, dict, list[str]]]:
    """(case key, config, batch names) for one release."""
    specs: list[tuple[str, dict, list[str]]] = [("default", {}, ["builtin"])]
    if ld.rel.label in ("v0.4.1", "v0.5.0"):
        # The deprecated global micro-batch size, converted by the worker's own block (issue 33):
        # 4 // (2 GPUs // sp 1) = 2 rows on random0 (B = 4, the rank's mini-batch 8·1 // 2); on
        # 2 nodes × 2 GPUs, 8 // 4 = 2; on random1 (B = 6), 6 // 2 = 3 (sequence parallelism
        # needs model.use_remove_padding, a key these cases do not set). From
        # v0.6.0 the worker rebuilds ActorConfig from its converted copy, where both micro keys
        # are set, and ActorConfig refuses that (ValueError): not recorded there.
        world = {"actor_rollout_ref.rollout.n": 1, "trainer.nnodes": 1, "trainer.n_gpus_per_node": 2}
        specs.append(("ppo_micro_batch_size=4,n_gpus=2",
                      {**world, A + "ppo_mini_batch_size": 8, A + "ppo_micro_batch_size": 4}, ["random0"]))
        specs.append(("ppo_micro_batch_size=8,nnodes=2",
                      {**world, "trainer.nnodes": 2, A + "ppo_mini_batch_size": 16, A + "ppo_micro_batch_size": 8},
                      ["random0"]))
        specs.append(("ppo_micro_batch_size=6,n_gpus=2",
                      {**world, A + "ppo_mini_batch_size": 12, A + "ppo_micro_batch_size": 6}, ["random1"]))
    if not ld.rel.full:
        return specs
    std = ["builtin", "random0", "random1"]
    rnd = ["random0", "random1"]
    with_empty = std + ["random_empty"]
    for mode in agg_modes:
        if mode != ld.actor_values["loss_agg_mode"]:
            specs.append((f"loss_agg_mode={mode}", {A + "loss_agg_mode": mode},
                          with_empty if mode.startswith("seq-mean") else std))
    for mode in WANTED_LOSS_MODES:
        if mode not in registry:
            continue
        cfg = {A + "policy_loss.loss_mode": mode}
        if mode == "dro":
            cfg[A + "policy_loss.dro_beta"] = 0.1
        specs.append((f"policy_loss.loss_mode={mode}", cfg,
                      with_empty if mode in ("gspo", "sapo", "geo_mean") else std))
    specs += [
        ("clip_ratio=0.3", {A + "clip_ratio": 0.3}, std),
        ("clip_ratio_low=0.1", {A + "clip_ratio_low": 0.1}, std),
        ("clip_ratio_high=0.28", {A + "clip_ratio_high": 0.28}, std),
        ("clip_ratio_c=1.5", {A + "clip_ratio_c": 1.5}, std),
        ("loss_scale_factor=16", {A + "loss_agg_mode": "seq-mean-token-sum-norm", A + "loss_scale_factor": 16},
         with_empty),
        ("use_kl_loss=true", {A + "use_kl_loss": True}, std),
    ]
    for kind in KL_TYPES:
        specs.append((f"use_kl_loss=true,kl_loss_type={kind}", {A + "use_kl_loss": True, A + "kl_loss_type": kind},
                      std))
    specs += [
        ("use_kl_loss=true,kl_loss_coef=0.1", {A + "use_kl_loss": True, A + "kl_loss_coef": 0.1}, std),
        ("entropy_coeff=0.01", {A + "entropy_coeff": 0.01}, rnd),
    ]
    # The KL and entropy terms are aggregated with loss_agg_mode even where the loss mode fixes the
    # policy term's own aggregation (gspo, sapo) or takes a plain mean (geo_mean): ppo_loss and
    # update_policy pass config.loss_agg_mode to agg_loss for both (issue 33).
    for mode in ("gspo", "sapo", "geo_mean"):
        if mode in registry:
            specs.append((f"policy_loss.loss_mode={mode},use_kl_loss=true,entropy_coeff=0.01,loss_agg_mode=token-mean",
                          {A + "policy_loss.loss_mode": mode, A + "use_kl_loss": True, A + "entropy_coeff": 0.01,
                           A + "loss_agg_mode": "token-mean"}, rnd))
    if "gspo" in registry and "seq-mean-token-sum-norm" in agg_modes:
        specs.append(("policy_loss.loss_mode=gspo,use_kl_loss=true,loss_agg_mode=seq-mean-token-sum-norm",
                      {A + "policy_loss.loss_mode": "gspo", A + "use_kl_loss": True,
                       A + "loss_agg_mode": "seq-mean-token-sum-norm"}, rnd))
        specs.append(("policy_loss.loss_mode=gspo,use_kl_loss=true,loss_agg_mode=seq-mean-token-sum-norm,loss_scale_factor=16",
                      {A + "policy_loss.loss_mode": "gspo", A + "use_kl_loss": True,
                       A + "loss_agg_mode": "seq-mean-token-sum-norm", A + "loss_scale_factor": 16}, rnd))
    if "sapo" in registry:
        specs.append(("policy_loss.loss_mode=sapo,tau_pos=2.0,tau_neg=3.0",
                      {A + "policy_loss.loss_mode": "sapo", A + "tau_pos": 2.0, A + "tau_neg": 3.0}, std))
    if ld.rel.path == "old_actor":
        specs.append(("ppo_micro_batch_size_per_gpu=2", {A + "ppo_micro_batch_size_per_gpu": 2}, std))
        specs.append(("on_policy:data.train_batch_size=256", {TRAIN_BS: 256}, std))
    lp_key = {} if ld.rollout_calc_lp else {CALC_LP: True}
    specs += [
        ("rollout_correction.rollout_is=token",
         {**lp_key, RC + "rollout_is": "token", RC + "rollout_is_threshold": 2.0}, rnd),
        ("rollout_correction.rollout_is=sequence", {**lp_key, RC + "rollout_is": "sequence"}, rnd),
        ("rollout_correction.rollout_rs=token_k1",
         {**lp_key, RC + "rollout_rs": "token_k1", RC + "rollout_rs_threshold": "0.95_1.05"}, rnd),
        ("rollout_correction.rollout_is=token,rollout_is_batch_normalize=true",
         {**lp_key, RC + "rollout_is": "token", RC + "rollout_is_batch_normalize": True}, rnd),
        ("rollout_correction.rollout_is=sequence,rollout_is_batch_normalize=true",
         {**lp_key, RC + "rollout_is": "sequence", RC + "rollout_is_batch_normalize": True}, rnd),
        # Rejection with IS weights at the sequence level or batch-normalised: verl forms the
        # weights on the mask before it rejects (issue 33).
        # bypass_mode as the Ray trainer runs it: old_log_probs := rollout_log_probs (the driver's
        # apply_bypass_mode), the workers' configured loss, no rollout correction (issue 33).
        ("rollout_correction.bypass_mode=true",
         {**lp_key, RC + "bypass_mode": True}, rnd),
        ("rollout_correction.bypass_mode=true,loss_type=reinforce,rollout_is=token,rollout_rs=token_k1",
         {**lp_key, RC + "bypass_mode": True, RC + "loss_type": "reinforce", RC + "rollout_is": "token",
          RC + "rollout_rs": "token_k1", RC + "rollout_rs_threshold": "0.95_1.05"}, rnd),
        ("rollout_correction.rollout_is=sequence,rollout_rs=token_k1",
         {**lp_key, RC + "rollout_is": "sequence", RC + "rollout_rs": "token_k1",
          RC + "rollout_rs_threshold": "0.95_1.05"}, rnd),
        ("rollout_correction.rollout_is=token,rollout_is_batch_normalize=true,rollout_rs=token_k1",
         {**lp_key, RC + "rollout_is": "token", RC + "rollout_is_batch_normalize": True,
          RC + "rollout_rs": "token_k1", RC + "rollout_rs_threshold": "0.95_1.05"}, rnd),
    ]
    if ld.rel.path == "engine":
        # v0.8.0+: a "lower_upper" threshold masks the weights outside the bounds (IcePop); the
        # batches keep every rollout IS ratio 1e-9 away from 0.95 and 1.05.
        specs.append(("rollout_correction.rollout_is=token,rollout_is_threshold=0.95_1.05",
                      {**lp_key, RC + "rollout_is": "token", RC + "rollout_is_threshold": "0.95_1.05"}, rnd))
    if ld.rel.label == "1dda039b":
        specs.append(("combined", {
            A + "loss_agg_mode": "seq-mean-token-mean", A + "clip_ratio_high": 0.28, A + "use_kl_loss": True,
            A + "kl_loss_type": "low_var_kl", A + "kl_loss_coef": 0.01, A + "entropy_coeff": 0.001,
            **lp_key, RC + "rollout_is": "token", RC + "rollout_is_threshold": 2.0,
        }, ["random0", "random1", "random_empty"]))
    # Every loss-relevant key at once (issue 14's acceptance), bounds on the batches' kink list:
    # clip 0.2/0.28 (0.8, 1.28), dual clip 3.0, IS 2.0, rejection 0.95_1.05. The engine takes
    # loss_scale_factor; the old actor never passes it to agg_loss (inert there) and splits into
    # micro-batches of 2 rows.
    every = {
        A + "policy_loss.loss_mode": "vanilla", A + "loss_agg_mode": "seq-mean-token-sum-norm",
        A + "loss_scale_factor": 16, A + "clip_ratio": 0.25, A + "clip_ratio_low": 0.2,
        A + "clip_ratio_high": 0.28, A + "clip_ratio_c": 3.0, A + "use_kl_loss": True, A + "kl_loss_type": "k2",
        A + "kl_loss_coef": 0.05, A + "entropy_coeff": 0.002, A + "ppo_micro_batch_size_per_gpu": 2,
        A + "ppo_epochs": 1, A + "use_dynamic_bsz": False,
        **lp_key, RC + "rollout_is": "token", RC + "rollout_is_threshold": 2.0,
        RC + "rollout_is_batch_normalize": False, RC + "rollout_rs": "token_k1",
        RC + "rollout_rs_threshold": "0.95_1.05",
    }
    if "sapo" in registry:
        every.update({A + "tau_pos": 2.0, A + "tau_neg": 3.0})
    specs.append(("every_loss_key", every, ["random0", "random1", "random_empty"]))
    return specs


def agg_modes_of(ld_core_tree: ast.Module) -> list[str]:
    """The loss_agg_mode strings agg_loss compares against, in source order."""
    fn = [n for n in ld_core_tree.body if isinstance(n, ast.FunctionDef) and n.name == "agg_loss"][0]
    modes: list[str] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "loss_agg_mode":
            for comp in node.comparators:
                vals = [comp.value] if isinstance(comp, ast.Constant) else [
                    e.value for e in getattr(comp, "elts", []) if isinstance(e, ast.Constant)]
                for v in vals:
                    if isinstance(v, str) and v not in modes:
                        modes.append(v)
    return modes


# --------------------------------------------------------------------------------------
# Rules prose (per release)
# --------------------------------------------------------------------------------------


def line_of(source: str, node: ast.AST, needle: str) -> int:
    lines = source.splitlines()
    for i in range(node.lineno - 1, node.end_lineno):
        if needle in lines[i]:
            return i + 1
    raise SystemExit(f"'{needle}' not found in the picked function")


AGG_TEXT = {
    "v0.4.1": "token-mean = masked_mean (sum(l*m) / (sum(m) + 1e-8); with the int64 mask sum(m) + 1e-8 is a "
              "float32 tensor equal to sum(m), so the 1e-8 has no effect); seq-mean-token-sum = mean over ALL "
              "rows of the row sums; seq-mean-token-mean = mean over ALL rows of row sum / row length (an empty "
              "row gives 0/0 = NaN); seq-mean-token-sum-norm = sum of all row sums / mask.shape[-1] (T)",
    "v0.6.1": "token-mean = masked_mean (as v0.4.1); seq-mean-token-sum = masked_mean of row sums over rows with "
              "L > 0 (+1e-8 in the denominator); seq-mean-token-mean = row sum / (L + 1e-8) (float32 denominator "
              "with the int64 mask, so exactly L), averaged over rows with L > 0 (+1e-8); seq-mean-token-sum-norm "
              "unchanged (sum of row sums / T)",
    "v0.7.0": "agg_loss gains dp_size / batch_num_tokens / global_batch_size / loss_scale_factor arguments, but "
              "the old actor passes none of them (policy losses pass **config.global_batch_info, which is the "
              "dataclass default {} in the old actor): token-mean = masked_sum / sum(m) (no 1e-8); seq-mean-* "
              "divide the sum over non-empty rows by the number of non-empty rows; seq-mean-token-sum-norm = sum "
              "of row sums / T (loss_scale_factor never reaches agg_loss)",
    "v0.7.1": "as v0.7.0 except seq-mean-token-sum-norm = (sum over non-empty rows of row sums / number of "
              "non-empty rows) / T; loss_scale_factor still never reaches agg_loss in the old actor, so "
              "setting it has no effect there",
    "engine": "agg_loss with the global batch info: token-mean = masked_sum / batch_num_tokens * dp_size; "
              "token-sum (v0.9.0 and 1dda039b only) = masked_sum * dp_size; seq-mean-token-sum[-norm] = sum over "
              "non-empty rows of row sums / global_batch_size * dp_size (then / loss_scale_factor, or / T when "
              "it is null, for -norm); seq-mean-token-mean = sum over non-empty rows of row sum / (L + 1e-8) / "
              "global_batch_size * dp_size. global_batch_size counts every row, also emptied ones",
}


def rules_text(ld: Loaded, source: str) -> str:
    rel = ld.rel
    fn = ld.entry_node
    if rel.path == "old_actor":
        ga = line_of(source, fn, "self.gradient_accumulation = ")
        bw = line_of(source, fn, ".backward()")
        if rel.label == "v0.4.1":
            mask_line = line_of(source, fn, "response_mask = attention_mask[")
            mask_src = ("response_mask = attention_mask[:, -response_length:] (line %d), the int64 attention mask "
                        "of the rollout batch" % mask_line)
        else:
            mask_line = line_of(source, fn, 'response_mask = model_inputs["response_mask"]')
            mask_src = ("the batch's response_mask (line %d), int64: ray_trainer.compute_response_mask slices the "
                        "int64 attention_mask and the agent loop builds it from tokenizer.pad output" % mask_line)
        agg_key = {"v0.4.1": "v0.4.1", "v0.5.0": "v0.4.1", "v0.6.0": "v0.4.1", "v0.6.1": "v0.6.1",
                   "v0.7.0": "v0.7.0", "v0.7.1": "v0.7.1"}[rel.label]
        on_policy = ""
        if rel.label not in ("v0.4.1", "v0.5.0"):
            op = line_of(source, fn, "on_policy = ")
            on_policy = (f" When the rank's data is a single mini-batch and ppo_epochs == 1 (line {op}: "
                         "on_policy), old_log_prob is replaced by log_prob.detach() (ratio 1); the recorder feeds "
                         "two copies of the batch as two mini-batches (defaults: train_batch_size 1024 / "
                         "ppo_mini_batch_size 256 = 4 mini-batches) and records the first, except the "
                         "on_policy:data.train_batch_size=256 case, which feeds one.")
        ent = ("entropy term: when entropy_coeff != 0, policy_loss = pg_loss - entropy_coeff * agg_loss(entropy, "
               "mask, loss_agg_mode)")
        if rel.label in ("v0.7.0", "v0.7.1"):
            ent = ("entropy term: entropy is computed when calculate_entropy or entropy_coeff != 0 and subtracted "
                   "as entropy_coeff * agg_loss(entropy, mask, loss_agg_mode) only when entropy_coeff != 0")
        vanilla = ("loss_mode vanilla calls compute_policy_loss directly with clip_ratio_low / clip_ratio_high "
                   "(falling back to clip_ratio) and clip_ratio_c; other modes go through get_policy_loss_fn"
                   if rel.label in ("v0.4.1", "v0.5.0") else
                   "every loss_mode (vanilla included) goes through get_policy_loss_fn(loss_mode)(old_log_prob, "
                   "log_prob, advantages, response_mask, loss_agg_mode, config, rollout_is_weights)")
        return (
            f"Legacy FSDP actor (verl/workers/actor/dp_actor.py DataParallelPPOActor.update_policy, executed). "
            f"Split: the rank's mini-batch (ppo_mini_batch_size * rollout.n / dp rows, here B) is cut into "
            f"contiguous micro-batches of ppo_micro_batch_size_per_gpu rows; gradient_accumulation = "
            f"ppo_mini_batch_size // ppo_micro_batch_size_per_gpu (line {ga}) and each micro-batch's total loss "
            f"is multiplied by 1 / gradient_accumulation before backward (backward at line {bw}); no global "
            f"normaliser: every aggregate uses the micro-batch's own rows and tokens. Leaving "
            f"ppo_micro_batch_size(_per_gpu) unset is rejected by the trainer's config check "
            f"({'ray_trainer _validate_config check_mutually_exclusive' if rel.label in ('v0.4.1', 'v0.5.0') else 'ActorConfig.__post_init__'}) "
            f"unless use_dynamic_bsz; the recorder runs 'unset' as ppo_micro_batch_size_per_gpu = B (K = 1, factor "
            f"1). Mask: {mask_src}; passed unchanged to every loss function. Policy loss: {vanilla}. "
            f"Order: policy_loss = pg_loss; {ent}; KL term: when use_kl_loss, policy_loss += kl_loss_coef * "
            f"agg_loss(kl_penalty(log_prob, ref_log_prob, kl_loss_type), mask, loss_agg_mode). All three use the "
            f"same loss_agg_mode and the micro-batch's statistics. Aggregation at this release: {AGG_TEXT[agg_key]}."
            f"{on_policy}"
            + (" Rollout correction (algorithm.rollout_correction, needs rollout_log_probs, i.e. "
               "actor_rollout_ref.rollout.calculate_log_probs): ray_trainer computes rollout_is_weights = "
               "clamp(exp(old_log_prob - rollout_log_prob) (token) or exp(clamp(row sum of that log ratio, +-20)) "
               "(sequence), max=rollout_is_threshold) * mask, detached, and rollout_rs rejections zero the batch "
               "response_mask, once for the whole batch before the actor update "
               "(rollout_corr_helper.compute_rollout_correction_and_add_to_batch); the actor multiplies the "
               "per-token policy loss by the weights (before aggregation) and uses the modified mask everywhere. "
               "rollout_log_probs are not put in the actor batch: in update_policy they only feed metrics "
               "(compute_rollout_corr_metrics_from_logprobs)." if RC_HELPER in rel.files else "")
        )
    mask_line = line_of(source, fn, 'response_mask = data["response_mask"].to(bool)')
    gbi = line_of(source, fn, 'config.global_batch_info["dp_size"]')
    ent_line = line_of(source, fn, "policy_loss -= entropy_coeff * entropy_loss")
    kl_line = line_of(source, fn, "policy_loss += kl_loss * config.kl_loss_coef")
    return (
        f"Engine worker (verl/workers/utils/losses.py ppo_loss, executed; the legacy dp_actor.py no longer exists). "
        f"ppo_loss copies the global batch info into config.global_batch_info (line {gbi}): dp_size, "
        f"batch_num_tokens = the mini-batch's response-mask token count summed over dp ranks "
        f"(fsdp transformer_impl forward_backward_batch: data['loss_mask'].sum() all-reduced; loss_mask is the "
        f"response_mask), global_batch_size = ppo_mini_batch_size * rollout.n (the trainer's nominal rows, not "
        f"the rows actually present), loss_scale_factor = config.loss_scale_factor. Each micro-batch's loss is "
        f"backpropagated as is (no 1/K factor); with these global normalisers the sum over micro-batches equals "
        f"one call on the whole mini-batch, which is what is recorded (dp_size 1, batch_num_tokens = sum(mask), "
        f"global_batch_size = B). Exception: geo_mean ignores loss_agg_mode and global_batch_info and returns "
        f"torch.mean over the micro-batch's rows, so upstream its summed loss grows with the number of "
        f"micro-batches; the recorded value is the one-micro-batch value. Mask: response_mask.to(bool) (line "
        f"{mask_line}), used for every term. Policy loss: get_policy_loss_fn(loss_mode)(..., config, "
        f"rollout_is_weights), which aggregates with **config.global_batch_info. Entropy (present when "
        f"calculate_entropy or entropy_coeff != 0): policy_loss -= entropy_coeff * agg_loss(entropy, mask, "
        f"loss_agg_mode, **global_batch_info) (line {ent_line}). KL: when use_kl_loss, policy_loss += "
        f"kl_loss_coef * agg_loss(kl_penalty(log_prob, ref_log_prob, kl_loss_type), mask, loss_agg_mode, "
        f"**global_batch_info) (line {kl_line}). Aggregation: {AGG_TEXT['engine']}."
        + (" Rollout correction: as in the old actor, ray_trainer computes rollout_is_weights (token: "
           "exp(clamp(old - rollout, +-20)); sequence: exp(clamp(row sum of old - rollout, +-20)); times mask; "
           "clamp(max=threshold), or IcePop zeroing for a 'lower_upper' threshold; detached) and applies "
           "rollout_rs to the batch response_mask before the update; the modified mask also sets batch_num_tokens."
           if RC_HELPER in rel.files else "")
    )


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def to_json_floats(values: Any) -> Any:
    if isinstance(values, list):
        return [to_json_floats(v) for v in values]
    if isinstance(values, float) and not math.isfinite(values):
        raise SystemExit("non-finite output")
    return values


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verl-git", default=os.environ.get("VERL_GIT"),
                        help="git directory (bare) of verl-project/verl (default: $VERL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output JSON file")
    args = parser.parse_args()
    if not args.verl_git:
        parser.error("--verl-git (or $VERL_GIT) is required")
    git_dir = Path(args.verl_git).resolve()
    if (git_dir / ".git").is_dir():
        git_dir = git_dir / ".git"
    sys.dont_write_bytecode = True
    import torch as _torch  # noqa: PLC0415
    torch = _torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    if "--verl-git" not in sys.argv[1:]:
        command = f"VERL_GIT={shlex.quote(args.verl_git)} {command}"

    raw_batches = {"builtin": load_builtin(), "random0": draw_random("verl-releases/random0", 4, False),
                   "random1": draw_random("verl-releases/random1", 6, False),
                   "random_empty": draw_random("verl-releases/random_empty", 4, True)}
    batches = {k: prepared(v) for k, v in raw_batches.items()}

    releases_prov: dict[str, Any] = {}
    cases: list[dict] = []
    notes: list[str] = []
    raised: list[str] = []
    for rel in RELEASES:
        sources = read_release(git_dir, rel)
        core_tree = ast.parse(sources[CORE])
        registry = registered_losses(core_tree)
        wanted = [m for m in WANTED_LOSS_MODES if m in registry] if rel.full else []
        ld = load_release(rel, sources, wanted)
        ld.rollout_calc_lp = bool(yaml_rollout_calc_lp(sources[rel.yaml]))
        ld.normalize = normalize_block(sources[FSDP_WORKERS], FSDP_WORKERS) if FSDP_WORKERS in sources else None
        notes += ld.notes
        entry_src = sources[DP_ACTOR if rel.path == "old_actor" else LOSSES]
        agg_modes = agg_modes_of(core_tree)
        for key, config, batch_names in case_specs(ld, registry, agg_modes):
            for bname in batch_names:
                try:
                    result = run_case(ld, config, batches[bname])
                except NotImplementedError:
                    # upstream raises for this configuration (e.g. kl_loss_type k3+ before the
                    # '+'-suffix fix): nothing to record; listed in provenance.upstream_raises
                    raised.append(f"{rel.label}/{key}/{bname}")
                    continue
                grad = result["grad"]
                if not bool(torch.isfinite(grad).all()) or not math.isfinite(result["loss"]):
                    raise SystemExit(f"{rel.label}/{key}/{bname}: non-finite output")
                pad = ~raw_batches[bname]["mask"]
                if grad[pad].abs().sum().item() != 0.0:
                    raise SystemExit(f"{rel.label}/{key}/{bname}: gradient at padding")
                cases.append({
                    "name": f"{rel.label}/{key}/{bname}", "release": rel.label, "config": config,
                    "batch": batch_json(raw_batches[bname]), "loss": to_json_floats(result["loss"]),
                    "grad_logprobs": to_json_floats(grad.tolist()),
                    "micro_batches": [{"rows": m["rows"], "loss": to_json_floats(m["loss"])}
                                      for m in result["micro_batches"]],
                })
        releases_prov[rel.label] = {
            "tag": rel.tag, "commit": rel.commit, "files": dict(sorted(rel.files.items())),
            "picked": ld.picked, "path": rel.path, "rules": rules_text(ld, entry_src),
            "loss_agg_modes": agg_modes, "registered_loss_modes": sorted(registry),
        }

    builtin_sha = hashlib.sha256(BUILTIN_BATCH_FILE.read_bytes()).hexdigest()
    payload = {
        "provenance": {
            "tool": TOOL_PATH, "command": command, "repo": "verl-project/verl",
            "python": platform.python_version(), "torch": torch.__version__, "dtype": "float64",
            "releases": releases_prov, "stubs": STUBS, "batch_rule": BATCH_RULE,
            "skipped": SKIPPED,
            "builtin_batch": {"path": "test/fixtures/polgrad/which_example.json", "key": "batch",
                              "sha256": builtin_sha},
            "random_batch_seeds": {k: v["seed"] for k, v in sorted(raw_batches.items()) if "seed" in v},
            "notes": notes,
            "upstream_raises": raised,
        },
        "cases": cases,
    }
    text = json.dumps(payload, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    counts: dict[str, int] = {}
    for case in cases:
        counts[case["release"]] = counts.get(case["release"], 0) + 1
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(cases)} cases)")
    for label, n in counts.items():
        print(f"  {label}: {n}")
    for note in notes:
        print(f"note: {note}")


def yaml_rollout_calc_lp(text: str) -> Any:
    import yaml  # noqa: PLC0415

    return yaml.safe_load(text)["actor_rollout_ref"]["rollout"].get("calculate_log_probs", False)


if __name__ == "__main__":
    main()
