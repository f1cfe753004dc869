/**
 * Enforces docs/derivations/advantages.md#gae (interior masks): GAE over rows with masked
 * positions inside the response, under verl's carry rule and OpenRLHF's zero rule; both equal the
 * right-padded scan on right-padded rows.
 */
import fc from "fast-check";
import { describe, test } from "vitest";
import { gae } from "../../src/advantages/index.js";
import { UnknownNameError } from "../../src/errors.js";
import { expectBitwise, expectRejects, FC, filled, paddedMasks } from "./_arbitraries.js";

describe("gae with interior masks", () => {
  test("golden: a one-token span under carry (verl) and zero (OpenRLHF)", () => {
    // r = [0, 9, 1], V = [0.5, 7, 0.25], mask [1, 0, 1], γ = 0.5, λ = 1.
    // t = 2: δ = 1 + 0 − 0.25 = 0.75; A = 0.75.
    // carry, t = 0: nv = 0.25, δ = 0 + 0.5·0.25 − 0.5 = −0.375; A = −0.375 + 0.5·0.75 = 0.
    // zero, t = 1 (masked, r = V = 0): A₁ = 0.5·0.25 + 0.5·0.75 = 0.5, nv = 0;
    //       t = 0: δ = 0 + 0 − 0.5 = −0.5; A = −0.5 + 0.5·0.5 = −0.25.
    const r = [[0, 9, 1]];
    const v = [[0.5, 7, 0.25]];
    const m = [[true, false, true]];
    const carry = gae(r, v, { gamma: 0.5, lam: 1 }, m, { masked: "carry" });
    expectBitwise(carry.advantages.data, [0, 0, 0.75]);
    expectBitwise(carry.returns.data, [0.5, 0, 1]);
    const zero = gae(r, v, { gamma: 0.5, lam: 1 }, m, { masked: "zero" });
    expectBitwise(zero.advantages.data, [-0.25, 0, 0.75]);
    expectBitwise(zero.returns.data, [0.25, 0, 1]);
    expectRejects(
      () => gae(r, v, { gamma: 0.5, lam: 1 }, m, { masked: "skip" as never }),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "options.masked",
    );
  });

  test("identity: on right-padded rows carry and zero give the right-padded scan bitwise", () => {
    fc.assert(
      fc.property(
        paddedMasks(4, 6).chain((pm) =>
          fc.tuple(fc.constant(pm), filled(pm, -2, 2), filled(pm, -2, 2)),
        ),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        ([pm, r, v], gamma, lam) => {
          const plain = gae(r, v, { gamma, lam }, pm.mask);
          for (const masked of ["carry", "zero"] as const) {
            const got = gae(r, v, { gamma, lam }, pm.mask, { masked });
            expectBitwise(got.advantages.data, plain.advantages.data);
            expectBitwise(got.returns.data, plain.returns.data);
          }
        },
      ),
      FC,
    );
  });
});
