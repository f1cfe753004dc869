/**
 * Precision-calibrated tolerances (docs/contracts.md#precision-calibrated-tolerances). A gradient
 * comparison between two algebraically equal computations in a training precision differs by
 * that precision's roundoff; this module *measures* the roundoff on the batch at hand — inputs
 * and every operation rounded to bf16, fp16, fp32 or fp64, reductions and product chains
 * evaluated under seeded, algebraically equal plans — and derives the tolerance from it.
 */

import { bf16DecodeTable, encodeBf16, encodeF16, f16DecodeTable } from "../core/halfFloat.js";
import { oneOf } from "../core/names.js";
import { createRng } from "../core/rng.js";
import { requireInteger, requireObject, requireRecord } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { validatePolicyLossConfig } from "../losses/configValidate.js";
import { type PolicyLossInputs, policyLoss } from "../losses/policyLoss.js";
import { Arith, type Round } from "./_internal/arith.js";
import { emulationData, roundBatch } from "./_internal/batch.js";
import { emulatePolicyLoss } from "./_internal/emulatePolicyLoss.js";

/**
 * The training precisions a tolerance can be calibrated for.
 *
 * @derivation docs/contracts.md#precisions
 * @enforcedBy test/contracts/precision.test.ts > roundToPrecision > golden: hand-computed roundings in each precision
 * @since 0.1.0
 */
export const Precision = { BF16: "bf16", FP16: "fp16", FP32: "fp32", FP64: "fp64" } as const;
/** One precision name (docs/contracts.md#precisions). */
export type Precision = (typeof Precision)[keyof typeof Precision];
/** Every precision, coarsest first. */
export const PRECISIONS: readonly Precision[] = Object.values(Precision);

/**
 * Unit roundoff u = 2^−p of each precision (p significand bits, hidden bit included): the largest
 * relative error of one round-to-nearest.
 *
 * @derivation docs/contracts.md#precisions
 * @enforcedBy test/contracts/precision.test.ts > roundToPrecision > property: one rounding moves a value by at most u relative
 * @since 0.1.0
 */
export const UNIT_ROUNDOFF: Readonly<Record<Precision, number>> = Object.freeze({
  bf16: 2 ** -8,
  fp16: 2 ** -11,
  fp32: 2 ** -24,
  fp64: 2 ** -53,
});

/** Smallest positive normal number of each precision (relative error bounds hold above it). */
const MIN_NORMAL: Readonly<Record<Precision, number>> = {
  bf16: 2 ** -126,
  fp16: 2 ** -14,
  fp32: 2 ** -126,
  fp64: 2 ** -1022,
};

const f16 = (x: number): number => f16DecodeTable()[encodeF16(x)] as number;
const bf16 = (x: number): number => bf16DecodeTable()[encodeBf16(x)] as number;
const ROUNDERS: Readonly<Record<Precision, Round>> = {
  bf16,
  fp16: f16,
  fp32: Math.fround,
  fp64: (x) => x,
};

/**
 * Return the rounding function of a validated precision (no argument check).
 *
 * Formula: as {@link roundToPrecision}, without the name check.
 *
 * @param precision - A valid precision name.
 * @returns x ↦ the nearest value of `precision`.
 * @throws Nothing (the name is trusted).
 * @derivation docs/contracts.md#precisions
 * @enforcedBy test/contracts/checkReduction.test.ts > checkReduction > golden: the tolerance comes from the parent's calibration
 * @internal
 * @since 0.1.0
 */
export function rounderOf(precision: Precision): Round {
  return ROUNDERS[precision];
}

/**
 * Validate a precision name.
 *
 * Formula: precision ∈ {bf16, fp16, fp32, fp64}.
 *
 * @param fn - The public function reporting the error.
 * @param arg - The argument's name in the message.
 * @param precision - The value to check.
 * @returns The precision, typed.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for anything else, with suggestions.
 * @derivation docs/contracts.md#precisions
 * @enforcedBy test/contracts/checkReduction.test.ts > checkReduction > rejects: an unknown contract or precision and a bad normLen
 * @internal
 * @since 0.1.0
 */
export function checkPrecision(fn: string, arg: string, precision: unknown): Precision {
  return oneOf(fn, arg, precision, PRECISIONS);
}

