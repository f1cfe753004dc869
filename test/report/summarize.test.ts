/**
 * summarize (docs/report.md): each result type is recognised by its fields and gives the lines
 * its renderer prints (polgrad's summary(), no trailing newline); an unknown object is a ConfigError.
 */
import { describe, expect, test } from "vitest";
import { compareLosses } from "../../src/conformance/compare.js";
import { deviationReport } from "../../src/conformance/deviationPairs.js";
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
    expect(summarize(ess)).toBe(renderEssText(ess).replace(/\n$/, ""));
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
    expect(summarize(clip)).toBe(renderClipText(clip).replace(/\n$/, ""));
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
    expect(summarize(ent)).toBe(renderEntropyText(ent).replace(/\n$/, ""));
    const trend = entropyTrend(
      Array.from({ length: 30 }, (_, t) => 5 - 0.1 * t),
      { window: 30, nPerm: 19, rng: createRng(1) },
    );
    expect(summarize(trend)).toBe(renderTrendText(trend).replace(/\n$/, ""));
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
    expect(summarize(mm)).toBe(renderMismatchText(mm).replace(/\n$/, ""));
    const lb = lengthBiasProbe(
      [3, 3, 4],
      [
        [true, false, false],
        [true, true, false],
        [true, true, true],
      ],
      { aggMode: "seq_mean_token_sum" },
    );
    expect(summarize(lb)).toBe(renderLengthBiasText(lb).replace(/\n$/, ""));
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

  test("reject: an object summarize does not know", () => {
    expect(() => summarize({ loss: 1 } as never)).toThrow(ConfigError);
    expect(() => summarize(null as never)).toThrow(/result must be a polgrad result object/);
  });
});
