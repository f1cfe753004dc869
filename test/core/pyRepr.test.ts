/** pyFloat / pyValue: Python's reprs, each expected string as CPython 3.11 prints it. */
import { describe, expect, test } from "vitest";
import { pyFloat, pyValue } from "../../src/core/pyRepr.js";

describe("pyFloat", () => {
  test("golden: Python's repr of integral, small, large and non-finite floats", () => {
    const cases: [number, string][] = [
      [10, "10.0"],
      [0.2, "0.2"],
      [0.0001, "0.0001"],
      [1e-5, "1e-05"],
      [1e-8, "1e-08"],
      [1.5e-8, "1.5e-08"],
      [0.04, "0.04"],
      [1.05, "1.05"],
      [123456789012345.6, "123456789012345.6"],
      [1e16, "1e+16"],
      [1.2345678901234568e17, "1.2345678901234568e+17"],
      [-3, "-3.0"],
      [-0.00012, "-0.00012"],
      [0, "0.0"],
      [-0, "-0.0"],
      [Number.NaN, "nan"],
      [Number.POSITIVE_INFINITY, "inf"],
      [Number.NEGATIVE_INFINITY, "-inf"],
    ];
    for (const [x, want] of cases) expect([x, pyFloat(x)]).toEqual([x, want]);
  });
});

describe("pyValue", () => {
  test("golden: None, booleans, quoted strings, ints and floats", () => {
    expect(pyValue(null)).toBe("None");
    expect(pyValue(undefined)).toBe("None");
    expect(pyValue(true)).toBe("True");
    expect(pyValue(false)).toBe("False");
    expect(pyValue("std")).toBe("'std'");
    expect(pyValue("it's")).toBe('"it\'s"'); // repr("it's") in CPython
    expect(pyValue(`a'b"`)).toBe(`'a\\'b"'`); // repr('a\'b"')
    expect(pyValue(16, true)).toBe("16");
    expect(pyValue(16)).toBe("16.0");
    expect(pyValue(0.99)).toBe("0.99");
  });
});
