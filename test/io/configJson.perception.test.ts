/**
 * Enforces docs/io.md#perception-block: a loss config's `perception` block (TRL's PAPOConfig
 * names) maps to a PapoConfig — a preset first, then each explicit key; β replaces the parent's
 * KL term; unknown keys (with did-you-mean, also for the official code's and the paper's names),
 * wrong JSON types and out-of-range values are rejected naming the field path.
 */
import { describe, expect, test } from "vitest";
import { ConfigError, UnknownNameError } from "../../src/errors.js";
import {
  parseLossConfig,
  parsePolicyLossConfig,
  perceptionSettings,
  perceptionToJson,
} from "../../src/io/configJson.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { dapo } from "../../src/registry/algorithms/dapo.js";
import { grpo } from "../../src/registry/algorithms/grpo.js";
import { papoDLoss } from "../../src/registry/algorithms/papoD.js";
import { papoGLoss } from "../../src/registry/algorithms/papoG.js";
import { expectPolgradError } from "./_kit.js";

const G = { config: grpo.loss as PolicyLossConfig, name: "papo_g" };
const D = { config: dapo.loss as PolicyLossConfig, name: "papo_d" };

/** A parent written in the config JSON, with a k3 KL term at 0.04 (as the grpo parent). */
const PARENT = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { eps_low: 0.2, eps_high: 0.2 },
  aggregation: "seq_mean_token_mean",
};

const KL_004 = { kind: "k3", coef: 0.04, aggregation: null, normLen: null };

