#!/usr/bin/env python3
"""The PyTorch peer of the polgrad benchmark (docs/performance.md#the-peer).

Times polgrad 0.2.0 (the Python package, imported at run time from the checkout named by
POLGRAD_PY_CHECKOUT) on torch float64 tensors: ``policy_loss(...)`` then ``loss.backward()``.

Two modes:

* ``polgrad_peer.py`` (server): reads one JSON command per line on stdin, answers one JSON line
  on stdout. Commands:
    {"cmd": "hello"}                                   -> versions
    {"cmd": "load", "dir": D}                          -> loads D/<stream>.npy (written by the JS side)
    {"cmd": "time", "config": NAME, "threads": N, "reps": R}
                                                       -> R timings of loss + backward, the loss,
                                                          and sum |d loss / d logprobs|
    {"cmd": "quit"}
* ``polgrad_peer.py --cli FILE ALGO [--threads N]``: one process doing what ``polgrad loss``
  does end to end: read a safetensors batch, evaluate the loss and its gradient, print the loss.
"""

import gc
import json
import os
import resource
import sys
import time


def import_polgrad():
    checkout = os.environ.get("POLGRAD_PY_CHECKOUT")
    if not checkout:
        raise SystemExit("polgrad_peer: set POLGRAD_PY_CHECKOUT to a polgrad 0.2.0 checkout")
    sys.path.insert(0, os.path.join(checkout, "src"))
    import polgrad  # noqa: E402 (imported from the checkout, at run time)

    return polgrad


polgrad = import_polgrad()
import numpy as np  # noqa: E402
import torch  # noqa: E402

STREAMS = ("logprobs", "old_logprobs", "ref_logprobs", "advantages", "response_mask")


def tensors_from_arrays(arrays):
    """Torch tensors over the arrays (no copy for float64), the mask as bool."""
    out = {}
    for name, arr in arrays.items():
        t = torch.from_numpy(np.ascontiguousarray(arr))
        out[name] = t.bool() if name == "response_mask" else t.to(torch.float64)
    return out


def run_loss(config_name, t):
    """One loss + backward; returns (seconds, result, gradient, minor page faults)."""
    cfg = polgrad.get_algorithm(config_name).loss
    lp = t["logprobs"].detach().requires_grad_(True)
    kwargs = {}
    if cfg.kl is not None:
        kwargs["ref_logprobs"] = t["ref_logprobs"]
    gc.collect()  # as the JS side collects before each timed call: no inherited garbage
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = time.perf_counter()
    res = polgrad.policy_loss(
        cfg,
        logprobs=lp,
        old_logprobs=t["old_logprobs"],
        advantages=t["advantages"],
        response_mask=t["response_mask"],
        **kwargs,
    )
    res.loss.backward()
    dt = time.perf_counter() - t0
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
    return dt, res, lp.grad, faults


def serve():
    tensors = None
    for line in sys.stdin:
        msg = json.loads(line)
        cmd = msg.get("cmd")
        if cmd == "hello":
            reply = {"polgrad": polgrad.__version__, "torch": torch.__version__,
                     "numpy": np.__version__, "python": sys.version.split()[0]}
        elif cmd == "load":
            d = msg["dir"]
            tensors = tensors_from_arrays({s: np.load(os.path.join(d, s + ".npy")) for s in STREAMS})
            reply = {"loaded": list(tensors)}
        elif cmd == "time":
            torch.set_num_threads(int(msg.get("threads", 1)))
            times = []
            faults = []
            loss = grad_abs = None
            for _ in range(int(msg.get("reps", 1))):
                dt, res, grad, f = run_loss(msg["config"], tensors)
                times.append(dt)
                faults.append(f)
                loss = res.loss.item()
                grad_abs = grad.abs().sum().item()
                del res, grad
            reply = {"times": times, "faults": faults, "loss": loss, "grad_abs_sum": grad_abs}
        elif cmd == "quit":
            return
        else:
            reply = {"error": "unknown command " + repr(cmd)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
                      "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "u1"}


def read_safetensors(path):
    """The tensors of a safetensors file: u64 header length, JSON header, then raw data."""
    raw = bytearray(os.path.getsize(path))  # writable, so torch.from_numpy shares it
    with open(path, "rb") as f:
        f.readinto(raw)
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(raw, dtype=SAFETENSORS_DTYPES[info["dtype"]],
                            count=(end - start) // np.dtype(SAFETENSORS_DTYPES[info["dtype"]]).itemsize,
                            offset=base + start)
        out[name] = arr.reshape(info["shape"])
    return out


def cli(argv):
    path, algo = argv[0], argv[1]
    threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else 1
    torch.set_num_threads(threads)
    arrays = read_safetensors(path)
    t = tensors_from_arrays({k: v for k, v in arrays.items() if k in STREAMS})
    _, res, _, _ = run_loss(algo, t)
    print(json.dumps({"loss": res.loss.item()}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--cli":
        cli(sys.argv[2:])
    else:
        serve()
