/**
 * The surrogates of the fused policy-loss kernel, one small point function each
 * (docs/derivations/losses.md#surrogates, docs/performance.md#the-fused-kernel). The kernel owns
 * every loop: it reads the streams, computes the ratio, applies the TIS weight, aggregates, back-
 * propagates through the ratio and checks finiteness; a surrogate only says what one response
 * token contributes. Adding a surrogate is one record here and one `case` in {@link surrogatePoint}.
 *
 * A point function receives the token's ratio r (exactly 1 when `usesRatio` is false), its
 * advantage A, its logprob lp and the upstream derivative g = ∂L/∂ℓ (the aggregation weight times
 * the TIS weight, negated), and writes
 *   out[0] ← ℓ, the per-token loss term (the negated objective, before the TIS weight);
 *   out[1] ← ∂L/∂r when `through` is "ratio" (the kernel chains it through the ratio's backward
 *            pass), or ∂L/∂lp when `through` is "logprob" (the ratio is then a constant, sg[·]);
 * and returns its clip flags ({@link CLIPPED_LOW} | {@link CLIPPED_HIGH}). Each derivative is
 * written with exactly the arithmetic of the closed form in losses.md (a zero that autograd's
 * masking gives is a literal +0), so the fused kernel is bitwise the unfused one.
 */
import type { ResolvedPolicyLossConfig } from "../config.js";
import { CLIPPED_HIGH, CLIPPED_LOW, cispoWeight, pgClipInto } from "../surrogates.js";

/**
 * A surrogate's constants: the band [lo, hi], the dual-clip cap (NaN for none) and CISPO's
 * one-sidedness. Every field is a double for every config (built by {@link surrogateParams}), so
 * the objects of all configs share one hidden class.
 */
export interface SurrogateParams {
  readonly lo: number;
  readonly hi: number;
  readonly cap: number;
  readonly oneSided: boolean;
}

/** One token's surrogate term and its derivative; see the module header for the contract. */
export type SurrogatePointFn = (
  r: number,
  a: number,
  lp: number,
  g: number,
  out: Float64Array,
  k: SurrogateParams,
) => number;

/** A surrogate as the kernel runs it. @internal */
export interface SurrogatePoint {
  /** "ratio": out[1] is ∂L/∂r, chained through the ratio; "logprob": out[1] is ∂L/∂lp. */
  readonly through: "ratio" | "logprob";
  /** False when the surrogate reads no ratio (reinforce): the kernel skips exp and reports 1. */
  readonly usesRatio: boolean;
  readonly point: SurrogatePointFn;
  /**
   * Why ℓ is not finite, for the overflow message: `which` names the log-ratio ("log-ratio lp −
   * old" or "mean log-ratio of the row") and `logRatio` is its value.
   */
  readonly why: (which: string, logRatio: number, r: number, a: number, lp: number) => string;
}

function ratioWhy(which: string, logRatio: number, r: number, a: number): string {
  return r === Number.POSITIVE_INFINITY
    ? `${which} = ${logRatio}: exp overflows and the ratio enters the loss unclipped with A = ${a}`
    : `${which} = ${logRatio}: r·A = ${r}·${a} exceeds float64`;
}

// The records are module constants, not closures made per call: optimised code that inlines a
// point function holds it weakly, and a closure that dies at the next GC would throw that code
// away (measured: every call re-optimised the kernel after a full GC).

/** pg: ℓ = −r·A, ∂L/∂r = g·A. */
const PG: SurrogatePoint = {
  through: "ratio",
  usesRatio: true,
  // A = ±0: the term is ±0 whatever the ratio (r·A is bitwise A for finite r ≥ 0; no ∞·0).
  point: (r, a, _lp, g, out) => {
    out[0] = -(a === 0 ? a : r * a);
    out[1] = g * a;
    return 0;
  },
  why: ratioWhy,
};

/**
 * pg_clip without a dual clip: ℓ = −min(r·A, clamp(r, lo, hi)·A). Strictly inside the band (the
 * common case) the two branches tie at r·A with slope (1 + 1)·½ = 1, so ℓ = −r·A and ∂L/∂r = g·A
 * are written at once, which are pgClipInto's values there (a record of its own: the dual clip's
 * test and the slope's round trip through `out` cost about 15 % of the objective stage).
 */
