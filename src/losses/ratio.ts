/**
 * Importance ratios of the three ratio kinds and their backward passes
 * (docs/derivations/losses.md#ratios). Inputs are zero-filled at padding, so the log-ratio
 * z = lp − old is exactly 0 there and no junk reaches exp().
 */
import { CompensatedSum, robustSum } from "../core/sum.js";
import type { Mask } from "../core/tensor.js";
import type { RatioKind } from "./config.js";

/** Forward state of a ratio: per-token ratio values plus what the backward pass needs. @internal */
export interface RatioForward {
  /** Ratio at every response position (1 at padding). */
  readonly r: Float64Array;
  /** Per-row sequence ratio s_b (sequence and sequence_token kinds), else empty. */
  readonly s: Float64Array;
  /** Per-row mean log-ratio log s_b = Σ_t z_t / L_b (sequence kinds), else empty. */
  readonly mz: Float64Array;
}

/**
 * Compute the ratio of `kind` from zero-filled log-ratios `z`:
 * token r_t = exp(z_t); sequence r_t = s_b = exp(Σ_t z_t / L_b);
 * sequence_token r_t = sg[s_b]·(exp(z_t)/sg[exp(z_t)]), whose value is s_b exactly (x/x = 1 for
 * finite non-zero x, the order polgrad evaluates it in), so it is stored as s_b: an exp(z_t) that
 * overflows (z_t ≥ 709.79) or underflows (z_t ≤ −745.14) would give ∞/∞ or 0/0 = NaN.
 * Ratios may be +Infinity (overflow) or 0 (underflow, exact); the caller decides (docs/conventions.md#numeric-policy).
 * The row mean Σ_t z_t / L_b is robust to a partial sum that overflows.
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
    return { r, s: new Float64Array(0), mz: new Float64Array(0) };
  }
  const s = new Float64Array(B);
  const mz = sequenceLogRatios(z, mask, L);
  for (let b = 0; b < B; b++) {
    const sb = Math.exp(mz[b] as number);
    s[b] = sb;
    // sequence_token: sg[s_b]·(exp z_t / sg[exp z_t]) has the value s_b bitwise.
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) r[b * T + t] = sb;
  }
  return { r, s, mz };
}

/**
 * The row means Σ_t m·z / L_b of zero-filled log-ratios (the log of the sequence ratio), robust to
 * a partial sum that overflows. @internal
 */
export function sequenceLogRatios(z: Float64Array, mask: Mask, L: Int32Array): Float64Array {
  const { rows: B, cols: T, data: m } = mask;
  const out = new Float64Array(B);
  const at: number[] = [];
  for (let b = 0; b < B; b++) {
    at.length = 0;
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) at.push(b * T + t);
    out[b] = robustSum(at.length, (k) => z[at[k] as number] as number, L[b] as number);
  }
  return out;
}

/** d·r, but exactly d when d = ±0: a zero upstream gradient stays 0 at an overflowed r = ∞. */
function times(d: number, r: number): number {
  return d === 0 ? d : d * r;
}

/**
 * Back-propagate ∂L/∂r (per token, zero at padding) to ∂L/∂lp, assigning into `out` (assigning,
 * not adding into a zero-filled buffer, keeps the sign of a zero gradient, e.g. −0 for A = +0):
 * token ∂lp_t = ∂r_t·r_t; sequence_token ∂lp_t = ∂r_t·s_b (sg[s] and sg[exp z] are constants, so
 * only the numerator exp(z_t) carries gradient); sequence ∂lp_t = (Σ_τ ∂r_τ)·s_b / L_b for every
 * response token t of row b (the masked mean couples the row). A zero ∂r passes as exactly that
 * zero (bitwise d·r for finite r ≥ 0), so a clipped token with an overflowed ratio has gradient 0,
 * not 0·∞ = NaN.
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
      if (m[i] === 1) out[i] = times(dr[i] as number, fwd.r[i] as number);
    return;
  }
  for (let b = 0; b < B; b++) {
    const sb = fwd.s[b] as number;
    if (kind === "sequence_token") {
      for (let t = 0; t < T; t++) {
        const i = b * T + t;
        if (m[i] === 1) out[i] = times(dr[i] as number, sb);
      }
      continue;
    }
    const acc = new CompensatedSum();
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) acc.add(dr[b * T + t] as number);
    const g = times(acc.value(), sb) / (L[b] as number);
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (m[i] === 1) out[i] = g;
    }
  }
}
