"""Fake training steps for the dump recipes of docs/howto/ (run by test/howto/recipes.test.ts).

The test runs one docs/howto/*.md page's ```python recipe``` blocks and then calls
``main(framework, globals(), out_dir, canonical_dir)`` from this module. ``main`` plays the
framework for 12 steps: it builds each step's tensors under the framework's own names (TRL's
``inputs`` dict and the captured ``per_token_logps``; verl's padded batch; OpenRLHF's
``Experience`` objects), passes them through the recipe's helpers and ``dump_step(..., every=3)``,
so the recipe itself decides which steps are written (0, 3, 6, 9). For every written step it
also writes the same numbers under polgrad's own names as a JSON batch (docs/io.md#json-batches),
the reference the CLI output on the dump is compared with. It prints one JSON line:
``{"dumped": {"<step>": path}, "canonical": {"<step>": path}, "names": {"<step>": [names]}}``.

Every number is deterministic and a multiple of 1/64 with magnitude below 4, so float32 (which
the recipes store) holds it exactly and the two files carry bit-identical values.
"""

import json
import os
import sys
import types

import torch

B, T, P = 4, 6, 3
STEPS, EVERY = 12, 3
# Response lengths per row (ragged; row 3 is short): columns >= length are padding.
LENGTHS = (6, 4, 5, 2)


def _grid(step, salt, lo, hi):
    """[B, T] float32 values k/64 in [lo, hi], a fixed function of (step, row, column, salt)."""
    span = int((hi - lo) * 64)
    rows = []
    for b in range(B):
        rows.append([lo + ((b * 7 + t * 5 + step * 3 + salt * 11) % (span + 1)) / 64 for t in range(T)])
    return torch.tensor(rows, dtype=torch.float32)


def _mask():
    return torch.tensor([[1 if t < LENGTHS[b] else 0 for t in range(T)] for b in range(B)], dtype=torch.int64)


def _pad0(x, mask):
    """+0.0 at padding, as the frameworks pad (torch.where: x * 0 would give -0.0 for x < 0)."""
    return torch.where(mask.bool(), x, torch.zeros_like(x))


def streams(step):
    """The step's tensors under neutral names (all [B, T] except adv_row [B])."""
    m = _mask()
    adv_row = torch.tensor([((step + 2 * b) % 5 - 2) / 4 for b in range(B)], dtype=torch.float32)
    return {
        "mask": m,
        "logp": _pad0(_grid(step, 1, -3.0, -0.015625), m),
        "old": _pad0(_grid(step, 2, -3.0, -0.015625), m),
        "ref": _pad0(_grid(step, 3, -3.0, -0.015625), m),
        "rollout": _pad0(_grid(step, 4, -3.0, -0.015625), m),
        "entropy": _pad0(_grid(step, 5, 0.0, 2.0), m),
        "values": _pad0(_grid(step, 6, -1.0, 1.0), m),
        "returns": _pad0(_grid(step, 7, -1.0, 1.0), m),
        "adv_row": adv_row,
        "adv_tok": _pad0(adv_row.unsqueeze(1).expand(B, T).clone(), m),
    }


def _json_value(t):
    return t.tolist()


def _write_json(path, tensors):
    with open(path, "w", encoding="utf-8") as f:
        json.dump({k: _json_value(v) for k, v in tensors.items()}, f)


def trl_step(ns, step, s):
    """GRPOTrainer: `inputs` of _compute_loss plus the current policy captured inside it."""
    inputs = {
        "prompt_ids": torch.arange(B * P, dtype=torch.int64).reshape(B, P),
        "prompt_mask": torch.ones(B, P, dtype=torch.int64),
        "completion_ids": torch.arange(B * T, dtype=torch.int64).reshape(B, T),
        "completion_mask": s["mask"],
        "advantages": s["adv_row"],
        "num_items_in_batch": s["mask"].sum(),
        "old_per_token_logps": s["old"],
        "ref_per_token_logps": s["ref"],
        "sampling_per_token_logps": s["rollout"],
    }
    tensors = ns["trl_tensors"](inputs, s["logp"], s["entropy"])
    canonical = {
        "logprobs": s["logp"],
        "old_logprobs": s["old"],
        "ref_logprobs": s["ref"],
        "rollout_logprobs": s["rollout"],
        "response_mask": s["mask"],
        "advantages": s["adv_row"],
        "entropies": s["entropy"],
    }
    return tensors, canonical


