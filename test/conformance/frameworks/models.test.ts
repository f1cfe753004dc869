/**
 * Claims every framework model satisfies: its closed-form gradient matches central differences
 * (of its sg-frozen value where it has stop-gradients), and padding never reaches an output, even
 * NaN or ±Infinity junk, with empty rows present.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import {
  FRAMEWORK_MODEL_IDS,
  FRAMEWORK_MODELS,
} from "../../../src/conformance/frameworks/registry.js";
import { drawBatch } from "../../../src/verify/draw.js";
import { expectMaskInvariant } from "../../_kit/maskInvariance.js";
import { gradcheckModel, inputsOf } from "./_kit.js";

describe("framework models", () => {
  test("identity: the models keep no loss arithmetic of their own: every policy-loss model is a config of the algebra (no exp, log or surrogate point function outside OpenRLHF's float32 KL)", () => {
    const dir = new URL("../../../src/conformance/frameworks/", import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith(".ts"));
    expect(files).toContain("onAlgebra.ts");
    const arithmetic = /Math\.(exp|log|log1p|expm1)\b|pgClipPoint|pgClipInto|cispoWeight/;
    const offenders = files.filter(
      (f) => f !== "openrlhf.ts" && arithmetic.test(readFileSync(new URL(f, dir), "utf8")),
    );
    expect(offenders).toEqual([]);
    // OpenRLHF's only arithmetic is its float32 KL: the policy variants go through the algebra.
    const orl = readFileSync(new URL("openrlhf.ts", dir), "utf8");
    expect(orl).not.toMatch(/pgClipPoint|clampedPpo/);
    expect(orl).toMatch(/evaluateOnAlgebra/);
  });

  test.each(FRAMEWORK_MODEL_IDS)(
    "gradient: %s matches central differences away from kinks",
    (id) => {
      const model = FRAMEWORK_MODELS[id]!;
      const report = gradcheckModel(model, 7);
      expect(report.ok).toBe(true);
      expect(report.paddingLeaks).toBe(0);
      expect(report.coordinates).toBeGreaterThan(20);
    },
  );

  test.each(FRAMEWORK_MODEL_IDS)(
    "mask invariance: %s ignores NaN and ±Infinity junk at padding, with an empty row",
    (id) => {
      const model = FRAMEWORK_MODELS[id]!;
      for (const seed of [3, 11]) {
        const drawn = drawBatch(seed, [4, 6]);
        // Row 1 becomes empty: every framework accepts rows with zero response tokens.
        const responseMask = drawn.responseMask.map((row, b) =>
          row.map((on) => (b === 1 ? false : on)),
        );
        const inputs = { ...inputsOf(drawn), responseMask };
        const seqAdvantages = { ...inputs, advantages: drawn.advantages.map((row) => row[0]!) };
        for (const x of [inputs, seqAdvantages]) {
          expectMaskInvariant((inp) => model.evaluate(inp), x);
          const out = model.evaluate(x);
          responseMask.forEach((row, b) =>
            row.forEach((on, t) => {
              if (on) return;
              const i = b * 6 + t;
              expect(Object.is(out.gradLogprobs.data[i], 0)).toBe(true);
              expect(out.perTokenObjective.data[i]).toBe(0);
              expect(out.ratio.data[i]).toBe(1);
            }),
          );
          expect(Number.isFinite(out.loss)).toBe(true);
        }
      }
    },
  );
});
