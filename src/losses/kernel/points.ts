/**
 * The surrogates of the fused policy-loss kernel, one small point function each
 * (docs/derivations/losses.md#surrogates, docs/performance.md#the-fused-kernel). The kernel owns
 * every loop: it reads the streams, computes the ratio, applies the TIS weight, aggregates, back-
 * propagates through the ratio and checks finiteness; a surrogate only says what one response
 * token contributes.
 *
 * A point function receives the token's ratio r (exactly 1 when `usesRatio` is false), its
 * advantage A, its logprob lp, the upstream derivative g = ∂L/∂obj (the aggregation weight times
 * the TIS weight, negated; obj = −ℓ) and the old logprob od, and writes
 *   out[0] ← ℓ, the per-token loss term (the negated objective, before the TIS weight);
 *   out[1] ← ∂L/∂r when `through` is "ratio" (the kernel chains it through the ratio's backward
 *            pass), or ∂L/∂lp when `through` is "logprob" (the ratio is then a constant, sg[·]);
 * and returns its clip flags ({@link CLIPPED_LOW} | {@link CLIPPED_HIGH}). Each derivative is
 * written with exactly the arithmetic of the closed form in losses.md (a zero that autograd's
 * masking gives is a literal +0), so the fused kernel is bitwise the unfused one. A surrogate is
 * one entry of {@link SURROGATES}: its point record, whether it needs the token ratio, its
 * constants (read from its settings block in the config's field table, losses/config.ts), the
 * kinks gradcheck keeps away from, and whether it holds a coefficient constant (CONTRIBUTING.md,
 * recipe 1).
 */
import type { ResolvedPolicyLossConfig, SurrogateKind } from "../config.js";
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

/**
 * The constants of the surrogates added after the first four (SAPO, DRO, DPPO), in an object of
 * their own shape that only their point functions see: the first four keep the small
 * SurrogateParams shape the hot PG_CLIP loop was tuned on (measured: one more field on it, even a
 * nested object, made the dapo one-thread call 10–25 % slower).
 */
export interface ExtendedSurrogateParams extends SurrogateParams {
  /** SAPO's temperatures (A > 0, A ≤ 0). */
  readonly tauPos: number;
  readonly tauNeg: number;
  /** DRO's β. */
  readonly beta: number;
  /** DPPO: 1 for the binary KL, 0 for TV; the bounds for A ≤ 0 and A > 0; the truncation (+∞: none). */
  readonly divKl: number;
  readonly divLow: number;
  readonly divHigh: number;
  readonly trunc: number;
  /** IPO's ε. */
  readonly ipoThreshold: number;
}

/** One token's surrogate term and its derivative; see the module header for the contract. */
export type SurrogatePointFn = (
  r: number,
  a: number,
  lp: number,
  g: number,
  out: Float64Array,
  k: SurrogateParams,
  od: number,
) => number;

