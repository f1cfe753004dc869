/**
 * polgrad: the exact semantics of LLM policy-gradient post-training losses, in float64 with
 * closed-form gradients. This file is the whole public API, re-exported by name.
 */
export {
  broadcastToTokens,
  DEFAULT_GROUP_NORM,
  DEFAULT_REINFORCE_PP_EPS,
  type GAEConfig,
  type GAEResult,
  GROUP_NORM_SCALES,
  type GroupIdsLike,
  type GroupNormConfig,
  GroupNormScale,
  gae,
  grpoAdvantages,
  type ReinforcePPConfig,
  reinforcePPAdvantages,
  rlooAdvantages,
  type WhitenOptions,
  whiten,
} from "./advantages/index.js";
export {
  AGGREGATIONS,
  Aggregation,
  type AggregationOptions,
  aggregate,
  effectiveTokenWeights,
  type MicrobatchOptions,
  microbatchTokenWeights,
} from "./aggregate/index.js";
export {
  type ComparedLoss,
  type CompareOptions,
  type ComparisonReport,
  compareLosses,
} from "./conformance/compare.js";
export { DEVIATIONS, type Deviation, type DeviationMeasurement } from "./conformance/deviations.js";
export {
  type DefinitionDrift,
  type DefinitionStatus,
  DRIFT_FRAMEWORKS,
  type DriftFramework,
  type DriftOptions,
  type DriftPinnedFile,
  type DriftPins,
  type DriftReport,
  driftCheck,
  type FileDrift,
  type FileHashStatus,
  type LineSpan,
  type PinnedDefinition,
  recordPins,
  renderDriftText,
  type TrackedFile,
  type TrackedFramework,
} from "./conformance/drift.js";
export {
  canonicalFrameworkModelId,
  FRAMEWORK_MODEL_IDS,
  FRAMEWORK_MODELS,
  type FrameworkModel,
  type FrameworkName,
  type FrameworkPin,
  type FrameworkResult,
  type FrameworkSettingValue,
  type FrameworkStream,
  getFrameworkModel,
  OPENRLHF_VARIANTS,
  type OpenRlhfKlKind,
  type OpenRlhfLabel,
  openRlhfModel,
  TRL_VARIANTS,
  type TrlLabel,
  type TrlLossType,
  type TrlOverrides,
  trlModel,
  VERL_VARIANTS,
  type VerlAggMode,
  type VerlKlKind,
  type VerlLabel,
  type VerlOverrides,
  verlModel,
} from "./conformance/frameworks/index.js";
export { DRIFT_PINS } from "./conformance/pins.js";
export {
  type DefinitionKind,
  type ExtractOptions,
  extractDefinitions,
  type IndexedParameter,
  type ParameterChange,
  type ParameterDiff,
  type ParameterKind,
  type ParameterRename,
  type PythonDefinition,
  type PythonParameter,
} from "./conformance/python/index.js";
export { verlGrpoAdvantages, verlRlooAdvantages } from "./conformance/verlAdvantages.js";
export {
  BATCH_CONDITIONS,
  type BatchCondition,
  type CalibrationOptions,
  type CheckReductionOptions,
  CONTRACT_PINS,
  type ContractBatch,
  type ContractSide,
  calibrateTolerance,
  checkContract,
  checkReduction,
  defineReduction,
  type FileHashCheck,
  type GradientComparison,
  getReduction,
  LivenessError,
  type LivenessMeasure,
  type LivenessOptions,
  type LivenessReport,
  type LossComparison,
  type MethodCheck,
  type MethodStatus,
  type PinnedFileHash,
  type PinnedMethod,
  PRECISIONS,
  Precision,
  papoLivenessMeasure,
  probeLiveness,
  REDUCTION_NAMES,
  REDUCTIONS,
  type ReductionCheck,
  type ReductionContract,
  type ReductionName,
  type ReductionRelation,
  recordContract,
  renderContractText,
  roundToPrecision,
  type ScalarTolerance,
  type SideEvaluation,
  type SignatureContract,
  type SignatureContractReport,
  type SignatureContractSpec,
  type ToleranceCalibration,
  UNIT_ROUNDOFF,
} from "./contracts/index.js";
export type { Mask, MaskLike, Matrix, MatrixLike, VectorLike } from "./core/tensor.js";
export { maskToRows, toRows } from "./core/tensor.js";
export {
  type DemoRunOptions,
  type DemoRunPlan,
  demoRunPlan,
  writeDemoRun,
} from "./demo/demoRun.js";
export { type ClipReport, clipReport } from "./diagnostics/clipping.js";
export {
  type BatchDiagnosis,
  DETECTORS,
  type DetectorName,
  type DiagnoseOptions,
  diagnoseBatch,
  type SkippedDetector,
} from "./diagnostics/diagnoseBatch.js";
export {
  type DiagnoseRunOptions,
  diagnoseRun,
  listRunSteps,
  type RunDiagnosis,
  type RunProblem,
  type RunStep,
  type SeriesSummary,
} from "./diagnostics/diagnoseRun.js";
export {
  type EntropyOptions,
  type EntropyReport,
  entropyTrend,
  tokenEntropyEstimate,
} from "./diagnostics/entropy.js";
export {
  ESS_LEVELS,
  type ESSLevel,
  type ESSReport,
  essFromLogWeights,
  type ImportanceEssOptions,
  importanceEss,
  type SlidingEssOptions,
  slidingEss,
} from "./diagnostics/ess.js";
export {
  type LengthBiasOptions,
  type LengthBiasReport,
  lengthBiasProbe,
} from "./diagnostics/lengthBias.js";
export {
  DEFAULT_CATASTROPHIC_GAP,
  type LogprobMismatchOptions,
  logprobMismatch,
  MISMATCH_QUANTILE_LEVELS,
  type MismatchReport,
} from "./diagnostics/mismatch.js";
export { quantiles } from "./diagnostics/quantile.js";
export {
  type CusumResult,
  cusumStatistic,
  type TrendOptions,
  type TrendReport,
  theilSenSlope,
  trendTest,
} from "./diagnostics/trend.js";
export {
  ConfigError,
  type ErrorCode,
  IoError,
  MaskError,
  NonFiniteError,
  OverflowError,
  PolgradError,
  ShapeError,
  UnknownNameError,
  UsageError,
  VerificationError,
} from "./errors.js";
export { type PartialBatch, toPartialBatch } from "./io/batch.js";
export {
  BATCH_TENSOR_NAMES,
  type Batch,
  type BatchSource,
  type BatchTensorName,
  contractBatchFromTensors,
  encodeSafetensors,
  type NamedTensor,
  type PolicyLossConfigJson,
  parsePolicyLossConfig,
  parseSafetensors,
  policyLossConfigToJson,
  REQUIRED_BATCH_TENSORS,
  type ReadBatchOptions,
  readBatch,
  readerFor,
  readJsonFile,
  readSafetensors,
  readTensors,
  TENSOR_DTYPES,
  TENSOR_READERS,
  type TensorDtype,
  type TensorReader,
  type TensorSet,
  type TensorsToWrite,
  type TensorToWrite,
  tensorsFromJson,
  toBatch,
  writeSafetensors,
} from "./io/index.js";
export {
  KL_ESTIMATORS,
  type KLAggregateOptions,
  KLEstimator,
  type KLLossConfig,
  klEstimate,
  klInReward,
  klLoss,
  type LossWithGrad,
  reverseKlGradSurrogate,
} from "./kl/index.js";
export {
  type ClipConfig,
  type ISCorrectionConfig,
  type PolicyLossConfig,
  type PolicyLossInputs,
  type PolicyLossResult,
  policyLoss,
  RATIO_KINDS,
  RatioKind,
  SURROGATE_KINDS,
  SurrogateKind,
  type ValueLossOptions,
  type ValueLossResult,
  valueLoss,
} from "./losses/index.js";
export { type PapoInputs, type PapoResult, papoLoss } from "./losses/papo.js";
export {
  type DoubleEntropyConfig,
  PAPO_FORMS,
  type PapoConfig,
  PapoForm,
  type PerceptionConfig,
} from "./losses/papoConfig.js";
export { papoDLoss, papoDTrlLoss } from "./registry/algorithms/papoD.js";
export { papoGLoss, papoGTrlLoss } from "./registry/algorithms/papoG.js";
export {
  type AdvantageConfig,
  type AdvantageKind,
  ALGORITHM_NAMES,
  ALGORITHMS,
  type AlgorithmName,
  type AlgorithmSpec,
  type Citation,
  defineAlgorithm,
  describeAlgorithm,
  getAlgorithm,
  type KLPlacement,
} from "./registry/index.js";
export {
  BUILTIN_BATCH,
  type WhichCrossCheck,
  type WhichReport,
  type WhichRow,
  whichTable,
} from "./which/index.js";

/** The package version. */
export const VERSION: string = "0.1.0";
