/**
 * Enforces docs/derivations/losses.md#top-entropy-mask, #entropy-bonus and
 * #adaptive-entropy-coefficient: the top-entropy-quantile token mask and the entropy bonus in
 * policyLoss equal the equation-level reference differentiated by the independent autodiff
 * (≤ 1e-13, in logprobs and in entropies) and central differences, on ragged batches with junk at
 * padding (NaN entropies there never reach an output); goldens are worked by hand; the run is
 * bitwise the same on two threads; bad inputs and settings are typed errors naming the field; the
 * adaptive controller's gate and update are worked by hand.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import {
  appliedEntropyCoef,
  DEFAULT_ENTROPY_CONTROLLER,
  entropyControllerStep,
} from "../../src/losses/entropyControl.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  centralDifference,
  expectNormwiseClose,
  FC_PARAMS,
  type LogprobBatch,
  logprobBatches,
  policyInputs,
} from "../_kit/index.js";
import { expectPolgradError as expectKitError } from "../io/_kit.js";

/** A ConfigError naming `arg`, its message matching `re` (the io kit's check, plus the message). */
function expectPolgradError(
  f: () => unknown,
  cls: typeof ConfigError,
  arg: string,
  re: RegExp,
): void {
  expect(expectKitError(f, cls, "E_CONFIG", arg).message).toMatch(re);
}

const TOL = 1e-13;
const AGGS = ["token_mean", "seq_mean_token_mean", "seq_mean_token_sum"] as const;

/** Entropies ≥ 0 drawn from the batch (distinct, in (0.05, 3.05)), the batch's junk at padding. */
function entropiesOf(batch: LogprobBatch): number[][] {
  return batch.logprobs.map((row, b) =>
    row.map((x, t) =>
      batch.responseMask[b]?.[t] ? 0.05 + 3 * Math.abs(Math.sin(7 * x + b + 0.3 * t)) : batch.junk,
    ),
  );
}

const clip = { epsLow: 0.2, epsHigh: 0.28 } as const;
const CASES: readonly [string, Partial<PolicyLossConfig>][] = [
  ["top-entropy ρ 0.2, pg_clip", { surrogate: "pg_clip", clip, topEntropyQuantile: 0.2 }],
  ["top-entropy ρ 0 (the largest entropy only)", { surrogate: "pg", topEntropyQuantile: 0 }],
  ["top-entropy ρ 1 (every token)", { surrogate: "pg", topEntropyQuantile: 1 }],
  [
    "top-entropy ρ 0.5 on the sequence ratio with token IS",
    {
      ratio: "sequence",
      surrogate: "pg_clip",
      clip,
      topEntropyQuantile: 0.5,
      isCorrection: { level: "token", cap: 2 },
    },
  ],
  [
    "top-entropy ρ 0.5 with the off-policy mask",
    {
      surrogate: "pg_clip",
      clip,
      topEntropyQuantile: 0.5,
      offPolicyMask: { threshold: 0.05 },
    },
  ],
  ["top-entropy ρ 0.3 on vespo", { surrogate: "vespo", topEntropyQuantile: 0.3 }],
  ["entropy bonus 0.01", { surrogate: "pg_clip", clip, entropyBonus: { coef: 0.01 } }],
  [
    "entropy bonus −0.5, seq_mean_token_mean",
    {
      surrogate: "cispo",
      cispo: { cap: 5 },
      entropyBonus: { coef: -0.5, aggregation: "seq_mean_token_mean" },
    },
  ],
  [
    "entropy bonus on the tokens ρ 0.4 keeps",
    {
      surrogate: "pg_clip",
      clip,
      topEntropyQuantile: 0.4,
      entropyBonus: { coef: 0.02, aggregation: "seq_mean_token_sum" },
    },
  ],
];

