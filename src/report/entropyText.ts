/**
 * Render an {@link EntropyReport} or a {@link TrendReport} as terminal text (pure: returns text,
 * prints nothing).
 */

import { g4, pyGeneral } from "../core/pyFormat.js";
import { requireObject, requireString } from "../core/validate.js";
import type { EntropyReport } from "../diagnostics/entropy.js";
import type { TrendReport } from "../diagnostics/trend.js";

/**
 * Render the entropy estimate in two lines: the pooled estimate with its token count and
 * estimator, then the range of the per-sequence estimates. Numbers carry 4 significant digits via
 * Python's `.4g` (g4), as polgrad's summary() does; counts print exactly.
 *
 * @param report - The result of tokenEntropyEstimate.
 * @returns Two lines joined by newlines, with no trailing newline (polgrad's text).
 * @derivation docs/diagnostics/entropy.md#text-report
 * @enforcedBy test/diagnostics/entropy.test.ts > renderEntropyText > golden: two lines of the mc golden
 * @since 0.1.0
 */
export function renderEntropyText(report: EntropyReport): string {
  requireObject("renderEntropyText", "report", report, "an EntropyReport (tokenEntropyEstimate)", [
    "perSeqEntropy",
    "entropyEstimate",
  ]);
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const h of report.perSeqEntropy) {
    lo = Math.min(lo, h);
    hi = Math.max(hi, h);
  }
  const lines = [
    `token entropy estimate: ${g4(report.entropyEstimate)} nats over n_tokens=${report.nTokens} (estimator=${report.estimator})`,
    `per-sequence entropy: min=${g4(lo)} max=${g4(hi)} (B=${report.perSeqEntropy.length})`,
  ];
  return lines.join("\n");
}

/**
 * Render a trend test in three lines: the Theil–Sen slope, the CUSUM statistic against its
 * permutation threshold, and the changepoint verdict. Numbers as {@link renderEntropyText};
 * alpha as Python's `:g` (6 significant digits: `0.05`, `1e-05`).
 *
 * @param report - The result of entropyTrend (or trendTest on any per-step series).
 * @param label - The series' name in the first line. @defaultValue "entropy"
 * @returns Three lines joined by newlines, with no trailing newline (polgrad's text).
 * @derivation docs/diagnostics/entropy.md#text-report
 * @enforcedBy test/diagnostics/entropy.test.ts > renderTrendText > golden: three lines with and without a changepoint
 * @since 0.1.0
 */
export function renderTrendText(report: TrendReport, label = "entropy"): string {
  requireObject("renderTrendText", "report", report, "a TrendReport (trendTest)", [
    "slope",
    "cusumStat",
    "threshold",
    "alpha",
  ]);
  requireString("renderTrendText", "label", label);
  const lines = [
    `${label} trend: Theil-Sen slope=${g4(report.slope)} per step`,
    `CUSUM stat=${g4(report.cusumStat)} vs threshold=${g4(report.threshold)} (alpha=${pyGeneral(report.alpha, 6)}, n_perm=${report.nPerm})`,
    report.changepointIndex === null
      ? "changepoint: none detected"
      : `changepoint: detected at step ${report.changepointIndex}`,
  ];
  return lines.join("\n");
}
