/**
 * Trend and changepoint tests for any per-step series (entropy, ESS, mismatch std…): Theil–Sen
 * slope per training step, the Mann–Kendall trend test, the centred CUSUM statistic with a
 * permutation threshold of exact level, and the detrended changepoint test that tells a steady
 * linear trend from a level shift (docs/diagnostics/entropy.md#trend). Randomness comes only from
 * the caller's seeded Rng.
 */

import { finiteOr } from "../core/finite.js";
import { fmtValue } from "../core/message.js";
import { orderStatistics } from "../core/orderStatistics.js";
import { checkSample } from "../core/quantile.js";
import type { Rng } from "../core/rng.js";
import { maxAbsOf, mulPow2, pow2Exponent } from "../core/scale.js";
import { CompensatedSum, fsum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { checkFiniteAll, checkObject, toVector } from "../core/validate.js";
import { ConfigError, fail, NonFiniteError, ShapeError } from "../errors.js";

/**
 * Options of {@link trendTest} and `entropyTrend`.
 * @since 0.1.0
 */
export interface TrendOptions {
  /** How many trailing steps to test (2 ≤ window ≤ series length). */
  readonly window: number;
  /** Number of random permutations for the null threshold (integer ≥ 1). @defaultValue 999 */
  readonly nPerm?: number;
  /** Test level in (0, 1); needs ⌊α·(nPerm + 1)⌋ ≥ 1. @defaultValue 0.05 */
  readonly alpha?: number;
  /** The seeded stream the permutations are drawn from (`createRng(seed)`). */
  readonly rng: Rng;
}

/**
 * What {@link trendTest} returns: plain scalars, so equal seeds give `toEqual` reports.
 * @since 0.1.0
 */
export interface TrendReport {
  /** Theil–Sen slope of the window, per step. */
  readonly slope: number;
  /** Global index of the last pre-change step when the test rejects, else null. */
  readonly changepointIndex: number | null;
  /** max_k |S_k| of the centred cumulative sum of the window. */
  readonly cusumStat: number;
  /** The m-th largest permuted CUSUM statistic, m = ⌊α·(nPerm + 1)⌋; reject iff cusumStat > it. */
  readonly threshold: number;
  /** The test level α. */
  readonly alpha: number;
  /** The number of permutations. */
  readonly nPerm: number;
}

/**
 * The maximum and its first position of a CUSUM path.
 * @since 0.1.0
 */
export interface CusumResult {
  /** max_k |S_k|. */
  readonly stat: number;
  /** The first k attaining the maximum (0-based, local to the input). */
  readonly argmax: number;
}

/** The most points a Theil–Sen slope takes: n(n − 1)/2 ≈ 8.4e6 pairwise slopes, 67 MB. */
export const MAX_THEIL_SEN_POINTS = 4096;
/** The most permutations {@link trendTest} draws. */
export const MAX_PERMUTATIONS = 1e6;
/** The most CUSUM terms a permutation test evaluates, nPerm × window (a few seconds at the cap). */
export const MAX_PERMUTATION_WORK = 1e8;

/** @internal */
export function checkSeries(fn: string, arg: string, x: ArrayLike<number>): void {
  checkSample(fn, arg, x);
  if (x.length < 2) {
    throw fail(ShapeError, fn, arg, "of length >= 2", `length ${x.length}`);
  }
  for (let i = 0; i < x.length; i++) {
    if (!Number.isFinite(x[i] as number)) {
      throw fail(NonFiniteError, fn, arg, "finite everywhere", `${x[i]} at index ${i}`);
    }
  }
  checkTheilSenSize(fn, arg, x.length);
}

function checkTheilSenSize(fn: string, arg: string, n: number): void {
  if (n > MAX_THEIL_SEN_POINTS) {
    throw fail(
      ShapeError,
      fn,
      arg,
      `of length <= ${MAX_THEIL_SEN_POINTS} (the Theil–Sen slope sorts all n(n − 1)/2 pairwise slopes)`,
      `length ${n}`,
    );
  }
}

/**
 * The series on the scale s = 2^k of its max |x| (s = 1 on moderate values, where every statistic
 * below is bitwise the plain one): differences, sums and medians of values near ±1.8e308 cannot
 * overflow there. Slopes, CUSUM statistics and thresholds scale by s exactly, so decisions taken
 * on the scaled series are those of the exact series.
 */
/** @internal */
export function scaled(x: ArrayLike<number>): { y: Float64Array; s: number; e: number } {
  const e = pow2Exponent(maxAbsOf(x));
  const s = 2 ** e;
  return { y: Float64Array.from(x, (v) => v * s), s, e };
}

/** Interpolated median of a sorted array: the middle value, or the mean of the two middles. */
function sortedMedian(s: Float64Array): number {
  const n = s.length;
  const h = (n - 1) >> 1;
  return n % 2 === 1 ? (s[h] as number) : 0.5 * ((s[h] as number) + (s[h + 1] as number));
}

/**
 * Require `steps` to be a 1-D array of n finite, strictly increasing numbers (the training step of
 * each value) and return it as a Float64Array.
 */
/** @internal */
export function checkSteps(fn: string, arg: string, steps: unknown, n: number): Float64Array {
  const t = Float64Array.from(checkSample(fn, arg, steps));
  if (t.length !== n) {
    throw fail(ShapeError, fn, arg, `of the series' length (${n})`, `length ${t.length}`);
  }
  checkFiniteAll(fn, arg, t);
  for (let i = 1; i < n; i++) {
    if (!((t[i] as number) > (t[i - 1] as number))) {
      throw fail(
        ConfigError,
        fn,
        arg,
        "strictly increasing (one value per training step)",
        `${t[i]} after ${t[i - 1]} at index ${i}`,
      );
    }
  }
  return t;
}

/**
 * The steps on the scale 2^e of their max |s| (e = 0 on moderate steps, where the pairwise step
 * differences are the plain ones): a slope computed on y = x·2^eX against t = s·2^e is the exact
 * slope times 2^(eX − e).
 */
/** @internal */
export function scaledSteps(s: Float64Array): { t: Float64Array; e: number } {
  const e = pow2Exponent(maxAbsOf(s));
  return { t: e === 0 ? s : s.map((v) => mulPow2(v, e)), e };
}

/** Map a slope of the scaled series back: slope·2^(eT − eX), the plain division when eT = 0. */
/** @internal */
export function unscaleSlope(slope: number, sx: number, eX: number, eT: number): number {
  return eT === 0 ? slope / sx : mulPow2(slope, eT - eX);
}

/**
 * Estimate the slope of a series robustly, per training step: the Theil–Sen estimator.
 *
 * Formula: slope = median over i < j of (x_j − x_i)/(s_j − s_i), with s_i = `steps[i]` (s_i = i
 * when `steps` is omitted) and the interpolated median (the mean of the two middle values for an
 * even number of pairs). Breakdown point 1 − 1/√2 ≈ 29 %.
 *
 * @param x - The series; length ≥ 2, finite.
 * @param steps - The training step of each value: same length, finite, strictly increasing.
 *   @defaultValue 0, 1, …, n − 1 (the slope per series index, bitwise the former behaviour)
 * @returns The slope per training step.
 * @throws {ShapeError} E_SHAPE when the series or steps is not a 1-D array of numbers, the series
 *   has fewer than 2 values or more than {@link MAX_THEIL_SEN_POINTS}, or steps has another length.
 * @throws {NonFiniteError} E_NONFINITE when a value or a step is NaN or infinite.
 * @throws {ConfigError} E_CONFIG when steps is not strictly increasing.
 * @throws {OverflowError} E_OVERFLOW when the slope exceeds float64 (values of both signs near
 *   ±1.8e308, or steps so close together that a pairwise slope does); the pairwise slopes are
 *   computed with values and steps rescaled by powers of two, so nothing else overflows.
 * @derivation docs/diagnostics/entropy.md#theil-sen-slope
 * @enforcedBy test/diagnostics/trend.test.ts > theilSenSlope > golden: interpolated median of the pairwise slopes
 * @enforcedBy test/diagnostics/trend.test.ts > theilSenSlope > property: equivariant under affine maps of the series
 * @enforcedBy test/diagnostics/trend.test.ts > theilSenSlope > golden: a run dumped every 10 steps gives the slope per training step
 * @enforcedBy test/diagnostics/trend.test.ts > theilSenSlope > identity: steps 0..n-1 give bitwise the slope per index
 * @see H. Theil (1950); P. K. Sen (1968), JASA 63:1379
 * @enforcedBy test/diagnostics/hardening.test.ts > trendTest > rejects: a slope beyond float64 and a series past the theil–sen cap
 * @since 0.1.0
 */
export function theilSenSlope(x: ArrayLike<number>, steps?: ArrayLike<number>): number {
  return theilSenFitOf("theilSenSlope", x, steps, false).slope;
}

/**
 * The Theil–Sen line through a series: its slope per training step and its intercept.
 * @since 0.1.0
 */
export interface TheilSenFit {
  /** median_{i<j} (x_j − x_i)/(s_j − s_i). */
  readonly slope: number;
  /** median_i (x_i − slope·s_i): the line's value at step 0. */
  readonly intercept: number;
}

/**
 * Fit a robust line to a series: the Theil–Sen slope and the median-residual intercept.
 *
 * Formula: b = median_{i<j} (x_j − x_i)/(s_j − s_i); a = median_i (x_i − b·s_i) (Sen 1968), both
 * interpolated medians; the line is x ≈ a + b·s.
 *
 * @param x - The series; length ≥ 2, finite.
 * @param steps - The training step of each value: same length, finite, strictly increasing.
 *   @defaultValue 0, 1, …, n − 1
 * @returns The slope per step and the intercept (the line at step 0).
 * @throws {ShapeError} E_SHAPE as {@link theilSenSlope}.
 * @throws {NonFiniteError} E_NONFINITE when a value or a step is NaN or infinite.
 * @throws {ConfigError} E_CONFIG when steps is not strictly increasing.
 * @throws {OverflowError} E_OVERFLOW when the slope or the intercept exceeds float64.
 * @derivation docs/diagnostics/entropy.md#theil-sen-slope
 * @enforcedBy test/diagnostics/trend.test.ts > theilSenFit > golden: the intercept is the median of x - b·s
 * @see P. K. Sen (1968), JASA 63:1379
 * @since 0.1.0
 */
export function theilSenFit(x: ArrayLike<number>, steps?: ArrayLike<number>): TheilSenFit {
  return theilSenFitOf("theilSenFit", x, steps, true);
}

function theilSenFitOf(
  fn: string,
  x: ArrayLike<number>,
  steps: ArrayLike<number> | undefined,
  withIntercept: boolean,
): TheilSenFit {
  checkSeries(fn, "x", x);
  const sv = steps === undefined ? null : checkSteps(fn, "steps", steps, x.length);
  const { y, s, e: eX } = scaled(x);
  if (sv === null) {
    // The former behaviour, bitwise: slopes per index, one division by the scale.
    const b = theilSen(y, null);
    const slope = finiteOr(fn, "slope", b / s, undefined, "the exact slope exceeds float64");
    if (!withIntercept) return { slope, intercept: 0 };
    return { slope, intercept: interceptOf(fn, y, s, b, null) };
  }
  const { t, e } = scaledSteps(sv);
  const b = theilSen(y, t);
  const why = "the slope exceeds float64";
  const slope = finiteOr(fn, "slope", unscaleSlope(b, s, eX, e), undefined, why);
  if (!withIntercept) return { slope, intercept: 0 };
  return { slope, intercept: interceptOf(fn, y, s, b, t) };
}

/** median_i (y_i − b·t_i)/s for the scaled series y = x·s, scaled steps t and scaled slope b. */
/** @internal */
export function interceptOf(
  fn: string,
  y: Float64Array,
  s: number,
  b: number,
  t: Float64Array | null,
): number {
  const r = y.map((v, i) => v - b * (t === null ? i : (t[i] as number)));
  const why = "the intercept exceeds float64";
  return finiteOr(fn, "intercept", sortedMedian(r.sort()) / s, undefined, why);
}

/** Median of the pairwise slopes (x_j − x_i)/(t_j − t_i), t_i = i when t is null. */
/** @internal */
export function theilSen(x: ArrayLike<number>, t: ArrayLike<number> | null): number {
  const n = x.length;
  const slopes = new Float64Array((n * (n - 1)) / 2);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const xi = x[i] as number;
    if (t === null) {
      for (let j = i + 1; j < n; j++) slopes[k++] = ((x[j] as number) - xi) / (j - i);
    } else {
      const ti = t[i] as number;
      for (let j = i + 1; j < n; j++)
        slopes[k++] = ((x[j] as number) - xi) / ((t[j] as number) - ti);
    }
  }
  // The median's one or two order statistics, selected (not the full sort): the sorted array's
  // values exactly, so the median is sortedMedian's of the sorted slopes bitwise. No slope is NaN:
  // the series is finite and the steps strictly increasing (a slope may overflow to ±Infinity,
  // which selection orders as the sort does).
  const m = slopes.length;
  const h = (m - 1) >> 1;
  const mid = orderStatistics(slopes, m % 2 === 1 ? [h] : [h, h + 1]);
  return m % 2 === 1 ? (mid[0] as number) : 0.5 * ((mid[0] as number) + (mid[1] as number));
}

