/**
 * Enforces docs/contracts.md#precisions and #precision-calibrated-tolerances: the rounding of each
 * precision, the emulated computation's algebra (it is policyLoss's), and the calibration's
 * covering and generalisation claims.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { Arith } from "../../src/contracts/_internal/arith.js";
import { emulationData, roundBatch } from "../../src/contracts/_internal/batch.js";
import { emulatePolicyLoss } from "../../src/contracts/_internal/emulatePolicyLoss.js";
import {
  calibrateTolerance,
  PRECISIONS,
  type Precision,
  roundToPrecision,
  UNIT_ROUNDOFF,
} from "../../src/contracts/index.js";
import { rounderOf } from "../../src/contracts/precision.js";
import {
  ConfigError,
  type PolicyLossConfig,
  policyLoss,
  UnknownNameError,
} from "../../src/index.js";
import { validatePolicyLossConfig } from "../../src/losses/configValidate.js";
import { ALGORITHMS } from "../../src/registry/index.js";
import { createRng } from "../../src/verify/index.js";
import {
  AGGREGATIONS,
  buildConfig,
  FC_PARAMS,
  KL_VARIANTS,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
  TIS_VARIANTS,
} from "../_kit/index.js";
import { realisticBatch } from "./_kit.js";

describe("roundToPrecision", () => {
  test("golden: hand-computed roundings in each precision", () => {
    // 1.2 = 1 + 0.2: bf16 keeps 7 fraction bits, 0.2·2^7 = 25.6 → 26, so 1 + 26/128 = 1.203125;
    // fp16 keeps 10, 0.2·2^10 = 204.8 → 205, so 1 + 205/1024 = 1.2001953125.
    expect(roundToPrecision(1.2, "bf16")).toBe(1.203125);
    expect(roundToPrecision(1.2, "fp16")).toBe(1.2001953125);
    expect(roundToPrecision(1.2, "fp32")).toBe(Math.fround(1.2));
    expect(roundToPrecision(1.2, "fp64")).toBe(1.2);
    // Ties go to even: 1 + 2^-8 sits halfway between bf16's 1 and 1 + 2^-7 → 1.
    expect(roundToPrecision(1 + 2 ** -8, "bf16")).toBe(1);
    expect(roundToPrecision(1 + 3 * 2 ** -8, "bf16")).toBe(1 + 2 ** -6);
    expect(roundToPrecision(1 + 2 ** -11, "fp16")).toBe(1);
    // Range: fp16's largest finite is 65504 (65520 rounds to ∞); 1e300 overflows fp32 and bf16.
    expect(roundToPrecision(65504, "fp16")).toBe(65504);
    expect(roundToPrecision(65520, "fp16")).toBe(Number.POSITIVE_INFINITY);
    expect(roundToPrecision(1e300, "fp32")).toBe(Number.POSITIVE_INFINITY);
    expect(roundToPrecision(-1e300, "bf16")).toBe(Number.NEGATIVE_INFINITY);
    // GSPO's clip band 1 ± 3e-4 / 4e-4 collapses to {1} in bf16 (spacing 2^-7 above 1, 2^-8 below).
    expect(roundToPrecision(1 + 4e-4, "bf16")).toBe(1);
    expect(roundToPrecision(1 - 3e-4, "bf16")).toBe(1);
    expect(UNIT_ROUNDOFF).toEqual({
      bf16: 2 ** -8,
      fp16: 2 ** -11,
      fp32: 2 ** -24,
      fp64: 2 ** -53,
    });
  });

  test("property: one rounding moves a value by at most u relative", () => {
    const ranges: Record<Precision, [number, number]> = {
      bf16: [2 ** -120, 2 ** 120],
      fp16: [2 ** -14, 60000],
      fp32: [2 ** -120, 2 ** 120],
      fp64: [2 ** -1000, 2 ** 1000],
    };
    fc.assert(
      fc.property(fc.constantFrom(...PRECISIONS), fc.double({ noNaN: true }), (p, raw) => {
        const [lo, hi] = ranges[p];
        const x = Math.sign(raw || 1) * Math.min(hi, Math.max(lo, Math.abs(raw)));
        const r = roundToPrecision(x, p);
        expect(Math.abs(r - x)).toBeLessThanOrEqual(UNIT_ROUNDOFF[p] * Math.abs(x));
        expect(roundToPrecision(r, p)).toBe(r);
      }),
      FC_PARAMS,
    );
  });

  test("rejects: an unknown precision with a suggestion", () => {
    const err = (() => {
      try {
        roundToPrecision(1, "fp61" as Precision);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(UnknownNameError);
    expect(err).toMatchObject({ code: "E_UNKNOWN_NAME", arg: "precision" });
    expect((err as UnknownNameError).suggestions).toContain("fp16");
  });
});

describe("emulatePolicyLoss", () => {
  test("identity: in fp64 under the canonical plan it computes policyLoss's loss and gradient", () => {
    // The emulator is policyLoss's algebra with rounded operations; in fp64 it must agree with the
    // closed form up to float64 roundoff on every configuration of the grid.
    fc.assert(
      fc.property(
        logprobBatches({ maxGap: 1 }),
        fc.constantFrom(...RATIO_SURROGATE_PAIRS),
        fc.constantFrom(...AGGREGATIONS),
        fc.constantFrom(...TIS_VARIANTS),
        fc.constantFrom(...KL_VARIANTS),
        (batch, [ratio, variant], agg, tis, kl) => {
          const T = batch.responseMask[0].length;
          const config = buildConfig(ratio, variant, agg, T, { isCorrection: tis, kl });
          const inputs = policyInputs(config, batch);
          const exact = policyLoss(config, inputs);
          const data = emulationData(
            "t",
            validatePolicyLossConfig("t", config),
            roundBatch("t", inputs, (x) => x),
          );
          const em = emulatePolicyLoss(data, new Arith((x) => x, null));
          const scale = Math.max(em.lossScale, 1e-300);
          expect(Math.abs(em.loss - exact.loss)).toBeLessThanOrEqual(1e-12 * scale);
          for (let i = 0; i < em.grad.length; i++) {
            const tol = 1e-12 * Math.max(em.gradScale[i], 1e-300);
            expect(Math.abs(em.grad[i] - exact.gradLogprobs.data[i])).toBeLessThanOrEqual(tol);
          }
        },
      ),
      FC_PARAMS,
    );
  });
});

const parents: readonly [string, PolicyLossConfig][] = [
  ["ppo", ALGORITHMS.ppo.loss],
  ["grpo", ALGORITHMS.grpo.loss],
  ["dapo", ALGORITHMS.dapo.loss],
  ["gspo", ALGORITHMS.gspo.loss],
];

describe("calibrateTolerance", () => {
  test("identity: every measured pair difference uses at most half the tolerance", () => {
    // Replays calibrateTolerance's own pairs (same seed derivation) and checks the covering
    // E_i ≤ ρ̂·M_i + η̂ ≤ (rtol·M_i + atol)/2, M_i the smaller emulated magnitude of element i.
    for (const [, config] of parents) {
      for (const precision of PRECISIONS) {
        const batch = realisticBatch(7, { rows: 4, cols: 32 });
        const cal = calibrateTolerance(config, batch, { precision, seed: 3, pairs: 4 });
        const R = rounderOf(precision);
        const data = emulationData(
          "t",
          validatePolicyLossConfig("t", config),
          roundBatch("t", batch, R),
        );
        const rng = createRng(3);
        for (let k = 0; k < 4; k++) {
          const a = emulatePolicyLoss(data, new Arith(R, createRng(rng.childSeed())));
          const b = emulatePolicyLoss(data, new Arith(R, createRng(rng.childSeed())));
          for (let i = 0; i < a.grad.length; i++) {
            const m = Math.min(Math.abs(a.grad[i]), Math.abs(b.grad[i]));
            expect(Math.abs(a.grad[i] - b.grad[i])).toBeLessThanOrEqual(
              (cal.rtol * m + cal.atol) / 2,
            );
          }
        }
      }
    }
  });

  test("property: a fresh pair of plans stays within the tolerance calibrated on other plans", () => {
    // Generalisation: the tolerance calibrated with seed 0 covers evaluations under unseen seeds.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 30 }),
        fc.constantFrom(...parents),
        fc.constantFrom(...PRECISIONS),
        (seed, [, config], precision) => {
          const batch = realisticBatch(seed, { rows: 4, cols: 24, oldGap: 1e-4 });
          const cal = calibrateTolerance(config, batch, { precision });
          const R = rounderOf(precision);
          const data = emulationData(
            "t",
            validatePolicyLossConfig("t", config),
            roundBatch("t", batch, R),
          );
          const a = emulatePolicyLoss(data, new Arith(R, createRng(seed + 1)));
          const b = emulatePolicyLoss(data, new Arith(R, createRng(seed + 2)));
          for (let i = 0; i < a.grad.length; i++) {
            const m = Math.min(Math.abs(a.grad[i]), Math.abs(b.grad[i]));
            expect(Math.abs(a.grad[i] - b.grad[i])).toBeLessThanOrEqual(cal.rtol * m + cal.atol);
          }
        },
      ),
      { ...FC_PARAMS, numRuns: Math.ceil(FC_PARAMS.numRuns / 3) },
    );
  });

  test("property: the relative tolerance tracks the unit roundoff of each precision", () => {
    // Token-ratio parents are product chains of a handful of roundings: ρ̂ is a few u, and the
    // tolerances order like the precisions themselves.
    for (const seed of [0, 1, 2]) {
      const batch = realisticBatch(seed, { rows: 4, cols: 64 });
      for (const [name, config] of parents.filter(([n]) => n !== "gspo")) {
        const cals = PRECISIONS.map((precision) =>
          calibrateTolerance(config, batch, { precision }),
        );
        for (const c of cals) {
          expect(c.rtol / c.unitRoundoff, `${name} ${c.precision}`).toBeGreaterThanOrEqual(2);
          expect(c.rtol / c.unitRoundoff, `${name} ${c.precision}`).toBeLessThanOrEqual(16);
          expect(c.atol).toBeGreaterThanOrEqual(c.unitRoundoff * c.gradScale);
        }
        for (let k = 1; k < cals.length; k++) expect(cals[k].rtol).toBeLessThan(cals[k - 1].rtol);
      }
    }
  });

  test("identity: equal seeds give bitwise-equal calibrations", () => {
    const batch = realisticBatch(11, { rows: 3, cols: 16 });
    const a = calibrateTolerance(ALGORITHMS.grpo.loss, batch, { precision: "bf16", seed: 5 });
    const b = calibrateTolerance(ALGORITHMS.grpo.loss, batch, { precision: "bf16", seed: 5 });
    expect(a).toEqual(b);
    const c = calibrateTolerance(ALGORITHMS.grpo.loss, batch, { precision: "bf16", seed: 6 });
    expect(c.relativeRoundoff).not.toBe(a.relativeRoundoff);
  });

  test("rejects: a precision whose range the computation overflows, and bad pairs", () => {
    // A log-ratio of 12 gives r = e^12 ≈ 162755 > 65504, fp16's largest finite value.
    const batch = {
      logprobs: [[-0.5]],
      oldLogprobs: [[-12.5]],
      advantages: [1],
      responseMask: [[true]],
    };
    const config: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
    };
    expect(() => calibrateTolerance(config, batch, { precision: "fp16" })).toThrow(ConfigError);
    expect(() => calibrateTolerance(config, batch, { precision: "fp16" })).toThrow(
      expect.objectContaining({ code: "E_CONFIG", arg: "options.precision" }),
    );
    expect(calibrateTolerance(config, batch, { precision: "bf16" }).rtol).toBeGreaterThan(0);
    for (const pairs of [0, 1.5, 20_000]) {
      expect(() => calibrateTolerance(config, batch, { precision: "fp32", pairs })).toThrow(
        expect.objectContaining({ code: "E_CONFIG", arg: "options.pairs" }),
      );
    }
  });
});
