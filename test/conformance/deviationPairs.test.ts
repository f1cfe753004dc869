/**
 * deviationReport and the registered pairs of `polgrad deviations --pairs`
 * (docs/conformance/deviations.md#pairs), measured now.
 */
import { describe, expect, test } from "vitest";
import {
  DEVIATION_PAIRS,
  deviationReport,
  deviationReportSummary,
  measureDeviationPairs,
} from "../../src/conformance/deviationPairs.js";
import { DEVIATIONS } from "../../src/conformance/deviations.js";
import { ConfigError, UnknownNameError } from "../../src/errors.js";

describe("deviationReport", () => {
  test("golden: verl token-mean equals pg_clip with ratio_cap 3 and the pair's notes name both sides", () => {
    const r = deviationReport(
      {
        ratio: "token",
        surrogate: "pg_clip",
        clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 },
        aggregation: "token_mean",
      },
      "verl@1dda039b:vanilla:token-mean",
      { cases: 16 },
    );
    expect(r.cases).toBe(16);
    expect(r.maxLossRelDiff).toBeLessThanOrEqual(1e-12);
    expect(r.maxGradRelDiff).toBeLessThanOrEqual(1e-11);
    expect(r.notes).toEqual([
      "polgrad: surrogate=pg_clip, ratio=token, aggregation=token_mean, clip=ClipConfig(eps_low=0.2, eps_high=0.2, ratio_cap=3) (explicit PolicyLossConfig)",
      "framework: verl@1dda039b:vanilla:token-mean",
      expect.stringMatching(
        /^verl model of verl-project\/verl verl\/trainer\/ppo\/core_algos\.py at 1dda039b9c63: a polgrad model replayed against fixtures/,
      ),
    ]);
    const text = deviationReportSummary(r).split("\n");
    expect(text[0]).toMatch(
      /^conformance over 16 seeded cases: max loss rel diff \d\.\d{3}e[-+]\d+, max grad rel diff \d\.\d{3}e[-+]\d+, min grad cosine \d\.\d{9}, worst-case seed \d+$/,
    );
    expect(text.slice(1)).toEqual(r.notes);
  });

  test("golden: Dr.GRPO's norm_len 16 against verl's padded width 8 is the factor T/norm_len = 1/2 exactly", () => {
    const r = deviationReport(
      {
        ratio: "token",
        surrogate: "pg_clip",
        clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 },
        aggregation: "token_sum_norm",
        normLen: 16,
      },
      "verl@1dda039b:vanilla:seq-mean-token-sum-norm",
      { cases: 8, shapes: [[4, 8]] },
    );
    // polgrad divides by B·16, verl by B·8: loss_a / loss_b = 8/16 on every case.
    expect(r.lossRatioRange[0]).toBeCloseTo(0.5, 14);
    expect(r.lossRatioRange[1]).toBeCloseTo(0.5, 14);
    expect(r.gradCosineMin).toBeCloseTo(1, 12);
  });

  test("reject: an unknown algorithm name or model id", () => {
    expect(() => deviationReport("gropo", "verl@1dda039b:vanilla:token-mean")).toThrow(ConfigError);
    expect(() => deviationReport("grpo", "verl@1dda039b:vanila:token-mean")).toThrow(
      UnknownNameError,
    );
  });
});

describe("DEVIATION_PAIRS", () => {
  test("conformance: every matching pair matches to 1e-12 and every deviating pair deviates, measured now", () => {
    const measured = measureDeviationPairs();
    expect(measured.filter((p) => !p.holds).map((p) => p.title)).toEqual([]);
    expect(measured.filter((p) => p.expected === "match").length).toBeGreaterThanOrEqual(4);
  });

  test("identity: every pair names a registered deviation or none, and every loss deviation with a framework model has a pair", () => {
    const ids = new Set(DEVIATIONS.map((d) => d.id));
    for (const p of DEVIATION_PAIRS)
      if (p.deviation !== null) expect(ids.has(p.deviation)).toBe(true);
    const paired = new Set(DEVIATION_PAIRS.map((p) => p.deviation));
    for (const id of [
      "verl-sum-norm-padded-width",
      "verl-dual-clip-always-on",
      "verl-gspo-token-form",
      "verl-gspo-ignores-aggregation",
      "trl-cispo-absolute-cap",
    ])
      expect(paired.has(id)).toBe(true);
  });
});
