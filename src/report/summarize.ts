/**
 * `summarize(result)`: polgrad's `result.summary()` for the TypeScript result objects, by their
 * shape (docs/report.md). The per-type renderers are exported beside it (`polgrad/report`).
 * Browser-safe.
 */
import type { ComparisonReport } from "../conformance/compare.js";
import type { ConformanceReport } from "../conformance/conformanceReport.js";
import type { DeviationReport } from "../conformance/deviationPairs.js";
import { deviationReportSummary } from "../conformance/deviationPairs.js";
import type { VectorsReport } from "../conformance/vectors.js";
import { fmtValue } from "../core/message.js";
import { pyExp, pyFixed } from "../core/pyFormat.js";
import { requireObject } from "../core/validate.js";
import type { ClipReport } from "../diagnostics/clipping.js";
import type { EntropyReport } from "../diagnostics/entropy.js";
import type { ESSReport } from "../diagnostics/ess.js";
import type { LengthBiasReport } from "../diagnostics/lengthBias.js";
import type { MismatchReport } from "../diagnostics/mismatch.js";
import type { TrendReport } from "../diagnostics/trend.js";
import { ConfigError, fail } from "../errors.js";
import { renderClipText } from "./clipText.js";
import { conformanceSummary } from "./conformanceText.js";
import { renderEntropyText, renderTrendText } from "./entropyText.js";
import { renderEssText } from "./essText.js";
import { renderLengthBiasText } from "./lengthBiasText.js";
import { renderMismatchText } from "./mismatchText.js";

/** Every result `summarize` knows. */
export type SummarizableResult =
  | ESSReport
  | ClipReport
  | EntropyReport
  | TrendReport
  | MismatchReport
  | LengthBiasReport
  | ConformanceReport
  | DeviationReport
  | ComparisonReport
  | VectorsReport;

const has = (x: object, ...keys: string[]) => keys.every((k) => k in x);

/**
 * A vectors check report as text: the verdict, the differences, the worst case, every missing
 * output, the diagnosis (what `polgrad vectors check` prints).
 *
 * @param r - The report of checkVectors.
 * @param where - The folder and outputs file, for the first line.
 * @returns The lines, newline-joined (no trailing newline).
 * @derivation docs/vectors.md#check
 * @enforcedBy test/report/summarize.test.ts > summarize > golden: each result type gives its polgrad summary lines
 * @since 0.2.0
 */
export function renderVectorsText(
  r: VectorsReport,
  where: { dir: string; outputs: string } = { dir: "the vectors", outputs: "the outputs" },
): string {
  requireObject("renderVectorsText", "r", r, "a VectorsReport (checkVectors)", [
    "conforms",
    "cases",
    "reference",
    "tolerances",
    "problems",
  ]);
  requireObject("renderVectorsText", "where", where, "{dir, outputs}", ["dir", "outputs"]);
  return [
    `${r.conforms ? "conforms" : "DOES NOT CONFORM"}: ${r.cases} cases of ${where.dir} (${r.reference.kind} ${r.reference.name ?? "config"}), outputs ${where.outputs}`,
    `max loss rel diff ${pyExp(r.maxLossRelDiff, 3)} (loss_rtol ${pyExp(r.tolerances.lossRtol, 1)}), max grad rel diff ${pyExp(r.maxGradRelDiff, 3)} (grad_rtol ${pyExp(r.tolerances.gradRtol, 1)}), min grad cosine ${pyFixed(r.gradCosineMin, 9)}`,
    ...(r.worstCase === null
      ? []
      : [
          `worst case: ${r.worstCase.name} (seed ${r.worstCase.seed}, shape [${r.worstCase.shape.join(", ")}])`,
        ]),
    ...r.problems.map((p) => `missing or misshapen: ${p}`),
    ...(r.diagnosis === null ? [] : [r.diagnosis.text]),
  ].join("\n");
}

/**
 * The summary polgrad's `summary()` prints for a result, recognised by its fields: an ESS, clip,
 * entropy, trend, mismatch or length-bias report (Python's `.4g`), a conformance report
 * (assertConforms), a deviation or comparison report (polgrad's header `conformance over N seeded
 * cases: …` and notes), or a vectors check report.
 *
 * @param result - The result object.
 * @returns Its summary lines, newline-joined, without a trailing newline (as polgrad's).
 * @throws {ConfigError} E_CONFIG for an object summarize does not know.
 * @derivation docs/report.md
 * @enforcedBy test/report/summarize.test.ts > summarize > golden: each result type gives its polgrad summary lines
 * @since 0.2.0
 */
export function summarize(result: SummarizableResult): string {
  const r = result as unknown;
  if (r === null || typeof r !== "object")
    throw fail(ConfigError, "summarize", "result", "a polgrad result object", fmtValue(r));
  const x = r as object;
  if (has(x, "essRatio", "logWeightMean")) return renderEssText(x as ESSReport);
  if (has(x, "gradientKilledFrac")) return renderClipText(x as ClipReport);
  if (has(x, "entropyEstimate", "perSeqEntropy")) return renderEntropyText(x as EntropyReport);
  if (has(x, "cusumStat", "slope")) return renderTrendText(x as TrendReport);
  if (has(x, "gapQuantiles")) return renderMismatchText(x as MismatchReport);
  if (has(x, "slopeSe", "ciLow", "intercept")) return renderLengthBiasText(x as LengthBiasReport);
  if (has(x, "worstCase", "replay")) return conformanceSummary(x as ConformanceReport);
  if (has(x, "problems", "tolerances", "reference")) return renderVectorsText(x as VectorsReport);
  if (has(x, "worstCaseSeed", "maxLossRelDiff"))
    return deviationReportSummary({ notes: [], ...(x as ComparisonReport) });
  throw fail(
    ConfigError,
    "summarize",
    "result",
    "an ESS, clip, entropy, trend, mismatch, length-bias, conformance, deviation, comparison or vectors report",
    `an object with keys ${Object.keys(x).slice(0, 6).join(", ")}`,
  );
}
