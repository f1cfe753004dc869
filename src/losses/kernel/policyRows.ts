/**
 * The fused policy-loss kernel, one row at a time (docs/performance.md#the-fused-kernel,
 * docs/derivations/losses.md#policy-loss). For row b it reads each stream once, over the span
 * [first_b, end_b) that holds the row's response tokens, in four stages whose loops stay in cache:
 *
 * 1. ratio: checks lp and old finite, r_t = exp(lp − old) (token) or s_b = exp(Σ_t (lp − old)/L_b)
 *    (sequence, sequence_token; the compensated sum of robustSum);
 * 2. TIS: ρ_t = min(exp(old − rollout), cap) or ρ_b = min(exp(Σ_t (old − rollout)), cap);
 * 3. objective: the surrogate's point function (./points.ts) gives ℓ and its derivative, the kernel
 *    writes objective = ρ·ℓ, the clip flags, and ∂L/∂lp through the ratio's backward pass;
 * 4. KL: k(ref − lp) and ∂L/∂lp += coef·w^kl·∂k/∂lp;
 *
 * checking the gradient finite where it is last written. The reductions (Σ w·objective, Σ w^kl·k) are
 * {@link accumulateRow}'s, called row after row in row-major order: the very order of the unfused
 * maskedDot, so the loss is bitwise what it was, whether the rows ran here or in worker threads.
 *
 * Nothing here throws: a row reports the first event that stops it (a non-finite input or an
 * overflowing objective, with its flat index in `RowScratch.at`) and records the first KL or
 * gradient overflow it saw; policyLoss turns events into the typed errors, in the precedence the
 * unfused code had (docs/conventions.md#numeric-policy).
 */
import { robustSum, twoSumError, twoSumErrorSafe } from "../../core/sum.js";
import {
  clampedKlValue,
  KL_POINT_FNS,
  type KLEstimator,
  k3DLogprob,
  k3Value,
} from "../../kl/estimator.js";
import type { RatioKind, ResolvedISCorrection, ResolvedPolicyLossConfig } from "../config.js";
import {
  CLIPPED_HIGH,
  CLIPPED_LOW,
  cispoClamp,
  cispoLower,
  pgClipNoCapInto,
} from "../surrogates.js";
import type { PolicyOutputs } from "./outputs.js";
import {
  cispoTerm,
  inBand,
  SITE_CISPO,
  SITE_PG_CLIP,
  type SurrogateParams,
  type SurrogatePoint,
  slopeTimes,
} from "./points.js";

/** A mask with its row spans and lengths (the rows IS weights are formed on). @internal */
export interface ISRows {
  readonly m: Uint8Array;
  readonly first: Int32Array;
  readonly end: Int32Array;
  readonly L: Int32Array;
}

/** Everything the kernel reads, validated; `[B, T]` arrays are row-major. @internal */
export interface PolicyPlan {
  readonly B: number;
  readonly T: number;
  readonly m: Uint8Array;
  /** Flat index of the first response token of each row, and one past the last. */
  readonly first: Int32Array;
  readonly end: Int32Array;
  /** Response tokens per row. */
  readonly L: Int32Array;
  readonly lp: Float64Array;
  readonly old: Float64Array;
  /** `[B]` advantages, or null when they are `[B, T]` (`advTok`). */
  readonly advRow: Float64Array | null;
  readonly advTok: Float64Array | null;
  readonly rollout: Float64Array | null;
  readonly ref: Float64Array | null;
  readonly ratio: RatioKind;
  readonly sur: SurrogatePoint;
  /** The surrogate's constants. */
  readonly params: SurrogateParams;
  /** Aggregation weight of each row's tokens. */
  readonly w: Float64Array;
  /** The IS correction, resolved (absent bounds constrain nothing), or null. */
  readonly tis: ResolvedISCorrection | null;
  /**
   * The rows the IS weights are formed on when rejection took tokens out of `m`: the response
   * mask as given, with its spans (docs/derivations/losses.md#rejection-sampling; verl forms the
   * weights before it rejects). Null: `m` itself.
   */
  readonly isRows: ISRows | null;
  readonly kl: KLPlan | null;
  /** The log-ratio clamp (docs/derivations/losses.md#ratio-clamps), or null. */
  readonly rclamp: ResolvedPolicyLossConfig["ratioClamp"];
  /**
   * The off-policy sequence mask (docs/derivations/losses.md#off-policy-sequence-mask): the
   * threshold δ and the sampling logprobs (the old or the rollout stream), or null.
   */
  readonly opsm: { readonly threshold: number; readonly sampling: Float64Array } | null;
  /** VESPO's gamma-weight constants (docs/derivations/losses.md#vespo), or null. */
  readonly vespo: ResolvedPolicyLossConfig["vespo"];
  /** The per-token entropies (top-entropy mask, entropy bonus), or null. */
  readonly ent: Float64Array | null;
  /** The top-entropy mask's threshold (a token is kept iff H ≥ it; −∞: every token). */
  readonly entThreshold: number;
  /** Whether the top-entropy mask applies (docs/derivations/losses.md#top-entropy-mask). */
  readonly entMask: boolean;
}

/** The KL term as the kernel runs it (one shape for every config: one hidden class). @internal */
export interface KLPlan {
  readonly kind: KLEstimator;
  readonly coef: number;
  readonly w: Float64Array;
  /** |δ| clamp and |k| clamp (+∞: none), and the straight-through gradient. */
  readonly clampDelta: number;
  readonly clampValue: number;
  readonly straight: boolean;
  /** The ratio weight of each term: "none", "ratio" (gradient through r) or "ratio_detached". */
  readonly weight: "none" | "ratio" | "ratio_detached";
}

/** The kernel's KL plan of a resolved KL config with its row weights. @internal */
export function klPlan(
  kl: {
    kind: KLEstimator;
    coef: number;
    clampDelta: number;
    clampValue: number;
    straight: boolean;
    weight: KLPlan["weight"];
  },
  w: Float64Array,
): KLPlan {
  return {
    kind: kl.kind,
    coef: kl.coef,
    w,
    clampDelta: kl.clampDelta,
    clampValue: kl.clampValue,
    straight: kl.straight,
    weight: kl.weight,
  };
}

/** Row processed; no event. */
export const ROW_OK = 0;
/** A stream is not finite at a response position of the row (validation names it). */
export const ROW_BAD_INPUT = 1;
/** ℓ is not finite at `at` (the surrogate overflowed). */
export const ROW_OBJECTIVE = 2;
/** ρ·ℓ is not finite at `at` (the TIS weight times a finite ℓ). */
export const ROW_OBJECTIVE_TIS = 3;

/** Per-thread scratch of the kernel, reused row after row. @internal */
export class RowScratch {
  // The float fields start as NaN ("not set yet"), never as a small integer: a field that starts
  // as one and later holds a double changes the object's hidden class (see KEEP_MAPS).
  /** Token TIS weights of the current row. */
  readonly rho: Float64Array;
  /** Where the token-level log-ratio clamp passes the gradient (1) or binds (0), current row. */
  readonly pass: Uint8Array;
  /** Whether the row-level log-ratio clamp passes the gradient (1) or binds (0). */
  rowPass = 1;
  /** The point functions' out slots. */
  readonly pt: Float64Array = new Float64Array(2);
  /** Flat index of the stopping event. */
  at = -1;
  /** The row's mean log-ratio (sequence kinds), for messages. */
  mz: number = Number.NaN;
  /** The row's sequence ratio s_b (1 for the token ratio). */
  sb: number = Number.NaN;
  /** The row's sequence TIS weight ρ_b. */
  rhoRow: number = Number.NaN;
  /** The TIS weight at `at`. */
  p: number = Number.NaN;
  /** ℓ at `at`. */
  ell: number = Number.NaN;
  /** First KL overflow of the row (flat index, or −1), its non-finite value and δ. */
  klAt = -1;
  klValue: number = Number.NaN;
  klDelta: number = Number.NaN;
  /** First non-finite gradient of the row (flat index, or −1). */
  gradAt = -1;

  constructor(T: number) {
    this.rho = new Float64Array(T);
    this.pass = new Uint8Array(T);
  }
}

/** Whether x is finite: x − x is 0 for finite x and NaN for NaN and ±Infinity. */
const finite = (x: number): boolean => x - x === 0;

/**
 * Run the four stages on row b, writing its span of `out` (and, at padding, the masked-position
 * contract when `out` is not fresh: 0, ratio 1, flags 0), and the row's KL terms into
 * `k[kOff + t]`. Returns ROW_OK or the stopping event. Each stage is its own function, called once
 * per row, so that V8 optimises (and inlines into) each loop on its own budget. @internal
 */
