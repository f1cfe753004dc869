import type { Mask, MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import { checkFiniteAt, checkSameShape, toMask, toMatrix } from "../core/validate.js";
import { checkKLEstimator, type KLEstimator, klPointwise } from "./estimator.js";

/**
 * Validate (logprobs, refLogprobs, mask) and evaluate an estimator at every response position with
 * δ = ref − lp zero-filled at padding *before* the non-linearity.
 * @internal
 */
export function klPoints(
  fn: string,
  logprobs: MatrixLike,
  refLogprobs: MatrixLike,
  kind: KLEstimator,
  responseMask: MaskLike,
  lpArg = "logprobs",
): { value: Matrix; dLogprob: Float64Array; mask: Mask } {
  const k = checkKLEstimator(fn, "kind", kind);
  const lp = toMatrix(fn, lpArg, logprobs);
  const ref = toMatrix(fn, "refLogprobs", refLogprobs);
  checkSameShape(fn, lpArg, lp, "refLogprobs", ref);
  const mask = toMask(fn, responseMask, { rows: lp.rows, cols: lp.cols, arg: lpArg });
  checkFiniteAt(fn, lpArg, lp, mask);
  checkFiniteAt(fn, "refLogprobs", ref, mask);
  const n = lp.rows * lp.cols;
  const value = new Float64Array(n);
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (mask.data[i] !== 1) continue;
    const pt = klPointwise(k, (ref.data[i] as number) - (lp.data[i] as number));
    value[i] = pt.value;
    d[i] = pt.dLogprob;
  }
  return { value: { rows: lp.rows, cols: lp.cols, data: value }, dLogprob: d, mask };
}

/**
 * Estimate the per-token KL(π‖ref) with one of the estimators k1, k2, k3, abs.
 *
 * Formula: δ = ref − lp (zero at padding before any non-linearity); k1 = −δ; k2 = δ²/2;
 * k3 = expm1(δ) − δ (expm1 for precision near δ = 0); abs = abs(δ).
 * Gradient / stop-gradient: refLogprobs is constant; the derivatives are those of {@link klLoss}.
 *
 * @param logprobs - `[B, T]` current-policy logprobs.
 * @param refLogprobs - `[B, T]` reference-policy logprobs.
 * @param kind - The estimator.
 * @param options - `responseMask`, the `[B, T]` mask.
 * @returns `[B, T]` per-token estimates, exactly 0 at padding.
 * @throws {ShapeError} E_SHAPE when the streams are not 2-D or differ in shape.
 * @throws {MaskError} E_MASK when the mask is invalid.
 * @throws {NonFiniteError} E_NONFINITE when a stream is not finite at a response position.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown estimator.
 * @derivation docs/derivations/kl.md#estimators
 * @enforcedBy test/kl/klEstimate.test.ts > klEstimate > golden: the four estimators at delta = -1 and 0.5
 * @since 0.1.0
 */
export function klEstimate(
  logprobs: MatrixLike,
  refLogprobs: MatrixLike,
  kind: KLEstimator,
  options: { readonly responseMask: MaskLike },
): Matrix {
  return klPoints("klEstimate", logprobs, refLogprobs, kind, options.responseMask).value;
}
