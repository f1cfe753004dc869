/**
 * Importance ratios of the three ratio kinds and their backward passes
 * (docs/derivations/losses.md#ratios). Inputs are zero-filled at padding, so the log-ratio
 * z = lp − old is exactly 0 there and no junk reaches exp().
 */
import { CompensatedSum } from "../core/sum.js";
import type { Mask } from "../core/tensor.js";
import type { RatioKind } from "./config.js";

/** Forward state of a ratio: per-token ratio values plus what the backward pass needs. @internal */
export interface RatioForward {
  /** Ratio at every response position (1 at padding). */
  readonly r: Float64Array;
  /** Per-row sequence ratio s_b (sequence and sequence_token kinds), else empty. */
  readonly s: Float64Array;
}

/**
 * Compute the ratio of `kind` from zero-filled log-ratios `z`:
 * token r_t = exp(z_t); sequence r_t = s_b = exp(Σ_t z_t / L_b);
 * sequence_token r_t = sg[s_b]·(exp(z_t)/sg[exp(z_t)]) — evaluated in that order, so its value is
 * bitwise s_b (x/x = 1 for finite non-zero x).
 * @internal
 */
export function ratioForward(
  kind: RatioKind,
  z: Float64Array,
  mask: Mask,
  L: Int32Array,
): RatioForward {
  const { rows: B, cols: T, data: m } = mask;
  const r = new Float64Array(B * T).fill(1);
  if (kind === "token") {
    for (let i = 0; i < r.length; i++) if (m[i] === 1) r[i] = Math.exp(z[i] as number);
    return { r, s: new Float64Array(0) };
  }
  const s = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    const acc = new CompensatedSum();
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) acc.add(z[b * T + t] as number);
    s[b] = Math.exp(acc.value() / (L[b] as number));
  }
  for (let b = 0; b < B; b++) {
    const sb = s[b] as number;
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (m[i] !== 1) continue;
      if (kind === "sequence") r[i] = sb;
      else {
        const rt = Math.exp(z[i] as number);
        r[i] = sb * (rt / rt);
      }
    }
  }
  return { r, s };
}

/**
 * Back-propagate ∂L/∂r (per token, zero at padding) to ∂L/∂lp, assigning into `out` (assigning,
 * not adding into a zero-filled buffer, keeps the sign of a zero gradient, e.g. −0 for A = +0):
 * token ∂lp_t = ∂r_t·r_t; sequence_token ∂lp_t = ∂r_t·s_b (sg[s] and sg[exp z] are constants, so
 * only the numerator exp(z_t) carries gradient); sequence ∂lp_t = (Σ_τ ∂r_τ)·s_b / L_b for every
 * response token t of row b (the masked mean couples the row).
 * @internal
 */
export function ratioBackward(
  kind: RatioKind,
  fwd: RatioForward,
  dr: Float64Array,
  mask: Mask,
  L: Int32Array,
  out: Float64Array,
): void {
  const { rows: B, cols: T, data: m } = mask;
  if (kind === "token") {
    for (let i = 0; i < dr.length; i++)
      if (m[i] === 1) out[i] = (dr[i] as number) * (fwd.r[i] as number);
    return;
  }
  for (let b = 0; b < B; b++) {
    const sb = fwd.s[b] as number;
    if (kind === "sequence_token") {
      for (let t = 0; t < T; t++) {
        const i = b * T + t;
        if (m[i] === 1) out[i] = (dr[i] as number) * sb;
      }
      continue;
    }
    const acc = new CompensatedSum();
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) acc.add(dr[b * T + t] as number);
    const g = (acc.value() * sb) / (L[b] as number);
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (m[i] === 1) out[i] = g;
    }
  }
}
