/**
 * `polgrad/testing`: certify a loss implementation against polgrad's semantics from any test
 * runner (docs/testing.md). Browser-safe: no `node:` import.
 */
export {
  assertConforms,
  type ConformanceReport,
  type ConformsOptions,
  conformanceSummary,
  type ImplementationResult,
  type LossImplementation,
} from "./assertConforms.js";
export { type CandidateMatch, type MismatchDiagnosis, nearestMatch } from "./nearestMatch.js";
export {
  DEFAULT_TEST_SHAPES,
  polgradBatches,
  type RandomBatchOptions,
  randomBatches,
  type TestBatch,
} from "./randomBatches.js";
