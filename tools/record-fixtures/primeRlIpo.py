#!/usr/bin/env python3
"""Record numeric fixtures of prime-rl's IPO loss (``ipo_loss_fn``).

This recorder runs the real ``ipo_loss_fn`` of prime-rl (``src/prime_rl/trainer/rl/loss.py`` at
commit 559b4477) on seeded float64 1-D sequences and writes only numbers plus provenance to
``test/fixtures/frameworks/prime-rl-ipo.json``: per case the returned ``loss`` (a sum over the
sequence's tokens), its gradient with respect to ``trainer_logprobs`` (torch autograd), the
returned metrics and the IPO trust-region mask.

No prime-rl code is copied into this repository. Everything upstream is loaded the way
``frameworks.py`` loads it, with its helpers (imported as a module): each pinned file is read with
``git --git-dir=<dir> show <commit>:<path>`` in memory, its SHA-256 is checked against the
constants below, it is parsed with ``ast``, and only the top-level definitions ``_safe_mean``,
``compute_importance_ratio_and_mismatch_kl`` and ``ipo_loss_fn`` are compiled (with the upstream
file name and line numbers) and executed with real torch. Before ``exec`` the recorder checks that
their free names are exactly the picked definitions plus the stand-ins it binds: ``torch`` (real),
``Tensor`` (``torch.Tensor``; loss.py has no ``from __future__ import annotations``, so annotations
are evaluated at def time), and stand-in classes ``LossInputs`` (a SimpleNamespace with exactly the
fields ``ipo_loss_fn`` reads), ``LossOutputs`` (stores ``loss`` and ``metrics``) and
``IPOLossConfig`` (the pydantic ``Field`` defaults read with ``ast`` from the pinned
``packages/prime-rl-configs/src/prime_rl/configs/trainer.py``, never imported). Nothing of
prime-rl, pydantic, jaxtyping or beartype is imported. ``train.py`` is read (hash-checked) only
for a structural check of the token-count normaliser; nothing of it is executed.

An independent model written here from the math must reproduce upstream's loss and gradient
(relative 1e-12) on every case; no number in the file comes from it.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/primeRlIpo.py \\
        --prime-rl-git /path/to/prime-rl.git

Output (JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs):
test/fixtures/frameworks/prime-rl-ipo.json
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import shlex
import sys
import types
import zlib
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True  # importing frameworks.py must not leave a __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import frameworks as fw  # noqa: E402  (the sibling recorder, guarded by `if __name__ == "__main__"`)

TOOL_PATH = "tools/record-fixtures/primeRlIpo.py"
DEFAULT_OUT = fw.REPO_ROOT / "test" / "fixtures" / "frameworks" / "prime-rl-ipo.json"

LOSS = "src/prime_rl/trainer/rl/loss.py"
CONFIGS = "packages/prime-rl-configs/src/prime_rl/configs/trainer.py"
TRAIN = "src/prime_rl/trainer/rl/train.py"
TARGET = fw.Target("prime-rl", "PrimeIntellect-ai/prime-rl", "559b44772e471d1538537b8805cc77f3824a5e64",
                   "559b4477", None, "pin", {  # path -> SHA-256 of the whole file at the commit
                       LOSS: "102b14539a2aa7e4b807967f9c9caeaaa974373391a21602ce45b24414fb7863",
                       CONFIGS: "8e9dfae7baf22c7eecd0238ddde47f2f2073763b6b9ef6315a0878f9d287c4d6",
                       TRAIN: "84a75d465b3420bd1282369855e172100827013f1208577fdb80992ac6526f0d"})
PICKED = ["compute_importance_ratio_and_mismatch_kl", "_safe_mean", "ipo_loss_fn"]
STANDINS = ["IPOLossConfig", "LossInputs", "LossOutputs", "Tensor", "torch"]
CONFIG_FIELDS = ["ipo_threshold", "adv_tau", "kl_tau"]
INPUT_FIELDS = ["advantages", "inference_logprobs", "loss_mask", "loss_weights", "trainer_logprobs"]

VARIANTS = (("default", {}), ("threshold-0.05", {"ipo_threshold": 0.05}), ("kl_tau-0", {"kl_tau": 0.0}),
            ("threshold-0.05:kl_tau-0", {"ipo_threshold": 0.05, "kl_tau": 0.0}))  # name, config overrides
CASES_PER_VARIANT, EDGE_MARGIN, MAX_ATTEMPTS = 6, 1e-6, 1000
SEED_RULE = (
    "seed = zlib.crc32(f'prime-rl-ipo:{variant}:{i}:{attempt}'.encode()) & 0x7FFFFFFF for case i = 0..5, attempt = "
    "0, 1, ... until the draw is accepted (recorded per case); all draws from torch.Generator().manual_seed(seed) "
    "on CPU in float64. Seeds are provenance only: every input is embedded in the file."
)
INPUT_RULE = (
    "Draw order: T = randint(4..12); loss_mask = rand(T) < 0.7; trainer_logprobs = U[-3, -0.05]; "
    "inference_logprobs = min(trainer_logprobs + U[-0.6, 0.6], -0.01); advantages = s * U[0.05, 2] with s = -1 "
    "where rand(T) < 0.5 else +1 (so 0.05 <= |A| <= 2); U[a, b] = a + (b - a) * rand(T). Positions with loss_mask"
    " False hold in-range values drawn exactly like the others. A draw is rejected unless loss_mask has at least "
    "one True and one False and every position has | |exp(lp) - exp(inf)| - ipo_threshold | > 1e-6. Each variant "
    "is asserted to have, across its cases, loss-mask tokens both masked and kept by the IPO rule."
)
GRAD_RULE = ("trainer_logprobs is a float64 leaf with requires_grad=True; grad_trainer_logprobs = "
             "torch.autograd.grad(loss, trainer_logprobs)[0]; inference_logprobs and advantages have no grad.")
MODEL_RULE = (
    "Independent check (not a source of numbers): keep = loss_mask & |e^lp - e^inf| <= ipo_threshold; per_token ="
    " -keep*adv_tau*A*exp(lp - inf) + kl_tau*loss_mask*(lp - inf)^2; loss = sum(per_token); grad = "
    "-keep*adv_tau*A*exp(lp - inf) + 2*kl_tau*loss_mask*(lp - inf). Asserted to match upstream's loss and "
    "gradient to 1e-12 relative (to the sum of absolute terms)."
)
SEMANTICS = (
    "ipo_loss_fn takes one sequence (1-D [seq] tensors; advantages per token) and returns LossOutputs(loss, "
    "metrics). loss = SUM over the sequence of per_token_loss (no normalisation; loss_weights=None here). "
    "is_masked = |exp(lp) - exp(inf)| > ipo_threshold (strict, computed on every position, symmetric); keep_mask "
    "= loss_mask & ~is_masked; the KL term uses loss_mask (not keep_mask). Metrics use _safe_mean(v, m) = "
    "v[m].sum() / clamp_min(m.sum(), 1): masked_mismatch_kl over loss_mask & is_masked, unmasked_mismatch_kl over"
    " keep_mask, with mismatch_kl = r - log r - 1, r = exp(lp - inf); is_masked over loss_mask (bool sum / int "
    "count, so torch's default float32 dtype). compute_loss sums these per-sequence losses over the packed "
    "sequences and divides the sum by rl_scale, which train.py computes as the global (all-reduced over dp_cp) "
    "count of loss_mask tokens (loss_mask & rl_weights != 0 when rl_weights exist), clamped to at least 1: a "
    "token-mean over the whole step."
)

torch: Any = None  # populated in main()


def literal_field_defaults(tree: ast.Module, class_name: str, where: str) -> dict[str, Any]:
    """``name: T = Field(default, ge=..)`` (or a plain literal) for CONFIG_FIELDS of a pydantic class."""
    out: dict[str, Any] = {}
    for node in fw.pick_class(tree, class_name, where).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in CONFIG_FIELDS:
            v = node.value
            is_field = isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "Field"
            out[node.target.id] = ({"default": ast.literal_eval(v.args[0]),
                                    **{k.arg: ast.literal_eval(k.value) for k in v.keywords}}
                                   if is_field else {"default": ast.literal_eval(v)})
    if sorted(out) != sorted(CONFIG_FIELDS):
        raise SystemExit(f"{where}: {class_name} defaults found for {sorted(out)}, expected {CONFIG_FIELDS}")
    return out


def attrs_read(fn: ast.FunctionDef, var: str) -> list[str]:
    return sorted({n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                   and isinstance(n.value, ast.Name) and n.value.id == var})


def check_normaliser(sources: dict[str, str]) -> None:
    """Structural checks behind SEMANTICS' compute_loss / train.py sentences."""
    tree, where = fw.parse(sources, TARGET, LOSS)
    cl = fw.pick_top_level(tree, ["compute_loss"], where)[0]
    divs = {(n.left.id, n.right.id) for n in ast.walk(cl) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
            and isinstance(n.left, ast.Name) and isinstance(n.right, ast.Name)}
    if ("rl_loss", "rl_scale") not in divs:
        raise SystemExit(f"{where}: compute_loss does not divide rl_loss by rl_scale")
    ttree, twhere = fw.parse(sources, TARGET, TRAIN)
    dumps = [ast.dump(n) for n in ast.walk(ttree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id == "max"]
    if ast.dump(ast.parse("max(scale, 1)", mode="eval").body) not in dumps:
        raise SystemExit(f"{twhere}: no max(scale, 1) clamp of the global token counts")


def load(sources: dict[str, str]) -> types.SimpleNamespace:
    tree, where = fw.parse(sources, TARGET, LOSS)
    if any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in tree.body):
        raise SystemExit(f"{where}: has a __future__ import; the stand-in rationale in the docstring is stale")
    nodes = fw.pick_top_level(tree, PICKED, where)
    free = sorted(fw.free_globals(nodes) - set(PICKED))
    if free != STANDINS:
        raise SystemExit(f"{where}: picked definitions read {free}, stand-ins are {STANDINS}")
    ipo = next(n for n in nodes if n.name == "ipo_loss_fn")
    if attrs_read(ipo, "inputs") != INPUT_FIELDS or attrs_read(ipo, "loss_config") != sorted(CONFIG_FIELDS):
        raise SystemExit(f"{where}: ipo_loss_fn reads {attrs_read(ipo, 'inputs')} / {attrs_read(ipo, 'loss_config')}")
    ctree, cwhere = fw.parse(sources, TARGET, CONFIGS)
    defaults = literal_field_defaults(ctree, "IPOLossConfig", cwhere)

    class IPOLossConfig:  # stand-in: the recorded defaults, overridable
        def __init__(self, **over: Any) -> None:
            self.__dict__.update({k: v["default"] for k, v in defaults.items()}, **over)

    class LossInputs(types.SimpleNamespace):  # stand-in: only the fields ipo_loss_fn reads
        pass

    class LossOutputs:  # stand-in: stores loss and metrics
        def __init__(self, loss: Any, metrics: dict[str, Any]) -> None:
            self.loss, self.metrics = loss, metrics

    ns: dict[str, Any] = {"__name__": "prime_rl.trainer.rl.loss", "torch": torch, "Tensor": torch.Tensor,
                          "IPOLossConfig": IPOLossConfig, "LossInputs": LossInputs, "LossOutputs": LossOutputs}
    fw.exec_nodes(nodes, ns, where)
    lines = {n.name: [n.lineno, n.end_lineno] for n in nodes}
    return types.SimpleNamespace(ns=ns, defaults=defaults, lines=lines, Config=IPOLossConfig, Inputs=LossInputs)


