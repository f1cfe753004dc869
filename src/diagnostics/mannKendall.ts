/**
 * The Mann–Kendall test for a monotone trend of a per-step series: S = Σ_{i<j} sign(x_j − x_i),
 * its exact permutation null (ties included) for n ≤ 100 and the normal approximation with
 * continuity correction above (docs/diagnostics/entropy.md#mann-kendall).
 */
import { CompensatedSum } from "../core/sum.js";
import { checkSeries } from "./trend.js";

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
 * @enforcedBy test/diagnostics/mannKendall.test.ts > mannKendall > golden: s, variance and exact p-value of a four-point series
 * @enforcedBy test/diagnostics/mannKendall.test.ts > mannKendall > golden: ties shrink the variance and the exact null
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

/** {@link mannKendall} without the input checks. @internal */
export function mannKendallOf(x: ArrayLike<number>): MannKendallResult {
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