/**
 * Round a float64 to the nearest value of a precision (ties to even, one rounding from float64).
 *
 * Formula: fp64 x; fp32 Math.fround(x); fp16 / bf16 decode(encode_RNE(x)) with the core/halfFloat
 * codecs (overflow → ±Inf, underflow → subnormals or ±0, NaN → NaN).
 *
 * @param x - The value.
 * @param precision - `"bf16"`, `"fp16"`, `"fp32"` or `"fp64"`.
 * @returns The nearest value representable in `precision`, as a float64.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown precision.
 * @derivation docs/contracts.md#precisions
 * @enforcedBy test/contracts/precision.test.ts > roundToPrecision > golden: hand-computed roundings in each precision
 * @enforcedBy test/contracts/precision.test.ts > roundToPrecision > property: one rounding moves a value by at most u relative
 * @since 0.1.0
 */
export function roundToPrecision(x: number, precision: Precision): number {
  return ROUNDERS[checkPrecision("roundToPrecision", "precision", precision)](x);
}

/** Options of {@link calibrateTolerance}. */
export interface CalibrationOptions {
  /** The training precision to emulate. */
  readonly precision: Precision;
  /** Seed of the evaluation plans (default 0). */
  readonly seed?: number;
  /** Number of pairs of independently planned evaluations (default 8). */
  readonly pairs?: number;
}

/** The roundoff measured for a scalar (the loss) and the tolerance derived from it. */
export interface ScalarTolerance {
  /** ρ̂: the largest pair difference relative to the magnitude of the summed terms. */
  readonly relativeRoundoff: number;
  /** Σ |terms| of the sum (its magnitude before cancellation). */
  readonly scale: number;
  /** 2·max(ρ̂, u). */
  readonly rtol: number;
  /** max(2·ρ̂·(scale − |value|), u·scale): the cancelled part of the sum. */
  readonly atol: number;
}

/** What {@link calibrateTolerance} measured and the tolerance it derived. */
export interface ToleranceCalibration {
  readonly precision: Precision;
  /** u of the precision. */
  readonly unitRoundoff: number;
  readonly seed: number;
  readonly pairs: number;
  /** ρ̂: max over normal-range elements of (pair difference) / (term magnitude). */
  readonly relativeRoundoff: number;
  /** η̂: max over elements of (pair difference − ρ̂·|g|)⁺ — cancellation and underflow residue. */
  readonly excessRoundoff: number;
  /** G = max |g| of the exact gradient. */
  readonly gradScale: number;
  /** Relative tolerance 2·max(ρ̂, u). */
  readonly rtol: number;
  /** Absolute floor max(2·η̂, u·G). */
  readonly atol: number;
  /** The same measurement for the loss value. */
  readonly loss: ScalarTolerance;
}

function overflow(fn: string, precision: Precision, what: string): ConfigError {
  return fail(
    ConfigError,
    fn,
    "options.precision",
    "a precision whose range holds the batch's computation",
    `${precision} overflowed (${what})`,
  );
}

/**
 * Measure the roundoff of a gradient comparison between algebraically equal computations of a
 * policy loss in a training precision, and derive the tolerance of such a comparison.
 *
 * Formula: each of `pairs` pairs evaluates the loss and gradient twice in the emulated precision
 * under independent seeded plans (summation order and shape, product association, division vs
 * rounded reciprocal, k3 via expm1 vs exp − 1). With E_i the largest pair difference of element i,
 * S_i its term magnitude and g the exact float64 gradient on the rounded inputs:
 * ρ̂ = max_{|g_i| normal} E_i/S_i, η̂ = max_i (E_i − ρ̂·|g_i|)⁺, G = max |g|;
 * rtol = 2·max(ρ̂, u), atol = max(2·η̂, u·G). Every measured difference then satisfies
 * E_i ≤ (rtol·|g_i| + atol)/2.
 * Gradient / stop-gradient: none; the emulated gradient is the closed form of `policyLoss`
 * (same sg[·] factors), not a derivative of the calibration.
 *
 * @param config - The policy-loss configuration whose computation is measured.
 * @param inputs - The batch; every stream is rounded to the precision first.
 * @param options - `precision` (required), `seed` (default 0), `pairs` (default 8).
 * @returns The measured roundoff and the derived gradient and loss tolerances (finite).
 * @throws {ConfigError} E_CONFIG for a bad config, a missing stream, a bad seed or `pairs`, or a
 *   precision whose range the computation overflows (e.g. a ratio above 65504 in fp16).
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown precision or config name.
 * @throws {ShapeError} E_SHAPE, {MaskError} E_MASK, {NonFiniteError} E_NONFINITE as `policyLoss`.
 * @derivation docs/contracts.md#precision-calibrated-tolerances
 * @enforcedBy test/contracts/precision.test.ts > calibrateTolerance > identity: every measured pair difference uses at most half the tolerance
 * @enforcedBy test/contracts/precision.test.ts > calibrateTolerance > property: the relative tolerance tracks the unit roundoff of each precision
 * @enforcedBy test/contracts/precision.test.ts > calibrateTolerance > identity: equal seeds give bitwise-equal calibrations
 * @since 0.1.0
 */
