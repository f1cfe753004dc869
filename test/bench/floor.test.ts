/**
 * Enforces docs/performance.md#the-floor-pass: bench/floor.mjs, the stopwatch the bench's
 * verdicts bound the loss targets with, does the whole work of policyLoss's output contract for
 * dapo. Its five [B, T] outputs are bitwise policyLoss's on the bench's own batches, into fresh
 * and into reused (dirty) buffers, and its plain loss sum is within rounding of the compensated
 * one; a floor that skipped part of the contract would be a bound on less than the loss does.
 */
import { describe, expect, test } from "vitest";
import { makeBatch, typedInputs } from "../../bench/cases.mjs";
import { FIELDS_FLOORS, type FloorConfig, floorOutputs, floorPass } from "../../bench/floor.mjs";
import { getAlgorithm, policyLoss } from "../../src/index.js";

const same = (a: ArrayLike<number>, b: ArrayLike<number>): boolean =>
  a.length === b.length && Array.from(a).every((x, i) => Object.is(x, b[i]));

describe("floorPass", () => {
  test.each([
    ["ragged", true],
    ["ragged", false],
    ["full", true],
    ["full", false],
  ] as const)(
    "identity: its outputs are bitwise dapo's policyLoss outputs (%s rows, fresh %s)",
    (fill, fresh) => {
      const B = 16;
      const T = 1024;
      const batch = makeBatch(B, T, fill, 3);
      const want = policyLoss(getAlgorithm("dapo").loss, typedInputs(batch));
      const out = floorOutputs(B * T);
      if (!fresh) {
        out.grad.fill(Number.NaN);
        out.objective.fill(Number.NaN);
        out.ratio.fill(Number.NaN);
        out.low.fill(7);
        out.high.fill(7);
      }
      const loss = floorPass(batch, out, fresh);
      expect(same(out.ratio, want.ratio.data)).toBe(true);
      expect(same(out.objective, want.perTokenObjective.data)).toBe(true);
      expect(same(out.grad, want.gradLogprobs.data)).toBe(true);
      expect(same(out.low, want.clippedLow.data)).toBe(true);
      expect(same(out.high, want.clippedHigh.data)).toBe(true);
      // The batch clips on both sides, so the flags' branch is exercised.
      expect(out.low.includes(1) && out.high.includes(1)).toBe(true);
      expect(Math.abs(loss - want.loss)).toBeLessThanOrEqual(1e-12 * Math.abs(want.loss));
    },
  );

  test.each(
    (["dapo", "grpo", "gspo", "cispo"] as const).flatMap((config) =>
      (["ragged", "full"] as const).map((fill) => [config, fill] as const),
    ),
  )(
    "identity: the %s floor for the fields loss and gradLogprobs gives policyLoss's gradient and loss bitwise (grpo's loss within rounding: k3's series is left out), into fresh and into dirty memory (%s rows)",
    (config, fill) => {
      const B = 16;
      const T = 1024;
      const batch = makeBatch(B, T, fill, 3);
      const cfg = getAlgorithm(config).loss;
      const want = policyLoss(cfg, typedInputs(batch), { fields: ["loss", "gradLogprobs"] });
      const grad = new Float64Array(B * T);
      const loss = FIELDS_FLOORS[config](batch, grad, cfg as FloorConfig);
      expect(same(grad, want.gradLogprobs.data)).toBe(true);
      // Something flows: a floor that wrote nothing would match an all-clipped batch.
      expect(grad.some((x) => x !== 0)).toBe(true);
      if (config === "grpo")
        expect(Math.abs(loss - want.loss)).toBeLessThanOrEqual(1e-14 * Math.abs(want.loss));
      else expect(Object.is(loss, want.loss)).toBe(true);
      // Into reused memory (NaN everywhere): the same gradient, padding written 0.
      const dirty = new Float64Array(B * T).fill(Number.NaN);
      FIELDS_FLOORS[config](batch, dirty, cfg as FloorConfig, false);
      expect(same(dirty, want.gradLogprobs.data)).toBe(true);
    },
  );
});
