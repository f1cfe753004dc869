/**
 * Reference for the as-loss KL term and for the per-token estimators, written from the estimator
 * definitions over the autodiff scalar (docs/derivations/reference.md#kl).
 */
import type { Aggregation } from "../../aggregate/aggregation.js";
import type { MaskLike, Matrix, MatrixLike } from "../../core/tensor.js";
import { requireObject } from "../../core/validate.js";
import type { KLEstimator } from "../../kl/estimator.js";
import {
  abs,
  add,
  div,
  expm1,
  grad,
  mul,
  neg,
  type Scalar,
  sg,
  square,
  sub,
  sum,
} from "../autodiff.js";
import { checkRefStreams } from "./entry.js";
import {
  aggregationWeightsRef,
  maskRowsOf,
  matrixOf,
  responsePositions,
  rowsOf,
} from "./inputs.js";

/**
 * Value and gradient of a reference loss with respect to its differentiable `[B, T]` input.
 * @since 0.1.0
 */
export interface ReferenceResult {
  /** The scalar loss. */
  readonly loss: number;
  /** ∂loss/∂input, `[B, T]`, exactly 0 at padding (padding never becomes a node). */
  readonly grad: Matrix;
}

/**
 * Evaluate one KL estimator at δ = ref − lp, as written in its definition.
 *
 * Formula: k1 = −δ; k2 = δ²/2; k3 = expm1(δ) − δ (its Taylor series through δ⁸/8! for |δ| < 1e-3,
 * where the difference cancels); abs = |δ| (abs'(0) = 0).
 * Gradient / stop-gradient: none; differentiated through δ.
 *
 * @param kind - The estimator.
 * @param delta - δ = ref_logprobs − logprobs at one response position.
 * @returns The estimator value as a differentiable scalar.
 * @derivation docs/derivations/reference.md#kl
 * @enforcedBy test/verify/reference.golden.test.ts > klLossRef > golden: estimator values at δ = (−1, 0.5)
 * @since 0.1.0
 */
export function klEstimatorRef(kind: KLEstimator, delta: Scalar): Scalar {
  switch (kind) {
    case "k1":
      return neg(delta);
    case "k2":
      return div(square(delta), 2);
    case "k3": {
      // Near δ = 0, expm1(δ) − δ cancels (and so does its autodiff derivative e^δ − 1): there the
      // Taylor series δ²/2 + δ³/6 + … + δ⁸/8! of the same function, error below δ⁹/9! (< 3e-33
      // relative at |δ| < 1e-3), gives value and derivative to the last bits.
      if (Math.abs(sg(delta)) < 1e-3) {
        let term: Scalar = delta;
        let total: Scalar = 0;
        for (let k = 2; k <= 8; k++) {
          term = div(mul(term, delta), k);
          total = add(total, term);
        }
        return total;
      }
      return sub(expm1(delta), delta);
    }
    case "abs":
      return abs(delta);
  }
}

/**
 * Reference value and gradient of the as-loss KL term.
 *
 * Formula: L = Σ_{b,t} w[b,t]·k(ref[b,t] − lp[b,t]) over response positions, w the aggregation
 * weights of `aggregation` (1/N, 1/(B·L_b), 1/B, 1/(B·ℓ)); summed left to right in row-major order.
 * Gradient / stop-gradient: ∂L/∂lp by reverse-mode autodiff; padding never becomes a node.
 *
 * @param logprobs - The `[B, T]` current-policy logprobs (the differentiated input).
 * @param refLogprobs - The `[B, T]` reference logprobs (constant).
 * @param kind - The estimator.
 * @param aggregation - The aggregation mode.
 * @param options - `responseMask` and, for token_sum_norm, `normLen`.
 * @returns The loss and ∂loss/∂logprobs.
 * @derivation docs/derivations/reference.md#kl
 * @enforcedBy test/verify/reference.golden.test.ts > klLossRef > golden: one token per estimator, loss and gradient
 * @enforcedBy test/verify/closedForm.finiteDifference.test.ts > klLossRef > gradient: matches central differences for every estimator and aggregation
 * @since 0.1.0
 */
