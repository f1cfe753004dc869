/**
 * Sample statistics shared by the diagnostics: linear-interpolation quantiles (the definition of
 * numpy's default "linear" method and torch.quantile's default, without torch's 2^24-element
 * ceiling) and the Bessel moments of a float64 sample (docs/diagnostics/mismatch.md#quantiles).
 */
import { fmtValue, mustBe } from "../core/message.js";
import { CompensatedSum } from "../core/sum.js";
import { checkFiniteAll } from "../core/validate.js";
import { ConfigError, ShapeError } from "../errors.js";

/**
 * The q-quantile of an ascending sample by linear interpolation at position h = q·(n − 1).
 * Unchecked kernel: `sorted` must be ascending, finite and non-empty, and 0 ≤ q ≤ 1.
 * The interpolation is torch's two-sided lerp (exact at both ends of the segment).
 * @internal
 */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const h = q * (sorted.length - 1);
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  const w = h - lo;
  return w < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w);
}

/**
 * Compute quantiles of a sample by sorting and linear interpolation.
 *
 * Formula: x₍₀₎ ≤ … ≤ x₍ₙ₋₁₎ the sorted sample; h = q·(n − 1), j = ⌊h⌋, f = h − j;
 * Q(q) = x₍ⱼ₎ + f·(x₍ⱼ₊₁₎ − x₍ⱼ₎) (evaluated as x₍ⱼ₊₁₎ − (1 − f)·(x₍ⱼ₊₁₎ − x₍ⱼ₎) when f ≥ ½).
 * Q(0) is the minimum, Q(1) the maximum, and Q is non-decreasing in q. All in float64, any n.
 *
 * @param values - The sample, n ≥ 1 finite values (not modified; a sorted copy is made).
 * @param levels - The levels q, each in [0, 1].
 * @returns One quantile per level, in the order of `levels`.
 * @throws {ShapeError} E_SHAPE when `values` is empty.
 * @throws {NonFiniteError} E_NONFINITE when a value is NaN or infinite.
 * @throws {ConfigError} E_CONFIG when a level is outside [0, 1] (NaN included).
 * @derivation docs/diagnostics/mismatch.md#quantiles
 * @enforcedBy test/diagnostics/quantile.test.ts > quantiles > golden: linear interpolation on [-0.6, 0.2, 1.0]
 * @enforcedBy test/diagnostics/quantile.test.ts > quantiles > property: monotone in the level and bounded by min and max
 * @since 0.1.0
 */
export function quantiles(values: ArrayLike<number>, levels: readonly number[]): number[] {
  return quantilesChecked("quantiles", "values", values, levels);
}

/**
 * {@link quantiles} with the caller's function and argument names in its messages.
 * @internal
 */
export function quantilesChecked(
  fn: string,
  arg: string,
  values: ArrayLike<number>,
  levels: readonly number[],
): number[] {
  if (values.length < 1) {
    throw new ShapeError(fn, arg, mustBe(fn, arg, "non-empty (n >= 1)", "length 0"));
  }
  checkFiniteAll(fn, arg, values);
  for (let k = 0; k < levels.length; k++) {
    const q = levels[k] as number;
    if (!(q >= 0 && q <= 1)) {
      throw new ConfigError(
        fn,
        "levels",
        mustBe(fn, "levels", "in [0, 1]", `${fmtValue(q)} at index ${k}`),
      );
    }
  }
  // Typed-array sort is numeric (not lexicographic); the input is left untouched.
  const sorted = Float64Array.from(values).sort();
  return levels.map((q) => quantileSorted(sorted, q));
}

/** Mean, Bessel standard deviation, minimum, maximum and maximum |x| of a sample. */
export interface SampleMoments {
  readonly mean: number;
  /** √(Σ(x − mean)²/(n − 1)); 0 when n = 1. */
  readonly std: number;
  readonly min: number;
  readonly max: number;
  readonly absMax: number;
}

/**
 * Moments of a non-empty finite sample: compensated sums in index order, two-pass variance.
 * @internal
 */
export function sampleMoments(x: ArrayLike<number>): SampleMoments {
  const n = x.length;
  const s = new CompensatedSum();
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    s.add(v);
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = s.value() / n;
  let std = 0;
  if (n > 1) {
    const ss = new CompensatedSum();
    for (let i = 0; i < n; i++) {
      const d = (x[i] as number) - mean;
      ss.add(d * d);
    }
    std = Math.sqrt(ss.value() / (n - 1));
  }
  return { mean, std, min, max, absMax: Math.max(Math.abs(min), Math.abs(max)) };
}
