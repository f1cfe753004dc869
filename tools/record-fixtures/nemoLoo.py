#!/usr/bin/env python3
"""Record numeric fixtures of NeMo-RL's GRPO advantage (leave-one-out baseline and std).

This recorder runs the real ``GRPOAdvantageEstimator.compute_advantage`` of NeMo-RL
(``nemo_rl/algorithms/advantage_estimator.py``) and the ``calculate_baseline_and_std_per_prompt``
it calls (``nemo_rl/algorithms/utils.py``) at one pinned commit, on small seeded batches, and
writes only numbers plus provenance to ``test/fixtures/frameworks/nemo-loo.json``: 8 variants
(float64 / float32 x use_leave_one_out_baseline True / False x normalize_rewards True / False),
4 cases each. Every case records the inputs (rewards [B], prompt_ids [B, 2], the mask [B, T] of
ones, the groups) and the outputs (advantages [B, T] from compute_advantage, and the baseline and
std [B] returned by calculate_baseline_and_std_per_prompt for the same call).

No NeMo-RL code is copied into this repository. Upstream is loaded the way ``frameworks.py``
loads its frameworks, with its helpers (imported as a module): each pinned file is read with
``git --git-dir=<dir> show <commit>:<path>`` in memory, its SHA-256 is checked against
``FILES`` below before anything is parsed, it is parsed with ``ast``, and only
``calculate_baseline_and_std_per_prompt`` (utils.py) and the ``GRPOAdvantageEstimator`` class
(advantage_estimator.py) are compiled, with the upstream file names and line numbers, and
executed with real torch in namespaces that bind exactly the names they read (asserted). The
other imports of those files (transformers, pydantic, nemo_rl.*) are never executed.

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/nemoLoo.py \\
        --nemo-rl-git /path/to/NVIDIA-NeMo/RL.git

Output (JSON, indent=1, sorted keys, trailing newline, byte-stable across re-runs):

    test/fixtures/frameworks/nemo-loo.json
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import math
import os
import platform
import shlex
import sys
import types
import zlib
from pathlib import Path
from typing import Any, Iterator

sys.dont_write_bytecode = True  # importing frameworks.py must not leave a __pycache__ in the tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import frameworks as fw  # noqa: E402  (the sibling recorder, guarded by `if __name__ == "__main__"`)

TOOL_PATH = "tools/record-fixtures/nemoLoo.py"
DEFAULT_OUT = fw.REPO_ROOT / "test" / "fixtures" / "frameworks" / "nemo-loo.json"

# --------------------------------------------------------------------------------------
# Pinned upstream identity
# --------------------------------------------------------------------------------------

NEMO_UTILS = "nemo_rl/algorithms/utils.py"
NEMO_ADV = "nemo_rl/algorithms/advantage_estimator.py"
# SHA-256 of the whole file at the pin.
FILES = {
    NEMO_UTILS: "4b9014d79b5e2ce3246d7cda7b367ae98e0cc32da583ae4538880ba12d4c988f",
    NEMO_ADV: "694e004dc8ff6f065e3259edd3172d6384424f849ba0278aa5bcece360139863",
}
TARGET = fw.Target("nemo-rl", "NVIDIA-NeMo/RL", "7ea279abfbeb698b092856d0dab61e7cf39bc909", "7ea279ab", None,
                   "head (main of the local mirror)", FILES)

UTILS_PICKED = ["calculate_baseline_and_std_per_prompt"]
UTILS_BOUND = ["torch"]  # exactly the free names of UTILS_PICKED
ADV_PICKED = "GRPOAdvantageEstimator"
ADV_BOUND = ["AdvEstimatorConfig", "ClippedPGLossConfig", "calculate_baseline_and_std_per_prompt", "torch"]
CONFIG_READS = ["use_leave_one_out_baseline", "normalize_rewards"]  # what __init__ reads, in order
EPSILON = 1e-6  # the `epsilon = 1e-6` of compute_advantage (asserted in the source)
STUBS = (
    "calculate_baseline_and_std_per_prompt runs in a namespace holding only real torch. The class "
    "GRPOAdvantageEstimator runs in a namespace holding real torch, the picked "
    "calculate_baseline_and_std_per_prompt, and two stand-in classes bound to the names its "
    "__init__ annotations evaluate: AdvEstimatorConfig (a pydantic model upstream) is a class with "
    "exactly the slots use_leave_one_out_baseline and normalize_rewards, and ClippedPGLossConfig is "
    "a class with no attributes. The estimator is built as GRPOAdvantageEstimator(<config stand-in>, "
    "<loss-config stand-in>); both stand-ins log every attribute read, and the recorder asserts that "
    "__init__ reads exactly use_leave_one_out_baseline then normalize_rewards of the first and "
    "nothing of the second. Nothing else of NeMo-RL is imported."
)

# --------------------------------------------------------------------------------------
# Recording rules
# --------------------------------------------------------------------------------------

SPREAD_MARGIN = 0.05
MAX_REDRAWS = 1000
REWARD_RANGE = (-1.0, 1.0)
PROMPT_ID_RANGE = (0, 99)

# Group sizes in group order, T, whether rows are permuted, the zero-spread groups (group index ->
# "drawn" (one U[-1, 1] draw copied to every row) or a fixed value), and whether group 1's
# prompt-id row shares its first column with group 0's (so matching must use the whole row).
LAYOUTS = (
    {"group_sizes": [3, 1, 2], "width": 4, "shuffle": False, "zero_spread": {}, "share_first_column": False},
    {"group_sizes": [4, 2, 1, 3], "width": 3, "shuffle": True, "zero_spread": {"3": "drawn"},
     "share_first_column": True},
    {"group_sizes": [5, 2], "width": 5, "shuffle": False, "zero_spread": {"1": 1.0}, "share_first_column": False},
    {"group_sizes": [2, 4, 1, 1], "width": 5, "shuffle": True, "zero_spread": {"1": "drawn"},
     "share_first_column": True},
)
DTYPES = ("float64", "float32")
SETTINGS = ((True, True), (True, False), (False, True), (False, False))  # (leave_one_out, normalize)

SEED_RULE = (
    "seed = zlib.crc32(f'nemo-rl@7ea279ab:nemo_loo:{variant}:{i}'.encode()) & 0x7FFFFFFF "
    "(frameworks.case_seed with variant 'nemo_loo:<variant>') for case i = 0..3 of a variant; every "
    "draw comes from torch.Generator().manual_seed(seed) on CPU (uniforms in float64: frameworks.uniform; "
    "integers: frameworks.randint; the permutation: torch.randperm(B, generator=gen)). When a draw "
    "breaks the spread rule the whole case is redrawn with seed crc32(f'...:{i}:{k}') for k = 1, 2, ...; "
    "the recorded seed is the one used. The TS side cannot replay torch's RNG: seeds are provenance "
    "only, every input is embedded in the file."
)
INPUT_RULE = (
    "Case i has the layout LAYOUTS[i] (recorded as the case's layout): group sizes in group order, "
    "T, shuffle, zero-spread groups, share_first_column. Draw order: for each group g, a prompt-id row "
    "[randint(0..99), randint(0..99)], with share_first_column group 1's first entry then replaced by "
    "group 0's, the whole row redrawn until it differs from every earlier group's row; then, when shuffle is true, perm = torch.randperm(B) and the k-th row of the "
    "group-ordered batch is placed at position perm[k] (else at k); then the rewards in group order, "
    "one U[-1, 1] per row (a zero-spread group 'drawn' takes one draw copied to all its rows; a fixed "
    "value is used as is), cast to the variant's dtype. inputs.groups lists each group's row positions "
    "(ascending) in group order and inputs.group_sizes their sizes. Spread rule: in every group that is "
    "not zero-spread, every pair of rewards (in the variant's dtype) is more than 0.05 apart, so every "
    "such std is far from 0. prompt_ids are torch.int64 [B, 2]; rows of a group are equal and rows of "
    "different groups differ. mask is torch.ones(B, T) in the rewards' dtype (recorded as booleans): "
    "compute_advantage uses only its shape, asserted by re-running with torch.zeros(B, T) and "
    "requiring bitwise-identical advantages."
)
JSON_RULE = (
    "JSON indent=1 with sorted keys; finite floats are Python repr (shortest round-trip float64; "
    "float32 values are stored exactly as float64); non-finite floats would be the strings 'NaN', "
    "'Infinity', '-Infinity' (none occur: every output is asserted finite); the mask is booleans; "
    "prompt_ids are ints; signed zeros are kept (-0.0). Each variant's dtypes field gives the torch "
    "dtype of every recorded tensor output."
)
DTYPE_RULE = (
    "calculate_baseline_and_std_per_prompt builds its [n, n] baseline matrix with torch.eye / "
    "torch.ones in torch's DEFAULT dtype and multiplies it with the rewards by torch.matmul, which does "
    "not promote: with float64 rewards under the usual float32 default it raises (recorded per float64 "
    "variant in float64_under_default_float32; NeMo-RL's own rewards are float32). The float64 family "
    "is therefore recorded with torch.set_default_dtype(torch.float64) around each upstream call (so "
    "that matrix is float64, the only effect on the picked code); the float32 family runs under the "
    "float32 default. variants[].default_dtype says which. In both, num_valid is valid_mask.float().sum() "
    "- int(leave_one_out), a float32 0-dim tensor (small integers, exact), and the epsilon 1e-6 is a "
    "Python float."
)

torch: Any = None  # populated in main()


# --------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------


def to_json(x: Any) -> Any:
    """Tensors / floats to JSON values (non-finite floats as strings, -0.0 kept)."""
    if torch.is_tensor(x):
        return to_json(x.tolist())
    if isinstance(x, (list, tuple)):
        return [to_json(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, (str, int)):
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
    if not a.is_floating_point():
        return bool((a == b).all())
    both_nan = torch.isnan(a) & torch.isnan(b)
    eq = (a == b) & (torch.signbit(a) == torch.signbit(b))
    return bool((both_nan | eq).all())


def close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    return bool(torch.allclose(a.to(torch.float64), b.to(torch.float64), rtol=rtol, atol=atol))


def dtype_name(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


@contextlib.contextmanager
def default_dtype(dt: Any) -> Iterator[None]:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dt)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def seeded(name: str, i: int, attempt: int) -> int:
    base = fw.case_seed(TARGET.framework, TARGET.label, f"nemo_loo:{name}", i)
    if attempt == 0:
        return base
    text = f"{TARGET.framework}@{TARGET.label}:nemo_loo:{name}:{i}:{attempt}"
    return zlib.crc32(text.encode("utf-8")) & 0x7FFFFFFF


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------

READS: list[tuple[str, str]] = []  # (stand-in, attribute) in read order


class AdvEstimatorConfigStandIn:
    """Stand-in for nemo_rl's AdvEstimatorConfig: exactly the two fields GRPO's __init__ reads."""

    __slots__ = ("use_leave_one_out_baseline", "normalize_rewards")

    def __init__(self, use_leave_one_out_baseline: bool, normalize_rewards: bool) -> None:
        object.__setattr__(self, "use_leave_one_out_baseline", use_leave_one_out_baseline)
        object.__setattr__(self, "normalize_rewards", normalize_rewards)

    def __getattribute__(self, name: str) -> Any:
        READS.append(("estimator_config", name))
        return object.__getattribute__(self, name)


class ClippedPGLossConfigStandIn:
    """Stand-in for nemo_rl's ClippedPGLossConfig: no attributes (GRPO's __init__ reads none)."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        READS.append(("loss_config", name))
        return object.__getattribute__(self, name)