describe("parseLossConfig", () => {
  test("golden: each preset's constants land in the papo config", () => {
    // trl_v0_29_1 = TRL v0.29.1: γ 0.1 (papo_config.py:52), clamp 0.2 (papo_trainer.py:311),
    // η1 = η2 = 0.03 (papo_config.py:57-58), β 0.0 (grpo_config.py:562) → no KL term.
    const trl = parseLossConfig({ perception: { preset: "trl_v0_29_1" } }, "c.json", G);
    expect(trl.papo?.perception).toEqual({ gamma: 0.1, clip: 0.2, form: "trl" });
    expect(trl.papo?.doubleEntropy).toEqual({ eta1: 0.03, eta2: 0.03 });
    expect(trl.papo?.kl).toBeNull();
    expect(trl.policy.kl).toBeNull();
    // The rest of the parent is grpo's, untouched.
    expect(trl.papo?.clip).toEqual(grpo.loss.clip);
    expect(trl.papo?.aggregation).toBe("seq_mean_token_mean");
    expect(trl.perception).toEqual({
      preset: "trl_v0_29_1",
      form: "trl",
      perception_loss_weight: 0.1,
      perception_kl_clip: 0.2,
      der_loss_weight1: 0.03,
      der_loss_weight2: 0.03,
      beta: 0,
    });
    // official_papo_g / _d = the registered papoGLoss / papoDLoss, exactly (β null keeps the
    // parent's KL: grpo's k3 0.04, dapo's none).
    const og = parseLossConfig({ perception: { preset: "official_papo_g" } }, "c.json", G);
    expect(og.papo).toEqual(papoGLoss);
    expect(og.papo?.kl).toEqual(KL_004);
    const od = parseLossConfig({ perception: { preset: "official_papo_d" } }, "c.json", D);
    expect(od.papo).toEqual(papoDLoss);
    expect(od.papo?.kl).toBeNull();
    expect(Object.isFrozen(trl.papo)).toBe(true);
    expect(Object.isFrozen(trl.papo?.perception)).toBe(true);
  });

  test("golden: explicit fields override the preset", () => {
    const r = parseLossConfig(
      { perception: { preset: "trl_v0_29_1", perception_loss_weight: 0.05, beta: 0.04 } },
      "c.json",
      G,
    );
    // γ from the block, clamp and η from the preset, β 0.04 → TRL's k3 term at 0.04.
    expect(r.papo?.perception).toEqual({ gamma: 0.05, clip: 0.2, form: "trl" });
    expect(r.papo?.doubleEntropy).toEqual({ eta1: 0.03, eta2: 0.03 });
    expect(r.papo?.kl).toEqual(KL_004);
    const off = parseLossConfig(
      {
        perception: {
          preset: "trl_v0_29_1",
          form: "official",
          perception_kl_clip: null,
          der_loss_weight1: null,
          der_loss_weight2: null,
        },
      },
      "c.json",
      D,
    );
    expect(off.papo?.perception).toEqual({ gamma: 0.1, clip: null, form: "official" });
    expect(off.papo?.doubleEntropy).toBeNull();
    // PAPO-G official plus the 7B script's double entropy at 0.05 (both weights given).
    const h = parseLossConfig(
      { perception: { preset: "official_papo_g", der_loss_weight1: 0.05, der_loss_weight2: 0.05 } },
      "c.json",
      G,
    );
    expect(h.papo?.doubleEntropy).toEqual({ eta1: 0.05, eta2: 0.05 });
  });

  test("golden: without a preset form and perception_loss_weight are required, the others default to null", () => {
    const r = parseLossConfig(
      { ...PARENT, perception: { form: "official", perception_loss_weight: 0.02 } },
      "c.json",
    );
    expect(r.papo?.perception).toEqual({ gamma: 0.02, clip: null, form: "official" });
    expect(r.papo?.doubleEntropy).toBeNull();
    expect(r.papo?.kl).toBeNull();
    expect(r.perception?.preset).toBeNull();
    expect(r.perception?.beta).toBeNull();
    for (const key of ["form", "perception_loss_weight"]) {
      const block: Record<string, unknown> = { form: "trl", perception_loss_weight: 0.1 };
      delete block[key];
      const e = expectPolgradError(
        () => parseLossConfig({ ...PARENT, perception: block }, "c.json"),
        ConfigError,
        "E_CONFIG",
        `config.perception.${key}`,
      );
      expect(e.message).toContain("required without a preset");
    }
  });

  test("golden: beta replaces the parent's kl, an explicit config.kl outranks a preset's beta, both explicit is an error", () => {
    const withKl = { ...PARENT, kl: { kind: "k3", coef: 0.04 } };
    // Preset β 0 with an explicit config.kl: the config's KL stays, and the block reports β null.
    const keep = parseLossConfig({ ...withKl, perception: { preset: "trl_v0_29_1" } }, "c.json");
    expect(keep.papo?.kl).toEqual(KL_004);
    expect(keep.perception?.beta).toBeNull();
    // Without config.kl, the preset's β 0 removes the KL term; β 0.1 makes TRL's k3 term at 0.1.
    const none = parseLossConfig({ ...PARENT, perception: { preset: "trl_v0_29_1" } }, "c.json");
    expect(none.papo?.kl).toBeNull();
    const b = parseLossConfig(
      { ...PARENT, perception: { preset: "official_papo_g", beta: 0.1 } },
      "c.json",
    );
    expect(b.papo?.kl).toEqual({ kind: "k3", coef: 0.1, aggregation: null, normLen: null });
    expect(b.policy.kl).toEqual(b.papo?.kl);
    const e = expectPolgradError(
      () =>
        parseLossConfig({ ...withKl, perception: { preset: "trl_v0_29_1", beta: 0 } }, "c.json"),
      ConfigError,
      "E_CONFIG",
      "config.perception.beta",
    );
    expect(e.message).toContain("give it once");
    // beta null is "keep the parent's": no conflict.
    const n = parseLossConfig(
      { ...withKl, perception: { preset: "trl_v0_29_1", beta: null } },
      "c.json",
    );
    expect(n.papo?.kl).toEqual(KL_004);
  });

  test("identity: the resolved block parses back to the same papo config", () => {
    for (const [block, parent] of [
      [{ preset: "trl_v0_29_1", perception_loss_weight: 0.05 }, G],
      [{ preset: "official_papo_d", beta: 0.01 }, D],
      [{ form: "trl", perception_loss_weight: 0, der_loss_weight1: 0, der_loss_weight2: 1 }, G],
    ] as const) {
      const a = parseLossConfig({ perception: block }, "a.json", parent);
      const again = parseLossConfig({ perception: a.perception }, "b.json", parent);
      expect(again.papo).toEqual(a.papo);
      expect(perceptionToJson(perceptionSettings(a.perception!), a.perception!.preset)).toEqual(
        a.perception,
      );
    }
  });

  test("identity: without a perception block it is parsePolicyLossConfig", () => {
    const json = { ...PARENT, kl: { kind: "k2", coef: 0.5 } };
    const r = parseLossConfig(json, "c.json");
    expect(r.papo).toBeNull();
    expect(r.perception).toBeNull();
    expect(r.policy).toEqual(parsePolicyLossConfig(json, "c.json"));
    expect(parseLossConfig({ ...json, perception: null }, "c.json").papo).toBeNull();
  });

  test("rejects: unknown keys with a suggestion, including the official and paper names", () => {
    for (const [key, hint] of [
      ["perception_loss_wieght", "perception_loss_weight"],
      ["der_loss_weight3", "der_loss_weight1"],
      ["gamma", "perception_loss_weight"],
      ["kl_prcp_coef", "perception_loss_weight"],
      ["use_kl_prcp_clipping", "perception_kl_clip"],
      ["eta2", "der_loss_weight2"],
      ["kl_coef", "beta"],
    ] as const) {
      const e = expectPolgradError(
        () => parseLossConfig({ perception: { preset: "trl_v0_29_1", [key]: 1 } }, "c.json", G),
        ConfigError,
        "E_CONFIG",
        `config.perception.${key}`,
      );
      expect(e.message).toContain(`did you mean "${hint}"`);
      expect(e.message).toContain("(in c.json)");
    }
    const p = expectPolgradError(
      () => parseLossConfig({ perception: { preset: "trl_v0_29_2" } }, "c.json", G),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "config.perception.preset",
    );
    expect(p.message).toContain('did you mean "trl_v0_29_1"');
    expectPolgradError(
      () => parseLossConfig({ perception: { preset: "official_papo_g", form: "tlr" } }, "c", G),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "config.perception.form",
    );
    // A top-level typo is caught with the perception key among the known ones.
    const top = expectPolgradError(
      () => parseLossConfig({ ...PARENT, perceptoin: {}, perception: null }, "c.json"),
      ConfigError,
      "E_CONFIG",
      "config.perceptoin",
    );
    expect(top.message).toContain('did you mean "perception"');
  });

  test("rejects: with a parent the config holds only the perception block", () => {
    const e = expectPolgradError(
      () => parseLossConfig({ ratio: "token", perception: { preset: "trl_v0_29_1" } }, "c", G),
      ConfigError,
      "E_CONFIG",
      "config.ratio",
    );
    expect(e.message).toContain("the parent's settings come from papo_g");
    expectPolgradError(
      () => parseLossConfig({}, "c", G),
      ConfigError,
      "E_CONFIG",
      "config.perception",
    );
  });

  test("rejects: ill-typed and out-of-range values naming the field path", () => {
    const bad: readonly (readonly [string, unknown])[] = [
      ["perception_loss_weight", "0.1"],
      ["perception_loss_weight", -0.1],
      ["perception_loss_weight", null],
      ["perception_loss_weight", Number.POSITIVE_INFINITY],
      ["perception_loss_weight", Number.NaN],
      ["perception_kl_clip", 0],
      ["perception_kl_clip", -0.2],
      ["perception_kl_clip", "0.2"],
      ["der_loss_weight1", -0.03],
      ["der_loss_weight2", true],
      ["beta", -0.04],
      ["beta", [0.04]],
    ];
    for (const [key, value] of bad) {
      const e = expectPolgradError(
        () => parseLossConfig({ perception: { preset: "trl_v0_29_1", [key]: value } }, "c", G),
        ConfigError,
        "E_CONFIG",
        `config.perception.${key}`,
      );
      expect(e.message).toMatch(
        /^parseLossConfig: config\.perception\.\w+ must be a finite number/,
      );
    }
    // One double-entropy weight without the other: the missing one is named.
    const e = expectPolgradError(
      () =>
        parseLossConfig(
          { perception: { preset: "official_papo_g", der_loss_weight1: 0.05 } },
          "c",
          G,
        ),
      ConfigError,
      "E_CONFIG",
      "config.perception.der_loss_weight2",
    );
    expect(e.message).toContain("preset official_papo_g has none");
    // A block that is not an object (null would mean "no perception block").
    for (const v of [[], "trl", 3]) {
      expectPolgradError(
        () => parseLossConfig({ ...PARENT, perception: v }, "c"),
        ConfigError,
        "E_CONFIG",
        "config.perception",
      );
    }
  });

  test("rejects: image-masking keys are no loss settings", () => {
    for (const key of ["mask_ratio", "mask_type"]) {
      const e = expectPolgradError(
        () => parseLossConfig({ perception: { preset: "trl_v0_29_1", [key]: 0.3 } }, "c", G),
        ConfigError,
        "E_CONFIG",
        `config.perception.${key}`,
      );
      expect(e.message).toContain("masked_logprobs already reflect");
    }
  });
});
