/** Enforces docs/conventions.md#shapes: the nested-row views of matrices and masks. */
import { describe, expect, test } from "vitest";
import { maskToRows, toRows } from "../../src/index.js";

describe("toRows", () => {
  test("golden: row-major data becomes nested rows", () => {
    // data[b·T + t] is element (b, t): [1, 2, 3, 4, 5, 6] with T = 3 is [[1, 2, 3], [4, 5, 6]].
    expect(toRows({ rows: 2, cols: 3, data: new Float64Array([1, 2, 3, 4, 5, 6]) })).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });
});

describe("maskToRows", () => {
  test("golden: 0/1 bytes become nested booleans", () => {
    expect(maskToRows({ rows: 2, cols: 2, data: new Uint8Array([1, 0, 1, 1]) })).toEqual([
      [true, false],
      [true, true],
    ]);
  });
});