const PG_CLIP: SurrogatePoint = {
  through: "ratio",
  usesRatio: true,
  point: (r, a, _lp, g, out, k) => {
    if (r > k.lo && r < k.hi) {
      out[0] = -(a === 0 ? a : r * a);
      out[1] = g * a;
      return 0;
    }
    return clipped(r, a, g, out, k);
  },
  why: ratioWhy,
};

/** pg_clip with a dual clip c: ℓ = −max(min(r·A, clamp(r, lo, hi)·A), c·A) for A < 0. */
const PG_CLIP_DUAL: SurrogatePoint = {
  through: "ratio",
  usesRatio: true,
  point: (r, a, _lp, g, out, k) => clipped(r, a, g, out, k),
  why: ratioWhy,
};

/** pgClipInto's term and slope, then ∂L/∂r = g·A·slope with slope ∈ {1, ½, ¼, 0}. */
function clipped(r: number, a: number, g: number, out: Float64Array, k: SurrogateParams): number {
  const flags = pgClipInto(r, a, k.lo, k.hi, k.cap, out);
  const slope = out[1] as number;
  out[0] = -(out[0] as number);
  // A saturated clamp or the cap passes no gradient: exactly +0, as autograd's masking gives.
  out[1] = slope === 1 ? g * a : slope === 0 ? 0 : g * a * slope;
  return flags;
}

/** reinforce: ℓ = −A·lp, ∂L/∂lp = g·A. */
const REINFORCE: SurrogatePoint = {
  through: "logprob",
  usesRatio: false,
  point: (_r, a, lp, g, out) => {
    out[0] = -(a * lp);
    out[1] = g * a;
    return 0;
  },
  why: (_w, _z, _r, a, lp) => `−A·lp with A = ${a}, lp = ${lp} exceeds float64`,
};

/** cispo: ℓ = −sg[ŵ]·A·lp, ∂L/∂lp = g·ŵ·A (sg[ŵ]: the clipped weight is held constant). */
const CISPO: SurrogatePoint = {
  through: "logprob",
  usesRatio: true,
  point: (r, a, lp, g, out, k) => {
    const coefA = cispoWeight(r, k.lo, k.hi, k.oneSided) * a;
    out[0] = -(coefA * lp);
    out[1] = g * coefA;
    return (r > k.hi ? CLIPPED_HIGH : 0) | (!k.oneSided && r < k.lo ? CLIPPED_LOW : 0);
  },
  why: (_w, _z, _r, a, lp) => `−sg[ŵ]·A·lp with A = ${a}, lp = ${lp} exceeds float64`,
};

/**
 * The point function of `cfg.surrogate` (its constants come as {@link surrogateParams}).
 * pg: ℓ = −r·A, ∂L/∂r = g·A. pg_clip: ℓ = −min(r·A, clamp(r, lo, hi)·A) (dual clip: −max(·, c·A)
 * for A < 0), ∂L/∂r = g·A·slope with slope ∈ {1, ½, ¼, 0}. reinforce: ℓ = −A·lp, ∂L/∂lp = g·A.
 * cispo: ℓ = −sg[ŵ]·A·lp, ∂L/∂lp = g·ŵ·A.
 * @internal
 */
export function surrogatePoint(cfg: ResolvedPolicyLossConfig): SurrogatePoint {
  switch (cfg.surrogate) {
    case "pg":
      return PG;
    case "pg_clip":
      return cfg.cap === null ? PG_CLIP : PG_CLIP_DUAL;
    case "reinforce":
      return REINFORCE;
    case "cispo":
      return CISPO;
  }
}

/** The constants the point functions read, in one shape for every surrogate. @internal */
export function surrogateParams(cfg: ResolvedPolicyLossConfig): SurrogateParams {
  // Created with doubles (NaN), then filled: a field first seen as a small integer (lo = 0) and
  // later as a double would change the hidden class from config to config (see KEEP_MAPS).
  const p = { lo: Number.NaN, hi: Number.NaN, cap: Number.NaN, oneSided: false };
  p.lo = cfg.lo;
  p.hi = cfg.hi;
  p.cap = cfg.cap ?? Number.NaN;
  p.oneSided = cfg.oneSided;
  return p;
}
