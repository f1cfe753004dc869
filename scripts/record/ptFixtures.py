#!/usr/bin/env python3
"""Record the ``.pt`` reader's fixtures with the real ``torch.save``.

Writes small ``torch.save`` files into ``test/fixtures/io/pt/`` and ``manifest.json`` beside them:
for every file its SHA-256, and for every flattened name (docs/io.md#pt: nested dict keys and
list/tuple indices joined with '.') the dtype, shape, stride and storage offset torch reports and
the values as torch gives them -- ``t.double().reshape(-1).tolist()`` (row-major), non-finite
values written as the strings "NaN", "Infinity", "-Infinity", and for F16 / BF16 also the exact
16-bit patterns (``t.view(torch.int16)``). Python scalars are recorded as 0-d tensors (int -> I64,
float -> F64, bool -> BOOL), str values under ``metadata`` and the names of None values under
``metadata["__none__"]`` (a JSON array), as the reader documents. The manifest also records the
torch and Python versions and this script's own SHA-256.

``evil.pt`` is a real ``torch.save`` of an object whose ``__reduce__`` is ``(exec, (code,))``:
unpickling it with Python's pickle runs ``code``, which writes ``polgrad-pwned.marker`` in the
current directory. This script only *writes* it (pickling calls ``__reduce__``, not ``exec``);
the manifest records the global and the byte offset of its GLOBAL opcode as ``pickletools``
disassembles them (protocol 2 spells ``builtins`` as ``__builtin__``).

Usage, from the repository root (Debian's /usr/bin/python3 has python3-torch 1.13):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 scripts/record/ptFixtures.py

``--out DIR`` writes elsewhere. The output is byte-identical on every run (torch.save writes
fixed zip timestamps, and the archive folder is the file's stem).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import pickletools
import platform
import sys
import zipfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).resolve()
COMMAND = "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 scripts/record/ptFixtures.py"
MARKER = "polgrad-pwned.marker"

DTYPE = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}


def half(bits: list[int], dtype: torch.dtype) -> torch.Tensor:
    """A half tensor with exactly these 16-bit patterns."""
    signed = [b - 65536 if b >= 32768 else b for b in bits]
    return torch.tensor(signed, dtype=torch.int16).view(dtype)


def number(x: float) -> float | str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def describe(t: torch.Tensor) -> dict:
    out = {
        "dtype": DTYPE[t.dtype],
        "shape": list(t.shape),
        "stride": list(t.stride()),
        "storage_offset": t.storage_offset(),
    }
    flat = t.reshape(-1)
    if t.dtype in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        out["values"] = flat.tolist()
    elif t.dtype == torch.bool:
        out["values"] = [int(b) for b in flat.tolist()]
    else:
        out["values"] = [number(v) for v in flat.double().tolist()]
    if t.dtype in (torch.float16, torch.bfloat16):
        out["bits"] = [b & 0xFFFF for b in flat.contiguous().view(torch.int16).tolist()]
    return out


def flatten(obj) -> tuple[dict, dict]:
    """(tensors, metadata) by dotted name, in insertion order -- the documented naming rule."""
    tensors: dict = {}
    metadata: dict = {}
    none: list[str] = []

    def walk(v, name: str) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{name}.{k}" if name else str(k))
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, f"{name}.{i}")
        elif isinstance(v, torch.Tensor):
            tensors[name] = describe(v)
        elif isinstance(v, bool):
            tensors[name] = describe(torch.tensor(v))
        elif isinstance(v, int):
            tensors[name] = describe(torch.tensor(v, dtype=torch.int64))
        elif isinstance(v, float):
            tensors[name] = describe(torch.tensor(v, dtype=torch.float64))
        elif isinstance(v, str):
            metadata[name] = v
        elif v is None:
            none.append(name)
        else:
            raise TypeError(f"{name}: {type(v)}")

    walk(obj, "")
    if none:
        metadata["__none__"] = json.dumps(none, separators=(",", ":"))
    return tensors, metadata


def cases() -> dict:
    torch.manual_seed(20261130)
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    small = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.LayerNorm(2))
    t = torch.tensor([-0.5, -1.25, -2.0], dtype=torch.float32)
    return {
        "dtypes": {
            "f64": torch.tensor(
                [0.0, -0.0, 1.5, 0.1, 2.0**-1074, 1.7976931348623157e308, math.inf, -math.inf, math.nan],
                dtype=torch.float64,
            ),
            "f32": torch.tensor([0.1, -3.5, 2.0**-149, 3.4028234663852886e38, math.inf, math.nan], dtype=torch.float32),
            "f16": half([0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0x3555, 0x7BFF, 0x7C00, 0xFC00, 0x7E00], torch.float16),
            "bf16": half([0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x3F80, 0x3E4D, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0], torch.bfloat16),
            "i64": torch.tensor([0, -1, 2**53, -(2**53), 123456789012345], dtype=torch.int64),
            "i32": torch.tensor([-(2**31), 2**31 - 1, 0, 7], dtype=torch.int32),
            "i16": torch.tensor([-32768, 32767, -1], dtype=torch.int16),
            "i8": torch.tensor([-128, 127, 0], dtype=torch.int8),
            "u8": torch.tensor([0, 255, 128], dtype=torch.uint8),
            "bool": torch.tensor([True, False, True]),
        },
        "views": {
            "base": base,
            "transposed": base.t(),
            "slice": base[1:3],
            "step": base[:, 1::2],
            "column": base[:, 2],
            "element": base[2, 3],
            "empty": base[:0],
            "expand": torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64).expand(4, 3),
            "permuted": torch.arange(24, dtype=torch.int64).reshape(2, 3, 4).permute(2, 0, 1),
            "f32_t": small.t(),
            "f32": small,
        },
        "nested": {
            "batch": {"old_log_probs": t, "advantages": torch.tensor([1.0, -1.0]), "mask": torch.tensor([True, False])},
            "list": [small, t],
            "tuple": (torch.tensor([7], dtype=torch.int32),),
            "deep": {"a": {"b": {"c": torch.tensor(2.5, dtype=torch.float64)}}},
            "optimizer": {"state": {0: {"step": torch.tensor(3.0)}}},
            "step": 7,
            "lr": 0.001,
            "flag": True,
            "run": "run-1",
            "note": None,
        },
        "state_dict": model.state_dict(),
        "parameter": {"w": torch.nn.Parameter(torch.tensor([1.0, -2.0]))},
        "batch": {
            "logprobs": torch.tensor([[-0.5, -1.0, -2.0], [-0.25, 0.0, -3.0]], dtype=torch.float32),
            "old_logprobs": torch.tensor([[-0.6, -1.1, -2.0], [-0.2, 0.0, -3.0]], dtype=torch.float32),
            "advantages": torch.tensor([1.0, -0.5], dtype=torch.float32),
            "response_mask": torch.tensor([[True, True, False], [True, False, False]]),
        },
    }


class Evil:
    """Pickles as exec(code): a file that runs code when unpickled by Python."""

    def __reduce__(self):
        return (exec, (f"open({MARKER!r}, 'w').write('pwned')",))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "test/fixtures/io/pt")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    files: dict = {}
    all_cases = cases()
    protocols = {"protocol1": 1, "protocol4": 4}
    for name, obj in all_cases.items():
        path = args.out / f"{name}.pt"
        torch.save(obj, path)
        tensors, metadata = flatten(obj)
        files[path.name] = {"protocol": 2, "sha256": sha256(path), "tensors": tensors, "metadata": metadata}
    for name, proto in protocols.items():
        path = args.out / f"{name}.pt"
        obj = all_cases["nested"]
        torch.save(obj, path, pickle_protocol=proto)
        tensors, metadata = flatten(obj)
        files[path.name] = {"protocol": proto, "sha256": sha256(path), "tensors": tensors, "metadata": metadata}
    evil = args.out / "evil.pt"
    torch.save({"weight": Evil()}, evil)
    with zipfile.ZipFile(evil) as z:
        ops = [(op.name, arg, pos) for op, arg, pos in pickletools.genops(z.read("evil/data.pkl"))]
    # Protocol 2 writes Python 3's builtins module under its Python 2 name, __builtin__.
    name, arg, pos = next(op for op in ops if op[0] == "GLOBAL")
    files[evil.name] = {
        "protocol": 2,
        "sha256": sha256(evil),
        "refused_global": arg.replace(" ", "."),
        "refused_at": pos,
        "marker": MARKER,
    }
    manifest = {
        "provenance": {
            "tool": "scripts/record/ptFixtures.py",
            "command": COMMAND,
            "script_sha256": sha256(SCRIPT),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "values_rule": "t.double().reshape(-1).tolist() in row-major order; NaN and +-Inf as the strings NaN, Infinity, -Infinity; ints exact; bools 0/1",
            "bits_rule": "F16/BF16: t.view(torch.int16) & 0xFFFF",
            "names_rule": "dict keys and list/tuple indices joined with '.'; python int/float/bool as 0-d I64/F64/BOOL; str in metadata; None names in metadata.__none__",
        },
        "files": files,
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1, allow_nan=False) + "\n")
    print(f"wrote {len(files)} files and manifest.json to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
