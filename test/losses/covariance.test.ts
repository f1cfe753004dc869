/** Enforces docs/derivations/losses.md#kl-cov: KL-Cov's token selection and its composed loss. */
import { describe, expect, test } from "vitest";
import type { Mask } from "../../src/core/tensor.js";
import {
  ConfigError,
  clipCovInputs,
  clipCovSelection,
  klCovSelection,
  policyLoss,
  toRows,
} from "../../src/index.js";

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

describe("clipCovSelection", () => {
  // One row of six tokens, A = (2, 2, 2, −1, 2, 0.5), lp = (−1, −3, −0.2, −2, −1, −1), old = lp except
  // token 1 (old = lp − 0.5: r = e^0.5 > 1.2 with A > 0, so the clip binds there). Ā = 7.5/6 = 1.25,
  // l̄ = −8.2/6; c = (A − 1.25)(lp + 1.3667): (0.275, −1.225, 0.875, 1.425, 0.275, −0.275).
  // Band (0.2, 1.0): tokens 0, 2, 4 (token 1 is clipped, token 3 is above ub).
  const A = [[2, 2, 2, -1, 2, 0.5]];
  const lp = [[-1, -3, -0.2, -2, -1, -1]];
  const old = [[-1, -3.5, -0.2, -2, -1, -1]];
  const mask = [[true, true, true, true, true, true]];
  const clip = { epsLow: 0.2, epsHigh: 0.2 };

  test("golden: candidates in the band and unclipped, the permutation's first k, and the seeded shuffle", () => {
    const base = { clip, lb: 0.2, ub: 1.0 };
    // ratio 0.4: k = ⌊6·0.4⌋ = 2; the permutation [2, 0, 1] takes candidates 2 and 0: tokens 4 and 0.
    const s1 = clipCovSelection(A, lp, old, mask, { ...base, ratio: 0.4, permutation: [2, 0, 1] });
    expect(maskRows(s1.candidates)).toEqual([[1, 0, 1, 0, 1, 0]]);
    expect(maskRows(s1.selected)).toEqual([[1, 0, 0, 0, 1, 0]]);
    // k = max(1, ⌊6·2e-4⌋) = 1 by default; ratio 1 takes all three candidates (k = 6 > n = 3).
    expect(
      maskRows(clipCovSelection(A, lp, old, mask, { ...base, permutation: [1, 2, 0] }).selected),
    ).toEqual([[0, 0, 1, 0, 0, 0]]);
    expect(maskRows(clipCovSelection(A, lp, old, mask, { ...base, ratio: 1 }).selected)).toEqual([
      [1, 0, 1, 0, 1, 0],
    ]);
    // The seeded shuffle: deterministic for a seed, two of the three candidates at ratio 0.4.
    const a = clipCovSelection(A, lp, old, mask, { ...base, ratio: 0.4, seed: 7 }).selected.data;
    const b = clipCovSelection(A, lp, old, mask, { ...base, ratio: 0.4, seed: 7 }).selected.data;
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(a.reduce((x, y) => x + y, 0)).toBe(2);
    a.forEach((x, i) => expect(x <= (s1.candidates.data[i] as number)).toBe(true));
    expect(() => clipCovSelection(A, lp, old, mask, { ...base, permutation: [0, 0, 1] })).toThrow(
      ConfigError,
    );
    expect(() => clipCovSelection(A, lp, old, mask, { clip, lb: 2, ub: 1 })).toThrow(ConfigError);
  });

  test("identity: the composed loss zeroes exactly the selected terms and keeps every denominator", () => {
    const sel = clipCovSelection(A, lp, old, mask, {
      clip,
      lb: 0.2,
      ub: 1.0,
      ratio: 0.4,
      permutation: [2, 0, 1],
    });
    const inputs = { logprobs: lp, oldLogprobs: old, advantages: A, responseMask: mask };
    for (const aggregation of ["token_mean", "seq_mean_token_mean"] as const) {
      const cfg = { ratio: "token", surrogate: "pg_clip", clip, aggregation } as const;
      const plain = policyLoss(cfg, inputs);
      const cov = policyLoss(
        { ...cfg, isCorrection: { level: "token", cap: null } },
        clipCovInputs(inputs, sel.selected),
      );
      // token_mean over 6 tokens either way: the loss is the plain one minus the selected terms' share.
      let kept = 0;
      plain.perTokenObjective.data.forEach((o, i) => {
        if (sel.selected.data[i] === 0) kept += o / 6;
      });
      expect(cov.loss).toBeCloseTo(kept, 15);
      cov.gradLogprobs.data.forEach((g, i) =>
        sel.selected.data[i] === 1
          ? expect(Math.abs(g)).toBe(0)
          : expect(g).toBe(plain.gradLogprobs.data[i]),
      );
    }
    expect(() => clipCovInputs({ ...inputs, rolloutLogprobs: lp }, sel.selected)).toThrow(
      ConfigError,
    );
  });
});
