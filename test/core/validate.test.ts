/** Enforces docs/conventions.md#masks and #finiteness: the shared validators (parity rows 1-3). */
import { describe, expect, test } from "vitest";
import { broadcastAdvantages, checkFiniteAt, toMask, toMatrix } from "../../src/core/validate.js";
import { MaskError, NonFiniteError, ShapeError } from "../../src/index.js";

describe("toMask", () => {
  test("rejects: non-boolean values, wrong shapes and rows with zero response tokens", () => {
    expect(() => toMask("f", [[true, 2]])).toThrow(MaskError);
    expect(() => toMask("f", [[0.5, 1]])).toThrow(MaskError);
    expect(() => toMask("f", [true, false] as unknown as boolean[][])).toThrow(ShapeError);
    expect(() => toMask("f", [[true, true]], { rows: 1, cols: 3, arg: "x" })).toThrow(ShapeError);
    const e = (() => {
      try {
        toMask("f", [[true], [false], [true], [false]]);
      } catch (err) {
        return err as MaskError;
      }
      return undefined;
    })();
    expect(e?.message).toContain("zero response tokens in rows [1, 3]");
  });

  test("golden: a ragged or non-right-padded mask with a token per row is accepted", () => {
    expect(
      Array.from(
        toMask("f", [
          [true, false, true],
          [0, 1, 0],
        ]).data,
      ),
    ).toEqual([1, 0, 1, 0, 1, 0]);
  });
});

describe("checkFiniteAt", () => {
  test("rejects: nan and infinity at response positions only", () => {
    const m = toMask("f", [[true, false]]);
    expect(() => checkFiniteAt("f", "x", toMatrix("f", "x", [[1, Number.NaN]]), m)).not.toThrow();
    expect(() => checkFiniteAt("f", "x", toMatrix("f", "x", [[Number.NaN, 1]]), m)).toThrow(
      NonFiniteError,
    );
    expect(() =>
      checkFiniteAt("f", "x", toMatrix("f", "x", [[Number.NEGATIVE_INFINITY, 1]]), m),
    ).toThrow(NonFiniteError);
  });
});

describe("broadcastAdvantages", () => {
  test("golden: [B] advantages expand along T and are zero at padding", () => {
    const like = toMatrix("f", "lp", [
      [0, 0, 0],
      [0, 0, 0],
    ]);
    const m = toMask("f", [
      [true, true, false],
      [true, false, false],
    ]);
    expect(Array.from(broadcastAdvantages("f", [2, -1], like, "lp", m).data)).toEqual([
      2, 2, 0, -1, 0, 0,
    ]);
    expect(
      Array.from(
        broadcastAdvantages(
          "f",
          [
            [1, 2, Number.NaN],
            [3, Number.POSITIVE_INFINITY, 9],
          ],
          like,
          "lp",
          m,
        ).data,
      ),
    ).toEqual([1, 2, 0, 3, 0, 0]);
  });

  test("rejects: wrong lengths, wrong shapes and non-finite entries", () => {
    const like = toMatrix("f", "lp", [[0, 0]]);
    const m = toMask("f", [[true, true]]);
    expect(() => broadcastAdvantages("f", [1, 2], like, "lp", m)).toThrow(ShapeError);
    expect(() => broadcastAdvantages("f", [[1, 2, 3]], like, "lp", m)).toThrow(ShapeError);
    expect(() => broadcastAdvantages("f", [Number.NaN], like, "lp", m)).toThrow(NonFiniteError);
  });
});
