/**
 * Enforces docs/derivations/aggregation.md#row-epsilon: seq_mean_token_mean's row divisor
 * L_b + ε (verl's and OpenRLHF's 1e-8 under a float64 mask) in policyLoss equals the
 * equation-level reference differentiated by the independent autodiff (≤ 1e-13), with KL, an
 * entropy bonus and a global context; ε = 0 is bitwise the plain weights; a golden is worked by
 * hand; bad values are typed errors naming the field.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  centralDifference,
  expectNormwiseClose,
  FC_PARAMS,
  logprobBatches,
  policyInputs,
} from "../_kit/index.js";

const base: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 },
  aggregation: "seq_mean_token_mean",
};

describe("rowEpsilon", () => {
  it("golden: one token of loss 1 gives 1/(1 + 1e-8) with epsilon 1e-8, and epsilon 0 is bitwise the plain weights", () => {
    // pg with r = 1, A = −1: ℓ = 1; one row of L = 1: 1/(1·(1 + ε)).
    const inputs = {
      logprobs: [[-1, 0]],
      oldLogprobs: [[-1, 0]],
      advantages: [-1],
      responseMask: [[true, false]],
    };
    const cfg: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "seq_mean_token_mean",
    };
    expect(policyLoss(cfg, inputs).loss).toBe(1);
    expect(policyLoss({ ...cfg, rowEpsilon: 1e-8 }, inputs).loss).toBe(1 / (1 + 1e-8));
    fc.assert(
      fc.property(logprobBatches(), (batch) => {
        const inp = policyInputs(base, batch);
        const a = policyLoss(base, inp);
        const b = policyLoss({ ...base, rowEpsilon: 0 }, inp);
        expect(b.loss).toBe(a.loss);
        expect(Array.from(b.gradLogprobs.data)).toEqual(Array.from(a.gradLogprobs.data));
      }),
      FC_PARAMS,
    );
  });

  it("gradient: closed form equals the reference with a row epsilon, with KL, an entropy bonus and a global context", () => {
    const configs: PolicyLossConfig[] = [
      { ...base, rowEpsilon: 1e-8 },
      { ...base, rowEpsilon: 0.5, kl: { kind: "k3", coef: 0.1 } },
      {
        ...base,
        rowEpsilon: 0.25,
        entropyBonus: { coef: 0.2, aggregation: "seq_mean_token_mean" },
      },
      {
        ...base,
        aggregation: "token_mean",
        rowEpsilon: 0.3,
        kl: { kind: "k2", coef: 0.1, aggregation: "seq_mean_token_mean" },
      },
    ];
    for (const config of configs) {
      for (const global of [undefined, { rows: 9, dpSize: 2 }]) {
        fc.assert(
          fc.property(logprobBatches(), (batch) => {
            const inputs = {
              ...policyInputs(config, batch),
              entropies: batch.logprobs.map((r) => r.map((x) => Math.abs(x))),
            };
            const opts = global === undefined ? {} : { global };
            const got = policyLoss(config, inputs, opts);
            const ref = policyLossRef(config, inputs, opts);
            expectNormwiseClose(got.loss, ref.loss, 1e-13, "loss");
            expectNormwiseClose(got.gradLogprobs, ref.grad, 1e-13, "grad");
          }),
          { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) },
        );
      }
    }
  });

  it("gradient: central differences match the closed form with a row epsilon", () => {
    const config: PolicyLossConfig = { ...base, rowEpsilon: 0.5, kl: { kind: "k3", coef: 0.1 } };
    fc.assert(
      fc.property(logprobBatches({ junk: [0] }), (batch) => {
        const inputs = policyInputs(config, batch);
        const got = policyLoss(config, inputs);
        // pg_clip has kinks at the band edges: compare only away from them.
        const r = got.ratio.data;
        for (let i = 0; i < r.length; i++) {
          const x = r[i] as number;
          if (Math.abs(x - 0.8) < 1e-3 || Math.abs(x - 1.2) < 1e-3 || Math.abs(x - 3) < 1e-3)
            return;
        }
        const fd = centralDifference(
          (lp) => policyLoss(config, { ...inputs, logprobs: lp }).loss,
          batch.logprobs,
          1e-6,
          batch.responseMask,
        );
        expectNormwiseClose(
          got.gradLogprobs,
          { rows: fd.length, cols: fd[0]?.length ?? 0, data: Float64Array.from(fd.flat()) },
          1e-6,
          "fd",
        );
      }),
      { ...FC_PARAMS, numRuns: 20 },
    );
  });

  it("rejects: a negative or non-finite epsilon, or one without a seq_mean_token_mean aggregation, naming the field", () => {
    const inputs = {
      logprobs: [[-1]],
      oldLogprobs: [[-1]],
      advantages: [1],
      responseMask: [[true]],
    };
    for (const e of [-1e-8, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => policyLoss({ ...base, rowEpsilon: e }, inputs)).toThrow(
        /config\.rowEpsilon must be a finite number ≥ 0/,
      );
    }
    let err: unknown;
    try {
      policyLoss({ ...base, aggregation: "token_mean", rowEpsilon: 1e-8 }, inputs);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).arg).toBe("config.rowEpsilon");
  });
});
