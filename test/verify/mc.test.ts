/**
 * Enforces docs/derivations/verify.md#monte-carlo: the CLT tolerance, Chan et al.'s merge of
 * streaming moments, and the chunked seeded Monte Carlo mean (spec §8.5).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRng, type Rng } from "../../src/core/rng.js";
import { cltTolerance, mcMean, RunningMoments } from "../../src/verify/mc.js";
import { expectClose, FC_PARAMS } from "../_kit/index.js";

/** A draw function that ignores the rng and replays a fixed stream, recording the chunk sizes. */
function fixedStream(values: readonly number[]): {
  fn: (k: number, rng: Rng) => number[];
  chunks: number[];
} {
  let next = 0;
  const chunks: number[] = [];
  return {
    fn: (k) => {
      chunks.push(k);
      const out = values.slice(next, next + k);
      next += k;
      return out;
    },
    chunks,
  };
}

const err = (code: string, arg: string) => expect.objectContaining({ code, arg });

describe("cltTolerance", () => {
  test("golden: z times s over root n", () => {
    expect(cltTolerance(2, 100)).toBe(0.8); // 4·2/10
    expect(cltTolerance(3, 9, { z: 2 })).toBe(2); // 2·3/3
    expect(cltTolerance(0, 5)).toBe(0);
  });

  test("rejects: negative or non-finite std, n below 1, non-positive z", () => {
    expect(() => cltTolerance(-1, 10)).toThrow(err("E_CONFIG", "sampleStd"));
    expect(() => cltTolerance(Number.NaN, 10)).toThrow(err("E_CONFIG", "sampleStd"));
    expect(() => cltTolerance(Number.POSITIVE_INFINITY, 10)).toThrow(err("E_CONFIG", "sampleStd"));
    expect(() => cltTolerance(1, 0)).toThrow(err("E_CONFIG", "n"));
    expect(() => cltTolerance(1, 2.5)).toThrow(err("E_CONFIG", "n"));
    expect(() => cltTolerance(1, 10, { z: 0 })).toThrow(err("E_CONFIG", "options.z"));
    expect(() => cltTolerance(1, 10, { z: Number.POSITIVE_INFINITY })).toThrow(
      err("E_CONFIG", "options.z"),
    );
    expect(() => cltTolerance(-1, 10)).toThrow("sampleStd must be finite and non-negative");
  });
});

describe("RunningMoments", () => {
  test("golden: 1, 2, 3, 4 has mean 2.5 and variance 5/3", () => {
    // M2 = 2.25 + 0.25 + 0.25 + 2.25 = 5; variance = 5/3; stdErr = √(5/3/4) = √(5/12).
    const m = new RunningMoments();
    for (const x of [1, 2, 3, 4]) m.add(x);
    expect(m.count).toBe(4);
    expect(m.mean).toBe(2.5);
    expect(m.variance).toBe(5 / 3);
    expect(m.stdErr).toBe(Math.sqrt(5 / 12));
  });

  test("identity: merging chunk statistics equals one pass over the values", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 2, maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        (xs, chunk) => {
          // Reference: the two-pass mean and M2 of all values at once.
          const whole = new RunningMoments();
          whole.addAll(xs);
          const merged = new RunningMoments();
          for (let i = 0; i < xs.length; i += chunk) {
            const part = new RunningMoments();
            part.addAll(xs.slice(i, i + chunk));
            merged.merge(part.stats);
          }
          const scale = Math.max(1, ...xs.map(Math.abs));
          expectClose(merged.mean, whole.mean, { atol: 1e-14 * scale });
          expectClose(merged.variance, whole.variance, { atol: 1e-12 * scale * scale });
        },
      ),
      FC_PARAMS,
    );
  });

  test("rejects: the mean of nothing, the variance of one value and non-finite values", () => {
    const m = new RunningMoments();
    expect(() => m.mean).toThrow(err("E_CONFIG", "count"));
    m.add(1);
    expect(() => m.variance).toThrow(err("E_CONFIG", "count"));
    expect(() => m.stdErr).toThrow(err("E_CONFIG", "count"));
    expect(() => m.add(Number.NaN)).toThrow(err("E_NONFINITE", "x"));
    expect(() => m.addAll([1, Number.POSITIVE_INFINITY])).toThrow(err("E_NONFINITE", "xs"));
    expect(() => m.merge({ count: 1.5, mean: 0, m2: 0 })).toThrow(err("E_CONFIG", "other.count"));
    expect(() => m.merge({ count: 2, mean: 0, m2: -1 })).toThrow(err("E_CONFIG", "other"));
  });
});

