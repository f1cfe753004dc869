/**
 * Simple linear regression y = α + β·x by ordinary least squares, with the HC3
 * heteroskedasticity-consistent standard error of the slope, and the standard normal quantile
 * that turns it into a confidence interval (docs/diagnostics/length-bias.md#ols-with-hc3).
 *
 * Written from the closed forms: with one regressor the 2×2 sandwich (XᵀX)⁻¹Xᵀ diag(ω) X(XᵀX)⁻¹
 * has a scalar slope entry, so no matrix code is needed. Every sum is a compensated sum in index
 * order (docs/conventions.md#summation).
 */

import { fmtValue, safeText } from "../core/message.js";
import { checkFiniteReport, checkSample } from "../core/quantile.js";
import { maxAbsOf, mulPow2, pow2Exponent } from "../core/scale.js";
import { CompensatedSum } from "../core/sum.js";
import { ConfigError, fail, NonFiniteError, ShapeError } from "../errors.js";

/** Why a regressor cannot carry an HC3 slope, or null when it can. */
export type DesignDefect = "too-few" | "constant" | "leverage-one";

/**
 * Classify the design of a simple regression on `x` with exact comparisons: fewer than 3 points
 * (no residual degree of freedom once two parameters are fitted, since n − 2 < 1), every x equal
 * (Sxx = 0), or exactly two distinct values with one of them held by a single point — that point
 * has leverage h = 1/n + (n − 1)/n = 1, so its HC3 weight e/(1 − h) is 0/0.
 *
 * With three or more distinct values, or two values each held by ≥ 2 points, every h < 1.
 *
 * @param x - The regressor values.
 * @returns The defect, or null for a design on which {@link olsHc3} is defined.
 * @derivation docs/diagnostics/length-bias.md#degenerate-designs
 * @enforcedBy test/diagnostics/ols.test.ts > olsHc3 > rejects: fewer than 3 points, a constant regressor and a leverage-one point
 * @since 0.1.0
 */
export function designDefect(x: ArrayLike<number>): DesignDefect | null {
  checkSample("designDefect", "x", x);
  const n = x.length;
  if (n < 3) return "too-few";
  const counts = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const v = x[i] as number;
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  if (counts.size === 1) return "constant";
  if (counts.size === 2 && [...counts.values()].includes(1)) return "leverage-one";
  return null;
}

/** The fit of {@link olsHc3}: plain readonly data. */
export interface OlsHc3Fit {
  /** The number of points n. */
  readonly n: number;
  /** x̄ = Σx/n. */
  readonly meanX: number;
  /** ȳ = Σy/n. */
  readonly meanY: number;
  /** Sxx = Σ(x − x̄)². */
  readonly sxx: number;
  /** β̂ = Σ(x − x̄)(y − ȳ)/Sxx. */
  readonly slope: number;
  /** α̂ = ȳ − β̂·x̄. */
  readonly intercept: number;
  /** The residuals e_i = (y_i − ȳ) − β̂·(x_i − x̄) `[n]`. */
  readonly residuals: Float64Array;
  /** The leverages h_i = 1/n + (x_i − x̄)²/Sxx `[n]`, each in (0, 1). */
  readonly leverage: Float64Array;
  /** The HC3 variance of β̂: Σ ω_i (x_i − x̄)² / Sxx², ω_i = (e_i/(1 − h_i))². */
  readonly slopeVariance: number;
  /** √slopeVariance. */
  readonly slopeSe: number;
}

/**
 * Fit y = α + β·x by OLS and return the slope's HC3 (MacKinnon–White 1985) robust standard error.
 *
 * Formula: d_i = x_i − x̄; β̂ = Σ d_i (y_i − ȳ) / Sxx; α̂ = ȳ − β̂·x̄; e_i = (y_i − ȳ) − β̂·d_i;
 * h_i = 1/n + d_i²/Sxx; Var_HC3(β̂) = Σ (e_i/(1 − h_i))² d_i² / Sxx² — the slope entry of the sandwich
 * (XᵀX)⁻¹Xᵀ diag(ω) X(XᵀX)⁻¹ with ω_i = (e_i/(1 − h_i))².
 * Null distribution: with independent errors of any (finite) variances, β̂/se is asymptotically
 * N(0, 1) under β = 0; HC3's jackknife-like inflation keeps small-n coverage close to nominal.
 * Scaling y by a power of two scales β̂, α̂, e and se by the same power exactly.
 *
 * @param x - The regressor `[n]`, finite, with a design accepted by {@link designDefect}.
 * @param y - The response `[n]`, finite.
 * @returns The fit (fresh arrays).
 * @throws {ShapeError} E_SHAPE when the lengths differ or the design is degenerate (n < 3, x
 *   constant, or a leverage-one point: the design matrix [1, x] leaves no HC3 slope).
 * @throws {NonFiniteError} E_NONFINITE when x or y holds NaN or ±Inf.
 * @throws {OverflowError} E_OVERFLOW when a field of the fit exceeds float64 (e.g. slopeVariance =
 *   se² past se ≈ 1.3e154); the fit itself runs on x and y rescaled by powers of two.
 * @derivation docs/diagnostics/length-bias.md#ols-with-hc3
 * @enforcedBy test/diagnostics/ols.test.ts > olsHc3 > golden: x = [1, 2, 3], y = [1, 2, 4] gives slope 3/2 and hc3 se 1/√2
 * @enforcedBy test/diagnostics/ols.test.ts > olsHc3 > identity: equals the plain matrix sandwich on seeded designs
 * @since 0.1.0
 */