export function processRow(
  plan: PolicyPlan,
  out: PolicyOutputs,
  b: number,
  sc: RowScratch,
  k: Float64Array,
  kOff: number,
): number {
  const { T } = plan;
  const o = b * T;
  const f = plan.first[b] as number;
  const e = plan.end[b] as number;
  sc.klAt = -1;
  sc.gradAt = -1;
  out.ratio.fill(1, o, f);
  out.ratio.fill(1, e, o + T);
  if (!out.fresh) {
    const { grad, objective, low, high } = out;
    grad.fill(0, o, f);
    grad.fill(0, e, o + T);
    objective.fill(0, o, f);
    objective.fill(0, e, o + T);
    low.fill(0, o, f);
    low.fill(0, e, o + T);
    high.fill(0, o, f);
    high.fill(0, e, o + T);
  }
  // A row with no response token (config.emptyRows "count" or "drop") has no term: the padding
  // contract above is all it gets (its sequence ratio and mean log-ratio would be 0/0).
  if (plan.L[b] === 0) return ROW_OK;
  if (plan.rclamp === null) {
    if (ratioStage(plan, out.ratio, b, f, e, sc) !== ROW_OK) return ROW_BAD_INPUT;
  } else if (ratioStageClamped(plan, out.ratio, b, f, e, sc) !== ROW_OK) return ROW_BAD_INPUT;
  if (plan.tis !== null && tisStage(plan, b, f, e, sc) !== ROW_OK) return ROW_BAD_INPUT;
  if (plan.vespo !== null) vespoStage(plan, b, f, e, sc);
  if (plan.opsm !== null) opsmStage(plan, b, f, e, sc);
  if (plan.entMask) entropyStage(plan, b, f, e, sc);
  const ev = objectiveStage(plan, out, b, f, e, sc);
  if (ev !== ROW_OK) return ev;
  if (plan.kl !== null && klStage(plan, out.grad, b, f, e, sc, k, kOff - o) !== ROW_OK)
    return ROW_BAD_INPUT;
  return ROW_OK;
}

/**
 * 1. The ratio of row b (and the finiteness of lp and old): token r_t = exp(lp − old); sequence
 * kinds s_b = exp(Σ_t (lp − old) / L_b) with robustSum's compensated sum (its scaled pass on
 * overflow), into `ratio` and `sc.sb`, `sc.mz`.
 */
function ratioStage(
  plan: PolicyPlan,
  ratio: Float64Array,
  b: number,
  f: number,
  e: number,
  sc: RowScratch,
): number {
  const { m, lp, old } = plan;
  if (plan.ratio === "token") {
    const uses = plan.sur.usesRatio;
    for (let i = f; i < e; i++) {
      if (m[i] !== 1) {
        ratio[i] = 1;
        continue;
      }
      const l = lp[i] as number;
      const od = old[i] as number;
      if (!finite(l) || !finite(od)) return ROW_BAD_INPUT;
      ratio[i] = uses ? Math.exp(l - od) : 1;
    }
    sc.sb = 1;
    return ROW_OK;
  }
  // Compensated Σ_t z_t (Neumaier, as CompensatedSum), then robustSum's scaled pass on overflow.
  const plain = rowLogRatioSum(m, lp, old, f, e, ratio);
  if (plain === null) return ROW_BAD_INPUT;
  const Lb = plan.L[b] as number;
  const mz =
    Number.isFinite(plain) || Number.isNaN(plain)
      ? plain / Lb
      : robustSum(
          Lb,
          rowTerm(m, f, e, (i) => (lp[i] as number) - (old[i] as number)),
          Lb,
        );
  sc.mz = mz;
  const sb = Math.exp(mz);
  sc.sb = sb;
  for (let i = f; i < e; i++) if (m[i] === 1) ratio[i] = sb;
  return ROW_OK;
}

/**
 * The compensated Σ_t (lp − old) over the span's response tokens (Neumaier, as CompensatedSum's
 * value), writing the ratio 1 at its padding when `ratio` is given; null when an lp or old there
 * is not finite. (With finite ones the sum may still be ±Infinity or NaN: z = lp − old itself
 * can overflow, to either sign.)
 */
function rowLogRatioSum(
  m: Uint8Array,
  lp: Float64Array,
  old: Float64Array,
  f: number,
  e: number,
  ratio: Float64Array | null,
): number | null {
  let s = 0;
  let c = 0;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) {
      if (ratio !== null) ratio[i] = 1;
      continue;
    }
    const x = (lp[i] as number) - (old[i] as number);
    const t = s + x;
    if (Math.abs(s) >= Math.abs(x)) c += s - t + x;
    else c += x - t + s;
    s = t;
  }
  // s − s === 0 is Number.isFinite(s): code after a long loop is often compiled (on-stack
  // replacement) before it first runs, and a property load there without feedback (Number's
  // isFinite) deoptimised this function again and again (--trace-deopt: 5 times in 18 calls).
  if (s - s === 0) return s + c;
  // A non-finite input makes its z, and from there the sum, non-finite (±Infinity stays, NaN
  // stays), so the inputs are tested only now: tested per token, the row pass took 1.16× as
  // long. Finite inputs whose z or sum passes float64 are not a bad input.
  for (let i = f; i < e; i++)
    if (m[i] === 1 && !(finite(lp[i] as number) && finite(old[i] as number))) return null;
  return s;
}

/**
 * 1′. The ratio stage with a log-ratio clamp (docs/derivations/losses.md#ratio-clamps): each
 * z_t = lp − old clamped (token level; sign-aware: min(z, upper) for A > 0, max(z, lower) for
 * A < 0, 0 for A = 0) before exp or before the row mean, or the row's mean clamped (row level);
 * `sc.pass` and `sc.rowPass` record where the gradient passes (torch's inclusive clamp).
 */
function ratioStageClamped(
  plan: PolicyPlan,
  ratio: Float64Array,
  b: number,
  f: number,
  e: number,
  sc: RowScratch,
): number {
  const { m, lp, old, advRow, advTok } = plan;
  const rc = plan.rclamp as NonNullable<PolicyPlan["rclamp"]>;
  const o = b * plan.T;
  const pass = sc.pass;
  const token = rc.level === "token";
  const { lower, upper, signAware } = rc;
  const aRow = advRow === null ? 0 : (advRow[b] as number);
  // z′_t and its pass flag, into pass[i − o]; the clamped value is returned.
  const clampAt = (i: number, z: number): number => {
    if (!token) {
      pass[i - o] = 1;
      return z;
    }
    if (signAware) {
      const a = advTok === null ? aRow : (advTok[i] as number);
      if (a > 0) {
        pass[i - o] = z <= upper ? 1 : 0;
        return Math.min(z, upper);
      }
      if (a < 0) {
        pass[i - o] = z >= lower ? 1 : 0;
        return Math.max(z, lower);
      }
      // sgn(A) = 0 (or a NaN A, which the objective stage rejects): the term is 0·(…) = 0.
      pass[i - o] = 0;
      return 0;
    }
    const inside = z >= lower && z <= upper;
    pass[i - o] = inside ? 1 : 0;
    return inside ? z : z < lower ? lower : upper;
  };
  if (plan.ratio === "token") {
    const uses = plan.sur.usesRatio;
    for (let i = f; i < e; i++) {
      if (m[i] !== 1) {
        ratio[i] = 1;
        continue;
      }
      const l = lp[i] as number;
      const od = old[i] as number;
      if (!finite(l) || !finite(od)) return ROW_BAD_INPUT;
      const z = clampAt(i, l - od);
      ratio[i] = uses ? Math.exp(z) : 1;
    }
    sc.sb = 1;
    sc.rowPass = 1;
    return ROW_OK;
  }
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) ratio[i] = 1;
    else if (!finite(lp[i] as number) || !finite(old[i] as number)) return ROW_BAD_INPUT;
  }
  // The compensated Σ_t z′_t (the unclamped stage keeps its inline loop: it is the hot one).
  const Lb = plan.L[b] as number;
  const plain = maskedRowSum(m, f, e, (i) => clampAt(i, (lp[i] as number) - (old[i] as number)));
  let mz =
    Number.isFinite(plain) || Number.isNaN(plain)
      ? plain / Lb
      : robustSum(
          Lb,
          rowTerm(m, f, e, (i) => clampAt(i, (lp[i] as number) - (old[i] as number))),
          Lb,
        );
  if (token) sc.rowPass = 1;
  else {
    const inside = mz >= lower && mz <= upper;
    sc.rowPass = inside ? 1 : 0;
    if (!inside) mz = mz < lower ? lower : upper;
  }
  sc.mz = mz;
  const sb = Math.exp(mz);
  sc.sb = sb;
  for (let i = f; i < e; i++) if (m[i] === 1) ratio[i] = sb;
  return ROW_OK;
}

/**
 * 2. IS weights of row b (sg[w]: data, constant w.r.t. θ; docs/derivations/losses.md#importance-sampling-correction),
 * from log ρ = old − rollout: token w_t = constrain(exp(clampL(log ρ_t))) into `sc.rho`; sequence
 * w_b = constrain(exp(clampL(Σ_t log ρ_t))) and geometric w_b = constrain(exp(clampL(Σ_t log ρ_t / L_b)))
 * into `sc.rhoRow`. clampL clamps to [−logClamp, logClamp]; constrain is min(max(ρ, lower), cap)
 * (truncate) or ρ·1[lower ≤ ρ ≤ cap] (mask). With the resolved defaults (lower 0, cap and
 * logClamp +∞) each is bitwise the plain min(exp(log ρ), cap). A row filter sets every weight of
 * a row whose product or geometric-mean weight lies outside its bounds to 0.
 */