describe("top-entropy mask and entropy bonus", () => {
  for (const [name, over] of CASES) {
    it(`gradient: closed form equals the reference for ${name}, every aggregation, with and without KL`, () => {
      for (const aggregation of AGGS) {
        for (const kl of [null, { kind: "k3", coef: 0.05 } as const]) {
          fc.assert(
            fc.property(logprobBatches(), (batch) => {
              const config: PolicyLossConfig = {
                ratio: "token",
                surrogate: "pg",
                clip: null,
                normLen: null,
                ...over,
                aggregation,
                kl,
              };
              const inputs = {
                ...policyInputs(config, batch),
                rolloutLogprobs: batch.rolloutLogprobs,
                entropies: entropiesOf(batch),
              };
              const got = policyLoss(config, inputs);
              const ref = policyLossRef(config, inputs);
              expectNormwiseClose(got.loss, ref.loss, TOL, `${name}: loss`);
              expectNormwiseClose(got.gradLogprobs, ref.grad, TOL, `${name}: grad`);
              expectNormwiseClose(got.perTokenObjective, ref.perTokenObjective, TOL, name);
              if (config.entropyBonus == null) {
                expect(got.gradEntropies).toBeNull();
                expect(got.entropyLoss).toBeNull();
              } else {
                expectNormwiseClose(
                  got.entropyLoss as number,
                  ref.entropyLoss as number,
                  TOL,
                  `${name}: entropyLoss`,
                );
                expectNormwiseClose(
                  got.gradEntropies as NonNullable<typeof got.gradEntropies>,
                  ref.gradEntropies as NonNullable<typeof ref.gradEntropies>,
                  TOL,
                  `${name}: gradEntropies`,
                );
              }
              for (const x of [...got.gradLogprobs.data, ...(got.gradEntropies?.data ?? [])])
                expect(Number.isFinite(x)).toBe(true);
            }),
            { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) },
          );
        }
      }
    });
  }

  it("gradient: central differences in logprobs and in entropies match the closed form (bonus without a mask)", () => {
    const config: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "seq_mean_token_mean",
      entropyBonus: { coef: 0.3, aggregation: "token_mean" },
    };
    fc.assert(
      fc.property(logprobBatches({ junk: [0] }), (batch) => {
        const base = { ...policyInputs(config, batch), entropies: entropiesOf(batch) };
        const got = policyLoss(config, base);
        const mask = batch.responseMask;
        const dLp = centralDifference(
          (lp) => policyLoss(config, { ...base, logprobs: lp }).loss,
          batch.logprobs,
          1e-6,
          mask,
        );
        const dH = centralDifference(
          (h) => policyLoss(config, { ...base, entropies: h }).loss,
          base.entropies,
          1e-6,
          mask,
        );
        const flat = (x: number[][]) => ({
          rows: x.length,
          cols: x[0]?.length ?? 0,
          data: Float64Array.from(x.flat()),
        });
        expectNormwiseClose(got.gradLogprobs, flat(dLp), 1e-7, "lp");
        expectNormwiseClose(
          got.gradEntropies as NonNullable<typeof got.gradEntropies>,
          flat(dH),
          1e-7,
          "H",
        );
      }),
      { ...FC_PARAMS, numRuns: 20 },
    );
  });

  it("golden: ρ 0.5 of four entropies keeps the two at or above the median, the denominator keeps all four", () => {
    // H = [0.4, 0.1, 0.3, 0.2]: sorted [0.1, 0.2, 0.3, 0.4], q = 0.5, h = 1.5: threshold
    // 0.2 + 0.5·(0.3 − 0.2) = 0.25 (torch's lerp, w ≥ 0.5: 0.3 − 0.1·0.5 = 0.25). Kept: t = 0, 2.
    // pg, A = 1, lp = old: ℓ = −1 each; token_mean over N = 4: loss = −2/4, grad −1/4 at kept.
    // Bonus 0.1 (token_mean over the 2 kept): Σ H/2 = 0.35; loss −0.5 − 0.1·0.35 = −0.535.
    const cfg: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
      topEntropyQuantile: 0.5,
      entropyBonus: { coef: 0.1 },
    };
    const out = policyLoss(cfg, {
      logprobs: [[-1, -1, -1, -1, 7]],
      oldLogprobs: [[-1, -1, -1, -1, 7]],
      advantages: [1],
      responseMask: [[true, true, true, true, false]],
      entropies: [[0.4, 0.1, 0.3, 0.2, Number.NaN]],
    });
    // A dropped token's gradient is a zero signed as torch's masking signs it (−0 for A > 0).
    expect(Array.from(out.gradLogprobs.data, (x) => x + 0)).toEqual([-0.25, 0, -0.25, 0, 0]);
    expect(out.entropyLoss).toBeCloseTo(0.35, 15);
    expect(out.loss).toBeCloseTo(-0.535, 15);
    expect(Array.from(out.gradEntropies?.data ?? [], (x) => x + 0)).toEqual([
      -0.05, 0, -0.05, 0, 0,
    ]);
  });

  it("invariance: NaN or Inf entropies at padding change no output bit", () => {
    fc.assert(
      fc.property(logprobBatches({ junk: [0] }), fc.constantFrom(Number.NaN, Infinity), (b, j) => {
        const config: PolicyLossConfig = {
          ratio: "token",
          surrogate: "pg_clip",
          clip,
          aggregation: "token_mean",
          topEntropyQuantile: 0.3,
          entropyBonus: { coef: 0.1 },
        };
        const H = entropiesOf(b);
        const poisoned = H.map((r, i) => r.map((x, t) => (b.responseMask[i]?.[t] ? x : j)));
        const inputs = policyInputs(config, b);
        const a = policyLoss(config, { ...inputs, entropies: H });
        const c = policyLoss(config, { ...inputs, entropies: poisoned });
        expect(c.loss).toBe(a.loss);
        expect(Array.from(c.gradLogprobs.data)).toEqual(Array.from(a.gradLogprobs.data));
        expect(Array.from(c.gradEntropies?.data ?? [])).toEqual(
          Array.from(a.gradEntropies?.data ?? []),
        );
      }),
      FC_PARAMS,
    );
  });

  it("identity: two threads give the one-thread bits", async () => {
    await import("../../src/node/registerThreads.js");
    const config: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg_clip",
      clip,
      aggregation: "seq_mean_token_mean",
      topEntropyQuantile: 0.2,
      entropyBonus: { coef: 0.01 },
    };
    const B = 64;
    const T = 96;
    const lp = Array.from({ length: B }, (_, b) =>
      Array.from({ length: T }, (_, t) => -1 - 0.5 * Math.sin(b * 13 + t)),
    );
    const inputs = {
      logprobs: lp,
      oldLogprobs: lp.map((r) => r.map((x, t) => x + 0.1 * Math.cos(t))),
      advantages: Array.from({ length: B }, (_, b) => Math.sin(b)),
      responseMask: lp.map((r, b) => r.map((_, t) => t < 1 + ((b * 37) % T))),
      entropies: lp.map((r) => r.map((x) => Math.abs(Math.cos(3 * x)))),
    };
    const one = policyLoss(config, inputs, { threads: 1 });
    const two = policyLoss(config, inputs, { threads: 2 });
    expect(two.loss).toBe(one.loss);
    expect(Array.from(two.gradLogprobs.data)).toEqual(Array.from(one.gradLogprobs.data));
    expect(Array.from(two.perTokenObjective.data)).toEqual(Array.from(one.perTokenObjective.data));
  });

  it("rejects: a missing or negative entropies stream and bad settings, naming the field", () => {
    const base = {
      logprobs: [[-1, -1]],
      oldLogprobs: [[-1, -1]],
      advantages: [1],
      responseMask: [[true, true]],
    };
    const cfg = (over: Partial<PolicyLossConfig>): PolicyLossConfig => ({
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
      ...over,
    });
    expectPolgradError(
      () => policyLoss(cfg({ topEntropyQuantile: 0.2 }), base),
      ConfigError,
      "entropies",
      /given when config\.topEntropyQuantile is set/,
    );
    expectPolgradError(
      () => policyLoss(cfg({ entropyBonus: { coef: 0.1 } }), { ...base, entropies: [[0.1, -0.2]] }),
      ConfigError,
      "entropies",
      />= 0 at response positions.*-0\.2 at \(0, 1\)/,
    );
    for (const q of [-0.1, 1.5, Number.NaN, "0.2"]) {
      expectPolgradError(
        () => policyLoss(cfg({ topEntropyQuantile: q as number }), base),
        ConfigError,
        "config.topEntropyQuantile",
        /a number in \[0, 1\]/,
      );
    }
    expectPolgradError(
      () => policyLoss(cfg({ entropyBonus: { coef: Number.POSITIVE_INFINITY } }), base),
      ConfigError,
      "config.entropyBonus.coef",
      /a finite number/,
    );
  });
});

