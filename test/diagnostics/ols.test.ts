/** Enforces docs/diagnostics/length-bias.md#ols-with-hc3 and #the-normal-quantile. */
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { designDefect, normalQuantile, olsHc3 } from "../../src/diagnostics/ols.js";
import { ConfigError, NonFiniteError, ShapeError } from "../../src/index.js";
import { sandwich } from "./sandwich.js";

/** Run `f` and return what it throws (fails the test when it does not throw). */
function thrown(f: () => unknown): Error & { code?: string; arg?: string } {
  try {
    f();
  } catch (e) {
    return e as Error & { code?: string; arg?: string };
  }
  throw new Error("expected a throw");
}

/** Φ for |x| ≲ 2.5: ½ + ½·erf(x/√2), erf z = (2/√π) e^{−z²} Σ 2ⁿ z^{2n+1}/(1·3···(2n+1)) (no cancellation). */
function phiSeries(x: number): number {
  const z = x / Math.SQRT2;
  let term = z;
  let sum = z;
  for (let n = 1; n < 200; n++) {
    term *= (2 * z * z) / (2 * n + 1);
    sum += term;
  }
  return 0.5 + (Math.exp(-z * z) * sum) / Math.sqrt(Math.PI);
}

/** Φ for x ≤ −3: ½·erfc(−x/√2) with erfc z = e^{−z²}/√π · 1/(z + ½/(z + 1/(z + (3/2)/(z + …)))). */
function phiTail(x: number): number {
  const z = -x / Math.SQRT2;
  let f = z;
  for (let k = 300; k >= 1; k--) f = z + k / 2 / f;
  return (0.5 * Math.exp(-z * z)) / Math.sqrt(Math.PI) / f;
}