function tisStage(plan: PolicyPlan, b: number, f: number, e: number, sc: RowScratch): number {
  const { m, old } = plan;
  const tis = plan.tis as ResolvedISCorrection;
  const roll = plan.rollout as Float64Array;
  const { lower, cap, logClamp, div } = tis;
  const mask = tis.mode === "mask";
  // The row's Σ_t log ρ_t over the rows the weights are formed on (before rejection), read once
  // for whatever needs it (a row level, the row filter).
  const g = plan.isRows ?? plan;
  const gf = g.first[b] as number;
  const ge = g.end[b] as number;
  const rm = tis.rowMask;
  const sum = tis.level !== "token" || rm !== null ? rowLogSum(plan, g.m, gf, ge) : 0;
  if (Number.isNaN(sum)) return ROW_BAD_INPUT;
  // The row filter: the row's product or geometric-mean weight (unclamped) inside its bounds.
  let rowIn = true;
  if (rm !== null) {
    const w = Math.exp(rowLevel(plan, g, b, gf, ge, sum, rm.level));
    rowIn = w >= rm.lower && w <= rm.cap;
  }
  if (tis.level === "token") {
    const rho = sc.rho;
    const o = b * plan.T;
    for (let i = f; i < e; i++) {
      if (m[i] !== 1) continue;
      const ro = roll[i] as number;
      if (!finite(ro)) return ROW_BAD_INPUT;
      const x = Math.min(Math.max((old[i] as number) - ro, -logClamp), logClamp);
      rho[i - o] = rowIn ? isWeight(Math.exp(x), lower, cap, mask) / div : 0;
    }
    return ROW_OK;
  }
  const level = rowLevel(plan, g, b, gf, ge, sum, tis.level);
  const x = Math.min(Math.max(level, -logClamp), logClamp);
  sc.rhoRow = rowIn ? isWeight(Math.exp(x), lower, cap, mask) / div : 0;
  return ROW_OK;
}

/**
 * The compensated Σ_t (old − rollout) over the span's response tokens; NaN when a rollout
 * logprob there is not finite (a sum of finite terms is never NaN).
 */
function rowLogSum(plan: PolicyPlan, m: Uint8Array, f: number, e: number): number {
  const { old } = plan;
  const roll = plan.rollout as Float64Array;
  let s = 0;
  let c = 0;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const ro = roll[i] as number;
    if (!finite(ro)) return Number.NaN;
    const x = (old[i] as number) - ro;
    const t = s + x;
    c += twoSumErrorSafe(s, x, t);
    s = t;
  }
  return Number.isFinite(s) ? s + c : s;
}

/**
 * Row b's log weight at a row level from its Σ_t (old − rollout): the sum itself (`sequence`) or
 * the mean (`geometric`; the mean of a sum past float64 by robustSum's scaled pass, as the
 * sequence ratio's in ratioStage).
 */
function rowLevel(
  plan: PolicyPlan,
  g: ISRows,
  b: number,
  f: number,
  e: number,
  sum: number,
  level: "sequence" | "geometric",
): number {
  if (level === "sequence") return sum;
  const Lb = g.L[b] as number;
  if (Number.isFinite(sum)) return sum / Lb;
  const { m } = g;
  const { old } = plan;
  const roll = plan.rollout as Float64Array;
  return robustSum(
    Lb,
    rowTerm(m, f, e, (i) => (old[i] as number) - (roll[i] as number)),
    Lb,
  );
}

/**
 * The batch mean of the IS weights as tisStage computes them (before any rescaling; `plan.tis.div`
 * must be 1): over the response tokens for the token level, over the rows with a response token
 * for the row levels, compensated in row-major order. NaN when a rollout logprob is not finite
 * (the kernel then stops there and names it). @internal
 */
export function meanISWeight(planned: PolicyPlan): number {
  // Over the rows the weights are formed on (the mask as given when rejection took tokens out).
  const g = planned.isRows;
  const plan = g === null ? planned : { ...planned, m: g.m, first: g.first, end: g.end, L: g.L };
  const sc = new RowScratch(plan.T);
  const token = (plan.tis as ResolvedISCorrection).level === "token";
  let s = 0;
  let c = 0;
  let n = 0;
  const add = (x: number): void => {
    const t = s + x;
    c += twoSumErrorSafe(s, x, t);
    s = t;
    n++;
  };
  for (let b = 0; b < plan.B; b++) {
    if (plan.L[b] === 0) continue;
    const f = plan.first[b] as number;
    const e = plan.end[b] as number;
    if (tisStage(plan, b, f, e, sc) !== ROW_OK) return Number.NaN;
    if (!token) {
      add(sc.rhoRow);
      continue;
    }
    const o = b * plan.T;
    for (let i = f; i < e; i++) if (plan.m[i] === 1) add(sc.rho[i - o] as number);
  }
  return (Number.isFinite(s) ? s + c : s) / n;
}

/**
 * An importance weight ρ ≥ 0 constrained by [lower, cap]: truncate min(max(ρ, lower), cap), mask
 * ρ inside the bounds (inclusive) and 0 outside. ρ = +∞ (exp overflowed) truncates to the cap, or
 * is masked to 0 below a finite cap.
 */
function isWeight(rho: number, lower: number, cap: number, mask: boolean): number {
  if (mask) return rho >= lower && rho <= cap ? rho : 0;
  return Math.min(Math.max(rho, lower), cap);
}

/**
 * 2″. VESPO's gamma weights of row b (as TRL's get_gamma_weights computes them): lw =
 * clamp(Σ_t clamp(lp − old, ±20) [+ Σ_t clamp(log ρ_t, ln 1e-8, 20) with a token IS correction],
 * ln 1e-8, 20), and per token, with (k, λ) chosen by A ≥ 0, φ = exp(λ + k·lw − λ·e^lw) (a
 * non-finite φ is 0), into `sc.rho` as the token weight sg[φ] (the IS weight is not multiplied in).
 */
function vespoStage(plan: PolicyPlan, b: number, f: number, e: number, sc: RowScratch): void {
  const { m, lp, old, advRow, advTok } = plan;
  const v = plan.vespo as NonNullable<PolicyPlan["vespo"]>;
  const o = b * plan.T;
  const rho = sc.rho;
  let sum = maskedRowSum(m, f, e, (i) =>
    Math.min(Math.max((lp[i] as number) - (old[i] as number), -20), 20),
  );
  // With a token IS correction (tisStage wrote its weights into sc.rho), TRL adds the row's sum of
  // clamp(log ρ_t, ln 1e-8, 20): w is then the sequence ratio against the sampler.
  if (plan.tis !== null)
    sum += maskedRowSum(m, f, e, (i) =>
      Math.min(Math.max(Math.log(rho[i - o] as number), LOG_1E_8), 20),
    );
  const lw = Math.min(Math.max(sum, LOG_1E_8), 20);
  const w = Math.exp(lw);
  const aRow = advRow === null ? 0 : (advRow[b] as number);
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const a = advTok === null ? aRow : (advTok[i] as number);
    const pos = a >= 0;
    const k = pos ? v.kPos : v.kNeg;
    const lam = pos ? v.lambdaPos : v.lambdaNeg;
    const phi = Math.exp(lam + k * lw - lam * w);
    rho[i - o] = phi - phi === 0 ? phi : 0;
  }
}

/**
 * The compensated Σ term(i) over the response positions of [f, e), as CompensatedSum.value(); for
 * the row statistics off the hot path (OPSM's drift, VESPO's log weight).
 */
function maskedRowSum(m: Uint8Array, f: number, e: number, term: (i: number) => number): number {
  let s = 0;
  let c = 0;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const x = term(i);
    const t = s + x;
    c += twoSumErrorSafe(s, x, t);
    s = t;
  }
  return Number.isFinite(s) ? s + c : s;
}

/** ln(1e-8), the lower clamp of VESPO's log weight (TRL's math.log(1e-8)). */
const LOG_1E_8 = Math.log(1e-8);

/**
 * Fold a 0/1 token mask into row b's token weights in `sc.rho` (times 0 or 1: exact). When a stage
 * before it left token weights there (`ready`: VESPO's φ, an earlier mask, a token IS weight) they
 * are kept or zeroed; else each token starts from the row IS weight, or 1 without a correction.
 */
function foldTokenMask(
  plan: PolicyPlan,
  b: number,
  f: number,
  e: number,
  sc: RowScratch,
  ready: boolean,
  keep: (i: number) => boolean,
): void {
  const { m, tis } = plan;
  const o = b * plan.T;
  const rho = sc.rho;
  const base = tis === null ? 1 : sc.rhoRow;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const w = ready ? (rho[i - o] as number) : base;
    rho[i - o] = keep(i) ? w : 0;
  }
}

