/**
 * randomBatches (docs/testing.md#randombatches): eager validation, the documented bounds, replay
 * by seed, `[B]` or `[B, T]` advantages.
 */
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { ConfigError } from "../../src/errors.js";
import { randomBatches, type TestBatch } from "../../src/testing/index.js";

describe("randomBatches", () => {
  test("property: the draws stay in their documented bounds and a seed replays them", () => {
    const cases = randomBatches(
      40,
      [
        [4, 8],
        [3, 5],
        [2, 12],
      ],
      { seed: 7, maxGap: 1.5 },
    );
    expect(cases.map((c) => c.index)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    const master = createRng(7);
    for (const c of cases) {
      expect(c.seed).toBe(master.childSeed());
      const [B, T] = c.shape;
      expect(c.shape).toEqual(
        [
          [4, 8],
          [3, 5],
          [2, 12],
        ][c.index % 3],
      );
      expect(c.responseMask).toHaveLength(B);
      for (let b = 0; b < B; b++) {
        const row = c.responseMask[b] as boolean[];
        const L = row.filter(Boolean).length;
        expect(L).toBeGreaterThanOrEqual(1);
        expect(row).toEqual(Array.from({ length: T }, (_, t) => t < L)); // right-padded
        for (let t = 0; t < T; t++) {
          const lp = (c.logprobs[b] as number[])[t] as number;
          expect(lp).toBeGreaterThanOrEqual(-8);
          expect(lp).toBeLessThanOrEqual(-0.0625);
          const old = (c.oldLogprobs[b] as number[])[t] as number;
          expect(Math.abs(old - lp)).toBeLessThanOrEqual(1.5);
          expect(Math.abs(((c.refLogprobs[b] as number[])[t] as number) - lp)).toBeLessThanOrEqual(
            1.5,
          );
          expect(
            Math.abs(((c.rolloutLogprobs[b] as number[])[t] as number) - old),
          ).toBeLessThanOrEqual(1.5);
          const e = (c.entropies[b] as number[])[t] as number;
          expect(e >= 0.05 && e <= 4).toBe(true);
        }
        expect(Math.abs(c.advantages[b] as number)).toBeLessThanOrEqual(3);
      }
    }
    // Same seed: the same numbers, bit for bit; another seed: others.
    expect(
      randomBatches(
        40,
        [
          [4, 8],
          [3, 5],
          [2, 12],
        ],
        { seed: 7, maxGap: 1.5 },
      ),
    ).toEqual(cases);
    expect(randomBatches(1, [[4, 8]], { seed: 8 })[0]?.logprobs).not.toEqual(
      randomBatches(1, [[4, 8]], { seed: 7 })[0]?.logprobs,
    );
  });

  test("identity: token advantages are [B, T]; maxGap 0 makes old = ref = rollout = logprobs", () => {
    const c = randomBatches(1, [[3, 4]], { advantages: "token", maxGap: 0 })[0] as TestBatch;
    expect(c.advantages).toHaveLength(3);
    expect((c.advantages as number[][])[0]).toHaveLength(4);
    expect(c.oldLogprobs).toEqual(c.logprobs);
    expect(c.refLogprobs).toEqual(c.logprobs);
    expect(c.rolloutLogprobs).toEqual(c.logprobs);
  });

  test("reject: every argument is checked at the call", () => {
    expect(() => randomBatches(0)).toThrow(ConfigError);
    expect(() => randomBatches(1.5)).toThrow(/nCases must be an integer/);
    expect(() => randomBatches(200_000, [[4, 8]])).toThrow(
      /at most 4194304 tokens in all; got 200000 cases of 6400000 tokens/,
    );
    expect(() => randomBatches(1, [])).toThrow(/shapes must be a non-empty list/);
    expect(() => randomBatches(1, [[0, 4]])).toThrow(/shapes\[0\] must be a \[B, T\] pair/);
    expect(() => randomBatches(1, [[2, 4]], { maxGap: -1 })).toThrow(
      /maxGap must be a finite number >= 0/,
    );
    expect(() => randomBatches(1, [[2, 4]], { seed: 0.5 })).toThrow(/seed must be a safe integer/);
    expect(() => randomBatches(1, [[2, 4]], { advantages: "rows" as never })).toThrow(
      /advantages must be/,
    );
  });
});
