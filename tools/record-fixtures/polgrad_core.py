#!/usr/bin/env python3
"""Record numeric conformance fixtures for the TypeScript polgrad port.

This script runs the *real* Python polgrad 0.2.0 (PyTorch autograd, float64) on seeded
cases and writes only numbers plus provenance as JSON under ``test/fixtures/polgrad/``.
No polgrad code is copied into this repository: polgrad is imported at record time from a
local checkout given by ``--polgrad-src`` (or the ``POLGRAD_SRC`` environment variable),
after the SHA-256 of every polgrad source file that gets imported has been checked against
the values pinned below for commit 27613d8 (version 0.2.0).

Usage (see tools/record-fixtures/README.md for the full reproduction recipe):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/polgrad_core.py \
        --polgrad-src /tmp/polgrad/src

Output files (JSON, indent=1, trailing newline, byte-stable across re-runs):

    policy_loss.json     policy_loss over the full config product + the 10 registry specs
    value_loss.json      value_loss, clip_eps x aggregation x 3 seeds
    kl.json              kl_estimate/kl_loss, reverse_kl_grad_surrogate, kl_in_reward
    advantages.json      grpo/rloo/reinforce_pp/gae/whiten/broadcast/token-weight helpers
    which_example.json   numbers behind examples/which_grpo_am_i_running.py

JSON number rule: finite floats are written with Python's shortest round-trip repr (so
they parse back to the identical float64); NaN/+Inf/-Inf are written as the strings
"NaN", "Infinity", "-Infinity". Signed zeros are kept as produced ("-0.0").
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Callable

# --------------------------------------------------------------------------------------
# Pinned upstream identity
# --------------------------------------------------------------------------------------

POLGRAD_REPO = "SaifPunjwani/polgrad"
POLGRAD_COMMIT = "27613d8c633627359808625213f5b058afaec29f"
POLGRAD_VERSION = "0.2.0"

# SHA-256 of every polgrad file this recorder imports (paths relative to the checkout
# root), taken from commit POLGRAD_COMMIT. The recorder refuses to run on any mismatch.
PINNED_SOURCE_SHA256 = {
    "src/polgrad/__init__.py": "d3555651dc7a9418488fa5940826e039b2d407c04646b7bb0df7e4e407d0fadf",
    "src/polgrad/_validation.py": "ca6a9fe0f69d13fe63708d989a55e69b13a1cd9e823223a0f5c164cff4c910a0",
    "src/polgrad/advantages.py": "9b0af6f7fffce4b82d1f2f675d6ba5c81b389800fbf0758adefc813cb321ce74",
    "src/polgrad/aggregate.py": "58747ea7fc7f2f295b9e538ae86dd8238ee6db877895841625e9718074059cf8",
    "src/polgrad/kl.py": "0e509823130de379d958dac76bea19efcb4ecda7654b8d3608b87eed2b7aaf7e",
    "src/polgrad/losses.py": "3913ec5e7b05be6473ee9fdd322bca4ca4ab7fb8c9c0821d72a37360fe708ba5",
    "src/polgrad/registry.py": "b773502827197da4d7982fcff7579946b46c2d77edcb4123fb718ef8d0dac99b",
    "src/polgrad/conformance/__init__.py": "9d398cc618d5e2e9e4e2fb63926abb3a04220e0c93de8e1fccac4652f61c3f47",
    "src/polgrad/conformance/deviations.py": "fbd189362386ef90e73de69c4972dd32b1d6ee7fd1c42d980233f785610edbd5",
    "src/polgrad/conformance/harness.py": "f599fd1b023fd17d884892303e107e15009e541a2d5abff64bbf8a600454aba6",
    "src/polgrad/conformance/_vendor/__init__.py": "3099e6054fd88a33df19c35501fa135e99672ceccf3337ade0b0c66118ce9627",
    "src/polgrad/conformance/_vendor/openrlhf_loss.py": "caad2b3b7cd6f0d873b71f765d0ad94e7d5da4e19b9a8e0186ed105b9c6ba9f0",
    "src/polgrad/conformance/_vendor/verl_core_algos.py": "54332baf8da9e821bdb3cd5738d7c74018f25d0df51e4d91e193b82db29bbe3a",
}
# The core files the brief requires to be verified; all of them must be imported.
CORE_FILES = (
    "src/polgrad/losses.py",
    "src/polgrad/aggregate.py",
    "src/polgrad/kl.py",
    "src/polgrad/advantages.py",
    "src/polgrad/registry.py",
    "src/polgrad/_validation.py",
)
# Executed (as a subprocess, for its stdout), not imported.
EXAMPLE_FILE = "examples/which_grpo_am_i_running.py"
EXAMPLE_SHA256 = "50dde28891fb71e77dfe74f8a626787b3812108d1e9a8fb2cb17b3ed5527e439"

TOOL_PATH = "tools/record-fixtures/polgrad_core.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "test" / "fixtures" / "polgrad"

# --------------------------------------------------------------------------------------
# Recording rules (also written into every provenance block)
# --------------------------------------------------------------------------------------

SEED_RULE = (
    "seed = zlib.crc32(case_name.encode()) & 0x7FFFFFFF; all draws come from "
    "torch.Generator().manual_seed(seed) on CPU in float64. If a draw is rejected (a ratio "
    "within 1e-6 of a clip edge, a missing required feature, ...), attempt k = 1, 2, ... "
    "uses zlib.crc32((case_name + ':' + str(k)).encode()) & 0x7FFFFFFF. The recorded "
    "'seed' is the one actually used."
)
JUNK_RULE = (
    "Masked (padding) positions of every [B, T] input stream hold junk: 123.0 normally; in "
    "every 5th case of a file (0-based case index % 5 == 4) they hold non-finite junk "
    "cycling NaN, +Inf, -Inf over the masked positions in row-major order (offset by the "
    "stream's index). Functions that require whole-tensor finiteness (gae, whiten) always "
    "get 123.0 junk. [B] vectors carry no junk."
)
JSON_RULE = (
    "Finite floats are JSON numbers written with Python repr (shortest round-trip float64); "
    "non-finite values are the strings 'NaN', 'Infinity', '-Infinity'; masks are booleans; "
    "signed zeros are kept as produced by torch."
)
EDGE_MARGIN = 1e-6
NONFINITE_JUNK = (math.nan, math.inf, -math.inf)
FINITE_JUNK = 123.0
MAX_ATTEMPTS = 10_000

# Populated by load_polgrad().
torch: Any = None
pg: Any = None


# --------------------------------------------------------------------------------------
# Loading and verifying polgrad
# --------------------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify_checkout(root: Path) -> None:
    """Check pinned SHA-256 values (and the git HEAD when the checkout is a git tree)."""
    problems = []
    for rel, expected in sorted(PINNED_SOURCE_SHA256.items()) + [(EXAMPLE_FILE, EXAMPLE_SHA256)]:
        path = root / rel
        if not path.is_file():
            problems.append(f"missing {rel}")
            continue
        actual = sha256_file(path)
        if actual != expected:
            problems.append(f"sha256 mismatch for {rel}: expected {expected}, got {actual}")
    if problems:
        raise SystemExit(
            "polgrad checkout does not match the pinned commit "
            f"{POLGRAD_COMMIT}:\n  " + "\n  ".join(problems)
        )
    if (root / ".git").exists():
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if head != POLGRAD_COMMIT:
            raise SystemExit(f"polgrad checkout HEAD is {head}, expected {POLGRAD_COMMIT}")


def load_polgrad(src: Path) -> dict[str, str]:
    """Import torch and polgrad from ``src``; return {relative path: sha256} of imports."""
    global torch, pg
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(src))
    import torch as _torch  # noqa: PLC0415

    import polgrad as _pg  # noqa: PLC0415
    import polgrad.conformance  # noqa: F401, PLC0415
    import polgrad.conformance.harness  # noqa: F401, PLC0415

    torch = _torch
    pg = _pg
    torch.set_num_threads(1)
    if Path(pg.__file__).resolve().parent != (src / "polgrad").resolve():
        raise SystemExit(f"polgrad was imported from {pg.__file__}, not from {src}")
    if pg.__version__ != POLGRAD_VERSION:
        raise SystemExit(f"polgrad version {pg.__version__} != {POLGRAD_VERSION}")
    root = src.resolve().parent
    loaded: dict[str, str] = {}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file:
            continue
        path = Path(file).resolve()
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        if rel not in PINNED_SOURCE_SHA256:
            raise SystemExit(f"imported polgrad file {rel} has no pinned sha256")
        digest = sha256_file(path)
        if digest != PINNED_SOURCE_SHA256[rel]:
            raise SystemExit(f"sha256 of imported {rel} changed during the run")
        loaded[rel] = digest
    missing = [rel for rel in CORE_FILES if rel not in loaded]
    if missing:
        raise SystemExit(f"expected polgrad modules were not imported: {missing}")
    return dict(sorted(loaded.items()))


# --------------------------------------------------------------------------------------
# JSON encoding
# --------------------------------------------------------------------------------------


def encode(value: Any) -> Any:
    """Convert tensors/floats to the JSON-safe structure described in JSON_RULE."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if torch is not None and torch.is_tensor(value):
        return encode(value.detach().cpu().tolist())
    raise TypeError(f"cannot encode {type(value)!r}")