/** Whether a token IS correction or VESPO (which ran before the masks) left token weights. */
function tokenWeightsReady(plan: PolicyPlan): boolean {
  return plan.vespo !== null || (plan.tis !== null && plan.tis.level === "token");
}

/**
 * 2′. The off-policy sequence mask of row b (DeepSeek-V3.2's OPSM as TRL computes it): the row's
 * mean of sampling − lp (lp as data) against δ; a token with A < 0 in a row above δ gets weight 0,
 * every other keeps its weight (foldTokenMask).
 */
function opsmStage(plan: PolicyPlan, b: number, f: number, e: number, sc: RowScratch): void {
  const { m, lp, advRow, advTok } = plan;
  const { threshold, sampling } = plan.opsm as NonNullable<PolicyPlan["opsm"]>;
  const sum = maskedRowSum(m, f, e, (i) => (sampling[i] as number) - (lp[i] as number));
  const low = sum / (plan.L[b] as number) <= threshold;
  const aRow = advRow === null ? 0 : (advRow[b] as number);
  foldTokenMask(
    plan,
    b,
    f,
    e,
    sc,
    tokenWeightsReady(plan),
    (i) => low || (advTok === null ? aRow : (advTok[i] as number)) >= 0,
  );
}

/**
 * 2‴. The top-entropy mask of row b (TRL's `top_entropy_quantile`): a token whose entropy is below
 * the batch threshold gets weight 0, every other keeps its weight (foldTokenMask, after OPSM's).
 */
function entropyStage(plan: PolicyPlan, b: number, f: number, e: number, sc: RowScratch): void {
  const H = plan.ent as Float64Array;
  const thr = plan.entThreshold;
  foldTokenMask(
    plan,
    b,
    f,
    e,
    sc,
    plan.opsm !== null || tokenWeightsReady(plan),
    (i) => (H[i] as number) >= thr,
  );
}

/**
 * 3. Row b's objective, clip flags and ∂L/∂lp through the ratio: the surrogate's point function at
 * each response token, objective = ρ·ℓ, then the ratio's backward pass (token: ∂r·r;
 * sequence_token: ∂r·s_b; sequence: (Σ_τ ∂r_τ)·s_b / L_b for the whole row).
 */
function objectiveStage(
  plan: PolicyPlan,
  out: PolicyOutputs,
  b: number,
  f: number,
  e: number,
  sc: RowScratch,
): number {
  const { m, lp, old, sur, tis, advRow, advTok } = plan;
  const { grad, objective, ratio, low, high, fresh } = out;
  const o = b * plan.T;
  const wb = plan.w[b] as number;
  const aRow = advRow === null ? 0 : (advRow[b] as number);
  const pt = sc.pt;
  const point = sur.point;
  const site = sur.site;
  const params = plan.params;
  const sb = sc.sb;
  const rho = sc.rho;
  const rhoRow = sc.rhoRow;
  const viaRatio = sur.through === "ratio";
  const readsOld = sur.readsOld;
  // The off-policy mask rides on the token weights (opsmStage folds any IS weight into them).
  const weighted = plan.opsm !== null || plan.vespo !== null || plan.entMask;
  const tokenTis = (tis !== null && tis.level === "token") || weighted;
  const hasTis = tis !== null || weighted;
  const kind = plan.ratio;
  const viaToken = viaRatio && kind === "token";
  const viaSeqToken = viaRatio && kind === "sequence_token";
  const viaSequence = viaRatio && kind === "sequence";
  // The log-ratio clamp's gradient masks: per token (token level), per row (row level).
  const rc = plan.rclamp;
  const tokPass = rc !== null && rc.level === "token" ? sc.pass : null;
  const rowPass = rc === null ? 1 : sc.rowPass;
  // The gradient is final here unless the KL term or the sequence ratio's row sum still adds to it.
  const checkGrad = plan.kl === null && !viaSequence;
  let ds = 0;
  let dc = 0;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) {
      if (!fresh) {
        grad[i] = 0;
        objective[i] = 0;
        low[i] = 0;
        high[i] = 0;
      }
      continue;
    }
    let a = aRow;
    if (advTok !== null) {
      a = advTok[i] as number;
      if (!finite(a)) return ROW_BAD_INPUT;
    }
    const r = ratio[i] as number;
    const p = !hasTis ? 1 : tokenTis ? (rho[i - o] as number) : rhoRow;
    // Upstream ∂L/∂ℓ_t = w_t·ρ_t; ℓ = −obj, so ∂L/∂obj = −(w_t·ρ_t).
    const g = -(wb * p);
    const x = lp[i] as number;
    const od = readsOld ? (old[i] as number) : 0;
    // One call site per surrogate (pointSite), so that each site sees one function however many
    // surrogates the process runs, and V8 keeps it inlined (docs/performance.md#one-call-site-per-surrogate).
    let flags: number;
    switch (site) {
      case 0:
        flags = point(r, a, x, g, pt, params, od);
        break;
      case 1:
        flags = point(r, a, x, g, pt, params, od);
        break;
      case 2:
        flags = point(r, a, x, g, pt, params, od);
        break;
      case 3:
        flags = point(r, a, x, g, pt, params, od);
        break;
      default:
        flags = point(r, a, x, g, pt, params, od);
    }
    const ell = pt[0] as number;
    if (!finite(ell)) {
      sc.at = i;
      sc.ell = ell;
      return ROW_OBJECTIVE;
    }
    const ob = hasTis ? ell * p : ell;
    if (!finite(ob)) {
      sc.at = i;
      sc.p = p;
      sc.ell = ell;
      return ROW_OBJECTIVE_TIS;
    }
    objective[i] = ob;
    const d = pt[1] as number;
    if (viaSequence) {
      const t = ds + d;
      if (Math.abs(ds) >= Math.abs(d)) dc += ds - t + d;
      else dc += d - t + ds;
      ds = t;
    } else {
      // d·r, but exactly d when d = ±0: a zero upstream gradient stays 0 at an overflowed r = ∞.
      const gv = viaToken ? (d === 0 ? d : d * r) : viaSeqToken ? (d === 0 ? d : d * sb) : d;
      grad[i] = gv;
      if (checkGrad && !finite(gv) && sc.gradAt < 0) sc.gradAt = i;
    }
    if (fresh) {
      if (flags !== 0) {
        if ((flags & CLIPPED_LOW) !== 0) low[i] = 1;
        if ((flags & CLIPPED_HIGH) !== 0) high[i] = 1;
      }
    } else {
      low[i] = (flags & CLIPPED_LOW) !== 0 ? 1 : 0;
      high[i] = (flags & CLIPPED_HIGH) !== 0 ? 1 : 0;
    }
    // Saturate: an overflowed ratio whose term is finite is reported as the largest float64.
    if (r === Number.POSITIVE_INFINITY) ratio[i] = Number.MAX_VALUE;
  }
  if (rc !== null && (viaToken || viaSeqToken))
    clampGradient(plan, grad, f, e, sc, viaToken, checkGrad);
  if (viaSequence) {
    // The masked mean couples the row: ∂lp_t = (Σ_τ ∂r_τ)·s_b / L_b for every response token.
    const sum = Number.isFinite(ds) ? ds + dc : ds;
    const gb = rowPass === 0 ? 0 : (sum === 0 ? sum : sum * sb) / (plan.L[b] as number);
    if (tokPass === null) {
      for (let i = f; i < e; i++) if (m[i] === 1) grad[i] = gb;
    } else {
      for (let i = f; i < e; i++) if (m[i] === 1) grad[i] = tokPass[i - o] === 0 ? 0 : gb;
    }
    // f is the row's first response token (spans start at one).
    if (plan.kl === null && !finite(gb)) sc.gradAt = f;
  }
  return ROW_OK;
}

/**
 * 3′. A binding log-ratio clamp passes no gradient to the ratio: the token ratio's gradient is 0
 * where its token clamp binds, the sequence-token ratio's where its row clamp binds (exactly +0,
 * as torch's clamp gives). Kept out of the objective loop, which stays the unclamped one; the
 * row's first non-finite gradient is looked for again when one was recorded.
 */
function clampGradient(
  plan: PolicyPlan,
  grad: Float64Array,
  f: number,
  e: number,
  sc: RowScratch,
  viaToken: boolean,
  checkGrad: boolean,
): void {
  const { m } = plan;
  const o = f - (f % plan.T);
  if (viaToken) {
    if ((plan.rclamp as NonNullable<PolicyPlan["rclamp"]>).level !== "token") return;
    const pass = sc.pass;
    for (let i = f; i < e; i++) if (m[i] === 1 && pass[i - o] === 0) grad[i] = 0;
  } else if (sc.rowPass === 0) {
    for (let i = f; i < e; i++) if (m[i] === 1) grad[i] = 0;
  }
  if (checkGrad && sc.gradAt >= 0) {
    sc.gradAt = -1;
    for (let i = f; i < e; i++) {
      if (m[i] === 1 && !finite(grad[i] as number)) {
        sc.gradAt = i;
        break;
      }
    }
  }
}

