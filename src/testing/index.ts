/**
 * `polgrad/testing`: certify a loss implementation against polgrad's semantics from any test
 * runner (docs/testing.md). Browser-safe: no `node:` import.
 */

export {
  type CandidateMatch,
  type MismatchDiagnosis,
  nearestMatch,
} from "../conformance/nearestMatch.js";
export {
  DEFAULT_TEST_SHAPES,
  polgradBatches,
  type RandomBatchOptions,
  randomBatches,
  type TestBatch,
} from "../conformance/randomBatches.js";
export { conformanceSummary } from "../report/conformanceText.js";
export {
  assertConforms,
  type ConformanceReport,
  type ConformsOptions,
  type ImplementationResult,
  type LossImplementation,
} from "./assertConforms.js";