describe("mcMean", () => {
  test("golden: the stream 1, 2, 3, 4 in chunks of 3", () => {
    // Chunks [1, 2, 3] (mean 2, M2 2) and [4] (mean 4, M2 0); δ = 2:
    // mean = 2 + 2·1/4 = 2.5; M2 = 2 + 0 + 2²·3·1/4 = 5; stdErr = √(5/3/4) = √(5/12).
    const s = fixedStream([1, 2, 3, 4]);
    const est = mcMean(s.fn, 4, createRng(0), { batch: 3 });
    expect(s.chunks).toEqual([3, 1]);
    expect(est.mean).toBe(2.5);
    expect(est.stdErr).toBe(Math.sqrt(5 / 12));
  });

  test("identity: the estimate does not depend on the batch size", () => {
    const r = createRng(99);
    const values = Array.from({ length: 1000 }, () => 3 + 2 * r.normal());
    const ref = mcMean(fixedStream(values).fn, values.length, createRng(0), { batch: 1000 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1200 }), (batch) => {
        const s = fixedStream(values);
        const est = mcMean(s.fn, values.length, createRng(0), { batch });
        // Chunks of min(batch, remaining): all ≤ batch, summing to n.
        expect(s.chunks.every((k) => k <= batch && k >= 1)).toBe(true);
        expect(s.chunks.reduce((a, b) => a + b, 0)).toBe(values.length);
        expectClose(est.mean, ref.mean, { rtol: 1e-15 });
        expectClose(est.stdErr, ref.stdErr, { rtol: 1e-15 });
      }),
      FC_PARAMS,
    );
  });

  test("identity: equal seeds give bitwise-equal estimates", () => {
    const draw = (k: number, rng: Rng) => Array.from({ length: k }, () => rng.normal());
    const a = mcMean(draw, 10_000, createRng(5), { batch: 777 });
    const b = mcMean(draw, 10_000, createRng(5), { batch: 777 });
    expect(Object.is(a.mean, b.mean) && Object.is(a.stdErr, b.stdErr)).toBe(true);
    expect(mcMean(draw, 10_000, createRng(6), { batch: 777 }).mean).not.toBe(a.mean);
  });

  test("calibration: normal, uniform and bernoulli means within 4 standard errors", () => {
    // n = 2^17 draws each; a correct estimator misses 4 standard errors with probability ≈ 6.3e-5,
    // and the estimated standard error must match the exact σ/√n to within 2% (its own relative
    // sampling error is about √((κ − 1)/(4n)) ≤ 0.2%, κ the kurtosis).
    const n = 1 << 17;
    const cases: [string, (rng: Rng) => number, number, number][] = [
      ["normal", (rng) => rng.normal(), 0, 1],
      ["uniform", (rng) => rng.uniform(), 0.5, Math.sqrt(1 / 12)],
      ["bernoulli(0.3)", (rng) => (rng.uniform() < 0.3 ? 1 : 0), 0.3, Math.sqrt(0.21)],
    ];
    for (const [, draw, mean, sd] of cases) {
      const est = mcMean(
        (k, rng) => Array.from({ length: k }, () => draw(rng)),
        n,
        createRng(2026),
      );
      expect(Math.abs(est.mean - mean)).toBeLessThanOrEqual(4 * est.stdErr);
      expectClose(est.stdErr, sd / Math.sqrt(n), { rtol: 0.02 });
    }
  });

  test("rejects: n below 2, a bad batch, a chunk of the wrong length or with non-finite values", () => {
    const ok = (k: number) => new Array<number>(k).fill(1);
    const rng = createRng(0);
    expect(() => mcMean(ok, 1, rng)).toThrow(err("E_CONFIG", "n"));
    expect(() => mcMean(ok, 1, rng)).toThrow(
      "n must be an integer >= 2 so the standard error is defined",
    );
    expect(() => mcMean(ok, 10, rng, { batch: 0 })).toThrow(err("E_CONFIG", "options.batch"));
    expect(() => mcMean(ok, 10, rng, { batch: 2.5 })).toThrow(err("E_CONFIG", "options.batch"));
    expect(() => mcMean((k) => ok(k + 1), 10, rng)).toThrow(err("E_SHAPE", "fn(k, rng)"));
    expect(() => mcMean(() => [Number.NaN], 10, rng, { batch: 1 })).toThrow(
      err("E_NONFINITE", "fn(k, rng)"),
    );
  });
});