export function olsHc3(x: ArrayLike<number>, y: ArrayLike<number>): OlsHc3Fit {
  const fn = "olsHc3";
  checkOlsInputs(fn, x, y);
  const { fit: f, ex, ey } = olsHc3Scaled(x, y);
  // Back to the original units: x' = x·2^ex and y' = y·2^ey scale β̂ by 2^(ey − ex), α̂ and e by
  // 2^ey, x̄ by 2^ex, Sxx by 2^(2·ex); leverages are scale-free.
  return checkFiniteReport(fn, {
    n: f.n,
    meanX: mulPow2(f.meanX, -ex),
    meanY: mulPow2(f.meanY, -ey),
    sxx: mulPow2(f.sxx, -2 * ex),
    slope: mulPow2(f.slope, ex - ey),
    intercept: mulPow2(f.intercept, -ey),
    residuals: f.residuals.map((e) => mulPow2(e, -ey)),
    leverage: f.leverage,
    slopeVariance: mulPow2(f.slopeVariance, 2 * (ex - ey)),
    slopeSe: mulPow2(f.slopeSe, ex - ey),
  });
}

/**
 * Validate the inputs of {@link olsHc3}: 1-D numbers of equal length, finite, a non-degenerate design.
 * @internal
 */
export function checkOlsInputs(fn: string, x: unknown, y: unknown): void {
  const xs = checkSample(fn, "x", x);
  const ys = checkSample(fn, "y", y);
  const n = xs.length;
  if (ys.length !== n) {
    throw fail(ShapeError, fn, "y", `of length ${n} (the length of x)`, `${ys.length}`);
  }
  for (const [arg, v] of [
    ["x", xs],
    ["y", ys],
  ] as const) {
    for (let i = 0; i < n; i++) {
      if (!Number.isFinite(v[i] as number)) {
        throw fail(NonFiniteError, fn, arg, "finite", `${v[i]} at index ${i}`);
      }
    }
  }
  const defect = designDefect(xs);
  if (defect !== null) {
    const rule = {
      "too-few": "of length >= 3 (two fitted parameters leave n − 2 residual degrees of freedom)",
      constant: "non-constant (the slope is undefined when Sxx = 0)",
      "leverage-one":
        "free of a point whose x value no other point shares when x takes exactly two values (leverage h = 1 leaves HC3 undefined)",
    }[defect];
    throw fail(
      ShapeError,
      fn,
      "x",
      rule,
      safeText(`[${Array.from(xs).slice(0, 20).join(", ")}${xs.length > 20 ? ", …" : ""}]`),
    );
  }
}

/**
 * The HC3 fit on x·2^ex and y·2^ey, with 2^ex, 2^ey the power-of-two scales of max |x| and max |y|
 * (1 on moderate data, where the fit is bitwise the plain one): no sum, product or square of the
 * closed forms overflows. Unchecked kernel: inputs validated by {@link checkOlsInputs}.
 * @internal
 */
export function olsHc3Scaled(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
): { fit: OlsHc3Fit; ex: number; ey: number } {
  const ex = pow2Exponent(maxAbsOf(x));
  const ey = pow2Exponent(maxAbsOf(y));
  const sx = 2 ** ex;
  const sy = 2 ** ey;
  const xs = Float64Array.from(x, (v) => v * sx);
  const ys = Float64Array.from(y, (v) => v * sy);
  return { fit: fitCore(xs, ys), ex, ey };
}

