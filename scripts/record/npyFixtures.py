"""Record the .npy / .npz fixtures of test/io/npy.test.ts and test/io/npz.test.ts with NumPy itself.

Writes small files into test/fixtures/io/npy/ and a manifest.json that records, for each file,
the values NumPy holds (``arr.ravel(order="C").tolist()``: the row-major values as Python
numbers, printed by ``json`` with the shortest round-trip repr, so every float is exact), the
dtype string and the shape, plus the NumPy version, the SHA-256 of this script and of each file.
NaN and infinities are written as the strings "NaN", "Infinity", "-Infinity".

Run from the repository root:  /usr/bin/python3 scripts/record/npyFixtures.py
"""

import hashlib
import json
import os
import platform
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "test", "fixtures", "io", "npy")
SCRIPT = os.path.relpath(os.path.abspath(__file__), ROOT)

# Values per kind: the extremes of each type, signed zero, non-finite values and subnormals.
FLOATS = {
    "f2": [0.0, -0.0, 1.0, -2.0, 65504.0, 2.0**-24, float("nan"), float("inf"), -float("inf"), 0.1],
    "f4": [0.0, -0.0, 0.1, -3.5, 3.4028234663852886e38, 2.0**-149, float("nan"), float("inf"), -float("inf"), 1e-3],
    "f8": [0.0, -0.0, 0.1, -3.5, 1.7976931348623157e308, 5e-324, float("nan"), float("inf"), -float("inf"), 1 / 3],
}
INTS = {
    "i1": [-128, -1, 0, 1, 127, 5],
    "i2": [-32768, -1, 0, 1, 32767, 300],
    "i4": [-(2**31), -1, 0, 1, 2**31 - 1, 70000],
    "i8": [-(2**53), -1, 0, 1, 2**53, 2**40 + 3],
    "u1": [0, 1, 2, 127, 128, 255],
    "u2": [0, 1, 255, 256, 32768, 65535],
    "u4": [0, 1, 65536, 2**31, 2**32 - 1, 7],
    "u8": [0, 1, 2**32, 2**52 + 1, 2**53, 9],
    "b1": [True, False, False, True, True, False],
}


def jsonable(values):
    out = []
    for v in values:
        if isinstance(v, float) and v != v:
            out.append("NaN")
        elif isinstance(v, float) and v in (float("inf"), -float("inf")):
            out.append("Infinity" if v > 0 else "-Infinity")
        else:
            out.append(v)
    return out


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def describe(arr):
    return {
        "descr": arr.dtype.str,
        "shape": list(arr.shape),
        "fortran_order": bool(arr.flags.f_contiguous and not arr.flags.c_contiguous),
        "values": jsonable(arr.ravel(order="C").tolist()),
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    files = []

    def save(name, arr, how, version=None):
        path = os.path.join(OUT, name)
        if version is None:
            np.save(path, arr, allow_pickle=False)
        else:
            with open(path, "wb") as f:
                np.lib.format.write_array(f, arr, version=version, allow_pickle=False)
        loaded = np.load(path, allow_pickle=False)
        assert loaded.dtype == arr.dtype and loaded.shape == arr.shape
        entry = describe(arr)
        with open(path, "rb") as f:
            entry["version"] = list(f.read(8)[6:8])
        files.append({"file": name, "kind": "npy", "how": how, "sha256": sha256(path), "tensors": {name[:-4]: entry}})

    # Every dtype in both byte orders (1-byte dtypes have the single order '|'), C order, [2, 3]
    # (floats [2, 5]).
    for kind, vals in {**FLOATS, **INTS}.items():
        orders = ["|"] if kind[1] == "1" else ["<", ">"]
        for order in orders:
            dt = np.dtype(("|" if order == "|" else order) + kind)
            arr = np.array(vals, dtype=dt).reshape(2, -1)
            tag = {"<": "le", ">": "be", "|": "na"}[order]
            save(f"{kind}_{tag}.npy", arr, f"np.save(np.array(values, dtype='{dt.str}').reshape(2, -1))")

    # Fortran order: a rank-3 float64 and a big-endian int32 matrix.
    f3 = np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4) * 0.5 - 3)
    save("fortran_f8.npy", f3, "np.save(np.asfortranarray(np.arange(24, dtype='<f8').reshape(2, 3, 4) * 0.5 - 3))")
    fi = np.asfortranarray(np.array([[1, -2], [3, -4], [5, 2**31 - 1]], dtype=">i4"))
    save("fortran_i4_be.npy", fi, "np.save(np.asfortranarray(np.array([[1, -2], [3, -4], [5, 2**31 - 1]], dtype='>i4')))")

    # Header versions 2.0 and 3.0.
    v = np.array([[0.25, -1.5, 3.0], [7.0, -0.0, 1e-8]], dtype="<f4")
    save("version2.npy", v, "np.lib.format.write_array(f, values, version=(2, 0))", version=(2, 0))
    save("version3.npy", v, "np.lib.format.write_array(f, values, version=(3, 0))", version=(3, 0))

    # A 0-d array and empty shapes.
    save("scalar.npy", np.array(3.5, dtype="<f8"), "np.save(np.array(3.5))")
    save("empty.npy", np.zeros((0,), dtype="<f4"), "np.save(np.zeros((0,), dtype='<f4'))")
    save("empty_2x0x3.npy", np.zeros((2, 0, 3), dtype="<i8"), "np.save(np.zeros((2, 0, 3), dtype='<i8'))")

    # Archives: savez (stored) and savez_compressed (deflated) of a small batch.
    batch = {
        "logprobs": np.array([[-0.5, -1.25, -2.0], [-0.125, -3.0, -0.75]], dtype="<f4"),
        "response_mask": np.array([[True, True, False], [True, False, False]]),
        "advantages": np.array([1.0, -0.5], dtype="<f8"),
        "steps": np.arange(6, dtype="<i8").reshape(2, 3),
    }
    for name, fun in (("savez.npz", np.savez), ("savez_compressed.npz", np.savez_compressed)):
        path = os.path.join(OUT, name)
        fun(path, **batch)
        with np.load(path, allow_pickle=False) as z:
            assert list(z.files) == list(batch)
        files.append({
            "file": name,
            "kind": "npz",
            "how": f"np.{fun.__name__}(path, **batch)",
            "sha256": sha256(path),
            "tensors": {k: describe(a) for k, a in batch.items()},
        })
    # Positional arrays get numpy's names arr_0, arr_1.
    path = os.path.join(OUT, "savez_positional.npz")
    np.savez(path, np.array([1, 2, 3], dtype="<u2"), np.array(2.5, dtype=">f8"))
    with np.load(path, allow_pickle=False) as z:
        tensors = {k: describe(z[k]) for k in z.files}
    files.append({"file": "savez_positional.npz", "kind": "npz", "how": "np.savez(path, u2 array, >f8 scalar)", "sha256": sha256(path), "tensors": tensors})

    manifest = {
        "provenance": {
            "tool": "numpy",
            "numpy_version": np.__version__,
            "python_version": platform.python_version(),
            "script": SCRIPT,
            "script_sha256": sha256(os.path.abspath(__file__)),
            "command": f"{sys.executable} {SCRIPT}",
        },
        "files": files,
    }
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, allow_nan=False)
        f.write("\n")


if __name__ == "__main__":
    main()
