/**
 * Enforces docs/derivations/kl.md#estimators: goldens and masking of klEstimate (spec §4.2), and
 * docs/derivations/kl.md#gradient-bias's variance claim (spec §4.6).
 */
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { klEstimate, NonFiniteError, toRows, UnknownNameError } from "../../src/index.js";

const softmax = (z: readonly number[]): number[] => {
  const m = Math.max(...z);
  const e = z.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
};

/** Mean and (population) variance of the samples, two-pass. */
function moments(x: Float64Array): { mean: number; variance: number } {
  let s = 0;
  for (const v of x) s += v;
  const mean = s / x.length;
  let q = 0;
  for (const v of x) q += (v - mean) * (v - mean);
  return { mean, variance: q / x.length };
}

const lp = [[-0.5, -1.5]];
const ref = [[-1.5, -1.0]];
const m = [[true, true]];

describe("klEstimate", () => {
  test("golden: the four estimators at delta = -1 and 0.5", () => {
    // δ = ref − lp = (−1.0, 0.5). k1 = −δ = (1, −0.5); k2 = δ²/2 = (0.5, 0.125) exactly;
    // k3 = expm1(δ) − δ = (e^−1 − 1 + 1, e^0.5 − 1 − 0.5) = (e^−1, e^0.5 − 1.5); abs = (1, 0.5).
    expect(toRows(klEstimate(lp, ref, "k1", { responseMask: m }))).toEqual([[1, -0.5]]);
    expect(toRows(klEstimate(lp, ref, "k2", { responseMask: m }))).toEqual([[0.5, 0.125]]);
    const k3 = toRows(klEstimate(lp, ref, "k3", { responseMask: m }))[0] as number[];
    expect(k3[0]).toBeCloseTo(Math.exp(-1), 15);
    expect(k3[1]).toBeCloseTo(Math.exp(0.5) - 1.5, 15);
    expect(toRows(klEstimate(lp, ref, "abs", { responseMask: m }))).toEqual([[1, 0.5]]);
  });

  test("mask invariance: non-finite junk at padding yields exact zeros", () => {
    for (const junk of [123, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const out = klEstimate([[-0.5, junk]], [[-1.5, junk]], "k3", {
        responseMask: [[true, false]],
      });
      expect(Object.is(out.data[1], 0)).toBe(true);
      expect(out.data[0]).toBeCloseTo(Math.exp(-1), 15);
    }
  });

  test("property: var(k3) < var(k1) for near-identical policies, exactly and on 200 000 draws", () => {
    // polgrad's setup (tests/test_kl.py::test_var_k3_below_var_k1_for_near_identical_policies):
    // π = softmax(0.3, −0.2, 0.5, 0, −0.4), ref = softmax of the same logits + 0.03·(1, −1, 0.5,
    // −0.5, 0). Then δ_y = log(ref_y/π_y) = 0.03·d_y − log Σ_j π_j e^{0.03·d_j}
    // ≈ (0.0251, −0.0349, 0.0101, −0.0199, −0.0049): k1 = −δ fluctuates at order 0.03 and
    // k3 = e^δ − 1 − δ ≈ δ²/2 at order 0.03². Both have mean KL(π‖ref) = 2.206e-4; by exact
    // enumeration Var_π[k1] = Σ π δ² − KL² = 4.424e-4 and Var_π[k3] = 3.805e-8 (ratio ≈ 1.2e4).
    const logits = [0.3, -0.2, 0.5, 0, -0.4];
    const pi = softmax(logits);
    const ref = softmax(logits.map((z, j) => z + 0.03 * ([1, -1, 0.5, -0.5, 0][j] as number)));
    const perArm = (kind: "k1" | "k3") =>
      klEstimate([pi.map(Math.log)], [ref.map(Math.log)], kind, {
        responseMask: [pi.map(() => true)],
      }).data;
    const exact = (k: Float64Array) => {
      const mean = pi.reduce((s, p, y) => s + p * (k[y] as number), 0);
      return pi.reduce((s, p, y) => s + p * ((k[y] as number) - mean) ** 2, 0);
    };
    const [k1, k3] = [perArm("k1"), perArm("k3")];
    expect(exact(k1)).toBeCloseTo(4.424e-4, 7);
    expect(exact(k3)).toBeCloseTo(3.805e-8, 11);
    expect(exact(k3)).toBeLessThan(exact(k1));
    // Monte Carlo as polgrad checks it: n = 200 000 tokens y ~ π (inverse CDF on a seeded
    // stream), each a [1] row of klEstimate; the sample variances keep the order, each within
    // 5 % of its exact value (relative standard errors √((κ − 1)/n) ≈ 0.2 % and 0.3 %, κ the
    // kurtosis 1.78 and 2.52).
    const n = 200_000;
    const rng = createRng(0);
    const lp = new Float64Array(n);
    const lq = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let u = rng.uniform();
      let y = 0;
      while (y < pi.length - 1 && u >= (pi[y] as number)) u -= pi[y++] as number;
      lp[i] = Math.log(pi[y] as number);
      lq[i] = Math.log(ref[y] as number);
    }
    const mask = { rows: n, cols: 1, data: new Uint8Array(n).fill(1) };
    const mc = (kind: "k1" | "k3") =>
      moments(
        klEstimate({ rows: n, cols: 1, data: lp }, { rows: n, cols: 1, data: lq }, kind, {
          responseMask: mask,
        }).data,
      );
    const [m1, m3] = [mc("k1"), mc("k3")];
    expect(m3.variance).toBeLessThan(m1.variance);
    expect(Math.abs(m1.variance / exact(k1) - 1)).toBeLessThan(0.05);
    expect(Math.abs(m3.variance / exact(k3) - 1)).toBeLessThan(0.05);
  });

  test("rejects: an unknown estimator and a non-finite response position", () => {
    expect(() => klEstimate(lp, ref, "k4" as "k1", { responseMask: m })).toThrow(UnknownNameError);
    expect(() => klEstimate([[Number.NaN, -1]], ref, "k1", { responseMask: m })).toThrow(
      NonFiniteError,
    );
  });
});
