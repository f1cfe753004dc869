/**
 * Enforces docs/derivations/advantages.md#mean-baselines: REINFORCE++ and REINFORCE++-baseline
 * advantages (polgrad spec §5.3).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  DEFAULT_REINFORCE_PP_EPS,
  grpoAdvantages,
  type ReinforcePPConfig,
  reinforcePPAdvantages,
} from "../../src/advantages/index.js";
import { ConfigError, ShapeError } from "../../src/errors.js";
import { expectBitwise, expectClose, expectRejects, FC, groupedRewards } from "./_arbitraries.js";

describe("reinforcePPAdvantages", () => {
  test("golden: global baseline on [1, 2, 3, 6] gives [-2, -1, 0, 3]", () => {
    // mean = 12/4 = 3; A = r − 3.
    expectBitwise(reinforcePPAdvantages([1, 2, 3, 6], null, { batchNorm: false }), [-2, -1, 0, 3]);
  });

  test("golden: group baseline on [1, 3 | 2, 4, 6] gives [-1, 1, -2, 0, 2]", () => {
    // group 0 = [1, 3]: mean 2 → [−1, 1]; group 1 = [2, 4, 6]: mean 4 → [−2, 0, 2].
    const out = reinforcePPAdvantages([1, 3, 2, 4, 6], [0, 0, 1, 1, 1], { batchNorm: false });
    expectBitwise(out, [-1, 1, -2, 0, 2]);
  });

  test("golden: batch norm on [1, 2, 3, 6] divides [-2, -1, 0, 3] by sqrt(14/3) + 1e-8", () => {
    // a = [−2, −1, 0, 3], mean(a) = 0, Σ(a − 0)² = 4 + 1 + 0 + 9 = 14, Bessel: 14/3,
    // s = sqrt(14/3) ≈ 2.1602; A = a/(s + 1e-8) (a is not re-centered).
    const d = Math.sqrt(14 / 3) + 1e-8;
    const out = reinforcePPAdvantages([1, 2, 3, 6], null, { batchNorm: true });
    expectBitwise(out, [-2 / d, -1 / d, 0 / d, 3 / d]);
    expect(DEFAULT_REINFORCE_PP_EPS).toBe(1e-8);
  });

  test("golden: batch norm after a group baseline uses the global std of the grouped advantages", () => {
    // group baseline as above: a = [−1, 1, −2, 0, 2], mean(a) = 0, Σa² = 1 + 1 + 4 + 0 + 4 = 10,
    // Bessel: 10/4 = 2.5; A = a/(sqrt(2.5) + 0.5) with eps = 0.5.
    const d = Math.sqrt(2.5) + 0.5;
    const out = reinforcePPAdvantages([1, 3, 2, 4, 6], [0, 0, 1, 1, 1], {
      batchNorm: true,
      eps: 0.5,
    });
    expectBitwise(out, [-1 / d, 1 / d, -2 / d, 0 / d, 2 / d]);
  });

  test("golden: a singleton group gets 0", () => {
    // group 0 = [5] → 0; group 1 = [1, 3]: mean 2 → [−1, 1].
    expectBitwise(reinforcePPAdvantages([5, 1, 3], [0, 1, 1], { batchNorm: false }), [0, -1, 1]);
  });

  test("identity: grouped without batch norm equals grpoAdvantages with scale none bitwise", () => {
    const prop = fc.property(groupedRewards(1, 4), (g) => {
      const rpp = reinforcePPAdvantages(g.rewards, g.groupIds, { batchNorm: false });
      expectBitwise(rpp, grpoAdvantages(g.rewards, g.groupIds, { scale: "none" }));
    });
    fc.assert(prop, FC);
  });

  test("property: batch norm output has sample std s/(s + eps) and keeps the sign of each advantage", () => {
    const prop = fc.property(groupedRewards(1, 4), fc.boolean(), (g, grouped) => {
      const ids = grouped ? g.groupIds : null;
      fc.pre(g.rewards.length >= 2);
      const a = reinforcePPAdvantages(g.rewards, ids, { batchNorm: false });
      const out = reinforcePPAdvantages(g.rewards, ids, { batchNorm: true, eps: 0.1 });
      const n = a.length;
      const mean = (v: ArrayLike<number>): number => Array.from(v).reduce((s, x) => s + x, 0) / n;
      const std = (v: ArrayLike<number>): number => {
        const m = mean(v);
        return Math.sqrt(Array.from(v).reduce((s, x) => s + (x - m) ** 2, 0) / (n - 1));
      };
      const s = std(a);
      expectClose([std(out)], [s / (s + 0.1)], 1e-12, 1e-12);
      for (let i = 0; i < n; i++)
        expect(Math.sign(out[i] as number)).toBe(Math.sign(a[i] as number));
    });
    fc.assert(prop, FC);
  });

  test("rejects: batch norm with a single reward", () => {
    expectRejects(
      () => reinforcePPAdvantages([2], null, { batchNorm: true }),
      ShapeError,
      "E_SHAPE",
      "rewards",
    );
  });

  test("rejects: non-boolean config.batchNorm", () => {
    const config = { batchNorm: "true" } as unknown as ReinforcePPConfig;
    expectRejects(
      () => reinforcePPAdvantages([1, 2], null, config),
      ConfigError,
      "E_CONFIG",
      "config.batchNorm",
    );
  });

  test("rejects: negative or non-finite config.eps", () => {
    for (const eps of [-1, Number.NaN, Number.NEGATIVE_INFINITY]) {
      expectRejects(
        () => reinforcePPAdvantages([1, 2], null, { batchNorm: true, eps }),
        ConfigError,
        "E_CONFIG",
        "config.eps",
      );
    }
  });

  test("rejects: config.eps 0 with batch norm when every advantage is equal", () => {
    // a = [0, 0, 0]: s = 0 and eps = 0 would give 0/0 = NaN (polgrad-ts raises).
    expectRejects(
      () => reinforcePPAdvantages([3, 3, 3], null, { batchNorm: true, eps: 0 }),
      ConfigError,
      "E_CONFIG",
      "config.eps",
    );
  });

  test("rejects: a config that is not an object", () => {
    const config = undefined as unknown as ReinforcePPConfig;
    expectRejects(
      () => reinforcePPAdvantages([1, 2], null, config),
      ConfigError,
      "E_CONFIG",
      "config",
    );
  });
});
