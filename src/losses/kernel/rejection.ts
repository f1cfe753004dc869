/**
 * Rejection sampling (docs/derivations/losses.md#rejection-sampling): the response mask with the
 * tokens and rows that break a rule taken out, before anything is aggregated. Rules are on
 * lr = clamp(old − rollout, ±logClamp) at response positions (finite: the caller has checked the
 * streams): the statistic of k1 = −lr, k2 = lr²/2 or k3 = e^lr − 1 − lr (the k3 of
 * docs/derivations/kl.md, series near 0) per token, or its compensated sum, mean or max over the
 * row; k1 keeps ln(lower) ≤ s ≤ ln(upper), k2 and k3 keep s ≤ upper (inclusive); every rule must
 * pass. Pure (no `node:` import). @internal
 */
import { twoSumErrorSafe } from "../../core/sum.js";
import { k3Value } from "../../kl/estimator.js";
import type { ResolvedPolicyLossConfig } from "../config.js";

type Rule = NonNullable<ResolvedPolicyLossConfig["rejection"]>[number];

/** The estimator's value at lr. */
function stat(estimator: Rule["estimator"], lr: number): number {
  if (estimator === "k1") return -lr;
  if (estimator === "k2") return 0.5 * lr * lr;
  return k3Value(lr, Math.expm1(lr));
}

/**
 * A rule with its bounds in the statistic's own space, computed once: k1 keeps
 * [ln(lower), ln(upper)], k2 and k3 keep (−∞, upper].
 */
function boundsOf(r: Rule): { readonly r: Rule; readonly lo: number; readonly hi: number } {
  return r.estimator === "k1"
    ? { r, lo: Math.log(r.lower), hi: Math.log(r.upper) }
    : { r, lo: Number.NEGATIVE_INFINITY, hi: r.upper };
}

/**
 * A copy of the mask `m` (B rows, their response spans [first_b, end_b)) without the tokens and
 * rows that break a rule.
 */
export function rejectedMask(
  rules: NonNullable<ResolvedPolicyLossConfig["rejection"]>,
  m: Uint8Array,
  B: number,
  first: Int32Array,
  end: Int32Array,
  old: Float64Array,
  roll: Float64Array,
): Uint8Array {
  const out = Uint8Array.from(m);
  const bounded = rules.map(boundsOf);
  for (let b = 0; b < B; b++) {
    const f = first[b] as number;
    const e = end[b] as number;
    let keepRow = true;
    for (const { r, lo, hi } of bounded) {
      const c = r.logClamp;
      if (r.statistic === "token") {
        for (let i = f; i < e; i++) {
          if (out[i] !== 1) continue;
          const lr = Math.min(Math.max((old[i] as number) - (roll[i] as number), -c), c);
          const x = stat(r.estimator, lr);
          if (!(x >= lo && x <= hi)) out[i] = 0;
        }
        continue;
      }
      // Row statistics over the row's response tokens as given (not as earlier rules left them,
      // as verl computes every option on the original mask).
      let s = 0;
      let cmp = 0;
      let n = 0;
      let max = Number.NEGATIVE_INFINITY;
      for (let i = f; i < e; i++) {
        if (m[i] !== 1) continue;
        const lr = Math.min(Math.max((old[i] as number) - (roll[i] as number), -c), c);
        const x = stat(r.estimator, lr);
        n++;
        if (x > max) max = x;
        const t = s + x;
        cmp += twoSumErrorSafe(s, x, t);
        s = t;
      }
      if (n === 0) continue;
      const sum = Number.isFinite(s) ? s + cmp : s;
      const value = r.statistic === "seq_sum" ? sum : r.statistic === "seq_mean" ? sum / n : max;
      if (!(value >= lo && value <= hi)) keepRow = false;
    }
    if (!keepRow) out.fill(0, f, e);
  }
  return out;
}
