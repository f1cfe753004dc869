/**
 * Trend and changepoint tests for any per-step series (entropy, ESS, mismatch std…): Theil–Sen
 * slope per training step, the Mann–Kendall trend test, the centred CUSUM statistic with a
 * permutation threshold of exact level, and the detrended changepoint test that tells a steady
 * linear trend from a level shift (docs/diagnostics/entropy.md#trend). Randomness comes only from
 * the caller's seeded Rng.
 */

import { finiteOr } from "../core/finite.js";
import { fmtValue, mustBe } from "../core/message.js";
import type { Rng } from "../core/rng.js";
import { maxAbsOf, mulPow2, pow2Exponent } from "../core/scale.js";
import { CompensatedSum, fsum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { checkFiniteAll, toVector } from "../core/validate.js";
import { ConfigError, NonFiniteError, ShapeError } from "../errors.js";
import { checkSample } from "./quantile.js";

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
/** The most CUSUM terms the permutation test evaluates, nPerm × window (about a second). */
export const MAX_PERMUTATION_WORK = 1e8;

function checkSeries(fn: string, arg: string, x: ArrayLike<number>): void {
  checkSample(fn, arg, x);
  if (x.length < 2) {
    throw new ShapeError(fn, arg, mustBe(fn, arg, "of length >= 2", `length ${x.length}`));
  }
  for (let i = 0; i < x.length; i++) {
    if (!Number.isFinite(x[i] as number)) {
      throw new NonFiniteError(
        fn,
        arg,
        mustBe(fn, arg, "finite everywhere", `${x[i]} at index ${i}`),
      );
    }
  }
  checkTheilSenSize(fn, arg, x.length);
}

function checkTheilSenSize(fn: string, arg: string, n: number): void {
  if (n > MAX_THEIL_SEN_POINTS) {
    throw new ShapeError(
      fn,
      arg,
      mustBe(
        fn,
        arg,
        `of length <= ${MAX_THEIL_SEN_POINTS} (the Theil–Sen slope sorts all n(n − 1)/2 pairwise slopes)`,
        `length ${n}`,
      ),
    );
  }
}

/**
 * The series on the scale s = 2^k of its max |x| (s = 1 on moderate values, where every statistic
 * below is bitwise the plain one): differences, sums and medians of values near ±1.8e308 cannot
 * overflow there. Slopes, CUSUM statistics and thresholds scale by s exactly, so decisions taken
 * on the scaled series are those of the exact series.
 */
function scaled(x: ArrayLike<number>): { y: Float64Array; s: number; e: number } {
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
function checkSteps(fn: string, arg: string, steps: unknown, n: number): Float64Array {
  const t = Float64Array.from(checkSample(fn, arg, steps));
  if (t.length !== n) {
    throw new ShapeError(
      fn,
      arg,
      mustBe(fn, arg, `of the series' length (${n})`, `length ${t.length}`),
    );
  }
  checkFiniteAll(fn, arg, t);
  for (let i = 1; i < n; i++) {
    if (!((t[i] as number) > (t[i - 1] as number))) {
      throw new ConfigError(
        fn,
        arg,
        mustBe(
          fn,
          arg,
          "strictly increasing (one value per training step)",
          `${t[i]} after ${t[i - 1]} at index ${i}`,
        ),
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
function scaledSteps(s: Float64Array): { t: Float64Array; e: number } {
  const e = pow2Exponent(maxAbsOf(s));
  return { t: e === 0 ? s : s.map((v) => mulPow2(v, e)), e };
}

/** Map a slope of the scaled series back: slope·2^(eT − eX), the plain division when eT = 0. */
function unscaleSlope(slope: number, sx: number, eX: number, eT: number): number {
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
function interceptOf(
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
function theilSen(x: ArrayLike<number>, t: ArrayLike<number> | null): number {
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
  slopes.sort();
  return sortedMedian(slopes);
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
 * The m-th largest CUSUM statistic over `nPerm` uniform random permutations of a centred window
 * (Fisher–Yates with the Rng's unbiased integers). @internal
 */
export function permutationThreshold(d: Float64Array, nPerm: number, m: number, rng: Rng): number {
  const n = d.length;
  const stats = new Float64Array(nPerm);
  const order = new Int32Array(n);
  for (let p = 0; p < nPerm; p++) {
    for (let i = 0; i < n; i++) order[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = rng.int(0, i);
      const t = order[i] as number;
      order[i] = order[j] as number;
      order[j] = t;
    }
    stats[p] = cusumOf(d, order).stat;
  }
  stats.sort();
  return stats[nPerm - m] as number;
}

function isRng(x: unknown): x is Rng {
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

function checkTrendOptions(
  fn: string,
  arg: string,
  S: number,
  options: TrendOptions,
): CheckedTrendOptions {
  if (typeof options !== "object" || options === null) {
    throw new ConfigError(fn, "options", mustBe(fn, "options", "an object", fmtValue(options)));
  }
  const window = options.window;
  if (typeof window !== "number" || !Number.isInteger(window) || window < 2) {
    throw new ConfigError(fn, "window", mustBe(fn, "window", "an integer >= 2", fmtValue(window)));
  }
  if (window > S) {
    throw new ConfigError(
      fn,
      "window",
      mustBe(fn, "window", `<= the length of ${arg} (${S})`, String(window)),
    );
  }
  if (window > MAX_THEIL_SEN_POINTS) {
    throw new ConfigError(
      fn,
      "window",
      mustBe(
        fn,
        "window",
        `<= ${MAX_THEIL_SEN_POINTS} (the cap on Theil–Sen points: n(n − 1)/2 pairwise slopes)`,
        String(window),
      ),
    );
  }
  const nPerm = options.nPerm ?? 999;
  if (typeof nPerm !== "number" || !Number.isInteger(nPerm) || nPerm < 1) {
    throw new ConfigError(fn, "nPerm", mustBe(fn, "nPerm", "an integer >= 1", fmtValue(nPerm)));
  }
  if (nPerm > MAX_PERMUTATIONS || nPerm * window > MAX_PERMUTATION_WORK) {
    throw new ConfigError(
      fn,
      "nPerm",
      mustBe(
        fn,
        "nPerm",
        `<= ${MAX_PERMUTATIONS} with nPerm × window <= ${MAX_PERMUTATION_WORK} (the permutation budget cap)`,
        `${nPerm} (window ${window})`,
      ),
    );
  }
  const alpha = options.alpha ?? 0.05;
  if (typeof alpha !== "number" || !(alpha > 0 && alpha < 1)) {
    throw new ConfigError(fn, "alpha", mustBe(fn, "alpha", "in (0, 1)", fmtValue(alpha)));
  }
  const m = Math.floor(alpha * (nPerm + 1));
  if (m < 1) {
    throw new ConfigError(
      fn,
      "alpha",
      mustBe(
        fn,
        "alpha",
        `large enough that floor(alpha * (nPerm + 1)) >= 1, or the test can never reject (nPerm = ${nPerm})`,
        String(alpha),
      ),
    );
  }
  if (!isRng(options.rng)) {
    throw new ConfigError(
      fn,
      "rng",
      mustBe(fn, "rng", "a seeded Rng (createRng(seed))", fmtValue(options.rng)),
    );
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

/**
 * The longest series whose Mann–Kendall p-value is read off the exact permutation distribution of
 * S; longer ones use the normal approximation with continuity correction, whose two-sided p-value
 * is then within 1e-3 of the exact one (docs/diagnostics/entropy.md#mann-kendall).
 */
export const MANN_KENDALL_EXACT_MAX = 100;

/**
 * What {@link mannKendall} returns: plain scalars.
 * @since 0.1.0
 */
export interface MannKendallResult {
  /** S = Σ_{i<j} sign(x_j − x_i). */
  readonly s: number;
  /** Var S under the permutation null with Kendall's tie correction. */
  readonly varS: number;
  /** The normal score (S − sign S)/√Var S, 0 when Var S = 0. */
  readonly z: number;
  /** The two-sided p-value P(|S′| ≥ |S|) under the permutation null. */
  readonly pValue: number;
  /** "exact" (n ≤ {@link MANN_KENDALL_EXACT_MAX}: the permutation distribution) or "normal". */
  readonly method: "exact" | "normal";
}

/**
 * Test a series for a monotone trend: the Mann–Kendall test.
 *
 * Formula: S = Σ_{i<j} sign(x_j − x_i); with tie groups of sizes t_g,
 * Var S = [n(n − 1)(2n + 5) − Σ_g t_g(t_g − 1)(2t_g + 5)]/18; z = (S − sign S)/√Var S.
 * p = P(|S′| ≥ |S|) for S′ the statistic of a uniformly random arrangement of the same values:
 * exactly (S′ = P − 2·inversions, whose law is the q-multinomial of the tie groups) when
 * n ≤ {@link MANN_KENDALL_EXACT_MAX}, else erfc(|z|/√2).
 * Null distribution: exchangeable values (e.g. iid of any law) give P(p ≤ α) ≤ α on the exact
 * path; the normal path is within 1e-3 of it.
 *
 * @param x - The series in step order; length ≥ 2, at most {@link MAX_THEIL_SEN_POINTS}, finite.
 * @returns S, Var S, z, the two-sided p-value and the method.
 * @throws {ShapeError} E_SHAPE when the series is not a 1-D array of numbers, has fewer than 2
 *   values or more than {@link MAX_THEIL_SEN_POINTS}.
 * @throws {NonFiniteError} E_NONFINITE when a value is NaN or infinite.
 * @derivation docs/diagnostics/entropy.md#mann-kendall
 * @enforcedBy test/diagnostics/trend.test.ts > mannKendall > golden: s, variance and exact p-value of a four-point series
 * @enforcedBy test/diagnostics/trend.test.ts > mannKendall > golden: ties shrink the variance and the exact null
 * @enforcedBy test/diagnostics/trend.calibration.test.ts > mannKendall > calibration: level is alpha on iid series, exact and normal paths
 * @see H. B. Mann (1945), Econometrica 13:245; M. G. Kendall (1975), Rank Correlation Methods, 4th ed., ch. 4
 * @since 0.1.0
 */
export function mannKendall(x: ArrayLike<number>): MannKendallResult {
  checkSeries("mannKendall", "x", x);
  return mannKendallOf(x);
}

/** Sizes of the groups of equal values (ascending by value). */
function tieGroups(x: ArrayLike<number>): number[] {
  const sorted = Float64Array.from(x).sort();
  const groups: number[] = [];
  let run = 1;
  for (let i = 1; i <= sorted.length; i++) {
    if (i < sorted.length && sorted[i] === sorted[i - 1]) run++;
    else {
      groups.push(run);
      run = 1;
    }
  }
  return groups;
}

function mannKendallOf(x: ArrayLike<number>): MannKendallResult {
  const n = x.length;
  let S = 0;
  for (let i = 0; i < n; i++) {
    const xi = x[i] as number;
    for (let j = i + 1; j < n; j++) {
      const xj = x[j] as number;
      S += xj > xi ? 1 : xj < xi ? -1 : 0;
    }
  }
  const groups = tieGroups(x);
  let tieTerm = 0;
  for (const t of groups) tieTerm += t * (t - 1) * (2 * t + 5);
  // Integers below 2^53 for n ≤ 4096; one rounding in the division.
  const varS = (n * (n - 1) * (2 * n + 5) - tieTerm) / 18;
  const z = varS > 0 ? (S - Math.sign(S)) / Math.sqrt(varS) : 0;
  if (n > MANN_KENDALL_EXACT_MAX) {
    return {
      s: S,
      varS,
      z,
      pValue: varS > 0 ? erfc(Math.abs(z) / Math.SQRT2) : 1,
      method: "normal",
    };
  }
  // S′ = P − 2·I with P the number of untied pairs and I the inversions of the arrangement.
  const dist = groups.length === n ? untiedNull(n) : mannKendallNull(groups);
  const P = dist.length - 1;
  const a = Math.abs(S);
  const p = new CompensatedSum();
  for (let inv = 0; inv <= P; inv++) if (Math.abs(P - 2 * inv) >= a) p.add(dist[inv] as number);
  return { s: S, varS, z, pValue: Math.min(1, p.value()), method: "exact" };
}

/** The untied laws computed so far, by n ≤ MANN_KENDALL_EXACT_MAX (at most 1.3 MB in all). */
const UNTIED_NULL = new Map<number, Float64Array>();

/** mannKendallNull of n singletons (the Mahonian law), computed once per n; never handed out. */
function untiedNull(n: number): Float64Array {
  let d = UNTIED_NULL.get(n);
  if (d === undefined) {
    d = mannKendallNull(new Array<number>(n).fill(1));
    UNTIED_NULL.set(n, d);
  }
  return d;
}

/**
 * The law of the number of inversions I of a uniformly random arrangement of a multiset with tie
 * groups of the given sizes: entry k is P(I = k), k = 0 … Σ_{g<h} t_g·t_h. Built one group at a
 * time: interleaving a new group of a equal values uniformly with the b values placed so far adds
 * an independent count of (new, old) pairs in that order (the q-binomial law); the product over
 * groups (the q-multinomial) does not depend on their order, so the largest groups go first.
 * Every step adds non-negative terms, so each probability has a small relative error. @internal
 */
export function mannKendallNull(groups: readonly number[]): Float64Array {
  const order = [...groups].sort((a, b) => b - a);
  let dist: Float64Array = new Float64Array([1]);
  let placed = 0;
  for (const a of order) {
    dist = a === 1 ? convolveUniform(dist, placed) : convolve(dist, interleaving(a, placed));
    placed += a;
  }
  return dist;
}

/**
 * The law of the number of (new, old) pairs with the new value first, over the C(a + b, a)
 * equally likely interleavings of a new and b old values. Conditioning on the last element:
 * P(a, b) = b/(a + b)·shift_a P(a, b − 1) + a/(a + b)·P(a − 1, b), P(0, b) = P(a, 0) = δ₀.
 */
function interleaving(a: number, b: number): Float64Array {
  let prev: Float64Array[] = Array.from({ length: b + 1 }, () => new Float64Array([1]));
  for (let aa = 1; aa <= a; aa++) {
    const cur: Float64Array[] = [new Float64Array([1])];
    for (let bb = 1; bb <= b; bb++) {
      const out = new Float64Array(aa * bb + 1);
      const left = cur[bb - 1] as Float64Array;
      const up = prev[bb] as Float64Array;
      const wl = bb / (aa + bb);
      const wu = aa / (aa + bb);
      for (let u = 0; u < left.length; u++) out[u + aa] = wl * (left[u] as number);
      for (let u = 0; u < up.length; u++) out[u] = (out[u] as number) + wu * (up[u] as number);
      cur.push(out);
    }
    prev = cur;
  }
  return prev[b] as Float64Array;
}

/** The law of I + J for independent I ~ d and J ~ g (direct convolution). */
function convolve(d: Float64Array, g: Float64Array): Float64Array {
  const out = new Float64Array(d.length + g.length - 1);
  for (let i = 0; i < d.length; i++) {
    const di = d[i] as number;
    if (di === 0) continue;
    for (let j = 0; j < g.length; j++) out[i + j] = (out[i + j] as number) + di * (g[j] as number);
  }
  return out;
}

/**
 * The law of I + J for I ~ d and J uniform on {0 … b}: out[k] = Σ_{j=k−b}^{k} d[j]/(b + 1). The
 * window sums come from block prefix and suffix sums of length b + 1 (van Herk 1992; Gil & Werman
 * 1993), each the sum of at most two non-negative partial sums: no subtraction, so small tail
 * probabilities keep their relative accuracy.
 */
function convolveUniform(d: Float64Array, b: number): Float64Array {
  if (b === 0) return d;
  const L = b + 1;
  const D = d.length;
  // p = b zeros, d, then zeros up to a multiple of L covering every window [k, k + b].
  const len = Math.ceil((D + 2 * b) / L) * L;
  const p = new Float64Array(len);
  p.set(d, b);
  const pre = new Float64Array(len);
  const suf = new Float64Array(len);
  for (let start = 0; start < len; start += L) {
    let acc = 0;
    for (let i = start; i < start + L; i++) pre[i] = acc += p[i] as number;
    acc = 0;
    for (let i = start + L - 1; i >= start; i--) suf[i] = acc += p[i] as number;
  }
  const out = new Float64Array(D + b);
  for (let k = 0; k < D + b; k++) {
    // Window p[k … k + b]: the rest of k's block, plus the start of the next block.
    const sum = k % L === 0 ? (suf[k] as number) : (suf[k] as number) + (pre[k + b] as number);
    out[k] = sum / L;
  }
  return out;
}

/**
 * erfc(x) for x ≥ 0: 1 − erf(x) by the series erf x = (2/√π)·e^{−x²}·Σ_n 2ⁿx^{2n+1}/(1·3⋯(2n+1))
 * (positive terms) below 1, the continued fraction e^{−x²}/√π · 1/(x + ½/(x + 1/(x + (3/2)/(x + …))))
 * evaluated backwards from depth 200 above. Relative error ≈ 1e-13 (1e-16 absolute below 1).
 */
function erfc(x: number): number {
  const x2 = x * x;
  if (x < 1) {
    let term = x;
    let sum = x;
    for (let n = 1; term > 1e-17 * sum; n++) {
      term *= (2 * x2) / (2 * n + 1);
      sum += term;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * Math.exp(-x2) * sum;
  }
  let f = x;
  for (let k = 200; k >= 1; k--) f = x + k / 2 / f;
  return Math.exp(-x2) / (Math.sqrt(Math.PI) * f);
}

/**
 * The two-sided normal tail erfc(|z|/√2) = 2·(1 − Φ(|z|)) used by the normal path of
 * {@link mannKendall}. @internal
 */
export function normalTwoSided(z: number): number {
  return erfc(Math.abs(z) / Math.SQRT2);
}

/**
 * What {@link seriesTrend} returns: plain JSON-able scalars, so equal seeds give `toEqual` reports.
 * @since 0.1.0
 */
export interface SeriesTrend {
  /** The number of trailing values tested. */
  readonly window: number;
  /** Theil–Sen slope of the window per training step. */
  readonly slope: number;
  /** Theil–Sen intercept: the window's line is value ≈ intercept + slope·step. */
  readonly intercept: number;
  /** Mann–Kendall test of the window for a monotone trend. */
  readonly mannKendall: MannKendallResult;
  /** mannKendall.pValue ≤ alpha. */
  readonly trendSignificant: boolean;
  /** Global index of the last pre-change value when the detrended test rejects, else null. */
  readonly changepointIndex: number | null;
  /** steps[changepointIndex], else null. */
  readonly changepointStep: number | null;
  /** max_k |Σ_{i≤k} r_i| of the window's residuals r after the least-squares line in the steps. */
  readonly cusumStat: number;
  /** T*·‖r‖, T* the m-th largest studentized statistic of the refitted permuted residuals; reject iff cusumStat > it. */
  readonly threshold: number;
  /** The test level α (of both tests). */
  readonly alpha: number;
  /** The number of permutations. */
  readonly nPerm: number;
  /** Marks a report whose changepoint test ran on the residuals after the trend. */
  readonly detrended: true;
}

/** The detrended CUSUM of one arrangement: max_k |C_k|, its first argmax and ‖u‖. */
interface ResidualCusum {
  readonly c: number;
  readonly argmax: number;
  readonly q: number;
}

/**
 * Refit and CUSUM of one arrangement v∘order of a window: u = v∘order − mean − β·t̃ with
 * β = Σ t̃·(v∘order)/Σ t̃² (least squares on [1, t]; t̃ = t − mean t, stt = Σ t̃²), then
 * c = max_k |Σ_{i≤k} u_i| (first argmax) and q = ‖u‖. Every sum is Neumaier-compensated in index
 * order (the CompensatedSum update, inlined: this loop runs nPerm times). `buf` is scratch of
 * the window's length.
 */
function residualCusum(
  v: Float64Array,
  tc: Float64Array,
  stt: number,
  order: Int32Array | null,
  buf: Float64Array,
): ResidualCusum {
  const n = v.length;
  let s1 = 0;
  let c1 = 0;
  let s2 = 0;
  let c2 = 0;
  for (let i = 0; i < n; i++) {
    const vi = v[order === null ? i : (order[i] as number)] as number;
    buf[i] = vi;
    let t = s1 + vi;
    c1 += Math.abs(s1) >= Math.abs(vi) ? s1 - t + vi : vi - t + s1;
    s1 = t;
    const p = (tc[i] as number) * vi;
    t = s2 + p;
    c2 += Math.abs(s2) >= Math.abs(p) ? s2 - t + p : p - t + s2;
    s2 = t;
  }
  const mean = (s1 + c1) / n;
  const beta = (s2 + c2) / stt;
  let sa = 0;
  let ca = 0;
  let sq = 0;
  let cq = 0;
  let c = -1;
  let argmax = 0;
  for (let k = 0; k < n; k++) {
    const u = (buf[k] as number) - mean - beta * (tc[k] as number);
    let t = sa + u;
    ca += Math.abs(sa) >= Math.abs(u) ? sa - t + u : u - t + sa;
    sa = t;
    const u2 = u * u;
    t = sq + u2;
    cq += sq >= u2 ? sq - t + u2 : u2 - t + sq;
    sq = t;
    const a = Math.abs(sa + ca);
    if (a > c) {
      c = a;
      argmax = k;
    }
  }
  return { c, argmax, q: Math.sqrt(sq + cq) };
}

/**
 * Least-squares residuals of a (scaled) window y on [1, t], computed on y − min y (a constant
 * window gives exactly 0). When every residual is within 2^−46 (64 ulp) of max_i(|y_i| + |β·t̃_i|)
 * the window is linear to rounding and the residuals are taken as exactly 0.
 */
function lineResiduals(y: Float64Array, tc: Float64Array, stt: number): Float64Array {
  const n = y.length;
  let lo = y[0] as number;
  for (let i = 1; i < n; i++) lo = Math.min(lo, y[i] as number);
  const z = y.map((v) => v - lo);
  const mean = fsum(z) / n;
  const cross = new CompensatedSum();
  for (let i = 0; i < n; i++) cross.add((tc[i] as number) * ((z[i] as number) - mean));
  const beta = cross.value() / stt;
  let scale = 0;
  let biggest = 0;
  const u = z.map((v, i) => {
    const fit = beta * (tc[i] as number);
    const r = v - mean - fit;
    scale = Math.max(scale, Math.abs(y[i] as number) + Math.abs(fit));
    biggest = Math.max(biggest, Math.abs(r));
    return r;
  });
  return biggest <= 2 ** -46 * scale ? u.fill(0) : u;
}

/**
 * The changepoint test on the residuals after the trend: observed residual CUSUM of the window
 * (scaled values y, scaled steps t) against the m-th largest studentized statistic c/q over nPerm
 * uniform permutations of the residuals, each refitted (Freedman–Lane). @internal
 */
export function detrendedChangepoint(
  y: Float64Array,
  t: ArrayLike<number>,
  nPerm: number,
  m: number,
  rng: Rng,
): { stat: number; threshold: number; argmax: number } {
  const n = y.length;
  const tMean = fsum(t) / n;
  const tc = Float64Array.from(t, (v) => v - tMean);
  const sq = new CompensatedSum();
  for (let i = 0; i < n; i++) sq.add((tc[i] as number) * (tc[i] as number));
  const stt = sq.value();
  const r = lineResiduals(y, tc, stt);
  const buf = new Float64Array(n);
  const obs = residualCusum(r, tc, stt, null, buf);
  const stats = new Float64Array(nPerm);
  const order = new Int32Array(n);
  for (let p = 0; p < nPerm; p++) {
    for (let i = 0; i < n; i++) order[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = rng.int(0, i);
      const tmp = order[i] as number;
      order[i] = order[j] as number;
      order[j] = tmp;
    }
    const e = residualCusum(r, tc, stt, order, buf);
    stats[p] = e.q > 0 ? e.c / e.q : 0;
  }
  stats.sort();
  // Studentized threshold T* mapped to the observed scale: c > T*·q ⟺ c/q > T* (q > 0).
  return { stat: obs.c, threshold: (stats[nPerm - m] as number) * obs.q, argmax: obs.argmax };
}

/**
 * Analyse the trailing window of a per-step series per training step: its trend (Theil–Sen
 * slope with the Mann–Kendall test) and a changepoint only where the residual after the trend
 * still shows one.
 *
 * Formula: on the last `window` values x and steps s: slope b, intercept a = Theil–Sen;
 * Mann–Kendall S, z, p; trendSignificant = p ≤ α. Changepoint: r = least-squares residuals of x
 * on [1, s]; cusumStat = max_k |Σ_{i≤k} r_i|; T(v) = max_k |Σ_{i≤k} u_i|/‖u‖ with u the
 * least-squares residuals of v on [1, s]; T* = the m-th largest of T(r∘σ_p) over nPerm uniform
 * permutations σ_p, m = ⌊α·(nPerm + 1)⌋; threshold = T*·‖r‖; reject iff cusumStat > threshold,
 * changepointIndex = (S − window) + argmax_k, changepointStep = steps[changepointIndex].
 * Null distribution: the statistic is exactly invariant to any line a + b·s added to the data,
 * so a steady linear trend never makes it reject; residuals of a fitted line are not exactly
 * exchangeable, so the level is approximate: measured ≤ α within binomial error on linear drift
 * with Gaussian and Student-t₃ noise, windows 20–200, dense and sparse steps
 * (docs/diagnostics/entropy.md#detrended-changepoint).
 *
 * @param values - The per-step values, `[S]`, finite everywhere.
 * @param steps - The training step of each value, `[S]`, finite, strictly increasing.
 * @param options - window, nPerm (default 999), alpha (default 0.05) and the seeded rng.
 * @param where - The public function and arguments named in errors.
 *   @defaultValue seriesTrend, values, steps
 * @returns The trend, its test and the detrended changepoint test (see {@link SeriesTrend}).
 * @throws {ShapeError} E_SHAPE when values or steps is not a 1-D array of numbers, or their
 *   lengths differ.
 * @throws {NonFiniteError} E_NONFINITE when a value or a step is NaN or infinite.
 * @throws {ConfigError} E_CONFIG when steps is not strictly increasing, or the options break the
 *   rules of {@link trendTest} (window in [2, min(S, MAX_THEIL_SEN_POINTS)], nPerm ≤
 *   MAX_PERMUTATIONS with nPerm·window ≤ MAX_PERMUTATION_WORK, alpha in (0, 1),
 *   ⌊alpha·(nPerm + 1)⌋ ≥ 1, rng an Rng).
 * @throws {OverflowError} E_OVERFLOW when the slope, intercept, statistic or threshold exceeds
 *   float64 (the tests run on the window rescaled by powers of two).
 * @derivation docs/diagnostics/entropy.md#detrended-changepoint
 * @enforcedBy test/diagnostics/trend.test.ts > seriesTrend > golden: a steady linear decline is a significant trend and not a changepoint
 * @enforcedBy test/diagnostics/trend.test.ts > seriesTrend > golden: the demo's drop after step 139 is found in a run dumped every step and every 10 steps
 * @enforcedBy test/diagnostics/trend.test.ts > seriesTrend > property: the changepoint decision is invariant to an added line in the steps
 * @enforcedBy test/diagnostics/trend.calibration.test.ts > seriesTrend > calibration: false-positive rate on linear drift is at most alpha within binomial error
 * @enforcedBy test/diagnostics/trend.test.ts > seriesTrend > rejects: steps of another length, non-finite or not increasing, and the trendTest options
 * @see W. Ploberger & W. Krämer (1992), Econometrica 60:271 (the OLS-residual CUSUM); D. Freedman & D. Lane (1983), J. Bus. Econ. Stat. 1:292
 * @since 0.1.0
 */
export function seriesTrend(
  values: VectorLike,
  steps: VectorLike,
  options: TrendOptions,
  where: { readonly fn: string; readonly arg: string; readonly steps?: string } = {
    fn: "seriesTrend",
    arg: "values",
  },
): SeriesTrend {
  const { fn, arg } = where;
  const x = toVector(fn, arg, values);
  checkFiniteAll(fn, arg, x);
  const sv = checkSteps(fn, where.steps ?? "steps", steps, x.length);
  const S = x.length;
  const { window, nPerm, alpha, m, rng } = checkTrendOptions(fn, arg, S, options);
  const lo = S - window;
  const { y, s, e: eX } = scaled(x.subarray(lo));
  const { t, e: eT } = scaledSteps(sv.subarray(lo));
  const b = theilSen(y, t);
  const why = "the exact value exceeds float64";
  const slope = finiteOr(fn, "slope", unscaleSlope(b, s, eX, eT), undefined, why);
  const intercept = interceptOf(fn, y, s, b, t);
  const mk = mannKendallOf(y);
  const cp = detrendedChangepoint(y, t, nPerm, m, rng);
  // Decided on the scaled window: stat and threshold scale by the same power of two.
  const changepointIndex = cp.stat > cp.threshold ? lo + cp.argmax : null;
  return {
    window,
    slope,
    intercept,
    mannKendall: mk,
    trendSignificant: mk.pValue <= alpha,
    changepointIndex,
    changepointStep: changepointIndex === null ? null : (sv[changepointIndex] as number),
    cusumStat: finiteOr(fn, "cusumStat", cp.stat / s, undefined, why),
    threshold: finiteOr(fn, "threshold", cp.threshold / s, undefined, why),
    alpha,
    nPerm,
    detrended: true,
  };
}
