/**
 * The trend of a per-step series and a changepoint beyond it (docs/diagnostics/entropy.md#detrended-changepoint):
 * the Theil–Sen slope per training step with its Mann–Kendall test, and the CUSUM of the
 * residuals after a least-squares line, against permutations of the residuals refitted each
 * time, so that a steady linear trend is a trend and not a changepoint.
 */
import { finiteOr } from "../core/finite.js";
import type { Rng } from "../core/rng.js";
import { CompensatedSum, fsum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { checkFiniteAll, toVector } from "../core/validate.js";
import { type MannKendallResult, mannKendallOf } from "./mannKendall.js";
import {
  checkSteps,
  checkTrendOptions,
  interceptOf,
  scaled,
  scaledSteps,
  shuffledIdentity,
  type TrendOptions,
  theilSen,
  unscaleSlope,
} from "./trend.js";

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
    shuffledIdentity(order, rng);
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
 * with Gaussian and Student-t₃ noise, windows 20–200, dense and sparse steps; above it (0.069)
 * only for Cauchy noise at window 20 (docs/diagnostics/entropy.md#calibration-of-the-trend-tests).
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
 * @enforcedBy test/diagnostics/seriesTrend.test.ts > seriesTrend > golden: a steady linear decline is a significant trend and not a changepoint
 * @enforcedBy test/diagnostics/seriesTrend.test.ts > seriesTrend > golden: the demo's drop after step 139 is found in a run dumped every step and every 10 steps
 * @enforcedBy test/diagnostics/seriesTrend.test.ts > seriesTrend > property: the changepoint decision is invariant to an added line in the steps
 * @enforcedBy test/diagnostics/trend.calibration.test.ts > seriesTrend > calibration: false-positive rate on linear drift is at most alpha within binomial error
 * @enforcedBy test/diagnostics/seriesTrend.test.ts > seriesTrend > rejects: steps of another length, non-finite or not increasing, and the trendTest options
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
