/** Enforces docs/conformance/frameworks.md#verl: hand-derived goldens and rejections of the verl models. */
import { describe, expect, test } from "vitest";
import { verlModel } from "../../../src/conformance/frameworks/index.js";
import {
  ConfigError,
  MaskError,
  NonFiniteError,
  ShapeError,
  UnknownNameError,
} from "../../../src/errors.js";
import { expectClose } from "../../_kit/expect.js";

const NaN_ = Number.NaN;

// Batch V: row 0 = two tokens, row 1 = one token and padding (junk NaN).
//   (0,0): lp −1, old −1  → z = 0,  r = 1, A = 2   → in band: ℓ = −2·1 = −2, ∂ℓ/∂lp = −A·r = −2
//   (0,1): lp −0.5, old −25.5 → z = 25 clamped to 20, r = e^20, A = −1 → pg1 = e^20, pg2 = 1.2,
//          max = e^20, dual clip min(−A·3 = 3, e^20) = 3 → ℓ = 3, ∂ℓ/∂lp = 0 (cap and clamp)
//   (1,0): lp −1, old −1 → r = 1, A = −1 → pg1 = pg2 = 1 (tie, split ½/½, both pass) → ℓ = 1,
//          ∂ℓ/∂lp = ½·1 + ½·1 = 1
const V = {
  logprobs: [
    [-1, -0.5],
    [-1, NaN_],
  ],
  oldLogprobs: [
    [-1, -25.5],
    [-1, NaN_],
  ],
  advantages: [
    [2, -1],
    [-1, NaN_],
  ],
  responseMask: [
    [true, true],
    [true, false],
  ],
};

