/**
 * Enforces docs/derivations/papo.md: hand-derived goldens of papoLoss in both forms, the clamp
 * conventions (inclusive edges, verl's ±20 / ±10 clamps), the masked-position contract of each
 * form, and one rejection per error code.
 */
import { describe, expect, test } from "vitest";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { type PapoInputs, papoLoss } from "../../src/losses/papo.js";
import type { PapoConfig } from "../../src/losses/papoConfig.js";
import { expectBitwise, expectClose, expectMaskInvariant } from "../_kit/index.js";

const LN2 = Math.LN2;
const LN15 = Math.log(1.5);
// The dapo parent: pg_clip 0.2/0.28 on the token ratio, token_mean, no KL.
const DAPO: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.28 },
  aggregation: "token_mean",
};
const trl: PapoConfig = {
  ...DAPO,
  perception: { gamma: 0.1, clip: 0.2, form: "trl" },
  doubleEntropy: { eta1: 0.03, eta2: 0.03 },
};
const official: PapoConfig = {
  ...DAPO,
  perception: { gamma: 0.01, clip: null, form: "official" },
  doubleEntropy: { eta1: 0.03, eta2: 0.03 },
};
// Lengths [2, 1]: N = 3, B·T = 4. On-policy (old = lp) so every ratio is 1; A = [1, −1].
// δ = lpm − lp = [[ln 2, −ln 2], [0, ln 1.5 (padding)]].
const mask = [
  [true, true],
  [true, false],
];
const lp = [
  [-1, -1],
  [-1, -1],
];
const lpm = [
  [-1 + LN2, -1 - LN2],
  [-1, -1 + LN15],
];
const base: PapoInputs = {
  logprobs: lp,
  maskedLogprobs: lpm,
  oldLogprobs: lp,
  advantages: [1, -1],
  responseMask: mask,
  entropies: [
    [1, 2],
    [3, 4],
  ],
  maskedEntropies: [
    [0.5, 0.5],
    [0.5, 0.5],
  ],
};
const TOL = { rtol: 1e-14, atol: 1e-16 };

function error(
  config: PapoConfig,
  inputs: PapoInputs,
): { name: string; code: string; arg: string } {
  try {
    papoLoss(config, inputs);
  } catch (e) {
    const err = e as { name: string; code: string; arg: string };
    return { name: err.name, code: err.code, arg: err.arg };
  }
  throw new Error("expected an error");
}

