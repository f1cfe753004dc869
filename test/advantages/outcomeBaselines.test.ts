/**
 * Enforces docs/derivations/advantages.md#opo, #pass-at-k, #gpg and #remax: verl's outcome
 * estimators beyond GRPO and RLOO (issue 13, item 4).
 */
import { describe, expect, test } from "vitest";
import {
  gpgAdvantages,
  looAdvantages,
  opoAdvantages,
  passAtKAdvantages,
  remaxAdvantages,
} from "../../src/advantages/index.js";
import { ConfigError, ShapeError } from "../../src/errors.js";
import { expectBitwise, expectRejects } from "./_arbitraries.js";

describe("opoAdvantages", () => {
  test("golden: rewards [1, 0] with lengths [3, 1] give the baseline 3/4", () => {
    // b = (3·1 + 1·0)/(3 + 1) = 0.75; A = [1 − 0.75, 0 − 0.75].
    expectBitwise(opoAdvantages([1, 0], [0, 0], [3, 1]), [0.25, -0.75]);
    // A singleton: verl's b = 0 keeps the raw reward.
    expectBitwise(
      opoAdvantages([1, 0, 2], [0, 0, 1], [3, 1, 5], { singletons: "raw" }),
      [0.25, -0.75, 2],
    );
    expectRejects(
      () => opoAdvantages([1, 0, 2], [0, 0, 1], [3, 1, 5]),
      ShapeError,
      "E_SHAPE",
      "groupIds",
    );
    expectRejects(() => opoAdvantages([1, 0], [0, 0], [3, 0]), ConfigError, "E_CONFIG", "lengths");
    expectRejects(() => opoAdvantages([1, 0], [0, 0], [3]), ShapeError, "E_SHAPE", "lengths");
  });
});

describe("passAtKAdvantages", () => {
  test("golden: group [1, 3, 2] credits only the 3, by (3 − 2)/(1 + 1e-6)", () => {
    // μ = 2, Σd² = 1 + 1 + 0 = 2, Bessel σ = sqrt(2/2) = 1; margin 3 − 2 = 1.
    expectBitwise(passAtKAdvantages([1, 3, 2], [0, 0, 0]), [0, 1 / (1 + 1e-6), 0]);
    expectBitwise(passAtKAdvantages([1, 3, 2], [0, 0, 0], { scale: "none" }), [0, 1, 0]);
    // A tie at the top: margin 0, so every advantage is 0.
    expectBitwise(passAtKAdvantages([3, 3, 1], [0, 0, 0]), [0, 0, 0]);
    expectRejects(() => passAtKAdvantages([1, 3, 2], [0, 0, 1]), ShapeError, "E_SHAPE", "groupIds");
  });
});

describe("gpgAdvantages", () => {
  test("golden: rewards [1, 0, 0, 0] in two groups give alpha 4 times the centred rewards", () => {
    // One non-zero reward of B = 4: α = 4/1; group 0 centred [0.5, −0.5], group 1 [0, 0].
    expectBitwise(gpgAdvantages([1, 0, 0, 0], [0, 0, 1, 1]), [2, -2, 0, 0]);
    // All rewards 0: α = 4/max(0, 1) = 4, advantages 0.
    expectBitwise(gpgAdvantages([0, 0], [0, 0]), [0, 0]);
    // verl's singleton: μ = 0, so α·r; α = 3/2 here.
    expectBitwise(gpgAdvantages([1, 0, 2], [0, 0, 1], { singletons: "raw" }), [0.75, -0.75, 3]);
  });
});

describe("looAdvantages", () => {
  test("golden: group [1, 2, 4, 9] takes each member's baseline and std from the other three", () => {
    // i = 0: others [2, 4, 9], μ = 5, deviations [−3, −1, 4], Σd² = 26, σ = sqrt(26/2) = sqrt(13):
    // A = (1 − 5)/(sqrt(13) + 1e-6). The others likewise, from their own three.
    const r = [1, 2, 4, 9];
    const expected = r.map((ri, i) => {
      const others = r.filter((_, j) => j !== i);
      const mu = others.reduce((a, b) => a + b, 0) / 3;
      const sd = Math.sqrt(others.reduce((a, b) => a + (b - mu) ** 2, 0) / 2);
      return (ri - mu) / (sd + 1e-6);
    });
    expect(expected[0]).toBe(-4 / (Math.sqrt(13) + 1e-6));
    const out = looAdvantages(r, [0, 0, 0, 0]);
    expected.forEach((e, i) => expect(out[i]).toBeCloseTo(e, 14));
    // Two members: the other's std is 0, so no division: [3 − 5, 5 − 3]; a singleton gets 0.
    expectBitwise(looAdvantages([3, 5, 7], [0, 0, 1]), [-2, 2, 0]);
    // Equal others: σ = 0, no sharpening: [2, 2, 5] → 5 − 2 = 3 for the last, 2 − 3.5 for the rest.
    expectBitwise(looAdvantages([2, 2, 5], [0, 0, 0]).subarray(2), [3]);
    expectBitwise(looAdvantages(r, [0, 0, 0, 0], { scale: "none" }), [
      1 - 5,
      2 - 14 / 3,
      4 - 4,
      9 - 7 / 3,
    ]);
  });
});

describe("remaxAdvantages", () => {
  test("golden: rewards [0, 0, 2] with baseline 0.5 give [1.5, 1.5, 1.5]", () => {
    // Suffix sums of [0, 0, 2] are [2, 2, 2]; minus b = 0.5; padding (NaN reward) stays 0.
    const out = remaxAdvantages([[0, 0, 2, Number.NaN]], [[true, true, true, false]], [0.5]);
    expectBitwise(out.data, [1.5, 1.5, 1.5, 0]);
    expect(() => remaxAdvantages([[1]], [[true]], [0.5, 1])).toThrow(/remaxAdvantages.*baselines/s);
    expect(() => remaxAdvantages([[Number.NaN]], [[true]], [0.5])).toThrow(
      /remaxAdvantages.*tokenRewards/s,
    );
  });
});
