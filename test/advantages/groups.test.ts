/**
 * Enforces docs/derivations/advantages.md#grouped-inputs: the validation and partition shared by
 * grpoAdvantages, rlooAdvantages and reinforcePPAdvantages (polgrad spec §5, preamble).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { partition, singletonIds } from "../../src/advantages/groups.js";
import {
  type GroupIdsLike,
  grpoAdvantages,
  reinforcePPAdvantages,
  rlooAdvantages,
} from "../../src/advantages/index.js";
import type { VectorLike } from "../../src/core/tensor.js";
import { NonFiniteError, ShapeError } from "../../src/errors.js";
import { expectBitwise, expectRejects, FC, groupedRewards } from "./_arbitraries.js";

type Grouped = (rewards: VectorLike, groupIds: GroupIdsLike) => Float64Array;

const ESTIMATORS: readonly (readonly [string, Grouped])[] = [
  ["grpoAdvantages", (r, g) => grpoAdvantages(r, g)],
  ["rlooAdvantages", (r, g) => rlooAdvantages(r, g)],
  ["reinforcePPAdvantages", (r, g) => reinforcePPAdvantages(r, g, { batchNorm: false })],
];

for (const [name, fn] of ESTIMATORS) {
  describe(name, () => {
    test("rejects: rewards that are not 1-D", () => {
      const rewards = [
        [0, 0],
        [0, 0],
      ] as unknown as number[];
      expectRejects(() => fn(rewards, [0, 0, 1, 1]), ShapeError, "E_SHAPE", "rewards");
    });

    test("rejects: empty rewards", () => {
      expectRejects(() => fn([], []), ShapeError, "E_SHAPE", "rewards");
    });

    test("rejects: a non-finite reward", () => {
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        expectRejects(
          () => fn([bad, 0, 1, 1], [0, 0, 1, 1]),
          NonFiniteError,
          "E_NONFINITE",
          "rewards",
        );
      }
    });

    test("rejects: groupIds that are not 1-D", () => {
      const ids = [
        [0, 0],
        [1, 1],
      ] as unknown as number[];
      expectRejects(() => fn([0, 0, 1, 1], ids), ShapeError, "E_SHAPE", "groupIds");
    });

    test("rejects: groupIds of a different length than rewards", () => {
      expectRejects(() => fn([0, 0, 1], [0, 0, 1, 1]), ShapeError, "E_SHAPE", "groupIds");
    });

    test("rejects: float typed-array groupIds even when integer-valued", () => {
      const ids = new Float64Array([0, 0, 1, 1]) as unknown as Int32Array;
      expectRejects(() => fn([0, 0, 1, 1], ids), ShapeError, "E_SHAPE", "groupIds");
    });

    test("rejects: non-integer groupIds", () => {
      for (const bad of [0.5, Number.NaN, 2 ** 53]) {
        expectRejects(() => fn([0, 0, 1, 1], [0, 0, bad, bad]), ShapeError, "E_SHAPE", "groupIds");
      }
    });

    test("rejects: negative groupIds", () => {
      expectRejects(() => fn([0, 0, 1, 1], [-1, -1, 0, 0]), ShapeError, "E_SHAPE", "groupIds");
    });

    test("identity: only the partition matters, not the labels or their container", () => {
      // {0, 2} and {1, 3} under labels [7, 42, 7, 42] (number[]), [1, 0, 1, 0] (Uint8Array) and
      // [3, 9, 3, 9] (Int32Array): the same partition, so bitwise the same advantages.
      const rewards = [1, 2, 3, 6];
      const out = fn(rewards, [7, 42, 7, 42]);
      expectBitwise(fn(rewards, Uint8Array.from([1, 0, 1, 0])), out);
      expectBitwise(fn(new Float64Array(rewards), Int32Array.from([3, 9, 3, 9])), out);
    });
  });
}

describe("partition", () => {
  test("golden: labels [9, 2, 9, 5, 2] form groups 2, 5, 9 with members in batch order", () => {
    const groups = partition([9, 2, 9, 5, 2]);
    expect(groups.ids).toEqual([2, 5, 9]);
    expect(groups.members.map((m) => Array.from(m))).toEqual([[1, 4], [3], [0, 2]]);
    expect(singletonIds(groups)).toEqual([5]);
  });

  test("property: groups are the sorted unique labels and partition the batch", () => {
    const prop = fc.property(groupedRewards(1, 4), ({ groupIds }) => {
      const groups = partition(groupIds);
      expect(groups.ids).toEqual([...new Set(groupIds)].sort((a, b) => a - b));
      const seen = groups.members.flatMap((m, g) => Array.from(m, (i) => [i, groups.ids[g]]));
      expect(seen.sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual(
        groupIds.map((id, i) => [i, id]),
      );
      for (const m of groups.members)
        for (let k = 1; k < m.length; k++) expect(m[k]).toBeGreaterThan(m[k - 1] as number);
    });
    fc.assert(prop, FC);
  });
});