def uniform(gen: Any, n: int, lo: float, hi: float) -> Any:
    return lo + (hi - lo) * torch.rand(n, generator=gen, dtype=torch.float64)


def draw(seed: int, thr: float) -> dict[str, Any] | None:
    gen = torch.Generator().manual_seed(seed)
    t = int(torch.randint(4, 13, (1,), generator=gen).item())
    mask = torch.rand(t, generator=gen, dtype=torch.float64) < 0.7
    lp = uniform(gen, t, -3.0, -0.05)
    inf = torch.clamp_max(lp + uniform(gen, t, -0.6, 0.6), -0.01)
    mag = uniform(gen, t, 0.05, 2.0)
    adv = torch.where(torch.rand(t, generator=gen, dtype=torch.float64) < 0.5, -mag, mag)
    edge = ((torch.exp(lp) - torch.exp(inf)).abs() - thr).abs().min().item()
    ok = bool(mask.any()) and not bool(mask.all()) and edge > EDGE_MARGIN
    return None if not ok else {"trainer_logprobs": lp, "inference_logprobs": inf, "advantages": adv, "loss_mask": mask}


def model(b: dict[str, Any], cfg: Any) -> tuple[float, Any, float]:
    lp, inf, adv, mask = (b[k].detach() for k in ("trainer_logprobs", "inference_logprobs", "advantages", "loss_mask"))
    m, d = mask.to(torch.float64), lp - inf
    keep = m * ((lp.exp() - inf.exp()).abs() <= cfg.ipo_threshold).to(torch.float64)
    pg, kl = keep * cfg.adv_tau * adv * torch.exp(d), cfg.kl_tau * m * d * d
    return float((kl - pg).sum()), 2 * cfg.kl_tau * m * d - pg, float((pg.abs() + kl.abs()).sum())


