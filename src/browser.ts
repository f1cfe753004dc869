/**
 * `polgrad/browser`: the browser entry (docs/browser.md). Everything of the root entry that runs
 * without Node: the losses, aggregation, KL, advantages, registry, verification, the diagnostics of
 * in-memory batches, the framework models and config resolvers, conformance, the text reports,
 * and the tensor-file parsers over bytes (safetensors, JSON, npy, npz, pt). Not here: reading
 * files and folders, the run scanner and run diagnosis over a folder, the demo run writer, drift
 * and contract checks of a checkout (tree-sitter). No module reachable from this one imports a
 * `node:` module (test/browser/entry.test.ts).
 */
export {
  broadcastToTokens,
  DEFAULT_GROUP_NORM,
  DEFAULT_REINFORCE_PP_EPS,
  type GAEConfig,
  type GAEOptions,
  type GAEResult,
  GROUP_NORM_SCALES,
  type GroupIdsLike,
  type GroupNormConfig,
  GroupNormScale,
  gae,
  gpgAdvantages,
  grpoAdvantages,
  type LOOConfig,
  looAdvantages,
  MASKED_RETURNS,
  MaskedReturn,
  NAN_REWARDS,
  NanRewards,
  opoAdvantages,
  type PassAtKConfig,
  passAtKAdvantages,
  type ReinforcePPConfig,
  type ReturnsToGoOptions,
  reinforcePPAdvantages,
  remaxAdvantages,
  returnsToGo,
  rlooAdvantages,
  SINGLETON_POLICIES,
  SingletonPolicy,
  type WhitenOptions,
  whiten,
} from "./advantages/index.js";
export {
  AGGREGATIONS,
  Aggregation,
  type AggregationOptions,
  aggregate,
  effectiveTokenWeights,
  type GlobalNormalizer,
  type MicrobatchOptions,
  microbatchTokenWeights,
  NORM_LEN_SOURCES,
  type NormLenSource,
} from "./aggregate/index.js";
export {
  type ComparedLoss,
  type CompareOptions,
  type ComparisonReport,
  compareLosses,
} from "./conformance/compare.js";
export {
  DEVIATION_PAIRS,
  type DeviationPair,
  type DeviationReport,
  type DeviationReportOptions,
  deviationReport,
  deviationReportSummary,
  type MeasuredPair,
  measureDeviationPairs,
} from "./conformance/deviationPairs.js";
export { DEVIATIONS, type Deviation, type DeviationMeasurement } from "./conformance/deviations.js";
export {
  type ConfigDiff,
  diffExplanations,
} from "./conformance/frameworkConfig/diff.js";
export {
  compareConfigs,
  compareWithAlgorithm,
  type Explanation,
  explainFrameworkConfig,
  explainResolution,
  type NearestAlgorithm,
  type ResolveOptions,
  resolveFrameworkConfig,
} from "./conformance/frameworkConfig/explain.js";
export { type KeyHistory, keyHistory } from "./conformance/frameworkConfig/history.js";
export {
  type ConfigEntry,
  type ParsedFrameworkConfig,
  parseFrameworkConfig,
} from "./conformance/frameworkConfig/parse.js";
export { findRelease, type ReleaseRef } from "./conformance/frameworkConfig/releases.js";
export {
  evaluateResolution,
  type FrameworkResolution,
  type LossPlan,
  type ResolutionResult,
  type ResolvedSetting,
} from "./conformance/frameworkConfig/resolution.js";
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
  frameworkOverrideKeys,
  getFrameworkModel,
  OPENRLHF_OVERRIDE_KEYS,
  OPENRLHF_VARIANTS,
  type OpenRlhfKlKind,
  type OpenRlhfLabel,
  type OpenRlhfOverrides,
  type OverrideKey,
  openRlhfModel,
  POLGRAD_VENDORED,
  TRL_OVERRIDE_KEYS,
  TRL_VARIANTS,
  type TrlLabel,
  type TrlLossType,
  type TrlLuspoTokenInputs,
  type TrlLuspoTokenOptions,
  type TrlOverrides,
  trlLuspoTokenLoss,
  trlModel,
  VERL_OVERRIDE_KEYS,
  VERL_VARIANTS,
  type VerlAggMode,
  type VerlKlKind,
  type VerlLabel,
  type VerlOverrides,
  verlModel,
} from "./conformance/frameworks/index.js";
export { DRIFT_PINS } from "./conformance/pins.js";
export {
  loadReleaseFacts,
  releaseFactsFile,
  releaseFactsLoaded,
} from "./conformance/releases/store.js";
export {
  checkVectors,
  type EmittedVectors,
  type EmitVectorsOptions,
  emitVectors,
  type VectorStream,
  type VectorsManifest,
  type VectorsReport,
} from "./conformance/vectors.js";
export { verlGrpoAdvantages, verlRlooAdvantages } from "./conformance/verlAdvantages.js";
export { quantiles } from "./core/quantile.js";
export {
  type DenseLike,
  type Mask,
  type MaskLike,
  type Matrix,
  type MatrixLike,
  mask,
  maskToRows,
  matrix,
  type NumberRow,
  type NumericTypedArray,
  toRows,
  type VectorLike,
} from "./core/tensor.js";
export { type ClipReport, clipReport } from "./diagnostics/clipping.js";
export {
  type Alarm,
  type AlarmCode,
  type BatchDiagnosis,
  DETECTORS,
  type DetectorName,
  type DiagnoseOptions,
  diagnoseBatch,
  type SkippedDetector,
} from "./diagnostics/diagnoseBatch.js";
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
  MANN_KENDALL_EXACT_MAX,
  type MannKendallResult,
  mannKendall,
} from "./diagnostics/mannKendall.js";
export {
  DEFAULT_CATASTROPHIC_GAP,
  type LogprobMismatchOptions,
  logprobMismatch,
  MISMATCH_QUANTILE_LEVELS,
  type MismatchReport,
} from "./diagnostics/mismatch.js";
export {
  RUN_STEPS_KIND,
  type RunStepSettings,
  type RunSteps,
  type StepRange,
} from "./diagnostics/runSteps.js";
export { type SeriesTrend, seriesTrend } from "./diagnostics/seriesTrend.js";
export {
  type CusumResult,
  cusumStatistic,
  type TheilSenFit,
  type TrendOptions,
  type TrendReport,
  theilSenFit,
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
export {
  type Batch,
  type BatchSource,
  type BatchTensorName,
  type PartialBatch,
  REQUIRED_BATCH_TENSORS,
  type ToBatchOptions,
  toBatch,
  toPartialBatch,
} from "./io/batch.js";
export {
  type LossConfigFromJson,
  type PerceptionJson,
  parseLossConfig,
  perceptionSettings,
  perceptionToJson,
} from "./io/configJson.js";
export {
  type CustomNameMap,
  NAME_MAP_IDS,
  type NameMapId,
  type NameOptions,
  type NameResolution,
  type ResponseSlice,
  resolveNames,
} from "./io/names.js";
export { parseNpy } from "./io/npy.js";
export { parseNpz } from "./io/npz.js";
export { readTensorsFromBytes } from "./io/readers.js";
export { parseSafetensors } from "./io/safetensors.js";
export { tensorsFromJson } from "./io/tensorsFromJson.js";
export type { NamedTensor, TensorDtype, TensorFormat, TensorSet } from "./io/tensorTypes.js";
export { parsePt } from "./io/torchPt.js";
export {
  type AdaptiveKLOptions,
  adaptiveKlCoef,
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
  appliedEntropyCoef,
  type ClipConfig,
  type ClipCovOptions,
  type ClipCovSelection,
  clipCovInputs,
  clipCovSelection,
  DEFAULT_CLIP_COV,
  DEFAULT_ENTROPY_CONTROLLER,
  DEFAULT_KL_COV_RATIO,
  type EntropyBonusConfig,
  type EntropyControllerConfig,
  type EntropyControllerState,
  entropyControllerStep,
  type ISCorrectionConfig,
  type ISRowMask,
  type KlCovOptions,
  klCovSelection,
  POLICY_LOSS_FIELDS,
  type PolicyLossConfig,
  type PolicyLossField,
  type PolicyLossInputs,
  type PolicyLossOptions,
  type PolicyLossOut,
  type PolicyLossResult,
  policyLoss,
  RATIO_KINDS,
  RatioKind,
  SURROGATE_KINDS,
  SurrogateKind,
  topEntropyMask,
  type ValueLossOptions,
  type ValueLossResult,
  valueLoss,
} from "./losses/index.js";
export { type PapoInputs, type PapoResult, papoLoss } from "./losses/papo.js";
export {
  type DoubleEntropyConfig,
  PAPO_FORMS,
  PAPO_PRESET_NAMES,
  PAPO_PRESETS,
  type PapoConfig,
  PapoForm,
  PapoPreset,
  type PapoSettings,
  type PerceptionConfig,
  withPapoSettings,
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
export { type SummarizableResult, summarize } from "./report/summarize.js";
export {
  assertConforms,
  type ConformanceReport,
  type ConformsOptions,
  conformanceSummary,
  randomBatches,
  type TestBatch,
} from "./testing/index.js";
export { VERSION } from "./version.js";
export {
  BUILTIN_BATCH,
  type WhichCrossCheck,
  type WhichReport,
  type WhichRow,
  whichTable,
} from "./which/index.js";
