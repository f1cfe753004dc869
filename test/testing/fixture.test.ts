/**
 * polgrad's `polgrad_batches` fixture (spec §10.3, parity row 64), as a vitest fixture: the test
 * receives randomBatches itself; polgrad's fresh-run check — 2 batches of mask shape (2, 4) and
 * advantages of shape (2,) — holds.
 */
import { test as base, describe, expect } from "vitest";
import { polgradBatches, randomBatches } from "../../src/testing/index.js";

const test = base.extend<{ polgradBatches: typeof polgradBatches }>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest's fixture signature takes the context first.
  polgradBatches: async ({}, use) => use(polgradBatches),
});

describe("polgradBatches fixture", () => {
  test("golden: a vitest fixture hands the test randomBatches itself", ({ polgradBatches: f }) => {
    expect(f).toBe(randomBatches);
    const batches = f(2, [[2, 4]], { seed: 0 });
    expect(batches).toHaveLength(2);
    for (const b of batches) {
      expect([b.responseMask.length, (b.responseMask[0] as boolean[]).length]).toEqual([2, 4]);
      expect(b.advantages).toHaveLength(2);
      expect(typeof b.advantages[0]).toBe("number");
    }
  });
});
