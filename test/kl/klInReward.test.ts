/** Enforces docs/derivations/kl.md#kl-in-reward: goldens of klInReward (spec §4.4). */
import { describe, expect, test } from "vitest";
import {
  ConfigError,
  KL_ESTIMATORS,
  klInReward,
  policyLoss,
  ShapeError,
  toRows,
} from "../../src/index.js";

const rewards = [[2, -1]];
const old = [[-1, -2]];
const ref = [[-1.5, -1]];

describe("klInReward", () => {
  test("golden: k1 and k3 shaped rewards with coef 0.5", () => {
    // δ = ref − old = (−0.5, 1). k1 = −δ = (0.5, −1): r − 0.5·k1 = (2 − 0.25, −1 + 0.5) = (1.75, −0.5).
    expect(
      toRows(klInReward(rewards, old, ref, "k1", 0.5, { responseMask: [[true, true]] })),
    ).toEqual([[1.75, -0.5]]);
    // k3 = expm1(δ) − δ = (e^−0.5 − 1 + 0.5, e − 1 − 1) = (e^−0.5 − 0.5, e − 2).
    const k3 = toRows(
      klInReward(rewards, old, ref, "k3", 0.5, { responseMask: [[true, true]] }),
    )[0] as number[];
    expect(k3[0]).toBeCloseTo(2 - 0.5 * (Math.exp(-0.5) - 0.5), 15);
    expect(k3[1]).toBeCloseTo(-1 - 0.5 * (Math.E - 2), 15);
  });

  test("golden: verl's low_var_kl clamps (20, 10) in the reward on δ = 25, −30, 1", () => {
    // δ = ref − old. 25 → δ′ = 20, k3 = e^20 − 21 ≈ 4.9e8 → 10; −30 → δ′ = −20, k3 = e^−20 + 19 ≈ 19
    // → 10; 1 → e − 2 (inside both clamps). coef 0.5 on rewards [1, 1, 1].
    const oldL = [[-30, -1, -2]];
    const refL = [[-5, -31, -1]];
    const clamp = { delta: 20, value: 10 };
    const out = toRows(
      klInReward([[1, 1, 1]], oldL, refL, "k3", 0.5, { responseMask: [[true, true, true]], clamp }),
    )[0] as number[];
    expect(out[0]).toBe(1 - 0.5 * 10);
    expect(out[1]).toBe(1 - 0.5 * 10);
    expect(out[2]).toBeCloseTo(1 - 0.5 * (Math.E - 2), 15);
    // Only the value clamp (OpenRLHF's 10), k1 = −δ = (−25, 30, −1) → (−10, 10, −1), coef 1 on
    // rewards 0: r′ = −k′ = (10, −10, 1).
    const k1 = toRows(
      klInReward([[0, 0, 0]], oldL, refL, "k1", 1, {
        responseMask: [[true, true, true]],
        clamp: { value: 10 },
      }),
    )[0] as number[];
    expect(k1).toEqual([10, -10, 1]);
    // No clamp (null is none): r′ = −k1 = δ = (25, −30, 1).
    expect(
      toRows(
        klInReward([[0, 0, 0]], oldL, refL, "k1", 1, {
          responseMask: [[true, true, true]],
          clamp: null,
        }),
      ),
    ).toEqual([[25, -30, 1]]);
    expect(() =>
      klInReward([[0, 0, 0]], oldL, refL, "k1", 1, {
        responseMask: [[true, true, true]],
        clamp: { delta: 0 },
      }),
    ).toThrow(ConfigError);
  });

  test("identity: the clamped reward KL is the KL term policyLoss computes with the same clamp, every estimator", () => {
    // One token per call: with A = 0 the objective is 0 and token_sum gives loss = coef·k′, the
    // kernel's clamped term at lp = old (the reward KL is evaluated at the sampling policy).
    const deltas = [-40, -20, -10.5, -1, -1e-3, 0, 2e-3, 0.7, 9.99, 10, 21, 60];
    for (const kind of KL_ESTIMATORS)
      for (const clamp of [{ delta: 20, value: 10 }, { delta: 5 }, { value: 3 }]) {
        const old = -1;
        const refs = deltas.map((d) => old + d);
        const shaped = toRows(
          klInReward([deltas.map(() => 0)], [deltas.map(() => old)], [refs], kind, 1, {
            responseMask: [deltas.map(() => true)],
            clamp,
          }),
        )[0] as number[];
        deltas.forEach((d, j) => {
          const r = policyLoss(
            {
              ratio: "token",
              surrogate: "reinforce",
              clip: null,
              aggregation: "token_sum",
              kl: { kind, coef: 1, clamp },
            },
            {
              logprobs: [[old]],
              oldLogprobs: [[old]],
              advantages: [0],
              responseMask: [[true]],
              refLogprobs: [[old + d]],
            },
          );
          expect(0 - shaped[j]!, `${kind} ${JSON.stringify(clamp)} δ=${d}`).toBe(r.klLoss);
        });
      }
  });

  test("mask invariance: padding yields exactly 0 whatever it holds", () => {
    // mask [T, F]: (1.75, 0), with NaN junk in every stream at the padded position.
    const out = klInReward(
      [[2, Number.NaN]],
      [[-1, Number.NaN]],
      [[-1.5, Number.POSITIVE_INFINITY]],
      "k1",
      0.5,
      { responseMask: [[true, false]] },
    );
    expect(toRows(out)).toEqual([[1.75, 0]]);
  });

  test("rejects: rewards whose shape differs from old logprobs", () => {
    expect(() =>
      klInReward([[1, 2, 3]], old, ref, "k1", 0.5, { responseMask: [[true, true]] }),
    ).toThrow(ShapeError);
  });
});
