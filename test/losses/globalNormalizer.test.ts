/**
 * Enforces docs/derivations/aggregation.md#global-normalisers: `policyLoss(…, { global })` treats
 * the batch as one shard of a global batch (divides by the global token / row counts, multiplies
 * by the data-parallel size D), so that D shards averaged as DDP averages them give the loss and
 * gradient of the whole batch; the reference agrees; the shard's own counts give the same bits as
 * no context.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyLoss } from "../../src/index.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  buildConfig,
  expectNormwiseClose,
  FC_PARAMS,
  type LogprobBatch,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
} from "../_kit/index.js";
import { runMain } from "../cli/_run.js";
import { expectPolgradError } from "../io/_kit.js";

/** Rows [b0, b1) of a batch. */
function rowsOf(batch: LogprobBatch, b0: number, b1: number): LogprobBatch {
  const cut = <T>(x: readonly T[]): T[] => x.slice(b0, b1);
  return {
    ...batch,
    logprobs: cut(batch.logprobs),
    oldLogprobs: cut(batch.oldLogprobs),
    refLogprobs: cut(batch.refLogprobs),
    rolloutLogprobs: cut(batch.rolloutLogprobs),
    advantages: cut(batch.advantages as unknown[]) as LogprobBatch["advantages"],
    responseMask: cut(batch.responseMask),
  };
}

const countTokens = (b: LogprobBatch): number =>
  b.responseMask.reduce((a, r) => a + r.filter(Boolean).length, 0);

