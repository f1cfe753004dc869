/**
 * Reference for `papoLoss`, written from the two published forms of PAPO's extra terms (TRL
 * v0.29.1 `PAPOTrainer._compute_loss` and the official MikeWangWZHL/PAPO actor) over the autodiff
 * scalar, and differentiated by reverse mode w.r.t. BOTH logprob streams
 * (docs/derivations/papo.md#reference). The parent GRPO/DAPO term comes from `policyLossRef`.
 * Imports only types from src/losses: the closed form is never consulted.
 */
import type { MaskLike, Matrix, MatrixLike, VectorLike } from "../../core/tensor.js";
import type { PapoConfig } from "../../losses/papoConfig.js";
import {
  add,
  clamp,
  div,
  exp,
  grad,
  mul,
  type Node,
  neg,
  type Scalar,
  sg,
  sub,
  sum,
} from "../autodiff.js";
import { checkRefConfig, checkRefInputs } from "./entry.js";
import { aggregationWeightsRef, maskRowsOf, matrixOf, rowsOf } from "./inputs.js";
import { policyLossRef } from "./policyLossRef.js";

/**
 * The inputs of {@link papoRef}, as for `papoLoss`.
 * @since 0.1.0
 */
export interface PapoRefInputs {
  readonly logprobs: MatrixLike;
  readonly maskedLogprobs: MatrixLike;
  readonly oldLogprobs: MatrixLike;
  readonly advantages: VectorLike | MatrixLike;
  readonly responseMask: MaskLike;
  readonly refLogprobs?: MatrixLike | null;
  readonly rolloutLogprobs?: MatrixLike | null;
  readonly entropies?: MatrixLike | null;
  readonly maskedEntropies?: MatrixLike | null;
}

/**
 * What {@link papoRef} returns.
 * @since 0.1.0
 */
export interface PapoReference {
  readonly loss: number;
  /** ∂loss/∂logprobs (parent gradient + PAPO-term gradient), `[B, T]`. */
  readonly grad: Matrix;
  /** ∂loss/∂maskedLogprobs, `[B, T]`. */
  readonly gradMasked: Matrix;
  readonly policyLoss: number;
  readonly perceptionTerm: number;
  readonly entropyTerm: number | null;
  readonly perceptionPerToken: Matrix;
}

/**
 * Reference value and gradients of the PAPO loss.
 *
 * Formula: L = L_parent − P + E. Per position: δ = lpm − lp, k = (e^δ − δ) − 1, then (official
 * only) δ ← clamp(δ, −20, 20) before k and k ← clamp(k, −10, 10) after (verl `low_var_kl`), then
 * k ← clamp(k, 0, clip) when clip is set. trl: P = γ·(Σ_{every b,t} k)/(B·T),
 * E = η1·(Σ_{every b,t} H)/(B·T) + η2·(Σ_{every b,t} H_mask)/(B·T). official: P = γ·Σ_resp w·k with
 * w the parent aggregation weights, E = η1·(−Σ_resp lp/N) + η2·(−Σ_resp sg[lpm]/N).
 * Gradient / stop-gradient: reverse mode w.r.t. lp and lpm at the positions each form reads (trl:
 * all; official: response positions); official writes sg[lpm] literally, trl takes H, H_mask as
 * constants (TRL's no_grad).
 *
 * @param config - A valid PAPO config (not validated here).
 * @param inputs - The parent's inputs plus the masked-view streams.
 * @returns The loss, both gradients, the parent loss, both PAPO terms and the per-token clamped k.
 * @derivation docs/derivations/papo.md#reference
 * @enforcedBy test/verify/papo.reference.test.ts > papoRef > golden: the hand-derived trl and official goldens
 * @enforcedBy test/verify/papo.reference.test.ts > papoRef > gradient: matches central differences in both streams
 * @since 0.1.0
 */
export function papoRef(config: PapoConfig, inputs: PapoRefInputs): PapoReference {
  checkRefConfig("papoRef", config, ["ratio", "surrogate", "aggregation", "perception"]);
  checkRefInputs("papoRef", inputs, ["maskedLogprobs"]);
  const parent = policyLossRef(config, inputs);
  const mask = maskRowsOf(inputs.responseMask);
  const lp = rowsOf(inputs.logprobs);
  const lpm = rowsOf(inputs.maskedLogprobs);
  const B = mask.length;
  const T = mask[0].length;
  const trl = config.perception.form === "trl";
  const { gamma, clip } = config.perception;
  const de = config.doubleEntropy;
  const w = aggregationWeightsRef(mask, config.aggregation, config.normLen);
  const N = mask.flat().filter(Boolean).length;
  // The positions each form reads: every (b, t) for trl (a mean over B×T), response ones otherwise.
  const pos: [number, number][] = [];
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) if (trl || mask[b][t]) pos.push([b, t]);
  const perToken = mask.map((row) => row.map(() => 0));
  let perceptionTerm = 0;
  let entropyTerm: number | null = null;

  const f = (x: readonly Node[]): Scalar => {
    const lpNode = (k: number): Node => x[k] as Node;
    // official: sg[lpm], the masked stream is precomputed without gradient.
    const lpmNode = (k: number): Scalar =>
      trl ? (x[pos.length + k] as Node) : sg(x[pos.length + k] as Node);
    const ks = pos.map(([b, t], k) => {
      let d = sub(lpmNode(k), lpNode(k));
      if (!trl) d = clamp(d, -20, 20);
      let v = sub(sub(exp(d), d), 1);
      if (!trl) v = clamp(v, -10, 10);
      if (clip !== null) v = clamp(v, 0, clip);
      perToken[b][t] = sg(v);
      return v;
    });
    const P = trl
      ? mul(gamma, div(sum(ks), B * T))
      : mul(gamma, sum(pos.map(([b, t], k) => mul(w[b][t], ks[k] as Scalar))));
    perceptionTerm = sg(P);
    let E: Scalar | null = null;
    if (de !== null) {
      if (trl) {
        const H = rowsOf(inputs.entropies as MatrixLike);
        const Hm = rowsOf(inputs.maskedEntropies as MatrixLike);
        E = add(
          mul(de.eta1, div(sum(pos.map(([b, t]) => H[b][t] as number)), B * T)),
          mul(de.eta2, div(sum(pos.map(([b, t]) => Hm[b][t] as number)), B * T)),
        );
      } else {
        E = add(
          mul(de.eta1, neg(div(sum(pos.map((_, k) => lpNode(k))), N))),
          mul(de.eta2, neg(div(sum(pos.map((_, k) => lpmNode(k))), N))),
        );
      }
      entropyTerm = sg(E);
    }
    return E === null ? neg(P) : add(neg(P), E);
  };

  const out = grad(f, [
    ...pos.map(([b, t]) => lp[b][t] as number),
    ...pos.map(([b, t]) => lpm[b][t] as number),
  ]);
  const g = mask.map((row) => row.map(() => 0));
  const gm = mask.map((row) => row.map(() => 0));
  pos.forEach(([b, t], k) => {
    g[b][t] = out.grad[k] as number;
    gm[b][t] = out.grad[pos.length + k] as number;
  });
  const pg = parent.grad.data;
  return {
    loss: parent.loss + out.value,
    grad: matrixOf(g.map((row, b) => row.map((v, t) => (pg[b * T + t] as number) + v))),
    gradMasked: matrixOf(gm),
    policyLoss: parent.loss,
    perceptionTerm,
    entropyTerm,
    perceptionPerToken: matrixOf(perToken),
  };
}
