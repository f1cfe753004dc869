/**
 * Enforces that the closed-form value loss and KL functions equal their equation-level references
 * differentiated by the independent autodiff (docs/derivations/reference.md#value-loss and #kl).
 * Criterion: norm-wise relative max|x − x_ref| ≤ 1e-13·max(1, max|x_ref|).
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  klEstimate,
  klInReward,
  klLoss,
  reverseKlGradSurrogate,
  valueLoss,
} from "../../src/index.js";
import { scalarValue } from "../../src/verify/autodiff.js";
import {
  klEstimatorRef,
  klLossRef,
  reverseKlGradSurrogateRef,
  valueLossRef,
} from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  expectBitwise,
  expectNormwiseClose,
  FC_PARAMS,
  KL_KINDS,
  logprobBatches,
  recordDisagreement,
  reportDisagreement,
  valueBatches,
} from "../_kit/index.js";

const TOL = 1e-13;

afterAll(() => reportDisagreement("closedForm.valueKl"));

describe("valueLoss", () => {
  it("gradient: closed form equals the reference for every aggregation, clipped (ε = 0.2) and unclipped", () => {
    for (const aggregation of AGGREGATIONS) {
      for (const clipEps of [null, 0.2]) {
        fc.assert(
          fc.property(valueBatches(), (b) => {
            const opts = { clipEps, aggregation, normLen: b.responseMask[0].length + 1 };
            const got = valueLoss(b.values, b.oldValues, b.returns, b.responseMask, opts);
            const ref = valueLossRef(b.values, b.oldValues, b.returns, b.responseMask, opts);
            const label = `${aggregation} × clipEps ${clipEps}`;
            recordDisagreement(
              "valueLoss loss",
              expectNormwiseClose(got.loss, ref.loss, TOL, `${label}: loss`),
            );
            recordDisagreement(
              "valueLoss grad",
              expectNormwiseClose(got.gradValues, ref.grad, TOL, `${label}: gradValues`),
            );
            expect(got.clippedFrac, `${label}: clippedFrac`).toBe(ref.clippedFrac);
          }),
          FC_PARAMS,
        );
      }
    }
  });

  it("identity: a clip band wider than every |v − v_old| equals the unclipped loss bitwise", () => {
    // clamp returns v bitwise inside the band, so max(e, e) = e and the tie splits ½ + ½ = 1.
    for (const aggregation of AGGREGATIONS) {
      fc.assert(
        fc.property(valueBatches(), (b) => {
          const normLen = b.responseMask[0].length + 1;
          const wide = valueLoss(b.values, b.oldValues, b.returns, b.responseMask, {
            clipEps: 100,
            aggregation,
            normLen,
          });
          const plain = valueLoss(b.values, b.oldValues, b.returns, b.responseMask, {
            clipEps: null,
            aggregation,
            normLen,
          });
          expectBitwise(
            { loss: wide.loss, gradValues: wide.gradValues },
            { loss: plain.loss, gradValues: plain.gradValues },
            aggregation,
          );
          expect(wide.clippedFrac).toBe(0);
        }),
        FC_PARAMS,
      );
    }
  });
});

describe("klLoss", () => {
  it("gradient: closed form equals the reference for every estimator and aggregation", () => {
    for (const kind of KL_KINDS) {
      for (const aggregation of AGGREGATIONS) {
        fc.assert(
          fc.property(logprobBatches(), (b) => {
            const opts = { responseMask: b.responseMask, normLen: b.responseMask[0].length + 1 };
            const got = klLoss(b.logprobs, b.refLogprobs, kind, aggregation, opts);
            const ref = klLossRef(b.logprobs, b.refLogprobs, kind, aggregation, opts);
            recordDisagreement(
              "klLoss loss",
              expectNormwiseClose(got.loss, ref.loss, TOL, `${kind} × ${aggregation}: loss`),
            );
            recordDisagreement(
              "klLoss grad",
              expectNormwiseClose(
                got.gradLogprobs,
                ref.grad,
                TOL,
                `${kind} × ${aggregation}: grad`,
              ),
            );
          }),
          FC_PARAMS,
        );
      }
    }
  });
});

describe("klEstimate", () => {
  it("property: per-token values equal the reference estimators, 0 at padding", () => {
    for (const kind of KL_KINDS) {
      fc.assert(
        fc.property(logprobBatches(), (b) => {
          const got = klEstimate(b.logprobs, b.refLogprobs, kind, { responseMask: b.responseMask });
          const want = b.responseMask.map((row, i) =>
            row.map((on, t) =>
              on ? scalarValue(klEstimatorRef(kind, b.refLogprobs[i][t] - b.logprobs[i][t])) : 0,
            ),
          );
          recordDisagreement("klEstimate", expectNormwiseClose(got, want, TOL, kind));
        }),
        FC_PARAMS,
      );
    }
  });
});

describe("klInReward", () => {
  it("property: equals rewards − coef·k(ref − old) from the reference estimators, 0 at padding", () => {
    for (const kind of KL_KINDS) {
      fc.assert(
        fc.property(
          logprobBatches({ seqAdvantages: false }),
          fc.double({ min: -2, max: 2, noNaN: true }),
          (b, coef) => {
            const rewards = b.advantages as number[][];
            const got = klInReward(rewards, b.oldLogprobs, b.refLogprobs, kind, coef, {
              responseMask: b.responseMask,
            });
            const want = b.responseMask.map((row, i) =>
              row.map((on, t) =>
                on
                  ? rewards[i][t] -
                    coef *
                      scalarValue(klEstimatorRef(kind, b.refLogprobs[i][t] - b.oldLogprobs[i][t]))
                  : 0,
              ),
            );
            recordDisagreement("klInReward", expectNormwiseClose(got, want, TOL, kind));
          },
        ),
        FC_PARAMS,
      );
    }
  });
});

describe("reverseKlGradSurrogate", () => {
  it("gradient: closed form equals the reference for every aggregation", () => {
    for (const aggregation of AGGREGATIONS) {
      fc.assert(
        fc.property(logprobBatches(), (b) => {
          const opts = { responseMask: b.responseMask, normLen: b.responseMask[0].length + 1 };
          const got = reverseKlGradSurrogate(b.logprobs, b.refLogprobs, aggregation, opts);
          const ref = reverseKlGradSurrogateRef(b.logprobs, b.refLogprobs, aggregation, opts);
          recordDisagreement(
            "reverseKl loss",
            expectNormwiseClose(got.loss, ref.loss, TOL, `${aggregation}: loss`),
          );
          recordDisagreement(
            "reverseKl grad",
            expectNormwiseClose(got.gradLogprobs, ref.grad, TOL, `${aggregation}: grad`),
          );
        }),
        FC_PARAMS,
      );
    }
  });
});
