/** Enforces docs/derivations/kl.md#reverse-kl-gradient-surrogate (spec §4.5). */
import { describe, expect, test } from "vitest";
import { AGGREGATIONS, klLoss, reverseKlGradSurrogate } from "../../src/index.js";

describe("reverseKlGradSurrogate", () => {
  test("golden: one token gives exactly -0.5", () => {
    // sg[lp − ref]·lp = (−0.5 + 1.5)·(−0.5) = −0.5 with weight 1; gradient lp − ref = 1.
    const r = reverseKlGradSurrogate([[-0.5]], [[-1.5]], "token_mean", { responseMask: [[true]] });
    expect(r.loss).toBe(-0.5);
    expect(r.gradLogprobs.data[0]).toBe(1);
  });

  test("identity: gradient equals the k2 kl loss gradient bitwise", () => {
    // Both are w·(lp − ref): k2's derivative −δ = −(ref − lp) is lp − ref exactly in IEEE arithmetic.
    const lp = [
      [-0.37, -1.91, -2.2],
      [-0.13, -4.4, 123],
    ];
    const ref = [
      [-1.05, -0.77, -2.9],
      [-0.6, -3.3, Number.NaN],
    ];
    const m = [
      [true, true, true],
      [true, true, false],
    ];
    for (const agg of AGGREGATIONS) {
      const a = reverseKlGradSurrogate(lp, ref, agg, { responseMask: m, normLen: 7 }).gradLogprobs
        .data;
      const b = klLoss(lp, ref, "k2", agg, { responseMask: m, normLen: 7 }).gradLogprobs.data;
      expect(Array.from(a).every((x, i) => Object.is(x, b[i]))).toBe(true);
    }
  });
});
