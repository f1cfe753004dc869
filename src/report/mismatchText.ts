/** Render a {@link MismatchReport} as terminal text (pure: returns text, prints nothing). */

import { MISMATCH_QUANTILE_LEVELS, type MismatchReport } from "../diagnostics/mismatch.js";
import { sig4 } from "./format.js";

/**
 * Render the mismatch summary in six lines: token count; gap moments and perplexity ratio; the
 * seven gap quantiles (labels q01 … q99); the KL(rollout‖trainer) estimates and the swapped k3;
 * the sequence log-ratio; the catastrophic-token count. Numbers carry 4 significant digits via
 * `toPrecision(4)` (trailing zeros kept, unlike Python's `.4g`); counts print exactly.
 *
 * @param report - The result of logprobMismatch.
 * @returns Six lines, each ending with a newline.
 * @derivation docs/diagnostics/mismatch.md#text-report
 * @enforcedBy test/report/mismatchText.test.ts > renderMismatchText > golden: the six lines of the three-token golden
 * @since 0.1.0
 */
export function renderMismatchText(report: MismatchReport): string {
  const q = MISMATCH_QUANTILE_LEVELS.map(
    (level, k) =>
      `q${String(Math.round(100 * level)).padStart(2, "0")}=${sig4(report.gapQuantiles[k] as number)}`,
  ).join(" ");
  const lines = [
    `logprob mismatch (Δ = trainer - rollout) over n_tokens=${report.nTokens}`,
    `gap: mean=${sig4(report.gapMean)} std=${sig4(report.gapStd)} |max|=${sig4(report.gapAbsMax)} ppl_ratio=${sig4(report.pplRatio)}`,
    `gap quantiles: ${q}`,
    `KL(rollout‖trainer) (tokens ~ rollout): k1=${sig4(report.klK1)} k2=${sig4(report.klK2)} k3=${sig4(report.klK3)}; trainer→rollout k3=${sig4(report.klK3TrainerRollout)}`,
    `sequence log-ratio: mean=${sig4(report.seqLogRatioMean)} std=${sig4(report.seqLogRatioStd)} |max|=${sig4(report.seqLogRatioAbsMax)}`,
    `catastrophic tokens: ${report.catastrophicCount}`,
  ];
  return `${lines.join("\n")}\n`;
}
