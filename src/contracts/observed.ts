/**
 * A reduction checked on a user's run (docs/contracts.md#checking-a-reduction-on-a-run): the
 * parent gradient and the zero-coefficient (γ = 0) child gradient dumped by a real training run,
 * optionally with both losses, compared (a) by the adapter authors' rule — the loss bit-exactly,
 * the gradient within GAMMA_ZERO_GRADIENT_REL_TOL relative with GAMMA_ZERO_GRADIENT_ABS_FLOOR
 * absolute — and (b) by our tolerance calibrated for the training precision. Both verdicts are
 * reported; one of them (the authors', unless asked otherwise) decides.
 */
import { fmtValue } from "../core/message.js";
import { l2Norm } from "../core/sum.js";
import { requireObject, toMask, toMatrix } from "../core/validate.js";
import { ConfigError, fail, MaskError, NonFiniteError, ShapeError } from "../errors.js";
import type { PolicyLossInputs } from "../losses/policyLoss.js";
import type { ReductionContract } from "./contract.js";
import {
  calibrateTolerance,
  checkPrecision,
  type Precision,
  type ToleranceCalibration,
  UNIT_ROUNDOFF,
} from "./precision.js";
import { getReduction } from "./reductions.js";

/**
 * The PAPO-G adapter authors' relative gradient tolerance of the γ = 0 reduction, "calibrated for
 * bf16 (2.4 % relative roundoff observed on a trained policy; a real leak is ~100 % relative)".
 *
 * @derivation docs/contracts.md#the-authors-rule-and-our-reading-of-it
 * @enforcedBy test/contracts/observed.test.ts > checkObservedReduction > golden: the authors' constants and the norm reading on a hand-computed dump
 * @since 0.1.0
 */
export const GAMMA_ZERO_GRADIENT_REL_TOL = 5e-2;

/**
 * The PAPO-G adapter authors' absolute gradient floor of the γ = 0 reduction.
 *
 * @derivation docs/contracts.md#the-authors-rule-and-our-reading-of-it
 * @enforcedBy test/contracts/observed.test.ts > checkObservedReduction > golden: the authors' constants and the norm reading on a hand-computed dump
 * @since 0.1.0
 */
export const GAMMA_ZERO_GRADIENT_ABS_FLOOR = 1e-6;

/** A parent / child pair dumped by a run, in memory (the CLI reads it from a tensor file). */
export interface ObservedReduction {
  /** The shape of both gradients, outermost first (positions are reported in it). */
  readonly shape: readonly number[];
  /** The parent's gradient, row-major, length = product of `shape`. */
  readonly parentGrad: ArrayLike<number>;
  /** The child's gradient at the zero coefficient (γ = 0), same layout. */
  readonly childGrad: ArrayLike<number>;
  /** The parent's loss, or null when not dumped (then also `childLoss`). */
  readonly parentLoss?: number | null;
  /** The child's loss `policy_loss − 0.0·perception_term`, or null when not dumped. */
  readonly childLoss?: number | null;
  /** 0/1 per position (1 compared, 0 padding never read), or null to compare every position. */
  readonly responseMask?: ArrayLike<number> | null;
  /**
   * The batch the gradients were computed on (policy-loss inputs, gradients of its `logprobs`),
   * or null: with it our tolerance is calibrated on it; without it only the calibration's floors
   * (rtol 2u, atol u·G) are known.
   */
  readonly batch?: PolicyLossInputs | null;
}

/** Options of {@link checkObservedReduction}. */
export interface ObservedReductionOptions {
  /** The run's training precision (default `"bf16"`, the precision the authors calibrated for). */
  readonly precision?: Precision;
  /** Which verdict decides: the authors' rule (default) or our calibrated tolerance. */
  readonly decide?: "authors" | "calibrated";
  /** Seed of the calibration plans (default 0). */
  readonly seed?: number;
  /** Calibration pairs (default 8). */
  readonly pairs?: number;
}

