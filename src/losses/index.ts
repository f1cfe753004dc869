/**
 * Policy and value losses: the configuration algebra (ratio × surrogate × clip × aggregation ×
 * TIS × KL) and the loss functions, each returning its value and closed-form gradient
 * (docs/derivations/losses.md).
 */
export {
  type ClipConfig,
  type EntropyBonusConfig,
  type ISCorrectionConfig,
  type ISRowMask,
  type PolicyLossConfig,
  RATIO_KINDS,
  RatioKind,
  SURROGATE_KINDS,
  SurrogateKind,
} from "./config.js";
export {
  type ClipCovOptions,
  type ClipCovSelection,
  clipCovInputs,
  clipCovSelection,
  DEFAULT_CLIP_COV,
  DEFAULT_KL_COV_RATIO,
  type KlCovOptions,
  klCovSelection,
} from "./covariance.js";
export {
  appliedEntropyCoef,
  DEFAULT_ENTROPY_CONTROLLER,
  type EntropyControllerConfig,
  type EntropyControllerState,
  entropyControllerStep,
} from "./entropyControl.js";
export { topEntropyMask } from "./entropyMask.js";
export {
  POLICY_LOSS_FIELDS,
  type PolicyLossField,
  type PolicyLossInputs,
  type PolicyLossOptions,
  type PolicyLossOut,
  type PolicyLossResult,
  policyLoss,
} from "./policyLoss.js";
export { type ValueLossOptions, type ValueLossResult, valueLoss } from "./valueLoss.js";
