/** Render a {@link ClipReport} as terminal text (pure: returns text, prints nothing). */

import type { ClipReport } from "../diagnostics/clipping.js";
import { sig4 } from "./format.js";

/**
 * Render the clip census in four lines: the band, the A > 0 and A < 0 quadrants with what happens
 * to their gradient, and the killed share. Numbers carry 4 significant digits via `toPrecision(4)`;
 * unlike Python's `.4g` this keeps trailing zeros (`0.8000`, not `0.8`).
 *
 * @param report - The result of clipReport.
 * @returns Four lines, each ending with a newline.
 * @derivation docs/diagnostics/clipping.md#text-report
 * @enforcedBy test/diagnostics/clipping.test.ts > renderClipText > golden: four lines of the six-token census
 * @since 0.1.0
 */
export function renderClipText(report: ClipReport): string {
  const lines = [
    `PG_CLIP band [1 - eps_low, 1 + eps_high] = [${sig4(1 - report.epsLow)}, ${sig4(1 + report.epsHigh)}]; fractions are of all response tokens`,
    `A > 0: clipped high ${sig4(report.fracPosAdvClippedHigh)} (gradient killed), clipped low ${sig4(report.fracPosAdvClippedLow)} (gradient flows)`,
    `A < 0: clipped low ${sig4(report.fracNegAdvClippedLow)} (gradient killed), clipped high ${sig4(report.fracNegAdvClippedHigh)} (gradient flows unless dual-clip caps it)`,
    `gradient killed on ${sig4(report.gradientKilledFrac)} of response tokens`,
  ];
  return `${lines.join("\n")}\n`;
}