def method_lines(cls: ast.ClassDef) -> dict[str, list[int]]:
    return {n.name: [n.lineno, n.end_lineno] for n in cls.body if isinstance(n, ast.FunctionDef)}


def read_epsilon(cls: ast.ClassDef, where: str) -> float:
    """The literal of `epsilon = ...` inside compute_advantage (exactly one such statement)."""
    method = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "compute_advantage"]
    if len(method) != 1:
        raise SystemExit(f"{where}: expected one {ADV_PICKED}.compute_advantage")
    found = [n for n in ast.walk(method[0]) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == "epsilon"]
    if len(found) != 1:
        raise SystemExit(f"{where}: expected one `epsilon = ...` in compute_advantage, found {len(found)}")
    return float(ast.literal_eval(found[0].value))


def load(sources: dict[str, str]) -> types.SimpleNamespace:
    u_tree, u_name = fw.parse(sources, TARGET, NEMO_UTILS)
    u_nodes = fw.pick_top_level(u_tree, UTILS_PICKED, u_name)
    u_free = sorted(fw.free_globals(u_nodes))
    if u_free != UTILS_BOUND:
        raise SystemExit(f"{u_name}: picked definitions read {u_free}, the namespace binds {UTILS_BOUND}")
    u_ns: dict[str, Any] = {"__name__": "nemo_rl.algorithms.utils", "torch": torch}
    fw.exec_nodes(u_nodes, u_ns, u_name)

    a_tree, a_name = fw.parse(sources, TARGET, NEMO_ADV)
    cls = fw.pick_class(a_tree, ADV_PICKED, a_name)
    methods = sorted(method_lines(cls))
    if methods != ["__init__", "compute_advantage"]:
        raise SystemExit(f"{a_name}: {ADV_PICKED} defines {methods}, expected __init__ and compute_advantage")
    a_free = sorted(fw.free_globals([cls]))
    if a_free != ADV_BOUND:
        raise SystemExit(f"{a_name}: {ADV_PICKED} reads {a_free}, the namespace binds {ADV_BOUND}")
    epsilon = read_epsilon(cls, a_name)
    if epsilon != EPSILON:
        raise SystemExit(f"{a_name}: compute_advantage has epsilon {epsilon!r}, the description says {EPSILON!r}")
    defaults = fw.dataclass_defaults(a_tree, "AdvEstimatorConfig", CONFIG_READS, a_name)
    a_ns: dict[str, Any] = {
        "__name__": "nemo_rl.algorithms.advantage_estimator", "torch": torch,
        "calculate_baseline_and_std_per_prompt": u_ns["calculate_baseline_and_std_per_prompt"],
        "AdvEstimatorConfig": AdvEstimatorConfigStandIn, "ClippedPGLossConfig": ClippedPGLossConfigStandIn,
    }
    fw.exec_nodes([cls], a_ns, a_name)
    return types.SimpleNamespace(
        baseline_fn=u_ns["calculate_baseline_and_std_per_prompt"], estimator_cls=a_ns[ADV_PICKED],
        picked={
            NEMO_UTILS: [f"{fw.node_name(n)} (lines {n.lineno}-{n.end_lineno})" for n in u_nodes],
            NEMO_ADV: [f"{ADV_PICKED} (lines {cls.lineno}-{cls.end_lineno}; methods "
                       + ", ".join(f"{m} {a}-{b}" for m, (a, b) in sorted(method_lines(cls).items())) + ")"],
        },
        free={NEMO_UTILS: u_free, NEMO_ADV: a_free}, epsilon=epsilon, defaults=dict(sorted(defaults.items())))


