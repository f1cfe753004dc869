/** Enforces docs/derivations/kl.md#kl-in-reward: goldens of klInReward (spec §4.4). */
import { describe, expect, test } from "vitest";
import { klInReward, ShapeError, toRows } from "../../src/index.js";

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
