/**
 * Truncated importance-sampling (TIS) weights that correct for the rollout engine's sampling
 * distribution differing from the trainer's old policy (docs/derivations/losses.md#tis).
 */
import { CompensatedSum } from "../core/sum.js";
import type { Mask } from "../core/tensor.js";
import type { ISCorrectionConfig } from "./config.js";

/**
 * Per-token TIS weights ρ (a constant: sg[ρ], data not a function of θ), 1 at padding:
 * token ρ_t = min(exp(old_t − rollout_t), cap); sequence ρ_b = min(exp(Σ_t (old − rollout)), cap)
 * — the un-normalised masked sum (the exact sequence IS weight), not GSPO's length-normalised mean.
 * `olp` and `rlp` are zero-filled at padding.
 * @internal
 */
export function tisWeights(
  cfg: ISCorrectionConfig,
  olp: Float64Array,
  rlp: Float64Array,
  mask: Mask,
): Float64Array {
  const { rows: B, cols: T, data: m } = mask;
  const rho = new Float64Array(B * T).fill(1);
  if (cfg.level === "token") {
    for (let i = 0; i < rho.length; i++) {
      if (m[i] === 1) rho[i] = Math.min(Math.exp((olp[i] as number) - (rlp[i] as number)), cfg.cap);
    }
    return rho;
  }
  for (let b = 0; b < B; b++) {
    const acc = new CompensatedSum();
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (m[i] === 1) acc.add((olp[i] as number) - (rlp[i] as number));
    }
    const w = Math.min(Math.exp(acc.value()), cfg.cap);
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) rho[b * T + t] = w;
  }
  return rho;
}
