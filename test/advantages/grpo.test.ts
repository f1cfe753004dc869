/**
 * Enforces docs/derivations/advantages.md#group-normalization and #difficulty-bias:
 * GRPO / Dr.GRPO group normalization (polgrad spec §5.1).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  DEFAULT_GROUP_NORM,
  type GroupNormConfig,
  grpoAdvantages,
} from "../../src/advantages/index.js";
import { ConfigError, ShapeError, UnknownNameError } from "../../src/errors.js";
import {
  expectBitwise,
  expectClose,
  expectRejects,
  FC,
  type Grouped,
  groupedRewards,
} from "./_arbitraries.js";

/** Naive per-group centering (plain left-to-right sums), the Dr.GRPO oracle. */
function centeredOracle({ rewards, groupIds }: Grouped): number[] {
  return rewards.map((r, i) => {
    const g = rewards.filter((_, j) => groupIds[j] === groupIds[i]);
    return r - g.reduce((s, x) => s + x, 0) / g.length;
  });
}

function groupStds({ rewards, groupIds }: Grouped): number[] {
  return [...new Set(groupIds)].map((id) => {
    const g = rewards.filter((_, j) => groupIds[j] === id);
    const mu = g.reduce((s, x) => s + x, 0) / g.length;
    return Math.sqrt(g.reduce((s, x) => s + (x - mu) ** 2, 0) / (g.length - 1));
  });
}

