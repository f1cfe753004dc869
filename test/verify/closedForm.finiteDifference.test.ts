/**
 * Enforces both the reference and the closed forms against central finite differences
 * (h = 1e-6, norm-wise relative tolerance 1e-7) on branch-safe draws: ratios at least 1e-4 from
 * every clip edge and cap, |δ| ≥ 1e-4 for the abs KL, values away from the value-clip kinks
 * (docs/derivations/reference.md#tolerance). Finite differences see through stop-gradients, so
 * sg-carrying losses are differenced through their sg-frozen equivalent at lp₀ (cispo → reinforce
 * on sg[ŵ(lp₀)]·A; sequence_token → token ratio against old' = lp₀ − log s(lp₀)).
 */
import fc from "fast-check";
import { afterAll, describe, it } from "vitest";
import { toRows } from "../../src/core/tensor.js";
import { klLoss, policyLoss, reverseKlGradSurrogate, valueLoss } from "../../src/index.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { klLossRef, policyLossRef, valueLossRef } from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  absKlSafe,
  branchSafe,
  buildConfig,
  centralDifference,
  expectNormwiseClose,
  FC_PARAMS,
  KL_KINDS,
  type LogprobBatch,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
  recordDisagreement,
  reportDisagreement,
  sgFrozen,
  valueBatches,
  valueBranchSafe,
} from "../_kit/index.js";

const H = 1e-6;
const FD_TOL = 1e-7;
const MARGIN = 1e-4;
const RUNS = { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) };
/** The TIS × KL settings differenced (a subset of the full sweep). */
const EXTRAS = [
  { isCorrection: null, kl: null },
  { isCorrection: { cap: 2, level: "token" }, kl: { kind: "k3", coef: 0.07 } },
  { isCorrection: { cap: 1.5, level: "sequence" }, kl: { kind: "abs", coef: 0.07 } },
] as const;

afterAll(() => reportDisagreement("closedForm.finiteDifference"));

/** The frozen config and batch, and the FD of `loss` over logprobs at the response positions. */
function fdOfFrozen(
  config: PolicyLossConfig,
  batch: LogprobBatch,
  loss: (config: PolicyLossConfig, batch: LogprobBatch) => number,
): number[][] {
  const ratio = toRows(policyLossRef(config, policyInputs(config, batch)).ratio);
  const frozen = sgFrozen(config, batch, ratio);
  return centralDifference(
    (lp) => loss(frozen.config, { ...frozen.batch, logprobs: lp }),
    batch.logprobs,
    H,
    batch.responseMask,
  );
}

function sweep(
  check: (config: PolicyLossConfig, batch: LogprobBatch, label: string) => void,
): void {
  for (const [ratio, variant] of RATIO_SURROGATE_PAIRS) {
    for (const aggregation of AGGREGATIONS) {
      for (const extra of EXTRAS) {
        const label = `${ratio} × ${variant.name} × ${aggregation} × tis=${extra.isCorrection?.level ?? "none"} kl=${extra.kl?.kind ?? "none"}`;
        fc.assert(
          fc.property(logprobBatches({ maxB: 3, maxT: 5 }), (batch) => {
            const config = buildConfig(
              ratio,
              variant,
              aggregation,
              batch.responseMask[0].length,
              extra,
            );
            fc.pre(branchSafe(config, batch, MARGIN));
            check(config, batch, label);
          }),
          RUNS,
        );
      }
    }
  }
}

describe("policyLossRef", () => {
  it("gradient: matches central differences of the sg-frozen equivalent", () => {
    sweep((config, batch, label) => {
      const ref = policyLossRef(config, policyInputs(config, batch));
      const fd = fdOfFrozen(config, batch, (c, b) => policyLossRef(c, policyInputs(c, b)).loss);
      recordDisagreement(
        "policy reference vs FD",
        expectNormwiseClose(ref.grad, fd, FD_TOL, `${label}: reference vs FD`),
      );
    });
  });
});

describe("policyLoss", () => {
  it("gradient: closed form matches central differences of its own loss (sg-frozen equivalent)", () => {
    sweep((config, batch, label) => {
      const got = policyLoss(config, policyInputs(config, batch));
      const fd = fdOfFrozen(config, batch, (c, b) => policyLoss(c, policyInputs(c, b)).loss);
      recordDisagreement(
        "policy closed form vs FD",
        expectNormwiseClose(got.gradLogprobs, fd, FD_TOL, `${label}: closed form vs FD`),
      );
    });
  });
});

