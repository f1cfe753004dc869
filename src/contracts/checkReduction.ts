/**
 * Check one reduction contract on one batch (docs/contracts.md#checking-a-reduction): evaluate
 * parent and child exactly, compare the losses (bitwise where the contract says so) and the
 * gradients against the tolerance calibrated for a training precision.
 */
import { fmtValue } from "../core/message.js";
import { rowLengths } from "../core/tensor.js";
import { requireObject, requireRecord, toMask, toMatrix } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import { roundBatch } from "./_internal/batch.js";
import { applyCondition, checkRequired, evaluateSide, withNormLen } from "./_internal/sides.js";
import type { ContractBatch, ReductionContract } from "./contract.js";
import {
  calibrateTolerance,
  checkPrecision,
  type Precision,
  rounderOf,
  type ToleranceCalibration,
} from "./precision.js";
import { getReduction } from "./reductions.js";

/** Options of {@link checkReduction}. */
export interface CheckReductionOptions {
  /** The training precision whose roundoff the gradient tolerance is calibrated to. */
  readonly precision: Precision;
  /** Seed of the calibration plans (default 0). */
  readonly seed?: number;
  /** Calibration pairs (default 8). */
  readonly pairs?: number;
  /** Impose the contract's batch condition (default true); false rejects a batch that breaks it. */
  readonly impose?: boolean;
  /** Budget for a token_sum_norm side left without one (default: the padded width T). */
  readonly normLen?: number | null;
}

/** The loss comparison of a reduction check. */
export interface LossComparison {
  readonly parent: number;
  readonly child: number;
  /** What the child must equal: the parent's loss, rescaled under `token_sum_norm_rescale`. */
  readonly expected: number;
  /** child − expected. */
  readonly difference: number;
  /** `"exact"`: the difference must be 0; `"tolerance"`: within `tolerance`. */
  readonly required: "exact" | "tolerance";
  /** The calibrated loss tolerance rtol_L·|expected| + atol_L (reported for exact contracts too). */
  readonly tolerance: number;
  /** |difference| / tolerance (0 when both are 0). */
  readonly margin: number;
  readonly holds: boolean;
}

/** The comparison of one gradient stream. */
export interface GradientComparison {
  /** The differentiated stream, by its batch-file name. */
  readonly stream: "logprobs" | "masked_logprobs";
  /** max_i |child_i − expected_i| over every position, padding included. */
  readonly maxAbsDifference: number;
  /** Whether the two gradients are bitwise equal (±0 equal). */
  readonly bitwise: boolean;
  readonly rtol: number;
  readonly atol: number;
  /** max_i |child_i − expected_i| / (rtol·|expected_i| + atol): ≤ 1 holds, > 1 violated. */
  readonly margin: number;
  /** The position of the largest margin, or null when the gradients are equal. */
  readonly worst: {
    readonly row: number;
    readonly col: number;
    readonly expected: number;
    readonly child: number;
  } | null;
  readonly holds: boolean;
}

/** The result of {@link checkReduction}. */
export interface ReductionCheck {
  readonly contract: string;
  readonly precision: Precision;
  /** What was imposed on the batch to meet the contract's condition (empty when nothing). */
  readonly imposed: readonly string[];
  /** The token_sum_norm budget used, or null when no side needs one. */
  readonly normLen: number | null;
  /** The relation's factor: 1 for `equal`, N/(B·normLen) for `token_sum_norm_rescale`. */
  readonly factor: number;
  readonly loss: LossComparison;
  readonly gradients: readonly GradientComparison[];
  readonly calibration: ToleranceCalibration;
  readonly verdict: "holds" | "violated";
}

function ratio(x: number, tol: number): number {
  if (x === 0) return 0;
  return tol > 0 ? x / tol : Number.MAX_VALUE;
}

