/**
 * Enforces docs/derivations/papo.md#settings-and-presets: the PAPO presets carry TRL v0.29.1's
 * defaults and the official code's registered constants, each constant lands where papoLoss uses
 * it (hand-derived goldens), and withPapoSettings turns β into the parent's KL term.
 */
import { describe, expect, test } from "vitest";
import { ConfigError } from "../../src/errors.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { papoLoss } from "../../src/losses/papo.js";
import { PAPO_PRESETS, withPapoSettings } from "../../src/losses/papoConfig.js";
import { dapo } from "../../src/registry/algorithms/dapo.js";
import { grpo } from "../../src/registry/algorithms/grpo.js";
import { papoDLoss } from "../../src/registry/algorithms/papoD.js";
import { papoGLoss } from "../../src/registry/algorithms/papoG.js";
import { expectPolgradError } from "../io/_kit.js";

const GRPO = grpo.loss as PolicyLossConfig;
const DAPO = dapo.loss as PolicyLossConfig;

/**
 * B = 1, T = 3, the last position padding (finite, as the trl form reads it). old = lp and
 * ref = lp, so the ratio is 1 and every KL value is k3(0) = 0; A = 1. δ = lpm − lp = [3, 0, 0]:
 * k3(3) = e³ − 3 − 1 = 16.0855… is past both the trl clamp 0.2 and the official ±10 clamp, and
 * k3(0) = 0 with slope e⁰ − 1 = 0, so no perception gradient reaches logprobs.
 */
const lp = [[-4, -1, -1]];
const INPUTS = {
  logprobs: lp,
  oldLogprobs: lp,
  refLogprobs: lp,
  advantages: [1],
  responseMask: [[1, 1, 0]],
  maskedLogprobs: [[-1, -1, -1]],
  entropies: [[1, 3, 0]],
  maskedEntropies: [[2, 2, 0]],
};

