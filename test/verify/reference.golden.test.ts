/**
 * Enforces that the equation-level references of src/verify/reference reproduce the hand-derived
 * goldens of the polgrad spec (docs/derivations/reference.md#goldens) — the oracle is checked
 * against arithmetic done by hand before it is used to check the closed forms.
 */
import { describe, expect, it } from "vitest";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { scalarValue } from "../../src/verify/autodiff.js";
import {
  klEstimatorRef,
  klLossRef,
  policyLossRef,
  reverseKlGradSurrogateRef,
  valueLossRef,
} from "../../src/verify/reference/index.js";
import { expectClose } from "../_kit/index.js";

const J = 123; // junk at padding
const close = { rtol: 1e-14, atol: 1e-15 };
// expectClose with no tolerance is exact numeric equality (the sign of a zero is not claimed).
const pgClip = (
  epsLow: number,
  epsHigh: number,
  ratioCap: number | null = null,
  aggregation: PolicyLossConfig["aggregation"] = "token_mean",
): PolicyLossConfig => ({
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow, epsHigh, ratioCap },
  aggregation,
});
const one = (config: PolicyLossConfig, lp: number, old: number, a: number) =>
  policyLossRef(config, {
    logprobs: [[lp]],
    oldLogprobs: [[old]],
    advantages: [a],
    responseMask: [[true]],
  });

