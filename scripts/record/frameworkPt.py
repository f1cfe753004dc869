#!/usr/bin/env python3
"""Record the .pt files of the framework-name matrix (test/io/frameworkMatrix.test.ts).

Reads test/fixtures/io/frameworks/canonical.json (the batch under polgrad's names) and names.json
(each framework's spelling), and writes <framework>.pt with real torch.save: log-probabilities in
float32 (every canonical value is a dyadic rational, exact in float32), the mask in the framework's
dtype, [B] or [B, T] advantages as the framework stores them, plus the extra tensors its batch
holds. verl's dump is nested like a DataProto ({"batch": {...}, "meta_info": {...}}). Writes
provenance.json (torch version, this script's SHA-256). Run: /usr/bin/python3 scripts/record/frameworkPt.py
"""
import hashlib
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "fixtures", "io", "frameworks")

canonical = json.load(open(os.path.join(OUT, "canonical.json")))
spellings = json.load(open(os.path.join(OUT, "names.json")))
mask = torch.tensor(canonical["response_mask"], dtype=torch.float64)
B, T = mask.shape
P = 2  # prompt columns of the [B, P + T] tensors

for fw in ("verl", "trl", "openrlhf"):
    spec = spellings[fw]
    d = {}
    for ours, theirs in spec["names"].items():
        if ours == "response_mask":
            dt = {"int64": torch.int64, "bool": torch.bool}[spec["mask_dtype"]]
            d[theirs] = mask.to(dt)
        elif ours == "advantages":
            a = torch.tensor(canonical["advantages"], dtype=torch.float32)
            d[theirs] = a if spec["advantages"] == "row" else (a[:, None] * mask).to(torch.float32)
        else:
            d[theirs] = torch.tensor(canonical[ours], dtype=torch.float32)
    for extra in spec["extra"]:
        width = T if extra == "completion_ids" else P + T
        d[extra] = torch.arange(B * width, dtype=torch.int64).reshape(B, width)
    obj = {"batch": d, "meta_info": {"global_step": 3}} if fw == "verl" else d
    torch.save(obj, os.path.join(OUT, f"{fw}.pt"))

with open(__file__, "rb") as f:
    sha = hashlib.sha256(f.read()).hexdigest()
json.dump(
    {"torch": torch.__version__, "script": "scripts/record/frameworkPt.py", "script_sha256": sha},
    open(os.path.join(OUT, "provenance.json"), "w"),
    indent=2,
)
print("wrote", [f"{fw}.pt" for fw in ("verl", "trl", "openrlhf")])
