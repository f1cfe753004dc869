/** Enforces docs/cli.md#outputs: the two number formats of the text reports. */
import { describe, expect, test } from "vitest";
import { g4, sig4 } from "../../src/report/format.js";

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
