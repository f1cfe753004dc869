/** Enforces docs/diagnostics/ess.md#text-report: the two-line text rendering of an ESS report. */
import { describe, expect, test } from "vitest";
import { importanceEss } from "../../src/diagnostics/ess.js";
import { renderEssText } from "../../src/report/essText.js";

describe("renderEssText", () => {
  test("golden: the two lines of the sequence-level golden", () => {
    // lw = [0, ln 2]: ESS 1.8, ratio 0.9, mean ln2/2 = 0.34657, std ln2/√2 = 0.49013, min 0,
    // max ln 2 = 0.69315; Python's .4g (as polgrad's summary()) drops trailing zeros ("1.8", "0").
    const r = importanceEss(
      [
        [0.5, -0.5],
        [Math.LN2, Number.NaN],
      ],
      [
        [0, 0],
        [0, 0],
      ],
      [
        [true, true],
        [true, false],
      ],
    );
    expect(renderEssText(r)).toBe(
      "importance ESS (sequence level): ESS=1.8 of n=2 (ESS/n=0.9)\n" +
        "log-weights: mean=0.3466 std=0.4901 min=0 max=0.6931",
    );
  });
});
