import { overflowError } from "../core/finite.js";
import type { Mask, MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import { checkFiniteAt, checkObject, checkSameShape, toMask, toMatrix } from "../core/validate.js";
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
  emptyRows: "reject" | "allow" = "reject",
): { value: Matrix; dLogprob: Float64Array; mask: Mask } {
  const k = checkKLEstimator(fn, "kind", kind);
  const lp = toMatrix(fn, lpArg, logprobs);
  const ref = toMatrix(fn, "refLogprobs", refLogprobs);
  checkSameShape(fn, lpArg, lp, "refLogprobs", ref);
  const like = { rows: lp.rows, cols: lp.cols, arg: lpArg };
  const mask = toMask(fn, responseMask, like, "responseMask", emptyRows);
  checkFiniteAt(fn, lpArg, lp, mask);
  checkFiniteAt(fn, "refLogprobs", ref, mask);
  return { ...klPointsOf(fn, lp, ref, k, mask, lpArg), mask };
}

/**
 * {@link klPoints} on inputs a caller has already validated (same shape, finite at the mask's
 * response positions, a known estimator): the same values, without re-checking. @internal
 */
export function klPointsOf(
  fn: string,
  lp: Matrix,
  ref: Matrix,
  k: KLEstimator,
  mask: Mask,
  lpArg: string,
): { value: Matrix; dLogprob: Float64Array } {
  const n = lp.rows * lp.cols;
  const value = new Float64Array(n);
  const d = new Float64Array(n);
  // The position of flat index i, only built for an error (no closure per token).
  const at = (i: number): number[] => [Math.floor(i / lp.cols), i % lp.cols];
  for (let i = 0; i < n; i++) {
    if (mask.data[i] !== 1) continue;
    const delta = (ref.data[i] as number) - (lp.data[i] as number);
    if (!Number.isFinite(delta)) {
      throw overflowError(
        fn,
        `refLogprobs - ${lpArg}`,
        delta,
        at(i),
        "the log-ratio exceeds float64",
      );
    }
    const pt = klPointwise(k, delta);
    if (!Number.isFinite(pt.value) || !Number.isFinite(pt.dLogprob)) {
      throw overflowError(
        fn,
        `${k} estimate`,
        pt.value,
        at(i),
        `the exact value at delta = ${String(delta)} exceeds float64`,
      );
    }
    value[i] = pt.value;
    d[i] = pt.dLogprob;
  }
  return { value: { rows: lp.rows, cols: lp.cols, data: value }, dLogprob: d };
}

/**
 * The `options` argument of the KL functions: an object holding at least `responseMask`.
 * @internal
 */
export function klOptions<T extends { readonly responseMask: MaskLike }>(
  fn: string,
  options: T,
): T {
  return checkObject(fn, "options", options);
}

/**
 * Estimate the per-token KL(π‖ref) with one of the estimators k1, k2, k3, abs.
 *
 * Formula: δ = ref − lp (zero at padding before any non-linearity); k1 = −δ; k2 = δ²/2;
 * k3 = expm1(δ) − δ (expm1 for precision near δ = 0; its Taylor series for |δ| < 2^-8, where the
 * subtraction would cancel); abs = abs(δ).
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
 * @throws {ConfigError} E_CONFIG when options is not an object.
 * @throws {OverflowError} E_OVERFLOW when ref − lp or an estimate exceeds float64 at a response
 *   position (k2 past |δ| ≈ 1.9e154, k3 past δ ≈ 709.78), naming the estimator and (b, t).
 * @derivation docs/derivations/kl.md#estimators
 * @enforcedBy test/kl/klEstimate.test.ts > klEstimate > golden: the four estimators at delta = -1 and 0.5
 * @enforcedBy test/hardening/stats.test.ts > klLoss > regression: k3 near delta = 0 is exact to an ulp, where expm1(delta) − delta cancels
 * @since 0.1.0
 */
export function klEstimate(
  logprobs: MatrixLike,
  refLogprobs: MatrixLike,
  kind: KLEstimator,
  options: { readonly responseMask: MaskLike },
): Matrix {
  const fn = "klEstimate";
  return klPoints(fn, logprobs, refLogprobs, kind, klOptions(fn, options).responseMask).value;
}
