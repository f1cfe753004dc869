/**
 * Claims every framework model satisfies: its closed-form gradient matches central differences
 * (of its sg-frozen value where it has stop-gradients), and padding never reaches an output, even
 * NaN or ±Infinity junk, with empty rows present.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { sharingPreparedBatches } from "../../../src/conformance/frameworks/batch.js";
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

  test("identity: every model gives bitwise the same result on a batch prepared once and shared (sharingPreparedBatches, the which table's framework rows) as on its own preparation", () => {
    const inputs = inputsOf(drawBatch(5, [5, 7]));
    const alone = FRAMEWORK_MODEL_IDS.map((id) => FRAMEWORK_MODELS[id]!.evaluate(inputs));
    const shared = sharingPreparedBatches(() =>
      FRAMEWORK_MODEL_IDS.map((id) => FRAMEWORK_MODELS[id]!.evaluate(inputs)),
    );
    shared.forEach((r, k) => {
      const a = alone[k]!;
      expect(Object.is(r.loss, a.loss)).toBe(true);
      expect(Array.from(r.gradLogprobs.data)).toEqual(Array.from(a.gradLogprobs.data));
    });
  });

  test("hostile: a shared preparation keeps each model's own errors and checks: a model reading refLogprobs is refused naming itself when another model's preparation without it was shared, and edits between calls outside the scope are seen", () => {
    const drawn = drawBatch(5, [3, 4]);
    const inputs = { ...inputsOf(drawn), refLogprobs: null };
    const plain = FRAMEWORK_MODEL_IDS.find((id) => FRAMEWORK_MODELS[id]!.needs.length === 0)!;
    const needsRef = FRAMEWORK_MODEL_IDS.find((id) =>
      FRAMEWORK_MODELS[id]!.needs.includes("refLogprobs"),
    )!;
    sharingPreparedBatches(() => {
      FRAMEWORK_MODELS[plain]!.evaluate(inputs);
      expect(() => FRAMEWORK_MODELS[needsRef]!.evaluate(inputs)).toThrow(
        new RegExp(`^${needsRef.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: refLogprobs`),
      );
    });
    // The same inputs object, edited in place between two scopes and after them.
    const evaluate = () => FRAMEWORK_MODELS[plain]!.evaluate(inputs).loss;
    const before = sharingPreparedBatches(evaluate);
    for (const row of inputs.advantages as number[][]) row.forEach((a, t) => (row[t] = 2 * a));
    const doubled = sharingPreparedBatches(evaluate);
    expect(doubled).not.toBe(before);
    for (const row of inputs.advantages as number[][]) row.forEach((a, t) => (row[t] = 2 * a));
    expect(evaluate()).not.toBe(doubled);
  });
});
