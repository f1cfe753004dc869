/**
 * polgrad/verify: falsifiable checks for any loss (docs/derivations/verify.md). An exact
 * reverse-mode autodiff over float64 scalars and equation-level references of polgrad's losses
 * (docs/derivations/reference.md), central-difference checks that draw seeded batches away from
 * kinks and report a replayable seed, a gradient-formula check, the golden cases, and seeded
 * randomness. Import as `import { gradcheck } from "polgrad/verify"`.
 */
export { createRng, type Rng, seedFromName } from "../core/rng.js";
export { VerificationError } from "../errors.js";
export { Adam, type AdamOptions } from "./adam.js";
export {
  abs,
  add,
  clamp,
  div,
  exp,
  expm1,
  grad,
  log,
  max,
  min,
  mul,
  Node,
  neg,
  type Scalar,
  scalarValue,
  sg,
  square,
  sub,
  sum,
  where,
} from "./autodiff.js";
export { type BanditBatch, SoftmaxBandit } from "./bandit.js";
export {
  checkGradientFormula,
  type FormulaReport,
  type FormulaTolerances,
} from "./checkGradientFormula.js";
export { type DrawnBatch, drawBatch, PADDING_JUNK } from "./draw.js";
export { type FailureParts, formatFailure } from "./failure.js";
export { type GoldenCase, goldenCases } from "./goldens.js";
export {
  type GradcheckOptions,
  type GradcheckReport,
  type GradcheckWorst,
  gradcheck,
  type ValueAndGrad,
} from "./gradcheck.js";
export {
  gradcheckLoss,
  inputsFor,
  policyKinkDistance,
  sgFrozenEquivalent,
} from "./gradcheckLoss.js";
export {
  type CltToleranceOptions,
  cltTolerance,
  type McEstimate,
  type McMeanOptions,
  type MomentStats,
  mcMean,
  RunningMoments,
} from "./mc.js";
export {
  klEstimatorRef,
  klLossRef,
  type PapoReference,
  type PapoRefInputs,
  type PolicyLossReference,
  type PolicyLossRefInputs,
  papoRef,
  policyLossRef,
  type ReferenceResult,
  reverseKlGradSurrogateRef,
  type ValueLossReference,
  valueLossRef,
} from "./reference/index.js";