/**
 * 4. Row b's KL term: k(δ), δ = ref − lp, into `k[base + i]`, and ∂L/∂lp += coef·w^kl_b·∂k/∂lp,
 * recording the first KL and gradient overflows.
 */
function klStage(
  plan: PolicyPlan,
  grad: Float64Array,
  b: number,
  f: number,
  e: number,
  sc: RowScratch,
  k: Float64Array,
  base: number,
): number {
  const { m, lp } = plan;
  const kl = plan.kl as NonNullable<PolicyPlan["kl"]>;
  if (
    kl.straight ||
    kl.weight !== "none" ||
    kl.clampDelta < Number.POSITIVE_INFINITY ||
    kl.clampValue < Number.POSITIVE_INFINITY
  )
    return klStageClamped(plan, grad, b, f, e, sc, k, base);
  const ref = plan.ref as Float64Array;
  const cw = kl.coef * (kl.w[b] as number);
  const point = KL_POINT_FNS[kl.kind];
  const pt = sc.pt;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const rf = ref[i] as number;
    if (!finite(rf)) return ROW_BAD_INPUT;
    const d = rf - (lp[i] as number);
    point(d, pt);
    const v = pt[0] as number;
    const dl = pt[1] as number;
    addKlTerm(grad, sc, k, base, i, d, v, dl, cw);
  }
  return ROW_OK;
}

/**
 * Store KL term i (value v, ∂k/∂lp = dl at δ = d) in `k[base + i]` and add cw·dl to the gradient,
 * recording the row's first KL overflow (a non-finite value or derivative) and first non-finite
 * gradient. Shared by both KL stages; small enough that V8 inlines it into each loop.
 */
function addKlTerm(
  grad: Float64Array,
  sc: RowScratch,
  k: Float64Array,
  base: number,
  i: number,
  d: number,
  v: number,
  dl: number,
  cw: number,
): void {
  if ((!finite(v) || !finite(dl)) && sc.klAt < 0) {
    sc.klAt = i;
    sc.klValue = finite(v) ? dl : v;
    sc.klDelta = d;
  }
  k[base + i] = v;
  const gv = (grad[i] as number) + cw * dl;
  grad[i] = gv;
  if (!finite(gv) && sc.gradAt < 0) sc.gradAt = i;
}

/**
 * 4′. The KL term with the frameworks' clamps and gradient forms (docs/derivations/kl.md#clamps-and-straight-through):
 * δ′ = clamp(δ, ±clampDelta), k = clamp(k(δ′), ±clampValue), and ∂k/∂lp = k′(δ′)·1[|δ| ≤ clampDelta]·1[|k(δ′)| ≤ clampValue]
 * (a clamp passes gradient where its input is inside, inclusive), or −δ (straight-through: the
 * gradient of ½δ², unclamped). A clamped δ keeps k3 finite; the overflow records stay as in
 * {@link klStage} for the unclamped forms.
 */
function klStageClamped(
  plan: PolicyPlan,
  grad: Float64Array,
  b: number,
  f: number,
  e: number,
  sc: RowScratch,
  k: Float64Array,
  base: number,
): number {
  const { m, lp } = plan;
  const kl = plan.kl as KLPlan;
  const ref = plan.ref as Float64Array;
  const cw = kl.coef * (kl.w[b] as number);
  const point = KL_POINT_FNS[kl.kind];
  const pt = sc.pt;
  const cd = kl.clampDelta;
  const cv = kl.clampValue;
  const straight = kl.straight;
  // The ratio weight r: exp(lp − old) per token for the token ratio, s_b for the sequence kinds;
  // ∂r/∂lp_t is r_t itself for the token and sequence_token ratios (token-local), and s_b/L_b on
  // every token of the row for the sequence ratio (added after the loop).
  const weighted = kl.weight !== "none";
  const through = kl.weight === "ratio";
  const tokenRatio = plan.ratio === "token";
  // Through r token-locally (token, sequence_token); the sequence ratio's r couples the row.
  const local = through && plan.ratio !== "sequence";
  const sb = sc.sb;
  const old = plan.old;
  let vs = 0;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const rf = ref[i] as number;
    if (!finite(rf)) return ROW_BAD_INPUT;
    const l = lp[i] as number;
    const d = rf - l;
    const dc = d < -cd ? -cd : d > cd ? cd : d;
    point(dc, pt);
    let v = pt[0] as number;
    let dl = d === dc ? (pt[1] as number) : 0;
    if (v > cv) {
      v = cv;
      dl = 0;
    } else if (v < -cv) {
      v = -cv;
      dl = 0;
    }
    if (straight) dl = -d;
    if (weighted) {
      const r = tokenRatio ? Math.exp(l - (old[i] as number)) : sb;
      dl = local ? dl * r + v * r : dl * r;
      vs += v;
      v *= r;
    }
    addKlTerm(grad, sc, k, base, i, d, v, dl, cw);
  }
  if (weighted && through && plan.ratio === "sequence") {
    // ∂(Σ_t k_t·s_b)/∂lp_τ through s_b = exp(mean_t (lp − old)): (Σ_t k_t)·s_b/L_b on every token.
    const add = (cw * vs * sb) / (plan.L[b] as number);
    for (let i = f; i < e; i++) {
      if (m[i] !== 1) continue;
      const gv = (grad[i] as number) + add;
      grad[i] = gv;
      if (!finite(gv) && sc.gradAt < 0) sc.gradAt = i;
    }
  }
  return ROW_OK;
}

/**
 * One KL term's value as the kernel computes it: k(clamp(δ, ±clampDelta)) clamped to
 * ±clampValue (each clamp +∞ when absent). @internal
 */
export function klValueAt(kl: KLPlan, d: number, pt: Float64Array): number {
  return clampedKlValue(kl.kind, d, kl.clampDelta, kl.clampValue, pt);
}

/** The k-th response term of the span [f, e), for robustSum's scaled pass (rare). */
function rowTerm(
  m: Uint8Array,
  f: number,
  e: number,
  term: (i: number) => number,
): (k: number) => number {
  const at: number[] = [];
  for (let i = f; i < e; i++) if (m[i] === 1) at.push(i);
  return (k) => term(at[k] as number);
}

/** The running compensated sums of the loss and of the KL term. @internal */
export class LossSums {
  /**
   * [s, c] of Σ w·objective, then [s, c] of Σ w^kl·k. A typed array, not four number fields: a
   * field that starts as a small integer and later holds doubles changes the object's hidden class,
   * which optimised code would then see die (see KEEP_MAPS).
   */
  readonly v: Float64Array = new Float64Array(4);

  /** Σ w·objective (the surrogate's aggregate), as CompensatedSum.value(). */
  loss(): number {
    const [s = 0, c = 0] = this.v;
    return Number.isFinite(s) ? s + c : s;
  }

  /** Σ w^kl·k. */
  kl(): number {
    const s = this.v[2] as number;
    return Number.isFinite(s) ? s + (this.v[3] as number) : s;
  }
}

/**
 * Add row b's terms w_b·objective_t (and w^kl_b·k_t) to `acc`, in row-major order: called for
 * b = 0, 1, … this is maskedDot's compensated sum exactly. @internal
 *
 * The correction is {@link twoSumError} (branch-free; bitwise CompensatedSum's Neumaier correction
 * wherever the sum is finite): the compare it replaces was 19 % of a threaded 256×8192 dapo call.
 */
export function accumulateRow(
  plan: PolicyPlan,
  objective: Float64Array,
  b: number,
  acc: LossSums,
  k: Float64Array,
  kOff: number,
): void {
  const { m } = plan;
  const f = plan.first[b] as number;
  const e = plan.end[b] as number;
  const wb = plan.w[b] as number;
  const v = acc.v;
  let s = v[0] as number;
  let c = v[1] as number;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const x = wb * (objective[i] as number);
    const t = s + x;
    c += twoSumError(s, x, t);
    s = t;
  }
  v[0] = s;
  v[1] = c;
  if (plan.kl === null) return;
  const wk = plan.kl.w[b] as number;
  const base = kOff - b * plan.T;
  s = v[2] as number;
  c = v[3] as number;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const x = wk * (k[base + i] as number);
    const t = s + x;
    c += twoSumError(s, x, t);
    s = t;
  }
  v[2] = s;
  v[3] = c;
}

/**
 * Whether {@link fusedLossAndGrad} computes `plan` (docs/performance.md#fields): any ratio and
 * nothing that needs a stage beside the surrogate and a plain KL term (no IS weights, KL clamp or
 * ratio weight, ratio clamp, off-policy or entropy mask, rejection). @internal
 */