def build_estimator(api: types.SimpleNamespace, loo: bool, normalize: bool) -> Any:
    config = AdvEstimatorConfigStandIn(loo, normalize)
    loss_config = ClippedPGLossConfigStandIn()
    READS.clear()
    est = api.estimator_cls(config, loss_config)
    reads = list(READS)
    READS.clear()
    if reads != [("estimator_config", n) for n in CONFIG_READS]:
        raise AssertionError(f"GRPOAdvantageEstimator.__init__ read {reads}, expected {CONFIG_READS}")
    if (est.use_leave_one_out_baseline, est.normalize_rewards) != (loo, normalize):
        raise AssertionError("GRPOAdvantageEstimator did not keep the configured flags")
    return est


# --------------------------------------------------------------------------------------
# Drawing and recording
# --------------------------------------------------------------------------------------


def draw_prompt_rows(gen: Any, layout: dict[str, Any]) -> list[list[int]]:
    rows: list[list[int]] = []
    lo, hi = PROMPT_ID_RANGE
    for g in range(len(layout["group_sizes"])):
        while True:
            row = [fw.randint(gen, lo, hi), fw.randint(gen, lo, hi)]
            if g == 1 and layout["share_first_column"]:
                row[0] = rows[0][0]
            if row not in rows:
                break
        rows.append(row)
    return rows


