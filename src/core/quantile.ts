/**
 * Sample statistics shared by the diagnostics: linear-interpolation quantiles (the definition of
 * numpy's default "linear" method and torch.quantile's default, without torch's 2^24-element
 * ceiling) and the Bessel moments of a float64 sample (docs/diagnostics/mismatch.md#quantiles).
 */

import { ConfigError, fail, ShapeError } from "../errors.js";
import { finiteOr } from "./finite.js";
import { fmtValue, safeText } from "./message.js";
import { orderStatistics } from "./orderStatistics.js";
import { maxAbsOf, pow2Scale } from "./scale.js";
import { CompensatedSum } from "./sum.js";
import { checkFiniteAll, describeShape, isNumberArray } from "./validate.js";

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
  const gap = b - a;
  if (Number.isFinite(gap)) return w < 0.5 ? a + w * gap : b - gap * (1 - w);
  // b − a overflowed (a, b of opposite signs near ±1.8e308): interpolate the halves, exactly
  // representable, and double; the result lies in [a, b], so it is finite.
  const a2 = a * 0.5;
  const b2 = b * 0.5;
  return 2 * (w < 0.5 ? a2 + w * (b2 - a2) : b2 - (b2 - a2) * (1 - w));
}

/**
 * {@link quantileSorted} at each level, from an unsorted finite non-empty sample, without sorting
 * it: only the order statistics the levels read (⌊h⌋ and ⌈h⌉, h = q·(n − 1)) are selected, by a
 * three-way-partition multiselect on a copy (expected O(n·log k) for k ranks, against the full
 * sort's O(n·log n): 2.5 ms → about 0.6 ms for the 23,000 gaps of a 32×1,024 step). The values are
 * the sorted sample's exactly, zeros included: a selected zero gets the sign the ascending sort
 * (−0 before +0) gives its rank. Unchecked kernel, like quantileSorted. @internal
 */
export function quantilesOf(sample: ArrayLike<number>, levels: readonly number[]): number[] {
  const n = sample.length;
  const ranks = [
    ...new Set(levels.flatMap((q) => [Math.floor(q * (n - 1)), Math.ceil(q * (n - 1))])),
  ].sort((x, y) => x - y);
  const values = orderStatistics(Float64Array.from(sample), ranks);
  const at = new Map<number, number>(ranks.map((r, j) => [r, values[j] as number]));
  // quantileSorted reads exactly the ranks ⌊h⌋ and ⌈h⌉: a two-entry view suffices.
  return levels.map((q) => {
    const h = q * (n - 1);
    const lo = Math.floor(h);
    const view = {
      length: n,
      [lo]: at.get(lo) as number,
      [Math.ceil(h)]: at.get(Math.ceil(h)) as number,
    };
    return quantileSorted(view as unknown as ArrayLike<number>, q);
  });
}

/**
 * Require a 1-D sample: an array of numbers or a numeric typed array (not null, not nested, not a
 * string); the message describes anything else by its shape, elided when long.
 * @internal
 */
export function checkSample(fn: string, arg: string, x: unknown): ArrayLike<number> {
  const typed =
    ArrayBuffer.isView(x) &&
    !(x instanceof DataView) &&
    !(x instanceof BigInt64Array) &&
    !(x instanceof BigUint64Array);
  if (typed || isNumberArray(x)) {
    return x as ArrayLike<number>;
  }
  throw fail(ShapeError, fn, arg, "a 1-D array of numbers", `shape ${safeText(describeShape(x))}`);
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
 * @enforcedBy test/core/quantile.test.ts > quantiles > golden: linear interpolation on [-0.6, 0.2, 1.0]
 * @enforcedBy test/core/quantile.test.ts > quantiles > property: monotone in the level and bounded by min and max
 * @enforcedBy test/diagnostics/hardening.test.ts > quantiles > rejects: null and non-array samples with a ShapeError, not a TypeError
 * @enforcedBy test/diagnostics/hardening.test.ts > quantiles > regression: interpolating between values near ±1.8e308 stays finite
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
  checkSample(fn, arg, values);
  checkSample(fn, "levels", levels);
  if (values.length < 1) {
    throw fail(ShapeError, fn, arg, "non-empty (n >= 1)", "length 0");
  }
  checkFiniteAll(fn, arg, values);
  for (let k = 0; k < levels.length; k++) {
    const q = levels[k] as number;
    if (!(q >= 0 && q <= 1)) {
      throw fail(ConfigError, fn, "levels", "in [0, 1]", `${fmtValue(q)} at index ${k}`);
    }
  }
  // The order statistics the levels read, selected on a copy (the input is left untouched).
  return quantilesOf(values, levels);
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
 * Moments of a non-empty finite sample: compensated sums in index order, two-pass variance, on
 * x·s (s = 2^k from max |x|; 1 on moderate samples, bitwise the plain formulas), so no sum or
 * square overflows. The mean, min and max are then finite; the std is +Infinity only when the exact
 * std exceeds float64 (callers check their reports with {@link checkFiniteReport}).
 * @internal
 */
export function sampleMoments(x: ArrayLike<number>): SampleMoments {
  const n = x.length;
  const sc = pow2Scale(maxAbsOf(x));
  const s = new CompensatedSum();
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    s.add(v * sc);
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = s.value() / n;
  let std = 0;
  if (n > 1) {
    const ss = new CompensatedSum();
    for (let i = 0; i < n; i++) {
      const d = (x[i] as number) * sc - mean;
      ss.add(d * d);
    }
    std = Math.sqrt(ss.value() / (n - 1)) / sc;
  }
  return { mean: mean / sc, std, min, max, absMax: Math.max(Math.abs(min), Math.abs(max)) };
}

/**
 * The final guard of a diagnostic report: every number (and every entry of a number array or
 * Float64Array) among its own fields must be finite; the first that is not throws OverflowError
 * naming the field (e.g. `gapStd`, `gapQuantiles[3]`), since the inputs were checked finite.
 * @internal
 */
export function checkFiniteReport<T extends object>(fn: string, report: T): T {
  for (const [key, v] of Object.entries(report)) {
    if (typeof v === "number") finiteOr(fn, key, v, undefined, "the exact value exceeds float64");
    else if (v instanceof Float64Array || (Array.isArray(v) && typeof v[0] === "number")) {
      const xs = v as ArrayLike<number>;
      for (let i = 0; i < xs.length; i++) {
        const e = xs[i];
        if (typeof e === "number")
          finiteOr(fn, `${key}[${i}]`, e, undefined, "the exact value exceeds float64");
      }
    }
  }
  return report;
}
