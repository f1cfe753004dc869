/**
 * Enforces docs/derivations/variants.md#describe-format: polgrad's line structure with JS number
 * formatting, snake_case wire names and `none` for absent values.
 */
import { describe, expect, test } from "vitest";
import { pyValue } from "../../src/core/pyRepr.js";
import { UnknownNameError } from "../../src/errors.js";
import { ALGORITHM_NAMES, ALGORITHMS, describeAlgorithm } from "../../src/registry/index.js";

describe("describeAlgorithm", () => {
  test("golden: grpo renders seven lines in polgrad's order", () => {
    // The lines of polgrad 0.2.0's describe("grpo") (spec §6.4), Python reprs included.
    const spec = ALGORITHMS.grpo;
    expect(describeAlgorithm("grpo").split("\n")).toEqual([
      "grpo: pg_clip surrogate on token ratio",
      "clip: eps_low=0.2, eps_high=0.2, ratio_cap=None",
      "aggregation: seq_mean_token_mean",
      "kl: as-loss, k3, coef=0.04, aggregation=seq_mean_token_mean (inherited)",
      "advantage: grpo (GroupNormConfig(center=True, scale='std', eps=0.0001, unbiased=True))",
      "citation: DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models (arXiv 2402.03300)",
      `notes: ${spec.notes}`,
    ]);
  });

  test("golden: dr_grpo states norm_len None and how to set it", () => {
    const lines = describeAlgorithm("dr_grpo").split("\n");
    expect(lines[2]).toBe("aggregation: token_sum_norm (norm_len=None)");
    // The instruction line comes right after the aggregation line and names both spellings.
    expect(lines[3]).toMatch(/^norm_len is None: /);
    expect(lines[3]).toContain("{ ...spec.loss, normLen: <generation budget> }");
    expect(lines[3]).toContain('"norm_len"');
    expect(lines[3]).toContain("policyLoss");
    expect(lines[4]).toBe("kl: none");
    expect(lines[5]).toBe(
      "advantage: grpo (GroupNormConfig(center=True, scale='none', eps=0.0001, unbiased=True))",
    );
    expect(lines).toHaveLength(8);
  });

  test("golden: grpo_tis states a token-level cap-10 correction and cites the pr url", () => {
    const lines = describeAlgorithm("grpo_tis").split("\n");
    expect(lines).toContain("is_correction: TIS, token-level, cap=10.0");
    expect(lines).toContain(
      "citation: verl PR #2953: add Rollout-Training Mismatch Fix - Truncated importance sampling " +
        "(https://github.com/volcengine/verl/pull/2953)",
    );
    expect(lines).toHaveLength(8);
  });

  test("golden: rloo states no clip, an in-reward k1 kl and no advantage config", () => {
    const lines = describeAlgorithm("rloo").split("\n");
    expect(lines.slice(0, 5)).toEqual([
      "rloo: reinforce surrogate on token ratio",
      "clip: none",
      "aggregation: seq_mean_token_sum",
      "kl: in-reward, k1, coef=0.03 (apply via klInReward before advantage estimation)",
      "advantage: rloo (None)",
    ]);
  });

  test("golden: ppo, reinforce_pp and cispo render their configs with python reprs", () => {
    expect(describeAlgorithm("ppo")).toContain(
      "\nadvantage: gae (GAEConfig(gamma=0.99, lam=0.95))\n",
    );
    expect(describeAlgorithm("reinforce_pp")).toContain(
      "\nadvantage: reinforce_pp (ReinforcePPConfig(batch_norm=True, eps=1e-08))\n",
    );
    expect(describeAlgorithm("cispo")).toContain(
      "\nclip: eps_low=None, eps_high=0.2, ratio_cap=None\n",
    );
    expect(describeAlgorithm("gspo")).toContain(
      "\nclip: eps_low=0.0003, eps_high=0.0004, ratio_cap=None\n",
    );
  });

  test("property: every entry states its aggregation, clip, kl, advantage, citation and notes", () => {
    for (const name of ALGORITHM_NAMES) {
      const spec = ALGORITHMS[name];
      const text = describeAlgorithm(name);
      const lines = text.split("\n");
      expect(lines[0]).toBe(
        `${name}: ${spec.loss.surrogate} surrogate on ${spec.loss.ratio} ratio`,
      );
      expect(text).toContain(`aggregation: ${spec.loss.aggregation}`);
      const clip = spec.loss.clip;
      if (clip === null) expect(text).toContain("\nclip: none\n");
      else {
        expect(text).toContain(`eps_low=${pyValue(clip.epsLow)}`);
        expect(text).toContain(`eps_high=${pyValue(clip.epsHigh)}`);
      }
      if (spec.klPlacement === "loss") {
        expect(text).toContain(
          `\nkl: as-loss, ${spec.loss.kl?.kind}, coef=${pyValue(spec.loss.kl?.coef)}, aggregation=`,
        );
      } else if (spec.klPlacement === "reward") {
        expect(text).toContain(
          `\nkl: in-reward, ${spec.klReward?.kind}, coef=${pyValue(spec.klReward?.coef)}`,
        );
      } else {
        expect(text).toContain("\nkl: none\n");
      }
      const tis = spec.loss.isCorrection ?? null;
      if (tis !== null) expect(text).toContain(`cap=${pyValue(tis.cap)}`);
      else expect(text).not.toContain("is_correction");
      expect(text).toContain(`\nadvantage: ${spec.advantage} (`);
      expect(text).toContain(`\ncitation: ${spec.citation.title} (`);
      expect(lines.at(-1)).toBe(`notes: ${spec.notes}`);
      // One line each for the newer surrogates' settings and the log-ratio clamp.
      const extras = [spec.loss.sapo, spec.loss.dro, spec.loss.dppo, spec.loss.ratioClamp].filter(
        (x) => x != null,
      ).length;
      if (spec.loss.dppo != null)
        expect(text).toContain(`\ndppo: divergence='${spec.loss.dppo.divergence}'`);
      if (spec.loss.sapo != null) expect(text).toContain("\nsapo: tau_pos=");
      if (spec.loss.ratioClamp != null)
        expect(text).toContain(`\nratio_clamp: ${spec.loss.ratioClamp.level}-level log-ratio in [`);
      expect(lines.length).toBeGreaterThanOrEqual(7 + extras);
      expect(lines.length).toBeLessThanOrEqual(9 + extras);
    }
  });

  test("rejects: an unknown name", () => {
    expect(() => describeAlgorithm("gspo2")).toThrow(UnknownNameError);
  });

  test("golden: papo entries name their extension in both forms", () => {
    // The spec's loss is the parent; the PAPO terms are the extension, official form first.
    const lines = describeAlgorithm("papo_g")
      .split("\n")
      .filter((l) => l.startsWith("extension: "));
    expect(lines).toEqual([
      "extension: PAPO (official form), perception gamma=0.01, clip=None, double entropy none",
      "extension: PAPO (trl form), perception gamma=0.1, clip=0.2, double entropy eta1=0.03, eta2=0.03",
    ]);
    expect(ALGORITHMS.papo_g.papo?.official.perception.gamma).toBe(0.01);
    expect(ALGORITHMS.grpo.papo).toBeUndefined();
  });
});
