/** Render a {@link LengthBiasReport} as two summary lines (pure: returns text, prints nothing). */

import { g4 } from "../core/pyFormat.js";
import { requireObject } from "../core/validate.js";
import type { LengthBiasReport } from "../diagnostics/lengthBias.js";

function range(xs: ArrayLike<number>): [number, number] {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < xs.length; i++) {
    lo = Math.min(lo, xs[i] as number);
    hi = Math.max(hi, xs[i] as number);
  }
  return [lo, hi];
}

/**
 * Render polgrad's two summary lines of the length-bias probe: the slope with its HC3 standard
 * error and 95 % interval, intercept and n; then the ranges of the per-sequence weight sums and
 * lengths. Floats use Python's `.4g` format.
 *
 * @param report - The result of lengthBiasProbe.
 * @returns Two lines joined by newlines, with no trailing newline (polgrad's text).
 * @derivation docs/diagnostics/length-bias.md#reading-the-report
 * @enforcedBy test/report/lengthBiasText.test.ts > renderLengthBiasText > golden: the two summary lines of the hc3 golden batch
 * @since 0.1.0
 */
export function renderLengthBiasText(report: LengthBiasReport): string {
  requireObject("renderLengthBiasText", "report", report, "a LengthBiasReport (lengthBiasProbe)", [
    "perSeqWeightSum",
    "perSeqLength",
    "slope",
  ]);
  const [wlo, whi] = range(report.perSeqWeightSum);
  const [llo, lhi] = range(report.perSeqLength);
  return (
    `length-bias probe: slope=${g4(report.slope)} (HC3 se=${g4(report.slopeSe)}, 95% CI ` +
    `[${g4(report.ciLow)}, ${g4(report.ciHigh)}]), intercept=${g4(report.intercept)}, n=${report.n}\n` +
    `per-seq weight sums in [${g4(wlo)}, ${g4(whi)}]; lengths in [${llo}, ${lhi}]`
  );
}
