/**
 * The reusable test kit of the verify suite: numeric assertions, mask invariance, arbitraries,
 * finite differences, branch safety and the configuration grid (house style §5.7).
 */
export {
  FC_PARAMS,
  JUNK,
  type LogprobBatch,
  logprobBatches,
  paddedMasks,
  type ValueBatch,
  valueBatches,
} from "./arbitraries.js";
export { absKlSafe, branchSafe, surrogateRatios, valueBranchSafe } from "./branchSafe.js";
export {
  AGGREGATIONS,
  buildConfig,
  IS_VARIANTS,
  KL_KINDS,
  KL_VARIANTS,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
  RATIOS,
  SURROGATES,
  type SurrogateVariant,
  sgFrozen,
  TIS_VARIANTS,
  variantLabel,
} from "./configs.js";
export { recordDisagreement, reportDisagreement } from "./disagreement.js";
export {
  caught,
  caughtAs,
  expectBitwise,
  expectClose,
  expectNormwiseClose,
  type Numeric,
  normwiseDisagreement,
} from "./expect.js";
export { centralDifference } from "./finiteDifference.js";
export { expectMaskInvariant, PADDING_PERTURBATIONS } from "./maskInvariance.js";
