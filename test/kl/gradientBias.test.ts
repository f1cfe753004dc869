/**
 * Enforces docs/derivations/kl.md#gradient-bias: exact enumeration on a tabular softmax
 * π = softmax(θ) against q = ref (spec §4.6). The per-sample estimator gradient w.r.t. θ is
 * k'(lp_y)·(e_y − π) (score of a softmax), with k'(lp_y) read from klLoss's closed-form gradient
 * for one token of weight 1; expectations are sums over y weighted by π_y.
 */
import { describe, expect, test } from "vitest";
import {
  KL_ESTIMATORS,
  type KLEstimator,
  type KLLossConfig,
  klEstimate,
  klLoss,
  policyLoss,
} from "../../src/index.js";

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

/**
 * One token's KL term as policyLoss computes it (pg with A = 0: the objective and its gradient are
 * 0; token_sum: weight 1): the value coef·k′ and ∂/∂lp, at lp = log π_y sampled from the policy
 * whose log-prob is `old` (old = lp on-policy).
 */
function klTerm(kl: KLLossConfig, lp: number, old: number, ref: number): { v: number; d: number } {
  const r = policyLoss(
    { ratio: "token", surrogate: "pg", clip: null, aggregation: "token_sum", kl },
    {
      logprobs: [[lp]],
      oldLogprobs: [[old]],
      advantages: [0],
      responseMask: [[true]],
      refLogprobs: [[ref]],
    },
  );
  return { v: r.klLoss as number, d: r.gradLogprobs.data[0]! };
}

/** E over y ~ mu of the term's value and of its θ-gradient d_y·(e_y − π). */
function expectedTerm(kl: KLLossConfig, mu: readonly number[]): { value: number; grad: number[] } {
  const grad = [0, 0, 0, 0];
  let value = 0;
  mu.forEach((m, y) => {
    const t = klTerm(kl, Math.log(pi[y]!), Math.log(m), Math.log(q[y]!));
    value += m * t.v;
    for (let j = 0; j < 4; j++) grad[j]! += m * t.d * ((j === y ? 1 : 0) - pi[j]!);
  });
  return { value, grad };
}

describe("gradient bias of the generalised KL forms", () => {
  const gradKL = pi.map((p, j) => p * (Math.log(p / q[j]!) - KL));

  test("golden: the straight-through forms keep their estimator's value and take the unbiased gradient of k2", () => {
    // kX+: value k(δ), gradient of ½δ²: E[value] is E[kX] (KL for k1 and k3), E[∇] = ∇KL for every X.
    for (const kind of KL_ESTIMATORS) {
      const e = expectedTerm({ kind, coef: 1, gradient: "straight_through" }, pi);
      e.grad.forEach((g, j) => expect(g, kind).toBeCloseTo(gradKL[j]!, 12));
      expect(e.value, kind).toBeCloseTo(expectedValue(kind), 14);
    }
  });

  test("golden: a binding delta clamp biases k3's value and gradient (clamp 1: only arms 1 and 2 pass gradient)", () => {
    // δ_y = log q_y − log π_y = (−1.386, −0.405, 0.405, 1.386): |δ| > 1 at arms 0 and 3, where the
    // clamp passes no gradient. E[∇k3′] = Σ_{y = 1, 2} π_y(1 − q_y/π_y)(e_y − π) = 0.1·(e_1 − e_2)
    // = (0, 0.1, −0.1, 0); E[k3′] = Σ π_y k3(clamp(δ_y, ±1)) ≈ 0.2595, far below KL = 0.4564.
    const e = expectedTerm({ kind: "k3", coef: 1, clamp: { delta: 1 } }, pi);
    [0, 0.1, -0.1, 0].forEach((g, j) => expect(e.grad[j]!).toBeCloseTo(g, 14));
    const k3 = (d: number) => Math.expm1(d) - d;
    const deltas = pi.map((p, y) => Math.max(-1, Math.min(1, Math.log(q[y]! / p))));
    expect(e.value).toBeCloseTo(
      pi.reduce((acc, p, y) => acc + p * k3(deltas[y]!), 0),
      14,
    );
    expect(KL - e.value).toBeGreaterThan(0.19);
  });

  test("golden: off-policy, the ratio-weighted KL is unbiased in value and, with the ratio's gradient, in gradient; detached it is k3's biased gradient", () => {
    // Tokens sampled by μ = uniform, weighted by r = π/μ: E_μ[r·k] = E_π[k] (KL for k1 and k3), and
    // E_μ[∇(r·k)] = ∇E_π[k] = ∇KL. With sg[r]: E_μ[sg[r]·∇k] = E_π[∇k]: π − q for k3, 0 for k1.
    const mu = [0.25, 0.25, 0.25, 0.25];
    for (const kind of ["k1", "k3"] as const) {
      const e = expectedTerm({ kind, coef: 1, weight: "ratio" }, mu);
      expect(e.value, kind).toBeCloseTo(KL, 14);
      e.grad.forEach((g, j) => expect(g, kind).toBeCloseTo(gradKL[j]!, 12));
    }
    const d3 = expectedTerm({ kind: "k3", coef: 1, weight: "ratio_detached" }, mu);
    d3.grad.forEach((g, j) => expect(g).toBeCloseTo(pi[j]! - q[j]!, 12));
    const d1 = expectedTerm({ kind: "k1", coef: 1, weight: "ratio_detached" }, mu);
    d1.grad.forEach((g) => expect(Math.abs(g)).toBeLessThan(1e-12));
    // Unweighted off-policy k3 is biased in value: E_μ[k3] ≠ KL(π‖q).
    expect(Math.abs(expectedTerm({ kind: "k3", coef: 1 }, mu).value - KL)).toBeGreaterThan(0.05);
  });
});