function compareGradient(
  stream: GradientComparison["stream"],
  expected: Float64Array,
  child: Float64Array,
  rtol: number,
  atol: number,
  cols: number,
): GradientComparison {
  let maxAbs = 0;
  let margin = 0;
  let worst = -1;
  let bitwise = true;
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] as number;
    const c = child[i] as number;
    const d = Math.abs(c - e);
    if (c !== e) bitwise = false;
    if (!(d <= maxAbs)) maxAbs = d;
    const r = Number.isNaN(d) ? Number.MAX_VALUE : ratio(d, rtol * Math.abs(e) + atol);
    if (r > margin) {
      margin = r;
      worst = i;
    }
  }
  return {
    stream,
    maxAbsDifference: Number.isNaN(maxAbs) ? Number.MAX_VALUE : maxAbs,
    bitwise,
    rtol,
    atol,
    margin,
    worst:
      worst < 0
        ? null
        : {
            row: Math.floor(worst / cols),
            col: worst % cols,
            expected: expected[worst] as number,
            child: child[worst] as number,
          },
    holds: margin <= 1,
  };
}

function checkNormLen(fn: string, normLen: unknown): number | null {
  if (normLen === null || normLen === undefined) return null;
  if (typeof normLen !== "number" || !Number.isInteger(normLen) || normLen < 1) {
    throw fail(ConfigError, fn, "options.normLen", "a positive integer or null", fmtValue(normLen));
  }
  return normLen;
}

/**
 * Check that a child configuration reduces to its parent on a batch, in a training precision.
 *
 * Formula: with the batch rounded to the precision and the condition imposed, evaluate parent p
 * and child c exactly (float64 library code); f = 1, or N/(B·normLen) for a rescale relation.
 * Loss: Δ_L = L_c − f·L_p, required exactly 0 when `contract.exact.loss`, else |Δ_L| ≤
 * rtol_L·|f·L_p| + f·atol_L. Gradient of each stream (padding included; a stream the parent lacks
 * has expected gradient 0): margin = max_i |c_i − f·p_i| / (rtol·|f·p_i| + atol) with rtol, η̂ from
 * {@link calibrateTolerance} on the parent and atol = max(2·f·η̂, u·G), G = max |gradient| over both
 * sides; the stream holds iff margin ≤ 1. A rescale relation adds 2·2^−53 to both rtols (the
 * comparison's own two float64 roundings). Verdict: holds iff the loss and every stream hold.
 * Gradient / stop-gradient: none; compares the sides' closed-form gradients.
 *
 * @param contract - A registered name (see {@link REDUCTIONS}) or a contract object.
 * @param batch - The batch: policy-loss inputs plus the streams `contract.requires`.
 * @param options - `precision` (required), `seed`, `pairs`, `impose` (default true), `normLen`.
 * @returns The loss and gradient comparisons, the calibration and the verdict (finite numbers).
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown contract or precision.
 * @throws {ConfigError} E_CONFIG when a required stream is missing, the condition is unmet with
 *   `impose: false`, or an option is invalid; and the errors of the sides' loss functions.
 * @throws {ShapeError} E_SHAPE, {MaskError} E_MASK, {NonFiniteError} E_NONFINITE as the losses.
 * @derivation docs/contracts.md#checking-a-reduction
 * @enforcedBy test/contracts/reductions.test.ts > REDUCTIONS > property: every registered reduction holds on generated batches in every precision
 * @enforcedBy test/contracts/checkReduction.test.ts > checkReduction > golden: imposing a condition is reported and strict mode rejects an unmet one
 * @enforcedBy test/contracts/leaks.test.ts > leaks > property: every seeded leak is caught in fp32, fp16 and bf16
 * @since 0.1.0
 */
