/**
 * Enforces docs/derivations/losses.md#rejection-sampling: `config.rejection` takes the tokens and
 * rows whose old↔rollout divergence breaks a rule out of the mask before aggregation (verl's
 * rollout_rs): against the reference on random batches for every statistic × estimator, and
 * goldens worked by hand (a rejected token leaves the token mean's N; a rejected row leaves B
 * under "drop"; a row emptied under the default "reject" is a MaskError).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyLoss } from "../../src/index.js";
import type { PolicyLossConfig, RejectionRule } from "../../src/losses/config.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  buildConfig,
  expectNormwiseClose,
  FC_PARAMS,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
} from "../_kit/index.js";
import { expectPolgradError } from "../io/_kit.js";

/** verl's presets and each statistic × estimator, bounds that bind on the kit's batches (rollout = old ± 2). */
const RULES: readonly (readonly RejectionRule[])[] = [
  [{ statistic: "token", estimator: "k1", lower: 0.5, upper: 2 }],
  [{ statistic: "token", estimator: "k2", upper: 0.5 }],
  [{ statistic: "token", estimator: "k3", upper: 0.4, logClamp: 20 }],
  [{ statistic: "seq_sum", estimator: "k1", lower: 0.5, upper: 2 }],
  [{ statistic: "seq_mean", estimator: "k1", lower: 0.7, upper: 1.4 }],
  [{ statistic: "seq_mean", estimator: "k3", upper: 0.2 }],
  [{ statistic: "seq_max", estimator: "k2", upper: 1.5 }],
  [
    { statistic: "token", estimator: "k1", lower: 0.3, upper: 3 },
    { statistic: "seq_sum", estimator: "k3", upper: 2 },
  ],
];

const withRejection = (
  c: PolicyLossConfig,
  rejection: readonly RejectionRule[],
): PolicyLossConfig => ({
  ...c,
  rejection,
  emptyRows: "count",
});