def close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= 1e-12 * max(abs(b), scale, 1e-300)


def run_case(api: types.SimpleNamespace, cfg: Any, b: dict[str, Any], where: str) -> dict[str, Any]:
    lp = b["trainer_logprobs"].clone().requires_grad_(True)
    inputs = api.Inputs(trainer_logprobs=lp, inference_logprobs=b["inference_logprobs"],
                        advantages=b["advantages"], loss_mask=b["loss_mask"], loss_weights=None)
    out = api.ns["ipo_loss_fn"](inputs, cfg)
    if out.loss.dim() != 0 or out.loss.dtype != torch.float64:
        raise SystemExit(f"{where}: loss is not a float64 scalar")
    grad, loss = torch.autograd.grad(out.loss, lp)[0], float(out.loss.detach())
    metrics = {k: float(v.detach()) for k, v in sorted(out.metrics.items())}
    dtypes = {k: str(v.dtype).replace("torch.", "") for k, v in sorted(out.metrics.items())}
    is_masked = (torch.exp(b["trainer_logprobs"]) - torch.exp(b["inference_logprobs"])).abs() > cfg.ipo_threshold
    mask = b["loss_mask"]
    n_mask, n_masked = int(mask.sum()), int((mask & is_masked).sum())
    if abs(metrics["is_masked"] - n_masked / max(n_mask, 1)) > 1e-6:
        raise SystemExit(f"{where}: recomputed is_masked disagrees with upstream's metric {metrics['is_masked']}")
    m_loss, m_grad, scale = model(b, cfg)
    if not close(m_loss, loss, scale) or not all(close(float(x), float(y), scale) for x, y in zip(m_grad, grad)):
        raise SystemExit(f"{where}: independent model disagrees: loss {m_loss} vs {loss}")
    if not all(abs(v) < float("inf") for v in [loss, *metrics.values(), *grad.tolist()]):  # NaN fails too
        raise SystemExit(f"{where}: non-finite output")
    return {"inputs": {k: v.tolist() for k, v in b.items()}, "metric_dtypes": dtypes, "loss_mask_tokens": n_mask,
            "outputs": {"loss": loss, "grad_trainer_logprobs": grad.tolist(), "metrics": metrics,
                        "is_masked": is_masked.tolist()}, "ipo_masked_loss_tokens": n_masked}


