/**
 * Framework models: labelled TypeScript models of what verl, OpenRLHF and TRL's shipped loss code
 * computes at pinned commits — value and closed-form gradient w.r.t. logprobs, every framework
 * quirk included (log-ratio clamps, always-on dual clip, row ε divisors, hard-coded aggregations,
 * straight-through KL, float32 casts). See docs/conformance/frameworks.md.
 */
export type { OverrideKey } from "./batch.js";
export type {
  FrameworkModel,
  FrameworkName,
  FrameworkPin,
  FrameworkResult,
  FrameworkSettingValue,
  FrameworkStream,
} from "./model.js";
export {
  OPENRLHF_OVERRIDE_KEYS,
  OPENRLHF_VARIANTS,
  type OpenRlhfKlKind,
  type OpenRlhfLabel,
  type OpenRlhfOverrides,
  openRlhfModel,
} from "./openrlhf.js";
export { POLGRAD_VENDORED } from "./polgradVendored.js";
export {
  canonicalFrameworkModelId,
  FRAMEWORK_MODEL_IDS,
  FRAMEWORK_MODELS,
  frameworkOverrideKeys,
  getFrameworkModel,
} from "./registry.js";
export {
  TRL_OVERRIDE_KEYS,
  TRL_VARIANTS,
  type TrlLabel,
  type TrlLossType,
  type TrlOverrides,
  trlModel,
} from "./trl.js";
export {
  type TrlLuspoTokenInputs,
  type TrlLuspoTokenOptions,
  trlLuspoTokenLoss,
} from "./trlLuspo.js";
export {
  VERL_OVERRIDE_KEYS,
  VERL_VARIANTS,
  type VerlAggMode,
  type VerlKlKind,
  type VerlLabel,
  type VerlOverrides,
  verlModel,
} from "./verl.js";
