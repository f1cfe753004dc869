/** Enforces docs/conformance/frameworks.md#openrlhf: hand-derived goldens and rejections of the OpenRLHF models. */
import { describe, expect, test } from "vitest";
import { openRlhfModel, verlModel } from "../../../src/conformance/frameworks/index.js";
import { ConfigError, UnknownNameError } from "../../../src/errors.js";
import { expectClose } from "../../_kit/expect.js";

const f32 = Math.fround;
const J = Number.NaN;

// Batch O: row 0 = two tokens, row 1 = one token.
//   (0,0): z = 0.5, r = e^0.5 ≈ 1.649, A = 1  → min(r, 1.2)·A = 1.2 → ℓ = −1.2 (clipped, ∂ 0)
//   (0,1): z = −0.5, r = e^−0.5 ≈ 0.607, A = −2 → min(−1.213, 0.8·(−2) = −1.6) → ℓ = 1.6 (clipped, ∂ 0)
//   (1,0): z = 0, r = 1, A = 3 → tie, ℓ = −3, ∂ℓ/∂lp = −A·r = −3
const O = {
  logprobs: [
    [-1, -1, J],
    [-1, J, J],
  ],
  oldLogprobs: [
    [-1.5, -0.5, J],
    [-1, J, J],
  ],
  advantages: [
    [1, -2, J],
    [3, J, J],
  ],
  responseMask: [
    [true, true, false],
    [true, false, false],
  ],
};

describe("openRlhfModel", () => {
  test("golden: ppo sample mean and gspo on a ragged 2x3 batch", () => {
    // ppo:token: (−1.2 + 1.6 − 3)/3, ∂(1,0) = −3/3.
    const tok = openRlhfModel("bc71bb19", "ppo:token").evaluate(O);
    expectClose(tok.loss, (-1.2 + 1.6 - 3) / 3, { rtol: 1e-14 });
    expectClose(tok.gradLogprobs, [0, 0, 0, -1, 0, 0], { rtol: 1e-15 });
    // ppo:sample: rows (−1.2 + 1.6)/2 and −3/1 (divisor float32(L + 1e-8) = L), mean (0.2 − 3)/2 = −1.4;
    //   ∂(1,0) = −3·(1/2)/1 = −1.5.
    const sample = openRlhfModel("bc71bb19", "ppo:sample").evaluate(O);
    expectClose(sample.loss, ((-1.2 + 1.6) / 2 - 3) / 2, { rtol: 1e-14 });
    expectClose(sample.gradLogprobs, [0, 0, 0, -1.5, 0, 0], { rtol: 1e-15 });
    // gspo: row 0 s = exp((0.5 − 0.5)/2) = 1 → ℓ = [−1, 2]; row 1 s = 1 → ℓ = −3.
    //   sample mean: ((−1 + 2)/2 − 3)/2 = −1.25.
    //   ∂ through the mean: row 0 Σ_t w_t·∂ℓ_t/∂s = ¼·(−1) + ¼·2 = ¼, times s/L_0 = ½ → ⅛ on both tokens;
    //   row 1: ½·(−3)·1/1 = −1.5.
    const g = openRlhfModel("bc71bb19", "gspo").evaluate(O);
    expectClose(g.loss, -1.25, { rtol: 1e-15 });
    expectClose(g.gradLogprobs, [0.125, 0.125, 0, -1.5, 0, 0], { rtol: 1e-15 });
    // verl's gspo on the same batch is token-local: [−¼, ½ | −1.5].
    expectClose(
      verlModel("74a718a4", "gspo").evaluate(O).gradLogprobs,
      [-0.25, 0.5, 0, -1.5, 0, 0],
      {
        rtol: 1e-15,
      },
    );
  });

  test("golden: dual clip floors the objective at 3·A for negative advantages", () => {
    // z = 2, r = e² ≈ 7.389, A = −1: min(r·A, 1.2·A) = −e²; ppo:token ℓ = e², ∂ℓ/∂lp = −A·r = e².
    // dual-clip-3: max(−e², 3·A = −3) = −3 → ℓ = 3, ∂ = 0.
    const x = { logprobs: [[-1]], oldLogprobs: [[-3]], advantages: [[-1]], responseMask: [[true]] };
    const plain = openRlhfModel("3c3be623", "ppo:token").evaluate(x);
    expectClose(plain.loss, Math.exp(2), { rtol: 1e-15 });
    expectClose(plain.gradLogprobs, [Math.exp(2)], { rtol: 1e-15 });
    const dual = openRlhfModel("3c3be623", "ppo:token:dual-clip-3").evaluate(x);
    expect(dual.loss).toBe(3);
    expect(dual.gradLogprobs.data[0]).toBe(0);
  });

  test("golden: compute_approx_kl rounds like float32 and clamps the output at ±10", () => {
    // d = lp − ref per token: f32(−1) − f32(−1.1) = 0.10000002384185791 (float32 cast!), 30, −12.
    // Every value is float32; upstream sums in float32 and divides by N = 3 in float32.
    const inputs = {
      logprobs: [[-1, -1, -13]],
      oldLogprobs: [[J, J, J]],
      advantages: [[J, J, J]],
      refLogprobs: [[-1.1, -31, -1]],
      responseMask: [[true, true, true]],
    };
    const x = f32(f32(-1) - f32(-1.1));
    expect(x).toBe(0.10000002384185791);
    const g = f32(1 / 3);
    // k1: [x, 30 → 10, −12 → −10] → f32(f32(x)/3); ∂ = [f32(1/3), 0, 0] (the clamps bind).
    const k1 = openRlhfModel("bc71bb19", "kl:k1").evaluate(inputs);
    expect(k1.loss).toBe(f32(x / 3));
    expect(Array.from(k1.gradLogprobs.data)).toEqual([g, 0, 0]);
    // k2: x²/2 → f32(f32(x·x)/2); 450 → 10; 72 → 10. ∂ = f32(g·x).
    const k2v = f32(f32(x * x) / 2);
    const k2 = openRlhfModel("bc71bb19", "kl:k2").evaluate(inputs);
    expect(k2.loss).toBe(f32(f32(k2v + 20) / 3));
    expect(Array.from(k2.gradLogprobs.data)).toEqual([f32(g * x), 0, 0]);
    // k3: e^{−x} − 1 + x with e = f32(e^{−x}); 29 → 10; e^{12} − 13 → 10. ∂ = f32(g − f32(g·e)).
    const e = f32(Math.exp(-x));
    const k3v = f32(f32(e - 1) + x);
    const k3 = openRlhfModel("bc71bb19", "kl:k3").evaluate(inputs);
    expect(k3.loss).toBe(f32(f32(k3v + 20) / 3));
    expect(Array.from(k3.gradLogprobs.data)).toEqual([f32(g - f32(g * e)), 0, 0]);
    // A float64 computation would give d = 0.10000000000000009, visibly different.
    expect(Math.abs(k1.loss - (-1 - -1.1 + 0) / 3)).toBeGreaterThan(1e-9);
  });

  test("rejects: unknown variants and a missing reference stream", () => {
    expect(() => openRlhfModel("bc71bb19", "ppo:seq")).toThrow(UnknownNameError);
    expect(() => openRlhfModel("v1" as "bc71bb19", "ppo:token")).toThrow(UnknownNameError);
    expect(() => openRlhfModel("bc71bb19", "kl:k3").evaluate(O)).toThrow(ConfigError);
  });
});
