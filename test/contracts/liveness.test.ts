/**
 * Enforces docs/contracts.md#liveness: the probe skips image-invariant batches (a correct zero),
 * reports the first batch with signal when its term and gradient are positive, and fails loudly —
 * with a typed error — after the bound of consecutive degenerate batches or on a dead gradient.
 */
import { describe, expect, test } from "vitest";
import { LivenessError, papoLivenessMeasure, probeLiveness } from "../../src/contracts/index.js";
import { ConfigError, klLoss } from "../../src/index.js";
import { papoDLoss } from "../../src/registry/algorithms/papoD.js";
import { papoGTrlLoss } from "../../src/registry/algorithms/papoG.js";

const mask = [
  [true, true, true],
  [true, true, false],
];
const lp = [
  [-1.0, -0.5, -2.0],
  [-0.3, -1.2, 0],
];
/** The original view with every response logprob shifted by `d` (d = 0: image-invariant). */
const view = (d: number) => ({
  logprobs: lp,
  oldLogprobs: lp,
  refLogprobs: lp,
  advantages: [0.8, -0.6],
  responseMask: mask,
  maskedLogprobs: lp.map((r, b) => r.map((x, t) => (mask[b][t] ? x + d : x))),
  entropies: lp.map((r) => r.map(() => 1.5)),
  maskedEntropies: lp.map((r) => r.map(() => 2.5)),
});
type View = ReturnType<typeof view>;

/** A perception-like term: k3 KL of the original view against the masked view, with its gradient. */
const klMeasure = (b: View) => {
  const r = klLoss(b.logprobs, b.maskedLogprobs, "k3", "token_mean", {
    responseMask: b.responseMask,
  });
  return { term: r.loss, gradNorm: Math.hypot(...r.gradLogprobs.data) };
};

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("probeLiveness", () => {
  test("golden: skips image-invariant batches and reports the first live one", () => {
    // k3(0) = e^0 − 0 − 1 = 0 exactly: an image-invariant batch is a correct zero, skipped.
    const batches = [view(0), view(0), view(0), view(0.5), view(0)];
    const r = probeLiveness(batches, { measure: klMeasure });
    expect(r).toMatchObject({ status: "live", batchIndex: 3, skipped: 3 });
    if (r.status !== "live") throw new Error("unreachable");
    // k3(0.5) = e^0.5 − 1.5 = 0.14872127070012814 at each of the 5 response tokens (token mean).
    expect(r.term).toBeCloseTo(Math.exp(0.5) - 1.5, 15);
    expect(r.gradNorm).toBeGreaterThan(0);
  });

  test("rejects: more consecutive degenerate batches than the bound", () => {
    // Exactly `maxDegenerate` degenerate batches are tolerated; the next one fails.
    const ok = probeLiveness([...Array(20).fill(view(0)), view(0.1)], { measure: klMeasure });
    expect(ok).toMatchObject({ status: "live", batchIndex: 20, skipped: 20 });
    let calls = 0;
    function* forever(): Generator<View> {
      for (;;) yield view(0);
    }
    const err = thrown(() =>
      probeLiveness(forever(), {
        measure: (b) => {
          calls++;
          return klMeasure(b);
        },
        maxDegenerate: 20,
      }),
    );
    expect(err).toBeInstanceOf(LivenessError);
    expect(err).toMatchObject({
      code: "E_VERIFY",
      reason: "degenerate_bound",
      batchIndex: 20,
      fn: "probeLiveness",
    });
    expect(calls).toBe(21);
    expect((err as Error).message).toMatch(/21 consecutive batches with term exactly 0/);
    expect((err as Error).message).toMatch(/Hint:/);
  });

  test("rejects: a term that is live in value but carries no gradient", () => {
    // The term computed on detached logprobs: its value is there, its gradient is not.
    const detached = (b: View) => ({ term: klMeasure(b).term, gradNorm: 0 });
    expect(thrown(() => probeLiveness([view(0), view(0.4)], { measure: detached }))).toMatchObject({
      reason: "dead_gradient",
      batchIndex: 1,
    });
    expect(
      thrown(() => probeLiveness([view(0.4)], { measure: () => ({ term: -0.1, gradNorm: 1 }) })),
    ).toMatchObject({
      reason: "negative_term",
    });
    expect(
      thrown(() =>
        probeLiveness([view(0.4)], { measure: () => ({ term: Number.NaN, gradNorm: 1 }) }),
      ),
    ).toMatchObject({
      reason: "non_finite",
    });
  });

  test("golden: inconclusive when the batches run out before the bound", () => {
    expect(probeLiveness([view(0), view(0)], { measure: klMeasure })).toEqual({
      status: "inconclusive",
      skipped: 2,
    });
    expect(probeLiveness([], { measure: klMeasure })).toEqual({
      status: "inconclusive",
      skipped: 0,
    });
  });

  test("rejects: a bound that is not a non-negative integer", () => {
    for (const maxDegenerate of [-1, 1.5, Number.NaN]) {
      expect(() => probeLiveness([view(0)], { measure: klMeasure, maxDegenerate })).toThrow(
        ConfigError,
      );
    }
    expect(
      thrown(() => probeLiveness([view(0)], { measure: klMeasure, maxDegenerate: 0 })),
    ).toMatchObject({
      reason: "degenerate_bound",
      batchIndex: 0,
    });
  });
});

describe("papoLivenessMeasure", () => {
  test("golden: papo is live on image-dependent batches and degenerate on image-invariant ones", () => {
    for (const config of [papoDLoss, papoGTrlLoss]) {
      const measure = papoLivenessMeasure(config);
      const flat = measure(view(0));
      expect(flat).toEqual({ term: 0, gradNorm: 0 });
      const live = measure(view(0.1));
      expect(live.term).toBeGreaterThan(0);
      expect(live.gradNorm).toBeGreaterThan(0);
      expect(probeLiveness([view(0), view(0.1)], { measure })).toMatchObject({
        status: "live",
        batchIndex: 1,
      });
      // At zero coefficient the extension is not live, whatever the image does.
      const zero = { ...config, perception: { ...config.perception, gamma: 0 } };
      expect(
        thrown(() =>
          probeLiveness(Array(30).fill(view(0.1)), { measure: papoLivenessMeasure(zero) }),
        ),
      ).toMatchObject({ reason: "degenerate_bound", batchIndex: 20 });
    }
  });

  test("rejects: trl's clamp at 0.2 saturating every token leaves a value without gradient", () => {
    // k3(2) = e^2 − 3 ≈ 4.39 > 0.2 at every token: clamped to 0.2, so the term is 0.2·γ·(5/6)
    // (trl's mean runs over all B·T = 6 positions, padding included) and its gradient is 0.
    const measure = papoLivenessMeasure(papoGTrlLoss);
    const m = measure(view(2));
    expect(m.term).toBeCloseTo(0.1 * 0.2 * (5 / 6), 15);
    expect(m.gradNorm).toBe(0);
    expect(thrown(() => probeLiveness([view(2)], { measure }))).toMatchObject({
      reason: "dead_gradient",
    });
  });
});
