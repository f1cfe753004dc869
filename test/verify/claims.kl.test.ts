/**
 * Enforces docs/derivations/verify.md#claims-checked-by-monte-carlo-and-by-training: the KL
 * estimator claims of spec §4.6 on the softmax bandit — exact enumeration over arms for the
 * expectations, a 10^6-sample Monte Carlo for k3's gradient bias — and the bandit's own Monte Carlo
 * claims of spec §8.3 (score-function gradient, mean reward).
 *
 * Setting (spec §4.6): π = softmax(log(0.4, 0.3, 0.2, 0.1)), q = softmax(log(0.1, 0.2, 0.3, 0.4)).
 * A one-token sample y has log-prob log π_y and ∂ log π_y/∂θ = e_y − π, so an estimator used as a
 * loss has the per-sample θ-gradient k'(y)·(e_y − π), with k'(y) = ∂k/∂logprobs read from polgrad's
 * klLoss; expectations are sums over y weighted by π_y.
 */
import { describe, expect, test } from "vitest";
import { createRng, seedFromName } from "../../src/core/rng.js";
import type { Matrix } from "../../src/core/tensor.js";
import { type KLEstimator, klEstimate, klLoss } from "../../src/index.js";
import { type BanditBatch, SoftmaxBandit } from "../../src/verify/bandit.js";
import { cltTolerance, mcMean, RunningMoments } from "../../src/verify/mc.js";
import { centralDifference, expectClose } from "../_kit/index.js";

const K = 4;
const PI = [0.4, 0.3, 0.2, 0.1];
const Q = [0.1, 0.2, 0.3, 0.4];
const ARMS = [0, 1, 2, 3];

const theta = Float64Array.from(PI, Math.log);
const thetaQ = Float64Array.from(Q, Math.log);
const bandit = new SoftmaxBandit(theta, new Float64Array(K));
const pi = bandit.probs();
const logQ = new SoftmaxBandit(thetaQ, new Float64Array(K)).logProbs();
const KL = bandit.exactKl(thetaQ);
/** ∇_θ KL(π_θ‖q) = π_j (log(π_j/q_j) − KL) (docs/derivations/verify.md). */
const gradKL = Array.from(pi, (p, j) => p * (Math.log(p) - logQ[j]! - KL));

function refFor(batch: BanditBatch): Matrix {
  return {
    rows: batch.actions.length,
    cols: 1,
    data: Float64Array.from(batch.actions, (a) => logQ[a]!),
  };
}

/** k'(y) = ∂k/∂logprobs at each arm y, from klLoss over the four-arm batch (token_mean weight 1/4). */
function derivativeByArm(kind: KLEstimator): number[] {
  const batch = bandit.batchFor(ARMS);
  const g = klLoss(batch.logprobs, refFor(batch), kind, "token_mean", {
    responseMask: batch.responseMask,
  }).gradLogprobs.data;
  return Array.from(g, (x) => K * x); // ×4 undoes the 1/4 exactly (a power of two)
}

/** E_π[k'(y)(e_y − π)] by enumeration, through the bandit's chain-rule helper. */
function expectedGradient(kind: KLEstimator): Float64Array {
  const batch = bandit.batchFor(ARMS);
  const d = derivativeByArm(kind);
  const weighted = { rows: K, cols: 1, data: Float64Array.from(ARMS, (y) => pi[y]! * d[y]!) };
  return bandit.thetaGradient(batch, weighted);
}

/** E_π[k(y)] by enumeration, with polgrad's klEstimate at each arm. */
function expectedValue(kind: KLEstimator): number {
  const batch = bandit.batchFor(ARMS);
  const k = klEstimate(batch.logprobs, refFor(batch), kind, {
    responseMask: batch.responseMask,
  }).data;
  return ARMS.reduce((s, y) => s + pi[y]! * k[y]!, 0);
}

describe("klEstimate on the softmax bandit", () => {
  test("identity: e[k1] and e[k3] equal the bandit's exact kl by enumeration over arms", () => {
    // KL = Σ π log(π/q) = 0.4·log 4 + 0.3·log 1.5 + 0.2·log(2/3) + 0.1·log(1/4) = 0.4564.
    expect(KL).toBeCloseTo(0.4564, 4);
    expect(Math.abs(expectedValue("k1") - KL)).toBeLessThanOrEqual(1e-14);
    // E_π[e^δ − 1 − δ] = Σ q − 1 + KL = KL since Σ_y π_y·q_y/π_y = 1.
    expect(Math.abs(expectedValue("k3") - KL)).toBeLessThanOrEqual(1e-14);
  });

  test("golden: k2's bias is half the second moment of the log-ratio minus kl, about +0.0651", () => {
    // log(π/q) = (log 4, log 1.5, −log 1.5, −log 4) = (1.3863, 0.4055, −0.4055, −1.3863);
    // ½Σ π·log²(π/q) = ½(0.5·1.9218 + 0.5·0.1644) = 0.5216, so E[k2] − KL = 0.5216 − 0.4564 = 0.0651.
    const closedForm =
      0.5 * ARMS.reduce((s, j) => s + pi[j]! * (Math.log(pi[j]!) - logQ[j]!) ** 2, 0);
    const bias = expectedValue("k2") - KL;
    expect(Math.abs(expectedValue("k2") - closedForm)).toBeLessThanOrEqual(1e-14);
    expect(bias).toBeGreaterThan(0.05);
    expect(bias).toBeCloseTo(0.0651, 4);
  });
});

