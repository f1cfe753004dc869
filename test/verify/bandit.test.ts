/**
 * Enforces docs/derivations/verify.md#softmax-bandit: the bandit's closed forms (softmax,
 * log-softmax, entropy, policy gradient, KL) against hand arithmetic and reverse-mode autodiff,
 * the sample contract, the chain rule to θ, and validation (spec §8.3).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import {
  exp,
  grad,
  log,
  mul,
  type Scalar,
  scalarValue,
  sub,
  sum,
} from "../../src/verify/autodiff.js";
import { SoftmaxBandit } from "../../src/verify/bandit.js";
import { cltTolerance } from "../../src/verify/mc.js";
import { centralDifference, expectClose, FC_PARAMS } from "../_kit/index.js";

const err = (code: string, arg: string) => expect.objectContaining({ code, arg });

/** log-softmax on the autodiff tape, written from the definition (no max shift: |θ| ≤ 5 here). */
function logSoftmax(theta: readonly Scalar[]): Scalar[] {
  const lse = log(sum(theta.map((t) => exp(t))));
  return theta.map((t) => sub(t, lse));
}

const thetas = fc.integer({ min: 2, max: 6 }).chain((K) =>
  fc.record({
    theta: fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: K, maxLength: K }),
    other: fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: K, maxLength: K }),
    A: fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: K, maxLength: K }),
    actions: fc.array(fc.integer({ min: 0, max: K - 1 }), { minLength: 1, maxLength: 12 }),
    G: fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 12, maxLength: 12 }),
  }),
);