/** The loss rule, shared by both tolerance sets (the contract's bitwise loss). */
export interface ObservedLoss {
  /** Whether both losses were dumped; when false the rule is not checked and `holds` is null. */
  readonly given: boolean;
  readonly parent: number | null;
  readonly child: number | null;
  /** `"exact"` when the contract requires child = parent in float64 (IEEE ==, so −0 = +0). */
  readonly required: "exact" | "none";
  readonly holds: boolean | null;
}

/** A position with the two values there. */
export interface ObservedPosition {
  /** The index in `shape`, outermost first. */
  readonly position: readonly number[];
  readonly parent: number;
  readonly child: number;
}

/** The authors' gradient rule and the elementwise reading reported beside it. */
export interface AuthorsGradient {
  readonly relTol: number;
  readonly absFloor: number;
  /** ‖g_child − g_parent‖₂ over the compared positions. */
  readonly differenceNorm: number;
  /** ‖g_parent‖₂ over the compared positions. */
  readonly parentNorm: number;
  /** Our reading of their rule: differenceNorm / max(parentNorm, absFloor); holds iff ≤ relTol. */
  readonly relative: number;
  readonly holds: boolean;
  /** The elementwise reading max_i |Δ_i| / max(|p_i|, absFloor) (labelled; never decides). */
  readonly elementwise: {
    readonly relative: number;
    readonly holdsAtRelTol: boolean;
    readonly worst: ObservedPosition | null;
  };
}

/** Our calibrated gradient tolerance. */
export interface CalibratedGradient {
  /** `"batch"`: calibrated on the dumped batch; `"unit_roundoff_floor"`: no batch, floors only. */
  readonly basis: "batch" | "unit_roundoff_floor";
  readonly rtol: number;
  /** max(2·η̂, u·G), G = max |gradient| of both sides over the compared positions. */
  readonly atol: number;
  /** max_i |Δ_i| / (rtol·|p_i| + atol); holds iff ≤ 1. */
  readonly margin: number;
  readonly worst: ObservedPosition | null;
  readonly holds: boolean;
  /** The calibration on the batch, or null without one. */
  readonly calibration: ToleranceCalibration | null;
}

/** The result of {@link checkObservedReduction}. */
export interface ObservedReductionCheck {
  readonly contract: string;
  readonly precision: Precision;
  readonly shape: readonly number[];
  /** Positions compared (response positions under a mask, else all). */
  readonly compared: number;
  readonly loss: ObservedLoss;
  readonly authors: AuthorsGradient & { readonly verdict: "holds" | "violated" };
  readonly calibrated: CalibratedGradient & { readonly verdict: "holds" | "violated" };
  /** Which of the two verdicts is the result. */
  readonly decidedBy: "authors" | "calibrated";
  readonly verdict: "holds" | "violated";
}

/** |c − p| / den without overflow: halves when the difference itself is not representable. */
function relDiff(c: number, p: number, den: number): number {
  const d = Math.abs(c - p);
  let r: number;
  if (Number.isFinite(d)) r = d === 0 ? 0 : den > 0 ? d / den : Number.POSITIVE_INFINITY;
  else r = Math.abs(c / 2 - p / 2) / (den / 2);
  return Number.isFinite(r) ? r : Number.MAX_VALUE;
}

function positionOf(shape: readonly number[], flat: number): number[] {
  const out = new Array<number>(shape.length).fill(0);
  let rest = flat;
  for (let k = shape.length - 1; k >= 0; k--) {
    const n = shape[k] as number;
    out[k] = rest % n;
    rest = Math.floor(rest / n);
  }
  return out;
}

