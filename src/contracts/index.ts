/**
 * Reduction contracts (docs/contracts.md): an extension bolted onto a parent trainer must reduce
 * to the parent at zero coefficient — the loss bitwise, the gradient within the roundoff of the
 * training precision — and must be live when it has signal. This module registers the
 * parent/child nestings, checks them on a batch against tolerances *measured* by emulating bf16,
 * fp16, fp32 or fp64 arithmetic, and probes liveness. Signature contracts
 * (docs/conformance/drift.md#signature-contracts) live here too: pinned private-method signatures
 * and file hashes per release, checked against a checkout.
 */

export { evaluateMethod, evaluateStricter, pythonTupleRepr } from "./adapter.js";
export { type AdapterCheckOptions, checkAdapterContract } from "./adapterCheck.js";
export {
  ADAPTER_CONTRACTS,
  adapterContractJson,
  getAdapterContract,
  parseAdapterContract,
} from "./adapterFile.js";
export { type AdapterTableOptions, adapterTable, compareVersionTags } from "./adapterTable.js";
export { renderAdapterCheckText, renderAdapterTableText } from "./adapterText.js";
export type {
  AdapterCheckReport,
  AdapterContract,
  AdapterTable,
  AdapterTableRow,
  FilePin,
  FilePinCheck,
  MethodMessages,
  MethodRule,
  MethodVerdict,
  PinStatus,
  StricterFinding,
  StricterRule,
} from "./adapterTypes.js";
export {
  type CheckReductionOptions,
  checkReduction,
  type GradientComparison,
  type LossComparison,
  type ReductionCheck,
} from "./checkReduction.js";
export {
  BATCH_CONDITIONS,
  type BatchCondition,
  type ContractBatch,
  type ContractSide,
  defineReduction,
  type ReductionContract,
  type ReductionRelation,
  type SideEvaluation,
} from "./contract.js";
export {
  LivenessError,
  type LivenessMeasure,
  type LivenessOptions,
  type LivenessReport,
  PAPO_PROBE_MAX_DEGENERATE_BATCHES,
  papoLivenessMeasure,
  probeLiveness,
} from "./liveness.js";
export {
  type AuthorsGradient,
  type CalibratedGradient,
  checkObservedReduction,
  GAMMA_ZERO_GRADIENT_ABS_FLOOR,
  GAMMA_ZERO_GRADIENT_REL_TOL,
  type ObservedLoss,
  type ObservedPosition,
  type ObservedReduction,
  type ObservedReductionCheck,
  type ObservedReductionOptions,
} from "./observed.js";
export {
  type BatchFile,
  type LivenessForm,
  observedLivenessMeasure,
  orderBatchFiles,
} from "./observedLiveness.js";
export {
  OBSERVED_TENSOR_NAMES,
  type ObservedTensor,
  observedFromTensors,
} from "./observedTensors.js";
export { CONTRACT_PINS } from "./pins.js";
export {
  type CalibrationOptions,
  calibrateTolerance,
  PRECISIONS,
  Precision,
  roundToPrecision,
  type ScalarTolerance,
  type ToleranceCalibration,
  UNIT_ROUNDOFF,
} from "./precision.js";
export { getReduction, REDUCTION_NAMES, REDUCTIONS, type ReductionName } from "./reductions.js";
export { checkContract, recordContract, renderContractText } from "./signature.js";
export type {
  FileHashCheck,
  MethodCheck,
  MethodStatus,
  PinnedFileHash,
  PinnedMethod,
  SignatureContract,
  SignatureContractReport,
  SignatureContractSpec,
} from "./signatureTypes.js";
