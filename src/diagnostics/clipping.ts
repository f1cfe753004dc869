/**
 * PPO clip census: which response tokens sit outside the PG_CLIP band, split by advantage sign,
 * and which of them lose their whole gradient (docs/diagnostics/clipping.md). Token ratios only:
 * a sequence ratio couples the tokens of a row, so its zero set is not per-token.
 */
import { fmtValue } from "../core/message.js";
import {
  isMask,
  isMatrix,
  type Mask,
  type MaskLike,
  type MatrixLike,
  type VectorLike,
} from "../core/tensor.js";
import {
  broadcastAdvantages,
  checkFiniteAt,
  checkPositive,
  toMask,
  toMatrix,
} from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
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
  /** Share of response tokens whose gradient is killed: clipKilledFrac + zeroAdvantageFrac. */
  readonly gradientKilledFrac: number;
  /** Share killed by the clip: A ≠ 0 and the clamp binds, or A < 0 above the dual-clip cap. */
  readonly clipKilledFrac: number;
  /** Share with A = 0: no gradient whatever the ratio (not the clip's doing). */
  readonly zeroAdvantageFrac: number;
}

function isSet(x: unknown): boolean {
  return x !== null && x !== undefined;
}

/**
 * Validate a ClipConfig for the census: both widths finite > 0, the cap null or finite > 1.
 * @internal
 */
export function checkClip(
  fn: string,
  clip: ClipConfig,
): { epsLow: number; epsHigh: number; cap: number | null } {
  if (typeof clip !== "object" || clip === null || !isSet(clip.epsLow) || !isSet(clip.epsHigh)) {
    throw fail(ConfigError, fn, "clip", "a ClipConfig with epsLow and epsHigh set", fmtValue(clip));
  }
  const epsLow = checkPositive(fn, "clip.epsLow", clip.epsLow);
  const epsHigh = checkPositive(fn, "clip.epsHigh", clip.epsHigh);
  let cap: number | null = null;
  if (isSet(clip.ratioCap)) {
    const c = clip.ratioCap;
    if (typeof c !== "number" || !Number.isFinite(c) || c <= 1) {
      throw fail(
        ConfigError,
        fn,
        "clip.ratioCap",
        "a finite number > 1 (dual clip) or null",
        fmtValue(c),
      );
    }
    cap = c;
  }
  return { epsLow, epsHigh, cap };
}

/** Quadrant and killed bits of one token ({@link classify}). */
const POS_HIGH = 1;
const POS_LOW = 2;
const NEG_HIGH = 4;
const NEG_LOW = 8;
const KILLED = 16;
const ZERO_ADV = 32;

/**
 * One response token's census bits: the quadrant it falls in (A > 0 or A < 0, above 1 + ε_hi or
 * below 1 − ε_lo) and whether the exact PG_CLIP gradient is zero there (clamp binding, A = 0, or
 * above the dual-clip cap with A < 0).
 */
function classify(x: number, a: number, lo: number, hi: number, cap: number | null): number {
  const above = x > hi;
  const below = x < lo;
  let bits = 0;
  if (a > 0) {
    if (above) bits |= POS_HIGH;
    if (below) bits |= POS_LOW;
  } else if (a < 0) {
    if (above) bits |= NEG_HIGH;
    if (below) bits |= NEG_LOW;
  }
  if (gradientKilled(x, a, lo, hi, cap)) bits |= KILLED;
  if (a === 0) bits |= ZERO_ADV;
  return bits;
}

/**
 * Whether the exact PG_CLIP gradient is zero at a response token with ratio x and advantage a:
 * the clamp binds (a > 0 above 1 + ε_hi, a < 0 below 1 − ε_lo), a = 0, or a < 0 above the
 * dual-clip cap. The census's killed bit; the run's step summary counts it too. @internal
 */
export function gradientKilled(
  x: number,
  a: number,
  lo: number,
  hi: number,
  cap: number | null,
): boolean {
  return (a > 0 && x > hi) || (a < 0 && x < lo) || a === 0 || (cap !== null && a < 0 && x > cap);
}

/** The report's fractions from the counts of each bit over n response tokens. */
function fractions(
  epsLow: number,
  epsHigh: number,
  cap: number | null,
  c: Int32Array,
  n: number,
): Omit<ClipReport, "gradientKilledMask"> {
  return {
    epsLow,
    epsHigh,
    ratioCap: cap,
    fracPosAdvClippedHigh: (c[0] as number) / n,
    fracPosAdvClippedLow: (c[1] as number) / n,
    fracNegAdvClippedHigh: (c[2] as number) / n,
    fracNegAdvClippedLow: (c[3] as number) / n,
    gradientKilledFrac: (c[4] as number) / n,
    clipKilledFrac: ((c[4] as number) - (c[5] as number)) / n,
    zeroAdvantageFrac: (c[5] as number) / n,
  };
}

/** Add a token's bits to the six counts (the quadrants, killed, zero advantage). */
function count(c: Int32Array, bits: number): void {
  if (bits === 0) return;
  if ((bits & POS_HIGH) !== 0) c[0] = (c[0] as number) + 1;
  if ((bits & POS_LOW) !== 0) c[1] = (c[1] as number) + 1;
  if ((bits & NEG_HIGH) !== 0) c[2] = (c[2] as number) + 1;
  if ((bits & NEG_LOW) !== 0) c[3] = (c[3] as number) + 1;
  if ((bits & KILLED) !== 0) c[4] = (c[4] as number) + 1;
  if ((bits & ZERO_ADV) !== 0) c[5] = (c[5] as number) + 1;
}