function checkShape(fn: string, o: ObservedReduction): number {
  const s = o.shape;
  if (!Array.isArray(s) || s.some((n) => !Number.isSafeInteger(n) || n < 1)) {
    throw fail(ShapeError, fn, "observed.shape", "a list of positive integers", fmtValue(s));
  }
  const n = s.reduce((a: number, b: number) => a * b, 1);
  for (const [arg, x] of [
    ["observed.parentGrad", o.parentGrad],
    ["observed.childGrad", o.childGrad],
    ["observed.responseMask", o.responseMask ?? null],
  ] as const) {
    if (x === null) continue;
    if (typeof x !== "object" || typeof x.length !== "number" || x.length !== n) {
      const got = typeof x === "object" && x !== null ? `length ${x.length}` : fmtValue(x);
      throw fail(ShapeError, fn, arg, `of length ${n} (shape [${s}])`, got);
    }
  }
  return n;
}

function checkLosses(fn: string, c: ReductionContract, o: ObservedReduction): ObservedLoss {
  const p = o.parentLoss ?? null;
  const k = o.childLoss ?? null;
  const required = c.exact.loss ? "exact" : "none";
  if ((p === null) !== (k === null)) {
    const got = p === null ? "childLoss only" : "parentLoss only";
    throw fail(
      ConfigError,
      fn,
      "observed.parentLoss",
      "given together with observed.childLoss",
      got,
    );
  }
  if (p === null || k === null)
    return { given: false, parent: null, child: null, required, holds: null };
  for (const [arg, v] of [
    ["observed.parentLoss", p],
    ["observed.childLoss", k],
  ] as const) {
    if (typeof v !== "number" || !Number.isFinite(v))
      throw fail(NonFiniteError, fn, arg, "a finite number", fmtValue(v));
  }
  return {
    given: true,
    parent: p,
    child: k,
    required,
    holds: required === "exact" ? k === p : true,
  };
}

/** Indices compared: mask 1, or all; masks must be 0/1; compared values must be finite. */
function comparedIndices(fn: string, o: ObservedReduction, n: number): number[] {
  const m = o.responseMask ?? null;
  const at: number[] = [];
  for (let i = 0; i < n; i++) {
    if (m !== null) {
      const v = m[i];
      if (v !== 0 && v !== 1) {
        throw fail(
          MaskError,
          fn,
          "observed.responseMask",
          "0 or 1 everywhere",
          `${fmtValue(v)} at [${positionOf(o.shape, i)}]`,
        );
      }
      if (v === 0) continue;
    }
    for (const [arg, x] of [
      ["observed.parentGrad", o.parentGrad],
      ["observed.childGrad", o.childGrad],
    ] as const) {
      const v = x[i];
      if (typeof v !== "number" || !Number.isFinite(v)) {
        const where = `${fmtValue(v)} at [${positionOf(o.shape, i)}]`;
        throw fail(NonFiniteError, fn, arg, "finite at every compared position", where);
      }
    }
    at.push(i);
  }
  if (at.length === 0) {
    throw fail(MaskError, fn, "observed.responseMask", "1 at some position", "0 everywhere");
  }
  return at;
}

function worstOf(o: ObservedReduction, i: number): ObservedPosition | null {
  if (i < 0) return null;
  return {
    position: positionOf(o.shape, i),
    parent: o.parentGrad[i] as number,
    child: o.childGrad[i] as number,
  };
}

function authorsGradient(o: ObservedReduction, at: readonly number[]): AuthorsGradient {
  const relTol = GAMMA_ZERO_GRADIENT_REL_TOL;
  const absFloor = GAMMA_ZERO_GRADIENT_ABS_FLOOR;
  // Δ/2 and p/2 keep every term finite; the ratio of the halves is the ratio.
  const half = new Float64Array(at.length);
  const halfP = new Float64Array(at.length);
  let el = 0;
  let worst = -1;
  for (let k = 0; k < at.length; k++) {
    const i = at[k] as number;
    const p = o.parentGrad[i] as number;
    const c = o.childGrad[i] as number;
    half[k] = c / 2 - p / 2;
    halfP[k] = p / 2;
    const r = relDiff(c, p, Math.max(Math.abs(p), absFloor));
    if (r > el) {
      el = r;
      worst = i;
    }
  }
  const dn2 = l2Norm(half);
  const pn2 = l2Norm(halfP);
  const den2 = Math.max(pn2, absFloor / 2);
  let relative = dn2 === 0 ? 0 : dn2 / den2;
  if (!Number.isFinite(relative)) relative = Number.MAX_VALUE;
  const fin = (x: number): number => (Number.isFinite(2 * x) ? 2 * x : Number.MAX_VALUE);
  return {
    relTol,
    absFloor,
    differenceNorm: fin(dn2),
    parentNorm: fin(pn2),
    relative,
    holds: relative <= relTol,
    elementwise: { relative: el, holdsAtRelTol: el <= relTol, worst: worstOf(o, worst) },
  };
}

