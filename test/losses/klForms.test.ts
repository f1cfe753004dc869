/**
 * Enforces docs/derivations/kl.md#clamps-and-straight-through: the KL term of policyLoss with the
 * frameworks' clamps (δ to ±delta before the estimator, the estimate to ±value) and the
 * straight-through gradient (value of k, gradient of ½δ²) equals the equation-level reference
 * differentiated by the independent autodiff; goldens worked by hand for verl's k3 (±20, ±10), its
 * k3+ and OpenRLHF's ±10; without them, the bits of the plain term.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyLoss } from "../../src/index.js";
import type { KLLossConfig } from "../../src/kl/estimator.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  buildConfig,
  expectNormwiseClose,
  FC_PARAMS,
  KL_KINDS,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
} from "../_kit/index.js";
import { expectPolgradError } from "../io/_kit.js";

/** Each estimator under each form; clamps small enough to bind on the kit's batches (ref = lp ± 2). */
const FORMS: readonly Omit<KLLossConfig, "kind" | "coef">[] = [
  { clamp: { delta: 0.5 } },
  { clamp: { value: 0.3 } },
  { clamp: { delta: 1, value: 0.4 } },
  { gradient: "straight_through" },
  { clamp: { delta: 0.7, value: 0.2 }, gradient: "straight_through" },
  // TRL's use_bias_correction_kl: k·r, through r or detached.
  { weight: "ratio" },
  { weight: "ratio_detached" },
  { weight: "ratio", clamp: { value: 0.3 } },
];

/** A token-ratio and a sequence-ratio pair (the KL term is the same code under every ratio). */
const PAIRS = [
  RATIO_SURROGATE_PAIRS[0],
  RATIO_SURROGATE_PAIRS.find(([r]) => r === "sequence"),
  RATIO_SURROGATE_PAIRS.find(([r]) => r === "sequence_token"),
] as (typeof RATIO_SURROGATE_PAIRS)[number][];