export function fusable(plan: PolicyPlan): boolean {
  const kl = plan.kl;
  return (
    plan.tis === null &&
    // A KL term as klStage's plain loop computes it (no straight-through, ratio weight or clamp).
    (kl === null ||
      (plan.ref !== null &&
        !kl.straight &&
        kl.weight === "none" &&
        kl.clampDelta === Number.POSITIVE_INFINITY &&
        kl.clampValue === Number.POSITIVE_INFINITY)) &&
    plan.rclamp === null &&
    plan.opsm === null &&
    plan.vespo === null &&
    !plan.entMask &&
    plan.isRows === null
  );
}

/**
 * The loss sum and the gradient of a {@link fusable} plan, row by row, nothing else written
 * (`fields: ["loss", "gradLogprobs"]`, docs/performance.md#fields): per response token
 * r = exp(lp − old) (ratioStage), the surrogate's point function, ∂L/∂lp = d·r (objectiveStage)
 * and w_b·ℓ added to `acc`'s sum in row-major order (accumulateRow); then, with a KL term, the
 * row's KL pass: k(ref − lp), ∂L/∂lp += coef·w^kl·∂k/∂lp (klStage) and w^kl_b·k into the KL sum.
 * The same operations in the same order, so the same bits, without the ratio, objective, flag
 * and KL arrays in between. `grad` (null: the loss alone) is zero-filled when `fresh`, else its
 * padding is written 0. Returns false at the first thing the whole call must judge (a non-finite
 * input, ℓ or gradient), having stopped. @internal
 *
 * Each pass is a function of its own, called once per row: one loop serving every config
 * (with and without KL, token and logprob gradients) was 1.3–1.4× slower on dapo once grpo and
 * cispo had run in the same process (docs/performance.md#fields).
 */
export function fusedLossAndGrad(
  plan: PolicyPlan,
  grad: Float64Array | null,
  fresh: boolean,
  acc: LossSums,
): boolean {
  const { B, T } = plan;
  const pt = new Float64Array(2);
  const kl = plan.kl;
  const klPoint = kl === null ? null : KL_POINT_FNS[kl.kind];
  // The loss alone: the gradient, which the whole call checks finite (and the KL pass adds to),
  // goes to a row of scratch (at gOff = the row's start), so that the row passes write always.
  const row = grad === null ? new Float64Array(T) : null;
  const v = acc.v;
  // The token rows' kind, once (TOKEN_ROW_*): pg_clip's and cispo's rows read back the ratios
  // that ratioRow writes first.
  const kind = plan.ratio === "token" ? tokenRowKind(plan) : TOKEN_ROW_ANY;
  if (B > 0 && plan.ratio === "token")
    for (let k = 0; k < PRIME_PASSES; k++)
      primeTokenRows(plan, kind, grad ?? (row as Float64Array), pt, v);
  for (let b = 0; b < B; b++) {
    const o = b * T;
    const f = plan.first[b] as number;
    const e = plan.end[b] as number;
    if (grad !== null && !fresh) {
      grad.fill(0, o, f);
      grad.fill(0, e, o + T);
    }
    if (plan.L[b] === 0) continue;
    const g = (grad ?? row) as Float64Array;
    const gOff = grad === null ? o : 0;
    if (kind !== TOKEN_ROW_ANY && !ratioRow(plan.m, plan.lp, plan.old, f, e, g, gOff)) return false;
    const ok =
      plan.ratio === "token"
        ? fusedTokenRow(plan, kind, g, gOff, fresh, b, f, e, pt, v)
        : fusedSequenceRow(plan, g, gOff, fresh, b, f, e, pt, v);
    if (!ok) return false;
    if (klPoint !== null) {
      const wk = (kl as KLPlan).w[b] as number;
      const cw = (kl as KLPlan).coef * wk;
      const ok =
        (kl as KLPlan).kind === "k3"
          ? k3KlRow(plan, g, gOff, f, e, cw, wk, v)
          : fusedKlRow(plan, klPoint, g, gOff, f, e, cw, wk, pt, v);
      if (!ok) return false;
    }
  }
  return true;
}

/**
 * How many times {@link primeTokenRows} runs per call. V8 records type feedback for a function
 * only once it has a feedback vector, which it allocates after the function has run about 8× its
 * own bytecode (--interrupt-budget-factor-for-feedback-allocation=8 in Node 20); an empty pass
 * runs the code before and after its loop, about a third of it. Measured: 10 passes gave cispo's
 * row its feedback and not pg_clip's (13 deopts left), 40 both; 64 for margin. Once optimised
 * they cost 0.1–0.5 µs per call (a 1×4 batch: 5.2 → 5.3 µs for dapo, 5.4 → 5.9 µs for cispo).
 */
const PRIME_PASSES = 64;

/**
 * Each token-ratio row pass of `plan` over the empty range [0, 0) of row 0: no token is read or
 * written, and `v` gets its own values back. V8 compiles a row pass's long loop on the stack
 * (OSR) during its first rows, and code after the loop that has not run since the function got
 * its feedback vector has no type feedback there: the compiled loop then left its code at the
 * end of every row (a deopt per row, the same code entered again at the next) until the function
 * was compiled anew — cispo after dapo, grpo and gspo in one process: 14 such deopts, and
 * 33.5 ms per call where it takes 27.5 ms. Run {@link PRIME_PASSES} times first, the code after
 * each loop has its feedback when the loop is compiled.
 */
function primeTokenRows(
  plan: PolicyPlan,
  kind: number,
  grad: Float64Array,
  pt: Float64Array,
  v: Float64Array,
): void {
  if (kind !== TOKEN_ROW_ANY) ratioRow(plan.m, plan.lp, plan.old, 0, 0, grad, 0);
  fusedTokenRow(plan, kind, grad, 0, true, 0, 0, 0, pt, v);
  const kl = plan.kl;
  if (kl === null) return;
  if (kl.kind === "k3") k3KlRow(plan, grad, 0, 0, 0, 0, 0, v);
  else fusedKlRow(plan, KL_POINT_FNS[kl.kind], grad, 0, 0, 0, 0, 0, pt, v);
}

/**
 * Row b of {@link fusedLossAndGrad} for the token ratio, its sums in `v` (LossSums' slots): per
 * response token r = exp(lp − old), the surrogate's ℓ and d, w_b·ℓ into the sum and d·r
 * (through the ratio) or d (through the logprob) into `grad` at `i − gOff`. Returns false where
 * the whole call must judge. pg_clip (no dual clip) and cispo with row advantages, the bench's
 * and the registry's common losses, run rows of their own (`kind`, tokenRowKind) after ratioRow,
 * with the point function's arithmetic inline (inBand, cispoClamp, cispoTerm: one definition
 * each in ./points.ts; in the band, ratioTerm without its A = ±0 test, see pgClipTokenRow):
 * through `pt` and the generic loop they took 1.2–1.3× as long (docs/performance.md#fields).
 */
function fusedTokenRow(
  plan: PolicyPlan,
  kind: number,
  grad: Float64Array,
  gOff: number,
  fresh: boolean,
  b: number,
  f: number,
  e: number,
  pt: Float64Array,
  v: Float64Array,
): boolean {
  if (kind === TOKEN_ROW_PG_CLIP) return pgClipTokenRow(plan, grad, gOff, fresh, b, f, e, pt, v);
  if (kind === TOKEN_ROW_CISPO) return cispoTokenRow(plan, grad, gOff, fresh, b, f, e, v);
  return anyTokenRow(plan, grad, gOff, fresh, b, f, e, pt, v);
}

/** A token-ratio row through its surrogate's point function (anyTokenRow). */
const TOKEN_ROW_ANY = 0;
/** pg_clip without a dual clip, row advantages: ratioRow, then pgClipTokenRow. */
const TOKEN_ROW_PG_CLIP = 1;
/** cispo, row advantages: ratioRow, then cispoTokenRow. */
const TOKEN_ROW_CISPO = 2;

/** Which row pass a token-ratio plan's rows run: one rule for the dispatch and for ratioRow. */
function tokenRowKind(plan: PolicyPlan): number {
  if (plan.advTok !== null) return TOKEN_ROW_ANY;
  if (plan.sur.site === SITE_PG_CLIP) return TOKEN_ROW_PG_CLIP;
  if (plan.sur.site === SITE_CISPO) return TOKEN_ROW_CISPO;
  return TOKEN_ROW_ANY;
}

