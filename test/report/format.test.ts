/** Enforces docs/cli.md#outputs: the two number formats of the text reports. */
import { describe, expect, test } from "vitest";
import { g4, pyExp, pyFixed, sig4 } from "../../src/report/format.js";

describe("g4", () => {
  test("golden: python's .4g for fixed and scientific ranges", () => {
    // 1/3 → 0.3333; 8.732e-6 has exponent −6 < −4 → scientific with a two-digit exponent;
    // 12346 has exponent 4 → scientific; trailing zeros are dropped (0.5, not 0.5000).
    expect([g4(1 / 3), g4(-8.732e-6), g4(12346), g4(0.5), g4(0), g4(Number.NaN)]).toEqual([
      "0.3333",
      "-8.732e-06",
      "1.235e+04",
      "0.5",
      "0",
      "nan",
    ]);
  });
});

describe("sig4", () => {
  test("golden: four significant digits with trailing zeros kept", () => {
    expect([sig4(0.5), sig4(1 / 3), sig4(1.8)]).toEqual(["0.5000", "0.3333", "1.800"]);
  });
});

describe("pyExp", () => {
  test("golden: Python's .3e on zero, tiny, huge, negative and non-finite values", () => {
    // Each expected string is what CPython 3.11 prints for format(x, ".3e").
    expect(pyExp(0, 3)).toBe("0.000e+00");
    expect(pyExp(-0, 3)).toBe("-0.000e+00");
    expect(pyExp(1e-7, 3)).toBe("1.000e-07");
    expect(pyExp(3.6434e-8, 3)).toBe("3.643e-08");
    expect(pyExp(123456, 3)).toBe("1.235e+05");
    expect(pyExp(-2.5e-300, 3)).toBe("-2.500e-300");
    expect(pyExp(Number.NaN, 3)).toBe("nan");
    expect(pyExp(Number.POSITIVE_INFINITY, 3)).toBe("inf");
    expect(pyExp(Number.NEGATIVE_INFINITY, 1)).toBe("-inf");
    expect(pyExp(1e-9, 1)).toBe("1.0e-09");
  });
});

describe("pyFixed", () => {
  test("golden: Python's .9f on values, negative zero and non-finite values", () => {
    expect(pyFixed(1, 9)).toBe("1.000000000");
    expect(pyFixed(0.0489, 9)).toBe("0.048900000");
    expect(pyFixed(-0, 9)).toBe("-0.000000000");
    expect(pyFixed(-1e-12, 9)).toBe("-0.000000000");
    expect(pyFixed(Number.NaN, 9)).toBe("nan");
  });
});
