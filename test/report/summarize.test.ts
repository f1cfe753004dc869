/**
 * summarize (docs/report.md): each result type is recognised by its fields and gives the lines
 * its renderer prints (polgrad's summary(), no trailing newline); an unknown object is a ConfigError.
 */
import { describe, expect, test } from "vitest";
import { compareLosses } from "../../src/conformance/compare.js";
import { deviationReport, deviationReportSummary } from "../../src/conformance/deviationPairs.js";
import { createRng } from "../../src/core/rng.js";
import { clipReport } from "../../src/diagnostics/clipping.js";
import { entropyTrend, tokenEntropyEstimate } from "../../src/diagnostics/entropy.js";
import { importanceEss } from "../../src/diagnostics/ess.js";
import { lengthBiasProbe } from "../../src/diagnostics/lengthBias.js";
import { logprobMismatch } from "../../src/diagnostics/mismatch.js";
import { ConfigError } from "../../src/errors.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import {
  renderClipText,
  renderEntropyText,
  renderEssText,
  renderLengthBiasText,
  renderMismatchText,
  renderTrendText,
  summarize,
} from "../../src/report/index.js";
import { assertConforms } from "../../src/testing/index.js";

const M = [
  [true, true],
  [true, false],
];

describe("summarize", () => {
  test("golden: each result type gives its polgrad summary lines", () => {
    const ess = importanceEss(
      [
        [0.5, -0.5],
        [Math.LN2, Number.NaN],
      ],
      [
        [0, 0],
        [0, 0],
      ],
      M,
    );
    expect(summarize(ess)).toBe(renderEssText(ess));
    expect(summarize(ess)).toBe(
      "importance ESS (sequence level): ESS=1.8 of n=2 (ESS/n=0.9)\nlog-weights: mean=0.3466 std=0.4901 min=0 max=0.6931",
    );
    const clip = clipReport(
      [
        [1.5, 0.5],
        [1, 1],
      ],
      [1, -1],
      M,
      { epsLow: 0.2, epsHigh: 0.3 },
    );
    expect(summarize(clip)).toBe(renderClipText(clip));
    expect(summarize(clip).split("\n")[0]).toBe(
      "PG_CLIP band [1 - eps_low, 1 + eps_high] = [0.8, 1.3]; fractions are of all response tokens",
    );
    const ent = tokenEntropyEstimate(
      [
        [-1, -2],
        [-4, 0],
      ],
      M,
    );
    expect(summarize(ent)).toBe(renderEntropyText(ent));
    const trend = entropyTrend(
      Array.from({ length: 30 }, (_, t) => 5 - 0.1 * t),
      { window: 30, nPerm: 19, rng: createRng(1) },
    );
    expect(summarize(trend)).toBe(renderTrendText(trend));
    const mm = logprobMismatch(
      [
        [-1, -2],
        [-1.5, 0],
      ],
      [
        [-1.2, -1.4],
        [-2.5, 0],
      ],
      M,
    );
    expect(summarize(mm)).toBe(renderMismatchText(mm));
    const lb = lengthBiasProbe(
      [3, 3, 4],
      [
        [true, false, false],
        [true, true, false],
        [true, true, true],
      ],
      { aggMode: "seq_mean_token_sum" },
    );
    expect(summarize(lb)).toBe(renderLengthBiasText(lb));
    const cfg = {
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      aggregation: "token_mean",
    } as const;
    const conf = assertConforms((i) => policyLoss(cfg, i), cfg, { nCases: 2 });
    expect(summarize(conf).split("\n")[0]).toMatch(
      /^conformance over 2 seeded cases: max loss rel diff 0\.000e\+00,/,
    );
    const dev = deviationReport(cfg, "openrlhf@3c3be623:ppo:token", { cases: 2 });
    expect(summarize(dev).split("\n").slice(1)).toEqual(dev.notes);
    const cmp = compareLosses(
      (i) => policyLoss(cfg, i),
      (i) => policyLoss(cfg, i),
      { cases: 2 },
    );
    expect(summarize(cmp)).toMatch(
      /^conformance over 2 seeded cases: max loss rel diff 0\.000e\+00, max grad rel diff 0\.000e\+00, min grad cosine 1\.000000000, worst-case seed \d+$/,
    );
  });

  test("golden: each renderer's text is polgrad's summary() byte for byte, with no trailing newline", () => {
    // Recorded: each expected string is polgrad 0.2.0's `summary()` (SaifPunjwani/polgrad 27613d8,
    // /usr/bin/python3 with torch 1.13) of the dataclass built from the same field values in
    // snake_case, e.g. `ESSReport(level="sequence", n=64, ess=1.0625, ess_ratio=0.015625,
    // log_weight_mean=-0.0, log_weight_std=2.5e-05, log_weight_min=-123456.0,
    // log_weight_max=0.00012345).summary()`. The values probe the formats: exact decimal ties
    // (1.0625 → 1.062, 0.015625 → 0.01562, 2^-10 → 0.000976562: half to even), −0, 1e16, the
    // `:g` of alpha (1e-05, 0.123457).
    const ess = {
      level: "sequence",
      n: 64,
      ess: 1.0625,
      essRatio: 0.015625,
      logWeightMean: -0,
      logWeightStd: 2.5e-5,
      logWeightMin: -123456,
      logWeightMax: 0.00012345,
    } as const;
    expect(renderEssText(ess)).toBe(
      "importance ESS (sequence level): ESS=1.062 of n=64 (ESS/n=0.01562)\nlog-weights: mean=-0 std=2.5e-05 min=-1.235e+05 max=0.0001234",
    );
    const mm = {
      nTokens: 7,
      gapMean: 0.015625,
      gapStd: 1.0625,
      gapAbsMax: 7,
      gapQuantiles: [-7, -0.5, -0.0625, 0, 0.0625, 0.5, 1e16],
      klK1: 0,
      klK2: 2 ** -20,
      klK3: 0.1,
      klK3TrainerRollout: Math.PI,
      seqLogRatioMean: -3.5,
      seqLogRatioStd: 123456789,
      seqLogRatioAbsMax: 1e-5,
      catastrophicCount: 2,
      catastrophicIndices: [],
      pplRatio: 1.0009765625,
    };
    expect(renderMismatchText(mm)).toBe(
      "logprob mismatch (Δ = trainer - rollout) over n_tokens=7\ngap: mean=0.01562 std=1.062 |max|=7 ppl_ratio=1.001\ngap quantiles: q01=-7 q05=-0.5 q25=-0.0625 q50=0 q75=0.0625 q95=0.5 q99=1e+16\nKL(rollout‖trainer) (tokens ~ rollout): k1=0 k2=9.537e-07 k3=0.1; trainer→rollout k3=3.142\nsequence log-ratio: mean=-3.5 std=1.235e+08 |max|=1e-05\ncatastrophic tokens: 2",
    );
    const clip = {
      epsLow: 0.2,
      epsHigh: 0.28,
      ratioCap: null,
      fracPosAdvClippedHigh: 0.015625,
      fracPosAdvClippedLow: 0,
      fracNegAdvClippedHigh: 1 / 3,
      fracNegAdvClippedLow: 0.5,
      gradientKilledMask: { rows: 0, cols: 0, data: new Uint8Array(0) },
      gradientKilledFrac: 0.0625,
      clipKilledFrac: 0.046875,
      zeroAdvantageFrac: 0.015625,
    };
    expect(renderClipText(clip)).toBe(
      "PG_CLIP band [1 - eps_low, 1 + eps_high] = [0.8, 1.28]; fractions are of all response tokens\nA > 0: clipped high 0.01562 (gradient killed), clipped low 0 (gradient flows)\nA < 0: clipped low 0.5 (gradient killed), clipped high 0.3333 (gradient flows unless dual-clip caps it)\ngradient killed on 0.0625 of response tokens: 0.04688 by the clip (band or dual-clip cap), 0.01562 with zero advantage (no gradient whatever the ratio)",
    );
    const ent = {
      nTokens: 12,
      entropyEstimate: 2.0625,
      perSeqEntropy: new Float64Array([0.015625, 3, 1.0625]),
      estimator: "mc_cross_entropy",
    } as const;
    expect(renderEntropyText(ent)).toBe(
      "token entropy estimate: 2.062 nats over n_tokens=12 (estimator=mc_cross_entropy)\nper-sequence entropy: min=0.01562 max=3 (B=3)",
    );
    const trend = {
      slope: -0.0015,
      changepointIndex: 139,
      cusumStat: 12.0625,
      threshold: 4.5,
      alpha: 1e-5,
      nPerm: 999,
    };
    expect(renderTrendText(trend)).toBe(
      "entropy trend: Theil-Sen slope=-0.0015 per step\nCUSUM stat=12.06 vs threshold=4.5 (alpha=1e-05, n_perm=999)\nchangepoint: detected at step 139",
    );
    const still = {
      slope: 0,
      changepointIndex: null,
      cusumStat: 0.015625,
      threshold: 1e6,
      alpha: 0.123456789,
      nPerm: 19,
    };
    expect(renderTrendText(still)).toBe(
      "entropy trend: Theil-Sen slope=0 per step\nCUSUM stat=0.01562 vs threshold=1e+06 (alpha=0.123457, n_perm=19)\nchangepoint: none detected",
    );
    const lb = {
      slope: 0.015625,
      slopeSe: 0.0012345,
      ciLow: -1.0625,
      ciHigh: 2.5e-7,
      intercept: -0,
      n: 4,
      perSeqWeightSum: new Float64Array([0.25, 1.0625, 0.5, 2]),
      perSeqLength: new Int32Array([3, 1, 24, 7]),
    };
    expect(renderLengthBiasText(lb)).toBe(
      "length-bias probe: slope=0.01562 (HC3 se=0.001234, 95% CI [-1.062, 2.5e-07]), intercept=-0, n=4\nper-seq weight sums in [0.25, 2]; lengths in [1, 24]",
    );
    const dev = {
      maxLossRelDiff: 1.0625,
      maxGradRelDiff: 0,
      gradCosineMin: 0.0009765625,
      cases: 64,
      worstCaseSeed: 1234567,
      lossRatioRange: [1, 1] as const,
      notes: ["polgrad: a note", "framework: verl/pg_clip_token_mean"],
    };
    expect(deviationReportSummary(dev)).toBe(
      "conformance over 64 seeded cases: max loss rel diff 1.062e+00, max grad rel diff 0.000e+00, min grad cosine 0.000976562, worst-case seed 1234567\npolgrad: a note\nframework: verl/pg_clip_token_mean",
    );
    expect(
      deviationReportSummary({
        ...dev,
        maxLossRelDiff: 2.5e-300,
        maxGradRelDiff: Number.POSITIVE_INFINITY,
        gradCosineMin: -0,
        cases: 1,
        worstCaseSeed: 0,
        notes: [],
      }),
    ).toBe(
      "conformance over 1 seeded cases: max loss rel diff 2.500e-300, max grad rel diff inf, min grad cosine -0.000000000, worst-case seed 0",
    );
    for (const r of [ess, mm, clip, ent, trend, lb, dev]) expect(summarize(r)).not.toMatch(/\n$/);
  });

  test("reject: an object summarize does not know", () => {
    expect(() => summarize({ loss: 1 } as never)).toThrow(ConfigError);
    expect(() => summarize(null as never)).toThrow(/result must be a polgrad result object/);
  });
});
