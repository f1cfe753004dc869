/**
 * Enforces docs/derivations/advantages.md#rloo: RLOO leave-one-out advantages (polgrad spec §5.2).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { grpoAdvantages, rlooAdvantages } from "../../src/advantages/index.js";
import { ShapeError } from "../../src/errors.js";
import {
  dyadicGroupedRewards,
  expectBitwise,
  expectClose,
  expectRejects,
  FC,
  type Grouped,
  groupedRewards,
} from "./_arbitraries.js";

/** Evaluate a per-element formula f(r_i, S_g, G_g) with S_g a plain left-to-right group sum. */
function form(
  { rewards, groupIds }: Grouped,
  f: (r: number, S: number, G: number) => number,
): number[] {
  return rewards.map((r, i) => {
    const g = rewards.filter((_, j) => groupIds[j] === groupIds[i]);
    return f(
      r,
      g.reduce((s, x) => s + x, 0),
      g.length,
    );
  });
}

const looForm = (r: number, S: number, G: number): number => r - (S - r) / (G - 1);
const scaledForm = (r: number, S: number, G: number): number => (G * r - S) / (G - 1);
const meanForm = (r: number, S: number, G: number): number => (G / (G - 1)) * (r - S / G);

describe("rlooAdvantages", () => {
  test("golden: groups [1, 3] and [2, 4, 6] give [-2, 2] and [-3, 0, 3]", () => {
    // group 0 = [1, 3]: A = [1 − 3/1, 3 − 1/1] = [−2, 2];
    // group 1 = [2, 4, 6]: A = [2 − (4 + 6)/2, 4 − (2 + 6)/2, 6 − (2 + 4)/2] = [−3, 0, 3].
    expectBitwise(rlooAdvantages([1, 3, 2, 4, 6], [0, 0, 1, 1, 1]), [-2, 2, -3, 0, 3]);
  });

  test("golden: the mean form differs from the leave-one-out form by one ulp on [1/8, 1/8, 1/4]", () => {
    // S = 1/2, G = 3. Leave-one-out: 1/8 − (1/2 − 1/8)/2 = 1/8 − 3/16 = −1/16 exactly.
    // Mean form: fl(S/3) = fl(1/6) is rounded, so (3/2)·(1/8 − fl(1/6)) = −1/16 + 2⁻⁵⁶: the
    // identity A = (G/(G − 1))(r − μ) holds in exact arithmetic, not bitwise in float64.
    const out = rlooAdvantages([1 / 8, 1 / 8, 1 / 4], [0, 0, 0]);
    expectBitwise(out, [-1 / 16, -1 / 16, 1 / 8]);
    expect(meanForm(1 / 8, 1 / 2, 3)).toBe(-1 / 16 + 2 ** -56);
  });

  test("identity: leave-one-out form equals (G·r − S)/(G − 1) bitwise on dyadic rewards with G − 1 in {1, 2, 4}", () => {
    // k/8 rewards with |k| ≤ 64 and G ≤ 5: S, S − r, G·r − S are exact, and dividing by
    // G − 1 ∈ {1, 2, 4} is exact, so both forms are the exact value.
    const prop = fc.property(dyadicGroupedRewards(), (g) => {
      const out = rlooAdvantages(g.rewards, g.groupIds);
      expectBitwise(out, form(g, looForm));
      expectBitwise(out, form(g, scaledForm));
      expectClose(out, form(g, meanForm), 0, 1e-12);
    });
    fc.assert(prop, FC);
  });

  test("property: equals (G/(G − 1))·(r − mean) to 1e-12 on generic rewards", () => {
    const prop = fc.property(groupedRewards(), (g) => {
      const out = rlooAdvantages(g.rewards, g.groupIds);
      expectClose(out, form(g, meanForm), 1e-12, 1e-12);
      expectClose(out, form(g, looForm), 1e-12, 1e-12);
    });
    fc.assert(prop, FC);
  });

  test("property: group advantages sum to 0", () => {
    // Σ_i A_i = (G/(G − 1))·(S − G·μ) = 0 in exact arithmetic.
    const prop = fc.property(groupedRewards(), (g) => {
      const out = rlooAdvantages(g.rewards, g.groupIds);
      for (const id of new Set(g.groupIds)) {
        const sum = g.groupIds.reduce((s, gid, i) => (gid === id ? s + (out[i] as number) : s), 0);
        expect(Math.abs(sum)).toBeLessThanOrEqual(1e-10);
      }
    });
    fc.assert(prop, FC);
  });

  test("identity: per-group centering equals ((G − 1)/G)·RLOO", () => {
    const prop = fc.property(groupedRewards(), (g) => {
      const rloo = rlooAdvantages(g.rewards, g.groupIds);
      const centered = grpoAdvantages(g.rewards, g.groupIds, { scale: "none" });
      const sizes = g.groupIds.map((id) => g.groupIds.filter((x) => x === id).length);
      expectClose(
        centered,
        Array.from(rloo, (a, i) => (((sizes[i] as number) - 1) / (sizes[i] as number)) * a),
        1e-12,
        1e-12,
      );
    });
    fc.assert(prop, FC);
  });

  test("rejects: a singleton group", () => {
    expectRejects(() => rlooAdvantages([1, 2, 3], [5, 5, 9]), ShapeError, "E_SHAPE", "groupIds");
  });
});
