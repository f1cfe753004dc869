/**
 * Compare two losses on the same seeded ragged batches (polgrad's compare_losses): the relative
 * difference of the losses and of the gradients, and the gradients' cosine
 * (docs/conformance/deviations.md#measuring-a-deviation).
 */

import { fmtValue } from "../core/message.js";
import { createRng } from "../core/rng.js";
import type { Matrix } from "../core/tensor.js";
import { requireFunction, requireObject } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import type { PolicyLossInputs } from "../losses/policyLoss.js";
import { type DrawnBatch, drawBatch } from "../verify/draw.js";

/** A loss under comparison: value and gradient w.r.t. logprobs on one batch. */
export type ComparedLoss = (inputs: PolicyLossInputs) => {
  readonly loss: number;
  readonly gradLogprobs: Matrix;
};

/** Result of {@link compareLosses}. */
export interface ComparisonReport {
  /** max over cases of |a − b| / max(|a|, |b|, 1e-12). */
  readonly maxLossRelDiff: number;
  /** max over cases of ‖g_a − g_b‖₂ / max(‖g_a‖₂, ‖g_b‖₂, 1e-12). */
  readonly maxGradRelDiff: number;
  /** min over cases of ⟨g_a, g_b⟩/(‖g_a‖‖g_b‖) (1 when both vanish, 0 when one does). */
  readonly gradCosineMin: number;
  /** min and max over cases of loss_a / loss_b (NaN-free: cases with loss_b = 0 are skipped). */
  readonly lossRatioRange: readonly [number, number];
  readonly cases: number;
  readonly worstCaseSeed: number;
}

/** Options of {@link compareLosses}. */
export interface CompareOptions {
  readonly cases?: number;
  readonly shapes?: readonly (readonly [number, number])[];
  readonly seed?: number;
  /** Turn a drawn batch into the inputs both losses see (default: the four core streams + ref + rollout, `[B, T]` advantages). */
  readonly inputs?: (batch: DrawnBatch) => PolicyLossInputs;
}

/**
 * One case's comparison metrics (compareLosses' rule, shared by assertConforms and checkVectors):
 * loss_rel = |a − b| / max(|a|, |b|, 1e-12); grad_rel = ‖g_a − g_b‖₂ / max(‖g_a‖₂, ‖g_b‖₂, 1e-12);
 * cosine ⟨g_a, g_b⟩/(‖g_a‖‖g_b‖), 1 when both norms are ≤ 1e-12 and 0 when exactly one is. NaN
 * stays NaN (callers decide what it counts as). @internal
 */
export function caseMetrics(
  aLoss: number,
  aGrad: ArrayLike<number>,
  bLoss: number,
  bGrad: ArrayLike<number>,
): { readonly lossRel: number; readonly gradRel: number; readonly cos: number } {
  const lossRel = Math.abs(aLoss - bLoss) / Math.max(Math.abs(aLoss), Math.abs(bLoss), 1e-12);
  let na = 0;
  let nb = 0;
  let dot = 0;
  let nd = 0;
  for (let k = 0; k < aGrad.length; k++) {
    const x = aGrad[k] as number;
    const y = bGrad[k] as number;
    na += x * x;
    nb += y * y;
    dot += x * y;
    nd += (x - y) * (x - y);
  }
  na = Math.sqrt(na);
  nb = Math.sqrt(nb);
  const gradRel = Math.sqrt(nd) / Math.max(na, nb, 1e-12);
  const cos = na <= 1e-12 && nb <= 1e-12 ? 1 : na <= 1e-12 || nb <= 1e-12 ? 0 : dot / (na * nb);
  return { lossRel, gradRel, cos };
}

/**
 * Compare two losses on seeded ragged batches (padding holds junk 123, so a mask leak shows).
 *
 * Formula: per case, loss_rel = |a − b| / max(|a|, |b|, 1e-12); grad_rel = ‖g_a − g_b‖₂ /
 * max(‖g_a‖₂, ‖g_b‖₂, 1e-12); cosine = ⟨g_a, g_b⟩/(‖g_a‖‖g_b‖) with 1 if both norms ≤ 1e-12 and
 * 0 if exactly one is; the report takes the max, max, min over cases.
 *
 * @param a - The first loss.
 * @param b - The second loss.
 * @param options - Cases (default 32), shapes (default [[4, 8], [3, 5], [2, 12], [5, 7]]), seed, input mapping.
 * @returns The report.
 * @throws {ConfigError} E_CONFIG for a non-positive case count or an empty shape list.
 * @derivation docs/conformance/deviations.md#measuring-a-deviation
 * @enforcedBy test/conformance/compare.test.ts > compareLosses > golden: a loss against itself and against twice itself
 * @since 0.1.0
 */
export function compareLosses(
  a: ComparedLoss,
  b: ComparedLoss,
  options: CompareOptions = {},
): ComparisonReport {
  requireFunction("compareLosses", "a", a, "a loss function of the inputs");
  requireFunction("compareLosses", "b", b, "a loss function of the inputs");
  requireObject("compareLosses", "options", options, "an options object");
  const fn = "compareLosses";
  const cases = options.cases ?? 32;
  if (!Number.isInteger(cases) || cases < 1)
    throw fail(ConfigError, fn, "cases", "an integer >= 1", fmtValue(cases));
  const shapes = options.shapes ?? [
    [4, 8],
    [3, 5],
    [2, 12],
    [5, 7],
  ];
  if (shapes.length === 0)
    throw fail(ConfigError, fn, "shapes", "a non-empty list of [B, T]", "[]");
  const toInputs =
    options.inputs ??
    ((d: DrawnBatch): PolicyLossInputs => ({
      logprobs: d.logprobs,
      oldLogprobs: d.oldLogprobs,
      advantages: d.advantages,
      responseMask: d.responseMask,
      refLogprobs: d.refLogprobs,
      rolloutLogprobs: d.rolloutLogprobs,
    }));
  const master = createRng(options.seed ?? 0);
  let maxLoss = 0;
  let maxGrad = 0;
  let minCos = 1;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let worst = -1;
  let worstSeed = 0;
  for (let i = 0; i < cases; i++) {
    const seed = master.childSeed();
    const inputs = toInputs(drawBatch(seed, shapes[i % shapes.length] as [number, number]));
    const ra = a(inputs);
    const rb = b(inputs);
    const { lossRel, gradRel, cos } = caseMetrics(
      ra.loss,
      ra.gradLogprobs.data,
      rb.loss,
      rb.gradLogprobs.data,
    );
    if (rb.loss !== 0) {
      lo = Math.min(lo, ra.loss / rb.loss);
      hi = Math.max(hi, ra.loss / rb.loss);
    }
    maxLoss = Math.max(maxLoss, lossRel);
    maxGrad = Math.max(maxGrad, gradRel);
    minCos = Math.min(minCos, cos);
    if (Math.max(lossRel, gradRel) > worst) {
      worst = Math.max(lossRel, gradRel);
      worstSeed = seed;
    }
  }
  return {
    maxLossRelDiff: maxLoss,
    maxGradRelDiff: maxGrad,
    gradCosineMin: minCos,
    lossRatioRange: [lo, hi],
    cases,
    worstCaseSeed: worstSeed,
  };
}
