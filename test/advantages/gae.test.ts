/**
 * Enforces docs/derivations/advantages.md#gae: GAE over right-padded responses (polgrad spec §5.4).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type GAEConfig, gae } from "../../src/advantages/index.js";
import { toRows } from "../../src/core/tensor.js";
import { ConfigError, MaskError, NonFiniteError, ShapeError } from "../../src/errors.js";
import {
  expectBitwise,
  expectClose,
  expectRejects,
  FC,
  filled,
  JUNK,
  type PaddedMask,
  paddedMasks,
  withJunk,
} from "./_arbitraries.js";

interface Batch {
  readonly pm: PaddedMask;
  readonly rewards: number[][];
  readonly values: number[][];
  readonly gamma: number;
  readonly lam: number;
}

const batches: fc.Arbitrary<Batch> = paddedMasks(5, 10).chain((pm) =>
  fc.record({
    pm: fc.constant(pm),
    rewards: filled(pm, -3, 3),
    values: filled(pm, -3, 3),
    gamma: fc.double({ min: 0, max: 1, noNaN: true }),
    lam: fc.double({ min: 0, max: 1, noNaN: true }),
  }),
);

/** O(T²) oracle from the definition: A_t = Σ_{s=t}^{L−1} (γλ)^{s−t} δ_s with V_L = 0. */
function gaeOracle(
  r: number[][],
  v: number[][],
  gamma: number,
  lam: number,
  lengths: number[],
): { adv: number[]; ret: number[] } {
  const T = (r[0] as number[]).length;
  const adv: number[] = [];
  const ret: number[] = [];
  r.forEach((row, b) => {
    const L = lengths[b] as number;
    const V = v[b] as number[];
    for (let t = 0; t < T; t++) {
      if (t >= L) {
        adv.push(0);
        ret.push(0);
        continue;
      }
      let acc = 0;
      for (let s = t; s < L; s++) {
        const next = s + 1 < L ? gamma * (V[s + 1] as number) : 0;
        acc += (gamma * lam) ** (s - t) * ((row[s] as number) + next - (V[s] as number));
      }
      adv.push(acc);
      ret.push(acc + (V[t] as number));
    }
  });
  return { adv, ret };
}

const half: GAEConfig = { gamma: 0.5, lam: 0.5 };

