/**
 * Equation-level reference implementations of the polgrad losses, differentiated exactly by the
 * reverse-mode autodiff of `../autodiff.ts`. Used only by tests and verification: they share no
 * code with the closed forms (docs/derivations/reference.md).
 */
export {
  klEstimatorRef,
  klLossRef,
  type ReferenceResult,
  reverseKlGradSurrogateRef,
} from "./klLossRef.js";
export { type PapoReference, type PapoRefInputs, papoRef } from "./papoRef.js";
export {
  type PolicyLossReference,
  type PolicyLossRefInputs,
  policyLossRef,
} from "./policyLossRef.js";
export { type ValueLossReference, valueLossRef } from "./valueLossRef.js";
