/**
 * PPO clip census: which response tokens sit outside the PG_CLIP band, split by advantage sign,
 * and which of them lose their whole gradient (docs/diagnostics/clipping.md). Token ratios only:
 * a sequence ratio couples the tokens of a row, so its zero set is not per-token.
 */
import { fmtValue, mustBe } from "../core/message.js";
import type { Mask, MaskLike, MatrixLike, VectorLike } from "../core/tensor.js";
import { broadcastAdvantages, checkFiniteAt, toMask, toMatrix } from "../core/validate.js";
import { ConfigError } from "../errors.js";
import type { ClipConfig } from "../losses/config.js";

/**
 * What {@link clipReport} returns. Every fraction has the same denominator N, the number of
 * response tokens; `gradientKilledMask` is false at padding.
 * @since 0.1.0
 */
export interface ClipReport {
  /** The lower clip width ε_lo: the band's lower edge is 1 − ε_lo. */
  readonly epsLow: number;
  /** The upper clip width ε_hi: the band's upper edge is 1 + ε_hi. */
  readonly epsHigh: number;
  /** The dual-clip cap c, or null when dual clip is off. */
  readonly ratioCap: number | null;
  /** Share of tokens with A > 0 and r > 1 + ε_hi: the clamp binds, the gradient is killed. */
  readonly fracPosAdvClippedHigh: number;
  /** Share of tokens with A > 0 and r < 1 − ε_lo: PPO's min is one-sided, the gradient flows. */
  readonly fracPosAdvClippedLow: number;
  /** Share of tokens with A < 0 and r > 1 + ε_hi: the gradient flows (unbounded unless capped). */
  readonly fracNegAdvClippedHigh: number;
  /** Share of tokens with A < 0 and r < 1 − ε_lo: the clamp binds, the gradient is killed. */
  readonly fracNegAdvClippedLow: number;
  /** `[B, T]`: true where the exact PG_CLIP gradient is zero; false at padding. */
  readonly gradientKilledMask: Mask;
  /** Share of response tokens whose gradient is killed. */
  readonly gradientKilledFrac: number;
}

function isSet(x: unknown): boolean {
  return x !== null && x !== undefined;
}

function positiveEps(fn: string, arg: string, x: unknown): number {
  if (typeof x !== "number" || !Number.isFinite(x) || x <= 0) {
    throw new ConfigError(fn, arg, mustBe(fn, arg, "a positive finite number", fmtValue(x)));
  }
  return x;
}

/**
 * Census the PPO clip regions of a batch and the tokens whose PG_CLIP gradient is exactly zero.
 *
 * Formula: with lo = 1 − ε_lo, hi = 1 + ε_hi (strict inequalities) and N = Σ m,
 * frac(A > 0, r > hi), frac(A > 0, r < lo), frac(A < 0, r > hi), frac(A < 0, r < lo), each a count
 * over N that ignores the cap; killed = m ∧ [(A > 0 ∧ r > hi) ∨ (A < 0 ∧ r < lo) ∨ A = 0 ∨
 * (c set ∧ A < 0 ∧ r > c)], exactly the zero set of ∂/∂lp of −min(r·A, clamp(r, lo, hi)·A)
 * (then −max(·, c·A) for A < 0) away from ties r ∈ {lo, hi, c}.
 *
 * @param ratio - `[B, T]` token importance ratios exp(logprobs − oldLogprobs); finite and > 0 at
 *   response positions, anything at padding.
 * @param advantages - `[B]` (finite everywhere) or `[B, T]` (finite at response positions).
 * @param responseMask - `[B, T]`, 1 at response tokens, every row non-empty.
 * @param clip - The PG_CLIP widths; epsLow and epsHigh required, ratioCap optional (> 1).
 * @returns The four quadrant fractions, the killed mask (false at padding) and its fraction.
 * @throws {ConfigError} E_CONFIG when an eps is missing, not finite or ≤ 0, when ratioCap is not a
 *   finite number > 1, or when a ratio at a response position is ≤ 0.
 * @throws {ShapeError} E_SHAPE when ratio is not `[B, T]` or the advantages do not fit it.
 * @throws {MaskError} E_MASK when the mask is not 0/1, misshaped, or has an empty row.
 * @throws {NonFiniteError} E_NONFINITE when ratio or advantages are not finite where they must be.
 * @derivation docs/diagnostics/clipping.md#killed-set
 * @enforcedBy test/diagnostics/clipping.test.ts > clipReport > golden: six-token census with and without the dual-clip cap
 * @enforcedBy test/diagnostics/clipping.test.ts > clipReport > identity: killed mask is the zero set of the exact pg_clip gradient (closed form and autodiff), without dual clip
 * @enforcedBy test/diagnostics/clipping.test.ts > clipReport > identity: killed mask is the zero set of the exact pg_clip gradient (closed form and autodiff), with dual clip
 * @see arXiv 1707.06347 eq. 7 (PPO clip); arXiv 1912.09729 (dual-clip PPO)
 * @since 0.1.0
 */