def write_json(path: Path, payload: dict[str, Any]) -> None:
    text = json.dumps(encode(payload), indent=1, allow_nan=False, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def assert_finite(label: str, value: Any) -> None:
    if torch.is_tensor(value):
        if value.dtype == torch.bool:
            return
        if not bool(torch.isfinite(value).all()):
            raise AssertionError(f"{label}: non-finite output {value}")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise AssertionError(f"{label}: non-finite output {value}")


# --------------------------------------------------------------------------------------
# Seeded drawing helpers
# --------------------------------------------------------------------------------------


def case_seed(name: str, attempt: int) -> int:
    key = name if attempt == 0 else f"{name}:{attempt}"
    return zlib.crc32(key.encode("utf-8")) & 0x7FFFFFFF


def uniform(gen: Any, shape: tuple[int, ...], low: float, high: float) -> Any:
    return low + (high - low) * torch.rand(shape, generator=gen, dtype=torch.float64)


def randint(gen: Any, low: int, high_inclusive: int) -> int:
    return int(torch.randint(low, high_inclusive + 1, (1,), generator=gen).item())


def ragged_mask(gen: Any, b_range: tuple[int, int] = (2, 4), t_range: tuple[int, int] = (3, 6)):
    """Right-padded ragged mask: B, T in the given ranges, lengths 1..T, one row < T."""
    batch = randint(gen, *b_range)
    width = randint(gen, *t_range)
    lengths = [randint(gen, 1, width) for _ in range(batch)]
    if width > 1 and all(length == width for length in lengths):
        row = randint(gen, 0, batch - 1)
        lengths[row] = randint(gen, 1, width - 1)
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return mask, lengths


def with_junk(x: Any, mask: Any, nonfinite: bool, stream: int) -> Any:
    """Copy of ``x`` with junk written at masked positions (see JUNK_RULE)."""
    out = x.clone()
    for k, (b, t) in enumerate((~mask).nonzero().tolist()):
        out[b, t] = NONFINITE_JUNK[(k + stream) % 3] if nonfinite else FINITE_JUNK
    return out


def leaf(x: Any) -> Any:
    return x.detach().clone().requires_grad_(True)


def far_from(values: Any, edges: list[float]) -> bool:
    return all(bool(((values - edge).abs() > EDGE_MARGIN).all()) for edge in edges)


def draw_with_retries(name: str, draw: Callable[[Any], Any]) -> tuple[int, Any]:
    """Call ``draw(gen)`` with the case seed, retrying with derived seeds on ``None``."""
    for attempt in range(MAX_ATTEMPTS):
        seed = case_seed(name, attempt)
        gen = torch.Generator().manual_seed(seed)
        result = draw(gen)
        if result is not None:
            return seed, result
    raise RuntimeError(f"{name}: no acceptable draw in {MAX_ATTEMPTS} attempts")


def provenance(command: str, sources: dict[str, str], extra: dict[str, Any] | None = None):
    block = {
        "tool": TOOL_PATH,
        "command": command,
        "polgrad_repo": POLGRAD_REPO,
        "polgrad_commit": POLGRAD_COMMIT,
        "polgrad_version": pg.__version__,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "dtype": "float64",
        "seed_rule": SEED_RULE,
        "junk_rule": JUNK_RULE,
        "json_rule": JSON_RULE,
        "source_sha256": sources,
    }
    if extra:
        block.update(extra)
    return block


# --------------------------------------------------------------------------------------
# Config (de)serialization in polgrad's snake_case field names
# --------------------------------------------------------------------------------------


def config_json(cfg: Any) -> dict[str, Any]:
    clip = cfg.clip
    tis = cfg.is_correction
    kl = cfg.kl
    return {
        "ratio": cfg.ratio.value,
        "surrogate": cfg.surrogate.value,
        "clip": None
        if clip is None
        else {"eps_low": clip.eps_low, "eps_high": clip.eps_high, "ratio_cap": clip.ratio_cap},
        "aggregation": cfg.aggregation.value,
        "norm_len": cfg.norm_len,
        "is_correction": None if tis is None else {"cap": tis.cap, "level": tis.level},
        "kl": None
        if kl is None
        else {
            "kind": kl.kind.value,
            "coef": kl.coef,
            "aggregation": None if kl.aggregation is None else kl.aggregation.value,
            "norm_len": kl.norm_len,
        },
    }


# --------------------------------------------------------------------------------------
# A. policy_loss
# --------------------------------------------------------------------------------------

# (label, surrogate, clip kwargs or None, old-gap range)
SURROGATE_VARIANTS = (
    ("pg_clip", "PG_CLIP", {"eps_low": 0.2, "eps_high": 0.28, "ratio_cap": None}, (-0.8, 0.8)),
    ("pg_clip_dual", "PG_CLIP", {"eps_low": 0.2, "eps_high": 0.2, "ratio_cap": 3.0}, (-1.6, 0.8)),
    ("pg", "PG", None, (-0.8, 0.8)),
    ("reinforce", "REINFORCE", None, (-0.8, 0.8)),
    ("cispo_one_sided", "CISPO", {"eps_low": None, "eps_high": 0.2, "ratio_cap": None}, (-0.8, 0.8)),
    ("cispo_two_sided", "CISPO", {"eps_low": 0.15, "eps_high": 0.3, "ratio_cap": None}, (-0.8, 0.8)),
)
RATIO_KINDS = ("TOKEN", "SEQUENCE", "SEQUENCE_TOKEN")
AGGREGATIONS = ("TOKEN_MEAN", "SEQ_MEAN_TOKEN_MEAN", "SEQ_MEAN_TOKEN_SUM", "TOKEN_SUM_NORM")
IS_VARIANTS = (("is_none", None), ("is_token", (2.0, "token")), ("is_sequence", (1.5, "sequence")))
KL_VARIANTS = (("kl_none", None), ("kl_k1", ("K1", 0.05)), ("kl_k2", ("K2", 0.04)),
               ("kl_k3", ("K3", 0.04)), ("kl_abs", ("ABS", 0.03)))
# rollout_logprobs = old_logprobs + U[ROLLOUT_GAP]; the lower end is below -ln 2 so the
# token-level TIS cap 2.0 binds on some tokens (with U[-0.6, 0.6] it never could).
ROLLOUT_GAP = (-0.8, 0.6)
REF_GAP = (-1.0, 1.0)
GSPO_ALGORITHM_GAP = (-2e-3, 2e-3)


def draw_policy_batch(gen: Any, old_gap: tuple[float, float]) -> dict[str, Any]:
    """Junk-free policy batch; the caller decides which streams are used."""
    mask, lengths = ragged_mask(gen)
    batch, width = mask.shape
    logprobs = uniform(gen, (batch, width), -6.0, -0.1)
    old = logprobs + uniform(gen, (batch, width), *old_gap)
    ref = logprobs + uniform(gen, (batch, width), *REF_GAP)
    rollout = old + uniform(gen, (batch, width), *ROLLOUT_GAP)
    token_level = bool(torch.rand((1,), generator=gen, dtype=torch.float64).item() < 0.5)
    adv_shape = (batch, width) if token_level else (batch,)
    advantages = uniform(gen, adv_shape, -2.0, 2.0)
    return {
        "mask": mask,
        "lengths": lengths,
        "logprobs": logprobs,
        "old": old,
        "ref": ref,
        "rollout": rollout,
        "advantages": advantages,
    }


def policy_draw_ok(cfg: Any, data: dict[str, Any]) -> bool:
    """Reject draws that sit on a kink (see module docstring) or miss a wanted feature."""
    mask = data["mask"]
    z = torch.where(mask, data["logprobs"] - data["old"], torch.zeros((), dtype=torch.float64))
    token_ratio = torch.exp(z)
    lengths = mask.sum(dim=1, keepdim=True).to(torch.float64)
    seq_ratio = torch.exp(z.sum(dim=1, keepdim=True) / lengths).expand_as(z)
    S = pg.SurrogateKind
    if cfg.surrogate in (S.PG_CLIP, S.CISPO):
        clip = cfg.clip
        edges = [1.0 + clip.eps_high]
        if clip.eps_low is not None:
            edges.append(1.0 - clip.eps_low)
        if clip.ratio_cap is not None:
            edges.append(clip.ratio_cap)
        if not (far_from(token_ratio[mask], edges) and far_from(seq_ratio[mask], edges)):
            return False
        if clip.ratio_cap is not None:
            adv = data["advantages"]
            adv_tok = adv.unsqueeze(1).expand_as(z) if adv.dim() == 1 else adv
            used = token_ratio if cfg.ratio is pg.RatioKind.TOKEN else seq_ratio
            if not bool(((adv_tok < 0) & (used > clip.ratio_cap) & mask).any()):
                return False
    if cfg.kl is not None and cfg.kl.kind is pg.KLEstimator.ABS:
        if not far_from((data["ref"] - data["logprobs"])[mask], [0.0]):
            return False
    return True


def run_policy_case(
    name: str,
    build_config: Callable[[int], Any],
    old_gap: tuple[float, float],
    nonfinite: bool,
    extra: dict[str, Any] | None = None,
    wanted: Callable[[Any, dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    def draw(gen: Any) -> Any:
        data = draw_policy_batch(gen, old_gap)
        cfg = build_config(data["mask"].shape[1])
        if not policy_draw_ok(cfg, data):
            return None
        if wanted is not None and not wanted(cfg, data):
            return None
        return cfg, data

    seed, (cfg, data) = draw_with_retries(name, draw)
    mask = data["mask"]
    inputs: dict[str, Any] = {
        "logprobs": with_junk(data["logprobs"], mask, nonfinite, 0),
        "old_logprobs": with_junk(data["old"], mask, nonfinite, 1),
        "advantages": data["advantages"]
        if data["advantages"].dim() == 1
        else with_junk(data["advantages"], mask, nonfinite, 2),
        "response_mask": mask,
    }
    if cfg.kl is not None:
        inputs["ref_logprobs"] = with_junk(data["ref"], mask, nonfinite, 3)
    if cfg.is_correction is not None:
        inputs["rollout_logprobs"] = with_junk(data["rollout"], mask, nonfinite, 4)

    logprobs = leaf(inputs["logprobs"])
    result = pg.policy_loss(
        cfg,
        logprobs=logprobs,
        old_logprobs=inputs["old_logprobs"],
        advantages=inputs["advantages"],
        response_mask=mask,
        ref_logprobs=inputs.get("ref_logprobs"),
        rollout_logprobs=inputs.get("rollout_logprobs"),
    )
    (grad,) = torch.autograd.grad(result.loss, logprobs)
    outputs = {
        "loss": float(result.loss.detach()),
        "grad_logprobs": grad,
        "per_token_objective": result.per_token_objective.detach(),
        "ratio": result.ratio,
        "clipped_low": result.clipped_low,
        "clipped_high": result.clipped_high,
        "kl_loss": None if result.kl_loss is None else float(result.kl_loss.detach()),
    }
    for key, value in outputs.items():
        assert_finite(f"{name}.{key}", value)
    case: dict[str, Any] = {"name": name}
    if extra:
        case.update(extra)
    case.update({"seed": seed, "config": config_json(cfg), "inputs": inputs, "outputs": outputs})
    return case


def policy_product_cases() -> list[dict[str, Any]]:
    A = pg.Aggregation
    specs = []
    sr_index = 0
    for label, surrogate, clip_kwargs, gap in SURROGATE_VARIANTS:
        kinds = ("TOKEN",) if surrogate == "REINFORCE" else RATIO_KINDS
        for kind in kinds:
            specs.append((sr_index, label, surrogate, clip_kwargs, gap, kind))
            sr_index += 1
    assert len(specs) == 16

    planned = []
    for sr, label, surrogate, clip_kwargs, gap, kind in specs:
        for ai, agg_name in enumerate(AGGREGATIONS):
            for ii, (is_label, is_spec) in enumerate(IS_VARIANTS):
                for ki, (kl_label, kl_spec) in enumerate(KL_VARIANTS):
                    own_kl_agg = kl_spec is not None and (sr + ai + ii + ki) % 4 == 0
                    kl_agg_name = None
                    kl_own_norm = False
                    if own_kl_agg:
                        kl_agg_name = AGGREGATIONS[(ai + 1 + (sr + ii) % 3) % 4]
                        kl_own_norm = (sr + ii) % 2 == 0
                    name_kl = kl_label if kl_agg_name is None else (
                        f"{kl_label}_agg_{getattr(A, kl_agg_name).value}"
                    )
                    name = "/".join(
                        (label, getattr(pg.RatioKind, kind).value,
                         getattr(A, agg_name).value, is_label, name_kl)
                    )
                    planned.append((name, surrogate, clip_kwargs, gap, kind, agg_name,
                                    is_spec, kl_spec, kl_agg_name, kl_own_norm))

    cases = []
    for index, plan in enumerate(planned):
        (name, surrogate, clip_kwargs, gap, kind, agg_name,
         is_spec, kl_spec, kl_agg_name, kl_own_norm) = plan

        def build(width: int, plan=plan) -> Any:
            (_, surrogate, clip_kwargs, _, kind, agg_name,
             is_spec, kl_spec, kl_agg_name, kl_own_norm) = plan
            agg = getattr(A, agg_name)
            norm_len = width + 2 if agg is A.TOKEN_SUM_NORM else None
            kl_cfg = None
            if kl_spec is not None:
                kl_agg = None if kl_agg_name is None else getattr(A, kl_agg_name)
                kl_norm = None
                if kl_agg is A.TOKEN_SUM_NORM:
                    if kl_own_norm:
                        kl_norm = width + 3  # KL's own budget, distinct from the policy's
                    else:
                        # inherited: policy carries norm_len (ignored by its own mode)
                        norm_len = width + 2
                kl_cfg = pg.KLLossConfig(
                    kind=getattr(pg.KLEstimator, kl_spec[0]),
                    coef=kl_spec[1],
                    aggregation=kl_agg,
                    norm_len=kl_norm,
                )
            return pg.PolicyLossConfig(
                ratio=getattr(pg.RatioKind, kind),
                surrogate=getattr(pg.SurrogateKind, surrogate),
                clip=None if clip_kwargs is None else pg.ClipConfig(**clip_kwargs),
                aggregation=agg,
                norm_len=norm_len,
                is_correction=None
                if is_spec is None
                else pg.ISCorrectionConfig(cap=is_spec[0], level=is_spec[1]),
                kl=kl_cfg,
            )

        cases.append(run_policy_case(name, build, gap, nonfinite=index % 5 == 4))
    return cases


def sequence_band_mixed(cfg: Any, data: dict[str, Any]) -> bool:
    """GSPO specs: want some rows inside the tight clip band and some outside it."""
    mask = data["mask"]
    z = torch.where(mask, data["logprobs"] - data["old"], torch.zeros((), dtype=torch.float64))
    seq = torch.exp(z.sum(dim=1) / mask.sum(dim=1).to(torch.float64))
    inside = (seq > 1.0 - cfg.clip.eps_low) & (seq < 1.0 + cfg.clip.eps_high)
    return bool(inside.any()) and not bool(inside.all())


def policy_algorithm_cases(start_index: int) -> list[dict[str, Any]]:
    cases = []
    for offset, (key, spec) in enumerate(pg.ALGORITHMS.items()):
        index = start_index + offset
        name = f"algorithm:{key}"

        def build(width: int, spec=spec) -> Any:
            loss = spec.loss
            if loss.aggregation is pg.Aggregation.TOKEN_SUM_NORM and loss.norm_len is None:
                loss = dataclasses.replace(loss, norm_len=width + 2)
            return loss

        gspo_like = key in ("gspo", "gspo_token")
        gap = GSPO_ALGORITHM_GAP if gspo_like else (-0.8, 0.8)
        cases.append(
            run_policy_case(name, build, gap, nonfinite=index % 5 == 4,
                            extra={"algorithm": key},
                            wanted=sequence_band_mixed if gspo_like else None)
        )
    return cases


# --------------------------------------------------------------------------------------
# B. value_loss
# --------------------------------------------------------------------------------------


def value_cases() -> list[dict[str, Any]]:
    cases = []
    index = 0
    for clip_eps in (None, 0.2, 0.5):
        for agg_name in AGGREGATIONS:
            agg = getattr(pg.Aggregation, agg_name)
            for rep in range(3):
                name = f"value/clip_{clip_eps}/{agg.value}/s{rep}"
                nonfinite = index % 5 == 4
                index += 1

                def draw(gen: Any, clip_eps=clip_eps) -> Any:
                    mask, _ = ragged_mask(gen)
                    shape = tuple(mask.shape)
                    values = uniform(gen, shape, -2.0, 2.0)
                    old = values + uniform(gen, shape, -0.6, 0.6)
                    returns = uniform(gen, shape, -2.0, 2.0)
                    if clip_eps is not None:
                        v, vo, r = values[mask], old[mask], returns[mask]
                        if not (far_from(v - (vo - clip_eps), [0.0])
                                and far_from(v - (vo + clip_eps), [0.0])):
                            return None
                        v_clip = torch.clamp(v, vo - clip_eps, vo + clip_eps)
                        gap = (v_clip - r).pow(2) - (v - r).pow(2)
                        outside = (v_clip != v)
                        if not bool((gap[outside].abs() > EDGE_MARGIN).all()):
                            return None
                    return mask, values, old, returns

                seed, (mask, values, old, returns) = draw_with_retries(name, draw)
                width = mask.shape[1]
                norm_len = width + 2 if agg is pg.Aggregation.TOKEN_SUM_NORM else None
                inputs = {
                    "values": with_junk(values, mask, nonfinite, 0),
                    "old_values": with_junk(old, mask, nonfinite, 1),
                    "returns": with_junk(returns, mask, nonfinite, 2),
                    "response_mask": mask,
                }
                v_leaf = leaf(inputs["values"])
                result = pg.value_loss(
                    v_leaf,
                    inputs["old_values"],
                    inputs["returns"],
                    mask,
                    clip_eps=clip_eps,
                    aggregation=agg,
                    norm_len=norm_len,
                )
                (grad,) = torch.autograd.grad(result.loss, v_leaf)
                outputs = {
                    "loss": float(result.loss.detach()),
                    "grad_values": grad,
                    "clipped_frac": float(result.clipped_frac),
                }
                for key, value in outputs.items():
                    assert_finite(f"{name}.{key}", value)
                cases.append({
                    "name": name,
                    "seed": seed,
                    "config": {"clip_eps": clip_eps, "aggregation": agg.value, "norm_len": norm_len},
                    "inputs": inputs,
                    "outputs": outputs,
                })
    return cases


# --------------------------------------------------------------------------------------
# C. KL
# --------------------------------------------------------------------------------------

KL_KINDS = ("K1", "K2", "K3", "ABS")


def draw_kl_batch(gen: Any, require_abs_margin: bool) -> Any:
    mask, _ = ragged_mask(gen)
    shape = tuple(mask.shape)
    logprobs = uniform(gen, shape, -6.0, -0.1)
    ref = logprobs + uniform(gen, shape, *REF_GAP)
    if require_abs_margin and not far_from((ref - logprobs)[mask], [0.0]):
        return None
    return mask, logprobs, ref


def kl_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []

    def nonfinite() -> bool:
        return len(cases) % 5 == 4

    for kind_name in KL_KINDS:
        kind = getattr(pg.KLEstimator, kind_name)
        for agg_name in AGGREGATIONS:
            agg = getattr(pg.Aggregation, agg_name)
            for rep in range(2):
                name = f"kl_loss/{kind.value}/{agg.value}/s{rep}"
                junk = nonfinite()
                seed, (mask, lp, ref) = draw_with_retries(
                    name, lambda gen, k=kind_name: draw_kl_batch(gen, k == "ABS")
                )
                norm_len = mask.shape[1] + 2 if agg is pg.Aggregation.TOKEN_SUM_NORM else None
                args = {
                    "logprobs": with_junk(lp, mask, junk, 0),
                    "ref_logprobs": with_junk(ref, mask, junk, 1),
                    "kind": kind.value,
                    "aggregation": agg.value,
                    "response_mask": mask,
                    "norm_len": norm_len,
                }
                estimate = pg.kl_estimate(
                    args["logprobs"], args["ref_logprobs"], kind, response_mask=mask
                )
                lp_leaf = leaf(args["logprobs"])
                loss = pg.kl_loss(
                    lp_leaf, args["ref_logprobs"], kind, agg, response_mask=mask, norm_len=norm_len
                )
                (grad,) = torch.autograd.grad(loss, lp_leaf)
                outputs = {
                    "kl_estimate": estimate.detach(),
                    "loss": float(loss.detach()),
                    "grad_logprobs": grad,
                }
                for key, value in outputs.items():
                    assert_finite(f"{name}.{key}", value)
                cases.append({"name": name, "function": "kl_loss", "seed": seed,
                              "args": args, "outputs": outputs})

    for agg_name in AGGREGATIONS:
        agg = getattr(pg.Aggregation, agg_name)
        for rep in range(2):
            name = f"reverse_kl_grad_surrogate/{agg.value}/s{rep}"
            junk = nonfinite()
            seed, (mask, lp, ref) = draw_with_retries(name, lambda gen: draw_kl_batch(gen, False))
            norm_len = mask.shape[1] + 2 if agg is pg.Aggregation.TOKEN_SUM_NORM else None
            args = {
                "logprobs": with_junk(lp, mask, junk, 0),
                "ref_logprobs": with_junk(ref, mask, junk, 1),
                "aggregation": agg.value,
                "response_mask": mask,
                "norm_len": norm_len,
            }
            lp_leaf = leaf(args["logprobs"])
            loss = pg.reverse_kl_grad_surrogate(
                lp_leaf, args["ref_logprobs"], agg, response_mask=mask, norm_len=norm_len
            )
            (grad,) = torch.autograd.grad(loss, lp_leaf)
            outputs = {"loss": float(loss.detach()), "grad_logprobs": grad}
            for key, value in outputs.items():
                assert_finite(f"{name}.{key}", value)
            cases.append({"name": name, "function": "reverse_kl_grad_surrogate", "seed": seed,
                          "args": args, "outputs": outputs})

    for kind_name in KL_KINDS:
        kind = getattr(pg.KLEstimator, kind_name)
        for rep in range(2):
            name = f"kl_in_reward/{kind.value}/s{rep}"
            junk = nonfinite()

            def draw(gen: Any) -> Any:
                mask, _ = ragged_mask(gen)
                shape = tuple(mask.shape)
                rewards = uniform(gen, shape, -1.0, 1.0)
                old = uniform(gen, shape, -6.0, -0.1)
                ref = old + uniform(gen, shape, *REF_GAP)
                return mask, rewards, old, ref

            seed, (mask, rewards, old, ref) = draw_with_retries(name, draw)
            args = {
                "token_rewards": with_junk(rewards, mask, junk, 0),
                "old_logprobs": with_junk(old, mask, junk, 1),
                "ref_logprobs": with_junk(ref, mask, junk, 2),
                "kind": kind.value,
                "coef": 0.1,
                "response_mask": mask,
            }
            shaped = pg.kl_in_reward(
                args["token_rewards"], args["old_logprobs"], args["ref_logprobs"], kind, 0.1,
                response_mask=mask,
            )
            assert_finite(f"{name}.result", shaped)
            cases.append({"name": name, "function": "kl_in_reward", "seed": seed,
                          "args": args, "outputs": {"result": shaped}})
    return cases


# --------------------------------------------------------------------------------------
# D. advantages and token-weight helpers
# --------------------------------------------------------------------------------------

GROUP_IDS = [7, 42, 7, 42, 3, 3, 3]
SINGLETON_GROUP_IDS = [5, 9, 5, 12, 12]


def seeded_rewards(name: str, count: int) -> tuple[int, Any]:
    return draw_with_retries(name, lambda gen: uniform(gen, (count,), -2.0, 2.0))


def advantage_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    f64 = torch.float64

    def add(name: str, function: str, seed: int | None, args: dict, outputs: dict) -> None:
        for key, value in outputs.items():
            assert_finite(f"{name}.{key}", value)
        cases.append({"name": name, "function": function, "seed": seed,
                      "args": args, "outputs": outputs})

    seed_r1, r1 = seeded_rewards("rewards:r1", len(GROUP_IDS))
    reward_sets = [
        ("r1", seed_r1, r1, GROUP_IDS),
        # binary rewards; groups 7 and 3 have zero spread (advantage 0/eps = 0)
        ("r2_zero_spread", None, torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=f64),
         GROUP_IDS),
    ]
    ids_t = lambda ids: torch.tensor(ids, dtype=torch.int64)  # noqa: E731

    # grpo_advantages: center x scale x unbiased x eps
    for set_name, seed, rewards, ids in reward_sets:
        for center in (True, False):
            for scale in ("std", "none"):
                for unbiased in (True, False):
                    for eps in (1e-4, 1e-6):
                        cfg = pg.GroupNormConfig(center=center, scale=scale, eps=eps,
                                                 unbiased=unbiased)
                        out = pg.grpo_advantages(rewards, ids_t(ids), cfg)
                        name = (f"grpo/{set_name}/center_{center}/scale_{scale}/"
                                f"unbiased_{unbiased}/eps_{eps}")
                        add(name, "grpo_advantages", seed,
                            {"rewards": rewards, "group_ids": ids,
                             "config": dataclasses.asdict(cfg)},
                            {"advantages": out})
    # scale="none" tolerates singleton groups
    seed_r3, r3 = seeded_rewards("rewards:r3_singletons", len(SINGLETON_GROUP_IDS))
    for center in (True, False):
        cfg = pg.GroupNormConfig(center=center, scale="none")
        out = pg.grpo_advantages(r3, ids_t(SINGLETON_GROUP_IDS), cfg)
        add(f"grpo/r3_singletons/center_{center}/scale_none", "grpo_advantages", seed_r3,
            {"rewards": r3, "group_ids": SINGLETON_GROUP_IDS, "config": dataclasses.asdict(cfg)},
            {"advantages": out})

    # rloo_advantages
    dyadic = torch.tensor([0.125, 0.5, -0.375, 0.75, 1.0, -0.25, 0.625], dtype=f64)
    for set_name, seed, rewards, ids in reward_sets + [("r4_dyadic", None, dyadic, GROUP_IDS)]:
        out = pg.rloo_advantages(rewards, ids_t(ids))
        add(f"rloo/{set_name}", "rloo_advantages", seed,
            {"rewards": rewards, "group_ids": ids}, {"advantages": out})

    # reinforce_pp_advantages
    for set_name, seed, rewards, ids in (("r1", seed_r1, r1, GROUP_IDS),
                                         ("r3_singletons", seed_r3, r3, SINGLETON_GROUP_IDS)):
        for grouped in (False, True):
            if not grouped and set_name != "r1":
                continue
            for batch_norm in (True, False):
                cfg = pg.ReinforcePPConfig(batch_norm=batch_norm)
                out = pg.reinforce_pp_advantages(
                    rewards, ids_t(ids) if grouped else None, config=cfg
                )
                name = (f"reinforce_pp/{set_name}/{'grouped' if grouped else 'global'}/"
                        f"batch_norm_{batch_norm}")
                add(name, "reinforce_pp_advantages", seed,
                    {"rewards": rewards, "group_ids": ids if grouped else None,
                     "config": dataclasses.asdict(cfg)},
                    {"advantages": out})

    # gae (whole-tensor finiteness required: finite junk only)
    for gamma, lam in ((1.0, 1.0), (0.99, 0.95), (0.5, 0.5)):
        for rep in range(2):
            name = f"gae/gamma_{gamma}/lam_{lam}/s{rep}"

            def draw(gen: Any) -> Any:
                mask, _ = ragged_mask(gen)
                shape = tuple(mask.shape)
                return mask, uniform(gen, shape, -1.0, 1.0), uniform(gen, shape, -1.0, 1.0)

            seed, (mask, rewards, values) = draw_with_retries(name, draw)
            rewards = with_junk(rewards, mask, False, 0)
            values = with_junk(values, mask, False, 1)
            cfg = pg.GAEConfig(gamma=gamma, lam=lam)
            adv, ret = pg.gae(rewards, values, config=cfg, response_mask=mask)
            add(name, "gae", seed,
                {"token_rewards": rewards, "values": values, "config": dataclasses.asdict(cfg),
                 "response_mask": mask},
                {"advantages": adv, "returns": ret})

    # whiten (whole-tensor finiteness required: finite junk only)
    for shift_mean in (True, False):
        for rep in range(2):
            name = f"whiten/shift_mean_{shift_mean}/s{rep}"

            def draw(gen: Any) -> Any:
                mask, _ = ragged_mask(gen)
                return mask, uniform(gen, tuple(mask.shape), -2.0, 2.0)

            seed, (mask, x) = draw_with_retries(name, draw)
            x = with_junk(x, mask, False, 0)
            out = pg.whiten(x, mask, shift_mean=shift_mean, eps=1e-8)
            add(name, "whiten", seed,
                {"x": x, "response_mask": mask, "shift_mean": shift_mean, "eps": 1e-8},
                {"result": out})

    # broadcast_to_tokens
    for rep in range(2):
        name = f"broadcast_to_tokens/s{rep}"

        def draw(gen: Any) -> Any:
            mask, _ = ragged_mask(gen)
            return mask, uniform(gen, (mask.shape[0],), -2.0, 2.0)

        seed, (mask, per_seq) = draw_with_retries(name, draw)
        out = pg.broadcast_to_tokens(per_seq, mask)
        add(name, "broadcast_to_tokens", seed,
            {"per_seq": per_seq, "response_mask": mask}, {"result": out})

    # effective_token_weights: 4 modes on a fixed and a seeded mask
    fixed_mask = torch.arange(3).unsqueeze(0) < torch.tensor([1, 3, 2, 3]).unsqueeze(1)
    seed_m, (seeded_mask, _) = draw_with_retries("mask:weights", lambda gen: ragged_mask(gen))
    masks = (("fixed_1_3_2_3", None, fixed_mask), ("seeded", seed_m, seeded_mask))
    for mask_name, seed, mask in masks:
        for agg_name in AGGREGATIONS:
            agg = getattr(pg.Aggregation, agg_name)
            norm_len = mask.shape[1] + 2 if agg is pg.Aggregation.TOKEN_SUM_NORM else None
            out = pg.effective_token_weights(mask, agg, norm_len=norm_len)
            add(f"effective_token_weights/{mask_name}/{agg.value}", "effective_token_weights",
                seed, {"response_mask": mask, "mode": agg.value, "norm_len": norm_len},
                {"weights": out})

    # microbatch_token_weights
    splits = {
        "fixed_1_3_2_3": ((2, 2), (1, 3), (1, 1, 2), (4,), (1, 1, 1, 1)),
    }
    batch_seeded = seeded_mask.shape[0]
    seeded_splits = [(batch_seeded,), tuple([1] * batch_seeded)]
    if batch_seeded >= 3:
        seeded_splits.append((1, batch_seeded - 1))
    splits["seeded"] = tuple(seeded_splits)
    for mask_name, seed, mask in masks:
        for sizes in splits[mask_name]:
            for loss_scale in ("mean", "sum"):
                for agg_name in AGGREGATIONS:
                    agg = getattr(pg.Aggregation, agg_name)
                    norm_len = mask.shape[1] + 2 if agg is pg.Aggregation.TOKEN_SUM_NORM else None
                    out = pg.microbatch_token_weights(
                        mask, agg, list(sizes), norm_len=norm_len, loss_scale=loss_scale
                    )
                    name = (f"microbatch_token_weights/{mask_name}/"
                            f"{'-'.join(map(str, sizes))}/{loss_scale}/{agg.value}")
                    add(name, "microbatch_token_weights", seed,
                        {"response_mask": mask, "mode": agg.value,
                         "microbatch_sizes": list(sizes), "norm_len": norm_len,
                         "loss_scale": loss_scale},
                        {"weights": out})
    return cases


# --------------------------------------------------------------------------------------
# E. examples/which_grpo_am_i_running.py
# --------------------------------------------------------------------------------------

WHICH_SEED = 0
WHICH_LENGTHS = (2, 4, 6, 8)
WHICH_NORM_LEN = 8


def which_example(root: Path) -> dict[str, Any]:
    from polgrad.conformance.harness import VENDORED  # noqa: PLC0415

    batch_size = len(WHICH_LENGTHS)
    width = max(WHICH_LENGTHS)
    gen = torch.Generator().manual_seed(WHICH_SEED)
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(WHICH_LENGTHS).unsqueeze(1)
    draw1 = torch.rand((batch_size, width), generator=gen, dtype=torch.float64)
    logprobs = -(draw1 * 2.0 + 0.1)
    draw2 = torch.rand((batch_size, width), generator=gen, dtype=torch.float64)
    gap = draw2 * 2.0 - 1.0
    old = logprobs - gap
    advantages = torch.tensor([1.5, -0.8, 0.6, -1.2], dtype=torch.float64)
    adv_tok = advantages.unsqueeze(1).expand(batch_size, width).contiguous()
    n_tokens = int(mask.sum())

    def pg_clip(agg: Any, norm_len: int | None = None) -> Any:
        return pg.PolicyLossConfig(
            ratio=pg.RatioKind.TOKEN,
            surrogate=pg.SurrogateKind.PG_CLIP,
            clip=pg.ClipConfig(eps_low=0.2, eps_high=0.2),
            aggregation=agg,
            norm_len=norm_len,
        )

    A = pg.Aggregation
    gspo_cfg = pg.PolicyLossConfig(
        ratio=pg.RatioKind.SEQUENCE,
        surrogate=pg.SurrogateKind.PG_CLIP,
        clip=pg.ClipConfig(eps_low=3e-4, eps_high=4e-4),
        aggregation=A.SEQ_MEAN_TOKEN_MEAN,
    )
    polgrad_rows = [
        ("seq_mean_token_mean", "polgrad seq-mean-token-mean (GRPO paper; TRL v0.14-0.15)",
         pg_clip(A.SEQ_MEAN_TOKEN_MEAN)),
        ("token_mean", "polgrad token-mean (TRL >= 0.16; verl 'token-mean')",
         pg_clip(A.TOKEN_MEAN)),
        ("token_sum_norm", f"polgrad token-sum-norm (Dr.GRPO, norm_len={WHICH_NORM_LEN})",
         pg_clip(A.TOKEN_SUM_NORM, WHICH_NORM_LEN)),
        ("gspo_sequence", "polgrad GSPO sequence ratio (eps 3e-4/4e-4)", gspo_cfg),
    ]
    framework_rows = [
        ("verl", "pg_clip_token_mean", "vendored verl 'token-mean'"),
        ("verl", "pg_clip_seq_mean_token_mean", "vendored verl 'seq-mean-token-mean'"),
        ("openrlhf", "pg_clip_token_mean", "vendored openrlhf token_level_loss=True"),
        ("openrlhf", "pg_clip_seq_mean_token_mean", "vendored openrlhf token_level_loss=False"),
        ("trl", "grpo", "reimplemented trl loss_type='grpo'"),
        ("trl", "dr_grpo", f"reimplemented trl loss_type='dr_grpo' (budget={width})"),
    ]

    def loss_grad(fn: Callable[[Any], Any]) -> tuple[float, Any]:
        lp = leaf(logprobs)
        loss = fn(lp)
        (grad,) = torch.autograd.grad(loss, lp)
        return float(loss.detach()), grad

    losses: dict[str, float] = {}
    table: list[tuple[str, float, Any]] = []
    polgrad_out = []
    for key, label, cfg in polgrad_rows:
        loss, grad = loss_grad(
            lambda lp, cfg=cfg: pg.policy_loss(
                cfg, logprobs=lp, old_logprobs=old, advantages=advantages, response_mask=mask
            ).loss
        )
        mass = grad.abs().sum(dim=1)
        losses[key] = loss
        table.append((label, loss, mass))
        polgrad_out.append({"key": key, "label": label, "config": config_json(cfg), "loss": loss,
                            "grad_mass": mass, "grad_logprobs": grad})
    framework_out = []
    for framework, variant, label in framework_rows:
        fn = VENDORED[(framework, variant)]
        loss, grad = loss_grad(
            lambda lp, fn=fn: fn(logprobs=lp, old_logprobs=old, advantages=adv_tok,
                                 response_mask=mask)
        )
        mass = grad.abs().sum(dim=1)
        losses[f"{framework}/{variant}"] = loss
        table.append((label, loss, mass))
        framework_out.append({"framework": framework, "variant": variant, "label": label,
                              "loss": loss, "grad_mass": mass, "grad_logprobs": grad})

    factor = n_tokens / (batch_size * WHICH_NORM_LEN)
    check_specs = [
        ("verl 'token-mean' == polgrad token-mean", "verl/pg_clip_token_mean", "token_mean", 1.0),
        ("openrlhf token_level_loss=True == polgrad token-mean", "openrlhf/pg_clip_token_mean",
         "token_mean", 1.0),
        ("trl 'grpo' == polgrad seq-mean-token-mean", "trl/grpo", "seq_mean_token_mean", 1.0),
        ("verl 'seq-mean-token-mean' ~= polgrad seq-mean-token-mean",
         "verl/pg_clip_seq_mean_token_mean", "seq_mean_token_mean", 1.0),
        ("openrlhf token_level_loss=False ~= polgrad seq-mean-token-mean",
         "openrlhf/pg_clip_seq_mean_token_mean", "seq_mean_token_mean", 1.0),
        ("trl 'dr_grpo' == polgrad token-sum-norm", "trl/dr_grpo", "token_sum_norm", 1.0),
        (f"Dr.GRPO == token-mean x N/(B*norm_len) = x {factor}", "token_sum_norm", "token_mean",
         factor),
    ]
    checks = []
    for claim, lhs, rhs, scale in check_specs:
        diff = losses[lhs] - losses[rhs] * scale if scale != 1.0 else losses[lhs] - losses[rhs]
        checks.append({"claim": claim, "lhs": lhs, "rhs": rhs, "rhs_scale": scale,
                       "diff": diff, "abs_diff": abs(diff)})

    gspo = pg.policy_loss(gspo_cfg, logprobs=logprobs, old_logprobs=old,
                          advantages=advantages, response_mask=mask)
    killed = (gspo.clipped_low | gspo.clipped_high).any(dim=1).tolist()

    env = dict(os.environ)
    env.update({"PYTHONPATH": str(root / "src"), "PYTHONDONTWRITEBYTECODE": "1",
                "OMP_NUM_THREADS": "1"})
    printed = subprocess.run(
        [sys.executable, str(root / EXAMPLE_FILE)],
        cwd=str(root), env=env, check=True, capture_output=True, text=True,
    ).stdout

    # Self-check: the numbers computed here must be the ones the example prints.
    lines = printed.splitlines()
    for label, loss, mass in table:
        cells = "  ".join(f"{float(m):8.5f}" for m in mass)
        expected = f"{label:<56} {loss:>12.8f}  {cells}"
        if expected not in lines:
            raise AssertionError(f"example output has no line {expected!r}")
    for check in checks:
        expected = f"  {check['claim']:<64} |diff| = {check['abs_diff']:.2e}"
        if expected not in lines:
            raise AssertionError(f"example output has no line {expected!r}")

    return {
        "batch": {
            "seed": WHICH_SEED,
            "lengths": list(WHICH_LENGTHS),
            "logprobs": logprobs,
            "old_logprobs": old,
            "advantages": advantages,
            "response_mask": mask,
            "n_tokens": n_tokens,
            "norm_len": WHICH_NORM_LEN,
        },
        "polgrad_rows": polgrad_out,
        "framework_rows": framework_out,
        "cross_checks": checks,
        "gspo": {
            "sequence_ratios": gspo.ratio[:, 0],
            "killed_rows": [i for i, k in enumerate(killed) if k],
            "flowing_rows": [i for i, k in enumerate(killed) if not k],
        },
        "printed_output": printed,
    }


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--polgrad-src",
        default=os.environ.get("POLGRAD_SRC"),
        help="path to the src/ directory of a polgrad checkout at commit "
        f"{POLGRAD_COMMIT[:7]} (default: $POLGRAD_SRC)",
    )
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output directory")
    args = parser.parse_args()
    if not args.polgrad_src:
        parser.error("--polgrad-src (or POLGRAD_SRC) is required")
    src = Path(args.polgrad_src).resolve()
    root = src.parent
    out = Path(args.out)

    verify_checkout(root)
    sources = load_polgrad(src)

    command_parts = [sys.executable, TOOL_PATH, *sys.argv[1:]]
    command = shlex.join(command_parts)
    if "--polgrad-src" not in sys.argv[1:]:
        command = f"POLGRAD_SRC={shlex.quote(args.polgrad_src)} {command}"

    def prov(extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return provenance(command, sources, extra)

    policy = policy_product_cases()
    policy += policy_algorithm_cases(len(policy))
    write_json(out / "policy_loss.json", {
        "provenance": prov({
            "input_rule": (
                "B in 2..4, T in 3..6, right-padded lengths in 1..T with at least one row "
                "shorter than T; logprobs U[-6, -0.1]; old_logprobs = logprobs + U[-0.8, 0.8] "
                "(pg_clip_dual cases: U[-1.6, 0.8], redrawn until some A<0 response token has "
                "its used ratio > ratio_cap 3.0; algorithm:gspo/gspo_token: U[-2e-3, 2e-3], redrawn until "
                "some rows fall inside the 3e-4/4e-4 band and some outside); ref_logprobs = logprobs + U[-1, 1]; "
                "rollout_logprobs = old_logprobs + U[-0.8, 0.6] (so the token TIS cap 2.0 can "
                "bind); advantages U[-2, 2], [B] or [B, T] by a fair coin from the generator. "
                "Clip-type surrogates: every token ratio and every sequence ratio is > 1e-6 "
                "from each clip edge (1-eps_low, 1+eps_high, ratio_cap); abs KL: |ref - lp| > "
                "1e-6. token_sum_norm uses norm_len = T + 2; in about a quarter of the KL cases "
                "the KL term has its own aggregation (name suffix _agg_<mode>); when that is "
                "token_sum_norm the KL either has its own norm_len = T + 3 or inherits the "
                "policy's norm_len = T + 2 (which the policy's own mode ignores)."
            ),
            "grad_rule": "grad_logprobs = torch.autograd.grad(loss, logprobs) with logprobs a "
                         "float64 leaf (junk included).",
        }),
        "cases": policy,
    })

    values = value_cases()
    write_json(out / "value_loss.json", {
        "provenance": prov({
            "input_rule": (
                "B in 2..4, T in 3..6 ragged right-padded; values U[-2, 2]; old_values = "
                "values + U[-0.6, 0.6]; returns U[-2, 2]; norm_len = T + 2 for "
                "token_sum_norm; clipped draws keep |v - (v_old +- eps)| > 1e-6 and the two "
                "squared errors > 1e-6 apart where the clip binds."
            ),
        }),
        "cases": values,
    })

    kls = kl_cases()
    write_json(out / "kl.json", {
        "provenance": prov({
            "input_rule": (
                "B in 2..4, T in 3..6 ragged right-padded; logprobs U[-6, -0.1]; "
                "ref_logprobs = logprobs + U[-1, 1] (abs: |delta| > 1e-6); kl_in_reward: "
                "token_rewards U[-1, 1], old_logprobs U[-6, -0.1], ref = old + U[-1, 1], "
                "coef 0.1; norm_len = T + 2 for token_sum_norm."
            ),
        }),
        "cases": kls,
    })

    advs = advantage_cases()
    write_json(out / "advantages.json", {
        "provenance": prov({
            "input_rule": (
                "Seeded rewards U[-2, 2]; group ids [7, 42, 7, 42, 3, 3, 3] (non-contiguous) "
                "or [5, 9, 5, 12, 12] (with singletons); gae token_rewards/values U[-1, 1]; "
                "whiten x U[-2, 2]; masks ragged right-padded B in 2..4, T in 3..6; masked "
                "entries of gae/whiten inputs hold finite junk 123.0. group_ids are int64."
            ),
        }),
        "cases": advs,
    })

    example = which_example(root)
    write_json(out / "which_example.json", {
        "provenance": prov({
            "example_file": EXAMPLE_FILE,
            "example_sha256": EXAMPLE_SHA256,
            "example_command": f"PYTHONPATH=src {shlex.quote(sys.executable)} {EXAMPLE_FILE}",
            "notes": "Numbers are recomputed by this recorder with the example's batch and "
                     "calls; every table line and cross-check line is asserted to match the "
                     "example's own stdout (printed_output).",
        }),
        **example,
    })

    for file_name, count in (("policy_loss.json", len(policy)), ("value_loss.json", len(values)),
                             ("kl.json", len(kls)), ("advantages.json", len(advs)),
                             ("which_example.json", None)):
        size = (out / file_name).stat().st_size
        suffix = "" if count is None else f", {count} cases"
        print(f"wrote {out / file_name} ({size} bytes{suffix})")


if __name__ == "__main__":
    main()
