import { maskedDot } from "../aggregate/aggregate.js";
import { type Aggregation, checkAggregation } from "../aggregate/aggregation.js";
import { checkNormLen, fillTokenWeights } from "../aggregate/effectiveTokenWeights.js";
import type { MatrixLike } from "../core/tensor.js";
import { toMatrix } from "../core/validate.js";
import { klPoints } from "./klEstimate.js";
import type { KLAggregateOptions, LossWithGrad } from "./klLoss.js";

/**
 * The score-function surrogate whose gradient is the unbiased sample of ∇KL(π‖ref).
 *
 * Formula: L = Σ_{b,t} w_{b,t}·sg[lp − ref]_{b,t}·lp_{b,t}.
 * Gradient / stop-gradient: ∂L/∂lp = w·(lp − ref); sg[lp − ref] makes the difference a constant
 * weight on the score ∇lp. This equals the gradient of klLoss(k2) bitwise under every aggregation.
 *
 * @param logprobs - `[B, T]` current-policy logprobs.
 * @param refLogprobs - `[B, T]` reference-policy logprobs.
 * @param aggregation - The aggregation mode.
 * @param options - `responseMask` and `normLen`.
 * @returns The surrogate value and its gradient (0 at padding).
 * @throws {ShapeError} E_SHAPE when the streams are not 2-D or differ in shape.
 * @throws {MaskError} E_MASK when the mask is invalid.
 * @throws {NonFiniteError} E_NONFINITE when a stream is not finite at a response position.
 * @throws {ConfigError} E_CONFIG when normLen is invalid for token_sum_norm.
 * @derivation docs/derivations/kl.md#reverse-kl-gradient-surrogate
 * @enforcedBy test/kl/reverseKlGradSurrogate.test.ts > reverseKlGradSurrogate > identity: gradient equals the k2 kl loss gradient bitwise
 * @since 0.1.0
 */
export function reverseKlGradSurrogate(
  logprobs: MatrixLike,
  refLogprobs: MatrixLike,
  aggregation: Aggregation,
  options: KLAggregateOptions,
): LossWithGrad {
  const fn = "reverseKlGradSurrogate";
  const agg = checkAggregation(fn, "aggregation", aggregation);
  const lp = toMatrix(fn, "logprobs", logprobs);
  // k1's per-token value −(ref − lp) is lp − ref bitwise: reuse the validated pointwise pass.
  const { value: diff, mask } = klPoints(fn, lp, refLogprobs, "k1", options.responseMask);
  const normLen = checkNormLen(fn, agg, options.normLen);
  const n = diff.data.length;
  const w = new Float64Array(n);
  fillTokenWeights(mask, agg, normLen, w);
  const prod = new Float64Array(n);
  const grad = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (mask.data[i] !== 1) continue;
    const d = diff.data[i] as number;
    // sg[lp − ref]: the difference is a constant weight on the score ∇lp.
    prod[i] = d * (lp.data[i] as number);
    grad[i] = (w[i] as number) * d;
  }
  return {
    loss: maskedDot(w, prod, mask),
    gradLogprobs: { rows: diff.rows, cols: diff.cols, data: grad },
  };
}