/**
 * Centre a window in an order-invariant way: d_i = (x_i − min x) − mean(x − min x), the mean taken
 * over the sorted values. Shifting by min x makes a constant series exactly zero; reading the mean
 * off the sorted copy makes d(x∘σ) = d(x)∘σ bitwise, so permuted statistics are exchangeable with
 * the observed one in floating point, not just in exact arithmetic.
 */
function centred(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  let lo = x[0] as number;
  for (let i = 1; i < n; i++) lo = Math.min(lo, x[i] as number);
  const y = Float64Array.from(x, (v) => v - lo);
  const mean = fsum(Float64Array.from(y).sort()) / n;
  return y.map((v) => v - mean);
}

/** max_k |Σ_{i≤k} d[order[i]]| and its first argmax (compensated running sum). */
function cusumOf(d: Float64Array, order: Int32Array | null): CusumResult {
  const acc = new CompensatedSum();
  let stat = -1;
  let argmax = 0;
  for (let k = 0; k < d.length; k++) {
    acc.add(d[order === null ? k : (order[k] as number)] as number);
    const s = Math.abs(acc.value());
    if (s > stat) {
      stat = s;
      argmax = k;
    }
  }
  return { stat, argmax };
}

/**
 * Compute the CUSUM changepoint statistic of a series.
 *
 * Formula: S_k = Σ_{i≤k} (x_i − x̄), k = 0…n−1; stat = max_k |S_k|, argmax = the first k attaining
 * it (the last step before the most likely mean shift). For a shift of size δ after p of n steps,
 * E[S_{p−1}] = p·(n − p)·δ/n.
 *
 * @param x - The series; length ≥ 2, finite.
 * @returns The statistic and its first argmax.
 * @throws {ShapeError} E_SHAPE when the series is not a 1-D array of numbers, has fewer than 2
 *   values or more than {@link MAX_THEIL_SEN_POINTS}.
 * @throws {NonFiniteError} E_NONFINITE when a value is NaN or infinite.
 * @throws {OverflowError} E_OVERFLOW when the exact statistic exceeds float64.
 * @derivation docs/diagnostics/entropy.md#cusum
 * @enforcedBy test/diagnostics/trend.test.ts > cusumStatistic > golden: a level shift peaks at the last pre-change step with p(n - p)|delta|/n
 * @see E. S. Page (1954), Biometrika 41:100
 * @enforcedBy test/diagnostics/hardening.test.ts > trendTest > regression: a series near ±1.8e308 gives the exact cusum statistic, not NaN
 * @since 0.1.0
 */
