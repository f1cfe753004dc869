/**
 * Pointwise surrogates: the objective each response token contributes before negation, and its
 * derivative (docs/derivations/losses.md#surrogates). Tie conventions follow the autograd
 * semantics polgrad's numbers come from: min/max of two equal values split the gradient ½/½, and
 * clamp(x, lo, hi) passes gradient iff lo ≤ x ≤ hi.
 */

/** Objective value, d(objective)/d(ratio) and clip flags of one PG_CLIP token. @internal */
export interface PgClipPoint {
  /** obj = min(r·A, clamp(r, lo, hi)·A), then max(obj, c·A) when A < 0 and a cap c is set. */
  readonly obj: number;
  /** ∂obj/∂r = A·slope, slope ∈ {1, ½, ¼, 0} (½ at ties between branches). */
  readonly slope: number;
  /** A > 0 and r > hi, or (dual clip) A < 0 and r > c. */
  readonly high: boolean;
  /** A < 0 and r < lo. */
  readonly low: boolean;
}

/** Flag bits a point function returns: the token is clipped below / above the band. @internal */
export const CLIPPED_LOW = 1;
/** @internal */
export const CLIPPED_HIGH = 2;

/**
 * PPO clipped objective of one token into `out` (out[0] ← obj, out[1] ← slope), returning the clip
 * flags ({@link CLIPPED_LOW} | {@link CLIPPED_HIGH}); allocation-free, for the fused kernel.
 * The semantics are {@link pgClipPoint}'s; `cap` is NaN for no dual clip. @internal
 */
export function pgClipInto(
  r: number,
  A: number,
  lo: number,
  hi: number,
  cap: number,
  out: Float64Array,
): number {
  const capped = !Number.isNaN(cap);
  if (r > lo && r < hi && !capped) {
    // Strictly inside the band (the common case): clamp(r) = r, so both branches are r·A and
    // tie, giving obj = r·A (A itself when A = ±0) with slope (1 + 1)·½ = 1 and no flag: the
    // general path's values, without its compares.
    out[0] = A === 0 ? A : r * A;
    out[1] = 1;
    return 0;
  }
  pgClipNoCapInto(r, A, lo, hi, out);
  let flags = A > 0 && r > hi ? CLIPPED_HIGH : A < 0 && r < lo ? CLIPPED_LOW : 0;
  if (capped && A < 0) {
    const obj = out[0] as number;
    const floor = cap * A;
    if (floor > obj) {
      out[0] = floor;
      out[1] = 0;
    } else if (floor === obj) {
      out[1] = (out[1] as number) * 0.5;
    }
    if (r > cap) flags |= CLIPPED_HIGH;
  }
  return flags;
}

/**
 * {@link pgClipInto} without the dual clip and its flags: out[0] ← obj = min(r·A, clamp(r, lo,
 * hi)·A), out[1] ← slope (1 on the unclipped branch; on the clamp's, 1 where lo ≤ r ≤ hi else 0;
 * halved at a tie). The fused kernel's pg_clip row calls it outside the band. @internal
 */
export function pgClipNoCapInto(
  r: number,
  A: number,
  lo: number,
  hi: number,
  out: Float64Array,
): void {
  // biome-ignore lint/complexity/useMathMinMax: Math.min/Math.max (their NaN and −0 rules) cost in the fused loop; for a ratio (+0 … +Infinity, or NaN; never −0) this is Math.min(Math.max(r, lo), hi).
  const rc = r < lo ? lo : r > hi ? hi : r;
  const pass = r >= lo && r <= hi ? 1 : 0;
  // A = ±0: r·A is ±0 (bitwise A for every finite r ≥ 0); written as A so that an overflowed
  // ratio r = +Infinity gives the objective 0, never Infinity·0 = NaN.
  const a = A === 0 ? A : r * A;
  const c = rc * A;
  if (a < c) {
    out[0] = a;
    out[1] = 1;
  } else if (c < a) {
    out[0] = c;
    out[1] = pass;
  } else {
    out[0] = a;
    out[1] = (1 + pass) * 0.5;
  }
}

const POINT = new Float64Array(2);

/**
 * PPO clipped objective of one token, with optional dual clip (docs/derivations/losses.md#dual-clip).
 * obj = min(r·A, clamp(r, lo, hi)·A); for A < 0 with cap c: obj ← max(obj, c·A).
 * ∂obj/∂r = A·slope: slope 1 on the unclipped branch, 0 on a saturated clamp or on the cap, halved
 * at each tie. An overflowed ratio r = +Infinity (exp of a log-ratio ≥ 709.79) is handled exactly:
 * A > 0 gives hi·A with slope 0 (clipped high), A = 0 gives 0, A < 0 gives −Infinity (the caller's
 * overflow) unless the cap binds (c·A, slope 0).
 * @internal
 */
export function pgClipPoint(
  r: number,
  A: number,
  lo: number,
  hi: number,
  cap: number | null,
): PgClipPoint {
  const flags = pgClipInto(r, A, lo, hi, cap ?? Number.NaN, POINT);
  return {
    obj: POINT[0] as number,
    slope: POINT[1] as number,
    high: (flags & CLIPPED_HIGH) !== 0,
    low: (flags & CLIPPED_LOW) !== 0,
  };
}

/**
 * CISPO's clipped IS weight ŵ = clamp(r, lo, hi) (two-sided) or min(r, hi) (one-sided). It enters
 * the loss as a constant, sg[ŵ], so it has no derivative here.
 * @internal
 */
export function cispoWeight(r: number, lo: number, hi: number, oneSided: boolean): number {
  return cispoClamp(r, cispoLower(lo, oneSided), hi);
}

/** The lower bound {@link cispoClamp} takes: lo, or −∞ one-sided (nothing is below it). @internal */
export function cispoLower(lo: number, oneSided: boolean): number {
  return oneSided ? Number.NEGATIVE_INFINITY : lo;
}

/**
 * {@link cispoWeight} with its lower bound from {@link cispoLower}: hi where r > hi, else lower
 * where r < lower, else r (bitwise the same for every r, −0 and NaN included: r < −∞ never
 * holds). A row pass takes the bound once and tests no flag per token (cispoTokenRow: with the
 * flag, 1.07× as long). @internal
 */
export function cispoClamp(r: number, lower: number, hi: number): number {
  if (r > hi) return hi;
  if (r < lower) return lower;
  return r;
}
