/**
 * TRL's `loss_type="luspo"` at `importance_sampling_level="token"` as it computes it
 * (`GRPOTrainer._compute_loss` at f2cd5771; docs/conformance/deviations.md#trl-luspo-token-padding):
 * the per-token clipped loss times the row length L_b, averaged with `torch.mean` over every
 * `[B, T]` entry, padding included. LUSPO (arXiv:2602.05261) is defined on the sequence ratio,
 * where ℓ is constant along a row and the mean of L_b·ℓ_b over rows is our `seq_mean_token_sum`;
 * at token level upstream's mean reads the padding positions' own logprobs, so padding changes
 * the loss and gets a gradient. This is a faithful model of that (a registered deviation), built
 * on the algebra: policyLoss's pg_clip over an all-ones mask, with advantages A_b·L_b and
 * token_mean (÷ B·T). Our own LUSPO config keeps padding out.
 */
import { fmtValue } from "../../core/message.js";
import type { MaskLike, MatrixLike, VectorLike } from "../../core/tensor.js";
import { advantagesOf, requireRecord, toMask, toMatrix } from "../../core/validate.js";
import { ConfigError, fail, NonFiniteError } from "../../errors.js";
import { type PolicyLossResult, policyLoss } from "../../losses/policyLoss.js";

/** The inputs of {@link trlLuspoTokenLoss}: every `[B, T]` position is read, padding included. */
export interface TrlLuspoTokenInputs {
  readonly logprobs: MatrixLike;
  readonly oldLogprobs: MatrixLike;
  /** `[B]` per-row advantages (TRL's), or `[B, T]` (every position read). */
  readonly advantages: VectorLike | MatrixLike;
  /** The completion mask: only its row lengths L_b enter (the mean does not mask). */
  readonly responseMask: MaskLike;
}

/** TRL's clip settings (GRPOConfig `epsilon`, `epsilon_high`). */
export interface TrlLuspoTokenOptions {
  /** @defaultValue 0.2 */
  readonly epsilon?: number;
  /** null: `epsilon` (TRL's default). */
  readonly epsilonHigh?: number | null;
}

/**
 * TRL's token-level LUSPO loss, padding included, and its gradient (a framework model: what the
 * shipped code computes, not the equation).
 *
 * Formula: L = (1/(B·T)) Σ_{b,t} L_b·ℓ_{b,t} over every position, ℓ = −min(c·A, clamp(c, 1 − ε,
 * 1 + ε_high)·A), c = exp(lp − old) at every position (one process, GA 1).
 * Gradient / stop-gradient: ∂L/∂lp_{b,t} = L_b·∂ℓ_{b,t}/∂lp/(B·T), non-zero at padding too.
 *
 * @param inputs - logprobs and old logprobs at every position, `[B]` or `[B, T]` advantages, the mask.
 * @param options - `epsilon` (0.2), `epsilonHigh` (null: ε).
 * @returns policyLoss's result on the all-ones mask: `perTokenObjective` is L_b·ℓ, the quantity TRL averages.
 * @throws {NonFiniteError} E_NONFINITE when a position (padding included) is not finite: upstream's loss is then NaN.
 * @throws {ShapeError} E_SHAPE when the shapes differ.
 * @throws {ConfigError} E_CONFIG for a bad epsilon.
 * @derivation docs/conformance/deviations.md#trl-luspo-token-padding
 * @enforcedBy test/conformance/frameworks/surrogates.fixtures.test.ts > TRL luspo at token level > conformance: trl@f2cd5771 luspo:token replays to 1e-12 (padding included), and non-finite padding is a typed error where upstream is NaN
 * @since 0.3.0
 */
export function trlLuspoTokenLoss(
  inputs: TrlLuspoTokenInputs,
  options: TrlLuspoTokenOptions = {},
): PolicyLossResult {
  const fn = "trlLuspoTokenLoss";
  requireRecord(fn, "inputs", inputs, "a TrlLuspoTokenInputs object");
  const eps = options.epsilon ?? 0.2;
  const epsHigh = options.epsilonHigh ?? eps;
  for (const [arg, v] of [
    ["options.epsilon", eps],
    ["options.epsilonHigh", epsHigh],
  ] as const) {
    if (typeof v !== "number" || !(v > 0 && v < 1e300)) {
      throw fail(ConfigError, fn, arg, "a positive finite number", fmtValue(v));
    }
  }
  const lp = toMatrix(fn, "logprobs", inputs.logprobs);
  const { rows: B, cols: T } = lp;
  const mask = toMask(
    fn,
    inputs.responseMask,
    { rows: B, cols: T, arg: "logprobs" },
    "responseMask",
    "allow",
  );
  const L = new Float64Array(B);
  for (let i = 0; i < B * T; i++) L[Math.floor(i / T)] += mask.data[i] as number;
  const a = advantagesOf(fn, inputs.advantages, lp, "logprobs");
  const scaled =
    a.row !== null
      ? Float64Array.from(a.row, (x, b) => x * (L[b] as number))
      : {
          rows: B,
          cols: T,
          data: a.token.data.map((x, i) => x * (L[Math.floor(i / T)] as number)),
        };
  const ones = { rows: B, cols: T, data: new Uint8Array(B * T).fill(1) };
  try {
    return policyLoss(
      {
        ratio: "token",
        surrogate: "pg_clip",
        clip: { epsLow: eps, epsHigh },
        aggregation: "token_mean",
      },
      { logprobs: lp, oldLogprobs: inputs.oldLogprobs, advantages: scaled, responseMask: ones },
    );
  } catch (e) {
    if (!(e instanceof NonFiniteError)) throw e;
    // Every position is read: a non-finite padding value is what makes upstream's loss NaN.
    const arg = e.arg ?? "logprobs";
    throw new NonFiniteError(
      fn,
      arg,
      `${fn}: ${arg} must be finite at every position, padding included (TRL's token-level luspo averages over all B×T entries, so a non-finite padding value makes its loss NaN); ${e.message.slice(e.message.indexOf("got"))}`,
    );
  }
}
