/**
 * Enforces docs/derivations/advantages.md#group-normalization (batch scaling, unscorable rewards),
 * #singleton-groups and #whitening (the OpenRLHF and verl forms): the framework policies the group
 * estimators and the whitening take as options (issue 13, item 4).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  grpoAdvantages,
  reinforcePPAdvantages,
  rlooAdvantages,
  whiten,
} from "../../src/advantages/index.js";
import {
  ConfigError,
  MaskError,
  NonFiniteError,
  ShapeError,
  UnknownNameError,
} from "../../src/errors.js";
import { expectBitwise, expectClose, expectRejects, FC, groupedRewards } from "./_arbitraries.js";

describe("grpoAdvantages", () => {
  test("golden: batch scaling centres by the group mean and divides by the batch std", () => {
    // Groups [1, 3] and [2, 6]: μ_0 = 2, μ_1 = 4, centred [−1, 1, −2, 2]. Batch mean 12/4 = 3,
    // deviations [−2, 0, −1, 3], Σd² = 4 + 0 + 1 + 9 = 14, Bessel σ_batch = sqrt(14/3).
    const out = grpoAdvantages([1, 3, 2, 6], [0, 0, 1, 1], { scale: "batch" });
    const d = Math.sqrt(14 / 3) + 1e-4;
    expectBitwise(out, [-1 / d, 1 / d, -2 / d, 2 / d]);
    // Population σ: sqrt(14/4).
    const p = Math.sqrt(14 / 4) + 1e-4;
    expectBitwise(grpoAdvantages([1, 3, 2, 6], [0, 0, 1, 1], { scale: "batch", unbiased: false }), [
      -1 / p,
      1 / p,
      -2 / p,
      2 / p,
    ]);
  });

  test("identity: with one group, batch scaling is group scaling (bitwise)", () => {
    fc.assert(
      fc.property(groupedRewards(2, 6, 1), ({ rewards, groupIds }) => {
        expectBitwise(
          grpoAdvantages(rewards, groupIds, { scale: "batch" }),
          grpoAdvantages(rewards, groupIds, { scale: "std" }),
        );
      }),
      FC,
    );
  });

  test("golden: each singleton policy on a singleton group of reward 3", () => {
    // Group 0 = [1, 2]: μ = 1.5, σ = sqrt(0.5/1); group 1 = [3] alone.
    const r = [1, 2, 3];
    const g = [0, 0, 1];
    const s = Math.sqrt(0.5) + 1e-4;
    const head = [-0.5 / s, 0.5 / s];
    expectBitwise(grpoAdvantages(r, g, { singletons: "zero" }), [...head, 0]);
    expectBitwise(grpoAdvantages(r, g, { singletons: "raw" }), [...head, 3]);
    // verl: μ = 0, σ = 1, so (3 − 0)/(1 + ε).
    expectBitwise(grpoAdvantages(r, g, { singletons: "unit" }), [...head, 3 / (1 + 1e-4)]);
    expectBitwise(grpoAdvantages(r, g, { singletons: "unit", eps: 1e-6 }).subarray(2), [
      3 / (1 + 1e-6),
    ]);
    // Without std scaling: unit is the raw reward (verl's Dr.GRPO), unset is the own mean (0).
    expectBitwise(grpoAdvantages(r, g, { scale: "none", singletons: "unit" }), [-0.5, 0.5, 3]);
    expectBitwise(grpoAdvantages(r, g, { scale: "none" }), [-0.5, 0.5, 0]);
    expectRejects(
      () => grpoAdvantages(r, g, { singletons: "raise", scale: "none" }),
      ShapeError,
      "E_SHAPE",
      "groupIds",
    );
    expectRejects(() => grpoAdvantages(r, g), ShapeError, "E_SHAPE", "groupIds");
  });

  test("golden: unscorable rewards are left out of every statistic and get 0", () => {
    // TRL: group 0 = [1, NaN, 3] is scored on [1, 3] (μ = 2, σ = sqrt(2)); group 1 is all NaN.
    const r = [1, Number.NaN, 3, Number.NaN, Number.NaN];
    const g = [0, 0, 0, 1, 1];
    const s = Math.SQRT2 + 1e-4;
    const out = grpoAdvantages(r, g, { nanRewards: "unscorable", singletons: "zero" });
    expectBitwise(out, [-1 / s, 0, 1 / s, 0, 0]);
    // A group with one scorable reward is a singleton: TRL's nan-aware std is NaN there, so 0.
    expectBitwise(
      grpoAdvantages([1, Number.NaN, 3, 5], [0, 0, 1, 1], {
        nanRewards: "unscorable",
        singletons: "zero",
      }),
      [0, 0, -1 / s, 1 / s],
    );
    expectRejects(() => grpoAdvantages(r, g), NonFiniteError, "E_NONFINITE", "rewards");
    expectRejects(
      () =>
        grpoAdvantages([1, Number.POSITIVE_INFINITY, 3], [0, 0, 0], { nanRewards: "unscorable" }),
      NonFiniteError,
      "E_NONFINITE",
      "rewards",
    );
  });

  test("rejects: unknown policies with a did-you-mean, and batch scaling without two scorable rewards", () => {
    expect(() => grpoAdvantages([1, 2], [0, 0], { singletons: "raws" as never })).toThrow(
      /config\.singletons.*did you mean "raw"/s,
    );
    expectRejects(
      () => grpoAdvantages([1, 2], [0, 0], { nanRewards: "skip" as never }),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "config.nanRewards",
    );
    expectRejects(
      () => grpoAdvantages([1, Number.NaN], [0, 1], { scale: "batch", nanRewards: "unscorable" }),
      ShapeError,
      "E_SHAPE",
      "rewards",
    );
    expectRejects(
      () => grpoAdvantages([2, 2, 2], [0, 0, 1], { scale: "batch", eps: 0 }),
      ConfigError,
      "E_CONFIG",
      "config.eps",
    );
  });
});

describe("rlooAdvantages", () => {
  test("golden: singletons raw keep R and zero give 0, the other groups unchanged bitwise", () => {
    const head = rlooAdvantages([1, 3], [0, 0]); // [1 − 3, 3 − 1] = [−2, 2]
    expectBitwise(head, [-2, 2]);
    expectBitwise(rlooAdvantages([1, 3, 5], [0, 0, 1], { singletons: "raw" }), [...head, 5]);
    expectBitwise(rlooAdvantages([1, 3, 5], [0, 0, 1], { singletons: "zero" }), [...head, 0]);
    expectRejects(() => rlooAdvantages([1, 3, 5], [0, 0, 1]), ShapeError, "E_SHAPE", "groupIds");
    expectRejects(
      () => rlooAdvantages([1, 3, 5], [0, 0, 1], { singletons: "unit" as never }),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "options.singletons",
    );
  });
});

describe("reinforcePPAdvantages", () => {
  test("golden: a singleton keeps its raw reward with singletons raw", () => {
    // Group [1, 3] centres to [−1, 1]; the singleton [5] gives 0 (own mean) or 5 (verl: mean 0).
    expectBitwise(reinforcePPAdvantages([1, 3, 5], [0, 0, 1], { batchNorm: false }), [-1, 1, 0]);
    expectBitwise(
      reinforcePPAdvantages([1, 3, 5], [0, 0, 1], { batchNorm: false, singletons: "raw" }),
      [-1, 1, 5],
    );
    // With batch norm: a = [−1, 1, 5], ā = 5/3, Σ(a − ā)² = 64/9 + 4/9 + 100/9 = 168/9, B − 1 = 2.
    const out = reinforcePPAdvantages([1, 3, 5], [0, 0, 1], { batchNorm: true, singletons: "raw" });
    const sd = Math.sqrt(168 / 9 / 2) + 1e-8;
    expectClose(out, [-1 / sd, 1 / sd, 5 / sd], 1e-15);
  });
});

describe("whiten", () => {
  test("golden: OpenRLHF's biased floor form and centring only on [1, 2, 3, 4]", () => {
    // μ = 10/4 = 2.5; deviations [−1.5, −0.5, 0.5, 1.5]; Σd² = 5; biased σ² = 5/4 = 1.25 > 1e-8.
    const x = [[1, 2, 3, 4]];
    const m = [[true, true, true, true]];
    const o = whiten(x, m, { unbiased: false, epsForm: "floor" });
    const k = 1 / Math.sqrt(1.25);
    expectBitwise(o.data, [-1.5 * k, -0.5 * k, 0.5 * k, 1.5 * k]);
    // no_std_norm: only centred; one token suffices.
    expectBitwise(whiten(x, m, { scale: false }).data, [-1.5, -0.5, 0.5, 1.5]);
    expectBitwise(whiten([[7]], [[true]], { scale: false }).data, [0]);
    // The floor binds: x = [0, 2e-5], μ = 1e-5, σ² = 1e-10 < 1e-8 → (x − μ)·1e4 = ±0.1.
    expectClose(
      whiten([[0, 2e-5]], [[true, true]], { unbiased: false, epsForm: "floor" }).data,
      [-0.1, 0.1],
      1e-12,
    );
  });

  test("golden: verl's count eps divides both means by n + 1e-8", () => {
    // verl masked_mean: Σ/(n + 1e-8); masked_var: mean of squared deviations, × n/(n − 1).
    const x = [[1, 2, 3, 4]];
    const m = [[true, true, true, true]];
    const n = 4 + 1e-8;
    const mu = 10 / n;
    const dev = [1, 2, 3, 4].map((v) => v - mu);
    const ss = dev.reduce((a, d) => a + d * d, 0);
    const inv = 1 / Math.sqrt((ss / n) * (4 / 3) + 1e-8);
    expectClose(
      whiten(x, m, { countEps: 1e-8 }).data,
      dev.map((d) => d * inv),
      1e-15,
    );
    // It moves the result by ~1e-9 relative: the exact form differs.
    const exact = whiten(x, m).data;
    expect(Math.abs((exact[0] as number) - (dev[0] as number) * inv)).toBeGreaterThan(1e-10);
  });

  test("rejects: an unknown eps form, and one token under the Bessel form", () => {
    expectRejects(
      () => whiten([[1, 2]], [[true, true]], { epsForm: "clamp" as never }),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "options.epsForm",
    );
    expectRejects(() => whiten([[1]], [[true]]), MaskError, "E_MASK", "responseMask");
    expectBitwise(
      whiten([[1, 5]], [[true, false]], { unbiased: false, epsForm: "floor" }).data,
      [0, 0],
    );
  });
});
