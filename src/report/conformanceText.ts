/**
 * The text of a conformance report (assertConforms, `polgrad/testing`): polgrad's
 * DeviationReport.summary() lines plus the worst case, the replay line and the diagnosis.
 */

import type { ConformanceReport } from "../conformance/conformanceReport.js";
import { pyExp, pyFixed } from "../core/pyFormat.js";
import { requireObject } from "../core/validate.js";

/**
 * The report as text (polgrad's DeviationReport.summary() plus the worst case, the replay line and
 * the diagnosis): the header `conformance over N seeded cases: max loss rel diff …, max grad rel
 * diff …, min grad cosine …, worst-case seed …`, then one line per note.
 *
 * @param r - The report.
 * @returns The text, lines joined by newlines (no trailing newline).
 * @derivation docs/testing.md#assertconforms
 * @enforcedBy test/testing/assertConforms.test.ts > assertConforms > golden: the summary's header, notes, replay and diagnosis lines
 * @since 0.2.0
 */
export function conformanceSummary(r: ConformanceReport): string {
  requireObject("conformanceSummary", "r", r, "a ConformanceReport (assertConforms)", [
    "cases",
    "notes",
    "replay",
  ]);
  const lines = [
    `conformance over ${r.cases} seeded cases: max loss rel diff ${pyExp(r.maxLossRelDiff, 3)}, max grad rel diff ${pyExp(r.maxGradRelDiff, 3)}, min grad cosine ${pyFixed(r.gradCosineMin, 9)}, worst-case seed ${r.worstCase.seed} (case ${r.worstCase.index}, shape [${r.worstCase.shape.join(", ")}])`,
    ...r.notes,
    `replay: ${r.replay}`,
  ];
  if (r.diagnosis !== null) lines.push(r.diagnosis.text);
  return lines.join("\n");
}