function calibratedGradient(
  fn: string,
  c: ReductionContract,
  o: ObservedReduction,
  at: readonly number[],
  precision: Precision,
  options: ObservedReductionOptions,
): CalibratedGradient {
  const u = UNIT_ROUNDOFF[precision];
  let cal: ToleranceCalibration | null = null;
  const batch = o.batch ?? null;
  if (batch !== null) {
    if (c.parent.kind !== "policy_loss")
      throw fail(ConfigError, fn, "contract.parent.kind", '"policy_loss"', fmtValue(c.parent.kind));
    cal = calibrateTolerance(c.parent.config, batch, {
      precision,
      seed: options.seed ?? 0,
      pairs: options.pairs ?? 8,
    });
  }
  let G = 0;
  for (const i of at)
    G = Math.max(G, Math.abs(o.parentGrad[i] as number), Math.abs(o.childGrad[i] as number));
  const rtol = cal === null ? 2 * u : cal.rtol;
  const atol = Math.max(cal === null ? 0 : 2 * cal.excessRoundoff, u * G);
  let margin = 0;
  let worst = -1;
  for (const i of at) {
    const p = o.parentGrad[i] as number;
    const r = relDiff(o.childGrad[i] as number, p, rtol * Math.abs(p) + atol);
    if (r > margin) {
      margin = r;
      worst = i;
    }
  }
  return {
    basis: cal === null ? "unit_roundoff_floor" : "batch",
    rtol,
    atol,
    margin,
    worst: worstOf(o, worst),
    holds: margin <= 1,
    calibration: cal,
  };
}

/** The batch's mask as flat 0/1, after checking the gradients are `[B, T]` of its logprobs. */
function batchMask(fn: string, o: ObservedReduction): Uint8Array | null {
  const batch = o.batch ?? null;
  if (batch === null) return null;
  const lp = toMatrix(fn, "batch.logprobs", batch.logprobs);
  if (o.shape.length !== 2 || o.shape[0] !== lp.rows || o.shape[1] !== lp.cols) {
    const rule = `the shape of batch.logprobs [${lp.rows}, ${lp.cols}] (gradients of logprobs)`;
    throw fail(ShapeError, fn, "observed.shape", rule, `[${o.shape}]`);
  }
  return toMask(
    fn,
    batch.responseMask,
    { rows: lp.rows, cols: lp.cols, arg: "batch.logprobs" },
    "batch.responseMask",
  ).data;
}

