/**
 * Enforces docs/derivations/advantages.md#broadcasting: `[B]` → `[B, T]` over response tokens
 * (polgrad spec §5.5).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { broadcastToTokens } from "../../src/advantages/index.js";
import { toRows } from "../../src/core/tensor.js";
import { MaskError, NonFiniteError, ShapeError } from "../../src/errors.js";
import { expectRejects, FC } from "./_arbitraries.js";

/** Arbitrary (not necessarily right-padded) masks with ≥ 1 token per row, and matching values. */
const cases = fc.integer({ min: 1, max: 8 }).chain((cols) =>
  fc
    .array(
      fc
        .array(fc.boolean(), { minLength: cols, maxLength: cols })
        .filter((row) => row.some(Boolean)),
      { minLength: 1, maxLength: 6 },
    )
    .chain((mask) =>
      fc.record({
        mask: fc.constant(mask),
        perSeq: fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), {
          minLength: mask.length,
          maxLength: mask.length,
        }),
      }),
    ),
);

describe("broadcastToTokens", () => {
  test("golden: [2, -3] over row lengths [2, 1]", () => {
    // row 0 has 2 response tokens → [2, 2, 0]; row 1 has 1 → [−3, 0, 0].
    const mask = [
      [true, true, false],
      [true, false, false],
    ];
    expect(toRows(broadcastToTokens([2, -3], mask))).toEqual([
      [2, 2, 0],
      [-3, 0, 0],
    ]);
  });

  test("property: response tokens carry their row value and padding is exactly +0", () => {
    // Any 0/1 pattern is accepted (right-padding is only required by gae).
    const prop = fc.property(cases, ({ mask, perSeq }) => {
      const out = broadcastToTokens(perSeq, mask);
      const T = (mask[0] as boolean[]).length;
      mask.forEach((row, b) => {
        row.forEach((on, t) => {
          expect(Object.is(out.data[b * T + t], on ? perSeq[b] : 0)).toBe(true);
        });
      });
    });
    fc.assert(prop, FC);
  });

  test("rejects: perSeq that is not 1-D", () => {
    const perSeq = [[1], [2]] as unknown as number[];
    expectRejects(
      () => broadcastToTokens(perSeq, [[true], [true]]),
      ShapeError,
      "E_SHAPE",
      "perSeq",
    );
  });

  test("rejects: empty perSeq", () => {
    expectRejects(() => broadcastToTokens([], [[true]]), ShapeError, "E_SHAPE", "perSeq");
  });

  test("rejects: non-finite perSeq", () => {
    expectRejects(
      () => broadcastToTokens([1, Number.NaN], [[true], [true]]),
      NonFiniteError,
      "E_NONFINITE",
      "perSeq",
    );
  });

  test("rejects: perSeq and responseMask of different batch sizes", () => {
    expectRejects(
      () => broadcastToTokens([1, 2, 3], [[true], [true]]),
      ShapeError,
      "E_SHAPE",
      "perSeq",
    );
  });

  test("rejects: a mask that is not boolean", () => {
    expectRejects(() => broadcastToTokens([1, 2], [[1], [2]]), MaskError, "E_MASK", "responseMask");
  });

  test("rejects: a mask row with no response token", () => {
    expectRejects(
      () => broadcastToTokens([1, 2], [[true], [false]]),
      MaskError,
      "E_MASK",
      "responseMask",
    );
  });
});
