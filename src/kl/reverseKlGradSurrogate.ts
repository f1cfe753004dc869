import { type Aggregation, checkAggregation } from "../aggregate/aggregation.js";
import { checkNormLen, fillContextWeights } from "../aggregate/effectiveTokenWeights.js";
import { overflowError } from "../core/finite.js";
import type { MatrixLike } from "../core/tensor.js";
import { toMatrix } from "../core/validate.js";
import { klOptions, klPoints } from "./klEstimate.js";
import { emptyRowsAllowed, type KLAggregateOptions, type LossWithGrad } from "./klLoss.js";
import { checkedMaskedDot } from "./robustDot.js";

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
 * @throws {OverflowError} E_OVERFLOW when lp − ref, a term (lp − ref)·lp or the aggregated value
 *   exceeds float64, naming the quantity and (b, t).
 * @derivation docs/derivations/kl.md#reverse-kl-gradient-surrogate
 * @enforcedBy test/kl/reverseKlGradSurrogate.test.ts > reverseKlGradSurrogate > identity: gradient equals the k2 kl loss gradient bitwise
 * @enforcedBy test/hardening/stats.test.ts > reverseKlGradSurrogate > rejects: a surrogate term (lp − ref)·lp beyond float64 with an OverflowError
 * @enforcedBy test/aggregate/emptyRowsAndGlobal.test.ts > klLoss, reverseKlGradSurrogate and valueLoss with empty rows and a global context > identity: klLoss is policyLoss's KL term and reverseKlGradSurrogate's gradient k2's, every mode, count and drop, with and without a context
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
  const opts = klOptions(fn, options);
  const { value: diff, mask } = klPoints(
    fn,
    lp,
    refLogprobs,
    "k1",
    opts.responseMask,
    "logprobs",
    emptyRowsAllowed(opts),
  );
  const normLen = checkNormLen(fn, agg, opts.normLen);
  const n = diff.data.length;
  const w = new Float64Array(n);
  fillContextWeights(fn, mask, agg, normLen, opts, w);
  const prod = new Float64Array(n);
  const grad = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (mask.data[i] !== 1) continue;
    const d = diff.data[i] as number;
    // sg[lp − ref]: the difference is a constant weight on the score ∇lp.
    prod[i] = d * (lp.data[i] as number);
    if (!Number.isFinite(prod[i] as number)) {
      throw overflowError(
        fn,
        "(logprobs - refLogprobs)·logprobs",
        prod[i] as number,
        [Math.floor(i / diff.cols), i % diff.cols],
        "the exact surrogate term exceeds float64",
      );
    }
    grad[i] = (w[i] as number) * d;
  }
  return {
    loss: checkedMaskedDot(fn, "reverseKlGradSurrogate", w, prod, mask),
    gradLogprobs: { rows: diff.rows, cols: diff.cols, data: grad },
  };
}
