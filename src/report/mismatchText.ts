/** Render a {@link MismatchReport} as terminal text (pure: returns text, prints nothing). */

import { g4 } from "../core/pyFormat.js";
import { requireObject } from "../core/validate.js";
import { MISMATCH_QUANTILE_LEVELS, type MismatchReport } from "../diagnostics/mismatch.js";

/**
 * Render the mismatch summary in six lines: token count; gap moments and perplexity ratio; the
 * seven gap quantiles (labels q01 … q99); the KL(rollout‖trainer) estimates and the swapped k3;
 * the sequence log-ratio; the catastrophic-token count. Numbers carry 4 significant digits via
 * Python's `.4g` (g4), as polgrad's summary() does; counts print exactly.
 *
 * @param report - The result of logprobMismatch.
 * @returns Six lines joined by newlines, with no trailing newline (polgrad's text).
 * @derivation docs/diagnostics/mismatch.md#text-report
 * @enforcedBy test/report/mismatchText.test.ts > renderMismatchText > golden: the six lines of the three-token golden
 * @since 0.1.0
 */
export function renderMismatchText(report: MismatchReport): string {
  requireObject("renderMismatchText", "report", report, "a MismatchReport (logprobMismatch)", [
    "gapQuantiles",
    "nTokens",
    "gapMean",
  ]);
  const q = MISMATCH_QUANTILE_LEVELS.map(
    (level, k) =>
      `q${String(Math.round(100 * level)).padStart(2, "0")}=${g4(report.gapQuantiles[k] as number)}`,
  ).join(" ");
  const lines = [
    `logprob mismatch (Δ = trainer - rollout) over n_tokens=${report.nTokens}`,
    `gap: mean=${g4(report.gapMean)} std=${g4(report.gapStd)} |max|=${g4(report.gapAbsMax)} ppl_ratio=${g4(report.pplRatio)}`,
    `gap quantiles: ${q}`,
    `KL(rollout‖trainer) (tokens ~ rollout): k1=${g4(report.klK1)} k2=${g4(report.klK2)} k3=${g4(report.klK3)}; trainer→rollout k3=${g4(report.klK3TrainerRollout)}`,
    `sequence log-ratio: mean=${g4(report.seqLogRatioMean)} std=${g4(report.seqLogRatioStd)} |max|=${g4(report.seqLogRatioAbsMax)}`,
    `catastrophic tokens: ${report.catastrophicCount}`,
  ];
  return lines.join("\n");
}