export function cusumStatistic(x: ArrayLike<number>): CusumResult {
  const fn = "cusumStatistic";
  checkSeries(fn, "x", x);
  const { y, s } = scaled(x);
  const r = cusumOf(centred(y), null);
  const why = "the exact statistic exceeds float64";
  return { stat: finiteOr(fn, "stat", r.stat / s, undefined, why), argmax: r.argmax };
}

/**
 * Fill `order` with a uniform random permutation of 0…n−1 (Fisher–Yates from the identity, with
 * the Rng's unbiased integers): the one shuffle of every permutation test. @internal
 */
export function shuffledIdentity(order: Int32Array, rng: Rng): void {
  const n = order.length;
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(0, i);
    const t = order[i] as number;
    order[i] = order[j] as number;
    order[j] = t;
  }
}

/**
 * The m-th largest CUSUM statistic over `nPerm` uniform random permutations of a centred window
 * (Fisher–Yates with the Rng's unbiased integers). @internal
 */
export function permutationThreshold(d: Float64Array, nPerm: number, m: number, rng: Rng): number {
  const n = d.length;
  const stats = new Float64Array(nPerm);
  const order = new Int32Array(n);
  for (let p = 0; p < nPerm; p++) {
    shuffledIdentity(order, rng);
    stats[p] = cusumOf(d, order).stat;
  }
  stats.sort();
  return stats[nPerm - m] as number;
}