describe("gae", () => {
  test("golden: ragged batch at gamma = lam = 1/2 with junk in the padding", () => {
    // γλ = 1/4. Row 0 (L = 3), r = [1, 2, 3], V = [4, 2, 1]:
    //   δ₂ = 3 − 1 = 2 (V₃ = 0); δ₁ = 2 + ½·1 − 2 = ½; δ₀ = 1 + ½·2 − 4 = −2;
    //   A₂ = 2; A₁ = ½ + ¼·2 = 1; A₀ = −2 + ¼·1 = −1.75; R = A + V = [2.25, 3, 3].
    // Row 1 (L = 2), r = [1, 1, junk], V = [1, 1, junk]:
    //   δ₁ = 1 − 1 = 0; δ₀ = 1 + ½·1 − 1 = ½; A = [½, 0, 0]; R = [1.5, 1, 0].
    const r = [
      [1, 2, 3],
      [1, 1, JUNK],
    ];
    const v = [
      [4, 2, 1],
      [1, 1, JUNK],
    ];
    const mask = [
      [true, true, true],
      [true, true, false],
    ];
    const { advantages, returns } = gae(r, v, half, mask);
    expect(toRows(advantages)).toEqual([
      [-1.75, 1, 2],
      [0.5, 0, 0],
    ]);
    expect(toRows(returns)).toEqual([
      [2.25, 3, 3],
      [1.5, 1, 0],
    ]);
  });

  test("property: matches the O(T²) direct-sum oracle", () => {
    const prop = fc.property(batches, ({ pm, rewards, values, gamma, lam }) => {
      const { advantages, returns } = gae(rewards, values, { gamma, lam }, pm.mask);
      const oracle = gaeOracle(rewards, values, gamma, lam, pm.lengths);
      expectClose(advantages.data, oracle.adv, 1e-12, 1e-12);
      expectClose(returns.data, oracle.ret, 1e-12, 1e-12);
    });
    fc.assert(prop, FC);
  });

  test("identity: gamma = lam = 1 gives returns equal to the reward-to-go", () => {
    // δ_t telescopes: A_t = Σ_{s≥t} r_s − V_t, R_t = Σ_{s≥t} r_s.
    const prop = fc.property(batches, ({ pm, rewards, values }) => {
      const { advantages, returns } = gae(rewards, values, { gamma: 1, lam: 1 }, pm.mask);
      const rtg: number[] = [];
      const adv: number[] = [];
      rewards.forEach((row, b) => {
        const L = pm.lengths[b] as number;
        for (let t = 0; t < pm.cols; t++) {
          const g = t < L ? row.slice(t, L).reduce((s, x) => s + x, 0) : 0;
          rtg.push(g);
          adv.push(t < L ? g - ((values[b] as number[])[t] as number) : 0);
        }
      });
      expectClose(returns.data, rtg, 1e-12, 1e-12);
      expectClose(advantages.data, adv, 1e-12, 1e-12);
    });
    fc.assert(prop, FC);
  });

  test("mask invariance: padding values never reach the outputs (bitwise)", () => {
    const junk = fc.double({ min: -1e300, max: 1e300, noNaN: true });
    const prop = fc.property(batches, junk, junk, ({ pm, rewards, values, gamma, lam }, jr, jv) => {
      const base = gae(rewards, values, { gamma, lam }, pm.mask);
      const other = gae(
        withJunk(rewards, pm.mask, jr),
        withJunk(values, pm.mask, jv),
        { gamma, lam },
        pm.mask,
      );
      expectBitwise(other.advantages.data, base.advantages.data);
      expectBitwise(other.returns.data, base.returns.data);
    });
    fc.assert(prop, FC);
  });

  test("property: both outputs are exactly +0 at padding", () => {
    const prop = fc.property(batches, ({ pm, rewards, values, gamma, lam }) => {
      const { advantages, returns } = gae(rewards, values, { gamma, lam }, pm.mask);
      pm.mask.flat().forEach((on, i) => {
        if (!on) {
          expect(Object.is(advantages.data[i], 0)).toBe(true);
          expect(Object.is(returns.data[i], 0)).toBe(true);
        }
      });
    });
    fc.assert(prop, FC);
  });

  test("rejects: a mask that is not right-padded", () => {
    const mask = [[true, false, true]];
    expectRejects(
      () => gae([[1, 2, 3]], [[0, 0, 0]], { gamma: 1, lam: 1 }, mask),
      MaskError,
      "E_MASK",
      "responseMask",
    );
  });

  test("rejects: NaN or Inf anywhere in tokenRewards or values, padding included", () => {
    // Unlike the losses, gae checks whole tensors (polgrad spec §1.4, pitfall 15).
    const mask = [
      [true, true],
      [true, false],
    ];
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const r = [
        [1, 1],
        [1, bad],
      ];
      const v = [
        [0, 0],
        [0, 0],
      ];
      expectRejects(() => gae(r, v, half, mask), NonFiniteError, "E_NONFINITE", "tokenRewards");
      expectRejects(() => gae(v, r, half, mask), NonFiniteError, "E_NONFINITE", "values");
    }
  });

  test("rejects: tokenRewards or values that are not 2-D", () => {
    const flat = [0, 0, 0] as unknown as number[][];
    expectRejects(
      () => gae(flat, [[0, 0, 0]], half, [[true, true, true]]),
      ShapeError,
      "E_SHAPE",
      "tokenRewards",
    );
    expectRejects(
      () => gae([[0, 0, 0]], flat, half, [[true, true, true]]),
      ShapeError,
      "E_SHAPE",
      "values",
    );
  });

  test("rejects: values of a different shape than tokenRewards", () => {
    expectRejects(
      () => gae([[0, 0, 0]], [[0, 0, 0, 0]], half, [[true, true, true]]),
      ShapeError,
      "E_SHAPE",
      "values",
    );
  });

  test("rejects: a mask of a different shape", () => {
    expectRejects(
      () => gae([[0, 0, 0]], [[0, 0, 0]], half, [[true, true]]),
      ShapeError,
      "E_SHAPE",
      "responseMask",
    );
  });

  test("rejects: a mask that is not boolean", () => {
    expectRejects(
      () => gae([[0, 0]], [[0, 0]], half, [[1, 0.5]]),
      MaskError,
      "E_MASK",
      "responseMask",
    );
  });

  test("rejects: a mask row with no response token", () => {
    const mask = [
      [true, true],
      [false, false],
    ];
    expectRejects(
      () =>
        gae(
          [
            [0, 0],
            [0, 0],
          ],
          [
            [0, 0],
            [0, 0],
          ],
          half,
          mask,
        ),
      MaskError,
      "E_MASK",
      "responseMask",
    );
  });

  test("rejects: non-finite config.gamma or config.lam", () => {
    const ok = [[0, 0]];
    const mask = [[true, true]];
    expectRejects(
      () => gae(ok, ok, { gamma: Number.NaN, lam: 1 }, mask),
      ConfigError,
      "E_CONFIG",
      "config.gamma",
    );
    expectRejects(
      () => gae(ok, ok, { gamma: 1, lam: Number.POSITIVE_INFINITY }, mask),
      ConfigError,
      "E_CONFIG",
      "config.lam",
    );
  });
});
