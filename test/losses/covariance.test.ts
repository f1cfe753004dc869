/** Enforces docs/derivations/losses.md#kl-cov: KL-Cov's token selection and its composed loss. */
import { describe, expect, test } from "vitest";
import type { Mask } from "../../src/core/tensor.js";
import { ConfigError, klCovSelection, policyLoss, toRows } from "../../src/index.js";

/** A mask's rows as 0/1 numbers. */
const maskRows = (m: Mask): number[][] =>
  Array.from({ length: m.rows }, (_, b) =>
    Array.from(m.data.subarray(b * m.cols, (b + 1) * m.cols)),
  );

describe("klCovSelection", () => {
  test("golden: the largest covariance term of five tokens, and ratio 0.4 selects two", () => {
    // Response tokens (row-major): A = (1, −1, 2, 0, 3), lp = (−1, −2, −0.5, −3, −1); the last
    // row's third position is padding (junk). Ā = 1, l̄ = −1.5, so c = (A − 1)(lp + 1.5) =
    // (0, 1, 1, 1.5, 1). N = 5: ratio 2e-4 gives k = max(1, ⌊0.001⌋) = 1: the 1.5 at (1, 0).
    const A = [
      [1, -1, 2],
      [0, 3, 99],
    ];
    const lp = [
      [-1, -2, -0.5],
      [-3, -1, Number.NaN],
    ];
    const mask = [
      [true, true, true],
      [true, true, false],
    ];
    expect(maskRows(klCovSelection(A, lp, mask))).toEqual([
      [0, 0, 0],
      [1, 0, 0],
    ]);
    // ratio 0.4: k = 2: the 1.5, then the first of the three 1s in row-major order, (0, 1).
    expect(maskRows(klCovSelection(A, lp, mask, { ratio: 0.4 }))).toEqual([
      [0, 1, 0],
      [1, 0, 0],
    ]);
    // No response token: nothing selected.
    expect(maskRows(klCovSelection([[1]], [[-1]], [[false]]))).toEqual([[0]]);
    expect(() => klCovSelection(A, lp, mask, { ratio: 0 })).toThrow(ConfigError);
    expect(() => klCovSelection(A, lp, mask, { ratio: 1.5 })).toThrow(ConfigError);
  });

  test("gradient: the composed KL-Cov loss adds coef·sign(lp − old)·w at the selected tokens only", () => {
    // pg (−A·r) plus {kind: abs, coef} against ref = old at the selection and lp elsewhere: at a
    // selected token the gradient gains coef·w·sign(lp − old); elsewhere |lp − lp| adds nothing.
    const A = [[1, -1, 2, 0.5]];
    const lp = [[-1, -2, -0.5, -1.5]];
    const old = [[-1.2, -1.9, -0.7, -1.4]];
    const mask = [[true, true, true, true]];
    const sel = maskRows(klCovSelection(A, lp, mask, { ratio: 0.5 }));
    const ref = lp.map((r, b) => r.map((x, t) => (sel[b]![t] === 1 ? old[b]![t]! : x)));
    const inputs = { logprobs: lp, oldLogprobs: old, advantages: A, responseMask: mask };
    const cfg = { ratio: "token", surrogate: "pg", clip: null, aggregation: "token_mean" } as const;
    const plain = policyLoss(cfg, inputs);
    const cov = policyLoss(
      { ...cfg, kl: { kind: "abs", coef: 0.1 } },
      { ...inputs, refLogprobs: ref },
    );
    const w = 1 / 4;
    const g0 = toRows(plain.gradLogprobs)[0]!;
    const g1 = toRows(cov.gradLogprobs)[0]!;
    let penalty = 0;
    for (let t = 0; t < 4; t++) {
      const d = lp[0]![t]! - old[0]![t]!;
      const extra = sel[0]![t] === 1 ? 0.1 * w * Math.sign(d) : 0;
      if (sel[0]![t] === 1) penalty += 0.1 * w * Math.abs(d);
      expect(g1[t]!).toBeCloseTo(g0[t]! + extra, 15);
    }
    expect(sel[0]!.reduce((s, x) => s + x, 0)).toBe(2);
    expect(cov.loss).toBeCloseTo(plain.loss + penalty, 15);
  });
});
