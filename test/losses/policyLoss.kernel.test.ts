/**
 * Enforces the fused policy-loss kernel (src/losses/kernel/, docs/performance.md#the-fused-kernel):
 * bitwise the unfused stage-by-stage evaluation it replaced (test/_kit/unfusedPolicyLoss.ts, the
 * code of commit c31727c), outputs and errors alike, on random batches with holes in the mask,
 * junk at padding, extreme values and non-finite inputs; the `out` option; and the precedence of
 * errors that the fused pass must keep although it reads everything in one pass.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyLoss } from "../../src/index.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import type { PolicyLossInputs } from "../../src/losses/policyLoss.js";
import { FC_PARAMS } from "../_kit/index.js";
import { policyBatches as batches, expectSame, outcome } from "../_kit/policyBatches.js";
import { unfusedPolicyLoss } from "../_kit/unfusedPolicyLoss.js";

describe("policyLoss kernel", () => {
  it("identity: equals the equation-level reference and the unfused stage-by-stage evaluation on random ragged batches", () => {
    // (The equation-level reference is test/verify/closedForm.policyLoss.test.ts's; here the
    // fused kernel is held to the unfused evaluation bitwise, outputs and errors.)
    let errors = 0;
    let results = 0;
    fc.assert(
      fc.property(batches, ({ config, inputs }) => {
        const want = outcome(() => unfusedPolicyLoss("policyLoss", config, inputs));
        const got = outcome(() => policyLoss(config, inputs));
        if ("err" in want) errors++;
        else results++;
        expectSame(got, want, JSON.stringify(config));
      }),
      { ...FC_PARAMS, numRuns: FC_PARAMS.numRuns * 25 },
    );
    // Both kinds of outcome were exercised.
    expect(errors).toBeGreaterThan(50);
    expect(results).toBeGreaterThan(50);
  });

  it("identity: caller-provided outputs (dirty, NaN-filled) give bitwise the allocated result and are the result's arrays", () => {
    fc.assert(
      fc.property(batches, ({ config, inputs, B, T }) => {
        const want = outcome(() => policyLoss(config, inputs));
        if ("err" in want) return;
        const n = B * T;
        const out = {
          gradLogprobs: new Float64Array(n).fill(Number.NaN),
          perTokenObjective: new Float64Array(n).fill(Number.NaN),
          ratio: new Float64Array(n).fill(-7),
          clippedLow: new Uint8Array(n).fill(9),
          clippedHigh: new Uint8Array(n).fill(9),
        };
        const got = outcome(() => policyLoss(config, inputs, { out }));
        expectSame(got, want, JSON.stringify(config));
        if ("ok" in got) {
          expect(got.ok.gradLogprobs.data).toBe(out.gradLogprobs);
          expect(got.ok.clippedHigh.data).toBe(out.clippedHigh);
        }
      }),
      FC_PARAMS,
    );
  });

  const tiny = (): PolicyLossInputs => ({
    logprobs: [
      [-1, -1],
      [-1, -1],
    ],
    oldLogprobs: [
      [-1, -1],
      [-1, -1],
    ],
    refLogprobs: [
      [-1, -1],
      [-1, -1],
    ],
    rolloutLogprobs: [
      [-1, -1],
      [-1, -1],
    ],
    advantages: [1, -1],
    responseMask: [
      [1, 1],
      [1, 0],
    ],
  });
  const DAPO: PolicyLossConfig = {
    ratio: "token",
    surrogate: "pg_clip",
    clip: { epsLow: 0.2, epsHigh: 0.28 },
    aggregation: "token_mean",
  };

  it("rejects: malformed out buffers and unknown options with E_CONFIG naming the field", () => {
    const run = (options: unknown) => () =>
      policyLoss(DAPO, tiny(), options as Parameters<typeof policyLoss>[2]);
    expect(run({ out: { gradLogprobs: new Float64Array(3) } })).toThrow(
      /options\.out\.gradLogprobs must be a Float64Array of length 4 \(B·T\); got a Float64Array of length 3/,
    );
    expect(run({ out: { ratio: [1, 1, 1, 1] } })).toThrow(
      /options\.out\.ratio must be a Float64Array/,
    );
    expect(run({ out: { grad: new Float64Array(4) } })).toThrow(
      /options\.out\.grad must be one of/,
    );
    expect(run({ threads: 2, nope: 1 })).toThrow(/options\.\w+ must be one of/);
    const buf = new Float64Array(6);
    expect(
      run({ out: { gradLogprobs: buf.subarray(0, 4), perTokenObjective: buf.subarray(2, 6) } }),
    ).toThrow(/options\.out\.perTokenObjective must be disjoint from the other outputs/);
    const inputs = {
      ...tiny(),
      logprobs: { rows: 2, cols: 2, data: new Float64Array(4).fill(-1) },
    };
    expect(() => policyLoss(DAPO, inputs, { out: { gradLogprobs: inputs.logprobs.data } })).toThrow(
      /options\.out\.gradLogprobs must be disjoint from the inputs/,
    );
  });

  it("golden: error precedence survives the single pass (finiteness before a later structural error, objective before KL overflow, mask values before shape)", () => {
    // A NaN logprob and a misshaped rollout stream: the NaN was always reported first.
    const tis: PolicyLossConfig = { ...DAPO, isCorrection: { level: "token", cap: 2 } };
    const a = tiny();
    (a.logprobs as number[][])[1][0] = Number.NaN;
    expect(() => policyLoss(tis, { ...a, rolloutLogprobs: [[1]] })).toThrow(
      /policyLoss: logprobs must be finite at response positions; got NaN at \(1, 0\)/,
    );
    // A k3 overflow in row 0 and an overflowing objective in row 1: the objective comes first.
    const pg: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
      kl: { kind: "k3", coef: 0.1 },
    };
    const b = tiny();
    (b.refLogprobs as number[][])[0][0] = 800;
    (b.logprobs as number[][])[1][0] = 800;
    expect(() => policyLoss(pg, b)).toThrow(/perTokenObjective must be finite .* at \(1, 0\)/);
    (b.logprobs as number[][])[1][0] = -1;
    expect(() => policyLoss(pg, b)).toThrow(/klLoss must be finite .* at \(0, 0\)/);
    // A mask value of 2 in a mask of the wrong shape: the value error, as toMask orders them.
    const c = tiny();
    expect(() =>
      policyLoss(DAPO, {
        ...c,
        responseMask: { rows: 1, cols: 4, data: Uint8Array.of(1, 2, 1, 1) },
      }),
    ).toThrow(/responseMask must be 0\/1 valued; got 2 at flat index 1/);
  });

  it("identity: converted streams live in reused memory, yet consecutive nested calls and a call made from inside another give each its own bits", () => {
    // Each batch in nested form and typed form: the typed call converts nothing, so it is the
    // reference for the nested one, whatever the nested calls before it left in the scratch.
    const typedOf = (inputs: PolicyLossInputs, B: number, T: number): PolicyLossInputs => {
      const m = (x: unknown) =>
        Array.isArray(x)
          ? { rows: B, cols: T, data: Float64Array.from((x as number[][]).flat()) }
          : x;
      return {
        ...inputs,
        logprobs: m(inputs.logprobs) as PolicyLossInputs["logprobs"],
        oldLogprobs: m(inputs.oldLogprobs) as PolicyLossInputs["oldLogprobs"],
      };
    };
    let nested = 0;
    fc.assert(
      fc.property(fc.array(batches, { minLength: 2, maxLength: 4 }), (cases) => {
        for (const { config, inputs, B, T } of cases) {
          if (!Array.isArray(inputs.logprobs)) continue;
          nested++;
          const want = outcome(() => policyLoss(config, typedOf(inputs, B, T)));
          const got = outcome(() => policyLoss(config, inputs));
          expectSame(got, want, JSON.stringify(config));
        }
      }),
      FC_PARAMS,
    );
    expect(nested).toBeGreaterThan(20);
    // A call from inside another (an input's getter) while the outer call holds the scratch.
    const rows = (v: number) => [
      [v, v - 0.5, -1],
      [v / 2, -1, -2],
    ];
    const inner: PolicyLossInputs = {
      logprobs: rows(-0.3),
      oldLogprobs: rows(-0.4),
      advantages: [1, -1],
      responseMask: [
        [1, 1, 0],
        [1, 1, 1],
      ],
    };
    const config = {
      ratio: "token",
      surrogate: "pg_clip",
      aggregation: "token_mean",
      clip: { epsLow: 0.2, epsHigh: 0.28 },
    } as const;
    const innerWant = policyLoss(config, inner).loss;
    let innerGot = Number.NaN;
    const outer = {
      ...inner,
      logprobs: rows(-0.2),
      get oldLogprobs() {
        innerGot = policyLoss(config, inner).loss;
        return rows(-0.25);
      },
    };
    const outerGot = policyLoss(config, outer).loss;
    const outerWant = policyLoss(config, {
      ...inner,
      logprobs: rows(-0.2),
      oldLogprobs: rows(-0.25),
    }).loss;
    expect(innerGot).toBe(innerWant);
    expect(outerGot).toBe(outerWant);
  });
});