describe("KL clamps and straight-through gradients", () => {
  it("gradient: closed form equals the reference for every estimator × form, token, sequence and sequence_token ratios", () => {
    for (const kind of KL_KINDS) {
      for (const form of FORMS) {
        for (const [ratio, variant] of PAIRS) {
          fc.assert(
            fc.property(logprobBatches(), (batch) => {
              const T = batch.responseMask[0].length;
              const kl = { kind, coef: 0.3, ...form } as KLLossConfig;
              const config = buildConfig(ratio, variant, "token_mean", T, { kl });
              const inputs = policyInputs(config, batch);
              const got = policyLoss(config, inputs);
              const ref = policyLossRef(config, inputs);
              const what = `${kind} ${JSON.stringify(form)}`;
              expectNormwiseClose(got.loss, ref.loss, 1e-13, `${what}: loss`);
              expectNormwiseClose(got.klLoss as number, ref.klLoss as number, 1e-13, `${what}: kl`);
              expectNormwiseClose(got.gradLogprobs, ref.grad, 1e-13, `${what}: grad`);
            }),
            { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 2)) },
          );
        }
      }
    }
  });

  // One token, pg on r = 1 with A = 0 (the surrogate adds nothing), token_mean, coef 1:
  // loss = k and ∂loss/∂lp = ∂k/∂lp, δ = ref − lp.
  const one = (kl: KLLossConfig, lp: number, ref: number) =>
    policyLoss(
      { ratio: "token", surrogate: "pg", clip: null, aggregation: "token_mean", kl },
      {
        logprobs: [[lp]],
        oldLogprobs: [[lp]],
        refLogprobs: [[ref]],
        advantages: [0],
        responseMask: [[1]],
      },
    );

  it("golden: verl's k3 (δ clamped to ±20, the estimate to ±10): at δ = 3 the value is 10 and passes no gradient; at δ = 1 it is e − 2 with gradient 1 − e", () => {
    const verl: KLLossConfig = { kind: "k3", coef: 1, clamp: { delta: 20, value: 10 } };
    const big = one(verl, -4, -1); // δ = 3: e^3 − 4 = 16.09 > 10
    expect(big.klLoss).toBe(10);
    expect(big.gradLogprobs.data[0]).toBe(0);
    const small = one(verl, -2, -1); // δ = 1
    expect(small.klLoss).toBe(Math.expm1(1) - 1);
    expect(small.gradLogprobs.data[0]).toBe(-Math.expm1(1));
    // δ = 30 is clamped to 20 before exp: e^20 − 21 > 10, so 10 again, and no gradient.
    const huge = one(verl, -31, -1);
    expect(huge.klLoss).toBe(10);
    expect(huge.gradLogprobs.data[0]).toBe(0);
  });

  it("golden: verl's k3+ is k3's value with the gradient of ½δ², −δ = lp − ref", () => {
    const st = one({ kind: "k3", coef: 1, gradient: "straight_through" }, -2, -1); // δ = 1
    expect(st.klLoss).toBe(Math.expm1(1) - 1);
    expect(st.gradLogprobs.data[0]).toBe(-1);
  });

  it("golden: OpenRLHF's ±10 clamp on k2 at δ = 5 gives 10 (not 12.5) and no gradient", () => {
    const r = one({ kind: "k2", coef: 1, clamp: { value: 10 } }, -6, -1);
    expect(r.klLoss).toBe(10);
    expect(r.gradLogprobs.data[0]).toBe(0);
  });

  it("golden: TRL's bias-corrected KL is k3·r with the gradient through r: (k3′ + k3)·r at the token ratio", () => {
    // One token, lp = −1, old = −1.5 (r = e^0.5), ref = −0.5 (δ = 0.5), pg with A = 0.
    const cfg = (weight: "ratio" | "ratio_detached"): PolicyLossConfig => ({
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
      kl: { kind: "k3", coef: 1, weight },
    });
    const inputs = {
      logprobs: [[-1]],
      oldLogprobs: [[-1.5]],
      refLogprobs: [[-0.5]],
      advantages: [0],
      responseMask: [[1]],
    };
    const r = Math.exp(-1 - -1.5);
    const k3 = Math.expm1(0.5) - 0.5;
    const dk3 = -Math.expm1(0.5); // ∂k3/∂lp
    const through = policyLoss(cfg("ratio"), inputs);
    expect(through.klLoss).toBe(k3 * r);
    expect(through.gradLogprobs.data[0]).toBeCloseTo((dk3 + k3) * r, 15);
    const detached = policyLoss(cfg("ratio_detached"), inputs);
    expect(detached.klLoss).toBe(k3 * r);
    expect(detached.gradLogprobs.data[0]).toBeCloseTo(dk3 * r, 15);
  });

  it("identity: no clamp and the pathwise gradient give the bits of the plain term", () => {
    fc.assert(
      fc.property(logprobBatches(), fc.constantFrom(...KL_KINDS), (batch, kind) => {
        const T = batch.responseMask[0].length;
        const [ratio, variant] = RATIO_SURROGATE_PAIRS[0] as (typeof RATIO_SURROGATE_PAIRS)[number];
        const plain = buildConfig(ratio, variant, "token_mean", T, { kl: { kind, coef: 0.1 } });
        const spelled = buildConfig(ratio, variant, "token_mean", T, {
          kl: { kind, coef: 0.1, clamp: { delta: null, value: null }, gradient: "pathwise" },
        });
        const a = policyLoss(plain, policyInputs(plain, batch));
        const b = policyLoss(spelled, policyInputs(spelled, batch));
        expect(Object.is(a.loss, b.loss)).toBe(true);
        expect(Array.from(b.gradLogprobs.data)).toEqual(Array.from(a.gradLogprobs.data));
      }),
      FC_PARAMS,
    );
  });

  it("rejects: a non-positive clamp or an unknown gradient form", () => {
    for (const [kl, arg, code] of [
      [{ kind: "k3", coef: 1, clamp: { delta: 0 } }, "config.kl.clamp.delta", "E_CONFIG"],
      [{ kind: "k3", coef: 1, clamp: { value: -1 } }, "config.kl.clamp.value", "E_CONFIG"],
      [{ kind: "k3", coef: 1, gradient: "plus" }, "config.kl.gradient", "E_UNKNOWN_NAME"],
    ] as const) {
      expectPolgradError(
        () => one(kl as unknown as KLLossConfig, -1, -1),
        Error as never,
        code,
        arg,
      );
    }
  });
});
