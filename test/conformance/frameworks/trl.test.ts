/** Enforces docs/conformance/frameworks.md#trl: hand-derived goldens and rejections of the TRL models. */
import { describe, expect, test } from "vitest";
import { trlModel, verlModel } from "../../../src/conformance/frameworks/index.js";
import { ConfigError, MaskError, UnknownNameError } from "../../../src/errors.js";
import { expectClose } from "../../_kit/expect.js";

const J = Number.NaN;
const E5 = Math.exp(0.5);
const Em5 = Math.exp(-0.5);

// Batch R, [B] advantages A = [1, −2]:
//   row 0: z = [0.5, −0.5] → r = [e^0.5, e^−0.5], lp = [−1, −2]
//   row 1: z = 0 → r = 1, lp = −1
//   ref = lp + 1 (x = ref − lp = 1, k3 = e − 2)
const R = {
  logprobs: [
    [-1, -2, J],
    [-1, J, J],
  ],
  oldLogprobs: [
    [-1.5, -1.5, J],
    [-1, J, J],
  ],
  advantages: [1, -2],
  refLogprobs: [
    [0, -1, J],
    [0, J, J],
  ],
  responseMask: [
    [true, true, false],
    [true, false, false],
  ],
};

describe("trlModel", () => {
  test("golden: the six loss types on one ragged batch", () => {
    // Clipped ℓ: (0,0) −min(e^.5, 1.2) = −1.2 (∂ 0); (0,1) −e^−.5 (∂ℓ/∂lp = −r);
    //   (1,0) A = −2, r = 1: tie → ℓ = 2, ∂ℓ/∂lp = 2.
    const clipSum = -1.2 - Em5 + 2;
    const cases: [string, number, number[]][] = [
      // grpo: mean_b(row sum / max(L_b, 1)): ((−1.2 − e^−.5)/2 + 2)/2; w = [¼, ½].
      ["grpo:token", ((-1.2 - Em5) / 2 + 2) / 2, [0, -Em5 / 4, 0, 1, 0, 0]],
      // bnpo: Σ/max(N, 1), N = 3.
      ["bnpo:token", clipSum / 3, [0, -Em5 / 3, 0, 2 / 3, 0, 0]],
      // dr_grpo: Σ/(B·T) = Σ/6 (max_completion_length = T = 3).
      ["dr_grpo:token", clipSum / 6, [0, -Em5 / 6, 0, 1 / 3, 0, 0]],
      // dapo: Σ/num_items_in_batch = Σ/3.
      ["dapo:token", clipSum / 3, [0, -Em5 / 3, 0, 2 / 3, 0, 0]],
      // cispo: ℓ = −min(r, 5)·A·lp = [e^.5, 2e^−.5, −2], ∂ℓ/∂lp = −min(r, 5)·A = [−e^.5, −e^−.5, 2]; /3.
      ["cispo:token", (E5 + 2 * Em5 - 2) / 3, [-E5 / 3, -Em5 / 3, 0, 2 / 3, 0, 0]],
      // Sequence level: s_0 = exp((0.5 − 0.5)/2) = 1, s_1 = 1 → clipped ℓ = [−1, −1 | 2] (ties).
      //   grpo: ((−2)/2 + 2)/2 = ½; ∂ through the mean: row 0 Σ w·∂ℓ/∂s = ¼·(−1)·2 = −½, × s/L_0 → −¼
      //   on both tokens; row 1: ½·2 = 1.
      ["grpo:sequence", 0.5, [-0.25, -0.25, 0, 1, 0, 0]],
    ];
    for (const [variant, loss, grad] of cases) {
      for (const label of ["v1.8.0", "f2cd5771"] as const) {
        const out = trlModel(label, variant).evaluate(R);
        expectClose(out.loss, loss, { rtol: 1e-14, what: `${variant} loss` });
        expectClose(out.gradLogprobs, grad, { rtol: 1e-14, atol: 1e-17, what: `${variant} grad` });
      }
    }
    // verl's cispo on the same tokens clips both sides: ŵ = [1.2, 0.8, 1].
    const verlCispo = verlModel("74a718a4", "cispo").evaluate({
      ...R,
      advantages: [
        [1, 1, J],
        [-2, J, J],
      ],
    });
    expectClose(verlCispo.loss, (1.2 + 0.8 * 2 - 2) / 3, { rtol: 1e-14 });
  });

  test("golden: sapo's soft gate with the float32 negative temperature", () => {
    // τ = 1 for A > 0, float32(1.05) = 1.0499999523162842 for A ≤ 0 (torch.where over Python floats).
    // (0,0): σ0 = σ(e^.5 − 1), ℓ = −4σ0; (0,1): σ1 = σ(e^−.5 − 1), ℓ = −4σ1;
    // (1,0): A = −2, r = 1: σ(0) = ½ → ℓ = −(½·4/τ)·(−2) = 4/τ; ∂ℓ/∂r = −A·(4/τ)·¼·τ = 2.
    // grpo-style aggregation: ((−4σ0 − 4σ1)/2 + 4/τ)/2.
    const tau = Math.fround(1.05);
    expect(tau).toBe(1.0499999523162842);
    const sig = (x: number) => 1 / (1 + Math.exp(-x));
    const s0 = sig(E5 - 1);
    const s1 = sig(Em5 - 1);
    const out = trlModel("v1.8.0", "sapo:token").evaluate(R);
    expectClose(out.loss, ((-4 * s0 - 4 * s1) / 2 + 4 / tau) / 2, { rtol: 1e-15 });
    expect(Math.abs(out.loss - ((-4 * s0 - 4 * s1) / 2 + 4 / 1.05) / 2)).toBeGreaterThan(1e-9);
    // ∂: w·(−4σ(1−σ))·r for row 0 (w = ¼), ½·2 for row 1.
    expectClose(
      out.gradLogprobs,
      [(-4 * s0 * (1 - s0) * E5) / 4, (-4 * s1 * (1 - s1) * Em5) / 4, 0, 1, 0, 0],
      { rtol: 1e-14 },
    );
  });

  test("golden: dapo with beta 0.04 adds the unclamped k3 before the num_items_in_batch normaliser", () => {
    // k3 = e^x − x − 1 with x = ref − lp = 1: e − 2 per token; ∂k3/∂lp = 1 − e.
    const out = trlModel("v1.8.0", "dapo:token:beta-0.04").evaluate(R);
    const k3 = Math.E - 2;
    expectClose(out.loss, (-1.2 - Em5 + 2 + 3 * 0.04 * k3) / 3, { rtol: 1e-14 });
    const d = (0.04 * (1 - Math.E)) / 3;
    expectClose(out.gradLogprobs, [d, -Em5 / 3 + d, 0, 2 / 3 + d, 0, 0], { rtol: 1e-14 });
    expectClose(out.perTokenObjective.data[0] as number, -1.2 + 0.04 * k3, { rtol: 1e-15 });
  });

  test("golden: normalisers — num_items_in_batch of the generation batch, empty rows in the grpo mean, the clamp added after v1.8.0", () => {
    // A generation batch of 6 tokens split over two steps: each step divides by 6, not its own 3.
    const own = trlModel("v1.8.0", "dapo:token").evaluate(R).loss;
    const gen = trlModel("v1.8.0", "dapo:token", { numItemsInBatch: 6 });
    expect(gen.id).toBe("trl@v1.8.0:dapo:token[num_items_in_batch=6]");
    expectClose(gen.evaluate(R).loss, own / 2, { rtol: 1e-15 });
    // dr_grpo with max_completion_length 12 instead of T = 3: a quarter.
    const dr = trlModel("f2cd5771", "dr_grpo:token", { maxCompletionLength: 12 }).evaluate(R).loss;
    expectClose(dr, trlModel("f2cd5771", "dr_grpo:token").evaluate(R).loss / 4, { rtol: 1e-15 });
    // grpo averages over all B rows, empty ones included: row 1 empty → (row 0 mean)/2.
    const emptyRow = {
      ...R,
      responseMask: [
        [true, true, false],
        [false, false, false],
      ],
    };
    expectClose(trlModel("v1.8.0", "grpo:token").evaluate(emptyRow).loss, (-1.2 - Em5) / 2 / 2, {
      rtol: 1e-15,
    });
    // An empty batch: v1.8.0 divides 0 by num_items_in_batch = 0 (NaN), the head clamps it to 1.
    const empty = {
      ...R,
      responseMask: [
        [false, false, false],
        [false, false, false],
      ],
    };
    expect(() => trlModel("v1.8.0", "dapo:token").evaluate(empty)).toThrow(MaskError);
    expect(trlModel("f2cd5771", "dapo:token").evaluate(empty).loss).toBe(0);
    expect(trlModel("v1.8.0", "bnpo:token").evaluate(empty).loss).toBe(0);
  });

  test("rejects: unknown variants and overrides the variant does not read", () => {
    expect(() => trlModel("v1.8.0", "luspo:token")).toThrow(UnknownNameError);
    expect(() => trlModel("v1.8.0", "grpo:token", { numItemsInBatch: 10 })).toThrow(ConfigError);
    expect(() => trlModel("v1.8.0", "dapo:token", { maxCompletionLength: 10 })).toThrow(
      ConfigError,
    );
    expect(() => trlModel("v1.8.0", "dapo:token", { numItemsInBatch: -1 })).toThrow(ConfigError);
    expect(() =>
      trlModel("v1.8.0", "dapo:token:beta-0.04").evaluate({ ...R, refLogprobs: null }),
    ).toThrow(ConfigError);
  });
});
