/**
 * Power-of-two rescaling for overflow-free statistics (docs/conventions.md, numeric policy): means,
 * deviations and standard deviations of values near ±1.8e308 or ±1e-300 are computed on x·s with
 * s = 2^k chosen from max |x|, then mapped back. Multiplying by a power of two is exact and every
 * float64 operation used here (+, −, ×, ÷ by an unscaled number, √ of a square) commutes with it
 * bitwise unless a result overflows or becomes subnormal; so on moderate data the scale is 1 and the
 * results are bitwise those of the plain formulas, and on extreme data they are the plain formulas
 * evaluated where they cannot overflow.
 * @internal
 */
import { CompensatedSum } from "./sum.js";

/**
 * Magnitudes in [2^-400, 2^480] need no rescaling: a deviation is then ≤ 2^481, so a sum of 2^31
 * squared deviations stays below 2^993, and the largest non-zero deviation of a sample whose
 * maximum is ≥ 2^-400 is ≥ 2^-454, so its square is a normal number.
 */
const LIMIT_HI = 2 ** 480;
const LIMIT_LO = 2 ** -400;

/**
 * A power of two s with maxAbs·s in [0.5, 4) when maxAbs is outside [2^-400, 2^480], else 1 (also
 * 1 for maxAbs = 0). For subnormal maxAbs the scale is capped at 2^1023 (maxAbs·s ≥ 2^-51).
 * @internal
 */
export function pow2Scale(maxAbs: number): number {
  return 2 ** pow2Exponent(maxAbs);
}

/**
 * The exponent k of {@link pow2Scale}: s = 2^k, 0 on moderate magnitudes.
 * @internal
 */
export function pow2Exponent(maxAbs: number): number {
  if (!(maxAbs > 0) || (maxAbs >= LIMIT_LO && maxAbs <= LIMIT_HI)) return 0;
  return Math.min(1023, -Math.floor(Math.log2(maxAbs)));
}

/**
 * v·2^e for any integer e, in steps of at most 2^±1000 so that no factor overflows: exact unless
 * the result itself overflows (±Infinity) or is subnormal. Applied in the direction of e, so an
 * intermediate never overflows or underflows before the result does.
 * @internal
 */
export function mulPow2(v: number, e: number): number {
  let out = v;
  let left = e;
  while (left !== 0 && out !== 0 && Number.isFinite(out)) {
    const step = Math.max(-1000, Math.min(1000, left));
    out *= 2 ** step;
    left -= step;
  }
  return out;
}

/**
 * max |x[i]| over the indices `idx` (all of x when omitted).
 * @internal
 */
export function maxAbsOf(x: ArrayLike<number>, idx?: ArrayLike<number>): number {
  let m = 0;
  const n = idx === undefined ? x.length : idx.length;
  for (let k = 0; k < n; k++) {
    const a = Math.abs(x[idx === undefined ? k : (idx[k] as number)] as number);
    if (a > m) m = a;
  }
  return m;
}

/**
 * The compensated mean and sum of squared deviations of n values, read in index order through
 * `at` (already scaled): mean = (Σ at(k))/n, ss = Σ (at(k) − mean)², both compensated.
 * @internal
 */
export function meanAndSs(n: number, at: (k: number) => number): { mean: number; ss: number } {
  const sum = new CompensatedSum();
  for (let k = 0; k < n; k++) sum.add(at(k));
  const mean = sum.value() / n;
  const ss = new CompensatedSum();
  for (let k = 0; k < n; k++) {
    const d = at(k) - mean;
    ss.add(d * d);
  }
  return { mean, ss: ss.value() };
}