describe("entropy controller", () => {
  it("golden: the gate applies the coefficient only after a step at or below the target", () => {
    const c = DEFAULT_ENTROPY_CONTROLLER;
    expect(c).toEqual({ target: 0.2, delta: 0.005, min: 0, max: 1 });
    expect(appliedEntropyCoef({ coef: 0.01, lastEntropy: Number.POSITIVE_INFINITY })).toBe(0);
    expect(appliedEntropyCoef({ coef: 0.01, lastEntropy: 0.2 })).toBe(0.01);
    expect(appliedEntropyCoef({ coef: 0.01, lastEntropy: 0.21 })).toBe(0);
    // Window H = 1.5/10 = 0.15 ≤ 0.2: coef 0.01 + 0.005; H = 3/10 > 0.2: 0.01 − 0.005.
    expect(
      entropyControllerStep({ coef: 0.01, lastEntropy: 1 }, { entropySum: 1.5, tokenCount: 10 }),
    ).toEqual({ coef: 0.01 + 0.005, lastEntropy: 0.15 });
    expect(
      entropyControllerStep({ coef: 0.01, lastEntropy: 1 }, { entropySum: 3, tokenCount: 10 }),
    ).toEqual({ coef: 0.01 - 0.005, lastEntropy: 0.3 });
    // Clamped to [min, max]; an empty window divides by 1 (H = 0).
    expect(
      entropyControllerStep({ coef: 0.999, lastEntropy: 1 }, { entropySum: 0, tokenCount: 0 }),
    ).toEqual({ coef: 1, lastEntropy: 0 });
    expect(
      entropyControllerStep(
        { coef: 0.002, lastEntropy: 1 },
        { entropySum: 5, tokenCount: 1 },
        { min: 0.001 },
      ),
    ).toEqual({ coef: 0.001, lastEntropy: 5 });
  });

  it("rejects: bad settings, states and windows, naming the field", () => {
    const s = { coef: 0.01, lastEntropy: 0.1 };
    expectPolgradError(
      () => appliedEntropyCoef(s, { target: Number.NaN }),
      ConfigError,
      "config.target",
      /a finite number/,
    );
    expectPolgradError(
      () => appliedEntropyCoef(s, { min: 2 }),
      ConfigError,
      "config.min",
      /at most config\.max = 1/,
    );
    expectPolgradError(
      () => appliedEntropyCoef({ coef: 0.01, lastEntropy: Number.NaN }),
      ConfigError,
      "state.lastEntropy",
      /\+Infinity/,
    );
    expectPolgradError(
      () => entropyControllerStep(s, { entropySum: 1, tokenCount: 1.5 }),
      ConfigError,
      "window.tokenCount",
      /an integer ≥ 0/,
    );
  });
});
