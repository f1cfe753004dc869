/**
 * Enforces docs/diagnostics/mismatch.md#calibration: seeded Monte-Carlo checks that the KL fields
 * estimate KL(rollout‖trainer) (not the reverse, not its negative), that the catastrophic count
 * has its binomial null rate under Gaussian noise, and that injected catastrophes are all found.
 */
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import type { Matrix } from "../../src/core/tensor.js";
import { logprobMismatch } from "../../src/diagnostics/mismatch.js";

const P = [0.5, 0.25, 0.15, 0.1]; // rollout (sampling) policy
const Q = [0.1, 0.2, 0.3, 0.4]; // trainer policy

/** E_p[f] and sd_p[f] by exact enumeration over the four tokens. */
function moments(f: (p: number, q: number) => number): { mean: number; sd: number } {
  let mean = 0;
  for (let y = 0; y < 4; y++) mean += P[y] * f(P[y], Q[y]);
  let v = 0;
  for (let y = 0; y < 4; y++) v += P[y] * (f(P[y], Q[y]) - mean) ** 2;
  return { mean, sd: Math.sqrt(v) };
}

function matrix(rows: number, cols: number, data: Float64Array): Matrix {
  return { rows, cols, data };
}

const allTrue = (n: number) => new Uint8Array(n).fill(1);