/** @internal */
export function isRng(x: unknown): x is Rng {
  return typeof x === "object" && x !== null && typeof (x as Rng).int === "function";
}

/** The validated options of a trend test on a series of S values, in polgrad's order. */
interface CheckedTrendOptions {
  readonly window: number;
  readonly nPerm: number;
  readonly alpha: number;
  /** ⌊α·(nPerm + 1)⌋ ≥ 1: the rank of the threshold among the permuted statistics. */
  readonly m: number;
  readonly rng: Rng;
}

/** @internal */
export function checkTrendOptions(
  fn: string,
  arg: string,
  S: number,
  options: TrendOptions,
): CheckedTrendOptions {
  checkObject(fn, "options", options);
  const window = options.window;
  if (typeof window !== "number" || !Number.isInteger(window) || window < 2) {
    throw fail(ConfigError, fn, "window", "an integer >= 2", fmtValue(window));
  }
  if (window > S) {
    throw fail(ConfigError, fn, "window", `<= the length of ${arg} (${S})`, String(window));
  }
  if (window > MAX_THEIL_SEN_POINTS) {
    throw fail(
      ConfigError,
      fn,
      "window",
      `<= ${MAX_THEIL_SEN_POINTS} (the cap on Theil–Sen points: n(n − 1)/2 pairwise slopes)`,
      String(window),
    );
  }
  const nPerm = options.nPerm ?? 999;
  if (typeof nPerm !== "number" || !Number.isInteger(nPerm) || nPerm < 1) {
    throw fail(ConfigError, fn, "nPerm", "an integer >= 1", fmtValue(nPerm));
  }
  if (nPerm > MAX_PERMUTATIONS || nPerm * window > MAX_PERMUTATION_WORK) {
    throw fail(
      ConfigError,
      fn,
      "nPerm",
      `<= ${MAX_PERMUTATIONS} with nPerm × window <= ${MAX_PERMUTATION_WORK} (the permutation budget cap)`,
      `${nPerm} (window ${window})`,
    );
  }
  const alpha = options.alpha ?? 0.05;
  if (typeof alpha !== "number" || !(alpha > 0 && alpha < 1)) {
    throw fail(ConfigError, fn, "alpha", "in (0, 1)", fmtValue(alpha));
  }
  const m = Math.floor(alpha * (nPerm + 1));
  if (m < 1) {
    throw fail(
      ConfigError,
      fn,
      "alpha",
      `large enough that floor(alpha * (nPerm + 1)) >= 1, or the test can never reject (nPerm = ${nPerm})`,
      String(alpha),
    );
  }
  if (!isRng(options.rng)) {
    throw fail(ConfigError, fn, "rng", "a seeded Rng (createRng(seed))", fmtValue(options.rng));
  }
  return { window, nPerm, alpha, m, rng: options.rng };
}