describe("policyLossRef", () => {
  it("golden: the six pg_clip goldens of the spec", () => {
    // ClipConfig(0.2, 0.3): band [0.8, 1.3].
    // inside: r = e^{−0.7+0.9} = e^0.2, ℓ = −1.5·e^0.2, ∂ℓ/∂lp = −1.5·e^0.2.
    let out = one(pgClip(0.2, 0.3), -0.7, -0.9, 1.5);
    expectClose(out.loss, -1.5 * Math.exp(0.2), close);
    expectClose(out.grad, [[-1.5 * Math.exp(0.2)]], close);
    // clipped high: r = e^0.5 > 1.3, A = 2: min(2r, 2.6) = 2.6 ⇒ loss −2.6 exactly, grad 0.
    out = one(pgClip(0.2, 0.3), -0.2, -0.7, 2);
    expectClose([out.loss, out.grad.data[0]], [-2.6, 0]);
    // clipped low: r = e^−0.5 < 0.8, A = −1: min(−r, −0.8) = −0.8 ⇒ loss 0.8, grad 0.
    out = one(pgClip(0.2, 0.3), -1.5, -1.0, -1);
    expectClose([out.loss, out.grad.data[0]], [0.8, 0]);
    // dual clip c = 2: r = e, A = −1.5: min(−1.5e, −1.95) = −1.5e; max(−1.5e, −3) = −3 ⇒ loss 3, grad 0.
    out = one(pgClip(0.2, 0.3, 2), -0.4, -1.4, -1.5);
    expectClose([out.loss, out.grad.data[0]], [3, 0]);
    // ragged: r = [e^0.4 (A 1, clipped high ℓ −1.3), e^−0.4 (A −2, clipped low ℓ 1.6)], [e^0.1 (A −1, ℓ e^0.1)].
    const inputs = {
      logprobs: [
        [-0.3, -1.2],
        [-0.5, J],
      ],
      oldLogprobs: [
        [-0.7, -0.8],
        [-0.6, J],
      ],
      advantages: [
        [1, -2],
        [-1, J],
      ],
      responseMask: [
        [true, true],
        [true, false],
      ],
    };
    // token_mean, w = 1/3: loss (−1.3 + 1.6 + e^0.1)/3 = (0.3 + e^0.1)/3; grad only at (1, 0): e^0.1/3.
    out = policyLossRef(pgClip(0.2, 0.3), inputs);
    expectClose(out.loss, (0.3 + Math.exp(0.1)) / 3, close);
    expectClose(
      out.grad,
      [
        [0, 0],
        [Math.exp(0.1) / 3, 0],
      ],
      close,
    );
    expectClose(
      out.perTokenObjective,
      [
        [-1.3, 1.6],
        [Math.exp(0.1), 0],
      ],
      close,
    );
    expect(out.ratio.data[3]).toBe(1);
    // seq_mean_token_mean, w = [[1/4, 1/4], [1/2]]: loss 0.3/4 + e^0.1/2; grad e^0.1/2 at (1, 0).
    out = policyLossRef(pgClip(0.2, 0.3, null, "seq_mean_token_mean"), inputs);
    expectClose(out.loss, 0.3 / 4 + Math.exp(0.1) / 2, close);
    expectClose(
      out.grad,
      [
        [0, 0],
        [Math.exp(0.1) / 2, 0],
      ],
      close,
    );
  });

  it("golden: dual clip lets the gradient flow between the band and the cap", () => {
    // eps 0.2/0.2, c = 3: r = e^0.5 ∈ (1.2, 3], A = −1: min(−e^0.5, −1.2) = −e^0.5; max(·, −3) keeps
    // it ⇒ loss e^0.5 and ∂/∂lp = −A·r = +e^0.5 (not killed).
    const out = one(pgClip(0.2, 0.2, 3), -0.3, -0.8, -1);
    expectClose(out.loss, Math.exp(0.5), close);
    expectClose(out.grad, [[Math.exp(0.5)]], close);
  });

  it("golden: gspo worked example, sequence vs sequence_token gradients", () => {
    // z = (0.2, −0.2) ⇒ s = e^0 = 1; A = (1, −2); token_mean w = ½; pg: ℓ_t = −s·A_t.
    // loss = ½(−1 + 2) = 0.5 for both kinds.
    // sequence: ∂L/∂lp_t = −(Σ_τ w A_τ)·s/L = −(½ − 1)·½ = +0.25 at both tokens.
    // sequence_token: ∂L/∂lp_t = −w_t·A_t·s = (−0.5, +1.0).
    const inputs = {
      logprobs: [[-0.8, -1.2]],
      oldLogprobs: [[-1.0, -1.0]],
      advantages: [[1, -2]],
      responseMask: [[true, true]],
    };
    const base = { surrogate: "pg", clip: null, aggregation: "token_mean" } as const;
    const seq = policyLossRef({ ...base, ratio: "sequence" }, inputs);
    const tok = policyLossRef({ ...base, ratio: "sequence_token" }, inputs);
    expect([seq.loss, tok.loss]).toEqual([0.5, 0.5]);
    expectClose(seq.grad, [[0.25, 0.25]], close);
    expectClose(tok.grad, [[-0.5, 1.0]], close);
    expect(Array.from(tok.ratio.data)).toEqual(Array.from(seq.ratio.data));
  });

  it("golden: cispo one- and two-sided objectives and gradients", () => {
    // r = [e^0.5, e^−0.5, e^0.1], A = [1, −2, 0.5], lp = [−0.3, −1.0, −0.9], eps_high 0.2.
    // one-sided ŵ = min(r, 1.2) = [1.2, e^−0.5, e^0.1]; ℓ = −ŵ·A·lp = [0.36, −2e^−0.5, 0.45e^0.1].
    // gradient (token_mean, w = 1/3): −w·ŵ·A = [−0.4, 2e^−0.5/3, −0.5e^0.1/3].
    const inputs = {
      logprobs: [[-0.3, -1.0, -0.9]],
      oldLogprobs: [[-0.8, -0.5, -1.0]],
      advantages: [[1, -2, 0.5]],
      responseMask: [[true, true, true]],
    };
    const cfg = (epsLow: number | null): PolicyLossConfig => ({
      ratio: "token",
      surrogate: "cispo",
      clip: { epsLow, epsHigh: 0.2 },
      aggregation: "token_mean",
    });
    const e = Math.exp;
    let out = policyLossRef(cfg(null), inputs);
    expectClose(out.perTokenObjective, [[0.36, -2 * e(-0.5), 0.45 * e(0.1)]], close);
    expectClose(out.grad, [[-0.4, (2 * e(-0.5)) / 3, (-0.5 * e(0.1)) / 3]], close);
    // two-sided eps_low 0.1: ŵ = [1.2, 0.9, e^0.1]; ℓ_1 = −0.9·(−2)·(−1.0) = −1.8.
    out = policyLossRef(cfg(0.1), inputs);
    expectClose(out.perTokenObjective, [[0.36, -1.8, 0.45 * e(0.1)]], close);
  });

  it("golden: tis token and sequence weights", () => {
    // old − rollout = 0.5 per token, L = 2, r = 1, A = 1, pg: ℓ = −1·c.
    // token: c = min(e^0.5, 1.9) = e^0.5; sequence: c = min(e^{0.5+0.5}, 1.9) = 1.9 (un-normalised sum).
    const inputs = {
      logprobs: [[-1, -1]],
      oldLogprobs: [[-1, -1]],
      rolloutLogprobs: [[-1.5, -1.5]],
      advantages: [1],
      responseMask: [[true, true]],
    };
    const cfg = (level: "token" | "sequence"): PolicyLossConfig => ({
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
      isCorrection: { cap: 1.9, level },
    });
    expect(Array.from(policyLossRef(cfg("token"), inputs).perTokenObjective.data)).toEqual([
      -Math.exp(0.5),
      -Math.exp(0.5),
    ]);
    expect(Array.from(policyLossRef(cfg("sequence"), inputs).perTokenObjective.data)).toEqual([
      -1.9, -1.9,
    ]);
  });

  it("golden: kl term inherits aggregation and is reported unscaled", () => {
    // pg with A = 0 ⇒ surrogate 0; k1 with coef 0.5 on δ = ref − lp = −1 at both tokens of row 0
    // and at the one token of row 1; seq_mean_token_sum w = ½: kl = ½(1 + 1) + ½·1 = 1.5,
    // loss = 0.5·1.5 = 0.75, ∂/∂lp = coef·w·1 = 0.25.
    const out = policyLossRef(
      {
        ratio: "token",
        surrogate: "pg",
        clip: null,
        aggregation: "seq_mean_token_sum",
        kl: { kind: "k1", coef: 0.5 },
      },
      {
        logprobs: [
          [-1, -2],
          [-1, J],
        ],
        oldLogprobs: [
          [-1, -2],
          [-1, J],
        ],
        refLogprobs: [
          [-2, -3],
          [-2, J],
        ],
        advantages: [0, 0],
        responseMask: [
          [true, true],
          [true, false],
        ],
      },
    );
    expect([out.loss, out.klLoss]).toEqual([0.75, 1.5]);
    expect(Array.from(out.grad.data)).toEqual([0.25, 0.25, 0.25, 0]);
  });
});