export function calibrateTolerance(
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
  options: CalibrationOptions,
): ToleranceCalibration {
  requireObject("calibrateTolerance", "config", config, "a PolicyLossConfig", [
    "ratio",
    "surrogate",
    "aggregation",
  ]);
  requireRecord("calibrateTolerance", "inputs", inputs, "a PolicyLossInputs record");
  requireObject(
    "calibrateTolerance",
    "options",
    options,
    "CalibrationOptions {precision, seed?, pairs?}",
    ["precision"],
  );
  const fn = "calibrateTolerance";
  const precision = checkPrecision(fn, "options.precision", options.precision);
  const seed = options.seed ?? 0;
  const pairs = options.pairs ?? 8;
  requireInteger(fn, "options.pairs", pairs, 1, 10_000);
  const rng = createRng(seed);
  const R = ROUNDERS[precision];
  const rounded = roundBatch(fn, inputs, R);
  const exact = policyLoss(config, rounded);
  const data = emulationData(fn, validatePolicyLossConfig(fn, config), rounded);
  const g = exact.gradLogprobs.data;
  const n = g.length;
  const E = new Float64Array(n);
  const S = new Float64Array(n);
  const M = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
  let lossE = 0;
  let lossS = 0;
  for (let k = 0; k < pairs; k++) {
    const a = emulatePolicyLoss(data, new Arith(R, createRng(rng.childSeed())));
    const b = emulatePolicyLoss(data, new Arith(R, createRng(rng.childSeed())));
    if (!Number.isFinite(a.loss) || !Number.isFinite(b.loss))
      throw overflow(fn, precision, "non-finite emulated loss");
    lossE = Math.max(lossE, Math.abs(a.loss - b.loss));
    lossS = Math.max(lossS, a.lossScale, b.lossScale);
    for (let i = 0; i < n; i++) {
      if (data.mask[i] !== 1) continue;
      const d = Math.abs((a.grad[i] as number) - (b.grad[i] as number));
      if (!Number.isFinite(d)) {
        throw overflow(
          fn,
          precision,
          `non-finite emulated gradient at (${Math.floor(i / data.cols)}, ${i % data.cols})`,
        );
      }
      if (d > (E[i] as number)) E[i] = d;
      S[i] = Math.max(S[i] as number, a.gradScale[i] as number, b.gradScale[i] as number);
      M[i] = Math.min(M[i] as number, Math.abs(a.grad[i] as number), Math.abs(b.grad[i] as number));
    }
  }
  const u = UNIT_ROUNDOFF[precision];
  const normal = MIN_NORMAL[precision];
  let rho = 0;
  let G = 0;
  for (let i = 0; i < n; i++) {
    if (data.mask[i] !== 1) continue;
    G = Math.max(G, Math.abs(g[i] as number));
    if ((M[i] as number) >= normal) rho = Math.max(rho, (E[i] as number) / (S[i] as number));
  }
  let eta = 0;
  for (let i = 0; i < n; i++) {
    if (data.mask[i] === 1) eta = Math.max(eta, (E[i] as number) - rho * (M[i] as number));
  }
  const lossRho = lossS > 0 ? lossE / lossS : 0;
  const lossR = Math.max(lossRho, u);
  return {
    precision,
    unitRoundoff: u,
    seed,
    pairs,
    relativeRoundoff: rho,
    excessRoundoff: eta,
    gradScale: G,
    rtol: 2 * Math.max(rho, u),
    atol: Math.max(2 * eta, u * G),
    loss: {
      relativeRoundoff: lossRho,
      scale: lossS,
      rtol: 2 * lossR,
      atol: Math.max(2 * lossR * Math.max(0, lossS - Math.abs(exact.loss)), u * lossS),
    },
  };
}
