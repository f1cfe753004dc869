/** Render a {@link ClipReport} as terminal text (pure: returns text, prints nothing). */

import { g4 } from "../core/pyFormat.js";
import { requireObject } from "../core/validate.js";
import type { ClipReport } from "../diagnostics/clipping.js";

/**
 * Render the clip census in four lines: the band, the A > 0 and A < 0 quadrants with what happens
 * to their gradient, and the killed share. Numbers print as Python's `.4g` (g4), as polgrad's
 * summary() does: `[0.8, 1.3]`, not `[0.8000, 1.300]`.
 *
 * @param report - The result of clipReport.
 * @returns Four lines joined by newlines, with no trailing newline (polgrad's text).
 * @derivation docs/diagnostics/clipping.md#text-report
 * @enforcedBy test/diagnostics/clipping.test.ts > renderClipText > golden: four lines of the six-token census
 * @since 0.1.0
 */
export function renderClipText(report: ClipReport): string {
  requireObject("renderClipText", "report", report, "a ClipReport (clipReport)", [
    "epsLow",
    "epsHigh",
    "gradientKilledFrac",
  ]);
  const lines = [
    `PG_CLIP band [1 - eps_low, 1 + eps_high] = [${g4(1 - report.epsLow)}, ${g4(1 + report.epsHigh)}]; fractions are of all response tokens`,
    `A > 0: clipped high ${g4(report.fracPosAdvClippedHigh)} (gradient killed), clipped low ${g4(report.fracPosAdvClippedLow)} (gradient flows)`,
    `A < 0: clipped low ${g4(report.fracNegAdvClippedLow)} (gradient killed), clipped high ${g4(report.fracNegAdvClippedHigh)} (gradient flows unless dual-clip caps it)`,
    `gradient killed on ${g4(report.gradientKilledFrac)} of response tokens: ${g4(report.clipKilledFrac)} by the clip (band or dual-clip cap), ${g4(report.zeroAdvantageFrac)} with zero advantage (no gradient whatever the ratio)`,
  ];
  return lines.join("\n");
}