describe("rejection sampling", () => {
  it("gradient: closed form equals the reference for every rule set, aggregation and a token and a sequence ratio", () => {
    const pairs = [
      RATIO_SURROGATE_PAIRS[0],
      RATIO_SURROGATE_PAIRS.find(([r]) => r === "sequence"),
    ] as (typeof RATIO_SURROGATE_PAIRS)[number][];
    let removedSome = 0;
    for (const rules of RULES) {
      for (const aggregation of AGGREGATIONS) {
        for (const [ratio, variant] of pairs) {
          fc.assert(
            fc.property(logprobBatches(), (batch) => {
              const T = batch.responseMask[0].length;
              const config = withRejection(
                buildConfig(ratio, variant, aggregation, T, { kl: { kind: "k2", coef: 0.1 } }),
                rules,
              );
              const inputs = {
                ...policyInputs(config, batch),
                rolloutLogprobs: batch.rolloutLogprobs,
              };
              const got = policyLoss(config, inputs);
              const ref = policyLossRef(config, inputs);
              const what = `${JSON.stringify(rules)} ${ratio} × ${variant.name} × ${aggregation}`;
              expectNormwiseClose(got.loss, ref.loss, 1e-13, `${what}: loss`);
              expectNormwiseClose(got.gradLogprobs, ref.grad, 1e-13, `${what}: grad`);
              // A rejected response token holds the padding contract.
              const given = batch.responseMask.flat();
              given.forEach((on, i) => {
                if (
                  on &&
                  ref.grad.data[i] === 0 &&
                  got.ratio.data[i] === 1 &&
                  got.perTokenObjective.data[i] === 0
                )
                  removedSome++;
              });
            }),
            { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) },
          );
        }
      }
    }
    // The rules did take tokens out.
    expect(removedSome).toBeGreaterThan(100);
  });

  // pg on r = 1, A = 1, token_mean: each kept token's objective is −1 and ∂L/∂lp = −1/N.
  const pg = (
    rejection: readonly RejectionRule[],
    emptyRows?: "count" | "drop",
  ): PolicyLossConfig => ({
    ratio: "token",
    surrogate: "pg",
    clip: null,
    aggregation: "seq_mean_token_mean",
    rejection,
    ...(emptyRows === undefined ? {} : { emptyRows }),
  });
  // lr = old − rollout per token; rollout = −lr with old = 0.
  const batch = (lrs: number[][]) => ({
    logprobs: lrs.map((r) => r.map(() => 0)),
    oldLogprobs: lrs.map((r) => r.map(() => 0)),
    rolloutLogprobs: lrs.map((r) => r.map((x) => -x)),
    advantages: lrs.map(() => 1),
    responseMask: lrs.map((r) => r.map(() => 1)),
  });

  it("golden: a token whose k1 = −lr leaves [ln 0.5, ln 2] is taken out of its row's mean", () => {
    // Row 0: lr = [0.1, 1.0]: −1.0 < ln 0.5 = −0.693 → token 1 out; row mean over 1 token.
    // Row 1: lr = [0, 0]: both kept. seq_mean_token_mean: (1/2)(−1) + (1/2)(−1) = −1.
    const r = policyLoss(
      pg([{ statistic: "token", estimator: "k1", lower: 0.5, upper: 2 }]),
      batch([
        [0.1, 1.0],
        [0, 0],
      ]),
    );
    expect(r.loss).toBe(-1);
    // w = 1/(B·L_b): row 0 has one token left (1/2), row 1 two (1/4).
    expect(Array.from(r.gradLogprobs.data)).toEqual([-0.5, 0, -0.25, -0.25]);
    expect(r.ratio.data[1]).toBe(1);
  });

  it("golden: IS weights are formed on the mask as given, before rejection (verl's order), at the sequence level and under normalize", () => {
    // Row 0: lr = [0.1, 1.0]; the token k1 rule [ln 0.5, ln 2] takes token 1 out. Row 1: lr = [0, 0].
    // Sequence IS (no cap): row 0's weight is exp(0.1 + 1.0) = exp(1.1), its sum over the mask as
    // given (after rejection it would be exp(0.1)); row 1's is exp(0) = 1.
    const rule = [{ statistic: "token", estimator: "k1", lower: 0.5, upper: 2 }] as const;
    const b = batch([
      [0.1, 1.0],
      [0, 0],
    ]);
    const seq = policyLoss({ ...pg(rule), isCorrection: { level: "sequence", cap: null } }, b);
    // seq_mean_token_mean, each kept objective −w: (1/2)(−e^1.1) + (1/2)(−1).
    expect(seq.loss).toBe(0.5 * -Math.exp(1.1) + 0.5 * -1);
    // normalize: token weights e^0.1, e^1.0, 1, 1 over the four tokens as given; mean m =
    // (e^0.1 + e + 2)/4; kept objectives −e^0.1/m (row 0) and −1/m (row 1).
    const tok = policyLoss(
      { ...pg(rule), isCorrection: { level: "token", cap: null, normalize: true } },
      b,
    );
    const m = (Math.exp(0.1) + Math.exp(1.0) + 1 + 1) / 4;
    expect(tok.loss).toBeCloseTo(0.5 * (-Math.exp(0.1) / m) + 0.5 * (-1 / m), 15);
    // The reference agrees (it forms them the same way), to the bit here.
    const ref = policyLossRef({ ...pg(rule), isCorrection: { level: "sequence", cap: null } }, b);
    expect(ref.loss).toBe(seq.loss);
  });

  it("gradient: closed form equals the reference with IS weights at every level, normalised or not, under rejection", () => {
    const rules = RULES[0] as readonly RejectionRule[];
    for (const level of ["token", "sequence", "geometric"] as const)
      for (const normalize of [false, true])
        fc.assert(
          fc.property(logprobBatches(), (raw) => {
            const T = raw.responseMask[0].length;
            const config = withRejection(
              {
                ...buildConfig("token", RATIO_SURROGATE_PAIRS[0][1], "token_mean", T),
                isCorrection: { level, cap: 3, normalize, logClamp: 20 },
              },
              rules,
            );
            const inputs = { ...policyInputs(config, raw), rolloutLogprobs: raw.rolloutLogprobs };
            const got = policyLoss(config, inputs);
            const ref = policyLossRef(config, inputs);
            expectNormwiseClose(got.loss, ref.loss, 1e-13, `${level} ${normalize}: loss`);
            expectNormwiseClose(got.gradLogprobs, ref.grad, 1e-13, `${level} ${normalize}: grad`);
          }),
          { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) },
        );
  });

  it("golden: verl's geometric RS (seq_mean k1 in [0.999, 1.001]) drops a row from B under emptyRows drop, and is a MaskError under the default", () => {
    // Row 0: mean lr = 0.01 → k1 = −0.01 < ln 0.999 = −0.0010005: rejected. Row 1: lr = 0: kept.
    const rule = [{ statistic: "seq_mean", estimator: "k1", lower: 0.999, upper: 1.001 }] as const;
    const drop = policyLoss(
      pg(rule, "drop"),
      batch([
        [0.01, 0.01],
        [0, 0],
      ]),
    );
    expect(drop.loss).toBe(-1); // B = 1: the mean of row 1 alone
    const count = policyLoss(
      pg(rule, "count"),
      batch([
        [0.01, 0.01],
        [0, 0],
      ]),
    );
    expect(count.loss).toBe(-0.5); // B = 2, row 0 contributes 0
    expectPolgradError(
      () =>
        policyLoss(
          pg(rule),
          batch([
            [0.01, 0.01],
            [0, 0],
          ]),
        ),
      Error as never,
      "E_MASK",
      "responseMask",
    );
  });

  it("rejects: a k1 lower bound above its upper one, naming the rule's upper field", () => {
    expect(() =>
      policyLoss(pg([{ statistic: "token", estimator: "k1", lower: 3, upper: 2 }]), batch([[0.1]])),
    ).toThrow("config.rejection[0].lower must be at most config.rejection[0].upper = 2; got 3");
  });

  it("rejects: a rollout stream is required, and rule settings that do not fit their estimator", () => {
    const b = batch([[0.1]]);
    const { rolloutLogprobs: _r, ...noRollout } = b;
    expectPolgradError(
      () => policyLoss(pg([{ statistic: "token", estimator: "k2", upper: 1 }]), noRollout),
      Error as never,
      "E_CONFIG",
      "rolloutLogprobs",
    );
    for (const [rule, arg, code] of [
      [{ statistic: "token", estimator: "k1", upper: 2 }, "config.rejection[0].lower", "E_CONFIG"],
      [
        { statistic: "token", estimator: "k2", lower: 0.5, upper: 2 },
        "config.rejection[0].lower",
        "E_CONFIG",
      ],
      [
        { statistic: "seq_max", estimator: "k1", lower: 0.5, upper: 2 },
        "config.rejection[0].estimator",
        "E_CONFIG",
      ],
      [
        { statistic: "seq", estimator: "k2", upper: 2 },
        "config.rejection[0].statistic",
        "E_UNKNOWN_NAME",
      ],
    ] as const) {
      expectPolgradError(
        () => policyLoss(pg([rule as unknown as RejectionRule]), b),
        Error as never,
        code,
        arg,
      );
    }
  });
});