describe("logprobMismatch", () => {
  test("calibration: k1 and k3 estimate kl(rollout || trainer), not the reverse or its negative", () => {
    // n = 300 000 tokens y ~ p (seed 42), rollout = log p_y, trainer = log q_y, Δ = log(q_y/p_y).
    // E_p[k1] = E_p[log(p/q)] = KL(p‖q); E_p[k3] = E_p[q/p − 1 − log(q/p)] = 1 − 1 + KL(p‖q)
    // (E_p[q/p] = Σq = 1); E_p[e^−Δ − 1 + Δ] = Σp²/q − 1 − KL = χ²(p‖q) − KL(p‖q).
    // Exact by enumeration: KL(p‖q) = 0.6179033, KL(q‖p) = 0.5568894, χ² = 1.9125.
    // Tolerance per field: 4·sd/√n with sd exact (k1 1.0909, k3 0.4695, swapped k3 1.1080),
    // i.e. 0.0080, 0.0034, 0.0081 — a two-sided 4-sd bound (nominal false-failure rate 6e-5).
    const B = 600;
    const T = 500;
    const n = B * T;
    const rng = createRng(42);
    const trainer = new Float64Array(n);
    const rollout = new Float64Array(n);
    const logP = P.map(Math.log);
    const logQ = Q.map(Math.log);
    for (let i = 0; i < n; i++) {
      const y = rng.categorical(P);
      rollout[i] = logP[y] as number;
      trainer[i] = logQ[y] as number;
    }
    const r = logprobMismatch(matrix(B, T, trainer), matrix(B, T, rollout), {
      rows: B,
      cols: T,
      data: allTrue(n),
    });
    const klPQ = moments((p, q) => Math.log(p / q)).mean;
    const klQP = Q.reduce((s, q, y) => s + q * Math.log(q / (P[y] as number)), 0);
    const chi2 = P.reduce((s, p, y) => s + (p * p) / (Q[y] as number), 0) - 1;
    expect(klPQ).toBeCloseTo(0.6179033, 6);
    expect(klQP).toBeCloseTo(0.5568894, 6);
    expect(chi2).toBeCloseTo(1.9125, 12);
    const fields = [
      { name: "k1", got: r.klK1, m: moments((p, q) => Math.log(p / q)) },
      { name: "k3", got: r.klK3, m: moments((p, q) => q / p - 1 - Math.log(q / p)) },
      {
        name: "k3 trainer->rollout",
        got: r.klK3TrainerRollout,
        m: moments((p, q) => p / q - 1 - Math.log(p / q)),
      },
    ];
    for (const { name, got, m } of fields) {
      const tol = (4 * m.sd) / Math.sqrt(n);
      const target = name === "k3 trainer->rollout" ? chi2 - klPQ : klPQ;
      expect(m.mean).toBeCloseTo(target, 12);
      const z = (got - target) / (m.sd / Math.sqrt(n));
      const line = `mismatch direction ${name}: ${got.toFixed(5)} vs ${target.toFixed(5)} (z = ${z.toFixed(2)}, tol ${tol.toFixed(5)})`;
      if (name !== "k3 trainer->rollout") {
        // The reverse direction KL(q‖p) is measurably different; a mislabelled k1 (trainer‖rollout
        // on rollout samples) would sit at −KL(p‖q), hundreds of tolerances away.
        console.log(
          `${line}; KL(q||p) is ${(Math.abs(got - klQP) / tol).toFixed(1)} tol away, -KL(p||q) ${(Math.abs(got + klPQ) / tol).toFixed(0)} tol away`,
        );
        expect(Math.abs(got - klQP)).toBeGreaterThan(5 * tol);
        expect(Math.abs(got + klPQ)).toBeGreaterThan(100 * tol);
      } else {
        console.log(line);
      }
      expect(Math.abs(got - target)).toBeLessThanOrEqual(tol);
      expect(got).toBeGreaterThan(0);
    }
    expect(r.klK2).toBeGreaterThan(0);
  });

  test("calibration: the catastrophic count under gaussian noise has its binomial null rate", () => {
    // Null: Δ iid N(0, s²) ⇒ each token is flagged with p₀ = P(|Δ| > g) = 2Φ(−g/s) = erfc(g/(s√2)).
    // g = 5, s = 2: p₀ = erfc(2.5/√2) = 0.0124193307; s = 2.5: p₀ = erfc(2/√2) = 0.0455002639.
    // n = 100 000 tokens each; the count is Binomial(n, p₀): accept |count − n·p₀| ≤ 4·√(n p₀(1 − p₀)).
    const n = 100_000;
    for (const [s, p0, seed] of [
      [2, 0.012419330651552278, 11],
      [2.5, 0.04550026389635844, 12],
    ] as const) {
      const rng = createRng(seed);
      const trainer = Float64Array.from({ length: n }, () => -3 + s * rng.normal());
      const rollout = new Float64Array(n).fill(-3);
      const r = logprobMismatch(matrix(100, 1000, trainer), matrix(100, 1000, rollout), {
        rows: 100,
        cols: 1000,
        data: allTrue(n),
      });
      const mean = n * p0;
      const sd = Math.sqrt(n * p0 * (1 - p0));
      console.log(
        `mismatch catastrophic null s=${s}: FPR ${(r.catastrophicCount / n).toFixed(5)} vs nominal ${p0.toFixed(5)} ` +
          `(count ${r.catastrophicCount}, expected ${mean.toFixed(1)} ± ${sd.toFixed(1)}, z = ${((r.catastrophicCount - mean) / sd).toFixed(2)})`,
      );
      expect(Math.abs(r.catastrophicCount - mean)).toBeLessThanOrEqual(4 * sd);
    }
  });

  test("calibration: injected catastrophic tokens are all found and nothing else is", () => {
    // Power: smooth numeric noise Δ ~ N(0, 0.05²) on 100 000 tokens (null rate 2Φ(−100) ≈ 0) plus
    // 50 injected faults with |Δ| uniform in [5.5, 12] and random sign at distinct positions:
    // every fault must be flagged, at its (b, t), and no other token.
    const rng = createRng(2026);
    const B = 100;
    const T = 1000;
    const n = B * T;
    const trainer = Float64Array.from({ length: n }, () => -2 + 0.05 * rng.normal());
    const rollout = new Float64Array(n).fill(-2);
    const injected = new Set<number>();
    while (injected.size < 50) injected.add(rng.int(0, n - 1));
    for (const i of injected) {
      const size = rng.uniformIn(5.5, 12);
      trainer[i] = -2 + (rng.uniform() < 0.5 ? -size : size);
    }
    const r = logprobMismatch(matrix(B, T, trainer), matrix(B, T, rollout), {
      rows: B,
      cols: T,
      data: allTrue(n),
    });
    const expected = [...injected].sort((a, b) => a - b).map((i) => [Math.floor(i / T), i % T]);
    console.log(
      `mismatch catastrophic power: ${r.catastrophicCount} flagged of 50 injected among ${n} tokens`,
    );
    expect(r.catastrophicIndices).toEqual(expected);
  });
});
