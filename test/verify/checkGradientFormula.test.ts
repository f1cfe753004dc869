/** Enforces docs/derivations/verify.md#checkgradientformula: a wrong derivation fails, a right one passes. */
import { describe, expect, test } from "vitest";
import { ConfigError, type Matrix, policyLoss, VerificationError } from "../../src/index.js";
import { checkGradientFormula } from "../../src/verify/checkGradientFormula.js";

// One ragged batch, PG surrogate, token ratio, token_mean (w = 1/N with N = 4).
const old = [
  [-0.5, -0.7, -0.9],
  [-0.6, 123, 123],
];
const A = [
  [1.5, -0.8, 0.3],
  [2, 123, 123],
];
const mask = [
  [true, true, true],
  [true, false, false],
];
const lp0 = [
  [-0.2, -1.0, -0.7],
  [-0.5, 123, 123],
];
const pg = { ratio: "token", surrogate: "pg", clip: null, aggregation: "token_mean" } as const;
const loss = (x: Matrix): number =>
  policyLoss(pg, { logprobs: x, oldLogprobs: old, advantages: A, responseMask: mask }).loss;
const at = (x: Matrix, b: number, t: number) => x.data[b * x.cols + t]!;

describe("checkGradientFormula", () => {
  test("golden: the pg gradient -w·A·r passes and the wrong derivation -w·A fails", () => {
    // ∂/∂lp of −(1/N)Σ r·A with r = e^{lp − old} is −(1/N)·A·r; dropping r is the classic wrong derivation.
    const right = (x: Matrix) =>
      mask.map((row, b) =>
        row.map((on, t) => (on ? (-A[b]![t]! * Math.exp(at(x, b, t) - old[b]![t]!)) / 4 : 0)),
      );
    const wrong = (_x: Matrix) =>
      mask.map((row, b) => row.map((on, t) => (on ? -A[b]![t]! / 4 : 0)));
    expect(
      checkGradientFormula(loss, right, [lp0], { atol: 1e-8, rtol: 1e-6 }).maxAbsErr,
    ).toBeLessThan(1e-8);
    expect(() => checkGradientFormula(loss, wrong, [lp0], { atol: 1e-8, rtol: 1e-6 })).toThrow(
      VerificationError,
    );
  });

  test("golden: the cube function", () => {
    // f(x) = Σ x³, ∇f = 3x²; the wrong 3x fails at x = 2 (12 vs 6).
    const f = (x: Matrix) => x.data.reduce((s, v) => s + v ** 3, 0);
    const g = (x: Matrix) => ({ rows: x.rows, cols: x.cols, data: x.data.map((v) => 3 * v * v) });
    expect(() =>
      checkGradientFormula(f, g, [[[1, 2, -0.5]]], { atol: 1e-7, rtol: 1e-6 }),
    ).not.toThrow();
    const e = (() => {
      try {
        checkGradientFormula(
          f,
          (x) => ({ rows: x.rows, cols: x.cols, data: x.data.map((v) => 3 * v) }),
          [[[1, 2]]],
          { atol: 1e-7, rtol: 1e-6 },
        );
      } catch (err) {
        return err as VerificationError;
      }
      return null;
    })();
    expect(e?.message).toContain("worst element (0, 1)");
  });

  test("rejects: invalid tolerances, a non-finite output and a misshapen analytic gradient", () => {
    const f = (x: Matrix) => x.data[0]!;
    const g = (x: Matrix) => ({
      rows: x.rows,
      cols: x.cols,
      data: new Float64Array(x.data.length),
    });
    expect(() => checkGradientFormula(f, g, [[[1]]], { atol: -1, rtol: 0 })).toThrow(ConfigError);
    expect(() => checkGradientFormula(f, g, [[[1]]], { atol: 0, rtol: 0, eps: 0 })).toThrow(
      ConfigError,
    );
    expect(() => checkGradientFormula(() => Number.NaN, g, [[[1]]], { atol: 0, rtol: 0 })).toThrow(
      ConfigError,
    );
    expect(() => checkGradientFormula(f, () => [[1, 2]], [[[1]]], { atol: 0, rtol: 0 })).toThrow(
      ConfigError,
    );
  });
});
