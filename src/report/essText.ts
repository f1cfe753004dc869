/** Render an {@link ESSReport} as terminal text (pure: returns text, prints nothing). */

import type { ESSReport } from "../diagnostics/ess.js";
import { sig4 } from "./format.js";

/**
 * Render the ESS summary in two lines: the ESS of n and its ratio, then the log-weight moments.
 * Numbers carry 4 significant digits via `toPrecision(4)`; unlike Python's `.4g` this keeps
 * trailing zeros (`1.800`, not `1.8`). Integers (`n`) print exactly.
 *
 * @param report - The result of importanceEss.
 * @returns Two lines, each ending with a newline.
 * @derivation docs/diagnostics/ess.md#text-report
 * @enforcedBy test/report/essText.test.ts > renderEssText > golden: the two lines of the sequence-level golden
 * @since 0.1.0
 */
export function renderEssText(report: ESSReport): string {
  const lines = [
    `importance ESS (${report.level} level): ESS=${sig4(report.ess)} of n=${report.n} (ESS/n=${sig4(report.essRatio)})`,
    `log-weights: mean=${sig4(report.logWeightMean)} std=${sig4(report.logWeightStd)} min=${sig4(report.logWeightMin)} max=${sig4(report.logWeightMax)}`,
  ];
  return `${lines.join("\n")}\n`;
}
