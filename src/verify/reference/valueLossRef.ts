/**
 * Reference for `valueLoss` (PPO clipped value loss), written from its definition over the
 * autodiff scalar (docs/derivations/reference.md#value-loss).
 */
import type { Aggregation } from "../../aggregate/aggregation.js";
import type { MaskLike, MatrixLike } from "../../core/tensor.js";
import { requireObject } from "../../core/validate.js";
import { clamp, grad, max, mul, type Scalar, sg, square, sub, sum } from "../autodiff.js";
import { checkRefStreams } from "./entry.js";
import { aggregationWeightsRef, maskRowsOf, responsePositions, rowsOf } from "./inputs.js";
import { type ReferenceResult, scatter } from "./klLossRef.js";

/**
 * What {@link valueLossRef} returns: loss, ∂loss/∂values and the clipped fraction.
 * @since 0.1.0
 */
export interface ValueLossReference extends ReferenceResult {
  /** Fraction of response tokens whose clipped error is strictly larger than the unclipped one. */
  readonly clippedFrac: number;
}

/**
 * Reference value and gradient of the value loss.
 *
 * Formula: e = (v − R)²; ℓ = ½e unclipped; clipped: v_c = clamp(v, v_old − ε, v_old + ε),
 * ℓ = ½·max(e, (v_c − R)²). Loss = Σ w·ℓ with the aggregation weights of `aggregation`.
 * Gradient / stop-gradient: ∂loss/∂values by reverse-mode autodiff (torch ties: clamp inclusive,
 * max splits ½/½); old values and returns are constants.
 *
 * @param values - The `[B, T]` value predictions (the differentiated input).
 * @param oldValues - The `[B, T]` values at rollout time (constant).
 * @param returns - The `[B, T]` return targets (constant).
 * @param responseMask - The `[B, T]` response mask.
 * @param options - `clipEps` (null: unclipped), `aggregation` and, for token_sum_norm, `normLen`.
 * @returns The loss, ∂loss/∂values and the clipped fraction.
 * @derivation docs/derivations/reference.md#value-loss
 * @enforcedBy test/verify/reference.golden.test.ts > valueLossRef > golden: v = (1.5, 0.5), v_old = 1, R = 0, ε = 0.2
 * @enforcedBy test/verify/closedForm.finiteDifference.test.ts > valueLossRef > gradient: matches central differences, clipped and unclipped
 * @since 0.1.0
 */
export function valueLossRef(
  values: MatrixLike,
  oldValues: MatrixLike,
  returns: MatrixLike,
  responseMask: MaskLike,
  options: {
    readonly clipEps: number | null;
    readonly aggregation: Aggregation;
    readonly normLen?: number | null;
  },
): ValueLossReference {
  requireObject("valueLossRef", "options", options, "{clipEps, aggregation, normLen?}", [
    "clipEps",
    "aggregation",
  ]);
  checkRefStreams(
    "valueLossRef",
    { values, oldValues, returns },
    [],
    ["responseMask", responseMask],
  );
  const mask = maskRowsOf(responseMask);
  const v = rowsOf(values);
  const vOld = rowsOf(oldValues);
  const R = rowsOf(returns);
  const w = aggregationWeightsRef(mask, options.aggregation, options.normLen);
  const pos = responsePositions(mask);
  const eps = options.clipEps;
  let clipped = 0;
  const out = grad(
    (x) =>
      sum(
        pos.map(([b, t], k) => {
          const e = square(sub(x[k], R[b][t]));
          let ell: Scalar = mul(0.5, e);
          if (eps !== null) {
            const vc = clamp(x[k], vOld[b][t] - eps, vOld[b][t] + eps);
            const ec = square(sub(vc, R[b][t]));
            if (sg(ec) > sg(e)) clipped++;
            ell = mul(0.5, max(e, ec));
          }
          return mul(w[b][t], ell);
        }),
      ),
    pos.map(([b, t]) => v[b][t]),
  );
  return { loss: out.value, grad: scatter(mask, pos, out.grad), clippedFrac: clipped / pos.length };
}
