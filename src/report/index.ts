/**
 * `polgrad/report`: the text renderers behind the CLI's reports, as library functions
 * (docs/report.md): `summarize(result)` (polgrad's `summary()`), one renderer per result type, and
 * the number formats. Browser-safe: no `node:` import.
 */
export { deviationReportSummary } from "../conformance/deviationPairs.js";
export { g4, pyExp, pyFixed, pyGeneral, sig4 } from "../core/pyFormat.js";
export { pyFloat, pyValue } from "../core/pyRepr.js";
export { renderClipText } from "./clipText.js";
export { conformanceSummary } from "./conformanceText.js";
export { renderBatchDiagnosisText, renderRunDiagnosisText } from "./diagnoseText.js";
export { renderEntropyText, renderTrendText } from "./entropyText.js";
export { renderEssText } from "./essText.js";
export { renderDiffText, renderExplainText, renderHistoryText } from "./explainText.js";
export { renderLengthBiasText } from "./lengthBiasText.js";
export { renderLossSummary, renderLossText } from "./lossText.js";
export { renderMismatchText } from "./mismatchText.js";
export { renderVectorsText, type SummarizableResult, summarize } from "./summarize.js";
export { renderVerifyText } from "./verifyText.js";
export { renderWhichText } from "./whichText.js";