export function klLossRef(
  logprobs: MatrixLike,
  refLogprobs: MatrixLike,
  kind: KLEstimator,
  aggregation: Aggregation,
  options: { readonly responseMask: MaskLike; readonly normLen?: number | null },
): ReferenceResult {
  requireObject("klLossRef", "options", options, "{responseMask, normLen?}", ["responseMask"]);
  checkRefStreams(
    "klLossRef",
    { logprobs, refLogprobs },
    [],
    ["options.responseMask", options.responseMask],
  );
  const mask = maskRowsOf(options.responseMask);
  const lp = rowsOf(logprobs);
  const ref = rowsOf(refLogprobs);
  const w = aggregationWeightsRef(mask, aggregation, options.normLen);
  const pos = responsePositions(mask);
  const out = grad(
    (x) => sum(pos.map(([b, t], k) => mul(w[b][t], klEstimatorRef(kind, sub(ref[b][t], x[k]))))),
    pos.map(([b, t]) => lp[b][t]),
  );
  return { loss: out.value, grad: scatter(mask, pos, out.grad) };
}

/**
 * Reference value and gradient of the reverse-KL score-function surrogate.
 *
 * Formula: L = Σ_{b,t} w[b,t]·sg[lp − ref]·lp over response positions.
 * Gradient / stop-gradient: sg[lp − ref] — the surrogate holds the score weight constant, so
 * ∂L/∂lp = w·(lp − ref), the unbiased sample of ∇KL(π‖ref).
 *
 * @param logprobs - The `[B, T]` current-policy logprobs (the differentiated input).
 * @param refLogprobs - The `[B, T]` reference logprobs (constant).
 * @param aggregation - The aggregation mode.
 * @param options - `responseMask` and, for token_sum_norm, `normLen`.
 * @returns The loss and ∂loss/∂logprobs.
 * @derivation docs/derivations/reference.md#kl
 * @enforcedBy test/verify/reference.golden.test.ts > reverseKlGradSurrogateRef > golden: lp −0.5, ref −1.5 gives loss −0.5
 * @since 0.1.0
 */
export function reverseKlGradSurrogateRef(
  logprobs: MatrixLike,
  refLogprobs: MatrixLike,
  aggregation: Aggregation,
  options: { readonly responseMask: MaskLike; readonly normLen?: number | null },
): ReferenceResult {
  requireObject("reverseKlGradSurrogateRef", "options", options, "{responseMask, normLen?}", [
    "responseMask",
  ]);
  checkRefStreams(
    "reverseKlGradSurrogateRef",
    { logprobs, refLogprobs },
    [],
    ["options.responseMask", options.responseMask],
  );
  const mask = maskRowsOf(options.responseMask);
  const lp = rowsOf(logprobs);
  const ref = rowsOf(refLogprobs);
  const w = aggregationWeightsRef(mask, aggregation, options.normLen);
  const pos = responsePositions(mask);
  const out = grad(
    (x) =>
      sum(
        pos.map(([b, t], k) => {
          const l = x[k];
          // sg[lp − ref]: the score-function surrogate treats the score weight as a constant.
          const score = sg(sub(l, ref[b][t]));
          return mul(w[b][t], mul(score, l));
        }),
      ),
    pos.map(([b, t]) => lp[b][t]),
  );
  return { loss: out.value, grad: scatter(mask, pos, out.grad) };
}

/** A `[B, T]` matrix holding `g[k]` at the k-th response position and 0 at padding. @internal */
export function scatter(
  mask: readonly (readonly boolean[])[],
  pos: readonly (readonly [number, number])[],
  g: ArrayLike<number>,
): Matrix {
  const rows = mask.map((row) => row.map(() => 0));
  pos.forEach(([b, t], k) => {
    rows[b][t] = g[k];
  });
  return matrixOf(rows);
}
