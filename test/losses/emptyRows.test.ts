/**
 * Enforces docs/derivations/aggregation.md#rows-with-no-response-token: `config.emptyRows`
 * rejects rows with no response token (the default, polgrad 0.2.0's rule), counts them in the row
 * means' B with no term (verl, TRL, OpenRLHF), or drops them from B; against the reference on
 * random batches with emptied rows, and goldens worked by hand.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyLoss } from "../../src/index.js";
import type { EmptyRows, PolicyLossConfig } from "../../src/losses/config.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  buildConfig,
  expectNormwiseClose,
  FC_PARAMS,
  IS_VARIANTS,
  type LogprobBatch,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
} from "../_kit/index.js";
import { expectPolgradError } from "../io/_kit.js";

/** The batch with the rows in `empty` (indices mod B) emptied, junk left in place. */
function emptied(batch: LogprobBatch, empty: readonly number[]): LogprobBatch {
  const B = batch.responseMask.length;
  const gone = new Set(empty.map((e) => e % B));
  return {
    ...batch,
    responseMask: batch.responseMask.map((r, b) => (gone.has(b) ? r.map(() => false) : r)),
  };
}

const pg = (
  aggregation: PolicyLossConfig["aggregation"],
  emptyRows: EmptyRows,
): PolicyLossConfig => ({
  ratio: "token",
  surrogate: "pg",
  clip: null,
  aggregation,
  emptyRows,
});

describe("rows with no response token", () => {
  it("gradient: count and drop equal the reference on batches with emptied rows, every aggregation, with sequence ratios, IS weights and KL", () => {
    const pairs = [
      RATIO_SURROGATE_PAIRS[0],
      RATIO_SURROGATE_PAIRS.find(([r]) => r === "sequence"),
    ] as (typeof RATIO_SURROGATE_PAIRS)[number][];
    for (const emptyRows of ["count", "drop"] as const) {
      for (const aggregation of AGGREGATIONS) {
        for (const [ratio, variant] of pairs) {
          fc.assert(
            fc.property(
              logprobBatches({ maxB: 5 }),
              fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
              fc.constantFrom(null, ...IS_VARIANTS.slice(0, 6)),
              (raw, empty, isCorrection) => {
                const batch = emptied(raw, empty);
                const T = batch.responseMask[0].length;
                const config = {
                  ...buildConfig(ratio, variant, aggregation, T, {
                    isCorrection,
                    kl: { kind: "k3", coef: 0.05 },
                  }),
                  emptyRows,
                };
                const inputs = policyInputs(config, batch);
                const got = policyLoss(config, inputs);
                const ref = policyLossRef(config, inputs);
                const what = `${emptyRows} ${ratio} × ${variant.name} × ${aggregation}`;
                expectNormwiseClose(got.loss, ref.loss, 1e-13, `${what}: loss`);
                expectNormwiseClose(got.gradLogprobs, ref.grad, 1e-13, `${what}: grad`);
                // Padding and the empty rows hold the masked-position contract.
                batch.responseMask.forEach((row, b) =>
                  row.forEach((on, t) => {
                    if (on) return;
                    const i = b * T + t;
                    expect(Object.is(got.gradLogprobs.data[i], 0)).toBe(true);
                    expect(got.ratio.data[i]).toBe(1);
                  }),
                );
              },
            ),
            { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 2)) },
          );
        }
      }
    }
  });

  // pg on r = 1 (lp = old): each token's objective is A_b; row 0 has 2 tokens (A = 1), row 1
  // none, row 2 has 1 token (A = −4). ℓ = −A.
  const inputs = {
    logprobs: [
      [-1, -1],
      [-1, -1],
      [-1, -1],
    ],
    oldLogprobs: [
      [-1, -1],
      [-1, -1],
      [-1, -1],
    ],
    advantages: [1, 7, -4],
    responseMask: [
      [1, 1],
      [0, 0],
      [1, 0],
    ],
  };

  it("rejects: by default a row with no response token is a MaskError naming it", () => {
    expectPolgradError(
      () => policyLoss(pg("token_mean", "reject"), inputs),
      Error as never,
      "E_MASK",
      "responseMask",
    );
    const { emptyRows: _omitted, ...absent } = pg("token_mean", "reject");
    expect(() => policyLoss(absent, inputs)).toThrow(/zero response tokens in rows \[1\]/);
  });

  it("golden: seq_mean_token_mean counts the empty row in B (TRL's ((ℓ·m).sum(−1) / m.sum(−1).clamp(min=1)).mean()) or drops it", () => {
    // count: B = 3, row means −1, 0, 4 → L = (−1 + 0 + 4)/3 = 1; drop: B = 2 → (−1 + 4)/2 = 1.5.
    const count = policyLoss(pg("seq_mean_token_mean", "count"), inputs);
    expect(count.loss).toBeCloseTo(1, 15);
    // ∂L/∂lp = −A·w with w = 1/(B·L_b): row 0 −1/6 each, row 2 4/3.
    expect(Array.from(count.gradLogprobs.data)).toEqual([-(1 / 6), -(1 / 6), 0, 0, (1 / 3) * 4, 0]);
    const drop = policyLoss(pg("seq_mean_token_mean", "drop"), inputs);
    expect(drop.loss).toBeCloseTo(1.5, 15);
    expect(Array.from(drop.gradLogprobs.data)).toEqual([-(1 / 4), -(1 / 4), 0, 0, (1 / 2) * 4, 0]);
    // token_mean does not see B: N = 3 either way, L = (−1 − 1 + 4)/3.
    expect(policyLoss(pg("token_mean", "count"), inputs).loss).toBe(
      policyLoss(pg("token_mean", "drop"), inputs).loss,
    );
  });

  it("golden: a batch with no response token at all has loss 0 and gradient 0", () => {
    const none = {
      ...inputs,
      responseMask: [
        [0, 0],
        [0, 0],
        [0, 0],
      ],
    };
    for (const emptyRows of ["count", "drop"] as const) {
      const r = policyLoss(pg("token_mean", emptyRows), none);
      expect(r.loss).toBe(0);
      expect(Array.from(r.gradLogprobs.data).every((g) => Object.is(g, 0))).toBe(true);
    }
  });
});
