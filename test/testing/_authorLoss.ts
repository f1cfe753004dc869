/**
 * A framework author's PPO/GRPO-style loss as they would write it, differentiated by their own
 * autodiff (here: the repository's reverse-mode tape over plain numbers), with knobs for the
 * mistakes the conformance tests plant: the aggregation, a KL sign, a Dr.GRPO budget.
 */
import type { PolicyLossInputs } from "../../src/losses/policyLoss.js";
import {
  add,
  clamp,
  div,
  exp,
  grad,
  max,
  mul,
  type Node,
  neg,
  type Scalar,
  sub,
  sum,
} from "../../src/verify/autodiff.js";

export interface AuthorKnobs {
  readonly aggregation: "token_mean" | "seq_mean_token_mean" | "token_sum_norm";
  /** Dr.GRPO's budget; "width": the padded width T (the planted slip). */
  readonly normLen?: number | "width";
  readonly eps?: number;
  /** β of a k3 KL term to refLogprobs added per token (sign −1: subtracted, the planted slip). */
  readonly kl?: { readonly beta: number; readonly sign: 1 | -1 };
}

const rowsOf = (x: unknown) => x as number[][];

/** ℓ = max(−A·r, −A·clip(r, 1 − ε, 1 + ε)), r = exp(lp − old), aggregated as asked. */
export function authorLoss(
  knobs: AuthorKnobs,
): (inputs: PolicyLossInputs) => { loss: number; gradLogprobs: number[][] } {
  const eps = knobs.eps ?? 0.2;
  return (inputs: PolicyLossInputs) => {
    const lp = rowsOf(inputs.logprobs);
    const old = rowsOf(inputs.oldLogprobs);
    const mask = inputs.responseMask as boolean[][];
    const adv = inputs.advantages as number[] | number[][];
    const ref = inputs.refLogprobs === undefined ? null : rowsOf(inputs.refLogprobs);
    const B = lp.length;
    const T = (lp[0] as number[]).length;
    const a = (b: number, t: number) =>
      Array.isArray(adv[b]) ? ((adv[b] as number[])[t] as number) : (adv[b] as number);
    const out = grad((xs: readonly Node[]) => {
      const rowTerms: Scalar[][] = [];
      for (let b = 0; b < B; b++) {
        const terms: Scalar[] = [];
        for (let t = 0; t < T; t++) {
          if (!(mask[b] as boolean[])[t]) continue;
          const x = xs[b * T + t] as Node;
          const r = exp(sub(x, (old[b] as number[])[t] as number));
          const A = a(b, t);
          let l: Scalar = max(neg(mul(A, r)), neg(mul(A, clamp(r, 1 - eps, 1 + eps))));
          if (knobs.kl !== undefined && ref !== null) {
            const d = sub((ref[b] as number[])[t] as number, x); // ref − lp
            const k3 = sub(sub(exp(d), 1), d);
            l = add(l, mul(knobs.kl.sign * knobs.kl.beta, k3));
          }
          terms.push(l);
        }
        rowTerms.push(terms);
      }
      const all = rowTerms.flat();
      if (knobs.aggregation === "token_mean") return div(sum(all), all.length);
      if (knobs.aggregation === "seq_mean_token_mean")
        return div(sum(rowTerms.map((r) => div(sum(r), r.length))), B);
      const L = knobs.normLen === "width" ? T : (knobs.normLen as number);
      return div(sum(all), B * L);
    }, lp.flat());
    return {
      loss: out.value,
      gradLogprobs: Array.from({ length: B }, (_, b) =>
        Array.from(out.grad.subarray(b * T, (b + 1) * T)),
      ),
    };
  };
}
