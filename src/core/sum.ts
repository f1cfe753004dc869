/**
 * Reductions in one fixed, documented order: Neumaier's compensated summation over the elements in
 * row-major order (docs/conventions.md#summation). Every reduction in polgrad goes through these
 * helpers, so identities that polgrad states as bitwise (aggregate = Σ w·x, micro-batch sums) hold
 * by construction, and results are accurate to about one ulp of the exact sum plus O(n·ε²)·Σ|x|.
 *
 * Written by hand: the algorithm is four lines (Neumaier 1974, "Rundungsfehleranalyse einiger
 * Verfahren zur Summation endlicher Summen", ZAMM 54), and no maintained npm package offers it over
 * strided Float64Array views without allocation.
 */

/** A running compensated sum; add terms in order, then read `value()`. */
export class CompensatedSum {
  private s = 0;
  private c = 0;

  /** Add one term. */
  add(x: number): void {
    const t = this.s + x;
    if (Math.abs(this.s) >= Math.abs(x)) this.c += this.s - t + x;
    else this.c += x - t + this.s;
    this.s = t;
  }

  /**
   * The compensated sum of the terms added so far. Once the running sum has overflowed to ±∞ the
   * correction term is meaningless (∞ − ∞ = NaN), so the overflowed sum itself is returned: a sum
   * of finite terms is then ±Infinity, never NaN, and the caller can name the overflow.
   */
  value(): number {
    return Number.isFinite(this.s) ? this.s + this.c : this.s;
  }
}

/**
 * The exact rounding error of t = s + x, branch-free (Knuth's TwoSum): with b′ = t − s,
 * err = (s − (t − b′)) + (x − b′), so that s + x = t + err exactly. CompensatedSum gets the same
 * error with Neumaier's compare of |s| and |x|; the error of a float64 addition is itself a float64
 * (unique), so the two agree bit for bit whenever t is finite (once t overflows, a running sum
 * stays non-finite and its correction is never read). The kernel's hot sums use this form: the
 * compare was a data-dependent branch, mispredicted about half the time. Near overflow t − s
 * itself can overflow and the error comes out NaN: {@link twoSumErrorSafe} covers that case.
 * Enforced by: test/core/sum.test.ts > twoSumError > property: TwoSum's error is bitwise
 * Neumaier's wherever the sum and t − s are finite
 */
export function twoSumError(s: number, x: number, t: number): number {
  const bv = t - s;
  return s - (t - bv) + (x - bv);
}

/**
 * {@link twoSumError} where t − s itself may overflow (|s| and |t| near 2^1024 with opposite
 * signs, t finite): there the branch-free form gives NaN, and this falls back to Neumaier's, which
 * subtracts only numbers no larger than the larger operand and is exact. For sums off the hottest
 * loops; the hot ones keep the unchecked form and their consumers recompute a finite sum whose
 * correction came out NaN (robustTotal in losses/policyLoss.ts).
 * Enforced by: test/core/sum.test.ts > twoSumError > regression: near overflow (t − s overflows) the safe error is Neumaier's, not NaN
 */
export function twoSumErrorSafe(s: number, x: number, t: number): number {
  const e = twoSumError(s, x, t);
  return e - e === 0 ? e : Math.abs(s) >= Math.abs(x) ? s - t + x : x - t + s;
}

/**
 * One CompensatedSum kept alive, so that its hidden class outlives every short-lived accumulator
 * and optimised code that checks it is not discarded at a GC (see KEEP_MAPS in
 * losses/kernel/policyRows.ts).
 */
export const KEEP_COMPENSATED_SUM_MAP: CompensatedSum = new CompensatedSum();

/** Compensated sum of `xs` in index order. */
export function fsum(xs: ArrayLike<number>): number {
  const acc = new CompensatedSum();
  for (let i = 0; i < xs.length; i++) acc.add(xs[i] as number);
  return acc.value();
}

/**
 * Euclidean norm √(Σ x²) without overflow or underflow: the squares are accumulated relative to the
 * running largest magnitude (the LAPACK dnrm2 scaling, Blue 1978), so a vector of finite values has
 * a finite norm whenever the norm itself is representable (‖[1e200, 1e200]‖ = 1.414e200, not
 * Infinity). Terms are visited in index order; `mask`, when given, selects the terms that count.
 * Written by hand: six lines, and it must run over Float64Array views without allocation.
 */
export function l2Norm(xs: ArrayLike<number>, mask?: ArrayLike<number>): number {
  const acc = new L2Norm();
  acc.addAll(xs, mask);
  return acc.value();
}

/**
 * {@link l2Norm} fed in pieces: `addAll` over consecutive slices (with their mask slices) gives
 * the bits of one l2Norm over the whole, since the state (the running largest magnitude and the
 * scaled sum of squares) is carried from slice to slice.
 */
export class L2Norm {
  private scale = 0;
  private ssq = 1;
  private nan = false;

  /** Add the terms of `xs` that `mask` selects (all when absent), in index order. */
  addAll(xs: ArrayLike<number>, mask?: ArrayLike<number>): void {
    let { scale, ssq } = this;
    for (let i = 0; i < xs.length; i++) {
      if (mask !== undefined && mask[i] !== 1) continue;
      const a = Math.abs(xs[i] as number);
      if (a === 0) continue;
      if (Number.isNaN(a)) {
        this.nan = true;
        return;
      }
      if (scale < a) {
        ssq = 1 + ssq * (scale / a) * (scale / a);
        scale = a;
      } else {
        ssq += (a / scale) * (a / scale);
      }
    }
    this.scale = scale;
    this.ssq = ssq;
  }

  /** √(Σ x²) of the terms added so far (NaN once a NaN was added). */
  value(): number {
    return this.nan ? Number.NaN : this.scale * Math.sqrt(this.ssq);
  }
}

/** 2^-600: terms are scaled by it when a plain sum overflows (exact: a power of two). */
const DOWN = 2 ** -600;
/** 2^600, the inverse of {@link DOWN}. */
const UP = 2 ** 600;

/**
 * (Σ_{i<n} term(i)) / divisor, finite whenever the exact quotient is representable, even when the
 * plain sum overflows (a mean of values near 1.8e308). The compensated sum is tried first; when it
 * overflows while every term is finite, it is recomputed on terms scaled by 2^-600 (exact), divided,
 * and scaled back. Terms below 2^-474 are lost in the scaled pass; they are < 2^-1000 relative to
 * a sum that overflowed. Returns ±Infinity only when the quotient itself exceeds float64, and NaN
 * only for NaN terms or ∞ − ∞.
 * @param n - The number of terms.
 * @param term - The i-th term.
 * @param divisor - A positive divisor (1 for a plain sum).
 */
export function robustSum(n: number, term: (i: number) => number, divisor = 1): number {
  const acc = new CompensatedSum();
  for (let i = 0; i < n; i++) acc.add(term(i));
  const plain = acc.value();
  if (Number.isFinite(plain) || Number.isNaN(plain)) return plain / divisor;
  const scaled = new CompensatedSum();
  for (let i = 0; i < n; i++) {
    const x = term(i);
    if (!Number.isFinite(x)) return plain;
    scaled.add(x * DOWN);
  }
  return (scaled.value() / divisor) * UP;
}
