import { type Aggregation, checkAggregation } from "../aggregate/aggregation.js";
import {
  checkNormLen,
  fillContextWeights,
  type GlobalNormalizer,
} from "../aggregate/effectiveTokenWeights.js";
import type { EmptyRows } from "../aggregate/emptyRows.js";
import type { MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import type { KLEstimator } from "./estimator.js";
import { klOptions, klPoints } from "./klEstimate.js";
import { checkedMaskedDot } from "./robustDot.js";

/** A scalar loss with its closed-form gradient w.r.t. `logprobs`. */
export interface LossWithGrad {
  /** The scalar loss. */
  readonly loss: number;
  /** ∂loss/∂logprobs, `[B, T]`, exactly 0 at padding. */
  readonly gradLogprobs: Matrix;
}

/** Options of the aggregated KL functions. */
export interface KLAggregateOptions {
  /** `[B, T]` response mask. */
  readonly responseMask: MaskLike;
  /** Budget ℓ, required iff the aggregation is `token_sum_norm`. */
  readonly normLen?: number | null;
  /** The global context (docs/derivations/aggregation.md#global-normalisers); null or absent: none. */
  readonly global?: GlobalNormalizer | null;
  /** Rows with no response token: `reject` (default), `count` or `drop`, as policyLoss's config.emptyRows. */
  readonly emptyRows?: EmptyRows;
}

/** "allow" when the options ask for rows with no response token to be counted or dropped. @internal */
export function emptyRowsAllowed(opts: { readonly emptyRows?: unknown }): "reject" | "allow" {
  return opts.emptyRows === "count" || opts.emptyRows === "drop" ? "allow" : "reject";
}

/**
 * Aggregate a KL estimator into an as-loss KL term, with its gradient.
 *
 * Formula: L = Σ_{b,t} w_{b,t}·k(δ_{b,t}), δ = ref − lp — exactly aggregate(klEstimate(...)).
 * Gradient / stop-gradient: ∂L/∂lp = w·k'(δ)·(−1): k1 → w; k2 → w·(lp − ref); k3 → w·(1 − e^δ)
 * = −w·expm1(δ); abs → −w·sign(δ) (0 at δ = 0); ref is constant.
 *
 * @param logprobs - `[B, T]` current-policy logprobs.
 * @param refLogprobs - `[B, T]` reference-policy logprobs.
 * @param kind - The estimator.
 * @param aggregation - The aggregation mode.
 * @param options - `responseMask`, `normLen`, and `global` and `emptyRows` as effectiveTokenWeights.
 * @returns The KL term and its gradient (0 at padding).
 * @throws {ShapeError} E_SHAPE when the streams are not 2-D or differ in shape.
 * @throws {MaskError} E_MASK when the mask is invalid.
 * @throws {NonFiniteError} E_NONFINITE when a stream is not finite at a response position.
 * @throws {ConfigError} E_CONFIG when normLen is invalid for token_sum_norm.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown estimator or mode.
 * @throws {OverflowError} E_OVERFLOW when ref − lp, a per-token estimate or the aggregated loss
 *   exceeds float64 (k2 past |δ| ≈ 1.9e154, k3 past δ ≈ 709.78), naming the quantity and (b, t).
 * @derivation docs/derivations/kl.md#kl-loss
 * @enforcedBy test/kl/klLoss.test.ts > klLoss > identity: equals aggregate of klEstimate bitwise
 * @enforcedBy test/aggregate/emptyRowsAndGlobal.test.ts > klLoss, reverseKlGradSurrogate and valueLoss with empty rows and a global context > identity: klLoss is policyLoss's KL term and reverseKlGradSurrogate's gradient k2's, every mode, count and drop, with and without a context
 * @enforcedBy test/hardening/stats.test.ts > klLoss > regression: k3 at delta = 1e4 is an OverflowError naming the estimate and position
 * @enforcedBy test/hardening/stats.test.ts > klLoss > property: extreme logprobs give finite results matching klLossRef, or OverflowError
 * @since 0.1.0
 */
export function klLoss(
  logprobs: MatrixLike,
  refLogprobs: MatrixLike,
  kind: KLEstimator,
  aggregation: Aggregation,
  options: KLAggregateOptions,
): LossWithGrad {
  const fn = "klLoss";
  const agg = checkAggregation(fn, "aggregation", aggregation);
  const opts = klOptions(fn, options);
  const { value, dLogprob, mask } = klPoints(
    fn,
    logprobs,
    refLogprobs,
    kind,
    opts.responseMask,
    "logprobs",
    emptyRowsAllowed(opts),
  );
  const normLen = checkNormLen(fn, agg, opts.normLen);
  const w = new Float64Array(value.data.length);
  fillContextWeights(fn, mask, agg, normLen, opts, w);
  const grad = new Float64Array(w.length);
  for (let i = 0; i < w.length; i++)
    if (mask.data[i] === 1) grad[i] = (w[i] as number) * (dLogprob[i] as number);
  return {
    loss: checkedMaskedDot(fn, "klLoss", w, value.data, mask),
    gradLogprobs: { rows: value.rows, cols: value.cols, data: grad },
  };
}
