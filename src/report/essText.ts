/** Render an {@link ESSReport} as terminal text (pure: returns text, prints nothing). */

import { g4 } from "../core/pyFormat.js";
import { requireObject } from "../core/validate.js";
import type { ESSReport } from "../diagnostics/ess.js";

/**
 * Render the ESS summary in two lines: the ESS of n and its ratio, then the log-weight moments.
 * Numbers print as Python's `.4g` (g4), as polgrad's summary() does: `1.8`, not `1.800`. Integers (`n`) print exactly.
 *
 * @param report - The result of importanceEss.
 * @returns Two lines joined by newlines, with no trailing newline (polgrad's text).
 * @derivation docs/diagnostics/ess.md#text-report
 * @enforcedBy test/report/essText.test.ts > renderEssText > golden: the two lines of the sequence-level golden
 * @since 0.1.0
 */
export function renderEssText(report: ESSReport): string {
  requireObject("renderEssText", "report", report, "an ESSReport (importanceEss)", [
    "level",
    "ess",
    "essRatio",
  ]);
  const lines = [
    `importance ESS (${report.level} level): ESS=${g4(report.ess)} of n=${report.n} (ESS/n=${g4(report.essRatio)})`,
    `log-weights: mean=${g4(report.logWeightMean)} std=${g4(report.logWeightStd)} min=${g4(report.logWeightMin)} max=${g4(report.logWeightMax)}`,
  ];
  return lines.join("\n");
}