describe("SoftmaxBandit", () => {
  test("golden: probabilities, entropy and policy gradient at theta = (0, log 3)", () => {
    // π = (1, 3)/4; log π = (−log 4, log 3 − log 4); H = log 4 − (3/4)·log 3;
    // A = (1, 0): Σπ·A = 1/4, ∇ = (¼·(1 − ¼), ¾·(0 − ¼)) = (3/16, −3/16);
    // rewards (2, 6): J = ¼·2 + ¾·6 = 5.
    const b = new SoftmaxBandit([0, Math.log(3)], [2, 6]);
    expect(b.numArms).toBe(2);
    expectClose(b.probs(), [0.25, 0.75], { atol: 2e-16 });
    expectClose(b.logProbs(), [-Math.log(4), Math.log(3) - Math.log(4)], { atol: 1e-15 });
    expectClose(b.entropy(), Math.log(4) - 0.75 * Math.log(3), { atol: 1e-15 });
    expectClose(b.exactPolicyGradient([1, 0]), [3 / 16, -3 / 16], { atol: 1e-16 });
    expectClose(b.expectedReward(), 5, { atol: 1e-15 });
  });

  test("golden: uniform logits give probability 1/K, log-probability -log K and entropy log K", () => {
    // θ = 0: e^0 = 1 for each of 8 arms, so π = 1/8 and log π = 0 − 0 − log 8, both exact.
    const b = new SoftmaxBandit(new Float64Array(8), new Float64Array(8));
    expect(Array.from(b.probs())).toEqual(new Array(8).fill(0.125));
    expect(Array.from(b.logProbs())).toEqual(new Array(8).fill(-Math.log(8)));
    expectClose(b.entropy(), Math.log(8), { atol: 1e-15 });
  });

  test("gradient: closed forms match reverse-mode autodiff", () => {
    fc.assert(
      fc.property(thetas, ({ theta, other, A, actions, G }) => {
        const b = new SoftmaxBandit(theta, new Float64Array(theta.length));
        // On plain numbers the tape's operations return plain values: the definition, unshifted.
        const lp = logSoftmax(theta).map(scalarValue);
        expectClose(b.logProbs(), lp, { atol: 1e-13, what: "logProbs" });
        expectClose(b.probs(), lp.map(Math.exp), { atol: 1e-14, what: "probs" });
        expectClose(b.entropy(), -lp.reduce((s, l) => s + Math.exp(l) * l, 0), { atol: 1e-13 });
        const lq = logSoftmax(other).map(scalarValue);
        expectClose(
          b.exactKl(other),
          Math.max(
            0,
            lp.reduce((s, l, j) => s + Math.exp(l) * (l - lq[j]!), 0),
          ),
          {
            atol: 1e-13,
            what: "exactKl",
          },
        );
        // ∇_θ Σ_k π_k A_k by the tape vs π_j (A_j − Σ π A).
        const J = grad((t) => sum(logSoftmax(t).map((l, k) => mul(exp(l), A[k]!))), theta);
        expectClose(b.exactPolicyGradient(A), J.grad, {
          atol: 1e-13,
          rtol: 1e-12,
          what: "policy gradient",
        });
        // ∇_θ Σ_i G_i log π(y_i) by the tape vs the chain-rule helper.
        const g = G.slice(0, actions.length);
        const L = grad((t) => {
          const l = logSoftmax(t);
          return sum(actions.map((y, i) => mul(l[y]!, g[i]!)));
        }, theta);
        const batch = b.batchFor(actions);
        const Gm = { rows: actions.length, cols: 1, data: Float64Array.from(g) };
        expectClose(b.thetaGradient(batch, Gm), L.grad, {
          atol: 1e-13,
          rtol: 1e-12,
          what: "thetaGradient",
        });
      }),
      FC_PARAMS,
    );
  });

  test("identity: the policy gradient sums to zero and ignores a constant shift of the advantages", () => {
    fc.assert(
      fc.property(thetas, fc.double({ min: -10, max: 10, noNaN: true }), ({ theta, A }, c) => {
        const b = new SoftmaxBandit(theta, new Float64Array(theta.length));
        const g = b.exactPolicyGradient(A);
        expect(Math.abs(g.reduce((s, x) => s + x, 0))).toBeLessThan(1e-14);
        expectClose(b.exactPolicyGradient(A.map((a) => a + c)), g, { atol: 1e-13 });
      }),
      FC_PARAMS,
    );
  });

  test("identity: the exact kl is exactly zero against itself and never negative", () => {
    fc.assert(
      fc.property(thetas, ({ theta, other }) => {
        const b = new SoftmaxBandit(theta, new Float64Array(theta.length));
        expect(b.exactKl(theta)).toBe(0);
        expect(b.exactKl(other)).toBeGreaterThanOrEqual(0);
        // softmax ignores a constant shift of the logits
        expect(b.exactKl(theta.map((t) => t + 0.75))).toBeLessThan(1e-14);
      }),
      FC_PARAMS,
    );
  });

  test("identity: the sample contract and the chain rule to theta", () => {
    const theta = new Float64Array([0.4, -0.6, 0.1, -0.2]);
    const b = new SoftmaxBandit(theta, [1, -0.5, 0.25, 2]);
    const n = 500;
    const batch = b.sample(n, createRng(11));
    const lpArm = b.logProbs();
    expect(batch.actions).toBeInstanceOf(Int32Array);
    expect(batch.actions.length).toBe(n);
    for (const m of [batch.logprobs, batch.oldLogprobs, batch.refLogprobs, batch.rolloutLogprobs]) {
      expect([m.rows, m.cols]).toEqual([n, 1]);
    }
    expect([batch.responseMask.rows, batch.responseMask.cols]).toEqual([n, 1]);
    expect(batch.responseMask.data.every((v) => v === 1)).toBe(true);
    for (let i = 0; i < n; i++) {
      const a = batch.actions[i]!;
      expect(batch.logprobs.data[i]).toBe(lpArm[a]);
      expect(batch.rewards[i]).toBe(b.armRewards[a]);
    }
    // The three constant streams are equal copies, not aliases of the differentiable one.
    for (const m of [batch.oldLogprobs, batch.refLogprobs, batch.rolloutLogprobs]) {
      expect(m.data).toEqual(batch.logprobs.data);
      expect(m.data).not.toBe(batch.logprobs.data);
    }
    // ∂(Σ_i logprobs_i)/∂θ_j = count_j − n·π_j ...
    const counts = [0, 0, 0, 0];
    for (const a of batch.actions) counts[a]! += 1;
    const ones = { rows: n, cols: 1, data: new Float64Array(n).fill(1) };
    const g = b.thetaGradient(batch, ones);
    const pi = b.probs();
    expectClose(
      g,
      counts.map((c, j) => c - n * pi[j]!),
      { atol: 1e-12 },
    );
    // ... and by central differences of f(θ) = Σ_i log π_θ(y_i) = Σ_j count_j·log π_θ(j), with θ
    // written in place (held by reference). h = 1e-5: rounding ≈ ε·|f|/h ≈ 2.2e-16·700/1e-5 ≈ 2e-8,
    // truncation ≈ h²/6·|f‴| ≤ (1e-10/6)·500 ≈ 1e-8.
    const saved = Array.from(theta);
    const fd = centralDifference(
      (x) => {
        theta.set(x);
        const l = b.logProbs();
        return counts.reduce((s, c, j) => s + c * l[j]!, 0);
      },
      saved,
      1e-5,
    );
    theta.set(saved);
    expectClose(g, fd, { atol: 1e-6 });
  });

  test("identity: theta is held by reference and a plain array is copied", () => {
    const theta = new Float64Array([0, 0]);
    const b = new SoftmaxBandit(theta, [0, 1]);
    theta[1] = Math.log(3); // an optimiser's in-place update
    expectClose(b.probs(), [0.25, 0.75], { atol: 2e-16 });
    const plain = [0, 0];
    const c = new SoftmaxBandit(plain, [0, 1]);
    plain[1] = 5;
    expect(Array.from(c.probs())).toEqual([0.5, 0.5]);
  });

  test("identity: equal seeds give bitwise-equal batches and sampleCounts draws the same arms", () => {
    const b = new SoftmaxBandit([0.4, -0.6, 0.1, -0.2], [0, 0, 0, 0]);
    const x = b.sample(1000, createRng(3));
    const y = b.sample(1000, createRng(3));
    expect(x.actions).toEqual(y.actions);
    const r1 = createRng(3);
    const r2 = createRng(3);
    const counts = b.sampleCounts(1000, r1);
    const hist = new Int32Array(4);
    for (const a of b.sample(1000, r2).actions) hist[a]! += 1;
    expect(counts).toEqual(hist);
    expect(r1.uniform()).toBe(r2.uniform()); // both consumed the stream alike
  });

  test("calibration: arm frequencies within 4 clt tolerances of pi", () => {
    // count_j/n has sd √(π_j(1 − π_j)/n); tolerance 4 sd (miss probability ≈ 6.3e-5 per arm).
    const b = new SoftmaxBandit([0.4, -0.6, 0.1, -0.2], [0, 0, 0, 0]);
    const n = 200_000;
    const counts = b.sampleCounts(n, createRng(17));
    b.probs().forEach((p, j) => {
      expect(Math.abs(counts[j]! / n - p)).toBeLessThanOrEqual(
        cltTolerance(Math.sqrt(p * (1 - p)), n),
      );
    });
  });

  test("property: extreme logits stay finite", () => {
    // θ = (1000, 0, −1000): log π = (0, −1000, −2000) exactly (log Σ e^{θ − 1000} = log 1 = 0).
    const b = new SoftmaxBandit([1000, 0, -1000], [0, 0, 0]);
    expect(Array.from(b.logProbs())).toEqual([0, -1000, -2000]);
    expect(Array.from(b.probs())).toEqual([1, 0, 0]);
    expect(Math.abs(b.entropy())).toBe(0);
  });

  test("rejects: fewer than 2 arms, mismatched or non-finite inputs, bad n, actions and shapes", () => {
    expect(() => new SoftmaxBandit([0], [1])).toThrow(err("E_SHAPE", "theta"));
    expect(() => new SoftmaxBandit([0], [1])).toThrow("theta must be [K] with K >= 2 arms");
    expect(() => new SoftmaxBandit([0, 0], [1])).toThrow(err("E_SHAPE", "armRewards"));
    expect(() => new SoftmaxBandit([0, Number.NaN], [1, 1])).toThrow(err("E_NONFINITE", "theta"));
    expect(() => new SoftmaxBandit([0, 0], [1, Number.POSITIVE_INFINITY])).toThrow(
      err("E_NONFINITE", "armRewards"),
    );
    const theta = new Float64Array(3);
    const b = new SoftmaxBandit(theta, [0, 1, 2]);
    expect(() => b.sample(0, createRng(0))).toThrow(err("E_CONFIG", "n"));
    expect(() => b.sampleCounts(1.5, createRng(0))).toThrow(err("E_CONFIG", "n"));
    expect(() => b.exactPolicyGradient([1, 2])).toThrow(err("E_SHAPE", "advantages"));
    expect(() => b.exactPolicyGradient([1, 2, Number.NaN])).toThrow(
      err("E_NONFINITE", "advantages"),
    );
    expect(() => b.exactKl([0, 0])).toThrow(err("E_SHAPE", "otherTheta"));
    expect(() => b.batchFor([])).toThrow(err("E_CONFIG", "actions"));
    expect(() => b.batchFor([0, 3])).toThrow(err("E_CONFIG", "actions"));
    const batch = b.batchFor([0, 1]);
    expect(() =>
      b.thetaGradient(batch, [
        [1, 1],
        [1, 1],
      ]),
    ).toThrow(err("E_SHAPE", "gradLogprobs"));
    expect(() => b.thetaGradient(batch, [[1], [Number.NaN]])).toThrow(
      err("E_NONFINITE", "gradLogprobs"),
    );
    expect(() =>
      b.thetaGradient({ ...batch, actions: Int32Array.from([0, 5]) }, [[1], [1]]),
    ).toThrow(err("E_CONFIG", "batch.actions"));
    theta[0] = Number.NaN; // an optimiser that diverged
    expect(() => b.probs()).toThrow(err("E_NONFINITE", "theta"));
  });
});
