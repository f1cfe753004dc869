import { maskedDot } from "../aggregate/aggregate.js";
import { fillContextWeights } from "../aggregate/effectiveTokenWeights.js";
import { checkFiniteOutput, finiteOr, overflowError } from "../core/finite.js";
import { robustSum } from "../core/sum.js";
import type { Mask, Matrix, MatrixLike } from "../core/tensor.js";
import {
  broadcastAdvantages,
  checkFiniteAll,
  checkFiniteAt,
  checkSameShape,
  requireRecord,
  toMask,
  toMatrix,
} from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import { type PapoConfig, type ResolvedPapoConfig, validatePapoConfig } from "./papoConfig.js";
import { POLICY_LOSS_INPUTS, type PolicyLossInputs, policyLossAs } from "./policyLoss.js";

/** The tensors {@link papoLoss} reads: the parent's inputs plus the masked-image streams. */
export interface PapoInputs extends PolicyLossInputs {
  /** `[B, T]` logprobs of the same sampled tokens with the image masked. */
  readonly maskedLogprobs: MatrixLike;
  /** `[B, T]` full-vocabulary entropies of the original view; required iff trl form with doubleEntropy. */
  readonly entropies?: MatrixLike | null;
  /** `[B, T]` full-vocabulary entropies of the masked view; required iff trl form with doubleEntropy. */
  readonly maskedEntropies?: MatrixLike | null;
}

/** Result of {@link papoLoss}: loss = policyLoss − perceptionTerm + entropyTerm. */
export interface PapoResult {
  /** The scalar loss to minimise. */
  readonly loss: number;
  /** ∂loss/∂logprobs, `[B, T]` (official: 0 at padding; trl: nonzero there, as TRL reads padding). */
  readonly gradLogprobs: Matrix;
  /** ∂loss/∂maskedLogprobs, `[B, T]` (official: exactly 0 everywhere, the stream is sg). */
  readonly gradMaskedLogprobs: Matrix;
  /** The parent GRPO/DAPO loss (`policyLoss(config, inputs).loss`). */
  readonly policyLoss: number;
  /** γ·aggregate(clamped k3), the amount subtracted. */
  readonly perceptionTerm: number;
  /** η1·H + η2·H_mask, the amount added, or null without `doubleEntropy`. */
  readonly entropyTerm: number | null;
  /** The clamped per-token k3 that is aggregated, `[B, T]` (official: 0 at padding). */
  readonly perceptionPerToken: Matrix;
}

interface Streams {
  lpm: Matrix;
  ent: Matrix | null;
  entM: Matrix | null;
}

/** Validate the PAPO streams (after the parent's), in argument order. */
function readStreams(
  fn: string,
  cfg: ResolvedPapoConfig,
  inputs: PapoInputs,
  lp: Matrix,
  mask: Mask,
): Streams {
  const trl = cfg.form === "trl";
  const read = (arg: string, x: MatrixLike): Matrix => {
    const m = toMatrix(fn, arg, x);
    checkSameShape(fn, "logprobs", lp, arg, m);
    // The trl form reads every position (its terms are a mean over B×T), so padding must be finite.
    if (trl) checkFiniteAll(fn, arg, m.data, m.cols);
    else checkFiniteAt(fn, arg, m, mask);
    return m;
  };
  if (trl) checkFiniteAll(fn, "logprobs", lp.data, lp.cols);
  const lpm = read("maskedLogprobs", inputs.maskedLogprobs);
  if (!trl || !cfg.doubleEntropy) return { lpm, ent: null, entM: null };
  const need = (arg: string, x: MatrixLike | null | undefined): Matrix => {
    if (x === null || x === undefined) {
      const rule = 'given when config.doubleEntropy is set and config.perception.form is "trl"';
      throw fail(ConfigError, fn, arg, rule, String(x));
    }
    return read(arg, x);
  };
  return {
    lpm,
    ent: need("entropies", inputs.entropies),
    entM: need("maskedEntropies", inputs.maskedEntropies),
  };
}

/**
 * Compensated Σ over the positions selected (all, or response only), divided by `divisor`: finite
 * whenever the quotient is representable, even when a partial sum overflows (robustSum).
 */
function total(x: ArrayLike<number>, m: Uint8Array, all: boolean, divisor: number): number {
  const at: number[] = [];
  for (let i = 0; i < x.length; i++) if (all || m[i] === 1) at.push(i);
  return robustSum(at.length, (k) => x[at[k] as number] as number, divisor);
}

