/**
 * Enforces docs/derivations/advantages.md#whitening: masked whitening with the Bessel-corrected
 * variance and eps inside the square root (polgrad spec §5.6).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type WhitenOptions, whiten } from "../../src/advantages/index.js";
import { toRows } from "../../src/core/tensor.js";
import { ConfigError, MaskError, NonFiniteError, ShapeError } from "../../src/errors.js";
import {
  expectBitwise,
  expectClose,
  expectRejects,
  FC,
  filled,
  JUNK,
  paddedMasks,
  withJunk,
} from "./_arbitraries.js";

const cases = paddedMasks(6, 10)
  .filter((pm) => pm.lengths.reduce((s, L) => s + L, 0) >= 2)
  .chain((pm) => filled(pm, -3, 3).map((x) => ({ pm, x })));

/** Masked mean and Bessel variance with plain sums (the test's own oracle). */
function moments(x: ArrayLike<number>, mask: boolean[][]): { mean: number; variance: number } {
  const vals = mask.flat().flatMap((on, i) => (on ? [x[i] as number] : []));
  const n = vals.length;
  const mean = vals.reduce((s, v) => s + v, 0) / n;
  return { mean, variance: vals.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1) };
}

describe("whiten", () => {
  test("golden: x = [1, 2, 3, 4] gives (x − 2.5)/sqrt(5/3 + 1e-8)", () => {
    // μ = 10/4 = 2.5; centered = [−1.5, −0.5, 0.5, 1.5]; Σd² = 2.25 + 0.25 + 0.25 + 2.25 = 5;
    // Bessel: σ² = 5/3; out = centered · 1/sqrt(5/3 + 1e-8) (eps inside the root).
    const s = 1 / Math.sqrt(5 / 3 + 1e-8);
    const out = whiten([[1, 2, 3, 4]], [[true, true, true, true]]);
    expectBitwise(out.data, [-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s]);
  });

  test("golden: shiftMean false adds the masked mean back and keeps padding at 0", () => {
    // Response values [1, 2 | 3, 4]: μ = 2.5, σ² = 5/3 as above; out = centered·s + 2.5.
    const x = [
      [1, 2, JUNK],
      [3, 4, JUNK],
    ];
    const mask = [
      [true, true, false],
      [true, true, false],
    ];
    const s = 1 / Math.sqrt(5 / 3 + 1e-8);
    expect(toRows(whiten(x, mask, { shiftMean: false }))).toEqual([
      [-1.5 * s + 2.5, -0.5 * s + 2.5, 0],
      [0.5 * s + 2.5, 1.5 * s + 2.5, 0],
    ]);
  });

  test("property: masked mean is 0 and masked variance is σ²/(σ² + eps)", () => {
    const prop = fc.property(cases, fc.constantFrom(1e-8, 0.5), ({ pm, x }, eps) => {
      const flat = x.flat();
      const { variance } = moments(flat, pm.mask);
      const out = moments(whiten(x, pm.mask, { eps }).data, pm.mask);
      expect(Math.abs(out.mean)).toBeLessThanOrEqual(1e-12);
      fc.pre(variance > 1e-6);
      expectClose([out.variance], [variance / (variance + eps)], 1e-10);
      const kept = moments(whiten(x, pm.mask, { eps, shiftMean: false }).data, pm.mask);
      expectClose([kept.mean], [moments(flat, pm.mask).mean], 1e-12, 1e-12);
    });
    fc.assert(prop, FC);
  });

  test("mask invariance: finite junk in the padding never reaches the output (bitwise)", () => {
    const junk = fc.double({ min: -1e300, max: 1e300, noNaN: true });
    const prop = fc.property(cases, junk, fc.boolean(), ({ pm, x }, j, shiftMean) => {
      const base = whiten(x, pm.mask, { shiftMean });
      expectBitwise(whiten(withJunk(x, pm.mask, j), pm.mask, { shiftMean }).data, base.data);
      pm.mask.flat().forEach((on, i) => {
        if (!on) expect(Object.is(base.data[i], 0)).toBe(true);
      });
    });
    fc.assert(prop, FC);
  });

  test("rejects: NaN or Inf anywhere in x, padding included", () => {
    // whiten checks the whole tensor, like polgrad (spec §1.4, pitfall 15).
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const x = [
        [1, 2],
        [3, bad],
      ];
      const mask = [
        [true, true],
        [true, false],
      ];
      expectRejects(() => whiten(x, mask), NonFiniteError, "E_NONFINITE", "x");
    }
  });

  test("rejects: fewer than 2 response tokens", () => {
    expectRejects(() => whiten([[3, JUNK]], [[true, false]]), MaskError, "E_MASK", "responseMask");
  });

  test("rejects: x that is not 2-D", () => {
    const x = [1, 2, 3] as unknown as number[][];
    expectRejects(() => whiten(x, [[true, true, true]]), ShapeError, "E_SHAPE", "x");
  });

  test("rejects: a mask of a different shape", () => {
    expectRejects(() => whiten([[1, 2, 3]], [[true, true]]), ShapeError, "E_SHAPE", "responseMask");
  });

  test("rejects: a mask that is not boolean", () => {
    expectRejects(() => whiten([[1, 2]], [[1, 3]]), MaskError, "E_MASK", "responseMask");
  });

  test("rejects: a mask row with no response token", () => {
    const mask = [
      [true, true],
      [false, false],
    ];
    expectRejects(
      () =>
        whiten(
          [
            [1, 2],
            [3, 4],
          ],
          mask,
        ),
      MaskError,
      "E_MASK",
      "responseMask",
    );
  });

  test("rejects: non-boolean options.shiftMean", () => {
    const options = { shiftMean: 0 } as unknown as WhitenOptions;
    expectRejects(
      () => whiten([[1, 2]], [[true, true]], options),
      ConfigError,
      "E_CONFIG",
      "options.shiftMean",
    );
  });

  test("rejects: negative or non-finite options.eps", () => {
    for (const eps of [-1e-8, Number.NaN]) {
      expectRejects(
        () => whiten([[1, 2]], [[true, true]], { eps }),
        ConfigError,
        "E_CONFIG",
        "options.eps",
      );
    }
  });

  test("rejects: options.eps 0 when every response value is equal", () => {
    // σ² = 0 and eps = 0: 0 · 1/sqrt(0) = 0 · ∞ = NaN (polgrad-ts raises).
    expectRejects(
      () => whiten([[2, 2, JUNK]], [[true, true, false]], { eps: 0 }),
      ConfigError,
      "E_CONFIG",
      "options.eps",
    );
  });
});