/**
 * Check a reduction on gradients (and losses) dumped by a real run, by the adapter authors' rule
 * and by our precision-calibrated tolerance, and report both verdicts.
 *
 * Formula: over the compared positions C (mask = 1, or all), Δ = g_child − g_parent.
 * Loss (both sets, when dumped): child_loss = parent_loss in float64 (IEEE ==) where the contract
 * has `exact.loss`. Authors (our reading of their words): ‖Δ‖₂ / max(‖g_parent‖₂, 1e-6) ≤ 5e-2;
 * beside it, labelled, the elementwise reading max_i |Δ_i| / max(|p_i|, 1e-6). Calibrated:
 * max_i |Δ_i| / (rtol·|p_i| + atol) ≤ 1 with rtol, η̂ from calibrateTolerance(parent, batch) and
 * atol = max(2·η̂, u·G), G = max_C max(|p_i|, |c_i|); without a batch rtol = 2u, atol = u·G (the
 * calibration's floors). verdict = the deciding set's (loss rule ∧ gradient rule).
 * Gradient / stop-gradient: none; compares dumped gradients.
 *
 * @param contract - A registered reduction name or contract with relation `equal`.
 * @param observed - Shape, both gradients, optional losses, mask and batch.
 * @param options - `precision` (default bf16), `decide` (default authors), `seed`, `pairs`.
 * @returns Both verdicts, their figures and the deciding verdict (every number finite; a ratio
 *   that is not representable saturates at Number.MAX_VALUE).
 * @throws {ConfigError} E_CONFIG for a `token_sum_norm_rescale` contract, one loss without the
 *   other, a bad `decide`, `seed` or `pairs`, and the errors of the calibration.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown contract or precision.
 * @throws {ShapeError} E_SHAPE when the gradients, mask or batch disagree with `shape`.
 * @throws {MaskError} E_MASK for a mask value other than 0/1 or an all-zero mask.
 * @throws {NonFiniteError} E_NONFINITE for a non-finite loss or gradient at a compared position.
 * @derivation docs/contracts.md#checking-a-reduction-on-a-run
 * @enforcedBy test/contracts/observed.test.ts > checkObservedReduction > golden: the authors' constants and the norm reading on a hand-computed dump
 * @enforcedBy test/contracts/observed.test.ts > checkObservedReduction > golden: a clean bf16 dump holds and a seeded leak is violated at both tolerance sets
 * @enforcedBy test/contracts/observed.test.ts > checkObservedReduction > rejects: a lone loss, a rescale contract, a bad mask and a non-finite compared value
 * @since 0.1.0
 */
export function checkObservedReduction(
  contract: string | ReductionContract,
  observed: ObservedReduction,
  options: ObservedReductionOptions = {},
): ObservedReductionCheck {
  if (typeof contract !== "string")
    requireObject(
      "checkObservedReduction",
      "contract",
      contract,
      "a reduction name or a ReductionContract",
      ["name", "parent", "child", "relation", "requires"],
    );
  requireObject(
    "checkObservedReduction",
    "observed",
    observed,
    "an ObservedReduction (observedFromTensors)",
  );
  requireObject("checkObservedReduction", "options", options, "an options object");
  const fn = "checkObservedReduction";
  const c = typeof contract === "string" ? getReduction(contract) : contract;
  if (c.relation !== "equal")
    throw fail(
      ConfigError,
      fn,
      "contract.relation",
      '"equal" (a rescaled reduction needs its batch)',
      fmtValue(c.relation),
    );
  const precision = checkPrecision(fn, "options.precision", options.precision ?? "bf16");
  const decide = options.decide ?? "authors";
  if (decide !== "authors" && decide !== "calibrated")
    throw fail(ConfigError, fn, "options.decide", '"authors" or "calibrated"', fmtValue(decide));
  const n = checkShape(fn, observed);
  const fromBatch = batchMask(fn, observed);
  const withMask: ObservedReduction =
    (observed.responseMask ?? null) === null && fromBatch !== null
      ? { ...observed, responseMask: fromBatch }
      : observed;
  const loss = checkLosses(fn, c, withMask);
  const at = comparedIndices(fn, withMask, n);
  const lossOk = loss.holds !== false;
  const a = authorsGradient(withMask, at);
  const k = calibratedGradient(fn, c, withMask, at, precision, options);
  const authors = { ...a, verdict: lossOk && a.holds ? "holds" : "violated" } as const;
  const calibrated = { ...k, verdict: lossOk && k.holds ? "holds" : "violated" } as const;
  return {
    contract: c.name,
    precision,
    shape: [...observed.shape],
    compared: at.length,
    loss,
    authors,
    calibrated,
    decidedBy: decide,
    verdict: decide === "authors" ? authors.verdict : calibrated.verdict,
  };
}