/**
 * Compute a PAPO loss (PAPO-G / PAPO-D) and its closed-form gradients w.r.t. both logprob streams
 * in one pass.
 *
 * Formula: L = L_parent − γ·P + E (perceptionTerm = γ·P), δ = maskedLogprobs − logprobs,
 * k3(δ) = e^δ − δ − 1, k̃ = clamp(k3, 0, clip) (no clamp when clip is null).
 * trl (TRL v0.29.1): P = (1/(B·T))·Σ_{all b,t} k̃, E = (1/(B·T))·Σ_{all b,t} (η1·H + η2·H_mask) —
 * padding included. official (MikeWangWZHL/PAPO): δ ← clamp(δ, ±20), k3 ← clamp(k3, ±10) before the
 * clip, P = Σ_{b,t} w_{b,t}·k̃ with w the parent's aggregation weights, E = η1·Ĥ + η2·Ĥ_mask with the
 * MC estimator Ĥ = −(1/N)·Σ_resp lp.
 * Gradient / stop-gradient: ∂L/∂lp = ∂L_parent/∂lp + γ·w·1[clamps pass]·(e^δ − 1) (− η1/N per response
 * token, official); ∂L/∂lpm = −γ·w·1[pass]·(e^δ − 1) (trl) and 0 (official). sg[H], sg[H_mask]: TRL
 * computes entropies under no_grad. sg[maskedLogprobs] (official): precomputed without gradient.
 * Clamps pass the gradient iff lo ≤ x ≤ hi (torch). A zero term is not added, so γ = η = 0 gives
 * the parent's loss and gradient bitwise.
 *
 * @param config - The parent policy-loss config plus `perception` and `doubleEntropy`.
 * @param inputs - The parent's inputs plus `maskedLogprobs` (and entropies for trl with doubleEntropy).
 * @returns Loss, both gradients, the parent loss, the two PAPO terms and the per-token k̃. Official:
 *   every `[B, T]` output is 0 at padding and junk there never reaches an output. trl: padding of
 *   logprobs, maskedLogprobs and the entropies is read (finite required) and the gradients are
 *   nonzero there, as in TRL; padding of the parent-only streams is never read.
 * @throws {ConfigError} E_CONFIG when the config breaks a rule or a required stream is missing.
 * @throws {ShapeError} E_SHAPE when a stream has the wrong shape.
 * @throws {MaskError} E_MASK when the mask is not 0/1, misshaped, or has an empty row.
 * @throws {NonFiniteError} E_NONFINITE when a read value is not finite (trl: at any position).
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown form, ratio, surrogate or mode.
 * @throws {OverflowError} E_OVERFLOW when a result is not representable for finite input, naming
 *   the quantity and position: the parent's (see policyLoss), `perceptionPerToken` (trl form
 *   without clip, e^δ past 1.8e308), `entropyTerm`, `gradLogprobs` or `loss`.
 * @derivation docs/derivations/papo.md#papo-loss
 * @enforcedBy test/losses/papo.golden.test.ts > papoLoss > golden: trl form on a 2x2 ragged batch
 * @enforcedBy test/losses/papo.golden.test.ts > papoLoss > golden: official form on a 2x2 ragged batch
 * @enforcedBy test/losses/papo.trlFixture.test.ts > papoLoss > conformance: the trl form reproduces the real trl v0.29.1 _compute_loss on every recorded case
 * @enforcedBy test/verify/papo.reference.test.ts > papoLoss > gradient: closed form equals the reference for both forms, both parents, both streams
 * @enforcedBy test/verify/papo.reference.test.ts > papoLoss > identity: γ = 0 and η = 0 give the parent loss and gradient bitwise
 * @see arXiv 2507.06448 (PAPO: implicit perception loss, double entropy loss)
 * @since 0.1.0
 */