/** A surrogate as the kernel runs it. @internal */
export interface SurrogatePoint {
  /**
   * The kernel's call site for this record (0–4; policyRows objectiveStage): pg_clip, pg_clip
   * with the dual clip and cispo each have their own, pg and reinforce share site 3, the newer
   * surrogates site 4. A site that sees one function keeps it inlined when a process runs
   * several surrogates (docs/performance.md#one-call-site-per-surrogate).
   */
  readonly site: number;
  /** "ratio": out[1] is ∂L/∂r, chained through the ratio; "logprob": out[1] is ∂L/∂lp. */
  readonly through: "ratio" | "logprob";
  /** False when the surrogate reads no ratio (reinforce): the kernel skips exp and reports 1. */
  readonly usesRatio: boolean;
  /** True when the point function reads the old logprob `od` (the kernel passes 0 otherwise). */
  readonly readsOld: boolean;
  /**
   * True when the point function reads the logprob `lp`. One that reads neither lp nor od gives
   * every token of a row the same ℓ and derivative under a sequence ratio with row advantages
   * (GSPO), which the fused pass then forms once per row.
   */
  readonly readsLogprob: boolean;
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

/** The call site of pg_clip without a dual clip (its fused token row: policyRows pgClipTokenRow). */
export const SITE_PG_CLIP = 0;
/** The call site of cispo (its fused token row: policyRows cispoTokenRow). */
export const SITE_CISPO = 2;

/**
 * ℓ = −r·A, the unclipped policy-gradient term (pg; pg_clip inside its band; ipo inside its trust
 * region). A = ±0 gives ±0 whatever the ratio (r·A is bitwise A for finite r ≥ 0; no ∞·0).
 * @internal
 */
export function ratioTerm(r: number, a: number): number {
  return -(a === 0 ? a : r * a);
}

/**
 * Whether r lies strictly inside pg_clip's band (lo, hi), where ℓ = −r·A and ∂L/∂r = g·A.
 * @internal
 */
export function inBand(r: number, lo: number, hi: number): boolean {
  return r > lo && r < hi;
}

/** cispo's ℓ = −sg[ŵ]·A·lp from coefA = ŵ·A (cispoWeight times A). @internal */
export function cispoTerm(coefA: number, lp: number): number {
  return -(coefA * lp);
}

/** pg: ℓ = −r·A, ∂L/∂r = g·A. */
const PG: SurrogatePoint = {
  site: 3,
  through: "ratio",
  usesRatio: true,
  readsOld: false,
  readsLogprob: false,
  point: (r, a, _lp, g, out) => {
    out[0] = ratioTerm(r, a);
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
  site: SITE_PG_CLIP,
  through: "ratio",
  usesRatio: true,
  readsOld: false,
  readsLogprob: false,
  point: (r, a, _lp, g, out, k) => {
    if (inBand(r, k.lo, k.hi)) {
      out[0] = ratioTerm(r, a);
      out[1] = g * a;
      return 0;
    }
    return clipped(r, a, g, out, k);
  },
  why: ratioWhy,
};

/** pg_clip with a dual clip c: ℓ = −max(min(r·A, clamp(r, lo, hi)·A), c·A) for A < 0. */
const PG_CLIP_DUAL: SurrogatePoint = {
  site: 1,
  through: "ratio",
  usesRatio: true,
  readsOld: false,
  readsLogprob: false,
  point: (r, a, _lp, g, out, k) => clipped(r, a, g, out, k),
  why: ratioWhy,
};

/** pgClipInto's term and slope, then ∂L/∂r = g·A·slope with slope ∈ {1, ½, ¼, 0}. */
function clipped(r: number, a: number, g: number, out: Float64Array, k: SurrogateParams): number {
  const flags = pgClipInto(r, a, k.lo, k.hi, k.cap, out);
  out[0] = -(out[0] as number);
  out[1] = slopeTimes(g * a, out[1] as number);
  return flags;
}

/**
 * ∂L/∂r = (g·A)·slope for pg_clip's slope ∈ {1, ½, ¼, 0}: a saturated clamp or the cap passes no
 * gradient, exactly +0, as autograd's masking gives. @internal
 */
export function slopeTimes(ga: number, slope: number): number {
  return slope === 1 ? ga : slope === 0 ? 0 : ga * slope;
}

/** reinforce: ℓ = −A·lp, ∂L/∂lp = g·A. */
const REINFORCE: SurrogatePoint = {
  site: 3,
  through: "logprob",
  usesRatio: false,
  readsOld: false,
  readsLogprob: true,
  point: (_r, a, lp, g, out) => {
    out[0] = -(a * lp);
    out[1] = g * a;
    return 0;
  },
  why: (_w, _z, _r, a, lp) => `−A·lp with A = ${a}, lp = ${lp} exceeds float64`,
};

/** cispo: ℓ = −sg[ŵ]·A·lp, ∂L/∂lp = g·ŵ·A (sg[ŵ]: the clipped weight is held constant). */
const CISPO: SurrogatePoint = {
  site: SITE_CISPO,
  through: "logprob",
  usesRatio: true,
  readsOld: false,
  readsLogprob: true,
  point: (r, a, lp, g, out, k) => {
    const coefA = cispoWeight(r, k.lo, k.hi, k.oneSided) * a;
    out[0] = cispoTerm(coefA, lp);
    out[1] = g * coefA;
    return (r > k.hi ? CLIPPED_HIGH : 0) | (!k.oneSided && r < k.lo ? CLIPPED_LOW : 0);
  },
  why: (_w, _z, _r, a, lp) => `−sg[ŵ]·A·lp with A = ${a}, lp = ${lp} exceeds float64`,
};

/**
 * sapo (Gao et al. 2025): ℓ = −σ(τ(r − 1))·(4/τ)·A with τ = τ+ for A > 0 and τ− otherwise (a soft,
 * smooth gate in place of the clip: it equals r·A to first order at r = 1), and
 * ∂L/∂r = g·A·4σ(1 − σ) (σ′ = σ(1 − σ); (4/τ)·τ = 4).
 */
const SAPO: SurrogatePoint = {
  site: 4,
  through: "ratio",
  usesRatio: true,
  readsOld: false,
  readsLogprob: false,
  point: (r, a, _lp, g, out, k) => {
    const tau =
      a > 0 ? (k as ExtendedSurrogateParams).tauPos : (k as ExtendedSurrogateParams).tauNeg;
    const s = 1 / (1 + Math.exp(-(tau * (r - 1))));
    // −gate·A as verl writes it; A = ±0 gives ±0 (the gate is finite for every r ≥ 0, ∞ included).
    out[0] = -(s * (4 / tau)) * a;
    const slope = 4 * (s * (1 - s));
    out[1] = slope === 0 ? 0 : g * (a * slope);
    return 0;
  },
  why: ratioWhy,
};

/**
 * dro: ℓ = −(lp·A − ½β·z²) with z = lp − old (a quadratic penalty on the log-ratio in place of a
 * clip), ∂L/∂lp = g·(A − β·z).
 */
const DRO: SurrogatePoint = {
  site: 4,
  through: "logprob",
  usesRatio: false,
  readsOld: true,
  readsLogprob: true,
  point: (_r, a, lp, g, out, k, od) => {
    const z = lp - od;
    out[0] = -(lp * a - 0.5 * (k as ExtendedSurrogateParams).beta * (z * z));
    out[1] = g * (a - (k as ExtendedSurrogateParams).beta * z);
    return 0;
  },
  why: (_w, _z, _r, a, lp) => `−(lp·A − ½β·z²) with A = ${a}, lp = ${lp} exceeds float64`,
};

/**
 * dppo (DPPO-Binary-TV / -KL): ℓ = −A·sg[min(r, C)]·lp·valid, valid = sg[1] inside the binary-
 * divergence trust region of the sampled token's probability p = e^lp against p_old = e^old:
 * TV: p − p_old ≤ δ_hi (A > 0) or p − p_old ≥ −δ_lo (A ≤ 0); KL, with
 * D = p_old·(old − lp) + (1 − p_old)·ln((1 − p_old + 1e-8)/(1 − p + 1e-8)): D ≤ δ_hi or p ≤ p_old
 * (A > 0), D ≤ δ_lo or p ≥ p_old (A ≤ 0). ∂L/∂lp = g·A·min(r, C) inside, 0 outside (flagged
 * clipped high for A > 0, low otherwise).
 */
const DPPO: SurrogatePoint = {
  site: 4,
  through: "logprob",
  usesRatio: true,
  readsOld: true,
  readsLogprob: true,
  point: (r, a, lp, g, out, k, od) => {
    const p = Math.exp(lp);
    const po = Math.exp(od);
    let valid: boolean;
    if ((k as ExtendedSurrogateParams).divKl === 0)
      valid =
        a > 0
          ? p - po <= (k as ExtendedSurrogateParams).divHigh
          : p - po >= -(k as ExtendedSurrogateParams).divLow;
    else {
      const d = po * (od - lp) + (1 - po) * Math.log((1 - po + 1e-8) / (1 - p + 1e-8));
      valid =
        a > 0
          ? d <= (k as ExtendedSurrogateParams).divHigh || p <= po
          : d <= (k as ExtendedSurrogateParams).divLow || p >= po;
    }
    if (!valid) {
      // The detached mask is 0: the term and its gradient are exactly 0.
      out[0] = 0;
      out[1] = 0;
      return a > 0 ? CLIPPED_HIGH : CLIPPED_LOW;
    }
    const coef = a * Math.min(r, (k as ExtendedSurrogateParams).trunc);
    out[0] = -coef * lp;
    out[1] = g * coef;
    return 0;
  },
  why: (_w, _z, r, a, lp) =>
    `−A·sg[min(r, C)]·lp with A = ${a}, r = ${r}, lp = ${lp} exceeds float64`,
};

/**
 * ipo (prime-rl's `ipo_loss_fn`): ℓ = −A·r·keep, keep = sg[|e^lp − e^old| ≤ ε] (a symmetric trust
 * region on the sampled token's absolute probability), ∂L/∂r = g·A inside, 0 outside (flagged
 * clipped high when the probability rose, low when it fell).
 */
const IPO: SurrogatePoint = {
  site: 4,
  through: "ratio",
  usesRatio: true,
  readsOld: true,
  readsLogprob: true,
  point: (r, a, lp, g, out, k, od) => {
    const dp = Math.exp(lp) - Math.exp(od);
    if (Math.abs(dp) > (k as ExtendedSurrogateParams).ipoThreshold) {
      // The detached mask is 0: the term and its gradient are exactly 0.
      out[0] = 0;
      out[1] = 0;
      return dp > 0 ? CLIPPED_HIGH : CLIPPED_LOW;
    }
    out[0] = ratioTerm(r, a);
    out[1] = g * a;
    return 0;
  },
  why: ratioWhy,
};

/** The extended constants while {@link surrogateParams} fills them. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What the kernel, the validator and gradcheck know of a surrogate. @internal
 */
export interface SurrogateEntry {
  /** Its point record (pg_clip's depends on the dual clip). */
  readonly point: (cfg: ResolvedPolicyLossConfig) => SurrogatePoint;
  /** Why it needs the token ratio (validation refuses the sequence kinds), or null. */
  readonly tokenRatioOnly: string | null;
  /**
   * Its constants, from its settings block (checked, defaults filled), into the extended shape;
   * absent: the band's {@link SurrogateParams} (lo, hi, cap, oneSided).
   */
  readonly constants?: (
    s: Readonly<Record<string, unknown>>,
    x: Mutable<ExtendedSurrogateParams>,
  ) => void;
  /**
   * The distance of a token (its logprob and old logprob) to the nearest kink of the point
   * function: gradcheck draws away from it. Absent: no kink beyond the clip band's.
   */
  readonly kink?: (lp: number, od: number, k: ExtendedSurrogateParams) => number;
  /**
   * Its term holds a coefficient constant (sg[·]) that depends on lp: gradcheck checks the
   * equivalent with that coefficient frozen into the advantages.
   */
  readonly detached?: true;
}

/** DPPO's binary KL of the sampled token's probability p against p_old. */
function binaryKl(p: number, po: number, lp: number, od: number): number {
  return po * (od - lp) + (1 - po) * Math.log((1 - po + 1e-8) / (1 - p + 1e-8));
}

/** Every surrogate, by name. @internal */
export const SURROGATES: Readonly<Record<SurrogateKind, SurrogateEntry>> = {
  pg_clip: { point: (cfg) => (cfg.cap === null ? PG_CLIP : PG_CLIP_DUAL), tokenRatioOnly: null },
  pg: { point: () => PG, tokenRatioOnly: null },
  reinforce: { point: () => REINFORCE, tokenRatioOnly: "the ratio is unused" },
  cispo: { point: () => CISPO, tokenRatioOnly: null },
  sapo: {
    point: () => SAPO,
    tokenRatioOnly: null,
    constants: (s, x) => {
      x.tauPos = s.tauPos as number;
      x.tauNeg = s.tauNeg as number;
    },
  },
  dro: {
    point: () => DRO,
    tokenRatioOnly: "the ratio is unused",
    constants: (s, x) => {
      x.beta = s.beta as number;
    },
  },
  dppo: {
    point: () => DPPO,
    tokenRatioOnly: "DPPO's detached ratio and probabilities are per token",
    constants: (s, x) => {
      x.divKl = s.divergence === "kl" ? 1 : 0;
      x.divLow = s.low as number;
      x.divHigh = s.high as number;
      x.trunc = (s.truncation as number | null) ?? Number.POSITIVE_INFINITY;
    },
    // The trust region's edges and the truncation of the detached ratio.
    kink: (lp, od, k) => {
      const p = Math.exp(lp);
      const po = Math.exp(od);
      const gaps =
        k.divKl === 0
          ? [p - po - k.divHigh, p - po + k.divLow]
          : [binaryKl(p, po, lp, od) - k.divHigh, binaryKl(p, po, lp, od) - k.divLow, p - po];
      return Math.min(...gaps.map(Math.abs), Math.abs(Math.exp(lp - od) - k.trunc));
    },
    detached: true,
  },
  ipo: {
    point: () => IPO,
    tokenRatioOnly: "IPO's probabilities are per token",
    constants: (s, x) => {
      x.ipoThreshold = s.threshold as number;
    },
    // The trust region's edge |e^lp − e^old| = ε.
    kink: (lp, od, k) => Math.abs(Math.abs(Math.exp(lp) - Math.exp(od)) - k.ipoThreshold),
  },
  // −A·lp; the gamma weight sg[φ_b] is the kernel's token weight (policyRows vespoStage).
  vespo: { point: () => REINFORCE, tokenRatioOnly: "the ratio is unused", detached: true },
};

/**
 * The point function of `cfg.surrogate` (its constants come as {@link surrogateParams}).
 * pg: ℓ = −r·A, ∂L/∂r = g·A. pg_clip: ℓ = −min(r·A, clamp(r, lo, hi)·A) (dual clip: −max(·, c·A)
 * for A < 0), ∂L/∂r = g·A·slope with slope ∈ {1, ½, ¼, 0}. reinforce: ℓ = −A·lp, ∂L/∂lp = g·A.
 * cispo: ℓ = −sg[ŵ]·A·lp, ∂L/∂lp = g·ŵ·A.
 * @internal
 */
export function surrogatePoint(cfg: ResolvedPolicyLossConfig): SurrogatePoint {
  return SURROGATES[cfg.surrogate].point(cfg);
}

/** The constants the point functions read, in one shape for every surrogate. @internal */
export function surrogateParams(cfg: ResolvedPolicyLossConfig): SurrogateParams {
  // Created with doubles (NaN), then filled: a field first seen as a small integer (lo = 0) and
  // later as a double would change the hidden class from config to config (see KEEP_MAPS).
  const constants = SURROGATES[cfg.surrogate].constants;
  if (constants !== undefined) {
    const x = {
      lo: Number.NaN,
      hi: Number.NaN,
      cap: Number.NaN,
      oneSided: false,
      tauPos: Number.NaN,
      tauNeg: Number.NaN,
      beta: Number.NaN,
      divKl: Number.NaN,
      divLow: Number.NaN,
      divHigh: Number.NaN,
      trunc: Number.NaN,
      ipoThreshold: Number.NaN,
    };
    constants(cfg.settings ?? {}, x);
    return x;
  }
  const p = { lo: Number.NaN, hi: Number.NaN, cap: Number.NaN, oneSided: false };
  p.lo = cfg.lo;
  p.hi = cfg.hi;
  p.cap = cfg.cap ?? Number.NaN;
  p.oneSided = cfg.oneSided;
  return p;
}
