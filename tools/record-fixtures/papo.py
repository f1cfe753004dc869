#!/usr/bin/env python3
"""Record PAPO conformance fixtures from the real TRL v0.29.1 ``PAPOTrainer._compute_loss``.

This script runs the *real* loss code of TRL's PAPO trainer (tag v0.29.1, commit 617406a4)
on seeded ragged batches and writes only numbers plus provenance as JSON to
``test/fixtures/frameworks/trl-papo@v0.29.1.json``. No TRL code is copied into this
repository: at record time the recorder reads the pinned files from a TRL checkout or a
bare git mirror, checks their SHA-256 against the values pinned below, extracts the methods
it needs with ``ast`` and executes them with a fake ``self``. Nothing of TRL is imported
(TRL imports datasets/transformers/accelerate, none of which the loss arithmetic needs).

What is real and what is stubbed:

* real (extracted with ``ast`` from the pinned files, executed unchanged):
  ``PAPOTrainer._compute_loss`` and ``PAPOTrainer._mask_image``
  (trl/experimental/papo/papo_trainer.py) and ``nanmin`` / ``nanmax``
  (trl/trainer/utils.py, used only by the logged metrics);
* stubbed: the two model forward passes. ``self._get_per_token_logps_and_entropies``
  returns our float64 leaf tensors (``logprobs`` for the original pixel values,
  ``masked_logprobs`` for the masked ones) and our entropies as plain tensors without
  gradient. That last point is what the real method does: at v0.29.1 it computes the
  entropies inside ``with torch.no_grad():`` (trl/trainer/grpo_trainer.py); the recorder
  checks that structure with ``ast`` before running;
* plain attributes of the fake ``self`` (GRPOTrainer/PAPOTrainer state): loss type, clip
  epsilons, beta, ``top_entropy_quantile = 1.0``, ``importance_sampling_level = "token"``,
  ``args.delta = None``, ``current_gradient_accumulation_steps = 1``, one process
  (``accelerator.num_processes = 1``, ``accelerator.gather`` = reshape to 1-D), and the PAPO
  weights read from the pinned ``PAPOConfig`` defaults.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/papo.py \
        --trl-git-dir <bare mirror of huggingface/trl>
    # or --trl-src <checkout of huggingface/trl at v0.29.1>

JSON rules as in polgrad_core.py: finite floats in Python repr, masks as booleans. Every
input is finite at every position, padding included, because the TRL code reads padding.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import platform
import random
import shlex
import subprocess
import sys
import zlib
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

# --------------------------------------------------------------------------------------
# Pinned upstream identity
# --------------------------------------------------------------------------------------

TRL_REPO = "huggingface/trl"
TRL_TAG = "v0.29.1"
TRL_COMMIT = "617406a4e69551c115c145114497999618d24f3c"
TRAINER_PATH = "trl/experimental/papo/papo_trainer.py"
CONFIG_PATH = "trl/experimental/papo/papo_config.py"
UTILS_PATH = "trl/trainer/utils.py"
GRPO_TRAINER_PATH = "trl/trainer/grpo_trainer.py"
PINNED_SHA256 = {
    TRAINER_PATH: "9836f4505f7026c90cd5ca5b97151dd14c1bc27bcd2bc5a8fca6626c68279175",
    CONFIG_PATH: "60de6a1666a7902355603804110d134500e8dbd16aba66464717e3b489196f58",
    UTILS_PATH: "e1a6acd42c169f731056bb02b14f0096008c6def977822f325c1a7bf1f645d1f",
    GRPO_TRAINER_PATH: "4dfc47d910cdc4c9319d040d0eeb37d68b92899bf3559c4301ea34dd982c0ee5",
}

TOOL_PATH = "tools/record-fixtures/papo.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "test" / "fixtures" / "frameworks" / "trl-papo@v0.29.1.json"

SEED_RULE = (
    "seed = zlib.crc32(case_name.encode()) & 0x7FFFFFFF; all draws come from "
    "torch.Generator().manual_seed(seed) on CPU in float64; torch.manual_seed(seed) also "
    "seeds the global RNG that the real _mask_image uses. If a draw is rejected, attempt "
    "k = 1, 2, ... uses zlib.crc32((case_name + ':' + str(k)).encode()) & 0x7FFFFFFF. The "
    "recorded 'seed' is the one actually used."
)
JSON_RULE = (
    "Finite floats are JSON numbers written with Python repr (shortest round-trip float64); "
    "masks are booleans; signed zeros are kept as produced by torch. There is no junk: TRL "
    "reads every position of logprobs, masked_logprobs, entropies and masked_entropies "
    "(its perception and entropy terms are a mean over all B x T positions), so padding "
    "holds finite model-like values drawn like the response positions."
)
EDGE_MARGIN = 1e-6
PERCEPTION_CLIP = 0.2  # hard-coded in the pinned _compute_loss (torch.clamp(..., max=0.2))
MAX_ATTEMPTS = 10_000
CASES_PER_VARIANT = 8

# The two variants and the GRPO parent each one runs (matching polgrad's registry parents:
# grpo = pg_clip 0.2/0.2 + k3 KL 0.04 in the loss, seq_mean_token_mean; dapo = pg_clip
# 0.2/0.28, token_mean, no KL).
VARIANTS = {
    "papo_g": {"loss_type": "grpo", "epsilon_low": 0.2, "epsilon_high": 0.2, "beta": 0.04},
    "papo_d": {"loss_type": "dapo", "epsilon_low": 0.2, "epsilon_high": 0.28, "beta": 0.0},
}

# --------------------------------------------------------------------------------------
# Reading and checking the pinned files
# --------------------------------------------------------------------------------------


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_pinned(git_dir: str | None, src: str | None) -> dict[str, str]:
    """Return {path: text} of the pinned files after checking each SHA-256."""
    texts: dict[str, str] = {}
    problems = []
    for rel, expected in PINNED_SHA256.items():
        if git_dir is not None:
            data = subprocess.run(
                ["git", "--git-dir", git_dir, "show", f"{TRL_COMMIT}:{rel}"],
                check=True,
                capture_output=True,
            ).stdout
        else:
            data = (Path(src) / rel).read_bytes()
        actual = sha256_bytes(data)
        if actual != expected:
            problems.append(f"sha256 mismatch for {rel}: expected {expected}, got {actual}")
        texts[rel] = data.decode("utf-8")
    if problems:
        raise SystemExit("TRL files do not match the pinned v0.29.1 bytes:\n  " + "\n  ".join(problems))
    if git_dir is not None:
        tag = subprocess.run(
            ["git", "--git-dir", git_dir, "rev-parse", f"{TRL_TAG}^{{commit}}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if tag != TRL_COMMIT:
            raise SystemExit(f"tag {TRL_TAG} is {tag}, expected {TRL_COMMIT}")
    return texts


def class_method(tree: ast.Module, cls: str, name: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    raise SystemExit(f"{cls}.{name} not found")


def module_function(tree: ast.Module, name: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise SystemExit(f"function {name} not found")


def compile_functions(defs: list[ast.FunctionDef], filename: str, namespace: dict[str, Any]):
    module = ast.Module(body=defs, type_ignores=[])
    exec(compile(module, filename, "exec"), namespace)  # noqa: S102 - pinned, hash-checked code


def papo_config_defaults(text: str) -> dict[str, Any]:
    """Literal defaults of the PAPOConfig dataclass fields."""
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "PAPOConfig":
            out = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    out[item.target.id] = ast.literal_eval(item.value)
            return out
    raise SystemExit("PAPOConfig not found")


def entropies_under_no_grad(text: str) -> bool:
    """True iff every entropy_from_logits call of GRPOTrainer._get_per_token_logps_and_entropies
    sits inside a `with torch.no_grad():` block."""
    fn = class_method(ast.parse(text), "GRPOTrainer", "_get_per_token_logps_and_entropies")
    found = []

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.With):
            guarded = guarded or any(
                ast.unparse(item.context_expr) == "torch.no_grad()" for item in node.items
            )
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "entropy_from_logits":
            found.append(guarded)
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(fn, False)
    return len(found) > 0 and all(found)


# --------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------


def encode(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise AssertionError(f"non-finite value {value}")
        return value
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if torch.is_tensor(value):
        return encode(value.detach().cpu().tolist())
    raise TypeError(f"cannot encode {type(value)!r}")


# --------------------------------------------------------------------------------------
# The fake trainer
# --------------------------------------------------------------------------------------


class FakePAPOTrainer:
    """Plain state of a PAPOTrainer; the real methods are attached by ``bind``."""

    def __init__(self, variant: dict[str, Any], weights: dict[str, float], streams: dict[str, Any]):
        self.loss_type = variant["loss_type"]
        self.epsilon_low = variant["epsilon_low"]
        self.epsilon_high = variant["epsilon_high"]
        self.beta = variant["beta"]
        self.top_entropy_quantile = 1.0
        self.importance_sampling_level = "token"
        self.args = SimpleNamespace(delta=None)
        self.current_gradient_accumulation_steps = 1
        self.accelerator = SimpleNamespace(num_processes=1, gather=lambda x: x.reshape(-1))
        self.model = SimpleNamespace(training=True)
        self._metrics = defaultdict(lambda: defaultdict(list))
        self.perception_loss_weight = weights["perception_loss_weight"]
        self.der_loss_weight1 = weights["der_loss_weight1"]
        self.der_loss_weight2 = weights["der_loss_weight2"]
        self.mask_ratio = weights["mask_ratio"]
        self.mask_type = "random"
        self._streams = streams
        self.calls: list[str] = []

    def _get_per_token_logps_and_entropies(
        self, model, input_ids, attention_mask, logits_to_keep, compute_entropy=False, **kw
    ):
        """Stub of the model forward: our logprob leaf and no-grad entropies per view."""
        s = self._streams
        assert compute_entropy is True and logits_to_keep == s["T"]
        assert input_ids.shape == attention_mask.shape == (s["B"], s["P"] + s["T"])
        pixels = kw.get("pixel_values")
        if pixels is s["pixel_values"]:
            self.calls.append("original")
            return s["logprobs"], s["entropies"]
        self.calls.append("masked")
        assert pixels.shape == s["pixel_values"].shape
        return s["masked_logprobs"], s["masked_entropies"]


def bind(texts: dict[str, str]) -> None:
    """Attach the real _compute_loss and _mask_image to FakePAPOTrainer."""
    utils_ns: dict[str, Any] = {"torch": torch}
    utils_tree = ast.parse(texts[UTILS_PATH])
    compile_functions(
        [module_function(utils_tree, "nanmin"), module_function(utils_tree, "nanmax")],
        UTILS_PATH,
        utils_ns,
    )
    ns: dict[str, Any] = {
        "torch": torch,
        "random": random,
        "nanmin": utils_ns["nanmin"],
        "nanmax": utils_ns["nanmax"],
    }
    tree = ast.parse(texts[TRAINER_PATH])
    compile_functions(
        [class_method(tree, "PAPOTrainer", "_compute_loss"),
         class_method(tree, "PAPOTrainer", "_mask_image")],
        TRAINER_PATH,
        ns,
    )
    FakePAPOTrainer._compute_loss = ns["_compute_loss"]
    FakePAPOTrainer._mask_image = ns["_mask_image"]


# --------------------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------------------


def case_seed(name: str, attempt: int) -> int:
    key = name if attempt == 0 else f"{name}:{attempt}"
    return zlib.crc32(key.encode("utf-8")) & 0x7FFFFFFF


def uniform(gen, shape, low, high):
    return low + (high - low) * torch.rand(shape, generator=gen, dtype=torch.float64)


def randint(gen, low, high_inclusive):
    return int(torch.randint(low, high_inclusive + 1, (1,), generator=gen).item())


def k3(delta):
    return torch.exp(delta) - delta - 1


def draw(gen, variant: dict[str, Any]) -> dict[str, Any] | None:
    B = randint(gen, 2, 4)
    T = randint(gen, 3, 6)
    lengths = [randint(gen, 1, T) for _ in range(B)]
    if all(length == T for length in lengths):
        lengths[randint(gen, 0, B - 1)] = randint(gen, 1, T - 1)
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    lp = uniform(gen, (B, T), -6.0, -0.1)
    lpm = lp + uniform(gen, (B, T), -1.2, 1.0)
    old = lp + uniform(gen, (B, T), -0.8, 0.8)
    ref = lp + uniform(gen, (B, T), -1.0, 1.0)
    adv = uniform(gen, (B,), -2.0, 2.0)
    ent = uniform(gen, (B, T), 0.05, 4.0)
    ent_m = uniform(gen, (B, T), 0.05, 4.0)
    # Kinks: the policy clip edges (response positions) and the perception clamp edge 0.2
    # (every position: TRL reads padding).
    ratio = torch.exp(lp - old)[mask]
    edges = [1 - variant["epsilon_low"], 1 + variant["epsilon_high"]]
    if not all(bool(((ratio - e).abs() > EDGE_MARGIN).all()) for e in edges):
        return None
    kl = k3(lpm - lp)
    if not bool(((kl - PERCEPTION_CLIP).abs() > EDGE_MARGIN).all()):
        return None
    # Wanted features: the clamp saturates somewhere and passes somewhere, at a response
    # position and at a padding position; some response token's policy term is clipped.
    inside = kl < PERCEPTION_CLIP
    if not (bool((inside & mask).any()) and bool((~inside & mask).any())):
        return None
    if not bool((inside & ~mask).any()):
        return None
    a = adv.unsqueeze(1).expand(B, T)
    r = torch.exp(lp - old)
    clipped = ((a > 0) & (r > edges[1])) | ((a < 0) & (r < edges[0]))
    if not bool((clipped & mask).any()):
        return None
    return {"B": B, "T": T, "mask": mask, "lp": lp, "lpm": lpm, "old": old, "ref": ref,
            "adv": adv, "ent": ent, "ent_m": ent_m}


def run_real(variant, weights, data, seed) -> dict[str, Any]:
    """One call of the real _compute_loss; returns loss and both gradients."""
    B, T = data["B"], data["T"]
    P = 2
    streams = {
        "B": B,
        "T": T,
        "P": P,
        "logprobs": data["lp"].clone().requires_grad_(True),
        "masked_logprobs": data["lpm"].clone().requires_grad_(True),
        "entropies": data["ent"].clone(),
        "masked_entropies": data["ent_m"].clone(),
        "pixel_values": torch.ones((B, 3, 4, 4), dtype=torch.float64),
    }
    trainer = FakePAPOTrainer(variant, weights, streams)
    completion_mask = data["mask"].to(torch.int32)
    inputs = {
        "prompt_ids": torch.zeros((B, P), dtype=torch.long),
        "prompt_mask": torch.ones((B, P), dtype=torch.int32),
        "completion_ids": torch.zeros((B, T), dtype=torch.long),
        "completion_mask": completion_mask,
        "advantages": data["adv"].clone(),
        "old_per_token_logps": data["old"].clone(),
        "num_items_in_batch": completion_mask.sum(),
        "pixel_values": streams["pixel_values"],
    }
    if variant["beta"] != 0.0:
        inputs["ref_per_token_logps"] = data["ref"].clone()
    torch.manual_seed(seed)
    loss = trainer._compute_loss(None, inputs)
    assert trainer.calls == ["original", "masked"], trainer.calls
    g_lp, g_lpm = torch.autograd.grad(loss, [streams["logprobs"], streams["masked_logprobs"]])
    out = {"loss": float(loss.detach()), "grad_logprobs": g_lp, "grad_masked_logprobs": g_lpm}
    for key in ("grad_logprobs", "grad_masked_logprobs"):
        assert bool(torch.isfinite(out[key]).all()), key
    assert math.isfinite(out["loss"])
    return out


def record_variant(key: str, variant: dict[str, Any], weights: dict[str, float]) -> list[dict]:
    cases = []
    for index in range(CASES_PER_VARIANT):
        name = f"{key}/{index}"
        for attempt in range(MAX_ATTEMPTS):
            seed = case_seed(name, attempt)
            data = draw(torch.Generator().manual_seed(seed), variant)
            if data is not None:
                break
        else:
            raise RuntimeError(f"{name}: no acceptable draw")
        without_der = dict(weights, der_loss_weight1=0.0, der_loss_weight2=0.0)
        without_papo = dict(without_der, perception_loss_weight=0.0)
        inputs = {
            "logprobs": data["lp"],
            "masked_logprobs": data["lpm"],
            "old_logprobs": data["old"],
            "advantages": data["adv"],
            "response_mask": data["mask"],
            "entropies": data["ent"],
            "masked_entropies": data["ent_m"],
        }
        if variant["beta"] != 0.0:
            inputs["ref_logprobs"] = data["ref"]
        cases.append({
            "name": name,
            "seed": seed,
            "shape": [data["B"], data["T"]],
            "inputs": inputs,
            "outputs": run_real(variant, weights, data, seed),
            "outputs_without_der": run_real(variant, without_der, data, seed),
            "outputs_without_papo": run_real(variant, without_papo, data, seed),
        })
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--trl-git-dir", help="bare git directory of huggingface/trl")
    where.add_argument("--trl-src", help=f"checkout of huggingface/trl at {TRL_TAG}")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output JSON file")
    args = parser.parse_args()
    sys.dont_write_bytecode = True
    torch.set_num_threads(1)

    texts = read_pinned(args.trl_git_dir, args.trl_src)
    if not entropies_under_no_grad(texts[GRPO_TRAINER_PATH]):
        raise SystemExit("entropy_from_logits is not under torch.no_grad() at the pinned tag")
    defaults = papo_config_defaults(texts[CONFIG_PATH])
    weights = {k: float(defaults[k]) for k in
               ("perception_loss_weight", "der_loss_weight1", "der_loss_weight2", "mask_ratio")}
    bind(texts)

    variants = {}
    for key, variant in VARIANTS.items():
        variants[key] = {
            "trainer_state": dict(
                variant,
                perception_loss_weight=weights["perception_loss_weight"],
                perception_clip=PERCEPTION_CLIP,
                der_loss_weight1=weights["der_loss_weight1"],
                der_loss_weight2=weights["der_loss_weight2"],
                importance_sampling_level="token",
                top_entropy_quantile=1.0,
                delta=None,
                current_gradient_accumulation_steps=1,
                num_processes=1,
            ),
            "cases": record_variant(key, variant, weights),
        }

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    payload = {
        "provenance": {
            "tool": TOOL_PATH,
            "command": command,
            "framework": "trl",
            "repo": TRL_REPO,
            "tag": TRL_TAG,
            "commit": TRL_COMMIT,
            "files": [{"path": p, "sha256": h} for p, h in sorted(PINNED_SHA256.items())],
            "functions": [
                f"{TRAINER_PATH}::PAPOTrainer._compute_loss",
                f"{TRAINER_PATH}::PAPOTrainer._mask_image",
                f"{UTILS_PATH}::nanmin",
                f"{UTILS_PATH}::nanmax",
            ],
            "stubbed": (
                "self._get_per_token_logps_and_entropies returns (logprobs leaf, entropies) for "
                "the original pixel_values and (masked_logprobs leaf, masked_entropies) for the "
                "masked ones; entropies carry no gradient, as in the real method, which computes "
                "them under torch.no_grad() (checked with ast in " + GRPO_TRAINER_PATH + ")."
            ),
            "papo_config_defaults": weights,
            "torch_version": torch.__version__,
            "python_version": platform.python_version(),
            "dtype": "float64",
            "seed_rule": SEED_RULE,
            "json_rule": JSON_RULE,
            "input_rule": (
                "B in 2..4, T in 3..6, right-padded lengths 1..T with one row < T; every stream "
                "finite at every position: logprobs U[-6, -0.1]; masked_logprobs = logprobs + "
                "U[-1.2, 1.0]; old_logprobs = logprobs + U[-0.8, 0.8]; ref_logprobs = logprobs + "
                "U[-1, 1] (papo_g only, beta 0.04); advantages [B] U[-2, 2]; entropies and "
                "masked_entropies U[0.05, 4]. Rejected: a response-token ratio within 1e-6 of a "
                "clip edge, or k3(masked - logprobs) within 1e-6 of 0.2 anywhere; required: k3 "
                "above and below 0.2 at response positions, below 0.2 at some padding position, "
                "and one clipped response token."
            ),
            "grad_rule": (
                "grad_logprobs, grad_masked_logprobs = torch.autograd.grad(loss, [logprobs, "
                "masked_logprobs]). outputs: PAPOConfig defaults; outputs_without_der: "
                "der_loss_weight1 = der_loss_weight2 = 0; outputs_without_papo: additionally "
                "perception_loss_weight = 0 (the bare GRPO/DAPO loss as _compute_loss returns it)."
            ),
        },
        "variants": variants,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(encode(payload), indent=1, allow_nan=False, ensure_ascii=False) + "\n"
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({sum(len(v['cases']) for v in variants.values())} cases)")


if __name__ == "__main__":
    main()