def spread_ok(values: list[float], groups: list[list[int]], zero_spread: dict[str, Any]) -> bool:
    for g, rows in enumerate(groups):
        if str(g) in zero_spread:
            continue
        for a in range(len(rows)):
            for b in range(a + 1, len(rows)):
                if abs(values[rows[a]] - values[rows[b]]) <= SPREAD_MARGIN:
                    return False
    return True


def draw_case(name: str, dt: Any, i: int) -> tuple[int, dict[str, Any]]:
    layout = LAYOUTS[i]
    sizes = layout["group_sizes"]
    batch = sum(sizes)
    for attempt in range(MAX_REDRAWS + 1):
        seed = seeded(name, i, attempt)
        gen = torch.Generator().manual_seed(seed)
        prompt_rows = draw_prompt_rows(gen, layout)
        perm = torch.randperm(batch, generator=gen).tolist() if layout["shuffle"] else list(range(batch))
        groups: list[list[int]] = []
        k = 0
        for size in sizes:
            groups.append(sorted(perm[k:k + size]))
            k += size
        rewards64 = torch.zeros(batch, dtype=torch.float64)
        k = 0
        for g, size in enumerate(sizes):
            spec = layout["zero_spread"].get(str(g))
            if spec is None:
                values = fw.uniform(gen, (size,), *REWARD_RANGE)
            elif spec == "drawn":
                values = fw.uniform(gen, (1,), *REWARD_RANGE).repeat(size)
            else:
                values = torch.full((size,), float(spec), dtype=torch.float64)
            for j in range(size):
                rewards64[perm[k + j]] = values[j]
            k += size
        rewards = rewards64.to(dt)
        if not spread_ok(rewards.tolist(), groups, layout["zero_spread"]):
            continue
        prompt_ids = torch.zeros((batch, 2), dtype=torch.int64)
        for g, rows in enumerate(groups):
            for r in rows:
                prompt_ids[r] = torch.tensor(prompt_rows[g], dtype=torch.int64)
        return seed, {"rewards": rewards, "prompt_ids": prompt_ids, "groups": groups,
                      "mask": torch.ones((batch, layout["width"]), dtype=dt)}
    raise SystemExit(f"{name}:{i}: no draw met the spread rule in {MAX_REDRAWS} redraws")


