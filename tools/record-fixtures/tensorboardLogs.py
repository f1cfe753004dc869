#!/usr/bin/env python3
"""Record small TensorBoard event files, written by the real writers, for polgrad's reader.

Writes test/fixtures/logs/tensorboard/ (a log folder of five runs) and its provenance.json:

- ``""`` (the top folder): tensorboardX ``SummaryWriter.add_scalar`` (``simple_value``).
- ``tbx``: tensorboardX ``add_scalar`` (``simple_value``, NaN and ±inf among the values), plus a
  histogram, an image and a text value, which the reader must skip.
- ``torch``: ``torch.utils.tensorboard.SummaryWriter.add_scalar`` three ways: ``simple_value``,
  ``new_style=True`` (a rank-0 DT_FLOAT tensor in ``float_val``) and ``new_style=True,
  double_precision=True`` (DT_DOUBLE in ``double_val``).
- ``tensorboard``: tensorboard's own ``EventFileWriter`` with tensor-style scalars (plugin
  ``scalars``, its metadata on the first write of each tag only, as TF2's writer does): values
  built by ``tensorboard.util.tensor_util.make_tensor_proto`` (float32 → ``float_val``, int64 →
  ``int64_val``, int32 → ``int_val``) and values in ``tensor_content`` (raw little-endian bytes,
  the form TF2's C++ summary writer uses, ``Tensor::AsProtoTensorContent``; TensorFlow itself is
  not installed here), float32 and float64.
- ``restarted``: two tensorboardX writers one after the other in one folder; the second one
  restarts at step 3 and rewrites steps 3, 4, 5 with new values.

Nothing is installed globally: the wheels of /opt/pypi*/files are unzipped into a temporary
folder put first on sys.path (torch and numpy are Debian's). The event files are renamed after
writing (``events.out.tfevents.<T>.host.<n>``: the host name and the clock replaced by fixed
ones, so that the run's file order is fixed); their bytes are as the writers wrote them. Wall
times inside the files come from the clock, so a re-run changes bytes but not the logged values.

provenance.json holds the writer versions, the command, the SHA-256 of each file, and for each
run and tag the steps, the values logged (float64) and the values a reader must read back
(float32 widened exactly for ``simple_value`` / ``float_val`` / float32 ``tensor_content``).

Usage (see tools/record-fixtures/README.md):

    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/tensorboardLogs.py
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import os
import shutil
import struct
import sys
import tempfile
import zipfile

OUT = os.path.join("test", "fixtures", "logs", "tensorboard")
WHEELS = [
    "tensorboardx-2.6.5-py3-none-any.whl",
    "tensorboard-2.21.0-py3-none-any.whl",
    "protobuf-6.33.6-cp39-abi3-manylinux2014_x86_64.whl",
    "packaging-26.3-py3-none-any.whl",
    "six-1.17.0-py2.py3-none-any.whl",
    "absl_py-2.5.0-py3-none-any.whl",
    "pillow-11.3.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
]


def wheel(name: str) -> str:
    found = sorted(glob.glob(f"/opt/pypi*/files/{name}"))
    if not found:
        sys.exit(f"wheel not found: {name}")
    return found[0]


def unpack_wheels(site: str) -> dict[str, str]:
    shas = {}
    for name in WHEELS:
        path = wheel(name)
        with open(path, "rb") as f:
            shas[name] = hashlib.sha256(f.read()).hexdigest()
        with zipfile.ZipFile(path) as z:
            z.extractall(site)
    sys.path.insert(0, site)
    return shas


def f32(x: float) -> float:
    """The float32 a writer stores for x, as the float64 it widens to."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def as_json(x: float):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def main() -> None:
    site = tempfile.mkdtemp(prefix="polgrad-tb-")
    work = tempfile.mkdtemp(prefix="polgrad-tb-out-")
    try:
        record(unpack_wheels(site), work)
    finally:
        shutil.rmtree(site, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def record(wheel_shas: dict[str, str], work: str) -> None:
    import numpy as np
    import tensorboard
    import tensorboardX
    import torch
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
    from tensorboard.plugins.scalar import metadata as scalar_metadata
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    from tensorboard.util import tensor_util
    from tensorboardX import SummaryWriter as TbxWriter
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    expected: dict[str, dict[str, dict]] = {}

    def log(run: str, tag: str, step: int, logged: float, read: float, how: str) -> None:
        s = expected.setdefault(run, {}).setdefault(tag, {"how": how, "points": {}})
        s["points"][step] = (logged, read)

    # "" (top): tensorboardX simple_value.
    w = TbxWriter(os.path.join(work, "top"))
    for step in range(4):
        v = 1.0 / 3.0 + 0.25 * step
        w.add_scalar("top/value", v, step)
        log("", "top/value", step, v, f32(v), "tensorboardX add_scalar (simple_value)")
    w.close()

    # tbx: simple_value with non-finite values; a histogram, an image and a text to skip.
    w = TbxWriter(os.path.join(work, "tbx"))
    entropy = [2.5, 2.4000000000000004, float("nan"), float("inf"), -float("inf"), 1e-8]
    for step in range(6):
        loss = 0.1 * (step + 1) - 0.7
        w.add_scalar("train/loss", loss, step * 10)
        log("tbx", "train/loss", step * 10, loss, f32(loss), "tensorboardX add_scalar (simple_value)")
        w.add_scalar("train/entropy", entropy[step], step * 10)
        log("tbx", "train/entropy", step * 10, entropy[step], f32(entropy[step]),
            "tensorboardX add_scalar (simple_value)")
        if step % 2 == 0:
            w.add_histogram("weights", np.arange(8, dtype=np.float32) * (step + 1), step * 10)
    w.add_image("sample", np.zeros((3, 4, 4), dtype=np.uint8), 0)
    w.add_text("note", "a text value", 0)
    w.close()

    # torch: SummaryWriter.add_scalar, old and new style.
    w = TorchWriter(os.path.join(work, "torch"))
    for step in range(5):
        a = 3.4e38 if step == 4 else 0.3 * step + 0.01
        w.add_scalar("simple", a, step)
        log("torch", "simple", step, a, f32(a), "torch add_scalar (simple_value)")
        b = -1.0 / (step + 3)
        w.add_scalar("tensor/float", b, step, new_style=True)
        log("torch", "tensor/float", step, b, f32(b), "torch add_scalar new_style (float_val)")
        c = math.pi * (step + 1) / 7
        w.add_scalar("tensor/double", c, step, new_style=True, double_precision=True)
        log("torch", "tensor/double", step, c, c, "torch add_scalar new_style double (double_val)")
    # (torch 1.13's add_histogram fails under Debian's numpy 1.24: np.greater(..., dtype=int32).)
    w.close()

    # tensorboard: EventFileWriter with tensor-style scalars, metadata on the first write only.
    w = EventFileWriter(os.path.join(work, "tensorboard"))
    meta = scalar_metadata.create_summary_metadata(display_name="", description="")
    seen: set[str] = set()

    def content(arr) -> tensor_pb2.TensorProto:
        dtype = {np.dtype("float32"): 1, np.dtype("float64"): 2}[arr.dtype]
        return tensor_pb2.TensorProto(
            dtype=dtype,
            tensor_shape=tensor_shape_pb2.TensorShapeProto(),
            tensor_content=arr.astype(arr.dtype.newbyteorder("<")).tobytes(),
        )

    for step in range(4):
        values = []
        cases = [
            ("made/f32", np.float32(0.7 - 0.2 * step), "make_tensor_proto float32 (float_val)"),
            ("made/i64", np.int64(1000 * step - 7), "make_tensor_proto int64 (int64_val)"),
            ("made/i32", np.int32(-3 * step), "make_tensor_proto int32 (int_val)"),
        ]
        for tag, x, how in cases:
            proto = tensor_util.make_tensor_proto(x)
            values.append((tag, proto))
            log("tensorboard", tag, step, float(x), float(x), how)
        x32 = np.array(1.1 ** step, dtype=np.float32)
        values.append(("content/f32", content(x32)))
        log("tensorboard", "content/f32", step, 1.1 ** step, float(x32),
            "tensor_content float32 (as TF2's C++ writer)")
        x64 = np.array(math.e ** -step, dtype=np.float64)
        values.append(("content/f64", content(x64)))
        log("tensorboard", "content/f64", step, float(x64), float(x64),
            "tensor_content float64 (as TF2's C++ writer)")
        summary = summary_pb2.Summary()
        for tag, proto in values:
            v = summary.value.add(tag=tag, tensor=proto)
            if tag not in seen:
                v.metadata.CopyFrom(meta)
                seen.add(tag)
        w.add_event(event_pb2.Event(step=step, wall_time=1700000000.0 + step, summary=summary))
    w.close()

    # restarted: a run restarted from step 3; the second writer's values win at steps 3..5.
    run = os.path.join(work, "restarted")
    w = TbxWriter(run)
    for step in range(6):
        w.add_scalar("loss", 10.0 - step, step)
    w.close()
    first = set(os.listdir(run))
    w = TbxWriter(run, filename_suffix=".restart")
    for step in range(3, 8):
        v = 100.0 + step + 0.5
        w.add_scalar("loss", v, step)
    w.close()
    for step in range(8):
        v = 10.0 - step if step < 3 else 100.0 + step + 0.5
        log("restarted", "loss", step, v, f32(v), "tensorboardX add_scalar (simple_value)")
    second = set(os.listdir(run)) - first

    # Copy into OUT with fixed names: the run's files in writing order get increasing times.
    shutil.rmtree(OUT, ignore_errors=True)
    files = {}
    sources = {
        "": [os.path.join(work, "top", n) for n in sorted(os.listdir(os.path.join(work, "top")))],
        "tbx": [os.path.join(work, "tbx", n) for n in sorted(os.listdir(os.path.join(work, "tbx")))],
        "torch": [os.path.join(work, "torch", n) for n in sorted(os.listdir(os.path.join(work, "torch")))],
        "tensorboard": [os.path.join(work, "tensorboard", n)
                        for n in sorted(os.listdir(os.path.join(work, "tensorboard")))],
        "restarted": [os.path.join(run, n) for n in sorted(first)]
        + [os.path.join(run, n) for n in sorted(second)],
    }
    for run_name, paths in sources.items():
        assert len(paths) == (2 if run_name == "restarted" else 1), (run_name, paths)
        for k, src in enumerate(paths):
            rel = os.path.join(run_name, f"events.out.tfevents.{1700000000 + 100 * k}.host.{k}")
            dst = os.path.join(OUT, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            with open(dst, "rb") as f:
                data = f.read()
            files[rel] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}

    runs = {}
    for run_name, tags in expected.items():
        runs[run_name] = {
            tag: {
                "how": s["how"],
                "steps": sorted(s["points"]),
                "logged": [as_json(s["points"][k][0]) for k in sorted(s["points"])],
                "read": [as_json(s["points"][k][1]) for k in sorted(s["points"])],
            }
            for tag, s in sorted(tags.items())
        }
    provenance = {
        "tool": "tools/record-fixtures/tensorboardLogs.py",
        "command": "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/record-fixtures/tensorboardLogs.py",
        "python": sys.version.split()[0],
        "writers": {
            "tensorboardX": tensorboardX.__version__,
            "tensorboard": tensorboard.__version__,
            "torch": torch.__version__,
            "protobuf": __import__("google.protobuf").protobuf.__version__,
            "numpy": np.__version__,
        },
        "wheel_sha256": wheel_shas,
        "renamed": "each file renamed to events.out.tfevents.<1700000000 + 100·k>.host.<k>, k its "
        "order of writing in its run; bytes unchanged",
        "skipped_values": {"tbx": ["weights (histogram) ×3", "sample (image)", "note (text)"]},
        "rewrites": {"restarted": 3},
        "files": dict(sorted(files.items())),
        "runs": runs,
    }
    with open(os.path.join(OUT, "provenance.json"), "w") as f:
        json.dump(provenance, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(files)} event files and provenance.json to {OUT}")


if __name__ == "__main__":
    main()