describe("valueLossRef", () => {
  it("golden: v = (1.5, 0.5), v_old = 1, R = 0, ε = 0.2", () => {
    // token 0: e = 2.25, v_c = 1.2, e_c = 1.44 ⇒ ℓ = ½·2.25 = 1.125, ∂ℓ/∂v = v − R = 1.5.
    // token 1: e = 0.25, v_c = 0.8, e_c = 0.64 ⇒ ℓ = 0.32 (clipped, v_c constant) ⇒ ∂ℓ/∂v = 0.
    // token_mean: loss (1.125 + 0.32)/2 = 0.7225, grad ½·(1.5, 0) = (0.75, 0), clipped_frac ½.
    const args = [[[1.5, 0.5]], [[1, 1]], [[0, 0]], [[true, true]]] as const;
    const clipped = valueLossRef(...args, { clipEps: 0.2, aggregation: "token_mean" });
    expect(clipped.loss).toBe(0.7225);
    expectClose(clipped.grad, [[0.75, 0]]);
    expect(clipped.clippedFrac).toBe(0.5);
    // unclipped: (1.125 + 0.125)/2 = 0.625, grad (0.75, 0.25).
    const plain = valueLossRef(...args, { clipEps: null, aggregation: "token_mean" });
    expect([plain.loss, ...plain.grad.data]).toEqual([0.625, 0.75, 0.25]);
    // token_sum_norm, ℓ = 4, B = 1: 1.445/4 = 0.36125.
    expectClose(
      valueLossRef(...args, { clipEps: 0.2, aggregation: "token_sum_norm", normLen: 4 }).loss,
      0.36125,
      close,
    );
  });
});

describe("klLossRef", () => {
  it("golden: estimator values at δ = (−1, 0.5)", () => {
    // k1 = −δ = [1, −0.5]; k2 = δ²/2 = [0.5, 0.125]; k3 = expm1(δ) − δ = [e^−1, e^0.5 − 1.5]; abs = [1, 0.5].
    const at = (kind: Parameters<typeof klEstimatorRef>[0]) =>
      [-1, 0.5].map((d) => scalarValue(klEstimatorRef(kind, d)));
    expect(at("k1")).toEqual([1, -0.5]);
    expect(at("k2")).toEqual([0.5, 0.125]);
    expectClose(at("k3"), [Math.exp(-1), Math.exp(0.5) - 1.5], { rtol: 1e-13 });
    expect(at("abs")).toEqual([1, 0.5]);
  });

  it("golden: one token per estimator, loss and gradient", () => {
    // lp −0.5, ref −1.5 ⇒ δ = −1. ∂k/∂lp = −k'(δ): k1 1; k2 −δ = 1; k3 −expm1(δ) = 1 − e^−1; abs −sign(δ) = 1.
    const run = (kind: Parameters<typeof klLossRef>[2]) => {
      const out = klLossRef([[-0.5]], [[-1.5]], kind, "token_mean", { responseMask: [[true]] });
      return [out.loss, out.grad.data[0]];
    };
    expectClose(run("k1"), [1, 1]);
    expectClose(run("k2"), [0.5, 1]);
    expectClose(run("k3"), [Math.exp(-1), 1 - Math.exp(-1)], { rtol: 1e-15 });
    expectClose(run("abs"), [1, 1]);
    // abs at δ = 0: value 0 and abs'(0) = 0 ⇒ gradient 0.
    expectClose(klLossRef([[-1]], [[-1]], "abs", "token_mean", { responseMask: [[true]] }).grad, [
      [0],
    ]);
  });
});

describe("reverseKlGradSurrogateRef", () => {
  it("golden: lp −0.5, ref −1.5 gives loss −0.5", () => {
    // sg[lp − ref]·lp = 1·(−0.5) = −0.5; ∂/∂lp = sg[lp − ref] = 1.
    const out = reverseKlGradSurrogateRef([[-0.5, J]], [[-1.5, J]], "token_mean", {
      responseMask: [[true, false]],
    });
    expect([out.loss, ...out.grad.data]).toEqual([-0.5, 1, 0]);
  });
});