describe("papoLoss", () => {
  test("golden: trl form on a 2x2 ragged batch", () => {
    // Parent (dapo, token_mean, r = 1): L = −(1 + 1 − 1)/3 = −1/3; ∂/∂lp = −A/3 = [[−1/3, −1/3], [1/3, 0]].
    // k3 = [[1 − ln 2 = 0.3069 → clamped to 0.2 (no gradient), ln 2 − 1/2 = 0.1931],
    //       [0, 1/2 − ln 1.5 = 0.0945 (padding, read by TRL)]].
    // P = 0.1·(0.2 + ln 2 − 1/2 + 0 + 1/2 − ln 1.5)/4 = 0.005 + ln(4/3)/40 = 0.012192051811.
    // E = 0.03·(1 + 2 + 3 + 4)/4 + 0.03·0.5 = 0.09 (entropies are constants: no gradient).
    // ∂/∂lp += (γ/4)·(e^δ − 1) where the clamp passes: (0,1) 0.025·(−1/2), (1,1) 0.025·(+1/2);
    // ∂/∂lpm is its negative.
    const r = papoLoss(trl, base);
    const P = 0.005 + Math.log(4 / 3) / 40;
    expectClose(r.policyLoss, -1 / 3, TOL);
    expectClose(r.perceptionTerm, P, TOL);
    expectClose(r.entropyTerm as number, 0.09, TOL);
    expectClose(r.loss, -1 / 3 - P + 0.09, TOL);
    expectClose(
      r.perceptionPerToken,
      [
        [0.2, LN2 - 0.5],
        [0, 0.5 - LN15],
      ],
      TOL,
    );
    expectClose(
      r.gradLogprobs,
      [
        [-1 / 3, -1 / 3 - 0.0125],
        [1 / 3, 0.0125],
      ],
      TOL,
    );
    expectClose(
      r.gradMaskedLogprobs,
      [
        [0, 0.0125],
        [0, -0.0125],
      ],
      TOL,
    );
    // The clamped token passes no gradient to either stream.
    expect(r.gradMaskedLogprobs.data[0]).toBe(0);
  });

  test("golden: official form on a 2x2 ragged batch", () => {
    // Same parent: −1/3. k3 at response tokens only: [1 − ln 2, ln 2 − 1/2, 0] (no clip);
    // P = 0.01·Σ w·k = 0.01·(1/2)/3 = 1/600 (w = 1/3, the parent's token_mean weights).
    // Ĥ = −mean(lp) = 1, Ĥ_mask = −mean(lpm) = −((−1 + ln 2) + (−1 − ln 2) − 1)/3 = 1: E = 0.06.
    // L = −200/600 − 1/600 + 36/600 = −0.275.
    // ∂/∂lp = parent + (0.01/3)·(e^δ − 1) − 0.03/3: (0,0) −1/3 + 1/300 − 1/100 = −0.34;
    // (0,1) −1/3 − 1/600 − 1/100 = −0.345; (1,0) 1/3 − 1/100 = 97/300; padding 0.
    // ∂/∂lpm ≡ 0: the official masked stream is precomputed (sg).
    const junk = Number.NaN;
    const withJunk = (x: number[][]): number[][] =>
      x.map((row, b) => row.map((v, t) => (mask[b][t] ? v : junk)));
    const r = papoLoss(official, {
      ...base,
      logprobs: withJunk(lp),
      maskedLogprobs: withJunk(lpm),
      oldLogprobs: withJunk(lp),
      entropies: null,
      maskedEntropies: null,
    });
    expectClose(r.perceptionTerm, 1 / 600, TOL);
    expectClose(r.entropyTerm as number, 0.06, TOL);
    expectClose(r.loss, -0.275, TOL);
    expectClose(
      r.gradLogprobs,
      [
        [-0.34, -0.345],
        [97 / 300, 0],
      ],
      TOL,
    );
    expectBitwise(r.gradMaskedLogprobs.data, new Float64Array(4));
    expectClose(
      r.perceptionPerToken,
      [
        [1 - LN2, LN2 - 0.5],
        [0, 0],
      ],
      TOL,
    );
  });

  test("golden: official form saturates δ at ±20 and k3 at ±10 with zero gradient", () => {
    // δ = 25 → clamp(δ) = 20, k3 = e^20 − 21 → 10; δ = −15 → k3 = e^−15 + 14 → 10 (both no
    // gradient); δ = 2.5 → k3 = e^2.5 − 3.5 = 8.682493960703473 passes with slope e^2.5 − 1.
    const cfg: PapoConfig = { ...official, doubleEntropy: null };
    const r = papoLoss(cfg, {
      logprobs: [[-30, -1, -3]],
      maskedLogprobs: [[-5, -16, -0.5]],
      oldLogprobs: [[-30, -1, -3]],
      advantages: [0],
      responseMask: [[true, true, true]],
    });
    expectClose(r.perceptionPerToken, [[10, 10, Math.exp(2.5) - 3.5]], TOL);
    expectClose(r.perceptionTerm, (0.01 * (20 + Math.exp(2.5) - 3.5)) / 3, TOL);
    // Exactly zero (the sign is the parent's: A = 0 gives −0).
    expect([r.gradLogprobs.data[0], r.gradLogprobs.data[1]].map(Math.abs)).toEqual([0, 0]);
    expectClose(r.gradLogprobs.data[2] as number, (0.01 / 3) * (Math.exp(2.5) - 1), TOL);
  });

  test("tie: the clip clamp passes the gradient at k3 = clip exactly (torch's inclusive clamp)", () => {
    const d = -0.4 - -1;
    const kAtEdge = Math.exp(d) - d - 1;
    const run = (clip: number) =>
      papoLoss(
        { ...trl, perception: { gamma: 1, clip, form: "trl" }, doubleEntropy: null },
        {
          logprobs: [[-1]],
          maskedLogprobs: [[-0.4]],
          oldLogprobs: [[-1]],
          advantages: [0],
          responseMask: [[true]],
        },
      );
    // At the edge the value is clip and the gradient flows: ∂/∂lpm = −(e^δ − 1).
    const atEdge = run(kAtEdge);
    expect(atEdge.perceptionPerToken.data[0]).toBe(kAtEdge);
    expect(atEdge.gradMaskedLogprobs.data[0]).toBe(-(Math.exp(d) - 1));
    // One ulp below the value, the clamp saturates and passes nothing.
    const below = run(kAtEdge - Number.EPSILON * kAtEdge);
    expect(below.gradMaskedLogprobs.data[0]).toBe(0);
  });

  test("mask invariance: official form, junk at padding of every stream never reaches an output", () => {
    const inputs = {
      ...base,
      responseMask: mask,
      oldLogprobs: lp,
      advantages: [
        [1, 1],
        [-1, -1],
      ],
    };
    expectMaskInvariant((x: typeof inputs) => papoLoss(official, x), inputs);
    const r = papoLoss(official, inputs);
    expect([
      r.gradLogprobs.data[3],
      r.gradMaskedLogprobs.data[3],
      r.perceptionPerToken.data[3],
    ]).toEqual([0, 0, 0]);
  });

  test("mask invariance: trl form, padding of the parent-only streams is never read", () => {
    // oldLogprobs, [B, T] advantages and refLogprobs feed only the (masked) parent term.
    const cfg: PapoConfig = { ...trl, kl: { kind: "k3", coef: 0.04 } };
    const run = (junk: number) =>
      papoLoss(cfg, {
        ...base,
        oldLogprobs: [
          [-1, -1],
          [-1, junk],
        ],
        advantages: [
          [1, 1],
          [-1, junk],
        ],
        refLogprobs: [
          [-1.2, -0.8],
          [-0.9, junk],
        ],
      });
    const ref = run(0);
    for (const junk of [123, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])
      expectBitwise(run(junk), ref, `junk ${junk}`);
  });

  test("identity: trl form reads padding of logprobs, maskedLogprobs and entropies", () => {
    // Changing the padding entry of lpm moves loss and both gradients there: TRL's mean runs over B×T.
    const a = papoLoss(trl, base);
    const b = papoLoss(trl, { ...base, maskedLogprobs: [lpm[0] as number[], [-1, -1.05]] });
    expect(b.loss).not.toBe(a.loss);
    expect(b.gradLogprobs.data[3]).not.toBe(a.gradLogprobs.data[3]);
    expect(a.gradLogprobs.data[3]).not.toBe(0);
    const c = papoLoss(trl, {
      ...base,
      entropies: [
        [1, 2],
        [3, 5],
      ],
    });
    expectClose(c.loss - a.loss, 0.03 / 4, { rtol: 1e-12 });
  });

  test("rejects: one error per code, named by papoLoss", () => {
    const noEnt = { ...base, entropies: null };
    expect(error({ ...trl, perception: { gamma: -0.1, clip: 0.2, form: "trl" } }, base)).toEqual({
      name: "ConfigError",
      code: "E_CONFIG",
      arg: "config.perception.gamma",
    });
    expect(error(trl, noEnt)).toMatchObject({ code: "E_CONFIG", arg: "entropies" });
    expect(error({ ...trl, perception: { gamma: 0.1, clip: 0, form: "trl" } }, base)).toMatchObject(
      { code: "E_CONFIG", arg: "config.perception.clip" },
    );
    expect(error({ ...trl, doubleEntropy: { eta1: Number.NaN, eta2: 0 } }, base)).toMatchObject({
      code: "E_CONFIG",
      arg: "config.doubleEntropy.eta1",
    });
    expect(
      error({ ...trl, perception: { gamma: 0.1, clip: 0.2, form: "tlr" as "trl" } }, base),
    ).toMatchObject({
      name: "UnknownNameError",
      code: "E_UNKNOWN_NAME",
      arg: "config.perception.form",
    });
    expect(error(trl, { ...base, maskedLogprobs: [[-1, -1]] })).toMatchObject({
      name: "ShapeError",
      arg: "maskedLogprobs",
    });
    expect(
      error(trl, {
        ...base,
        responseMask: [
          [true, true],
          [false, false],
        ],
      }),
    ).toMatchObject({
      name: "MaskError",
      arg: "responseMask",
    });
    // trl reads padding, so NaN there is rejected; official skips padding but not response tokens.
    const nanPad = [lpm[0] as number[], [-1, Number.NaN]];
    expect(error(trl, { ...base, maskedLogprobs: nanPad })).toMatchObject({
      name: "NonFiniteError",
      arg: "maskedLogprobs",
    });
    expect(() => papoLoss(official, { ...base, maskedLogprobs: nanPad })).not.toThrow();
    expect(
      error(official, {
        ...base,
        maskedLogprobs: [
          [Number.NaN, -1],
          [-1, -1],
        ],
      }),
    ).toMatchObject({ name: "NonFiniteError", arg: "maskedLogprobs" });
    expect(error({ ...trl, kl: { kind: "k3", coef: 0.04 } }, base)).toMatchObject({
      code: "E_CONFIG",
      arg: "refLogprobs",
    });
    expect(
      error(
        { ...trl, perception: { gamma: 0.1, clip: null, form: "trl" } },
        {
          ...base,
          logprobs: [
            [-800, -1],
            [-1, -1],
          ],
        },
      ),
      // δ = −1 − (−800) = 799: e^799 overflows, and so does the exact k3 = e^δ − δ − 1 — finite
      // input whose result is not representable is an OverflowError (issue 9), no longer E_NONFINITE.
    ).toMatchObject({ name: "OverflowError", code: "E_OVERFLOW", arg: "perceptionPerToken" });
  });
});
