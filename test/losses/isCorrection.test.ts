/**
 * Enforces docs/derivations/losses.md#importance-sampling-correction: the generalised IS weight
 * (level token / sequence / geometric; truncate into [lower, cap] or mask outside it; an optional
 * log clamp) in policyLoss equals the equation-level reference differentiated by the independent
 * autodiff and central differences, on ragged batches with junk at padding; the goldens are the
 * frameworks' own settings worked by hand; the defaults are bitwise polgrad 0.2.0's truncated IS.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyLoss } from "../../src/index.js";
import type { ISCorrectionConfig, PolicyLossConfig } from "../../src/losses/config.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  branchSafe,
  buildConfig,
  centralDifference,
  expectNormwiseClose,
  FC_PARAMS,
  IS_VARIANTS,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
  sgFrozen,
  TIS_VARIANTS,
} from "../_kit/index.js";
import { expectPolgradError } from "../io/_kit.js";

const TOL = 1e-13;
const label = (c: ISCorrectionConfig): string => JSON.stringify(c);

describe("importance-sampling correction", () => {
  for (const [ratio, variant] of RATIO_SURROGATE_PAIRS) {
    it(`gradient: closed form equals the reference for ${ratio} × ${variant.name}, every generalised IS weight, with and without KL`, () => {
      for (const isCorrection of IS_VARIANTS) {
        for (const kl of [null, { kind: "k3", coef: 0.07 } as const]) {
          for (const aggregation of ["token_mean", "seq_mean_token_mean"] as const) {
            fc.assert(
              fc.property(logprobBatches(), (batch) => {
                const T = batch.responseMask[0].length;
                const config = buildConfig(ratio, variant, aggregation, T, { isCorrection, kl });
                const inputs = policyInputs(config, batch);
                const got = policyLoss(config, inputs);
                const ref = policyLossRef(config, inputs);
                const what = `${ratio} × ${variant.name} × ${aggregation} × ${label(isCorrection)}`;
                expectNormwiseClose(got.loss, ref.loss, TOL, `${what}: loss`);
                expectNormwiseClose(got.gradLogprobs, ref.grad, TOL, `${what}: grad`);
                expectNormwiseClose(
                  got.perTokenObjective,
                  ref.perTokenObjective,
                  TOL,
                  `${what}: objective`,
                );
              }),
              { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 2)) },
            );
          }
        }
      }
    });
  }

  it("gradient: central differences agree with the closed form for every generalised IS weight (the weight is data: it does not move with lp)", () => {
    const [ratio, variant] = RATIO_SURROGATE_PAIRS[0] as (typeof RATIO_SURROGATE_PAIRS)[number];
    for (const isCorrection of IS_VARIANTS) {
      fc.assert(
        fc.property(logprobBatches({ maxB: 3, maxT: 5 }), (batch) => {
          const config = buildConfig(ratio, variant, "token_mean", batch.responseMask[0].length, {
            isCorrection,
          });
          fc.pre(branchSafe(config, batch, 1e-4));
          const got = policyLoss(config, policyInputs(config, batch)).gradLogprobs;
          const ratios = policyLossRef(config, policyInputs(config, batch)).ratio;
          const rows = Array.from({ length: ratios.rows }, (_, b) =>
            Array.from(ratios.data.subarray(b * ratios.cols, (b + 1) * ratios.cols)),
          );
          const frozen = sgFrozen(config, batch, rows);
          const fd = centralDifference(
            (lp) =>
              policyLoss(
                frozen.config,
                policyInputs(frozen.config, { ...frozen.batch, logprobs: lp }),
              ).loss,
            batch.logprobs,
            1e-6,
            batch.responseMask,
          );
          expectNormwiseClose(
            got,
            { rows: fd.length, cols: fd[0]?.length ?? 0, data: Float64Array.from(fd.flat()) },
            1e-7,
            label(isCorrection),
          );
        }),
        { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) },
      );
    }
  });

  it("identity: absent bounds and the default mode are bitwise polgrad 0.2.0's min(exp(old − rollout), cap)", () => {
    fc.assert(
      fc.property(
        logprobBatches(),
        fc.constantFrom(...TIS_VARIANTS.filter((v) => v !== null)),
        (batch, tis) => {
          const T = batch.responseMask[0].length;
          const [ratio, variant] =
            RATIO_SURROGATE_PAIRS[0] as (typeof RATIO_SURROGATE_PAIRS)[number];
          const plain = buildConfig(ratio, variant, "token_mean", T, { isCorrection: tis });
          const spelled: PolicyLossConfig = {
            ...plain,
            isCorrection: {
              ...(tis as ISCorrectionConfig),
              lower: null,
              mode: "truncate",
              logClamp: null,
            },
          };
          const a = policyLoss(plain, policyInputs(plain, batch));
          const b = policyLoss(spelled, policyInputs(spelled, batch));
          expect(Object.is(a.loss, b.loss)).toBe(true);
          expect(Array.from(a.gradLogprobs.data)).toEqual(Array.from(b.gradLogprobs.data));
        },
      ),
      FC_PARAMS,
    );
  });

  // The goldens: pg on the token ratio r = 1 (lp = old), A = 1, token_mean, so the objective of a
  // response token is w·1·1 = w (ℓ = −r·A) and ∂L/∂lp = −w/N (N = all response tokens).
  const pg = (isCorrection: ISCorrectionConfig): PolicyLossConfig => ({
    ratio: "token",
    surrogate: "pg",
    clip: null,
    aggregation: "token_mean",
    isCorrection,
  });
  const batch = (gaps: number[][]) => ({
    logprobs: gaps.map((r) => r.map(() => 0)),
    oldLogprobs: gaps.map((r) => r.map(() => 0)),
    // rollout = −gap, so log ρ = old − rollout = 0 − (−gap) = gap exactly.
    rolloutLogprobs: gaps.map((r) => r.map((g) => -g)),
    advantages: gaps.map(() => 1),
    responseMask: gaps.map((r) => r.map(() => 1)),
  });

  it("golden: TRL's default sequence_mask (cap 3) zeroes a row whose product of weights exceeds 3, and the row still counts in the token mean", () => {
    // Row 0: Σ log ρ = 0.6 + 0.6 = 1.2, e^1.2 = 3.3201 > 3 → weight 0. Row 1: Σ = 0.5, e^0.5 =
    // 1.6487 ≤ 3 → kept. N = 4, so L = −(0 + 0 + 2·e^0.5)/4 and ∂L/∂lp = −w_b/4.
    const r = policyLoss(
      pg({ level: "sequence", cap: 3, mode: "mask" }),
      batch([
        [0.6, 0.6],
        [0.2, 0.3],
      ]),
    );
    const w1 = Math.exp(0.2 + 0.3);
    expect(r.loss).toBeCloseTo(-(2 * w1) / 4, 15);
    // The masked tokens' terms are ℓ·0 = (−1)·0 = −0 (and so their gradients): zeros, not padding.
    expect(Array.from(r.gradLogprobs.data)).toEqual([-0, -0, -w1 / 4, -w1 / 4]);
    expect(Array.from(r.perTokenObjective.data)).toEqual([-0, -0, -w1, -w1]);
  });

  it("golden: OpenRLHF's two-sided token TIS [0.5, 5] raises e^−1 to 0.5 and lowers e^2 to 5; IcePop zeroes both", () => {
    const gaps = [[-1, 2, 0.25]];
    const t = policyLoss(pg({ level: "token", cap: 5, lower: 0.5 }), batch(gaps));
    // w = [0.5, 5, e^0.25]; L = −Σ w / 3.
    expect(Array.from(t.perTokenObjective.data)).toEqual([-0.5, -5, -Math.exp(0.25)]);
    // (The loss is Σ (1/3)·objective compensated: equal to the quotient to the last ulp or two.)
    expect(t.loss).toBeCloseTo(-(0.5 + 5 + Math.exp(0.25)) / 3, 15);
    const i = policyLoss(pg({ level: "token", cap: 5, lower: 0.5, mode: "mask" }), batch(gaps));
    expect(Array.from(i.perTokenObjective.data)).toEqual([-0, -0, -Math.exp(0.25)]);
    expect(i.loss).toBeCloseTo(-Math.exp(0.25) / 3, 15);
  });

  it("golden: the geometric level uses the row's mean log-ratio; a log clamp bounds log ρ before exp", () => {
    // The compensated sum of 0.2 and 0.4 is the double nearest 0.6 (a plain 0.2 + 0.4 is one ulp
    // above), and half of it is 0.3: w = e^0.3 for both tokens (inside [0.5, 2]).
    const g = policyLoss(pg({ level: "geometric", cap: 2, lower: 0.5 }), batch([[0.2, 0.4]]));
    expect(g.perTokenObjective.data[0]).toBe(-Math.exp(0.3));
    // log ρ = 30 clamped to 20 (verl's ±20): w = min(e^20, cap = 1e9) = e^20.
    const c = policyLoss(pg({ level: "token", cap: 1e9, logClamp: 20 }), batch([[30]]));
    expect(c.perTokenObjective.data[0]).toBe(-Math.exp(20));
  });

  it("golden: OpenRLHF's seq-mask-tis keeps a row whose geometric-mean weight is inside [0.5, 5] with its raw token weights, and zeroes the others", () => {
    // Row 0: mean(1, 2) = 1.5, e^1.5 = 4.4817 ≤ 5: kept, weights e^1 and e^2 (untruncated).
    // Row 1: mean(2, 2) = 2, e^2 = 7.389 > 5: every weight 0. N = 4.
    const r = policyLoss(
      pg({ level: "token", cap: null, rowMask: { level: "geometric", lower: 0.5, cap: 5 } }),
      batch([
        [1, 2],
        [2, 2],
      ]),
    );
    expect(Array.from(r.perTokenObjective.data)).toEqual([-Math.exp(1), -Math.exp(2), -0, -0]);
    expect(r.loss).toBeCloseTo(-(Math.exp(1) + Math.exp(2)) / 4, 15);
  });

  it("golden: verl's batch normalisation divides the token weights by their mean, and leaves them when the mean is at most 1e-8", () => {
    // Token weights e^0.2, e^−0.2, e^0.4 (cap 5 does not bind); mean m; each objective −w/m.
    const w = [Math.exp(0.2), Math.exp(-0.2), Math.exp(0.4)];
    const r = policyLoss(
      pg({ level: "token", cap: 5, normalize: true }),
      batch([[0.2, -0.2, 0.4]]),
    );
    const got = Array.from(r.perTokenObjective.data).map((x) => -x);
    const mean = (w[0] + w[1] + w[2]) / 3;
    got.forEach((x, t) => expect(x).toBeCloseTo((w[t] as number) / mean, 15));
    expect(got.reduce((a, x) => a + x, 0) / 3).toBeCloseTo(1, 15);
    // Every weight masked to 0 (cap 0.5 below each ρ): the mean 0 is not divided out.
    const zero = policyLoss(
      pg({ level: "token", cap: 0.5, lower: 0.4, mode: "mask", normalize: true }),
      batch([[0.2, 0.3, 0.4]]),
    );
    expect(zero.loss).toBe(0);
  });

  it("golden: an overflowing product of weights truncates to the cap, and masks to 0 below a finite cap", () => {
    // Σ log ρ = 800: e^800 = +∞ in float64.
    const t = policyLoss(pg({ level: "sequence", cap: 3 }), batch([[400, 400]]));
    expect(t.loss).toBe(-3);
    const m = policyLoss(pg({ level: "sequence", cap: 3, mode: "mask" }), batch([[400, 400]]));
    expect(m.loss).toBe(0);
  });

  it("rejects: bad IS settings with E_CONFIG naming the field", () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ level: "token", cap: 2, lower: 3 }, "config.isCorrection.lower"],
      [{ level: "token", cap: 2, lower: 0 }, "config.isCorrection.lower"],
      [{ level: "token", cap: 2, logClamp: -1 }, "config.isCorrection.logClamp"],
      [{ level: "token" }, "config.isCorrection.cap"],
      [{ level: "row", cap: 2 }, "config.isCorrection.level"],
      [{ level: "token", cap: 2, mode: "clip" }, "config.isCorrection.mode"],
      [
        { level: "token", cap: 2, rowMask: { level: "token", cap: 2 } },
        "config.isCorrection.rowMask.level",
      ],
      [
        { level: "token", cap: 2, rowMask: { level: "geometric", cap: null } },
        "config.isCorrection.rowMask.cap",
      ],
      [
        { level: "token", cap: 2, rowMask: { level: "geometric", lower: 2, cap: 1 } },
        "config.isCorrection.rowMask.lower",
      ],
    ];
    for (const [c, arg] of bad) {
      const cfg = pg(c as unknown as ISCorrectionConfig);
      const code = arg.endsWith("level") || arg.endsWith("mode") ? "E_UNKNOWN_NAME" : "E_CONFIG";
      expectPolgradError(() => policyLoss(cfg, batch([[0]])), Error as never, code, arg);
    }
  });
});