describe("verlModel", () => {
  test("golden: vanilla token-mean on a 2x2 batch with dual clip and a clamped log-ratio", () => {
    const out = verlModel("74a718a4", "vanilla:token-mean").evaluate(V);
    // token-mean: (−2 + 3 + 1)/3 = 2/3; ∂ = [−2/3, 0; 1/3, 0].
    expectClose(out.loss, 2 / 3, { rtol: 1e-15 });
    expectClose(out.gradLogprobs, [-2 / 3, 0, 1 / 3, 0], { rtol: 1e-15 });
    expectClose(out.perTokenObjective, [-2, 3, 1, 0], { rtol: 1e-15 });
    expectClose(out.ratio, [1, Math.exp(20), 1, 1], { rtol: 1e-15 });
  });

  test("golden: the agg_loss modes on the same batch, with no row epsilon under the bool mask", () => {
    // ℓ = [[−2, 3], [1, ·]], L = [2, 1], T = 2, two non-empty rows.
    // seq-mean-token-sum: row sums [1, 1] → 1; ∂ = w·∂ℓ with w = 1/2.
    // seq-mean-token-sum-norm: 1/T = 1/2; w = 1/4.
    // seq-mean-token-mean: row means [1/2, 1] → 3/4 (L_b + 1e-8 is float32 and equals L_b); w = [1/4, 1/2].
    // token-sum (head only): 2; w = 1.
    const cases: [string, number, number[]][] = [
      ["vanilla:seq-mean-token-sum", 1, [-1, 0, 0.5, 0]],
      ["vanilla:seq-mean-token-sum-norm", 0.5, [-0.5, 0, 0.25, 0]],
      ["vanilla:seq-mean-token-mean", 0.75, [-0.5, 0, 0.5, 0]],
    ];
    for (const [variant, loss, grad] of cases) {
      for (const label of ["74a718a4", "1dda039b"] as const) {
        const out = verlModel(label, variant).evaluate(V);
        expect(out.loss).toBe(loss);
        expectClose(out.gradLogprobs, grad, { rtol: 1e-15 });
      }
    }
    const sum = verlModel("1dda039b", "vanilla:token-sum").evaluate(V);
    expect(sum.loss).toBe(2);
    expectClose(sum.gradLogprobs, [-2, 0, 1, 0], { rtol: 1e-15 });
    // loss_scale_factor = 4 instead of T = 2 halves the Dr.GRPO-style value.
    const lsf = verlModel("74a718a4", "vanilla:seq-mean-token-sum-norm", { lossScaleFactor: 4 });
    expect(lsf.id).toBe("verl@74a718a4:vanilla:seq-mean-token-sum-norm[loss_scale_factor=4]");
    expect(lsf.evaluate(V).loss).toBe(0.25);
    // global_batch_size = 4 counts two absent rows: seq-mean-token-sum = 2/4.
    expect(
      verlModel("74a718a4", "vanilla:seq-mean-token-sum", { globalBatchSize: 4 }).evaluate(V).loss,
    ).toBe(0.5);
  });

  test("golden: gspo is token-local, clamps the log-ratio at 10 and has no dual clip", () => {
    // Row 0: z = [0.5, −0.5] → mean 0, s = 1; A = [1, −2] → ℓ = [−1, 2] (ties, full slope).
    //   ∂ℓ_t/∂lp_t = −A_t·s (token-local), w = 1/(L_0·rows) = 1/4 → ∂ = [−1/4, 1/2].
    // Row 1: z = 12 → log s clamped to 10, s = e^10, A = −1 → ℓ = max(e^10, 1.2) = e^10 (no dual
    //   clip), ∂ = 0 (clamp binds).  loss = (1/2 + e^10)/2.
    const out = verlModel("74a718a4", "gspo").evaluate({
      logprobs: [
        [-1, -1],
        [-1, 0],
      ],
      oldLogprobs: [
        [-1.5, -0.5],
        [-13, 0],
      ],
      advantages: [
        [1, -2],
        [-1, 0],
      ],
      responseMask: [
        [true, true],
        [true, false],
      ],
    });
    expectClose(out.loss, (0.5 + Math.exp(10)) / 2, { rtol: 1e-15 });
    expectClose(out.gradLogprobs, [-0.25, 0.5, 0, 0], { rtol: 1e-15 });
    expectClose(out.ratio, [1, 1, Math.exp(10), 1], { rtol: 1e-15 });
  });

  test("golden: cispo clips the weight on both sides and differentiates only lp", () => {
    // (0,0): z = 0.5, r = e^0.5 > 1.2 → ŵ = 1.2; lp = −1, A = 2 → ℓ = −1.2·2·(−1) = 2.4, ∂ℓ = −2.4
    // (0,1): z = −0.5, r = e^−0.5 < 0.8 → ŵ = 0.8; lp = −2, A = 1 → ℓ = 1.6, ∂ℓ = −0.8
    // token-mean over 2: loss 2, ∂ = [−1.2, −0.4].
    const out = verlModel("74a718a4", "cispo").evaluate({
      logprobs: [[-1, -2]],
      oldLogprobs: [[-1.5, -1.5]],
      advantages: [[2, 1]],
      responseMask: [[true, true]],
    });
    expectClose(out.loss, 2, { rtol: 1e-15 });
    expectClose(out.gradLogprobs, [-1.2, -0.4], { rtol: 1e-15 });
  });

  test("golden: kl_penalty k1, k2, abs, k3 (both clamps) and straight-through k3+", () => {
    // Tokens: d = lp − ref = 1 (lp −1, ref −2) and d = 30 (lp −1, ref −31); padding junk.
    // k1: [1, 30] → 15.5, ∂ = [1/2, 1/2].  k2: [1/2, 450] → 225.25, ∂ = d/2 = [1/2, 15].
    // abs: as k1.  k3: x = ref − lp = [−1, −30 → −20]; e^x − x − 1 = [e^−1, 19 + e^−20 → 10]
    //   → (e^−1 + 10)/2, ∂ = [(1 − e^−1)/2, 0].  k3+: k3's value, ∂ = d/2 = [1/2, 15].
    const inputs = {
      logprobs: [[-1, -1, NaN_]],
      oldLogprobs: [[NaN_, NaN_, NaN_]],
      advantages: [[NaN_, NaN_, NaN_]],
      refLogprobs: [[-2, -31, Number.POSITIVE_INFINITY]],
      responseMask: [[true, true, false]],
    };
    const k3 = (Math.exp(-1) + 10) / 2;
    const want: [string, number, number[]][] = [
      ["kl:k1", 15.5, [0.5, 0.5, 0]],
      ["kl:k2", 225.25, [0.5, 15, 0]],
      ["kl:abs", 15.5, [0.5, 0.5, 0]],
      ["kl:k3", k3, [(1 - Math.exp(-1)) / 2, 0, 0]],
      ["kl:k3+", k3, [0.5, 15, 0]],
    ];
    for (const [variant, loss, grad] of want) {
      const out = verlModel("74a718a4", variant).evaluate(inputs);
      expectClose(out.loss, loss, { rtol: 1e-15 });
      expectClose(out.gradLogprobs, grad, { rtol: 1e-15 });
      expect(out.ratio.data[0]).toBe(1);
    }
  });

  test("rejects: unknown variants, head-only token-sum at the pin, misplaced overrides, bad inputs", () => {
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e;
      }
      throw new Error("expected a throw");
    };
    const unknown = err(() => verlModel("74a718a4", "vanilla:token-sum")) as UnknownNameError;
    expect(unknown).toBeInstanceOf(UnknownNameError);
    expect(unknown.arg).toBe("variant");
    expect(unknown.suggestions).toContain("vanilla:token-mean");
    expect(err(() => verlModel("74a718a4", "cispo", { lossScaleFactor: 8 }))).toBeInstanceOf(
      ConfigError,
    );
    expect(
      err(() => verlModel("74a718a4", "vanilla:token-mean", { batchNumTokens: 0 })),
    ).toBeInstanceOf(ConfigError);
    const kl = verlModel("74a718a4", "kl:k3");
    const missing = err(() => kl.evaluate({ ...V, refLogprobs: null })) as ConfigError;
    expect(missing).toBeInstanceOf(ConfigError);
    expect(missing.arg).toBe("refLogprobs");
    const m = verlModel("74a718a4", "vanilla:seq-mean-token-mean");
    const empty = err(() =>
      m.evaluate({
        ...V,
        responseMask: [
          [false, false],
          [false, false],
        ],
      }),
    ) as MaskError;
    expect(empty).toBeInstanceOf(MaskError);
    expect(empty.code).toBe("E_MASK");
    expect(err(() => m.evaluate({ ...V, oldLogprobs: [[-1, -1]] }))).toBeInstanceOf(ShapeError);
    expect(
      err(() =>
        m.evaluate({
          ...V,
          logprobs: [
            [NaN_, -1],
            [-1, 0],
          ],
        }),
      ),
    ).toBeInstanceOf(NonFiniteError);
    // token-sum of an empty batch is 0 (no divisor), as upstream.
    expect(
      verlModel("1dda039b", "vanilla:token-sum").evaluate({
        ...V,
        responseMask: [
          [false, false],
          [false, false],
        ],
      }).loss,
    ).toBe(0);
  });
});