/**
 * Test the trailing window of a per-step series for a trend and a mean shift.
 *
 * Formula: on w = the last `window` values, slope = Theil–Sen; stat = max_k |S_k| with
 * S_k = Σ_{i≤k} (x_i − x̄); threshold = the m-th largest of the statistic over nPerm uniform
 * random permutations of the window, m = ⌊α·(nPerm + 1)⌋; reject iff stat > threshold, and then
 * changepointIndex = (S − window) + argmax_k |S_k| (first maximum), else null.
 * Null distribution: if the window is exchangeable (e.g. i.i.d.), the observed and permuted
 * statistics are exchangeable, so P(reject) ≤ m/(nPerm + 1) ≤ α, with equality when the
 * statistics have no ties.
 *
 * @param series - The per-step values, `[S]`, finite everywhere (values before the window are
 *   checked but never read).
 * @param options - window, nPerm (default 999), alpha (default 0.05) and the seeded rng.
 * @param where - The public function and argument named in errors. @defaultValue trendTest, series
 * @returns The slope, the CUSUM statistic, the permutation threshold and the changepoint index.
 * @throws {ShapeError} E_SHAPE when the series is not a 1-D array of numbers.
 * @throws {NonFiniteError} E_NONFINITE when a value of the series is NaN or infinite.
 * @throws {ConfigError} E_CONFIG when options is not an object, window is not an integer in
 *   [2, min(S, MAX_THEIL_SEN_POINTS)], nPerm not an integer in [1, MAX_PERMUTATIONS] with
 *   nPerm·window ≤ MAX_PERMUTATION_WORK, alpha not in (0, 1), ⌊alpha·(nPerm + 1)⌋ = 0, or rng
 *   not an Rng.
 * @throws {OverflowError} E_OVERFLOW when the exact slope, statistic or threshold exceeds float64
 *   (the test itself runs on the window rescaled by a power of two).
 * @derivation docs/diagnostics/entropy.md#permutation-level
 * @enforcedBy test/diagnostics/trend.test.ts > trendTest > calibration: level is alpha on heavy-tailed iid windows (distribution-free)
 * @enforcedBy test/diagnostics/trend.test.ts > trendTest > identity: a changepoint is reported iff the statistic strictly exceeds the threshold
 * @enforcedBy test/diagnostics/hardening.test.ts > trendTest > rejects: nPerm 1e9 and other budgets past their caps with a ConfigError naming the cap
 * @since 0.1.0
 */
export function trendTest(
  series: VectorLike,
  options: TrendOptions,
  where: { readonly fn: string; readonly arg: string } = { fn: "trendTest", arg: "series" },
): TrendReport {
  const { fn, arg } = where;
  const x = toVector(fn, arg, series);
  checkFiniteAll(fn, arg, x);
  const S = x.length;
  const { window, nPerm, alpha, m, rng } = checkTrendOptions(fn, arg, S, options);
  const { y: w, s } = scaled(x.subarray(S - window));
  const d = centred(w);
  const { stat, argmax } = cusumOf(d, null);
  const threshold = permutationThreshold(d, nPerm, m, rng);
  const why = "the exact value exceeds float64";
  return {
    slope: finiteOr(fn, "slope", theilSen(w, null) / s, undefined, why),
    // Decided on the scaled window: stat and threshold scale by the same power of two.
    changepointIndex: stat > threshold ? S - window + argmax : null,
    cusumStat: finiteOr(fn, "cusumStat", stat / s, undefined, why),
    threshold: finiteOr(fn, "threshold", threshold / s, undefined, why),
    alpha,
    nPerm,
  };
}