describe("normalQuantile", () => {
  test("golden: Φ⁻¹(0.975) = 1.959963984540054 to 1e-15", () => {
    // polgrad computes z once with scipy's ndtri: 1.959963984540054. The exact Φ⁻¹ of the double
    // 0.975 is 1.95996398454005385560…, whose nearest double is 1.9599639845400538; AS 241 returns
    // 1.9599639845400536 (1 ulp below), ndtri 1 ulp above. Both are within 4.5e-16 of each other.
    expect(Math.abs(normalQuantile(0.975) - 1.959963984540054)).toBeLessThanOrEqual(1e-15);
    expect(normalQuantile(0.5)).toBe(0);
  });

  test("property: Φ(Φ⁻¹(p)) = p through an independent series for Φ", () => {
    // Central and near-tail branches (p ∈ [0.02, 0.98]): series Φ, |Φ(Φ⁻¹(p)) − p| ≤ 1e-15.
    for (let k = 1; k <= 49; k++) {
      const p = k / 50;
      expect(Math.abs(phiSeries(normalQuantile(p)) - p), `p = ${p}`).toBeLessThanOrEqual(1e-15);
    }
    // Tails, both tail branches (r > 5 below p ≈ 1.4e-11). d ln Φ/dx ≈ |x| there, so an error of
    // δx = 2 ulp(x) ≤ 4ε|x| moves p by 4ε·x² relative, and e^{−x²/2} in phiTail adds ε·x²/2:
    // tolerance 8ε·max(1, x²) (8.0e-13 at p = 1e-100, x ≈ −21.3).
    for (const p of [1e-3, 1e-5, 1e-10, 1e-12, 1e-20, 1e-50, 1e-100, 1e-300]) {
      const x = normalQuantile(p);
      const rel = Math.abs(phiTail(x) - p) / p;
      expect(rel, `p = ${p}`).toBeLessThanOrEqual(8 * Number.EPSILON * Math.max(1, x * x));
    }
  });

  test("identity: Φ⁻¹(1 − p) = −Φ⁻¹(p) when 1 − p is exact", () => {
    for (const p of [0.25, 0.125, 0.0625, 0.03125, 2 ** -20]) {
      expect(normalQuantile(1 - p)).toBe(-normalQuantile(p));
    }
  });

  test("rejects: probabilities outside the open interval (0, 1)", () => {
    for (const p of [0, 1, -0.1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const e = thrown(() => normalQuantile(p));
      expect(e).toBeInstanceOf(ConfigError);
      expect([e.code, e.arg]).toEqual(["E_CONFIG", "p"]);
    }
  });
});

describe("olsHc3", () => {
  test("golden: x = [1, 2, 3], y = [1, 2, 4] gives slope 3/2 and hc3 se 1/√2", () => {
    // x̄ = 2, ȳ = 7/3, d = [−1, 0, 1], Sxx = 2, Sxy = (−1)(−4/3) + 1·(5/3) = 3 ⇒ β̂ = 3/2,
    // α̂ = 7/3 − 3 = −2/3; fitted −2/3 + 3x/2 = [5/6, 7/3, 23/6] ⇒ e = [1/6, −1/3, 1/6];
    // h = 1/3 + d²/2 = [5/6, 1/3, 5/6]; e/(1 − h) = [1, −1/2, 1] ⇒ ω = [1, 1/4, 1];
    // Var = (1·1 + ¼·0 + 1·1)/Sxx² = 2/4 = 1/2 ⇒ se = 1/√2.
    // Tolerance: 1 − h = 1/6 is formed by cancellation, so h's rounding (≤ ε/2·5/6) is 6× larger
    // relative to 1 − h; ω squares it: Var within 12·(ε/2) ≈ 1.3e-15 relative, se within half that.
    const f = olsHc3([1, 2, 3], [1, 2, 4]);
    const close = (a: number, b: number, tol = 1e-15) =>
      expect(Math.abs(a - b)).toBeLessThanOrEqual(tol);
    close(f.slope, 1.5);
    close(f.intercept, -2 / 3);
    [1 / 6, -1 / 3, 1 / 6].forEach((e, i) => close(f.residuals[i], e));
    [5 / 6, 1 / 3, 5 / 6].forEach((h, i) => close(f.leverage[i], h));
    close(f.slopeVariance, 0.5, 2e-15);
    close(f.slopeSe, Math.SQRT1_2, 2e-15);
    expect([f.n, f.meanX, f.sxx]).toEqual([3, 2, 2]);
  });

  test("identity: equals the plain matrix sandwich on seeded designs", () => {
    // 24 seeded designs: n ∈ [3, 60], integer x in 1..12 (rejecting degenerate draws), y = a + b·x
    // + heteroskedastic noise. Agreement to 1e-9 relative (the matrix path sums without
    // compensation and inverts XᵀX explicitly, so it carries O(κ·n·ε) rounding).
    const rng = createRng(4242);
    let cases = 0;
    while (cases < 24) {
      const n = rng.int(3, 60);
      const x = Array.from({ length: n }, () => rng.int(1, 12));
      if (designDefect(x) !== null) continue;
      const y = x.map((xi) => rng.uniformIn(-2, 2) + 0.3 * xi + rng.normal() * 0.1 * xi);
      const f = olsHc3(x, y);
      const m = sandwich(x, y);
      const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(1, Math.abs(b));
      expect(rel(f.slope, m.slope), `case ${cases}`).toBeLessThanOrEqual(1e-9);
      expect(rel(f.intercept, m.intercept), `case ${cases}`).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(f.slopeSe - m.se) / m.se, `case ${cases}`).toBeLessThanOrEqual(1e-9);
      cases++;
    }
  });

  test("property: scaling y by a power of two scales slope, intercept, residuals and se exactly", () => {
    const rng = createRng(7);
    const x = Array.from({ length: 40 }, () => rng.int(1, 9));
    const y = x.map(() => rng.uniformIn(-3, 3));
    const f = olsHc3(x, y);
    for (const s of [2, 0.25, 1024]) {
      const g = olsHc3(
        x,
        y.map((v) => s * v),
      );
      expect([g.slope, g.intercept, g.slopeSe]).toEqual([
        s * f.slope,
        s * f.intercept,
        s * f.slopeSe,
      ]);
      expect(Array.from(g.residuals)).toEqual(Array.from(f.residuals, (e) => s * e));
    }
  });

  test("rejects: fewer than 3 points, a constant regressor and a leverage-one point", () => {
    expect(designDefect([1, 2])).toBe("too-few");
    expect(designDefect([5, 5, 5])).toBe("constant");
    expect(designDefect([1, 1, 2])).toBe("leverage-one");
    expect(designDefect([1, 2, 2, 2, 2])).toBe("leverage-one");
    expect(designDefect([1, 1, 2, 2])).toBeNull();
    expect(designDefect([1, 2, 3])).toBeNull();
    for (const x of [
      [1, 2],
      [5, 5, 5],
      [1, 1, 2],
    ]) {
      const e = thrown(() => olsHc3(x, x));
      expect(e).toBeInstanceOf(ShapeError);
      expect([e.code, e.arg]).toEqual(["E_SHAPE", "x"]);
    }
    const len = thrown(() => olsHc3([1, 2, 3], [1, 2]));
    expect([len.code, len.arg]).toEqual(["E_SHAPE", "y"]);
    const nan = thrown(() => olsHc3([1, 2, 3], [1, Number.NaN, 2]));
    expect(nan).toBeInstanceOf(NonFiniteError);
    expect([nan.code, nan.arg]).toEqual(["E_NONFINITE", "y"]);
    const inf = thrown(() => olsHc3([1, Number.POSITIVE_INFINITY, 3], [1, 2, 3]));
    expect([inf.code, inf.arg]).toEqual(["E_NONFINITE", "x"]);
  });
});