/** {@link fusedTokenRow} for any surrogate, through its point function and `pt`. */
function anyTokenRow(
  plan: PolicyPlan,
  grad: Float64Array,
  gOff: number,
  fresh: boolean,
  b: number,
  f: number,
  e: number,
  pt: Float64Array,
  v: Float64Array,
): boolean {
  const { m, lp, old, advRow, advTok, sur, params } = plan;
  const point = sur.point;
  const site = sur.site;
  const uses = sur.usesRatio;
  const readsOld = sur.readsOld;
  const viaToken = sur.through === "ratio";
  const wb = plan.w[b] as number;
  const g = -wb;
  const aRow = advRow === null ? 0 : (advRow[b] as number);
  let s = v[0] as number;
  let c = v[1] as number;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) {
      if (!fresh) grad[i - gOff] = 0;
      continue;
    }
    const x = lp[i] as number;
    const od = old[i] as number;
    // lp − old is finite only where both are (a difference past float64 stops too: the whole
    // call then judges it, as it judges every stop).
    const z = x - od;
    if (!finite(z)) return false;
    const r = uses ? Math.exp(z) : 1;
    let a = aRow;
    if (advTok !== null) {
      a = advTok[i] as number;
      if (!finite(a)) return false;
    }
    const odp = readsOld ? od : 0;
    switch (site) {
      case 0:
        point(r, a, x, g, pt, params, odp);
        break;
      case 1:
        point(r, a, x, g, pt, params, odp);
        break;
      case 2:
        point(r, a, x, g, pt, params, odp);
        break;
      case 3:
        point(r, a, x, g, pt, params, odp);
        break;
      default:
        point(r, a, x, g, pt, params, odp);
    }
    const ell = pt[0] as number;
    if (!finite(ell)) return false;
    const d = pt[1] as number;
    const gv = viaToken ? (d === 0 ? d : d * r) : d;
    if (!finite(gv)) return false;
    grad[i - gOff] = gv;
    const y = wb * ell;
    const t = s + y;
    c += twoSumError(s, y, t);
    s = t;
  }
  v[0] = s;
  v[1] = c;
  return true;
}

/**
 * {@link fusedTokenRow} for pg_clip without a dual clip (PG_CLIP's point function, row advantage
 * A): strictly inside the band ℓ = −r·A and ∂L/∂r = g·A; outside it, pgClipNoCapInto's term and
 * slope (one comparison where r is strictly outside and r·A, c·A are ordered; through `pt`, with
 * its ties and saturations, elsewhere; the flags, which this pass does not return, are not
 * formed), ∂L/∂r = slopeTimes(g·A, slope), as PG_CLIP's point function computes them, from
 * the row's r that ratioRow wrote into `grad`. One finiteness test for the row (rowTested).
 * GRPO's k3 term runs in a pass of its own after it (k3KlRow): inside this loop, its expm1
 * made dapo's rows, which have no KL term, 1.05–1.1× as long (docs/performance.md#fields).
 */
function pgClipTokenRow(
  plan: PolicyPlan,
  grad: Float64Array,
  gOff: number,
  fresh: boolean,
  b: number,
  f: number,
  e: number,
  pt: Float64Array,
  v: Float64Array,
): boolean {
  const { m, params } = plan;
  const { lo, hi } = params;
  const wb = plan.w[b] as number;
  const a = (plan.advRow as Float64Array)[b] as number;
  // PG_CLIP's ∂L/∂r = g·A with g = −w_b, inside the band.
  const ga = -wb * a;
  // Imported functions read once (see k3KlRow).
  const band = inBand;
  const outside = pgClipNoCapInto;
  const times = slopeTimes;
  const err = twoSumError;
  let s = v[0] as number;
  let c = v[1] as number;
  // Σ ∂ over the row, for the row's one test (rowTested).
  let h = 0;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) {
      if (!fresh) grad[i - gOff] = 0;
      continue;
    }
    const r = grad[i - gOff] as number;
    const ra = r * a;
    let ell: number;
    let gv: number;
    if (band(r, lo, hi)) {
      // ratioTerm(r, a) and g·A·r without their A = ±0 test: strictly inside the band r is
      // finite and ≥ 0, where r·A is ±0 with A's sign, bitwise A (and g·A·r bitwise g·A) —
      // what the test writes for r = +∞, which falls outside. The two tests cost 1.2× here.
      ell = -ra;
      gv = ga * r;
    } else {
      // Strictly outside [lo, hi] (clamp c = lo or hi, pass 0) with r·A and c·A ordered,
      // pgClipNoCapInto is one comparison: r·A < c·A gives ℓ = −r·A and slope 1 (g·A·r, bitwise
      // its g·A-is-±0 test for a finite r, as above), c·A < r·A gives ℓ = −c·A and slope 0
      // (+0). Everything else is unordered and takes pgClipNoCapInto itself: the edges (r = lo
      // or hi makes c·A = r·A, with pass 1), ties (slope ½), A = ±0 (r·A = c·A, or NaN at
      // r = +∞) and NaN. Through it every time: 1.08× as long.
      const ca = (r <= lo ? lo : hi) * a;
      if (ra < ca) {
        ell = -ra;
        gv = ga * r;
      } else if (ca < ra) {
        ell = -ca;
        gv = 0;
      } else {
        outside(r, a, lo, hi, pt);
        ell = -(pt[0] as number);
        const d = times(ga, pt[1] as number);
        gv = d === 0 ? d : d * r;
      }
    }
    grad[i - gOff] = gv;
    h += gv;
    const y = wb * ell;
    const t = s + y;
    c += err(s, y, t);
    s = t;
  }
  v[0] = s;
  v[1] = c;
  return rowTested(s + c, h);
}

/**
 * r = exp(lp − old) at the response tokens of row [f, e), into `r` at i − off (padding left as
 * it is): the first of two passes over a token-ratio row (pgClipTokenRow, cispoTokenRow), the
 * second reading r back from `r` and writing the gradient over it. On its own the exp loop keeps
 * nothing else live and the second loop has no call in it: on dapo and cispo at 256×8192 the two
 * took 0.72–0.84× as long as one pass doing both (docs/performance.md#fields). Returns whether
 * every lp − old of the row is finite (their sum is: a sum of finite ones that passes float64
 * gives false too, and the whole call, which is given every stop, then judges).
 */
function ratioRow(
  m: Uint8Array,
  lp: Float64Array,
  old: Float64Array,
  f: number,
  e: number,
  r: Float64Array,
  off: number,
): boolean {
  let q = 0;
  for (let i = f; i < e; i++)
    if (m[i] === 1) {
      const z = (lp[i] as number) - (old[i] as number);
      q += z;
      r[i - off] = Math.exp(z);
    }
  return finite(q);
}

/**
 * The one test of a row pass after {@link ratioRow}: the loss sums so far, this row's included
 * (`sums`), and the row's Σ ∂ (`grads`; 0 where a bound per row stands for it) are finite. A
 * non-finite ℓ or ∂ leaves its sum non-finite whatever follows (±∞ and NaN absorb finite terms,
 * ∞ − ∞ is NaN, and a zero weight makes NaN of them); finite parts whose sum passes float64 give
 * false too. False: the whole call judges.
 */
const rowTested = (sums: number, grads: number): boolean => finite(sums + grads);

/**
 * {@link fusedTokenRow} for cispo (CISPO's point function, row advantage A): ŵ·A =
 * cispoWeight(r)·A (as cispoClamp with the row's bound) held constant, ℓ = −ŵ·A·lp and
 * ∂L/∂lp = g·ŵ·A.
 */
function cispoTokenRow(
  plan: PolicyPlan,
  grad: Float64Array,
  gOff: number,
  fresh: boolean,
  b: number,
  f: number,
  e: number,
  v: Float64Array,
): boolean {
  const { m, lp, params } = plan;
  const { lo, hi, oneSided } = params;
  const wb = plan.w[b] as number;
  const g = -wb;
  const a = (plan.advRow as Float64Array)[b] as number;
  // Imported functions read once (see k3KlRow).
  const weight = cispoClamp;
  const lower = cispoLower(lo, oneSided);
  const term = cispoTerm;
  const err = twoSumError;
  // Every ∂ = g·(ŵ·A) of the row is finite where g·(M·A) is, M = max(|lo|, |hi|): r ≥ 0 after
  // ratioRow, so ŵ is hi, lo, or r between them (min(r, hi) one-sided), |ŵ| ≤ M, and rounding is
  // monotonic. Where it is not (|A|·w_b near 1e308, or A not finite) the whole call judges. The
  // row then needs no Σ ∂ for its test: a sum per token made it 1.03× as long.
  if (!finite(g * (Math.max(Math.abs(lo), Math.abs(hi)) * a))) return false;
  let s = v[0] as number;
  let c = v[1] as number;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) {
      if (!fresh) grad[i - gOff] = 0;
      continue;
    }
    const x = lp[i] as number;
    const r = grad[i - gOff] as number;
    const coefA = weight(r, lower, hi) * a;
    const ell = term(coefA, x);
    const gv = g * coefA;
    grad[i - gOff] = gv;
    const y = wb * ell;
    const t = s + y;
    c += err(s, y, t);
    s = t;
  }
  v[0] = s;
  v[1] = c;
  return rowTested(s + c, 0);
}

/**
 * The plain KL term over row [f, e) of {@link fusedLossAndGrad} (klStage's loop, after the row's
 * surrogate pass): per response token k and ∂k/∂lp at δ = ref − lp, w^kl_b·k added to the KL sum
 * in `v[2]`, `v[3]` (accumulateRow's, in row-major order), and coef·w^kl_b·∂k/∂lp (`cw`) added to
 * the token's gradient. Returns false where ref, k, ∂k/∂lp or the gradient is not finite.
 */