/**
 * The census of {@link clipReport} on the ratio exp(lp − old), clamped into [MIN_VALUE,
 * MAX_VALUE] (an overflowing or underflowing ratio is beyond every band edge and cap either way),
 * computed in one pass without the ratio array, the broadcast advantages or the killed mask
 * (diagnoseBatch's clip detector needs none of them). Returns null whenever anything is not the
 * plain case (not typed matrices and a mask of the same shape, a mask value other than 0/1, an
 * empty row, a NaN ratio, non-finite or misshaped advantages): the caller then runs clipReport on
 * the ratio array, which gives the exact error. The clip config is checked first, as clipReport
 * checks it. @internal
 */
export function clipCensusOfLogprobs(
  lp: unknown,
  old: unknown,
  advantages: unknown,
  responseMask: unknown,
  clip: ClipConfig,
): Omit<ClipReport, "gradientKilledMask"> | null {
  const { epsLow, epsHigh, cap } = checkClip("clipReport", clip);
  if (!isMatrix(lp) || !isMatrix(old) || !isMask(responseMask)) return null;
  const { rows: B, cols: T } = lp;
  const m = responseMask.data;
  const same = (x: { rows: number; cols: number; data: { length: number } }): boolean =>
    x.rows === B && x.cols === T && x.data.length === B * T;
  if (!same(lp) || !same(old) || !same(responseMask)) return null;
  let advRow: Float64Array | null = null;
  let advTok: Float64Array | null = null;
  if (advantages instanceof Float64Array && advantages.length === B) advRow = advantages;
  else if (isMatrix(advantages) && same(advantages)) advTok = advantages.data;
  else return null;
  if (advRow !== null)
    for (let b = 0; b < B; b++) if (!Number.isFinite(advRow[b] as number)) return null;
  const lo = 1 - epsLow;
  const hi = 1 + epsHigh;
  const c = new Int32Array(6);
  let n = 0;
  const lpd = lp.data;
  const od = old.data;
  for (let b = 0; b < B; b++) {
    const o = b * T;
    let rowN = 0;
    for (let i = o; i < o + T; i++) {
      const v = m[i] as number;
      if (v === 0) continue;
      if (v !== 1) return null;
      const e = Math.exp((lpd[i] as number) - (od[i] as number));
      if (Number.isNaN(e)) return null;
      const x = e > Number.MAX_VALUE ? Number.MAX_VALUE : e === 0 ? Number.MIN_VALUE : e;
      const a = advTok === null ? ((advRow as Float64Array)[b] as number) : (advTok[i] as number);
      if (!Number.isFinite(a)) return null;
      count(c, classify(x, a, lo, hi, cap));
      rowN++;
    }
    if (rowN === 0) return null;
    n += rowN;
  }
  return fractions(epsLow, epsHigh, cap, c, n);
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
  const { epsLow, epsHigh, cap } = checkClip(fn, clip);
  const r = toMatrix(fn, "ratio", ratio);
  const mask = toMask(fn, responseMask, { rows: r.rows, cols: r.cols, arg: "ratio" });
  checkFiniteAt(fn, "ratio", r, mask);
  const m = mask.data;
  for (let i = 0; i < m.length; i++) {
    if (m[i] === 1 && !((r.data[i] as number) > 0)) {
      const b = Math.floor(i / r.cols);
      throw fail(
        ConfigError,
        fn,
        "ratio",
        "> 0 at response positions (an importance ratio is exp(logprobs - oldLogprobs))",
        `${r.data[i]} at (${b}, ${i - b * r.cols})`,
      );
    }
  }
  const A = broadcastAdvantages(fn, advantages, r, "ratio", mask).data;

  // The band edges are formed exactly as policyLoss forms them, so ties classify identically.
  const lo = 1 - epsLow;
  const hi = 1 + epsHigh;
  const killed = new Uint8Array(m.length);
  const c = new Int32Array(6);
  let n = 0;
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 1) continue;
    n++;
    const bits = classify(r.data[i] as number, A[i] as number, lo, hi, cap);
    count(c, bits);
    if ((bits & KILLED) !== 0) killed[i] = 1;
  }
  const f = fractions(epsLow, epsHigh, cap, c, n);
  return {
    epsLow: f.epsLow,
    epsHigh: f.epsHigh,
    ratioCap: f.ratioCap,
    fracPosAdvClippedHigh: f.fracPosAdvClippedHigh,
    fracPosAdvClippedLow: f.fracPosAdvClippedLow,
    fracNegAdvClippedHigh: f.fracNegAdvClippedHigh,
    fracNegAdvClippedLow: f.fracNegAdvClippedLow,
    gradientKilledMask: { rows: r.rows, cols: r.cols, data: killed },
    gradientKilledFrac: f.gradientKilledFrac,
    clipKilledFrac: f.clipKilledFrac,
    zeroAdvantageFrac: f.zeroAdvantageFrac,
  };
}