def run_upstream(api: types.SimpleNamespace, est: Any, d: dict[str, Any], loo: bool, mask: Any = None) -> dict[str, Any]:
    """compute_advantage as NeMo-RL's trainer calls it, and the baseline/std of the same call."""
    with torch.no_grad():
        adv = est.compute_advantage(prompt_ids=d["prompt_ids"], rewards=d["rewards"],
                                    mask=d["mask"] if mask is None else mask)
        baseline, std = api.baseline_fn(d["prompt_ids"], d["rewards"], torch.ones_like(d["rewards"]),
                                        leave_one_out_baseline=loo)
    return {"advantages": adv.clone(), "baseline": baseline, "std": std}


def reference(d: dict[str, Any], loo: bool, normalize: bool) -> dict[str, Any]:
    """The description's formula, two-pass, in float64 (asserted against upstream, not recorded)."""
    r = d["rewards"].to(torch.float64)
    baseline = torch.zeros_like(r)
    std = torch.zeros_like(r)
    for rows in d["groups"]:
        n = len(rows)
        for row in rows:
            if n == 1:
                baseline[row] = r[row]
                continue
            pool = [x for x in rows if x != row] if loo else rows
            v = r[pool]
            m = len(pool)
            baseline[row] = v.mean()
            if m > 1:
                # the Bessel factor m / (m - 1) is a float32 quotient upstream (num_valid is float32)
                bessel = float(torch.tensor(float(m), dtype=torch.float32) / torch.tensor(float(m - 1), dtype=torch.float32))
                std[row] = torch.sqrt(((v - v.mean()) ** 2).mean() * bessel)
            # m = 1 (n = 2 with LOO): std stays 0 (upstream: nan_to_num of 0 * inf)
    adv = r - baseline
    if normalize:
        adv = torch.where(std > 0, adv / (std + EPSILON), adv)
    return {"advantages": adv, "baseline": baseline, "std": std}


