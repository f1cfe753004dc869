/**
 * Enforces docs/contracts.md#checking-a-reduction and #batch-conditions: conditions imposed or
 * rejected, required streams, option validation, mask invariance, where the tolerance comes from,
 * and that the calibrated tolerance is wide enough for a genuinely different but algebraically
 * equal child computed in the emulated precision.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { Arith } from "../../src/contracts/_internal/arith.js";
import { emulationData, roundBatch } from "../../src/contracts/_internal/batch.js";
import { emulatePolicyLoss } from "../../src/contracts/_internal/emulatePolicyLoss.js";
import { applyCondition, withNormLen } from "../../src/contracts/_internal/sides.js";
import {
  calibrateTolerance,
  checkReduction,
  PRECISIONS,
  REDUCTION_NAMES,
  REDUCTIONS,
} from "../../src/contracts/index.js";
import { rounderOf } from "../../src/contracts/precision.js";
import { ConfigError, UnknownNameError } from "../../src/index.js";
import { validatePolicyLossConfig } from "../../src/losses/configValidate.js";
import { ALGORITHMS } from "../../src/registry/index.js";
import { createRng } from "../../src/verify/index.js";
import { FC_PARAMS } from "../_kit/index.js";
import { contractBatches } from "./_kit.js";

const batch = {
  logprobs: [
    [-1.0, -2.0, -0.5],
    [-0.3, Number.NaN, 123],
  ],
  oldLogprobs: [
    [-1.1, -1.9, -0.6],
    [-0.2, Number.NaN, 123],
  ],
  refLogprobs: [
    [-0.9, -2.2, -0.45],
    [-0.35, 0, 0],
  ],
  rolloutLogprobs: [
    [-1.0, -1.8, -0.7],
    [-0.25, 0, 0],
  ],
  advantages: [
    [0.7, 0.2, -0.4],
    [-1.2, 9, 9],
  ],
  responseMask: [
    [true, true, true],
    [true, false, false],
  ],
};

describe("checkReduction", () => {
  test("golden: imposing a condition is reported and strict mode rejects an unmet one", () => {
    const tis = checkReduction("tis_token_to_none", batch, { precision: "fp32" });
    expect(tis.imposed).toEqual(["rolloutLogprobs := oldLogprobs"]);
    expect(tis.verdict).toBe("holds");
    expect(() =>
      checkReduction("tis_token_to_none", batch, { precision: "fp32", impose: false }),
    ).toThrow(expect.objectContaining({ code: "E_CONFIG", arg: "rolloutLogprobs" }));
    // Already satisfied (junk at padding differs, which the condition ignores): nothing imposed.
    const met = { ...batch, rolloutLogprobs: batch.oldLogprobs.map((r) => r.map((x) => x)) };
    met.rolloutLogprobs[1][2] = 0;
    expect(
      checkReduction("tis_token_to_none", met, { precision: "fp32", impose: false }).imposed,
    ).toEqual([]);
    expect(checkReduction("cispo_to_reinforce", batch, { precision: "bf16" }).imposed).toEqual([
      "oldLogprobs := logprobs",
    ]);
    const gspo = checkReduction("gspo_token_to_gspo", batch, { precision: "fp16" });
    expect(gspo.imposed).toEqual(["advantages := per-row means"]);
    const rowConstant = { ...batch, advantages: [0.5, -1.2] };
    expect(
      checkReduction("gspo_token_to_gspo", rowConstant, { precision: "fp16", impose: false })
        .imposed,
    ).toEqual([]);
    // The condition check reads response positions only and names the first offending position.
    expect(() => applyCondition("t", "row_constant_advantages", batch, false)).toThrow(/\(0, 1\)/);
  });

  test("rejects: a batch without a stream the contract requires", () => {
    expect(() => checkReduction("papo_g_to_grpo", batch, { precision: "bf16" })).toThrow(
      ConfigError,
    );
    expect(() => checkReduction("papo_g_to_grpo", batch, { precision: "bf16" })).toThrow(
      expect.objectContaining({ code: "E_CONFIG", arg: "batch.maskedLogprobs" }),
    );
    const withMasked = { ...batch, maskedLogprobs: batch.logprobs };
    expect(() => checkReduction("papo_d_trl_to_dapo", withMasked, { precision: "bf16" })).toThrow(
      expect.objectContaining({ arg: "batch.entropies" }),
    );
  });

  test("rejects: an unknown contract or precision and a bad normLen", () => {
    expect(() => checkReduction("tis_to_none", batch, { precision: "fp32" })).toThrow(
      UnknownNameError,
    );
    expect(() =>
      checkReduction("tis_token_to_none", batch, { precision: "f32" as "fp32" }),
    ).toThrow(expect.objectContaining({ code: "E_UNKNOWN_NAME", arg: "options.precision" }));
    expect(() =>
      checkReduction("dr_grpo_to_token_mean", batch, { precision: "fp32", normLen: 0 }),
    ).toThrow(expect.objectContaining({ code: "E_CONFIG", arg: "options.normLen" }));
  });

  test("mask invariance: junk at padding never changes the check", () => {
    const junk = (j: number) => ({
      ...batch,
      logprobs: batch.logprobs.map((r, b) => r.map((x, t) => (batch.responseMask[b][t] ? x : j))),
      oldLogprobs: batch.oldLogprobs.map((r, b) =>
        r.map((x, t) => (batch.responseMask[b][t] ? x : j)),
      ),
    });
    for (const name of REDUCTION_NAMES.filter((n) => REDUCTIONS[n].requires.length === 0)) {
      const a = checkReduction(name, junk(123), { precision: "bf16" });
      const b = checkReduction(name, junk(Number.NEGATIVE_INFINITY), { precision: "bf16" });
      expect(b).toEqual(a);
    }
  });

  test("golden: the tolerance comes from the parent's calibration", () => {
    const r = checkReduction("dual_clip_to_pg_clip", batch, {
      precision: "fp16",
      seed: 4,
      pairs: 3,
    });
    expect(r.calibration).toEqual(
      calibrateTolerance(ALGORITHMS.ppo.loss, roundBatch("t", batch, rounderOf("fp16")), {
        precision: "fp16",
        seed: 4,
        pairs: 3,
      }),
    );
    const [g] = r.gradients;
    expect(g.rtol).toBe(r.calibration.rtol);
    expect(g.atol).toBeGreaterThanOrEqual(r.calibration.unitRoundoff * r.calibration.gradScale);
    // A rescale relation adds the comparison's own two float64 roundings to the relative tolerance.
    const dr = checkReduction("dr_grpo_to_token_mean", batch, {
      precision: "fp16",
      seed: 4,
      pairs: 3,
    });
    expect(dr.gradients[0].rtol).toBe(dr.calibration.rtol + 2 * 2 ** -53);
    expect(dr.loss.required).toBe("tolerance");
  });

  test("property: an emulated child agrees with the emulated parent within the calibrated tolerance", () => {
    // The check compares exact float64 sides; this shows the calibrated tolerance is also wide
    // enough when both sides are computed in the emulated precision by *different* algebra
    // (gspo_token's local gradient vs gspo's row sum, 1/(B·normLen) vs N/(B·normLen)·1/N, …).
    const policyContracts = REDUCTION_NAMES.filter(
      (n) => REDUCTIONS[n].child.kind === "policy_loss",
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...policyContracts),
        contractBatches({ maxGap: 1e-3 }),
        fc.constantFrom(...PRECISIONS),
        fc.integer({ min: 0, max: 2 ** 30 }),
        (name, raw, precision, seed) => {
          const c = REDUCTIONS[name];
          if (c.parent.kind !== "policy_loss" || c.child.kind !== "policy_loss") return;
          const R = rounderOf(precision);
          const rounded = roundBatch("t", applyCondition("t", c.condition, raw, true).batch, R);
          const T = raw.responseMask[0].length;
          const pc = withNormLen(c.parent.config, T);
          const cc = withNormLen(c.child.config, T);
          const cal = calibrateTolerance(pc, rounded, { precision });
          const parent = emulatePolicyLoss(
            emulationData("t", validatePolicyLossConfig("t", pc), rounded),
            new Arith(R, createRng(seed)),
          );
          const child = emulatePolicyLoss(
            emulationData("t", validatePolicyLossConfig("t", cc), rounded),
            new Arith(R, createRng(seed + 1)),
          );
          const N = raw.responseMask.flat().filter(Boolean).length;
          const f = c.relation === "equal" ? 1 : N / (raw.responseMask.length * T);
          const rtol = cal.rtol + (c.relation === "equal" ? 0 : 2 ** -52);
          let G = 0;
          for (let i = 0; i < child.grad.length; i++)
            G = Math.max(G, Math.abs(child.grad[i]), Math.abs(f * parent.grad[i]));
          const atol = Math.max(2 * f * cal.excessRoundoff, cal.unitRoundoff * G);
          for (let i = 0; i < child.grad.length; i++) {
            const e = f * parent.grad[i];
            const m = Math.min(Math.abs(e), Math.abs(child.grad[i]));
            expect(Math.abs(child.grad[i] - e), `${name} ${precision} at ${i}`).toBeLessThanOrEqual(
              rtol * m + atol,
            );
          }
        },
      ),
      { ...FC_PARAMS, numRuns: 2 * FC_PARAMS.numRuns },
    );
  });
});