describe("grpoAdvantages", () => {
  test("golden: one group [1, 2, 3] gives [-1, 0, 1] / (1 + 1e-4)", () => {
    // μ = 6/3 = 2; centered = [−1, 0, 1]; Σd² = 1 + 0 + 1 = 2; Bessel: 2/(3 − 1) = 1; σ = 1;
    // A = centered / (σ + eps) = [−1, 0, 1] / 1.0001.
    const out = grpoAdvantages([1, 2, 3], [0, 0, 0]);
    expectBitwise(out, [-1 / (1 + 1e-4), 0 / (1 + 1e-4), 1 / (1 + 1e-4)]);
    expectBitwise(grpoAdvantages([1, 2, 3], [0, 0, 0], DEFAULT_GROUP_NORM), out);
  });

  test("golden: unbiased false divides by the population std sqrt(2/3)", () => {
    // Σd² = 2 as above; population variance 2/3; σ = sqrt(2/3) ≈ 0.8165; A = [−1, 0, 1]/(σ + 1e-4).
    const s = Math.sqrt(2 / 3) + 1e-4;
    expectBitwise(grpoAdvantages([1, 2, 3], [0, 0, 0], { unbiased: false }), [
      -1 / s,
      0 / s,
      1 / s,
    ]);
  });

  test("golden: center false divides the raw rewards by sigma + eps", () => {
    // σ = 1 from the *centered* deviations even though the output is not centered:
    // A = [1, 2, 3] / 1.0001.
    const d = 1 + 1e-4;
    expectBitwise(grpoAdvantages([1, 2, 3], [0, 0, 0], { center: false }), [1 / d, 2 / d, 3 / d]);
  });

  test("golden: center false with scale none returns a copy of the rewards", () => {
    const rewards = new Float64Array([1.5, -2, 7]);
    const out = grpoAdvantages(rewards, [3, 3, 9], { center: false, scale: "none" });
    expectBitwise(out, rewards);
    expect(out).not.toBe(rewards);
  });

  test("golden: interleaved labels [7, 42, 7, 42] give [-1, -2, 1, 2] like labels [0, 1, 0, 1]", () => {
    // group 7 = {1, 3}: μ = 2 → [−1, 1]; group 42 = {2, 6}: μ = 4 → [−2, 2]; in batch order
    // [1 − 2, 2 − 4, 3 − 2, 6 − 4] = [−1, −2, 1, 2].
    const out = grpoAdvantages([1, 2, 3, 6], [7, 42, 7, 42], { scale: "none" });
    expectBitwise(out, [-1, -2, 1, 2]);
    expectBitwise(
      grpoAdvantages([1, 2, 3, 6], Int32Array.from([0, 1, 0, 1]), { scale: "none" }),
      out,
    );
  });

  test("golden: difficulty bias, std scaling weights each group by exactly 1/(sigma_g + eps)", () => {
    // group 0 = [1, −1]: μ = 0, Σd² = 2, Bessel 2/1 → σ₀ = sqrt(2);
    // group 1 = [1, −1, 1, −1]: μ = 0, Σd² = 4, Bessel 4/3 → σ₁ = sqrt(4/3).
    // Dr.GRPO (scale none) gives ±1 in both groups; GRPO divides group 0 by sqrt(2) + 1e-4 and
    // group 1 by sqrt(4/3) + 1e-4: the same centered rewards get different weights.
    const rewards = [1, -1, 1, -1, 1, -1];
    const ids = [0, 0, 1, 1, 1, 1];
    const drGrpo = grpoAdvantages(rewards, ids, { scale: "none" });
    const grpo = grpoAdvantages(rewards, ids);
    expectBitwise(drGrpo, rewards);
    const s0 = Math.sqrt(2) + 1e-4;
    const s1 = Math.sqrt(4 / 3) + 1e-4;
    expectBitwise(grpo, [1 / s0, -1 / s0, 1 / s1, -1 / s1, 1 / s1, -1 / s1]);
    expectBitwise(drGrpo.subarray(0, 2), drGrpo.subarray(2, 4));
    expect(grpo[0]).not.toBe(grpo[2]);
  });

  test("golden: a singleton group gets 0 under scale none", () => {
    // group 0 = [1, 2]: μ = 1.5 → [−0.5, 0.5]; group 1 = [3]: 3 − 3 = 0.
    expectBitwise(grpoAdvantages([1, 2, 3], [0, 0, 1], { scale: "none" }), [-0.5, 0.5, 0]);
  });

  test("golden: a zero-spread group gets 0 under scale std", () => {
    // group 0 = [4, 4]: centered [0, 0], σ = 0, A = 0/(0 + 1e-4) = 0; group 1 = [0, 2]: μ = 1,
    // Σd² = 2, σ = sqrt(2).
    const s = Math.sqrt(2) + 1e-4;
    expectBitwise(grpoAdvantages([4, 4, 0, 2], [0, 0, 1, 1]), [0, 0, -1 / s, 1 / s]);
  });

  for (const scale of ["std", "none"] as const) {
    test(`property: shift invariance under scale ${scale}`, () => {
      const prop = fc.property(
        groupedRewards(),
        fc.double({ min: -4, max: 4, noNaN: true }),
        (g, shift) => {
          const base = grpoAdvantages(g.rewards, g.groupIds, { scale });
          const shifted = grpoAdvantages(
            g.rewards.map((r) => r + shift),
            g.groupIds,
            { scale },
          );
          expectClose(shifted, base, 1e-9, 1e-9);
        },
      );
      fc.assert(prop, FC);
    });
  }

  test("property: scale none is scale-equivariant", () => {
    const prop = fc.property(
      groupedRewards(),
      fc.double({ min: 0.25, max: 4, noNaN: true }),
      (g, a) => {
        const base = grpoAdvantages(g.rewards, g.groupIds, { scale: "none" });
        const scaled = grpoAdvantages(
          g.rewards.map((r) => a * r),
          g.groupIds,
          { scale: "none" },
        );
        expectClose(
          scaled,
          base.map((x) => a * x),
          1e-9,
          1e-9,
        );
      },
    );
    fc.assert(prop, FC);
  });

  test("property: scale std is scale-invariant at eps 0", () => {
    const prop = fc.property(
      groupedRewards(),
      fc.double({ min: 0.25, max: 4, noNaN: true }),
      (g, a) => {
        fc.pre(groupStds(g).every((s) => s > 1e-2));
        const config: Partial<GroupNormConfig> = { eps: 0 };
        const base = grpoAdvantages(g.rewards, g.groupIds, config);
        const scaled = grpoAdvantages(
          g.rewards.map((r) => a * r),
          g.groupIds,
          config,
        );
        expectClose(scaled, base, 1e-9, 1e-9);
      },
    );
    fc.assert(prop, FC);
  });

  test("property: scale none equals per-group centering", () => {
    const prop = fc.property(groupedRewards(1, 4), (g) => {
      expectClose(
        grpoAdvantages(g.rewards, g.groupIds, { scale: "none" }),
        centeredOracle(g),
        0,
        1e-12,
      );
    });
    fc.assert(prop, FC);
  });

  test("property: group advantages sum to 0 under both scales", () => {
    const prop = fc.property(groupedRewards(), (g) => {
      for (const scale of ["std", "none"] as const) {
        const out = grpoAdvantages(g.rewards, g.groupIds, { scale });
        for (const id of new Set(g.groupIds)) {
          const sum = g.groupIds.reduce(
            (s, gid, i) => (gid === id ? s + (out[i] as number) : s),
            0,
          );
          expect(Math.abs(sum)).toBeLessThanOrEqual(1e-10);
        }
      }
    });
    fc.assert(prop, FC);
  });

  test("rejects: unknown config.scale", () => {
    const config = { scale: "stdev" } as unknown as GroupNormConfig;
    expectRejects(
      () => grpoAdvantages([1, 2], [0, 0], config),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "config.scale",
    );
  });

  test("rejects: a singleton group under scale std, whatever unbiased is", () => {
    for (const unbiased of [true, false]) {
      expectRejects(
        () => grpoAdvantages([1, 2, 3], [0, 0, 1], { unbiased }),
        ShapeError,
        "E_SHAPE",
        "groupIds",
      );
    }
  });

  test("rejects: non-boolean config.center and config.unbiased", () => {
    const center = { center: 1 } as unknown as GroupNormConfig;
    const unbiased = { unbiased: "yes" } as unknown as GroupNormConfig;
    expectRejects(
      () => grpoAdvantages([1, 2], [0, 0], center),
      ConfigError,
      "E_CONFIG",
      "config.center",
    );
    expectRejects(
      () => grpoAdvantages([1, 2], [0, 0], unbiased),
      ConfigError,
      "E_CONFIG",
      "config.unbiased",
    );
  });

  test("rejects: negative or non-finite config.eps", () => {
    for (const eps of [-1e-4, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectRejects(
        () => grpoAdvantages([1, 2], [0, 0], { eps }),
        ConfigError,
        "E_CONFIG",
        "config.eps",
      );
    }
  });

  test("rejects: config.eps 0 with a zero-spread group under scale std", () => {
    // σ = 0 and eps = 0 would give 0/0 = NaN (polgrad returns NaN; polgrad-ts raises).
    expectRejects(
      () => grpoAdvantages([4, 4, 1, 2], [0, 0, 1, 1], { eps: 0 }),
      ConfigError,
      "E_CONFIG",
      "config.eps",
    );
  });

  test("rejects: a config that is not an object", () => {
    const config = null as unknown as GroupNormConfig;
    expectRejects(() => grpoAdvantages([1, 2], [0, 0], config), ConfigError, "E_CONFIG", "config");
  });
});