def cross_check(name: str, i: int, d: dict[str, Any], out: dict[str, Any], loo: bool, normalize: bool,
                zero_rows: list[int]) -> None:
    dt = d["rewards"].dtype
    rtol, atol = (1e-10, 1e-12) if dt == torch.float64 else (2e-4, 1e-6)
    ref = reference(d, loo, normalize)
    keep = torch.ones(d["rewards"].shape[0], dtype=torch.bool)
    keep[zero_rows] = False
    adv_rows = out["advantages"][:, 0]
    for key, got in (("baseline", out["baseline"]), ("std", out["std"]), ("advantages", adv_rows)):
        if not close(got[keep], ref[key][keep], rtol, atol):
            raise AssertionError(f"{name}:{i}: upstream {key} differs from the description")
    if not torch.equal(out["std"][keep] > 0, ref["std"][keep] > 0):
        raise AssertionError(f"{name}:{i}: upstream normalises other rows than the description")
    # zero-spread rows: the description gives baseline = reward, std = 0, advantage 0; upstream's
    # E[x^2] - E[x]^2 may leave a rounding residue, which must stay tiny
    for row in zero_rows:
        if abs(float(out["baseline"][row] - d["rewards"][row])) > 1e-6 or float(out["std"][row]) > 1e-3 \
                or abs(float(adv_rows[row])) > 1e-2:
            raise AssertionError(f"{name}:{i}: zero-spread row {row} is far from 0")
    # the advantage is exactly (rewards - baseline), divided by (std + 1e-6) where std > 0
    centred = d["rewards"] - out["baseline"]
    mine = torch.where(out["std"] > 0, centred / (out["std"] + EPSILON), centred) if normalize else centred
    if not same(adv_rows, mine):
        raise AssertionError(f"{name}:{i}: advantages are not bitwise (r - baseline) [/ (std + 1e-6)]")
    if not same(out["advantages"], adv_rows.unsqueeze(-1).expand(out["advantages"].shape)):
        raise AssertionError(f"{name}:{i}: advantages are not constant along T")


def describe(loo: bool, normalize: bool, dtype: str) -> str:
    if loo:
        base = ("baseline_i = (S - r_i) / (n - 1) and std_i = sqrt((Q_i - baseline_i^2) * (n - 1) / (n - 2)) "
                "with Q_i = (sum_j r_j^2 - r_i^2) / (n - 1): the mean and the Bessel (n - 2) std of the "
                "OTHER n - 1 rewards; for n = 2, (n - 1) / (n - 2) = 1/0 = inf and Q_i - baseline_i^2 is "
                "exactly 0, so std = nan_to_num(0 * inf) = 0 (pairs are never normalised)")
    else:
        base = ("baseline = S / n (group mean) and std = sqrt((Q - baseline^2) * n / (n - 1)) with Q = "
                "sum_j r_j^2 / n: the Bessel sample std, by the one-pass E[r^2] - E[r]^2 formula")
    norm = ("Then, where std > 0, advantage = (r - baseline) / (std + 1e-6); where std == 0 it stays r - baseline"
            if normalize else "Advantage = r - baseline (no normalisation; std is still returned)")
    return (
        f"NeMo-RL GRPOAdvantageEstimator(use_leave_one_out_baseline={loo}, normalize_rewards={normalize})"
        f".compute_advantage(prompt_ids, rewards, mask), {dtype} rewards. Groups are the rows with equal "
        f"prompt_ids rows (torch.unique(dim=0), all columns compared). calculate_baseline_and_std_per_prompt("
        f"prompt_ids, rewards, ones_like(rewards), leave_one_out_baseline={loo}): for a group of n rows with "
        f"reward sum S, a group with n <= 1 (a singleton) gets baseline = reward and std = 0 (advantage 0); "
        f"otherwise (all sums by matmul with the [n, n] matrix {'1 - eye' if loo else 'ones'}) {base}; "
        f"std = sqrt(...).nan_to_num(0), so a slightly negative rounding residue gives 0. The Bessel factor "
        f"m / (m - 1) (m = {'n - 1' if loo else 'n'}) is a float32 quotient in BOTH dtype families, because "
        f"num_valid = valid_mask.float().sum() - int(leave_one_out) is float32: it is exact for m = 2, 3, 5 "
        f"(the only other m here is 4, where 4/3 becomes 1.3333333730697632 and std is relatively 1.49e-8 "
        f"high). {norm}. "
        f"The [B, 1] advantage is expanded to mask.shape (only the shape of mask is used). A zero-spread "
        f"group has 0 in exact arithmetic, but the one-pass formula can leave a rounding residue in baseline "
        f"and std (recorded as upstream gives it; see zero_spread_groups)."
    )