function fusedKlRow(
  plan: PolicyPlan,
  klPoint: (d: number, out: Float64Array) => void,
  grad: Float64Array,
  gOff: number,
  f: number,
  e: number,
  cw: number,
  wk: number,
  pt: Float64Array,
  v: Float64Array,
): boolean {
  const { m, lp } = plan;
  const ref = plan.ref as Float64Array;
  let ks = v[2] as number;
  let kc = v[3] as number;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const rf = ref[i] as number;
    if (!finite(rf)) return false;
    klPoint(rf - (lp[i] as number), pt);
    const kv = pt[0] as number;
    const dl = pt[1] as number;
    if (!finite(kv) || !finite(dl)) return false;
    const gv = (grad[i - gOff] as number) + cw * dl;
    if (!finite(gv)) return false;
    grad[i - gOff] = gv;
    const ky = wk * kv;
    const kt = ks + ky;
    kc += twoSumError(ks, ky, kt);
    ks = kt;
  }
  v[2] = ks;
  v[3] = kc;
  return true;
}

/**
 * {@link fusedKlRow} for k3 (GRPO's estimator), KL_POINT_FNS.k3's arithmetic inline: e =
 * expm1(δ), k = k3Value(δ, e), ∂k/∂lp = k3DLogprob(e). One test stands for ref's, k's and ∂k/∂lp's:
 * lp is finite here (the surrogate pass checked lp − old), so a non-finite ref or δ, and an
 * overflowing e^δ, all make k non-finite.
 */
function k3KlRow(
  plan: PolicyPlan,
  grad: Float64Array,
  gOff: number,
  f: number,
  e: number,
  cw: number,
  wk: number,
  v: Float64Array,
): boolean {
  const { m, lp } = plan;
  const ref = plan.ref as Float64Array;
  // Imported functions read once: a call through the import reloads and hole-checks its binding
  // at every token (measured: about 3 % of a 256×8192 row pass).
  const value = k3Value;
  const slope = k3DLogprob;
  const err = twoSumError;
  let ks = v[2] as number;
  let kc = v[3] as number;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const d = (ref[i] as number) - (lp[i] as number);
    const ex = Math.expm1(d);
    const kv = value(d, ex);
    if (!finite(kv)) return false;
    const gv = (grad[i - gOff] as number) + cw * slope(ex);
    if (!finite(gv)) return false;
    grad[i - gOff] = gv;
    const ky = wk * kv;
    const kt = ks + ky;
    kc += err(ks, ky, kt);
    ks = kt;
  }
  v[2] = ks;
  v[3] = kc;
  return true;
}

/**
 * Row b of {@link fusedLossAndGrad} for the sequence ratios, its sums in `v` (LossSums' slots):
 * ratioStage's compensated Σ_t (lp − old) and s_b = exp(mean) (a sum past float64, which
 * robustSum's scaled pass would take, stops), then per response token the surrogate at r = s_b
 * and w_b·ℓ into the sum (objectiveStage, accumulateRow), and the gradient: token-local d·s_b
 * (sequence_token) or d (a surrogate through the logprob), or, for GSPO's sequence ratio through
 * the ratio, the row's (Σ_t d)·s_b / L_b at every response token once the row is summed.
 * `grad` at `gOff + i` (see {@link fusedLossAndGrad}). Returns false where the whole call must
 * judge.
 */
function fusedSequenceRow(
  plan: PolicyPlan,
  grad: Float64Array,
  gOff: number,
  fresh: boolean,
  b: number,
  f: number,
  e: number,
  pt: Float64Array,
  v: Float64Array,
): boolean {
  const { m, lp, old, advRow, advTok, sur, params } = plan;
  const wb = plan.w[b] as number;
  const g = -wb;
  const aRow = advRow === null ? 0 : (advRow[b] as number);
  const viaRatio = sur.through === "ratio";
  const coupled = viaRatio && plan.ratio === "sequence";
  // ratioStage's compensated Σ_t z_t (a sum past float64 needs robustSum's pass: the whole call).
  const plain = rowLogRatioSum(m, lp, old, f, e, null);
  if (plain === null || !finite(plain)) return false;
  const Lb = plan.L[b] as number;
  const sb = Math.exp(plain / Lb);
  if (advTok === null && !sur.readsLogprob && !sur.readsOld)
    return constantSequenceRow(plan, grad, gOff, fresh, b, f, e, sb, pt, v);
  let s = v[0] as number;
  let c = v[1] as number;
  let ds = 0;
  let dc = 0;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) {
      if (!fresh) grad[i - gOff] = 0;
      continue;
    }
    const x = lp[i] as number;
    let a = aRow;
    if (advTok !== null) {
      a = advTok[i] as number;
      if (!finite(a)) return false;
    }
    sur.point(sb, a, x, g, pt, params, sur.readsOld ? (old[i] as number) : 0);
    const ell = pt[0] as number;
    if (!finite(ell)) return false;
    const d = pt[1] as number;
    if (coupled) {
      const t = ds + d;
      if (Math.abs(ds) >= Math.abs(d)) dc += ds - t + d;
      else dc += d - t + ds;
      ds = t;
    } else {
      const gv = viaRatio ? (d === 0 ? d : d * sb) : d;
      if (!finite(gv)) return false;
      grad[i - gOff] = gv;
    }
    const y = wb * ell;
    const t = s + y;
    c += twoSumError(s, y, t);
    s = t;
  }
  if (coupled) {
    // The masked mean couples the row: ∂lp_t = (Σ_τ ∂r_τ)·s_b / L_b for every response token.
    const sum = ds - ds === 0 ? ds + dc : ds; // Number.isFinite(ds) (see rowLogRatioSum)
    const gb = (sum === 0 ? sum : sum * sb) / Lb;
    if (!finite(gb)) return false;
    for (let i = f; i < e; i++) if (m[i] === 1) grad[i - gOff] = gb;
  }
  v[0] = s;
  v[1] = c;
  return true;
}

/**
 * The rest of {@link fusedSequenceRow} for a surrogate that reads neither lp nor old, with row
 * advantages (GSPO): ℓ and d are the same at every response token of the row (the point function
 * at r = s_b), so they are formed once; per token w_b·ℓ still goes into the loss sum and d into
 * the row's Σ_t d (the compensated sums of every token, in order: the same bits), and the
 * gradient is written once the row is summed (coupled: one value per row, token-local: d·s_b or
 * d, also one value).
 */
function constantSequenceRow(
  plan: PolicyPlan,
  grad: Float64Array,
  gOff: number,
  fresh: boolean,
  b: number,
  f: number,
  e: number,
  sb: number,
  pt: Float64Array,
  v: Float64Array,
): boolean {
  const { m, sur } = plan;
  const wb = plan.w[b] as number;
  const viaRatio = sur.through === "ratio";
  const coupled = viaRatio && plan.ratio === "sequence";
  sur.point(sb, (plan.advRow as Float64Array)[b] as number, 0, -wb, pt, plan.params, 0);
  const ell = pt[0] as number;
  if (!finite(ell)) return false;
  const d = pt[1] as number;
  const gv = viaRatio ? (d === 0 ? d : d * sb) : d;
  if (!coupled && !finite(gv)) return false;
  const y = wb * ell;
  // Imported functions read once (see k3KlRow).
  const err = twoSumError;
  let s = v[0] as number;
  let c = v[1] as number;
  // Σ_t d is formed for the token-local gradient too (unused there): choosing per token, and
  // writing in the same loop, made GSPO's row 1.08× as long.
  let ds = 0;
  let dc = 0;
  for (let i = f; i < e; i++) {
    if (m[i] !== 1) continue;
    const t = s + y;
    c += err(s, y, t);
    s = t;
    const u = ds + d;
    if (Math.abs(ds) >= Math.abs(d)) dc += ds - u + d;
    else dc += d - u + ds;
    ds = u;
  }
  v[0] = s;
  v[1] = c;
  let gb = gv;
  if (coupled) {
    // The masked mean couples the row: ∂lp_t = (Σ_τ ∂r_τ)·s_b / L_b for every response token.
    const sum = ds - ds === 0 ? ds + dc : ds; // Number.isFinite(ds) (see rowLogRatioSum)
    gb = (sum === 0 ? sum : sum * sb) / (plan.L[b] as number);
    if (!finite(gb)) return false;
  }
  for (let i = f; i < e; i++)
    if (m[i] === 1) grad[i - gOff] = gb;
    else if (!fresh) grad[i - gOff] = 0;
  return true;
}

/**
 * One instance of each kernel class kept for the life of the module. A class instance's final
 * hidden class is reached by transitions, which V8 holds weakly: when every instance dies (the
 * scratch of a finished call), a GC may collect it, and optimised code that checks it is thrown
 * away ("weak objects") and rebuilt on the next call. Measured: after a full GC every call
 * re-optimised ratioStage, objectiveStage and accumulateRow, about 40 ms at 256×8192.
 */
export const KEEP_MAPS: readonly object[] = Object.freeze([new RowScratch(0), new LossSums()]);