export function checkReduction(
  contract: string | ReductionContract,
  batch: ContractBatch,
  options: CheckReductionOptions,
): ReductionCheck {
  if (typeof contract !== "string")
    requireObject(
      "checkReduction",
      "contract",
      contract,
      "a reduction name or a ReductionContract",
      ["name", "parent", "child", "relation", "requires"],
    );
  requireRecord("checkReduction", "batch", batch, "a ContractBatch record");
  requireObject("checkReduction", "options", options, "CheckReductionOptions {precision, …}", [
    "precision",
  ]);
  const fn = "checkReduction";
  const c = typeof contract === "string" ? getReduction(contract) : contract;
  const precision = checkPrecision(fn, "options.precision", options.precision);
  const requested = checkNormLen(fn, options.normLen);
  checkRequired(fn, c.name, c.requires, batch);
  const { batch: conditioned, imposed } = applyCondition(
    fn,
    c.condition,
    batch,
    options.impose ?? true,
  );
  const rounded = roundBatch(fn, conditioned, rounderOf(precision));
  const lp = toMatrix(fn, "logprobs", rounded.logprobs);
  const mask = toMask(fn, rounded.responseMask, { rows: lp.rows, cols: lp.cols, arg: "logprobs" });
  const normLen = requested ?? lp.cols;
  if (c.parent.kind !== "policy_loss") {
    const rule = '"policy_loss" (the tolerance is calibrated on the parent)';
    throw fail(ConfigError, fn, "contract.parent.kind", rule, fmtValue(c.parent.kind));
  }
  const parentConfig = withNormLen(c.parent.config, normLen);
  const parent = evaluateSide(c.parent, rounded, normLen);
  const child = evaluateSide(c.child, rounded, normLen);
  const configs = c.child.kind === "custom" ? [c.parent.config] : [c.parent.config, c.child.config];
  const usesNorm = configs.some((k) => withNormLen(k, 0) !== k);
  const cal = calibrateTolerance(parentConfig, rounded, {
    precision,
    seed: options.seed ?? 0,
    pairs: options.pairs ?? 8,
  });
  let factor = 1;
  if (c.relation === "token_sum_norm_rescale") {
    const L = rowLengths(mask);
    let N = 0;
    for (let b = 0; b < L.length; b++) N += L[b] as number;
    factor = N / (lp.rows * normLen);
  }
  const extra = c.relation === "equal" ? 0 : 2 * 2 ** -53;
  const expectedLoss = factor * parent.loss;
  const difference = child.loss - expectedLoss;
  const lossTol = (cal.loss.rtol + extra) * Math.abs(expectedLoss) + factor * cal.loss.atol;
  const required = c.exact.loss ? "exact" : "tolerance";
  const lossMargin = Number.isNaN(difference)
    ? Number.MAX_VALUE
    : ratio(Math.abs(difference), lossTol);
  const loss: LossComparison = {
    parent: parent.loss,
    child: child.loss,
    expected: expectedLoss,
    difference: Number.isFinite(difference) ? difference : Number.MAX_VALUE,
    required,
    tolerance: lossTol,
    margin: lossMargin,
    holds: required === "exact" ? difference === 0 : lossMargin <= 1,
  };
  const streams: GradientComparison["stream"][] =
    child.maskedLogprobs === null ? ["logprobs"] : ["logprobs", "masked_logprobs"];
  const expectedOf = (s: GradientComparison["stream"]): Float64Array => {
    const p =
      s === "logprobs"
        ? parent.logprobs
        : (parent.maskedLogprobs ?? new Float64Array(parent.logprobs.length));
    return factor === 1 ? p : p.map((x) => factor * x);
  };
  let G = 0;
  const pairs = streams.map((s) => {
    const e = expectedOf(s);
    const k = (s === "logprobs" ? child.logprobs : child.maskedLogprobs) as Float64Array;
    for (let i = 0; i < e.length; i++)
      G = Math.max(G, Math.abs(e[i] as number), Math.abs(k[i] as number));
    return [s, e, k] as const;
  });
  const atol = Math.max(
    2 * factor * cal.excessRoundoff,
    cal.unitRoundoff * (Number.isFinite(G) ? G : 0),
  );
  const gradients = pairs.map(([s, e, k]) =>
    compareGradient(s, e, k, cal.rtol + extra, atol, lp.cols),
  );
  const holds = loss.holds && gradients.every((g) => g.holds);
  return {
    contract: c.name,
    precision,
    imposed: imposed === null ? [] : [imposed],
    normLen: usesNorm ? normLen : null,
    factor,
    loss,
    gradients,
    calibration: cal,
    verdict: holds ? "holds" : "violated",
  };
}
