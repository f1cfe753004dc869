/**
 * Enforces docs/report.md#number-formats: the number formats of the text reports. Every expected
 * string of the Python formats is what CPython 3.11 (/usr/bin/python3) prints for
 * `format(x, spec)`.
 */
import { describe, expect, test } from "vitest";
import { g4, pyExp, pyFixed, pyGeneral, sig4 } from "../../src/core/pyFormat.js";

/**
 * Values with exact decimal ties (0.015625 = 2^-6, 1.0625 = 17/16, 2.5, 0.0009765625 = 2^-10,
 * 10625), near ties that are not exact (0.0012345 is 0.00123449999…), a carry into the next
 * power (9.9995 is below its tie; 99995 is a tie above an odd digit), and the extremes.
 */
const XS = [
  0.015625,
  1.0625,
  -1.0625,
  2.5,
  0.5,
  1.5,
  0.0009765625,
  1.0009765625,
  10625,
  1e22,
  123456789,
  0.0012345,
  1e-5,
  0.123456789,
  9.9995,
  99995,
  0.000123125,
  2 ** -20,
  1e16,
  5e-324,
  1.7976931348623157e308,
];

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

describe("pyGeneral", () => {
  test("golden: Python's .4g and g, exact ties rounded half to even", () => {
    // format(x, ".4g"): 0.015625 → 0.01562 and 1.0625 → 1.062 (ties to the even 2; JavaScript's
    // toPrecision gives 0.01563 and 1.063); 99995 → 1e+05 (a tie above the odd 9 rounds up).
    expect(XS.map((x) => pyGeneral(x, 4))).toEqual([
      "0.01562",
      "1.062",
      "-1.062",
      "2.5",
      "0.5",
      "1.5",
      "0.0009766",
      "1.001",
      "1.062e+04",
      "1e+22",
      "1.235e+08",
      "0.001234",
      "1e-05",
      "0.1235",
      "9.999",
      "1e+05",
      "0.0001231",
      "9.537e-07",
      "1e+16",
      "4.941e-324",
      "1.798e+308",
    ]);
    // format(x, "g"), precision 6: 2^-10 = 0.0009765625 → 0.000976562 (a tie to the even 2).
    expect(XS.map((x) => pyGeneral(x, 6))).toEqual([
      "0.015625",
      "1.0625",
      "-1.0625",
      "2.5",
      "0.5",
      "1.5",
      "0.000976562",
      "1.00098",
      "10625",
      "1e+22",
      "1.23457e+08",
      "0.0012345",
      "1e-05",
      "0.123457",
      "9.9995",
      "99995",
      "0.000123125",
      "9.53674e-07",
      "1e+16",
      "4.94066e-324",
      "1.79769e+308",
    ]);
    expect([pyGeneral(-0, 6), pyGeneral(0, 4), pyGeneral(Number.NEGATIVE_INFINITY, 4)]).toEqual([
      "-0",
      "0",
      "-inf",
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

  test("golden: Python's .3e and .1e round exact ties half to even", () => {
    // 1.0625 → 1.062e+00 (JavaScript: 1.063e+0); 0.015625 → 1.562e-02; 9.9995 → 9.999e+00 and,
    // at one decimal, 1.0e+01 (the carry moves the exponent).
    expect(XS.map((x) => pyExp(x, 3))).toEqual([
      "1.562e-02",
      "1.062e+00",
      "-1.062e+00",
      "2.500e+00",
      "5.000e-01",
      "1.500e+00",
      "9.766e-04",
      "1.001e+00",
      "1.062e+04",
      "1.000e+22",
      "1.235e+08",
      "1.234e-03",
      "1.000e-05",
      "1.235e-01",
      "9.999e+00",
      "1.000e+05",
      "1.231e-04",
      "9.537e-07",
      "1.000e+16",
      "4.941e-324",
      "1.798e+308",
    ]);
    expect(XS.map((x) => pyExp(x, 1))).toEqual([
      "1.6e-02",
      "1.1e+00",
      "-1.1e+00",
      "2.5e+00",
      "5.0e-01",
      "1.5e+00",
      "9.8e-04",
      "1.0e+00",
      "1.1e+04",
      "1.0e+22",
      "1.2e+08",
      "1.2e-03",
      "1.0e-05",
      "1.2e-01",
      "1.0e+01",
      "1.0e+05",
      "1.2e-04",
      "9.5e-07",
      "1.0e+16",
      "4.9e-324",
      "1.8e+308",
    ]);
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

  test("golden: Python's .9f and .0f round exact ties half to even and print every integer digit", () => {
    // 2^-10 = 0.0009765625 → 0.000976562 (JavaScript's toFixed: 0.000976563); at .0f, 2.5 → 2,
    // 0.5 → 0, 1.5 → 2; 1e22 in full where toFixed switches to 1e+22.
    const f9 = XS.map((x) => pyFixed(x, 9));
    expect(f9.slice(0, 20)).toEqual([
      "0.015625000",
      "1.062500000",
      "-1.062500000",
      "2.500000000",
      "0.500000000",
      "1.500000000",
      "0.000976562",
      "1.000976562",
      "10625.000000000",
      "10000000000000000000000.000000000",
      "123456789.000000000",
      "0.001234500",
      "0.000010000",
      "0.123456789",
      "9.999500000",
      "99995.000000000",
      "0.000123125",
      "0.000000954",
      "10000000000000000.000000000",
      "0.000000000",
    ]);
    // The largest double has 309 integer digits: 17976931348623157081…858368.
    expect(f9[20]).toMatch(
      /^179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368\.000000000$/,
    );
    expect(XS.map((x) => pyFixed(x, 0)).slice(0, 20)).toEqual([
      "0",
      "1",
      "-1",
      "2",
      "0",
      "2",
      "0",
      "1",
      "10625",
      "10000000000000000000000",
      "123456789",
      "0",
      "0",
      "0",
      "10",
      "99995",
      "0",
      "0",
      "10000000000000000",
      "0",
    ]);
  });
});