export function clipReport(
  ratio: MatrixLike,
  advantages: VectorLike | MatrixLike,
  responseMask: MaskLike,
  clip: ClipConfig,
): ClipReport {
  const fn = "clipReport";
  if (typeof clip !== "object" || clip === null || !isSet(clip.epsLow) || !isSet(clip.epsHigh)) {
    throw new ConfigError(
      fn,
      "clip",
      mustBe(fn, "clip", "a ClipConfig with epsLow and epsHigh set", fmtValue(clip)),
    );
  }
  const epsLow = positiveEps(fn, "clip.epsLow", clip.epsLow);
  const epsHigh = positiveEps(fn, "clip.epsHigh", clip.epsHigh);
  let cap: number | null = null;
  if (isSet(clip.ratioCap)) {
    const c = clip.ratioCap;
    if (typeof c !== "number" || !Number.isFinite(c) || c <= 1) {
      throw new ConfigError(
        fn,
        "clip.ratioCap",
        mustBe(fn, "clip.ratioCap", "a finite number > 1 (dual clip) or null", fmtValue(c)),
      );
    }
    cap = c;
  }
  const r = toMatrix(fn, "ratio", ratio);
  const mask = toMask(fn, responseMask, { rows: r.rows, cols: r.cols, arg: "ratio" });
  checkFiniteAt(fn, "ratio", r, mask);
  const m = mask.data;
  for (let i = 0; i < m.length; i++) {
    if (m[i] === 1 && !((r.data[i] as number) > 0)) {
      const b = Math.floor(i / r.cols);
      throw new ConfigError(
        fn,
        "ratio",
        mustBe(
          fn,
          "ratio",
          "> 0 at response positions (an importance ratio is exp(logprobs - oldLogprobs))",
          `${r.data[i]} at (${b}, ${i - b * r.cols})`,
        ),
      );
    }
  }
  const A = broadcastAdvantages(fn, advantages, r, "ratio", mask).data;

  // The band edges are formed exactly as policyLoss forms them, so ties classify identically.
  const lo = 1 - epsLow;
  const hi = 1 + epsHigh;
  const killed = new Uint8Array(m.length);
  let n = 0;
  let posHigh = 0;
  let posLow = 0;
  let negHigh = 0;
  let negLow = 0;
  let nKilled = 0;
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 1) continue;
    n++;
    const a = A[i] as number;
    const x = r.data[i] as number;
    const above = x > hi;
    const below = x < lo;
    if (a > 0) {
      if (above) posHigh++;
      if (below) posLow++;
    } else if (a < 0) {
      if (above) negHigh++;
      if (below) negLow++;
    }
    const dead =
      (a > 0 && above) || (a < 0 && below) || a === 0 || (cap !== null && a < 0 && x > cap);
    if (dead) {
      killed[i] = 1;
      nKilled++;
    }
  }
  return {
    epsLow,
    epsHigh,
    ratioCap: cap,
    fracPosAdvClippedHigh: posHigh / n,
    fracPosAdvClippedLow: posLow / n,
    fracNegAdvClippedHigh: negHigh / n,
    fracNegAdvClippedLow: negLow / n,
    gradientKilledMask: { rows: r.rows, cols: r.cols, data: killed },
    gradientKilledFrac: nKilled / n,
  };
}
