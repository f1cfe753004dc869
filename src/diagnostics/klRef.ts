/**
 * A step's KL to the reference policy (docs/diagnostics/run.md#kl-to-the-reference): the mean over
 * the response tokens of the k3 estimator of KL(π_θ ‖ π_ref) on the tokens the policy sampled,
 * k3 = e^δ − 1 − δ with δ = ref − lp (src/kl/estimator.ts), the estimator TRL's `kl` metric and
 * verl's `low_var_kl` (before its clamp) use. Null when the step has no reference log-probs.
 */

import { CompensatedSum } from "../core/sum.js";
import { isMask, isMatrix } from "../core/tensor.js";
import type { PartialBatch } from "../io/batch.js";
import { klPointwise } from "../kl/estimator.js";

/**
 * The step's mean k3 KL to the reference over its response tokens, or null without
 * `refLogprobs` and `logprobs` of the mask's shape, or where a δ is not finite or k3 overflows.
 * @internal
 */
export function klRefMean(batch: PartialBatch): number | null {
  const { logprobs: lp, refLogprobs: ref, responseMask: mask } = batch;
  if (!isMatrix(lp) || !isMatrix(ref) || !isMask(mask)) return null;
  const n = mask.data.length;
  if (lp.data.length !== n || ref.data.length !== n) return null;
  const sum = new CompensatedSum();
  let N = 0;
  for (let i = 0; i < n; i++) {
    if (mask.data[i] !== 1) continue;
    const delta = (ref.data[i] as number) - (lp.data[i] as number);
    if (!Number.isFinite(delta)) return null;
    const k = klPointwise("k3", delta).value;
    if (!Number.isFinite(k)) return null;
    sum.add(k);
    N++;
  }
  return N === 0 ? null : sum.value() / N;
}
