/**
 * Enforces docs/derivations/advantages.md#returns-to-go: the discounted return-to-go and its three
 * rules at masked positions (verl before and after #7300, OpenRLHF).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { MASKED_RETURNS, returnsToGo } from "../../src/advantages/index.js";
import { UnknownNameError } from "../../src/errors.js";
import { expectBitwise, expectRejects, FC, filled, paddedMasks, withJunk } from "./_arbitraries.js";

describe("returnsToGo", () => {
  test("golden: gamma 0.5 over [1, 2, 4] gives [3, 4, 4]", () => {
    // t = 2: 4; t = 1: 2 + 0.5·4 = 4; t = 0: 1 + 0.5·4 = 3.
    expectBitwise(returnsToGo([[1, 2, 4]], [[true, true, true]], { gamma: 0.5 }).data, [3, 4, 4]);
    // γ = 1 (default): suffix sums 7, 6, 4.
    expectBitwise(returnsToGo([[1, 2, 4]], [[true, true, true]]).data, [7, 6, 4]);
  });

  test("golden: an interior masked span under carry, reset and discount", () => {
    // Rewards [1, 9, 2, 4], mask [1, 0, 1, 1], γ = 0.5. t = 3: 4; t = 2: 2 + 0.5·4 = 4;
    // t = 1 (masked, reward 9 never read): G stays 4 (carry), becomes 0 (reset), 0.5·4 = 2 (discount);
    // t = 0: 1 + 0.5·4 = 3, 1 + 0 = 1, 1 + 0.5·2 = 2.
    const r = [[1, 9, 2, 4]];
    const m = [[true, false, true, true]];
    expectBitwise(returnsToGo(r, m, { gamma: 0.5, masked: "carry" }).data, [3, 0, 4, 4]);
    expectBitwise(returnsToGo(r, m, { gamma: 0.5, masked: "reset" }).data, [1, 0, 4, 4]);
    expectBitwise(returnsToGo(r, m, { gamma: 0.5, masked: "discount" }).data, [2, 0, 4, 4]);
  });

  test("mask invariance: NaN rewards at masked positions never reach the output", () => {
    fc.assert(
      fc.property(
        paddedMasks(4, 6).chain((pm) => fc.tuple(fc.constant(pm), filled(pm, -2, 2))),
        fc.constantFrom(...MASKED_RETURNS),
        fc.double({ min: 0, max: 1, noNaN: true }),
        ([pm, x], rule, gamma) => {
          const a = returnsToGo(x, pm.mask, { gamma, masked: rule });
          const b = returnsToGo(withJunk(x, pm.mask, Number.NaN), pm.mask, { gamma, masked: rule });
          expectBitwise(b.data, a.data);
          // Right-padded rows: the three rules agree.
          for (const other of MASKED_RETURNS)
            expectBitwise(returnsToGo(x, pm.mask, { gamma, masked: other }).data, a.data);
        },
      ),
      FC,
    );
  });

  test("rejects: an unknown masked rule, and an overflowing return names (b, t)", () => {
    expectRejects(
      () => returnsToGo([[1]], [[true]], { masked: "skip" as never }),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "options.masked",
    );
    expect(() => returnsToGo([[1e308, 1e308]], [[true, true]])).toThrow(/return.*\(0, 0\)/s);
  });
});