def record_variant(api: types.SimpleNamespace, dtype: str, loo: bool, normalize: bool) -> dict[str, Any]:
    dt = getattr(torch, dtype)
    name = f"grpo:{dtype}:leave_one_out={loo}:normalize={normalize}"
    est = build_estimator(api, loo, normalize)
    default = dt if dt == torch.float64 else torch.float32
    cases = []
    dtypes: dict[str, str] = {}
    probe_errors: set[str] = set()
    for i in range(len(LAYOUTS)):
        seed, d = draw_case(name, dt, i)
        if dt == torch.float64:
            try:
                with default_dtype(torch.float32):
                    run_upstream(api, est, d, loo)
                probe_errors.add("no error")
            except RuntimeError as e:
                probe_errors.add(f"RuntimeError: {e}")
        with default_dtype(default):
            out = run_upstream(api, est, d, loo)
            again = run_upstream(api, est, d, loo)
            zero_mask = run_upstream(api, est, d, loo, mask=torch.zeros_like(d["mask"]))
        for key in out:
            if not same(out[key], again[key]):
                raise AssertionError(f"{name}:{i}: {key} differs between two identical runs")
            if not bool(torch.isfinite(out[key]).all()):
                raise AssertionError(f"{name}:{i}: {key} is not finite")
            if dtypes.setdefault(key, dtype_name(out[key])) != dtype_name(out[key]):
                raise AssertionError(f"{name}:{i}: {key} dtype changed between cases")
        if not same(out["advantages"], zero_mask["advantages"]):
            raise AssertionError(f"{name}:{i}: the mask's values reach the advantages")
        if tuple(out["advantages"].shape) != tuple(d["mask"].shape):
            raise AssertionError(f"{name}:{i}: advantages shape {tuple(out['advantages'].shape)}")
        layout = LAYOUTS[i]
        zero_rows = [r for g in layout["zero_spread"] for r in d["groups"][int(g)]]
        cross_check(name, i, d, out, loo, normalize, zero_rows)
        zero_info = []
        for g in sorted(layout["zero_spread"], key=int):
            rows = d["groups"][int(g)]
            zero_info.append({
                "group": int(g), "rows": rows,
                "std_positive": bool((out["std"][rows] > 0).any()),
                "centred_nonzero": bool(((d["rewards"][rows] - out["baseline"][rows]) != 0).any()),
                "advantages_nonzero": bool((out["advantages"][rows] != 0).any()),
            })
        cases.append({
            "seed": seed,
            "shape": list(d["mask"].shape),
            "layout": {k: (dict(sorted(v.items())) if isinstance(v, dict) else v) for k, v in sorted(layout.items())},
            "inputs": {
                "rewards": to_json(d["rewards"]),
                "prompt_ids": d["prompt_ids"].tolist(),
                "mask": d["mask"].bool().tolist(),
                "groups": d["groups"],
                "group_sizes": [len(g) for g in d["groups"]],
            },
            "outputs": {k: to_json(v) for k, v in out.items()},
            "normalized_rows": (out["std"] > 0).tolist() if normalize else [False] * len(d["rewards"]),
            "zero_spread_groups": zero_info,
        })
    variant: dict[str, Any] = {
        "framework": TARGET.framework,
        "pin": TARGET.label,
        "commit": TARGET.commit,
        "name": name,
        "function": "nemo_rl.algorithms.advantage_estimator.GRPOAdvantageEstimator.compute_advantage",
        "called_via": ("GRPOAdvantageEstimator(estimator_config, loss_config).compute_advantage(prompt_ids=..., "
                       "rewards=..., mask=...); baseline and std from calculate_baseline_and_std_per_prompt("
                       "prompt_ids, rewards, torch.ones_like(rewards), leave_one_out_baseline=...), the call "
                       "compute_advantage makes"),
        "dtype": dtype,
        "default_dtype": str(default).replace("torch.", ""),
        "setting": {"use_leave_one_out_baseline": loo, "normalize_rewards": normalize},
        "estimator_config": {"use_leave_one_out_baseline": loo, "normalize_rewards": normalize},
        "loss_config": {},
        "epsilon": api.epsilon,
        "description": describe(loo, normalize, dtype),
        "dtypes": dict(sorted(dtypes.items())),
        "cases": cases,
    }
    if dt == torch.float64:
        if len(probe_errors) != 1:
            raise AssertionError(f"{name}: the default-float32 probe gave {sorted(probe_errors)}")
        variant["float64_under_default_float32"] = probe_errors.pop()
    return variant


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------


