/**
 * The three tests the detectors on logged scalars are built from (docs/diagnostics/log-detectors.md#tests):
 * a level shift beyond the series' linear trend (the detrended CUSUM of seriesTrend with its
 * permutation null, plus the shift's size), a level above a bound (a one-sided t-test on the last
 * window), and spikes above a running median (a robust z-score with a Bonferroni bound over the
 * points). Each returns what it measured and whether it rejects at the level it was given; the
 * caller decides the level (the run's family of tests shares α) and the effect size.
 */
import { createRng } from "../../core/rng.js";
import { normalTwoSided } from "../mannKendall.js";
import { normalQuantile } from "../ols.js";
import { seriesTrend } from "../seriesTrend.js";

/** Points a series is reduced to before the tests: block means beyond it (Theil–Sen is O(n²)). */
export const MAX_TEST_POINTS = 512;
/** Fewest points a shift or spike test runs on. */
export const MIN_TEST_POINTS = 20;

/** A series reduced to at most {@link MAX_TEST_POINTS} points: block means, each at its block's last step. */
export interface Reduced {
  readonly steps: Float64Array;
  readonly values: Float64Array;
  /** Points per block (1: the series as logged). */
  readonly block: number;
}

/**
 * The finite points of a series, in block means of `block` = ⌈n / MAX_TEST_POINTS⌉ consecutive
 * points (the last block may be shorter), each at its block's last step.
 */
export function reduceSeries(steps: ArrayLike<number>, values: ArrayLike<number>): Reduced {
  const s: number[] = [];
  const v: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const x = values[i] as number;
    if (Number.isFinite(x)) {
      s.push(steps[i] as number);
      v.push(x);
    }
  }
  const block = Math.max(1, Math.ceil(s.length / MAX_TEST_POINTS));
  if (block === 1) return { steps: Float64Array.from(s), values: Float64Array.from(v), block };
  const k = Math.ceil(s.length / block);
  const rs = new Float64Array(k);
  const rv = new Float64Array(k);
  for (let j = 0; j < k; j++) {
    const lo = j * block;
    const hi = Math.min(s.length, lo + block);
    let sum = 0;
    for (let i = lo; i < hi; i++) sum += v[i] as number;
    rv[j] = sum / (hi - lo);
    rs[j] = s[hi - 1] as number;
  }
  return { steps: rs, values: rv, block };
}

/** What {@link shiftTest} measured. */
export interface ShiftResult {
  /** The last step before the shift, where the detrended CUSUM rejects; else null. */
  readonly step: number | null;
  /** The shift δ̂ of the line-plus-step fit at that step (after − before); null without a step. */
  readonly shift: number | null;
  /** The fitted line's level at the step, before the shift (null without a step). */
  readonly before: number | null;
  /** The linear trend per step (Theil–Sen) and its Mann–Kendall p-value. */
  readonly slope: number;
  readonly trendP: number;
}

/**
 * A level shift beyond the linear trend: seriesTrend's detrended CUSUM over the whole (reduced)
 * series at level `alpha` with `nPerm` permutations; where it rejects at index k, the shift is
 * the least-squares δ̂ of y = a + b·s + δ·[i > k] and `before` is a + b·s_k.
 */
export function shiftTest(r: Reduced, alpha: number, nPerm: number, seed: number): ShiftResult {
  const n = r.values.length;
  const tr = seriesTrend(r.values, r.steps, { window: n, nPerm, alpha, rng: createRng(seed) });
  const k = tr.changepointIndex;
  if (k === null || k >= n - 1)
    return {
      step: null,
      shift: null,
      before: null,
      slope: tr.slope,
      trendP: tr.mannKendall.pValue,
    };
  const fit = lineWithStep(r.steps, r.values, k);
  return {
    step: tr.changepointStep,
    shift: fit.delta,
    before: fit.a + fit.b * (r.steps[k] as number),
    slope: tr.slope,
    trendP: tr.mannKendall.pValue,
  };
}

/**
 * Least squares of y on [1, s, d] with d_i = [i > k], by the normal equations on centred columns
 * (s centred, d centred): returns a, b and δ.
 */