describe("global normalisers", () => {
  it("identity: D shards with the global counts, averaged over D as DDP does, give the whole batch's loss and gradient", () => {
    for (const aggregation of AGGREGATIONS) {
      for (const [ratio, variant] of RATIO_SURROGATE_PAIRS.slice(0, 6)) {
        fc.assert(
          fc.property(logprobBatches({ maxB: 6 }), fc.integer({ min: 1, max: 3 }), (batch, D) => {
            const B = batch.responseMask.length;
            fc.pre(B >= D);
            const T = batch.responseMask[0].length;
            const config = buildConfig(ratio, variant, aggregation, T, {
              kl: { kind: "k3", coef: 0.07 },
            });
            const whole = policyLoss(config, policyInputs(config, batch));
            const global = { tokens: countTokens(batch), rows: B, dpSize: D };
            // Contiguous shards of ⌈B/D⌉ rows (the last may be shorter).
            const size = Math.ceil(B / D);
            let loss = 0;
            const grad: number[] = [];
            for (let s = 0; s < D; s++) {
              const shard = rowsOf(batch, s * size, Math.min(B, (s + 1) * size));
              if (shard.responseMask.length === 0) continue;
              const r = policyLoss(config, policyInputs(config, shard), { global });
              loss += r.loss / D;
              for (const g of r.gradLogprobs.data) grad.push(g / D);
            }
            const what = `${ratio} × ${variant.name} × ${aggregation} × D=${D}`;
            expectNormwiseClose(loss, whole.loss, 1e-14, `${what}: loss`);
            expectNormwiseClose(
              { rows: B, cols: T, data: Float64Array.from(grad) },
              whole.gradLogprobs,
              1e-14,
              `${what}: grad`,
            );
          }),
          { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) },
        );
      }
    }
  });

  it("gradient: closed form equals the reference with a global context, every aggregation", () => {
    for (const aggregation of AGGREGATIONS) {
      fc.assert(
        fc.property(
          logprobBatches(),
          fc.integer({ min: 0, max: 50 }),
          fc.integer({ min: 0, max: 5 }),
          fc.integer({ min: 1, max: 8 }),
          (batch, extraTokens, extraRows, dpSize) => {
            const T = batch.responseMask[0].length;
            const [ratio, variant] =
              RATIO_SURROGATE_PAIRS[0] as (typeof RATIO_SURROGATE_PAIRS)[number];
            const config = buildConfig(ratio, variant, aggregation, T, {
              kl: { kind: "k2", coef: 0.1 },
            });
            const global = {
              tokens: countTokens(batch) + extraTokens,
              rows: batch.responseMask.length + extraRows,
              dpSize,
            };
            const inputs = policyInputs(config, batch);
            const got = policyLoss(config, inputs, { global });
            const ref = policyLossRef(config, inputs, { global });
            expectNormwiseClose(got.loss, ref.loss, 1e-13, `${aggregation}: loss`);
            expectNormwiseClose(got.gradLogprobs, ref.grad, 1e-13, `${aggregation}: grad`);
            expectNormwiseClose(
              got.klLoss as number,
              ref.klLoss as number,
              1e-13,
              `${aggregation}: kl`,
            );
          },
        ),
        FC_PARAMS,
      );
    }
  });

  it("identity: the shard's own counts and D = 1 give the bits of no global context", () => {
    fc.assert(
      fc.property(logprobBatches(), fc.constantFrom(...AGGREGATIONS), (batch, aggregation) => {
        const T = batch.responseMask[0].length;
        const [ratio, variant] = RATIO_SURROGATE_PAIRS[0] as (typeof RATIO_SURROGATE_PAIRS)[number];
        const config = buildConfig(ratio, variant, aggregation, T);
        const inputs = policyInputs(config, batch);
        const a = policyLoss(config, inputs);
        const b = policyLoss(config, inputs, {
          global: { tokens: countTokens(batch), rows: batch.responseMask.length, dpSize: 1 },
        });
        expect(Object.is(a.loss, b.loss)).toBe(true);
        expect(Array.from(b.gradLogprobs.data)).toEqual(Array.from(a.gradLogprobs.data));
      }),
      FC_PARAMS,
    );
  });

  it("golden: verl's global token-mean on a shard: D·Σ objective / N_global", () => {
    // pg, r = 1 (lp = old), A = [1, −2]: objectives −1 (row 0, 2 tokens) and 2 (row 1, 1 token).
    // The shard holds 3 of the global batch's 12 tokens, D = 2: L = 2·(−1 − 1 + 2)/12 = 0, and
    // ∂L/∂lp = −w·A with w = 2/12 = 1/6: [−1/6, −1/6, 1/3].
    const config: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
    };
    const inputs = {
      logprobs: [
        [-1, -1],
        [-1, -1],
      ],
      oldLogprobs: [
        [-1, -1],
        [-1, -1],
      ],
      advantages: [1, -2],
      responseMask: [
        [1, 1],
        [1, 0],
      ],
    };
    const r = policyLoss(config, inputs, { global: { tokens: 12, dpSize: 2 } });
    expect(r.loss).toBe(0);
    expect(Array.from(r.gradLogprobs.data)).toEqual([-(2 / 12), -(2 / 12), (2 / 12) * 2, 0]);
  });

  it("rejects: a global context smaller than the shard, a zero D, an unknown field", () => {
    const config: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
    };
    const inputs = {
      logprobs: [[-1, -1]],
      oldLogprobs: [[-1, -1]],
      advantages: [1],
      responseMask: [[1, 1]],
    };
    for (const [global, arg] of [
      [{ tokens: 1 }, "options.global.tokens"],
      [{ rows: 0 }, "options.global.rows"],
      [{ dpSize: 0 }, "options.global.dpSize"],
      [{ tokens: 2.5 }, "options.global.tokens"],
      [{ token: 4 }, "options.global.token"],
      [null, "options.global"],
    ] as const) {
      expectPolgradError(
        () => policyLoss(config, inputs, { global: global as never }),
        Error as never,
        "E_CONFIG",
        arg,
      );
    }
  });

  it("rejects: the CLI names the flag, not the library option, and prints nothing on stdout", async () => {
    const batch = new URL("../fixtures/io/frameworks/canonical.json", import.meta.url).pathname;
    for (const [flag, value] of [
      ["--global-tokens", "1"],
      ["--dp-size", "0"],
    ] as const) {
      const r = await runMain(["loss", "--algorithm", "dapo", "--batch", batch, flag, value]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`polgrad loss: ${flag} must be`);
    }
  });
});
