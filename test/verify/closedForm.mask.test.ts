/**
 * Enforces the masked-position contract of the closed forms for every valid policy-loss
 * combination (docs/derivations/reference.md#mask): junk at padding (0, 123, NaN, ±Inf) leaves
 * every output and gradient bitwise unchanged, and at padding the gradient is exactly +0, the
 * objective 0, the ratio 1 and the clip flags false. Same for valueLoss, klLoss and
 * reverseKlGradSurrogate.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { klLoss, policyLoss, reverseKlGradSurrogate, valueLoss } from "../../src/index.js";
import {
  AGGREGATIONS,
  buildConfig,
  expectMaskInvariant,
  FC_PARAMS,
  KL_KINDS,
  KL_VARIANTS,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
  TIS_VARIANTS,
  valueBatches,
  variantLabel,
} from "../_kit/index.js";

const RUNS = { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) };

describe("policyLoss", () => {
  for (const [ratio, variant] of RATIO_SURROGATE_PAIRS) {
    it(`mask invariance: ${ratio} × ${variant.name}, every aggregation × TIS × KL, bitwise under junk at padding`, () => {
      for (const aggregation of AGGREGATIONS) {
        for (const isCorrection of TIS_VARIANTS) {
          for (const kl of KL_VARIANTS) {
            fc.assert(
              fc.property(logprobBatches(), (batch) => {
                const config = buildConfig(
                  ratio,
                  variant,
                  aggregation,
                  batch.responseMask[0].length,
                  { isCorrection, kl },
                );
                expectMaskInvariant(
                  (inputs) => policyLoss(config, inputs),
                  policyInputs(config, batch),
                );
              }),
              RUNS,
            );
          }
        }
      }
    });

    it(`gradient: exactly +0 at padding for ${ratio} × ${variant.name}, with objective 0, ratio 1 and flags false there`, () => {
      for (const aggregation of AGGREGATIONS) {
        for (const isCorrection of TIS_VARIANTS) {
          for (const kl of KL_VARIANTS) {
            const label = `${ratio} × ${variant.name} × ${aggregation} × ${variantLabel(isCorrection, kl)}`;
            fc.assert(
              fc.property(logprobBatches(), (batch) => {
                const config = buildConfig(
                  ratio,
                  variant,
                  aggregation,
                  batch.responseMask[0].length,
                  { isCorrection, kl },
                );
                const out = policyLoss(config, policyInputs(config, batch));
                const m = batch.responseMask.flat();
                m.forEach((on, i) => {
                  if (on) return;
                  expect(
                    Object.is(out.gradLogprobs.data[i], 0),
                    `${label}: grad at padding ${i}`,
                  ).toBe(true);
                  expect(
                    Object.is(out.perTokenObjective.data[i], 0),
                    `${label}: objective at padding ${i}`,
                  ).toBe(true);
                  expect(out.ratio.data[i], `${label}: ratio at padding ${i}`).toBe(1);
                  expect(
                    [out.clippedLow.data[i], out.clippedHigh.data[i]],
                    `${label}: flags at padding ${i}`,
                  ).toEqual([0, 0]);
                });
              }),
              RUNS,
            );
          }
        }
      }
    });
  }
});

describe("valueLoss", () => {
  it("mask invariance: every aggregation, clipped and unclipped, bitwise under junk at padding", () => {
    for (const aggregation of AGGREGATIONS) {
      for (const clipEps of [null, 0.2]) {
        fc.assert(
          fc.property(valueBatches(), (batch) => {
            const normLen = batch.responseMask[0].length + 1;
            expectMaskInvariant(
              (b) =>
                valueLoss(b.values, b.oldValues, b.returns, b.responseMask, {
                  clipEps,
                  aggregation,
                  normLen,
                }),
              batch,
            );
            const out = valueLoss(
              batch.values,
              batch.oldValues,
              batch.returns,
              batch.responseMask,
              { clipEps, aggregation, normLen },
            );
            batch.responseMask.flat().forEach((on, i) => {
              if (!on) expect(Object.is(out.gradValues.data[i], 0)).toBe(true);
            });
          }),
          RUNS,
        );
      }
    }
  });
});

describe("klLoss", () => {
  it("mask invariance: every estimator and aggregation, bitwise under junk at padding", () => {
    for (const kind of KL_KINDS) {
      for (const aggregation of AGGREGATIONS) {
        fc.assert(
          fc.property(logprobBatches(), (batch) => {
            const opts = {
              responseMask: batch.responseMask,
              normLen: batch.responseMask[0].length + 1,
            };
            const inputs = {
              logprobs: batch.logprobs,
              refLogprobs: batch.refLogprobs,
              responseMask: batch.responseMask,
            };
            expectMaskInvariant(
              (b) =>
                klLoss(b.logprobs, b.refLogprobs, kind, aggregation, {
                  ...opts,
                  responseMask: b.responseMask,
                }),
              inputs,
            );
            const out = klLoss(batch.logprobs, batch.refLogprobs, kind, aggregation, opts);
            batch.responseMask.flat().forEach((on, i) => {
              if (!on) expect(Object.is(out.gradLogprobs.data[i], 0)).toBe(true);
            });
          }),
          RUNS,
        );
      }
    }
  });
});

describe("reverseKlGradSurrogate", () => {
  it("mask invariance: every aggregation, bitwise under junk at padding", () => {
    for (const aggregation of AGGREGATIONS) {
      fc.assert(
        fc.property(logprobBatches(), (batch) => {
          const normLen = batch.responseMask[0].length + 1;
          const inputs = {
            logprobs: batch.logprobs,
            refLogprobs: batch.refLogprobs,
            responseMask: batch.responseMask,
          };
          expectMaskInvariant(
            (b) =>
              reverseKlGradSurrogate(b.logprobs, b.refLogprobs, aggregation, {
                responseMask: b.responseMask,
                normLen,
              }),
            inputs,
          );
          const out = reverseKlGradSurrogate(batch.logprobs, batch.refLogprobs, aggregation, {
            responseMask: batch.responseMask,
            normLen,
          });
          batch.responseMask.flat().forEach((on, i) => {
            if (!on) expect(Object.is(out.gradLogprobs.data[i], 0)).toBe(true);
          });
        }),
        RUNS,
      );
    }
  });
});
