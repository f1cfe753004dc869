/**
 * Enforces docs/contracts.md#the-registered-reductions: the registry's shape, and that every
 * registered reduction holds on property-generated batches in every precision — the loss bitwise
 * where the contract says so, the gradient within the calibrated tolerance (bitwise where stated).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  checkReduction,
  defineReduction,
  getReduction,
  PRECISIONS,
  REDUCTION_NAMES,
  REDUCTIONS,
  type ReductionContract,
} from "../../src/contracts/index.js";
import { ConfigError, UnknownNameError } from "../../src/index.js";
import { FC_PARAMS } from "../_kit/index.js";
import { contractBatches, finitePadding } from "./_kit.js";

function isDeepFrozen(x: unknown): boolean {
  if (typeof x !== "object" || x === null) return true;
  return Object.isFrozen(x) && Object.values(x).every(isDeepFrozen);
}

describe("REDUCTIONS", () => {
  test("identity: names are the keys and entries are deeply frozen", () => {
    expect(REDUCTION_NAMES).toEqual([
      "papo_g_to_grpo",
      "papo_d_to_dapo",
      "papo_g_trl_to_grpo",
      "papo_d_trl_to_dapo",
      "dapo_symmetric_to_ppo",
      "gspo_token_to_gspo",
      "dual_clip_to_pg_clip",
      "tis_token_to_none",
      "tis_sequence_to_none",
      "cispo_to_reinforce",
      "dr_grpo_to_token_mean",
    ]);
    for (const name of REDUCTION_NAMES) expect(REDUCTIONS[name].name).toBe(name);
    expect(isDeepFrozen(REDUCTIONS)).toBe(true);
  });

  test("identity: every parent is a policy loss the emulator can calibrate", () => {
    for (const c of Object.values(REDUCTIONS)) {
      expect(c.parent.kind).toBe("policy_loss");
      if (c.exact.gradient) expect(c.exact.loss).toBe(true);
    }
    // Exactly two reductions are not bitwise in the gradient, and one not even in the loss.
    const inexact = REDUCTION_NAMES.filter((n) => !REDUCTIONS[n].exact.gradient);
    expect(inexact).toEqual(["gspo_token_to_gspo", "dr_grpo_to_token_mean"]);
    expect(REDUCTION_NAMES.filter((n) => !REDUCTIONS[n].exact.loss)).toEqual([
      "dr_grpo_to_token_mean",
    ]);
  });

  test("property: every registered reduction holds on generated batches in every precision", () => {
    // Every contract × precision on each generated batch. Two gap regimes: wide gaps exercise
    // clipping, caps and TIS truncation; tiny gaps keep GSPO's 3e-4 / 4e-4 band open so its
    // gradients are non-zero. The trl form reads padding, so it sees the batch with finite junk.
    fc.assert(
      fc.property(
        fc.constantFrom(2, 1e-3).chain((maxGap) => contractBatches({ maxGap })),
        fc.integer({ min: 0, max: 1000 }),
        (batch, seed) => {
          for (const name of REDUCTION_NAMES) {
            const c = REDUCTIONS[name];
            const trl = c.child.kind === "papo" && c.child.config.perception.form === "trl";
            for (const precision of PRECISIONS) {
              const r = checkReduction(c, trl ? finitePadding(batch) : batch, { precision, seed });
              expect(r.verdict, `${name} ${precision}`).toBe("holds");
              if (c.exact.loss) expect(r.loss.difference).toBe(0);
              if (c.exact.gradient) for (const g of r.gradients) expect(g.bitwise).toBe(true);
              for (const g of r.gradients) expect(g.margin).toBeLessThanOrEqual(1);
            }
          }
        },
      ),
      FC_PARAMS,
    );
  });

  test("golden: gspo_token's loss is gspo's bitwise even when advantages vary within a row", () => {
    // Strict mode keeps the per-token advantages; the loss (value) reduction holds regardless,
    // while the gradient is spread over the row by gspo and kept local by gspo_token.
    const batch = {
      logprobs: [[-1.0, -2.0, -0.5]],
      oldLogprobs: [[-1.0001, -1.9998, -0.5002]],
      advantages: [[1.5, -0.5, 0.25]],
      responseMask: [[true, true, true]],
    };
    expect(() =>
      checkReduction("gspo_token_to_gspo", batch, { precision: "fp64", impose: false }),
    ).toThrow(expect.objectContaining({ code: "E_CONFIG", arg: "advantages" }));
    const c = { ...getReduction("gspo_token_to_gspo"), condition: null };
    const r = checkReduction(c, batch, { precision: "fp64" });
    expect(r.loss.difference).toBe(0);
    expect(r.gradients[0].margin).toBeGreaterThan(1e10);
    expect(r.verdict).toBe("violated");
  });

  test("golden: gspo_token_to_gspo gradients differ by roundoff only, inside the tolerance", () => {
    // One advantage per row and a ratio inside GSPO's band: gspo's gradient goes through the row
    // sum (Σ_τ ∂L/∂r_τ)·s/L, gspo_token's does not, so the two differ in the last bits.
    const batch = {
      logprobs: [
        [-1.66, -0.3, -0.81, -1.32, -1.83, -0.47, -0.98],
        [-0.98, -1.49, -2, -0.64, -1.15, -1.66, -0.3],
      ],
      oldLogprobs: [
        [-1.6598, -0.3, -0.8102, -1.3197, -1.8299, -0.4701, -0.9803],
        [-0.9797, -1.4899, -2.0001, -0.6403, -1.1498, -1.66, -0.3002],
      ],
      advantages: [0.7, -1.3],
      responseMask: [
        [true, true, true, true, true, true, true],
        [true, true, true, false, false, false, false],
      ],
    };
    const r = checkReduction("gspo_token_to_gspo", batch, { precision: "fp64" });
    expect(r.loss.difference).toBe(0);
    expect(r.gradients[0].bitwise).toBe(false);
    expect(r.gradients[0].maxAbsDifference).toBeGreaterThan(0);
    expect(r.gradients[0].margin).toBeLessThanOrEqual(1);
    expect(r.verdict).toBe("holds");
  });

  test("golden: dr_grpo_to_token_mean is bitwise at the coincidence point B·normLen = N", () => {
    // B = 2 rows of lengths 3 and 1: N = 4 = B·normLen at normLen = 2, so 1/(B·normLen) = 1/N.
    const batch = {
      logprobs: [
        [-1.0, -2.0, -0.5],
        [-0.3, 0, 0],
      ],
      oldLogprobs: [
        [-1.1, -1.9, -0.6],
        [-0.2, 0, 0],
      ],
      advantages: [0.7, -1.2],
      responseMask: [
        [true, true, true],
        [true, false, false],
      ],
    };
    const at = checkReduction("dr_grpo_to_token_mean", batch, { precision: "fp64", normLen: 2 });
    expect(at.factor).toBe(1);
    expect(at.loss.difference).toBe(0);
    expect(at.gradients[0].bitwise).toBe(true);
    const off = checkReduction("dr_grpo_to_token_mean", batch, { precision: "fp64", normLen: 7 });
    expect(off.factor).toBe(4 / 14);
    expect(off.normLen).toBe(7);
    expect(off.verdict).toBe("holds");
  });
});

describe("defineReduction", () => {
  test("rejects: a parent that is not a policy loss and a non-finite parameter", () => {
    const base = getReduction("papo_d_to_dapo");
    const flipped = { ...base, parent: base.child, child: base.parent } as ReductionContract;
    expect(() => defineReduction(flipped)).toThrow(ConfigError);
    expect(() => defineReduction(flipped)).toThrow(
      expect.objectContaining({ arg: "contract.parent.kind" }),
    );
    const inf = {
      ...getReduction("dual_clip_to_pg_clip"),
      parameter: { name: "clip.ratioCap", value: Infinity, note: "" },
    };
    expect(() => defineReduction(inf)).toThrow(
      expect.objectContaining({ code: "E_CONFIG", arg: "contract.parameter.value" }),
    );
    const claim = { ...base, exact: { loss: false, gradient: true } };
    expect(() => defineReduction(claim)).toThrow(
      expect.objectContaining({ arg: "contract.exact" }),
    );
    const copy = defineReduction({ ...base, name: "copy" });
    expect(Object.isFrozen(copy.child)).toBe(true);
  });
});

describe("getReduction", () => {
  test("rejects: an unknown name with the closest registered name suggested", () => {
    expect(getReduction("tis_token_to_none")).toBe(REDUCTIONS.tis_token_to_none);
    const err = (() => {
      try {
        getReduction("tis_tokn_to_none");
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(UnknownNameError);
    expect(err).toMatchObject({ code: "E_UNKNOWN_NAME", arg: "name" });
    expect((err as UnknownNameError).suggestions[0]).toBe("tis_token_to_none");
  });
});
