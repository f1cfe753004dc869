/**
 * The liveness probe (docs/contracts.md#liveness): an extension is live when, on a batch that
 * carries signal, its term and the gradient of its term are non-zero. Batches without signal
 * (an image-invariant batch: perception KL exactly 0) are a correct zero, not a wiring failure,
 * so the probe skips them — up to a bound of consecutive ones, after which it fails loudly.
 */
import { fmtValue, mustBe } from "../core/message.js";
import { describeInput, requireFunction, requireObject } from "../core/validate.js";
import { ConfigError, fail, VerificationError } from "../errors.js";
import { type PapoInputs, papoLoss } from "../losses/papo.js";
import type { PapoConfig } from "../losses/papoConfig.js";

/**
 * The PAPO-G adapter authors' bound: "the probe fails after PAPO_PROBE_MAX_DEGENERATE_BATCHES = 20
 * consecutive degenerate batches" — 20 consecutive image-invariant batches are tolerated, the 21st
 * fails (the default `maxDegenerate` of {@link probeLiveness}).
 *
 * @derivation docs/contracts.md#liveness
 * @enforcedBy test/contracts/livenessCli.test.ts > contract liveness > golden: 20 degenerate batches then a live one exits 0 and 21 degenerate exit 1
 * @since 0.1.0
 */
export const PAPO_PROBE_MAX_DEGENERATE_BATCHES = 20;

/** What a liveness measure returns for one batch. */
export interface LivenessMeasure {
  /** The extension's term on the batch (e.g. γ·KL_prcp); exactly 0 marks a batch without signal. */
  readonly term: number;
  /** The Euclidean norm of the term's gradient over every differentiable stream. */
  readonly gradNorm: number;
}

/** Options of {@link probeLiveness}. */
export interface LivenessOptions<B> {
  /** Compute the term and its gradient norm on one batch. */
  readonly measure: (batch: B, index: number) => LivenessMeasure;
  /** Most consecutive degenerate batches tolerated before failing (default 20). */
  readonly maxDegenerate?: number;
}

/** The outcome of {@link probeLiveness} when it does not fail. */
export type LivenessReport =
  | {
      /** The first batch with signal had a positive term and a positive gradient norm. */
      readonly status: "live";
      readonly batchIndex: number;
      readonly term: number;
      readonly gradNorm: number;
      /** Degenerate batches skipped before it. */
      readonly skipped: number;
    }
  | {
      /** The batches ran out, all degenerate, before the bound: nothing was shown either way. */
      readonly status: "inconclusive";
      readonly skipped: number;
    };

/**
 * Why {@link probeLiveness} failed: the bound of consecutive degenerate batches was exceeded
 * (`degenerate_bound`), the first batch with signal had a negative term (`negative_term`) or a
 * zero gradient norm (`dead_gradient`), or a measure was not finite (`non_finite`).
 *
 * @derivation docs/contracts.md#liveness
 * @enforcedBy test/contracts/liveness.test.ts > probeLiveness > rejects: a term that is live in value but carries no gradient
 * @since 0.1.0
 */
export class LivenessError extends VerificationError {
  /** The failure kind. */
  readonly reason: "degenerate_bound" | "negative_term" | "dead_gradient" | "non_finite";
  /** The batch at which the probe failed. */
  readonly batchIndex: number;

  constructor(reason: LivenessError["reason"], batchIndex: number, message: string) {
    super("probeLiveness", message, undefined, { reason, batchIndex });
    this.name = "LivenessError";
    this.reason = reason;
    this.batchIndex = batchIndex;
  }
}

function checkBound(fn: string, x: unknown): number {
  if (typeof x !== "number" || !Number.isInteger(x) || x < 0) {
    throw fail(ConfigError, fn, "options.maxDegenerate", "a non-negative integer", fmtValue(x));
  }
  return x;
}

/**
 * Probe that an extension is live: skip degenerate batches, then require a positive term and a
 * positive gradient norm on the first batch with signal.
 *
 * Formula: for batches b₀, b₁, … in order, (term_i, ‖∇term_i‖) = measure(b_i, i); a batch with
 * term_i = 0 exactly is degenerate and skipped; the first i with term_i ≠ 0 must have term_i > 0
 * and ‖∇term_i‖ > 0. More than `maxDegenerate` consecutive degenerate batches fail.
 * Gradient / stop-gradient: none; the measure supplies the gradient norm.
 *
 * @param batches - The batches, consumed lazily and only up to the first batch with signal.
 * @param options - `measure` (required) and `maxDegenerate` (default 20).
 * @returns `live` with the batch that showed it, or `inconclusive` when the batches ran out first.
 * @throws {LivenessError} E_VERIFY after more than `maxDegenerate` consecutive degenerate batches,
 *   or when the first batch with signal has a negative term, a zero gradient norm, or a
 *   non-finite measure.
 * @throws {ConfigError} E_CONFIG when `maxDegenerate` is not a non-negative integer.
 * @derivation docs/contracts.md#liveness
 * @enforcedBy test/contracts/liveness.test.ts > probeLiveness > golden: skips image-invariant batches and reports the first live one
 * @enforcedBy test/contracts/liveness.test.ts > probeLiveness > rejects: more consecutive degenerate batches than the bound
 * @enforcedBy test/contracts/liveness.test.ts > probeLiveness > rejects: a term that is live in value but carries no gradient
 * @since 0.1.0
 */