describe("valueLossRef", () => {
  it("gradient: matches central differences, clipped and unclipped", () => {
    for (const aggregation of AGGREGATIONS) {
      for (const clipEps of [null, 0.2]) {
        fc.assert(
          fc.property(valueBatches({ maxB: 3, maxT: 5 }), (b) => {
            fc.pre(valueBranchSafe(b, clipEps, MARGIN));
            const opts = { clipEps, aggregation, normLen: b.responseMask[0].length + 1 };
            const ref = valueLossRef(b.values, b.oldValues, b.returns, b.responseMask, opts);
            const got = valueLoss(b.values, b.oldValues, b.returns, b.responseMask, opts);
            const fdRef = centralDifference(
              (v) => valueLossRef(v, b.oldValues, b.returns, b.responseMask, opts).loss,
              b.values,
              H,
              b.responseMask,
            );
            const fdGot = centralDifference(
              (v) => valueLoss(v, b.oldValues, b.returns, b.responseMask, opts).loss,
              b.values,
              H,
              b.responseMask,
            );
            recordDisagreement(
              "value reference vs FD",
              expectNormwiseClose(
                ref.grad,
                fdRef,
                FD_TOL,
                `${aggregation} × ${clipEps}: reference vs FD`,
              ),
            );
            recordDisagreement(
              "value closed form vs FD",
              expectNormwiseClose(
                got.gradValues,
                fdGot,
                FD_TOL,
                `${aggregation} × ${clipEps}: closed form vs FD`,
              ),
            );
          }),
          RUNS,
        );
      }
    }
  });
});

describe("klLossRef", () => {
  it("gradient: matches central differences for every estimator and aggregation", () => {
    for (const kind of KL_KINDS) {
      for (const aggregation of AGGREGATIONS) {
        fc.assert(
          fc.property(logprobBatches({ maxB: 3, maxT: 5 }), (b) => {
            fc.pre(kind !== "abs" || absKlSafe(b, MARGIN));
            const opts = { responseMask: b.responseMask, normLen: b.responseMask[0].length + 1 };
            const ref = klLossRef(b.logprobs, b.refLogprobs, kind, aggregation, opts);
            const got = klLoss(b.logprobs, b.refLogprobs, kind, aggregation, opts);
            const fdRef = centralDifference(
              (lp) => klLossRef(lp, b.refLogprobs, kind, aggregation, opts).loss,
              b.logprobs,
              H,
              b.responseMask,
            );
            const fdGot = centralDifference(
              (lp) => klLoss(lp, b.refLogprobs, kind, aggregation, opts).loss,
              b.logprobs,
              H,
              b.responseMask,
            );
            recordDisagreement(
              "kl reference vs FD",
              expectNormwiseClose(
                ref.grad,
                fdRef,
                FD_TOL,
                `${kind} × ${aggregation}: reference vs FD`,
              ),
            );
            recordDisagreement(
              "kl closed form vs FD",
              expectNormwiseClose(
                got.gradLogprobs,
                fdGot,
                FD_TOL,
                `${kind} × ${aggregation}: closed form vs FD`,
              ),
            );
          }),
          RUNS,
        );
      }
    }
  });
});

describe("reverseKlGradSurrogate", () => {
  it("gradient: matches central differences of the k2 loss (the unbiased reverse-KL gradient)", () => {
    for (const aggregation of AGGREGATIONS) {
      fc.assert(
        fc.property(logprobBatches({ maxB: 3, maxT: 5 }), (b) => {
          const opts = { responseMask: b.responseMask, normLen: b.responseMask[0].length + 1 };
          const got = reverseKlGradSurrogate(b.logprobs, b.refLogprobs, aggregation, opts);
          const fd = centralDifference(
            (lp) => klLoss(lp, b.refLogprobs, "k2", aggregation, opts).loss,
            b.logprobs,
            H,
            b.responseMask,
          );
          recordDisagreement(
            "reverseKl vs FD of k2",
            expectNormwiseClose(got.gradLogprobs, fd, FD_TOL, aggregation),
          );
        }),
        RUNS,
      );
    }
  });
});