def main() -> None:
    global torch
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nemo-rl-git", default=os.environ.get("NEMO_RL_GIT"),
                        help="git directory (bare or work tree) of NVIDIA-NeMo/RL (default: $NEMO_RL_GIT)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    if not args.nemo_rl_git:
        parser.error("--nemo-rl-git (or $NEMO_RL_GIT) is required")

    import torch as _torch  # noqa: PLC0415
    torch = _torch
    fw.torch = _torch  # frameworks.py's helpers read its module global
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    if torch.get_default_dtype() != torch.float32:
        raise SystemExit("torch's default dtype is not float32 at start")

    command = shlex.join([sys.executable, TOOL_PATH, *sys.argv[1:]])
    if "--nemo-rl-git" not in " ".join(sys.argv[1:]):
        command = f"NEMO_RL_GIT={shlex.quote(args.nemo_rl_git)} {command}"

    git_dir = fw.git_dir_of(Path(args.nemo_rl_git).resolve())
    sources = fw.read_pinned_sources(git_dir, TARGET)
    api = load(sources)
    variants = [record_variant(api, dtype, loo, normalize) for dtype in DTYPES for loo, normalize in SETTINGS]

    pin = {
        "framework": TARGET.framework, "repo": f"https://github.com/{TARGET.repo}", "commit": TARGET.commit,
        "label": TARGET.label, "tag": TARGET.tag, "role": TARGET.role,
        "files": [{"path": p, "sha256": s} for p, s in sorted(TARGET.files.items())],
        "picked_definitions": api.picked,
        "free_names": api.free,
        "functions": ["nemo_rl.algorithms.utils.calculate_baseline_and_std_per_prompt",
                      "nemo_rl.algorithms.advantage_estimator.GRPOAdvantageEstimator.compute_advantage"],
        "stubs": STUBS,
        "config_reads": {"estimator_config": CONFIG_READS, "loss_config": []},
        "upstream_config_defaults": api.defaults,
        "variants": [v["name"] for v in variants],
    }
    provenance = {
        "tool": TOOL_PATH,
        "command": command,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "dtype": "float64 and float32 families (variants[].dtype); prompt_ids int64",
        "pins": [pin],
        "loading": fw.LOADING_RULE + (
            " Here only nemo_rl/algorithms/utils.py (calculate_baseline_and_std_per_prompt) and "
            "nemo_rl/algorithms/advantage_estimator.py (the GRPOAdvantageEstimator class; "
            "AdvEstimatorConfig's defaults are read with ast, not executed) are read; their SHA-256 "
            "values are pinned in nemoLoo.py."
        ),
        "seed_rule": SEED_RULE,
        "input_rule": INPUT_RULE,
        "json_rule": JSON_RULE,
        "dtype_rule": DTYPE_RULE,
        "layouts": [{k: (dict(sorted(v.items())) if isinstance(v, dict) else v) for k, v in sorted(lay.items())}
                    for lay in LAYOUTS],
        "spread_margin": SPREAD_MARGIN,
        "cross_check": (
            "Not recorded, asserted: for every case the recorder re-computes baseline, std and advantages "
            "from the description with two-pass float64 statistics and requires agreement within rtol 1e-10 / "
            "atol 1e-12 (float64 family) or rtol 2e-4 / atol 1e-6 (float32 family) on the rows of groups "
            "that are not zero-spread, and the same set of normalised rows; zero-spread rows must have "
            "|baseline - reward| <= 1e-6, std <= 1e-3 and |advantage| <= 1e-2. The advantages must equal "
            "bitwise (rewards - baseline) [/ (std + 1e-6) where std > 0] from the recorded baseline and "
            "std, be constant along T, and be bitwise unchanged with a mask of zeros. Every case is run "
            "twice and required to be bitwise identical."
        ),
    }
    out = Path(args.out)
    fw.write_json(out, {"provenance": provenance, "variants": variants})
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(variants)} variants, "
          f"{sum(len(v['cases']) for v in variants)} cases)")
    for v in variants:
        residues = [[(z["group"], z["std_positive"], z["centred_nonzero"]) for z in c["zero_spread_groups"]]
                    for c in v["cases"]]
        print(f"  {v['name']}: seeds {[c['seed'] for c in v['cases']]}, zero-spread (group, std>0, r-b!=0) "
              f"{residues}" + (f", default-float32 probe: {v['float64_under_default_float32']}"
                               if "float64_under_default_float32" in v else ""))


if __name__ == "__main__":
    main()