/** The closed forms of {@link olsHc3} on validated, moderate data. */
function fitCore(x: Float64Array, y: Float64Array): OlsHc3Fit {
  const n = x.length;
  const sx = new CompensatedSum();
  const sy = new CompensatedSum();
  for (let i = 0; i < n; i++) {
    sx.add(x[i] as number);
    sy.add(y[i] as number);
  }
  const meanX = sx.value() / n;
  const meanY = sy.value() / n;
  const d = new Float64Array(n);
  const sxxAcc = new CompensatedSum();
  const sxyAcc = new CompensatedSum();
  for (let i = 0; i < n; i++) {
    const di = (x[i] as number) - meanX;
    d[i] = di;
    sxxAcc.add(di * di);
    sxyAcc.add(di * ((y[i] as number) - meanY));
  }
  const sxx = sxxAcc.value();
  const slope = sxyAcc.value() / sxx;
  const intercept = meanY - slope * meanX;
  const residuals = new Float64Array(n);
  const leverage = new Float64Array(n);
  const meat = new CompensatedSum();
  for (let i = 0; i < n; i++) {
    const di = d[i] as number;
    const e = (y[i] as number) - meanY - slope * di;
    const h = 1 / n + (di * di) / sxx;
    residuals[i] = e;
    leverage[i] = h;
    const u = e / (1 - h);
    meat.add(u * u * (di * di));
  }
  const slopeVariance = meat.value() / (sxx * sxx);
  return {
    n,
    meanX,
    meanY,
    sxx,
    slope,
    intercept,
    residuals,
    leverage,
    slopeVariance,
    slopeSe: Math.sqrt(slopeVariance),
  };
}

// Wichura's AS 241 (PPND16; Applied Statistics 37(3), 1988, 477–484): rational approximations of
// Φ⁻¹ in three regions, accurate to about 1 part in 1e16. Coefficients lowest order first (each
// published 20-digit value written as the double it rounds to); every denominator has a leading 1.
const CENTRAL_NUM = [
  3.3871328727963665, 133.14166789178438, 1971.5909503065513, 13731.69376550946, 45921.95393154987,
  67265.7709270087, 33430.57558358813, 2509.0809287301227,
];
const CENTRAL_DEN = [
  1, 42.31333070160091, 687.1870074920579, 5394.196021424751, 21213.794301586597, 39307.89580009271,
  28729.085735721943, 5226.495278852854,
];
const NEAR_NUM = [
  1.4234371107496835, 4.630337846156546, 5.769497221460691, 3.6478483247632045, 1.2704582524523684,
  0.2417807251774506, 0.022723844989269184, 0.0007745450142783414,
];
const NEAR_DEN = [
  1, 2.053191626637759, 1.6763848301838038, 0.6897673349851, 0.14810397642748008,
  0.015198666563616457, 0.0005475938084995345, 1.0507500716444169e-9,
];
const FAR_NUM = [
  6.657904643501103, 5.463784911164114, 1.7848265399172913, 0.29656057182850487,
  0.026532189526576124, 0.0012426609473880784, 2.7115555687434876e-5, 2.0103343992922881e-7,
];
const FAR_DEN = [
  1, 0.599832206555888, 0.1369298809227358, 0.014875361290850615, 0.0007868691311456133,
  1.8463183175100548e-5, 1.421511758316446e-7, 2.0442631033899397e-15,
];

function horner(c: readonly number[], r: number): number {
  let acc = 0;
  for (let k = c.length - 1; k >= 0; k--) acc = acc * r + (c[k] as number);
  return acc;
}

/**
 * Return the standard normal quantile Φ⁻¹(p) (Wichura's AS 241, relative error ≈ 1e-16).
 *
 * Formula: q = p − ½; |q| ≤ 0.425: Φ⁻¹ = q·P₁(r)/Q₁(r), r = 0.180625 − q²; otherwise with
 * r = √(−ln min(p, 1 − p)): r ≤ 5 ⇒ P₂(r − 1.6)/Q₂(r − 1.6), else P₃(r − 5)/Q₃(r − 5), signed as q.
 *
 * @param p - A probability in the open interval (0, 1).
 * @returns z with Φ(z) = p; Φ⁻¹(0.975) = 1.959963984540054.
 * @throws {ConfigError} E_CONFIG when p is not a number strictly between 0 and 1.
 * @derivation docs/diagnostics/length-bias.md#the-normal-quantile
 * @enforcedBy test/diagnostics/ols.test.ts > normalQuantile > golden: Φ⁻¹(0.975) = 1.959963984540054 to 1e-15
 * @enforcedBy test/diagnostics/ols.test.ts > normalQuantile > property: Φ(Φ⁻¹(p)) = p through an independent series for Φ
 * @since 0.1.0
 */
export function normalQuantile(p: number): number {
  if (typeof p !== "number" || !(p > 0 && p < 1)) {
    throw fail(
      ConfigError,
      "normalQuantile",
      "p",
      "a probability strictly between 0 and 1",
      fmtValue(p),
    );
  }
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (q * horner(CENTRAL_NUM, r)) / horner(CENTRAL_DEN, r);
  }
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
  let z: number;
  if (r <= 5) {
    r -= 1.6;
    z = horner(NEAR_NUM, r) / horner(NEAR_DEN, r);
  } else {
    r -= 5;
    z = horner(FAR_NUM, r) / horner(FAR_DEN, r);
  }
  return q < 0 ? -z : z;
}
