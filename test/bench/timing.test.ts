/**
 * Enforces docs/performance.md#interleaving-medians-agreement: the bench's interleaved rounds run
 * every arm once per round, forwards in even rounds and backwards in odd ones (so no arm always
 * follows the same one), after untimed warm-up rounds, and keep each arm's times in round order
 * with their median.
 */
import { describe, expect, test } from "vitest";
import { interleave, median } from "../../bench/_timing.mjs";

describe("interleave", () => {
  test("golden: warm-up forwards, then rounds forwards and backwards in turn; times in round order; medians", async () => {
    const order: string[] = [];
    let clock = 0;
    const arm = (name: string) => ({
      name,
      run: () => {
        order.push(name);
        clock += 1;
        return clock;
      },
    });
    const t = await interleave(3, [arm("A"), arm("B"), arm("C")], 1);
    expect(order.join("")).toBe("ABC" + "ABC" + "CBA" + "ABC");
    // Each arm's times are its runs' return values in round order (the warm-up left out).
    expect(t.A?.times).toEqual([4, 9, 10]);
    expect(t.C?.times).toEqual([6, 7, 12]);
    expect(t.B?.median).toBe(8);
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });
});
