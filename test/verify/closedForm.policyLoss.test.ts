/**
 * Enforces that the closed-form `policyLoss` (value and gradient computed in one pass) equals the
 * equation-level reference differentiated by the independent autodiff, for every valid combination
 * of ratio × surrogate × aggregation × TIS × KL, on ragged batches with junk (123, NaN, ±Inf) at
 * padding (docs/derivations/reference.md#policy-loss). Criterion: norm-wise relative
 * max|x − x_ref| ≤ 1e-13·max(1, max|x_ref|) (docs/derivations/reference.md#tolerance).
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { policyLoss } from "../../src/index.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  buildConfig,
  expectNormwiseClose,
  FC_PARAMS,
  KL_KINDS,
  KL_VARIANTS,
  type LogprobBatch,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
  recordDisagreement,
  reportDisagreement,
  TIS_VARIANTS,
  variantLabel,
} from "../_kit/index.js";

const TOL = 1e-13;

afterAll(() => reportDisagreement("closedForm.policyLoss"));

/** Compare closed form and reference on one batch; returns nothing, throws on disagreement. */
function agree(config: PolicyLossConfig, batch: LogprobBatch, label: string): void {
  const inputs = policyInputs(config, batch);
  const got = policyLoss(config, inputs);
  const ref = policyLossRef(config, inputs);
  recordDisagreement("loss", expectNormwiseClose(got.loss, ref.loss, TOL, `${label}: loss`));
  recordDisagreement(
    "gradLogprobs",
    expectNormwiseClose(got.gradLogprobs, ref.grad, TOL, `${label}: gradLogprobs`),
  );
  recordDisagreement(
    "perTokenObjective",
    expectNormwiseClose(
      got.perTokenObjective,
      ref.perTokenObjective,
      TOL,
      `${label}: perTokenObjective`,
    ),
  );
  recordDisagreement("ratio", expectNormwiseClose(got.ratio, ref.ratio, TOL, `${label}: ratio`));
  if (ref.klLoss === null) expect(got.klLoss, `${label}: klLoss`).toBeNull();
  else
    recordDisagreement(
      "klLoss",
      expectNormwiseClose(got.klLoss as number, ref.klLoss, TOL, `${label}: klLoss`),
    );
}

describe("policyLoss", () => {
  for (const [ratio, variant] of RATIO_SURROGATE_PAIRS) {
    for (const aggregation of AGGREGATIONS) {
      it(`gradient: closed form equals the reference for ${ratio} × ${variant.name} × ${aggregation}, every TIS × KL`, () => {
        for (const isCorrection of TIS_VARIANTS) {
          for (const kl of KL_VARIANTS) {
            const label = `${ratio} × ${variant.name} × ${aggregation} × ${variantLabel(isCorrection, kl)}`;
            fc.assert(
              fc.property(logprobBatches(), (batch) => {
                const T = batch.responseMask[0].length;
                agree(
                  buildConfig(ratio, variant, aggregation, T, { isCorrection, kl }),
                  batch,
                  label,
                );
              }),
              FC_PARAMS,
            );
          }
        }
      });
    }
  }

  it("gradient: closed form equals the reference when the KL term sets its own aggregation and normLen", () => {
    // Every (policy aggregation, KL aggregation) pair; the KL budget differs from the policy's.
    for (const [ratio, variant] of RATIO_SURROGATE_PAIRS) {
      for (const aggregation of AGGREGATIONS) {
        for (const klAggregation of AGGREGATIONS) {
          fc.assert(
            fc.property(logprobBatches(), fc.constantFrom(...KL_KINDS), (batch, kind) => {
              const T = batch.responseMask[0].length;
              const kl = {
                kind,
                coef: -0.3,
                aggregation: klAggregation,
                normLen: klAggregation === "token_sum_norm" ? 2 * T + 3 : null,
              };
              const label = `${ratio} × ${variant.name} × ${aggregation} × kl=${kind}/${klAggregation}`;
              agree(buildConfig(ratio, variant, aggregation, T, { kl }), batch, label);
            }),
            { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 6)) },
          );
        }
      }
    }
  });
});