function lineWithStep(
  s: Float64Array,
  y: Float64Array,
  k: number,
): { a: number; b: number; delta: number } {
  const n = y.length;
  let ms = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    ms += s[i] as number;
    my += y[i] as number;
  }
  ms /= n;
  my /= n;
  const md = (n - 1 - k) / n;
  let sss = 0;
  let sdd = 0;
  let ssd = 0;
  let ssy = 0;
  let sdy = 0;
  for (let i = 0; i < n; i++) {
    const cs = (s[i] as number) - ms;
    const cd = (i > k ? 1 : 0) - md;
    const cy = (y[i] as number) - my;
    sss += cs * cs;
    sdd += cd * cd;
    ssd += cs * cd;
    ssy += cs * cy;
    sdy += cd * cy;
  }
  const det = sss * sdd - ssd * ssd;
  const b = det === 0 ? 0 : (ssy * sdd - sdy * ssd) / det;
  const delta = det === 0 ? 0 : (sdy * sss - ssy * ssd) / det;
  const a = my - b * ms - delta * md;
  return { a, b, delta };
}

/** What {@link levelTest} measured. */
export interface LevelResult {
  /** The mean of the last window. */
  readonly mean: number;
  /** Points in the window. */
  readonly window: number;
  /** The one-sided p-value of mean > bound (Student t, normal approximation beyond 30 points). */
  readonly p: number;
  /** The window's first step. */
  readonly from: number;
}

/**
 * Whether the last window (a fifth of the series, at least 10 points, at most all) sits above
 * `bound`: z = (mean − bound)/(sd/√w), the one-sided p from the normal tail, with the variance
 * inflated by (w − 1)/(w − 3) below 30 points (the Student t's variance), a conservative stand-in
 * for its heavier tail.
 */
export function levelTest(r: Reduced, bound: number): LevelResult {
  const n = r.values.length;
  const w = Math.min(n, Math.max(10, Math.ceil(n / 5)));
  const lo = n - w;
  let mean = 0;
  for (let i = lo; i < n; i++) mean += r.values[i] as number;
  mean /= w;
  let ss = 0;
  for (let i = lo; i < n; i++) ss += ((r.values[i] as number) - mean) ** 2;
  const sd = w > 1 ? Math.sqrt(ss / (w - 1)) : 0;
  let p: number;
  if (sd === 0) p = mean > bound ? 0 : 1;
  else {
    const inflate = w > 3 && w < 30 ? Math.sqrt((w - 1) / (w - 3)) : 1;
    const z = (mean - bound) / ((sd / Math.sqrt(w)) * inflate);
    const tail = normalTwoSided(z) / 2;
    p = z >= 0 ? tail : 1 - tail;
  }
  return { mean, window: w, p, from: r.steps[lo] as number };
}

/** What {@link spikeTest} found. */
export interface SpikeResult {
  /** The first step whose value is a spike, else null. */
  readonly step: number | null;
  /** value / running median there. */
  readonly ratio: number | null;
  /** How many points were spikes. */
  readonly count: number;
}

/**
 * Spikes of a positive series (a gradient norm): on log values, the residual from the running
 * median of the 21 points centred on each (fewer at the ends), scaled by 1.4826·MAD of all the
 * residuals; a point is a spike when its robust z exceeds Φ⁻¹(1 − α/n) (a Bonferroni bound over
 * the n points) and its value is at least `minRatio` times its running median.
 */
export function spikeTest(r: Reduced, alpha: number, minRatio: number): SpikeResult {
  const n = r.values.length;
  const logs = Float64Array.from(r.values, (v) => (v > 0 ? Math.log(v) : Number.NaN));
  const med = new Float64Array(n);
  const resid = new Float64Array(n);
  const win: number[] = [];
  for (let i = 0; i < n; i++) {
    win.length = 0;
    for (let j = Math.max(0, i - 10); j <= Math.min(n - 1, i + 10); j++) {
      const x = logs[j] as number;
      if (!Number.isNaN(x)) win.push(x);
    }
    med[i] = win.length === 0 ? Number.NaN : medianOf(win);
    resid[i] = (logs[i] as number) - (med[i] as number);
  }
  const finite = Array.from(resid).filter((x) => Number.isFinite(x));
  const mad = 1.4826 * medianOf(finite.map((x) => Math.abs(x - medianOf(finite))));
  const zc = normalQuantile(1 - alpha / Math.max(1, n));
  let first: number | null = null;
  let ratio: number | null = null;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const e = resid[i] as number;
    if (!Number.isFinite(e) || !(mad > 0)) continue;
    const rr = Math.exp(e);
    if (e / mad > zc && rr >= minRatio) {
      count++;
      if (first === null) {
        first = r.steps[i] as number;
        ratio = rr;
      }
    }
  }
  return { step: first, ratio, count };
}

function medianOf(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) >> 1;
  return s.length % 2 === 1 ? (s[h] as number) : 0.5 * ((s[h] as number) + (s[h + 1] as number));
}