describe("klLoss on the softmax bandit", () => {
  test("identity: k2 as a loss has expected theta-gradient equal to the exact kl gradient", () => {
    // Σ_y π_y (log π_y − log q_y)(e_y − π)_j = π_j log(π_j/q_j) − π_j·KL = ∇_j KL.
    expectClose(expectedGradient("k2"), gradKL, { atol: 1e-13 });
    // The closed form ∇KL itself, against central differences of exactKl with θ moved in place:
    // h = 1e-6, error ≈ ε·KL/h + h²·|KL‴|/6 ≈ 1e-10.
    const saved = Array.from(theta);
    const fd = centralDifference(
      (x) => {
        theta.set(x);
        return bandit.exactKl(thetaQ);
      },
      saved,
      1e-6,
    );
    theta.set(saved);
    expectClose(gradKL, fd, { atol: 1e-8 });
    // ∇KL = (0.3719, −0.0153, −0.1724, −0.1843) (spec §4.6).
    expectClose(gradKL, [0.3719, -0.0153, -0.1724, -0.1843], { atol: 5e-5 });
  });

  test("identity: k1 as a loss has zero expected gradient and k3 has pi minus q", () => {
    // k1' = 1: Σ π_y (e_y − π) = π − π = 0. k3' = 1 − q_y/π_y: Σ (π_y − q_y)(e_y − π) = π − q − 0·π.
    expectClose(expectedGradient("k1"), [0, 0, 0, 0], { atol: 1e-15 });
    expectClose(expectedGradient("k3"), [0.3, 0.1, -0.1, -0.3], { atol: 1e-15 });
  });

  test("identity: the per-arm count fast path equals the full-batch gradient", () => {
    // The Monte Carlo below never materialises its 10^6 samples: every sample of arm y has the same
    // θ-gradient k'(y)(e_y − π), so the batch gradient of token_mean (1/n)Σ_i k'(y_i)(e_{y_i} − π)
    // is Σ_y (c_y/n)·k'(y)(e_y − π). Here both are computed from the same seed at n = 4096.
    const n = 4096;
    const seed = seedFromName("claims.kl:fast-path");
    const batch = bandit.sample(n, createRng(seed));
    const loss = klLoss(batch.logprobs, refFor(batch), "k3", "token_mean", {
      responseMask: batch.responseMask,
    });
    const full = bandit.thetaGradient(batch, loss.gradLogprobs);
    const counts = bandit.sampleCounts(n, createRng(seed));
    const d = derivativeByArm("k3");
    const fast = ARMS.map((j) =>
      ARMS.reduce((s, y) => s + (counts[y]! / n) * d[y]! * ((y === j ? 1 : 0) - pi[j]!), 0),
    );
    expectClose(full, fast, { atol: 1e-15 });
  });

  test("calibration: the monte carlo theta-gradient of k3 as a token_mean loss is within 4 clt tolerances of pi minus q and more than 10 from the kl gradient", () => {
    // n = 10^6 draws via per-arm counts (fast path above). Each arm contributes the statistics
    // (count c_y, mean g_j(y), M2 0) to Chan's merge, giving the exact sample mean and sample std
    // s_j of the per-sample gradient component j. Tolerance 4·s_j/√n (≈ 1.5e-3 for j = 0) — a
    // correct centre is missed with probability ≈ 6.3e-5 per component — while the gaps
    // |π − q − ∇KL| = (0.0719, 0.1153, 0.0724, 0.1157) are ≥ 36 such tolerances.
    const n = 1_000_000;
    const counts = bandit.sampleCounts(n, createRng(seedFromName("claims.kl:k3-gradient")));
    const d = derivativeByArm("k3");
    for (const j of ARMS) {
      const m = new RunningMoments();
      for (const y of ARMS) {
        m.merge({ count: counts[y]!, mean: d[y]! * ((y === j ? 1 : 0) - pi[j]!), m2: 0 });
      }
      const tol = cltTolerance(Math.sqrt(m.variance), n);
      const centre = PI[j]! - Q[j]!;
      expect(Math.abs(m.mean - centre)).toBeLessThanOrEqual(tol);
      expect(Math.abs(centre - gradKL[j]!)).toBeGreaterThan(10 * tol);
    }
  });
});

describe("SoftmaxBandit monte carlo", () => {
  const b = new SoftmaxBandit([0.4, -0.6, 0.1, -0.2], [1, -0.5, 0.25, 2]);
  const A = [1, -0.5, 0.25, 2];

  test("calibration: the score-function gradient matches exactPolicyGradient within 4 standard errors per coordinate", () => {
    // ∇_θ Σ π A = E_π[A_y (e_y − π)]: n = 16384 draws per coordinate through mcMean; a correct
    // estimator misses 4 of its own standard errors with probability ≈ 6.3e-5 per coordinate.
    const exact = b.exactPolicyGradient(A);
    const p = b.probs();
    for (const j of ARMS) {
      const est = mcMean(
        (k, rng) =>
          Array.from(b.sample(k, rng).actions, (y) => A[y]! * ((y === j ? 1 : 0) - p[j]!)),
        16_384,
        createRng(seedFromName(`claims.kl:score-function:${j}`)),
      );
      expect(Math.abs(est.mean - exact[j]!)).toBeLessThanOrEqual(4 * est.stdErr);
    }
  });

  test("calibration: the sample mean reward over 32768 draws is within the clt tolerance of the exact expected reward", () => {
    // Exact sd of one reward: √(Σ π r² − J²); tolerance 4·sd/√n.
    const n = 32_768;
    const J = b.expectedReward();
    const sd = Math.sqrt(Array.from(b.probs()).reduce((s, p, j) => s + p * A[j]! ** 2, 0) - J * J);
    const rewards = b.sample(n, createRng(seedFromName("claims.kl:mean-reward"))).rewards;
    const mean = rewards.reduce((s, r) => s + r, 0) / n;
    expect(Math.abs(mean - J)).toBeLessThanOrEqual(cltTolerance(sd, n));
  });
});
