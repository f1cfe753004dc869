/** Enforces docs/derivations/kl.md#estimators: goldens and masking of klEstimate (spec §4.2). */
import { describe, expect, test } from "vitest";
import { klEstimate, NonFiniteError, toRows, UnknownNameError } from "../../src/index.js";

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

  test("rejects: an unknown estimator and a non-finite response position", () => {
    expect(() => klEstimate(lp, ref, "k4" as "k1", { responseMask: m })).toThrow(UnknownNameError);
    expect(() => klEstimate([[Number.NaN, -1]], ref, "k1", { responseMask: m })).toThrow(
      NonFiniteError,
    );
  });
});