export function probeLiveness<B>(
  batches: Iterable<B>,
  options: LivenessOptions<B>,
): LivenessReport {
  if (typeof (batches as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] !== "function")
    throw fail(
      ConfigError,
      "probeLiveness",
      "batches",
      "an iterable of batches",
      describeInput(batches),
    );
  requireObject("probeLiveness", "options", options, "LivenessOptions {measure, maxDegenerate?}", [
    "measure",
  ]);
  requireFunction("probeLiveness", "options.measure", options.measure);
  const fn = "probeLiveness";
  const bound = checkBound(fn, options.maxDegenerate ?? PAPO_PROBE_MAX_DEGENERATE_BATCHES);
  let skipped = 0;
  let index = 0;
  for (const batch of batches) {
    const { term, gradNorm } = options.measure(batch, index);
    if (!Number.isFinite(term) || !Number.isFinite(gradNorm)) {
      throw new LivenessError(
        "non_finite",
        index,
        `${mustBe(fn, "the measure", "finite", `term ${fmtValue(term)}, gradient norm ${fmtValue(gradNorm)} at batch ${index}`)}\nHint: a non-finite term is a numerical failure, not a dead extension; inspect batch ${index}.`,
      );
    }
    if (term === 0) {
      skipped++;
      if (skipped > bound) {
        throw new LivenessError(
          "degenerate_bound",
          index,
          `${mustBe(fn, "the term", `non-zero on some batch within ${bound} consecutive degenerate batches`, `${skipped} consecutive batches with term exactly 0 (batches ${index - skipped + 1}..${index})`)}\nHint: either every batch is image-invariant (check that masking changes the inputs) or the term is wired to a zero coefficient or a constant.`,
        );
      }
      index++;
      continue;
    }
    if (term < 0) {
      throw new LivenessError(
        "negative_term",
        index,
        `${mustBe(fn, "the term", "positive on the first batch with signal", `${fmtValue(term)} at batch ${index}`)}\nHint: a KL-type term is non-negative; a negative value means a sign or estimator error.`,
      );
    }
    if (gradNorm <= 0) {
      throw new LivenessError(
        "dead_gradient",
        index,
        `${mustBe(fn, "the term's gradient norm", "positive on the first batch with signal", `0 with term ${fmtValue(term)} at batch ${index}`)}\nHint: the term has a value but no gradient: it is detached (sg) or multiplied by a zero coefficient on the gradient path.`,
      );
    }
    return { status: "live", batchIndex: index, term, gradNorm, skipped };
  }
  return { status: "inconclusive", skipped };
}

/** ‖x‖₂ computed as max|x|·‖x/max|x|‖₂, so that tiny gradients do not underflow to 0. */
function scaledNorm(x: Float64Array): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i] as number));
  if (m === 0 || !Number.isFinite(m)) return m;
  let sq = 0;
  for (let i = 0; i < x.length; i++) sq += ((x[i] as number) / m) ** 2;
  return m * Math.sqrt(sq);
}

/**
 * Build the liveness measure of a PAPO configuration: the perception term γ·P and the norm of its
 * gradient with respect to both logprob streams.
 *
 * Formula: term = papoLoss(config, b).perceptionTerm; ‖∇term‖ = ‖(g_γ − g₀, m_γ − m₀)‖₂ where g, m
 * are papoLoss's gradients w.r.t. logprobs and maskedLogprobs at γ and at γ = 0 (the same
 * entropy term), so the double-entropy gradient cancels out.
 * Gradient / stop-gradient: as papoLoss (sg[maskedLogprobs] in the official form).
 *
 * @param config - The PAPO configuration (γ > 0 for a live extension).
 * @returns A measure for {@link probeLiveness} over {@link PapoInputs} batches.
 * @throws {ConfigError} E_CONFIG (when the measure runs) for the errors of `papoLoss`.
 * @derivation docs/contracts.md#liveness
 * @enforcedBy test/contracts/liveness.test.ts > papoLivenessMeasure > golden: papo is live on image-dependent batches and degenerate on image-invariant ones
 * @since 0.1.0
 */
export function papoLivenessMeasure(config: PapoConfig): (batch: PapoInputs) => LivenessMeasure {
  requireObject("papoLivenessMeasure", "config", config, "a PapoConfig", ["perception"]);
  const zero: PapoConfig = { ...config, perception: { ...config.perception, gamma: 0 } };
  return (batch) => {
    const on = papoLoss(config, batch);
    const off = papoLoss(zero, batch);
    const a = on.gradLogprobs.data;
    const b = off.gradLogprobs.data;
    const am = on.gradMaskedLogprobs.data;
    const bm = off.gradMaskedLogprobs.data;
    const d = new Float64Array(2 * a.length);
    for (let i = 0; i < a.length; i++) {
      d[2 * i] = (a[i] as number) - (b[i] as number);
      d[2 * i + 1] = (am[i] as number) - (bm[i] as number);
    }
    return { term: on.perceptionTerm, gradNorm: scaledNorm(d) };
  };
}
