import { fmtShape, fmtValue, mustBe } from "../core/message.js";
import type { Matrix, MatrixLike } from "../core/tensor.js";
import { checkEps, checkPositive, toMatrix } from "../core/validate.js";
import { ConfigError, fail, VerificationError } from "../errors.js";
import { formatFailure } from "./failure.js";

/** Tolerances of {@link checkGradientFormula}: pass iff |analytic − numeric| ≤ atol + rtol·|numeric| element-wise. */
export interface FormulaTolerances {
  readonly atol: number;
  readonly rtol: number;
  /** Central-difference step (default 1e-6). */
  readonly eps?: number;
}

/** Result of a passing {@link checkGradientFormula}. */
export interface FormulaReport {
  readonly maxAbsErr: number;
  readonly coordinates: number;
}

/**
 * Check a hand-derived gradient *formula* against central finite differences of the function it
 * claims to differentiate, so that a wrong derivation (a dropped factor, a sign) fails, not only
 * wrong code.
 *
 * Formula: numeric_i = (fn(x + ε·e_i, …rest) − fn(x − ε·e_i, …rest)) / (2ε) for every element i
 * of x = inputs[0]; pass iff |analytic_i − numeric_i| ≤ atol + rtol·|numeric_i| for all i.
 * Gradient / stop-gradient: differentiates w.r.t. inputs[0] only; the other inputs are constants.
 *
 * @param fn - The scalar function; called as fn(x, ...rest).
 * @param analytic - The claimed gradient w.r.t. x, same shape as x; called as analytic(x, ...rest).
 * @param inputs - `[x, ...rest]` with x a `[B, T]` matrix (or nested rows).
 * @param tolerances - `atol`, `rtol` (finite, ≥ 0) and `eps` (finite, > 0).
 * @returns The largest absolute disagreement.
 * @throws {VerificationError} E_VERIFY naming the worst element when the formula disagrees.
 * @throws {ConfigError} E_CONFIG for invalid tolerances, a non-finite or non-scalar fn output, or an analytic result of the wrong shape.
 * @derivation docs/derivations/verify.md#checkgradientformula
 * @enforcedBy test/verify/checkGradientFormula.test.ts > checkGradientFormula > golden: the pg gradient -w·A·r passes and the wrong derivation -w·A fails
 * @since 0.1.0
 */
export function checkGradientFormula<R extends readonly unknown[]>(
  fn: (x: Matrix, ...rest: R) => number,
  analytic: (x: Matrix, ...rest: R) => MatrixLike,
  inputs: readonly [MatrixLike, ...R],
  tolerances: FormulaTolerances,
): FormulaReport {
  const name = "checkGradientFormula";
  if (!Array.isArray(inputs) || inputs.length === 0) {
    throw fail(ConfigError, name, "inputs", "a non-empty list [x, ...rest]", fmtValue(inputs));
  }
  const { atol, rtol } = tolerances;
  const eps = tolerances.eps ?? 1e-6;
  for (const [arg, v, strict] of [
    ["tolerances.atol", atol, false],
    ["tolerances.rtol", rtol, false],
    ["tolerances.eps", eps, true],
  ] as const) {
    if (strict) checkPositive(name, arg, v);
    else checkEps(name, arg, v);
  }
  const [x0, ...rest] = inputs as unknown as [MatrixLike, ...R];
  const x = toMatrix(name, "inputs[0]", x0);
  const call = (data: Float64Array, where: string): number => {
    const y = fn({ rows: x.rows, cols: x.cols, data }, ...(rest as unknown as R));
    if (typeof y !== "number" || !Number.isFinite(y)) {
      throw fail(
        ConfigError,
        name,
        "fn",
        "a function returning a finite number",
        `${fmtValue(y)} at ${where}`,
      );
    }
    return y;
  };
  const aRaw = analytic(x, ...(rest as unknown as R));
  const a = toMatrix(name, "analytic(...inputs)", aRaw);
  if (a.rows !== x.rows || a.cols !== x.cols) {
    throw new ConfigError(
      name,
      "analytic",
      mustBe(
        name,
        "analytic(...inputs)",
        `of inputs[0]'s shape ${fmtShape([x.rows, x.cols])}`,
        `shape ${fmtShape([a.rows, a.cols])}`,
      ),
    );
  }
  let worst = { i: -1, err: -1, ratio: -1, an: 0, nu: 0 };
  for (let i = 0; i < x.data.length; i++) {
    const up = x.data.slice();
    const dn = x.data.slice();
    up[i] = (up[i] as number) + eps;
    dn[i] = (dn[i] as number) - eps;
    const nu = (call(up, `x + eps*e_${i}`) - call(dn, `x - eps*e_${i}`)) / (2 * eps);
    const an = a.data[i] as number;
    const err = Number.isFinite(an) ? Math.abs(an - nu) : Number.POSITIVE_INFINITY;
    const ratio = err / (atol + rtol * Math.abs(nu));
    if (ratio > worst.ratio) worst = { i, err, ratio, an, nu };
  }
  if (worst.ratio > 1) {
    const b = Math.floor(worst.i / x.cols);
    throw new VerificationError(
      name,
      formatFailure({
        headline: `${name}: analytic gradient disagrees with central finite differences`,
        lines: [
          `worst element (${b}, ${worst.i - b * x.cols}) (flat index ${worst.i}): analytic ${worst.an}, numeric ${worst.nu}`,
          `|analytic - numeric| = ${worst.err.toExponential(3)} > atol ${atol} + rtol ${rtol} * |numeric| (eps = ${eps})`,
        ],
        hints: [
          "a disagreement far above the tolerance means the formula is wrong (a dropped factor or sign), not rounding",
          "if fn has kinks (clip edges, |x| at 0), move x away from them or shrink eps",
        ],
      }),
      undefined,
      worst,
    );
  }
  return { maxAbsErr: Math.max(worst.err, 0), coordinates: x.data.length };
}
