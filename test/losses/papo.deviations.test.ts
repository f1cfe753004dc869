/**
 * Enforces docs/derivations/papo.md#deviations: the two ways TRL v0.29.1's PAPO departs from the
 * equation, measured. (a) Its perception and entropy terms are `.mean()` over all B×T positions,
 * padding included: against the masked token mean they scale by N/(B·T) and add the padding's own
 * values / (B·T). (b) Its double-entropy term carries no gradient (entropies under no_grad), where
 * the official form's Monte-Carlo estimator moves ∂L/∂lp by −η1/N at every response token.
 */
import { describe, expect, test } from "vitest";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { type PapoInputs, papoLoss } from "../../src/losses/papo.js";
import type { PapoConfig } from "../../src/losses/papoConfig.js";
import { expectBitwise, expectClose } from "../_kit/index.js";

const DAPO: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.28 },
  aggregation: "token_mean",
};
const perception = { gamma: 0.1, clip: 0.2 };
const trl: PapoConfig = {
  ...DAPO,
  perception: { ...perception, form: "trl" },
  doubleEntropy: { eta1: 0.03, eta2: 0.03 },
};
// The same constants in the official form: a masked token mean (the dapo parent's token_mean).
const masked: PapoConfig = { ...trl, perception: { ...perception, form: "official" } };

// B = 4, T = 8, lengths [8, 5, 3, 2]: N = 18, B·T = 32, N/(B·T) = 0.5625.
const LENGTHS = [8, 5, 3, 2];
const B = 4;
const T = 8;
const N = 18;
const mask = LENGTHS.map((l) => Array.from({ length: T }, (_, t) => t < l));
const cell = (b: number, t: number, s: number) => Math.sin(1.3 * b + 0.7 * t + s);
const lp = mask.map((row, b) => row.map((_, t) => -2 + cell(b, t, 0)));
// δ ∈ [−0.9, 0.9] at response tokens (some k3 above the clip 0.2, some below); 0 at padding.
const lpm = mask.map((row, b) =>
  row.map((on, t) => (lp[b]![t] as number) + (on ? 0.9 * cell(b, t, 1) : 0)),
);
const H = mask.map((row, b) => row.map((on, t) => (on ? 2 + cell(b, t, 2) : 0)));
const Hm = mask.map((row, b) => row.map((on, t) => (on ? 2.5 + cell(b, t, 3) : 0)));
const inputs: PapoInputs = {
  logprobs: lp,
  maskedLogprobs: lpm,
  oldLogprobs: lp.map((row) => row.map((v) => v + 0.05)),
  advantages: [1, -0.5, 0.25, -2],
  responseMask: mask,
  entropies: H,
  maskedEntropies: Hm,
};

describe("papo deviations", () => {
  test("deviation: trl's perception and entropy terms are a mean over all B×T positions, padding included (factor N/(B·T) vs the masked token mean)", () => {
    const factor = N / (B * T);
    expect(factor).toBe(0.5625);
    // With zero-valued padding (δ = 0, H = 0 there) the whole difference is the divisor.
    const a = papoLoss(trl, inputs);
    const m = papoLoss(masked, inputs);
    expectClose(a.perceptionTerm / m.perceptionTerm, factor, { rtol: 1e-14 });
    let ent = 0;
    mask.forEach((row, b) => {
      row.forEach((on, t) => {
        if (on) ent += 0.03 * (H[b]![t] as number) + 0.03 * (Hm[b]![t] as number);
      });
    });
    expectClose((a.entropyTerm as number) / (ent / N), factor, { rtol: 1e-14 });
    // Per-token perception gradient: γ/(B·T)·(e^δ − 1) against γ/N·(e^δ − 1).
    const m0 = papoLoss({ ...masked, perception: { ...masked.perception, gamma: 0 } }, inputs);
    const ratios: number[] = [];
    for (let i = 0; i < B * T; i++) {
      // trl: ∂L/∂lpm = −γ/(B·T)·(e^δ − 1); official: ∂L/∂lp gains +γ/N·(e^δ − 1).
      const official = (m.gradLogprobs.data[i] as number) - (m0.gradLogprobs.data[i] as number);
      if (official !== 0) ratios.push(-(a.gradMaskedLogprobs.data[i] as number) / official);
    }
    expect(ratios.length).toBeGreaterThanOrEqual(5);
    for (const r of ratios) expectClose(r, factor, { rtol: 1e-12 });
    // With nonzero padding values the padding adds its own mean: P = (N/BT)·P_masked + γ·Σ_pad k̃/(BT).
    const padded = {
      ...inputs,
      maskedLogprobs: lp.map((row, b) =>
        row.map((v, t) => v + (mask[b]![t] ? (lpm[b]![t] as number) - v : -0.4)),
      ),
    };
    const p = papoLoss(trl, padded);
    const padK = Math.exp(-0.4) + 0.4 - 1;
    const nPad = B * T - N;
    expectClose(p.perceptionTerm, factor * m.perceptionTerm + (0.1 * nPad * padK) / (B * T), {
      rtol: 1e-14,
    });
  });

  test("deviation: trl's double-entropy term contributes exactly 0 to the gradient, the official mc estimator −η1/N per response token", () => {
    const without = papoLoss({ ...trl, doubleEntropy: null }, inputs);
    const withDe = papoLoss(trl, inputs);
    expectBitwise(withDe.gradLogprobs, without.gradLogprobs, "trl gradLogprobs");
    expectBitwise(withDe.gradMaskedLogprobs, without.gradMaskedLogprobs, "trl gradMaskedLogprobs");
    expect(withDe.loss).not.toBe(without.loss);
    // The official (equation) form: Ĥ = −mean(lp) has ∂/∂lp = −1/N at each response token.
    const off: PapoConfig = { ...trl, perception: { ...perception, form: "official" } };
    const o1 = papoLoss(off, inputs);
    const o0 = papoLoss({ ...off, doubleEntropy: null }, inputs);
    for (let i = 0; i < B * T; i++) {
      const on = mask[Math.floor(i / T)]![i % T];
      const d = (o1.gradLogprobs.data[i] as number) - (o0.gradLogprobs.data[i] as number);
      if (on) expectClose(d, -0.03 / N, { rtol: 1e-12 });
      else expect(d).toBe(0);
    }
  });
});
