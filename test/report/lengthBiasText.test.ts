/** Enforces docs/diagnostics/length-bias.md#reading-the-report: the two summary lines. */
import { describe, expect, test } from "vitest";
import { type LengthBiasReport, lengthBiasProbe } from "../../src/diagnostics/lengthBias.js";
import { renderLengthBiasText } from "../../src/report/lengthBiasText.js";

describe("renderLengthBiasText", () => {
  test("golden: the two summary lines of the hc3 golden batch", () => {
    // slope 3/2, se 1/√2 = 0.70710…, CI 1.5 ∓ 1.95996·0.70711 = [0.11409…, 2.88590…], intercept
    // −2/3, n = 3; weight sums L/3 = [1/3, 2/3, 1]; lengths [1, 3]. Floats in Python's ".4g".
    const r = lengthBiasProbe(
      [3, 3, 4],
      [[true], [true, true], [true, true, true]].map((row) => [
        ...row,
        ...Array(3 - row.length).fill(false),
      ]),
      { aggMode: "seq_mean_token_sum" },
    );
    expect(renderLengthBiasText(r)).toBe(
      "length-bias probe: slope=1.5 (HC3 se=0.7071, 95% CI [0.1141, 2.886]), intercept=-0.6667, n=3\n" +
        "per-seq weight sums in [0.3333, 1]; lengths in [1, 3]",
    );
  });

  test("golden: python .4g formatting of small, large and rounding-up values", () => {
    // Values from polgrad's diagnose_run example and the edges of ".4g": fixed notation for
    // exponents −4..3, scientific with a two-digit exponent otherwise, trailing zeros dropped, and
    // rounding that carries into the exponent (9999.5 → 1e+04, 0.00099996 → 0.001).
    const report: LengthBiasReport = {
      slope: -2.731e-5,
      slopeSe: 6.601e-5,
      ciLow: -0.0001567,
      ciHigh: 9999.5,
      intercept: 0.00099996,
      n: 32,
      perSeqWeightSum: new Float64Array([0.03125, 123456]),
      perSeqLength: new Int32Array([7, 2]),
    };
    expect(renderLengthBiasText(report)).toBe(
      "length-bias probe: slope=-2.731e-05 (HC3 se=6.601e-05, 95% CI [-0.0001567, 1e+04]), intercept=0.001, n=32\n" +
        "per-seq weight sums in [0.03125, 1.235e+05]; lengths in [2, 7]",
    );
  });
});