export function papoLoss(config: PapoConfig, inputs: PapoInputs): PapoResult {
  const fn = "papoLoss";
  const cfg = validatePapoConfig(fn, config);
  requireRecord(fn, "inputs", inputs, POLICY_LOSS_INPUTS);
  // The parent's input checks, in policyLoss's order, under this function's name.
  const lp = toMatrix(fn, "logprobs", inputs.logprobs);
  const old = toMatrix(fn, "oldLogprobs", inputs.oldLogprobs);
  checkSameShape(fn, "logprobs", lp, "oldLogprobs", old);
  // Rows with no response token follow the parent's config.emptyRows (they add no term).
  const mask = toMask(
    fn,
    inputs.responseMask,
    { rows: lp.rows, cols: lp.cols, arg: "logprobs" },
    "responseMask",
    cfg.parent.emptyRows === "reject" ? "reject" : "allow",
  );
  checkFiniteAt(fn, "logprobs", lp, mask);
  checkFiniteAt(fn, "oldLogprobs", old, mask);
  for (const [arg, x, set, why] of [
    [
      "rolloutLogprobs",
      inputs.rolloutLogprobs,
      cfg.parent.isCorrection !== null,
      "config.isCorrection is set",
    ],
    ["refLogprobs", inputs.refLogprobs, cfg.parent.kl !== null, "config.kl is set"],
  ] as const) {
    if (!set) continue;
    if (x === null || x === undefined)
      throw fail(ConfigError, fn, arg, `given when ${why}`, String(x));
    const s = toMatrix(fn, arg, x);
    checkSameShape(fn, "logprobs", lp, arg, s);
    checkFiniteAt(fn, arg, s, mask);
  }
  broadcastAdvantages(fn, inputs.advantages, lp, "logprobs", mask);
  const { lpm, ent, entM } = readStreams(fn, cfg, inputs, lp, mask);

  const parent = policyLossAs(fn, config, inputs);
  const { rows: B, cols: T } = lp;
  const n = B * T;
  const m = mask.data;
  const trl = cfg.form === "trl";
  const { gamma, clip } = cfg;
  // Perception weights: trl 1/(B·T) at every position (torch .mean()); official the parent's w.
  const w = new Float64Array(n);
  if (trl) w.fill(1 / n);
  else
    fillContextWeights(
      fn,
      mask,
      cfg.parent.aggregation,
      cfg.parent.normLen,
      { emptyRows: cfg.parent.emptyRows },
      w,
    );
  const k = new Float64Array(n);
  const slope = new Float64Array(n); // ∂k̃/∂δ
  for (let i = 0; i < n; i++) {
    if (!trl && m[i] !== 1) continue;
    let d = (lpm.data[i] as number) - (lp.data[i] as number);
    let pass = true;
    if (!trl && (d < -20 || d > 20)) {
      d = d < -20 ? -20 : 20;
      pass = false;
    }
    const e = Math.exp(d);
    let v = e - d - 1; // evaluated as both codes do: (exp(δ) − δ) − 1
    if (!Number.isFinite(v) && clip === null) {
      // Only the unclamped trl form can get here (δ > ~709): e^δ overflows float64, and so does
      // the exact k3 = e^δ − δ − 1.
      const b = Math.floor(i / T);
      const why = `k3 = e^δ − δ − 1 at δ = maskedLogprobs − logprobs = ${d}, perception.clip null`;
      throw overflowError(fn, "perceptionPerToken", v, [b, i - b * T], why);
    }
    if (!trl && (v < -10 || v > 10)) {
      v = v < -10 ? -10 : 10;
      pass = false;
    }
    if (clip !== null && (v < 0 || v > clip)) {
      v = v < 0 ? 0 : clip;
      pass = false;
    }
    k[i] = v;
    if (pass) slope[i] = e - 1;
  }
  const perceptionTerm = gamma * (trl ? total(k, m, true, n) : maskedDot(w, k, mask));

  let entropyTerm: number | null = null;
  let entGrad = 0; // ∂E/∂lp at each response token (official MC estimator)
  if (cfg.doubleEntropy) {
    if (trl && ent !== null && entM !== null) {
      // sg[H], sg[H_mask]: TRL computes both entropies under torch.no_grad(); no gradient.
      entropyTerm =
        cfg.eta1 * total(ent.data, m, true, n) + cfg.eta2 * total(entM.data, m, true, n);
    } else {
      let N = 0;
      for (let i = 0; i < n; i++) N += m[i] as number;
      // sg[maskedLogprobs]: the official masked entropy −mean(lpm) uses the precomputed stream.
      // No response token at all (every row empty): the means are empty, the term 0.
      entropyTerm =
        N === 0
          ? 0
          : cfg.eta1 * -total(lp.data, m, false, N) + cfg.eta2 * -total(lpm.data, m, false, N);
      entGrad = N === 0 ? 0 : -cfg.eta1 / N;
    }
  }

  const grad = Float64Array.from(parent.gradLogprobs.data);
  const gradM = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const g = gamma * (w[i] as number) * (slope[i] as number);
    if (g !== 0) {
      grad[i] = (grad[i] as number) + g;
      // sg[maskedLogprobs] in the official form: its gradient stays exactly 0.
      if (trl) gradM[i] = -g;
    }
    if (entGrad !== 0 && m[i] === 1) grad[i] = (grad[i] as number) + entGrad;
  }
  if (entropyTerm !== null) {
    finiteOr(fn, "entropyTerm", entropyTerm, undefined, "η1·H + η2·H_mask exceeds float64");
  }
  checkFiniteOutput(fn, "gradLogprobs", grad, T, trl ? undefined : m, "∂loss/∂logprobs");
  checkFiniteOutput(fn, "gradMaskedLogprobs", gradM, T, undefined, "∂loss/∂maskedLogprobs");
  let loss = parent.loss;
  if (perceptionTerm !== 0) loss = loss - perceptionTerm;
  if (entropyTerm !== null && entropyTerm !== 0) loss = loss + entropyTerm;
  finiteOr(fn, "loss", loss, undefined, "policyLoss − perceptionTerm + entropyTerm");
  return {
    loss,
    gradLogprobs: { rows: B, cols: T, data: grad },
    gradMaskedLogprobs: { rows: B, cols: T, data: gradM },
    policyLoss: parent.loss,
    perceptionTerm,
    entropyTerm,
    perceptionPerToken: { rows: B, cols: T, data: k },
  };
}