describe("PAPO_PRESETS", () => {
  test("golden: trl_v0_29_1 carries papoconfig's and grpoconfig's v0.29.1 defaults", () => {
    // git -C TRL.git show v0.29.1:<file>:
    //   trl/experimental/papo/papo_config.py:52  perception_loss_weight: float = 0.1
    //   trl/experimental/papo/papo_trainer.py:311 torch.clamp(perception_kl, min=0.0, max=0.2)
    //   trl/experimental/papo/papo_config.py:57-58 der_loss_weight1 = der_loss_weight2 = 0.03
    //   trl/trainer/grpo_config.py:561-562 beta: float = field(default=0.0, ...)
    //   papo_trainer.py:318 (loss - perception_loss + der_loss).mean() over all B×T: the trl form.
    expect(PAPO_PRESETS.trl_v0_29_1).toEqual({
      perception: { gamma: 0.1, clip: 0.2, form: "trl" },
      doubleEntropy: { eta1: 0.03, eta2: 0.03 },
      beta: 0,
    });
    expect(Object.isFrozen(PAPO_PRESETS.trl_v0_29_1.perception)).toBe(true);
  });

  test("identity: the official presets are the registered papo_g and papo_d constants", () => {
    expect(PAPO_PRESETS.official_papo_g.perception).toEqual(papoGLoss.perception);
    expect(PAPO_PRESETS.official_papo_g.doubleEntropy).toEqual(papoGLoss.doubleEntropy);
    expect(PAPO_PRESETS.official_papo_d.perception).toEqual(papoDLoss.perception);
    expect(PAPO_PRESETS.official_papo_d.doubleEntropy).toEqual(papoDLoss.doubleEntropy);
    // β null: the official parent's KL is the parent's setting.
    expect(withPapoSettings(GRPO, PAPO_PRESETS.official_papo_g)).toEqual(papoGLoss);
    expect(withPapoSettings(DAPO, PAPO_PRESETS.official_papo_d)).toEqual(papoDLoss);
  });

  test("golden: each preset evaluates papoLoss with its constants (arithmetic shown)", () => {
    // Parent (grpo or dapo, ratio 1, A = 1): −r·A = −1 at both response tokens; seq_mean_token_mean
    // and token_mean both give −1; KL 0.04·k3(0) = 0 (grpo) or none. ∂/∂lp = −1/2 per token.
    //
    // trl_v0_29_1 on grpo (β 0 → no KL term): k̃ = clamp(k3, 0, 0.2) = [0.2, 0, 0 (pad)];
    // γ·P = 0.1·(0.2 + 0 + 0)/(B·T = 3) = 0.02/3 = 0.00666…; without the clamp it would be
    // 0.1·16.0855/3 ≈ 0.536. E = 0.03·(1 + 3 + 0)/3 + 0.03·(2 + 2 + 0)/3 = 0.04 + 0.04 = 0.08.
    // loss = −1 − 0.02/3 + 0.08 = −0.926666…; gradient = the parent's (k̃ saturated or slope 0).
    const trl = papoLoss(withPapoSettings(GRPO, PAPO_PRESETS.trl_v0_29_1), INPUTS);
    expect(trl.policyLoss).toBe(-1);
    expect(trl.perceptionTerm).toBeCloseTo(0.02 / 3, 16);
    expect(trl.entropyTerm).toBeCloseTo(0.08, 16);
    expect(trl.loss).toBeCloseTo(-1 - 0.02 / 3 + 0.08, 15);
    expect(Array.from(trl.perceptionPerToken.data)).toEqual([0.2, 0, 0]);
    expect(Array.from(trl.gradLogprobs.data)).toEqual([-0.5, -0.5, 0]);

    // official_papo_g on grpo: k3 clamped to ±10 → [10, 0], no clip; P = Σ w·k̃ with the parent's
    // weights w = 1/2: P = 5, γ·P = 0.01·5 = 0.05; no double entropy. loss = −1 − 0.05 = −1.05.
    const og = papoLoss(withPapoSettings(GRPO, PAPO_PRESETS.official_papo_g), INPUTS);
    expect(og.policyLoss).toBe(-1);
    expect(og.perceptionTerm).toBeCloseTo(0.05, 16);
    expect(og.entropyTerm).toBeNull();
    expect(og.loss).toBeCloseTo(-1.05, 15);
    expect(Array.from(og.perceptionPerToken.data)).toEqual([10, 0, 0]);

    // official_papo_d on dapo: γ·P = 0.05 as above; E = η1·(−mean_resp lp) + η2·(−mean_resp lpm)
    // = 0.03·(5/2) + 0.03·(2/2) = 0.075 + 0.03 = 0.105; loss = −1 − 0.05 + 0.105 = −0.945.
    // ∂E/∂lp = −η1/N = −0.03/2 = −0.015 per response token: gradient −0.5 − 0.015 = −0.515.
    const od = papoLoss(withPapoSettings(DAPO, PAPO_PRESETS.official_papo_d), INPUTS);
    expect(od.entropyTerm).toBeCloseTo(0.105, 16);
    expect(od.loss).toBeCloseTo(-0.945, 15);
    const g = Array.from(od.gradLogprobs.data);
    expect(g[0]).toBeCloseTo(-0.515, 16);
    expect(g[1]).toBeCloseTo(-0.515, 16);
    expect(g[2]).toBe(0);
  });
});

describe("withPapoSettings", () => {
  test("golden: beta 0 drops the parent's kl term, beta > 0 sets trl's k3 term, null keeps the parent's", () => {
    const s = PAPO_PRESETS.trl_v0_29_1;
    expect(GRPO.kl).toEqual({ kind: "k3", coef: 0.04, aggregation: null, normLen: null });
    expect(withPapoSettings(GRPO, s).kl).toBeNull();
    expect(withPapoSettings(GRPO, { ...s, beta: null }).kl).toEqual(GRPO.kl);
    // dapo has no KL; β 0.02 adds TRL's per_token_loss + β·k3, aggregated with the loss.
    expect(DAPO.kl ?? null).toBeNull();
    expect(withPapoSettings(DAPO, { ...s, beta: 0.02 }).kl).toEqual({
      kind: "k3",
      coef: 0.02,
      aggregation: null,
      normLen: null,
    });
    const c = withPapoSettings(DAPO, { ...s, beta: 0.02 });
    expect(c.clip).toEqual(DAPO.clip);
    expect(c.perception).toEqual(s.perception);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.kl)).toBe(true);
  });

  test("rejects: a negative or non-finite beta", () => {
    for (const beta of [-0.04, Number.NaN, Number.POSITIVE_INFINITY, "0.04"]) {
      const e = expectPolgradError(
        () =>
          withPapoSettings(GRPO, { ...PAPO_PRESETS.trl_v0_29_1, beta: beta as unknown as number }),
        ConfigError,
        "E_CONFIG",
        "settings.beta",
      );
      expect(e.message).toMatch(
        /^withPapoSettings: settings\.beta must be a finite number >= 0; got /,
      );
    }
  });
});
