/**
 * assertConforms (docs/testing.md#assertconforms): a hand-written implementation differentiated
 * by its own autodiff passes against the reference it implements and fails, with the right
 * diagnosis, when one component is wrong (issue 15's acceptance: token-mean for
 * seq-mean-token-mean, a KL term with the wrong sign, a Dr.GRPO budget of the padded width).
 */
import { describe, expect, test } from "vitest";
import { ConfigError, UnknownNameError, VerificationError } from "../../src/errors.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import {
  assertConforms,
  type ConformanceReport,
  conformanceSummary,
} from "../../src/testing/index.js";
import { authorLoss } from "./_authorLoss.js";

const GRPO: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2 },
  aggregation: "seq_mean_token_mean",
};

function failure(f: () => unknown): ConformanceReport {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(VerificationError);
    const err = e as VerificationError;
    expect(err.message).toContain("polgrad conformance violation");
    expect(err.message).toContain(conformanceSummary(err.report as ConformanceReport));
    expect(err.seed).toBe((err.report as ConformanceReport).worstCase.seed);
    return err.report as ConformanceReport;
  }
  throw new Error("expected a conformance violation");
}

describe("assertConforms", () => {
  test("conformance: a hand-written GRPO loss passes against seq_mean_token_mean and against 'grpo' (KL stripped, with a note)", () => {
    const fn = authorLoss({ aggregation: "seq_mean_token_mean" });
    const r = assertConforms(fn, GRPO);
    expect(r.conforms).toBe(true);
    expect(r.cases).toBe(64);
    // Two independent derivations (closed form vs the tape) agree to rounding.
    expect(r.maxLossRelDiff).toBeLessThan(1e-13);
    expect(r.maxGradRelDiff).toBeLessThan(1e-13);
    expect(r.notes[0]).toBe("reference: explicit PolicyLossConfig");
    expect(r.notes.some((n) => n.startsWith("kl:"))).toBe(false);
    const g = assertConforms(fn, "grpo");
    expect(g.notes[0]).toBe("reference: ALGORITHMS['grpo'].loss");
    expect(g.notes[1]).toMatch(/^kl: reference config carried an as-loss KL term; it was stripped/);
  });

  test("conformance: token-mean for seq-mean-token-mean, a KL term with the wrong sign and a Dr.GRPO budget of the padded width fail with their diagnosis", () => {
    // 1. Flat token mean where GRPO's seq-mean-token-mean is required.
    const a = failure(() => assertConforms(authorLoss({ aggregation: "token_mean" }), GRPO));
    expect(a.diagnosis?.match?.changes).toEqual([
      "aggregation token_mean (reference seq_mean_token_mean)",
    ]);
    expect(a.diagnosis?.match?.scale).toBe(1);
    // 2. The k3 KL term subtracted instead of added (the reference keeps it: kl "include").
    const withKl: PolicyLossConfig = { ...GRPO, kl: { kind: "k3", coef: 0.04 } };
    const b = failure(() =>
      assertConforms(
        authorLoss({ aggregation: "seq_mean_token_mean", kl: { beta: 0.04, sign: -1 } }),
        withKl,
        { kl: "include" },
      ),
    );
    expect(b.diagnosis?.match?.changes).toEqual([
      "the KL term subtracted, coefficient −0.04 (reference +0.04)",
    ]);
    // ... and the same implementation with the right sign conforms.
    expect(
      assertConforms(
        authorLoss({ aggregation: "seq_mean_token_mean", kl: { beta: 0.04, sign: 1 } }),
        withKl,
        { kl: "include" },
      ).conforms,
    ).toBe(true);
    // 3. Dr.GRPO with the padded width T as its budget instead of max_completion_length 16.
    const drGrpo: PolicyLossConfig = { ...GRPO, aggregation: "token_sum_norm", normLen: 16 };
    expect(
      assertConforms(authorLoss({ aggregation: "token_sum_norm", normLen: 16 }), drGrpo).conforms,
    ).toBe(true);
    const c = failure(() =>
      assertConforms(authorLoss({ aggregation: "token_sum_norm", normLen: "width" }), drGrpo),
    );
    expect(c.diagnosis?.match?.changes).toEqual([
      "aggregation token_sum_norm with normLen = the padded width T (reference normLen 16)",
    ]);
    // 4. A clip of 0.21 instead of 0.2 (polgrad's own failure test) is found as a clip change.
    const d = failure(() =>
      assertConforms(authorLoss({ aggregation: "seq_mean_token_mean", eps: 0.21 }), GRPO),
    );
    expect(d.maxGradRelDiff).toBeGreaterThan(1e-9);
    expect(d.diagnosis?.match?.changes).toEqual([
      "clip [1 − 0.21, 1 + 0.21] (reference [1 − 0.2, 1 + 0.2])",
    ]);
  });

  test("golden: a constant factor shows as the reference times it (a dp_size of 2)", () => {
    const base = authorLoss({ aggregation: "seq_mean_token_mean" });
    const half = (i: Parameters<typeof base>[0]) => {
      const r = base(i);
      return { loss: r.loss / 2, gradLogprobs: r.gradLogprobs.map((row) => row.map((g) => g / 2)) };
    };
    const r = failure(() => assertConforms(half, GRPO, { nCases: 8 }));
    // loss_rel = |L − L/2| / max(|L|, |L/2|) = 1/2 on every case.
    expect(r.maxLossRelDiff).toBeCloseTo(0.5, 12);
    expect(r.diagnosis?.match?.changes).toEqual(["no change of configuration"]);
    expect(r.diagnosis?.match?.scale).toBeCloseTo(0.5, 12);
  });

  test("golden: the summary's header, notes, replay and diagnosis lines", () => {
    const r = failure(() =>
      assertConforms(authorLoss({ aggregation: "token_mean" }), GRPO, { nCases: 4 }),
    );
    const lines = conformanceSummary(r).split("\n");
    expect(lines[0]).toMatch(
      /^conformance over 4 seeded cases: max loss rel diff \d\.\d{3}e[-+]\d+, max grad rel diff \d\.\d{3}e[-+]\d+, min grad cosine -?\d\.\d{9}, worst-case seed \d+ \(case \d, shape \[\d+, \d+\]\)$/,
    );
    expect(lines).toContain("reference: explicit PolicyLossConfig");
    expect(lines).toContain(
      "config: surrogate=pg_clip, ratio=token, aggregation=seq_mean_token_mean, clip={ epsLow: 0.2, epsHigh: 0.2 }",
    );
    expect(lines).toContain("batches: randomBatches(4, [[4,8],[2,12]], { seed: 0, maxGap: 2 })");
    expect(lines.find((l) => l.startsWith("replay: "))).toBe(
      `replay: import { randomBatches } from "polgrad/testing"; const inputs = randomBatches(4, [[4,8],[2,12]], { seed: 0 })[${r.worstCase.index}]; // seed ${r.worstCase.seed}, shape [${r.worstCase.shape.join(", ")}]`,
    );
    expect(lines.at(-1)).toMatch(
      /^diagnosis: the implementation matches the reference with aggregation token_mean/,
    );
  });

  test("reject: is_correction references, unknown names, non-functions and wrong-shaped gradients", () => {
    expect(() =>
      assertConforms(authorLoss({ aggregation: "token_mean" }), {
        ...GRPO,
        isCorrection: { level: "token", cap: 2 },
      }),
    ).toThrow(/is_correction/);
    expect(() => assertConforms(authorLoss({ aggregation: "token_mean" }), "gropo")).toThrow(
      UnknownNameError,
    );
    expect(() => assertConforms(42 as never, GRPO)).toThrow(ConfigError);
    expect(() =>
      assertConforms(() => ({ loss: 0, gradLogprobs: [[0]] }), GRPO, { nCases: 1 }),
    ).toThrow(/gradLogprobs must be \[4\]\[8\] rows/);
  });
});