def verl_step(ns, step, s):
    """verl: the padded batch at _update_actor (no current-policy log_probs on the trainer side)."""
    batch = {
        "prompts": torch.arange(B * P, dtype=torch.int64).reshape(B, P),
        "responses": torch.arange(B * T, dtype=torch.int64).reshape(B, T),
        "attention_mask": torch.cat([torch.ones(B, P, dtype=torch.int64), s["mask"]], dim=1),
        "response_mask": s["mask"],
        "old_log_probs": s["old"],
        "ref_log_prob": s["ref"],
        "rollout_log_probs": s["rollout"],
        "advantages": s["adv_tok"],
        "returns": s["returns"],
        "values": s["values"],
        "entropy": s["entropy"],
        "token_level_scores": torch.zeros(B, T),
    }
    tensors = ns["response_tensors"](batch)
    canonical = {
        # The trainer side has no current policy: the recipe uses old_log_probs (θ = θ_old).
        "logprobs": s["old"],
        "old_logprobs": s["old"],
        "ref_logprobs": s["ref"],
        "rollout_logprobs": s["rollout"],
        "response_mask": s["mask"],
        "advantages": s["adv_tok"],
        "returns": s["returns"],
        "old_values": s["values"],
        "entropies": s["entropy"],
    }
    return tensors, canonical


def openrlhf_step(ns, step, s):
    """OpenRLHF: two Experience objects (rows 0-1 and 2-3); the second is only 5 actions wide."""
    m = s["mask"].bool()
    experiences = []
    for rows, width in ((slice(0, 2), T), (slice(2, 4), max(LENGTHS[2:]))):
        experiences.append(
            types.SimpleNamespace(
                sequences=torch.zeros(2, P + width, dtype=torch.int64),
                attention_mask=torch.ones(2, P + width, dtype=torch.int64),
                action_mask=m[rows, :width],
                action_log_probs=s["old"][rows, :width],
                base_action_log_probs=s["ref"][rows, :width],
                rollout_log_probs=s["rollout"][rows, :width],
                values=s["values"][rows, :width],
                returns=s["returns"][rows, :width],
                advantages=s["adv_tok"][rows, :width],
                kl=None,
                rewards=s["adv_row"][rows],
            )
        )
    tensors = ns["experiences_to_tensors"](experiences)
    canonical = {
        # An Experience holds π_old only: the recipe uses it as the current policy (θ = θ_old).
        "logprobs": s["old"],
        "old_logprobs": s["old"],
        "ref_logprobs": s["ref"],
        "rollout_logprobs": s["rollout"],
        "response_mask": s["mask"],
        "advantages": s["adv_tok"],
        "returns": s["returns"],
        "old_values": s["values"],
    }
    return tensors, canonical


STEP_BUILDERS = {"trl": trl_step, "verl": verl_step, "openrlhf": openrlhf_step}


def main(framework, ns, out_dir, canonical_dir):
    build = STEP_BUILDERS[framework]
    os.makedirs(canonical_dir, exist_ok=True)
    dumped, canonical, names = {}, {}, {}
    for step in range(STEPS):
        tensors, canon = build(ns, step, streams(step))
        path = ns["dump_step"](step, tensors, out_dir, every=EVERY)
        if path is None:
            continue
        dumped[str(step)] = path
        names[str(step)] = sorted(k for k, v in tensors.items() if v is not None)
        cpath = os.path.join(canonical_dir, f"step_{step}.json")
        _write_json(cpath, canon)
        canonical[str(step)] = cpath
    sys.stdout.write(json.dumps({"dumped": dumped, "canonical": canonical, "names": names}) + "\n")
