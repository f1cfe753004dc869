/**
 * Enforces docs/derivations/kl.md#gradient-bias: exact enumeration on a tabular softmax
 * π = softmax(θ) against q = ref (spec §4.6). The per-sample estimator gradient w.r.t. θ is
 * k'(lp_y)·(e_y − π) (score of a softmax), with k'(lp_y) read from klLoss's closed-form gradient
 * for one token of weight 1; expectations are sums over y weighted by π_y.
 */
import { describe, expect, test } from "vitest";
import { type KLEstimator, klEstimate, klLoss } from "../../src/index.js";

const pi = [0.4, 0.3, 0.2, 0.1];
const q = [0.1, 0.2, 0.3, 0.4];
const KL = pi.reduce((s, p, j) => s + p * Math.log(p / q[j]!), 0);

function expectedValue(kind: KLEstimator): number {
  return pi.reduce(
    (s, p, y) =>
      s +
      p *
        klEstimate([[Math.log(p)]], [[Math.log(q[y]!)]], kind, { responseMask: [[true]] }).data[0]!,
    0,
  );
}

function expectedGradTheta(kind: KLEstimator): number[] {
  const g = [0, 0, 0, 0];
  pi.forEach((p, y) => {
    const d = klLoss([[Math.log(p)]], [[Math.log(q[y]!)]], kind, "token_mean", {
      responseMask: [[true]],
    }).gradLogprobs.data[0]!;
    for (let j = 0; j < 4; j++) g[j]! += p * d * ((j === y ? 1 : 0) - pi[j]!);
  });
  return g;
}

describe("klLoss gradient bias", () => {
  test("golden: e[k1] and e[k3] equal kl exactly while k2 is biased upward", () => {
    // KL(π‖q) = Σ π log(π/q) = 0.4564; E[k2] = ½Σ π (log π/q)² = 0.5216 (bias +0.0651).
    expect(KL).toBeCloseTo(0.4564, 4);
    expect(expectedValue("k1")).toBeCloseTo(KL, 14);
    expect(expectedValue("k3")).toBeCloseTo(KL, 14);
    expect(expectedValue("k2")).toBeCloseTo(0.5216, 4);
    expect(expectedValue("k2") - KL).toBeGreaterThan(0.05);
  });

  test("golden: k2's expected gradient is the kl gradient, k1's is zero, k3's is pi minus q", () => {
    // ∇_θ KL = π_j (log(π_j/q_j) − KL) = (0.3719, −0.0153, −0.1724, −0.1843).
    const gradKL = pi.map((p, j) => p * (Math.log(p / q[j]!) - KL));
    expectedGradTheta("k2").forEach((g, j) => expect(g).toBeCloseTo(gradKL[j]!, 12));
    expectedGradTheta("k1").forEach((g) => expect(Math.abs(g)).toBeLessThan(1e-12));
    // E[∇k3] = Σ_y π_y (1 − q_y/π_y)(e_y − π) = π − q = (0.3, 0.1, −0.1, −0.3): every component is
    // more than 0.05 away from ∇KL, and component 2 flips sign.
    const g3 = expectedGradTheta("k3");
    g3.forEach((g, j) => expect(g).toBeCloseTo(pi[j]! - q[j]!, 12));
    g3.forEach((g, j) => expect(Math.abs(g - gradKL[j]!)).toBeGreaterThan(0.05));
    expect(Math.sign(g3[1]!)).not.toBe(Math.sign(gradKL[1]!));
  });
});