def record_variant(api: types.SimpleNamespace, name: str, over: dict[str, float]) -> dict[str, Any]:
    cfg = api.Config(**over)
    cases: list[dict[str, Any]] = []
    for i in range(CASES_PER_VARIANT):
        for attempt in range(MAX_ATTEMPTS):
            seed = zlib.crc32(f"prime-rl-ipo:{name}:{i}:{attempt}".encode()) & 0x7FFFFFFF
            b = draw(seed, cfg.ipo_threshold)
            if b is not None:
                break
        else:
            raise SystemExit(f"{name}:{i}: no accepted draw in {MAX_ATTEMPTS} attempts")
        cases.append({"seed": seed, "seed_attempt": attempt, "length": len(b["loss_mask"]),
                      **run_case(api, cfg, b, f"{name}:{i} (seed {seed})")})
    masked = sum(c["ipo_masked_loss_tokens"] for c in cases)
    kept = sum(c["loss_mask_tokens"] - c["ipo_masked_loss_tokens"] for c in cases)
    if masked == 0 or kept == 0:
        raise SystemExit(f"{name}: cases need loss tokens both masked ({masked}) and kept ({kept}) by the IPO rule")
    return {"name": name, "function": "ipo_loss_fn", "config": {f: getattr(cfg, f) for f in CONFIG_FIELDS},
            "overrides": dict(over), "cases": cases}


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prime-rl-git", default=os.environ.get("PRIME_RL_GIT"),
                        help="git directory (bare or work tree) of PrimeIntellect-ai/prime-rl (default: $PRIME_RL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    if not args.prime_rl_git:
        parser.error("--prime-rl-git (or $PRIME_RL_GIT) is required")
    import torch as _torch  # noqa: PLC0415
    torch = fw.torch = _torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    if "--prime-rl-git" not in sys.argv[1:]:
        command = f"PRIME_RL_GIT={shlex.quote(args.prime_rl_git)} {command}"
    sources = fw.read_pinned_sources(fw.git_dir_of(Path(args.prime_rl_git).resolve()), TARGET)
    check_normaliser(sources)
    api = load(sources)
    variants = [record_variant(api, name, over) for name, over in VARIANTS]
    provenance = {
        "tool": TOOL_PATH, "command": command, "repo": f"https://github.com/{TARGET.repo}",
        "commit": TARGET.commit, "files": [{"path": p, "sha256": s} for p, s in sorted(TARGET.files.items())],
        "picked_definitions": {LOSS: [f"{n} (lines {a}-{b})" for n, (a, b) in api.lines.items()],
                               CONFIGS: [f"IPOLossConfig.{f} (Field default only)" for f in CONFIG_FIELDS],
                               TRAIN: ["read only for the rl_scale structural check (nothing executed)"]},
        "config_defaults": {"IPOLossConfig": api.defaults},
        "loss_inputs_fields_read": INPUT_FIELDS,
        "stubs": ("torch is real torch; Tensor is torch.Tensor; LossInputs is a SimpleNamespace subclass built with"
                  " exactly loss_inputs_fields_read (loss_weights=None); LossOutputs stores loss and metrics; "
                  "IPOLossConfig carries config_defaults with the variant's overrides (no pydantic validation). "
                  "loss.py has no __future__ import: its def-time annotations evaluate against these stand-ins."),
        "loading": fw.LOADING_RULE, "semantics": SEMANTICS,
        "torch_version": torch.__version__, "python_version": platform.python_version(), "dtype": "float64",
        "seed_rule": SEED_RULE, "input_rule": INPUT_RULE, "grad_rule": GRAD_RULE, "model_rule": MODEL_RULE,
        "json_rule": "JSON indent=1 with sorted keys; floats are Python repr (shortest round-trip float64, "
                     "float32 metrics widened exactly); masks are booleans; all outputs finite (asserted).",
        "edge_margin": EDGE_MARGIN, "cases_per_variant": CASES_PER_VARIANT,
    }
    out = Path(args.out)
    fw.write_json(out, {"provenance": provenance, "variants": variants})
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(variants)} variants)")
    for v in variants:  # the redraw count and (IPO-masked, loss-mask) token counts per case
        print(f"  {v['name']}: attempts {[c['seed_attempt'] for c in v['cases']]}, masked/loss tokens "
              f"{[(c['ipo_masked_loss_tokens'], c['loss_mask_tokens']) for c in v['cases']]}")


if __name__ == "__main__":
    main()
