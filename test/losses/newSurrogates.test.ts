/**
 * Enforces docs/derivations/losses.md#sapo, #dro, #dppo and #ratio-clamps: the SAPO, DRO and DPPO
 * surrogates and the log-ratio clamps (verl's ±20 before exp, GMPO's sign-aware log-space clip,
 * GSPO-token's row clamp) in policyLoss equal the equation-level reference differentiated by the
 * independent autodiff (≤ 1e-13) and central differences, on ragged batches with junk at padding;
 * goldens are worked by hand; bad settings are typed errors naming the field.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError, UnknownNameError } from "../../src/errors.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
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
import { expectPolgradError } from "../io/_kit.js";

const TOL = 1e-13;
const AGGS = ["token_mean", "seq_mean_token_mean", "seq_mean_token_sum"] as const;

const base = (over: Partial<PolicyLossConfig>): PolicyLossConfig => ({
  ratio: "token",
  surrogate: "pg",
  clip: null,
  aggregation: "token_mean",
  normLen: null,
  ...over,
});

/** Every new form, by name: the surrogates and the clamps on the surrogates that take a ratio. */
const CASES: readonly [string, Partial<PolicyLossConfig>][] = [
  ["sapo", { surrogate: "sapo" }],
  ["cispo with TRL's absolute cap 0.2", { surrogate: "cispo", cispo: { cap: 0.2 } }],
  [
    "cispo with TRL's recommended cap 5 on the sequence ratio",
    { surrogate: "cispo", ratio: "sequence", cispo: { cap: 5 } },
  ],
  [
    "sapo τ 0.5/2 on the sequence ratio",
    { surrogate: "sapo", ratio: "sequence", sapo: { tauPos: 0.5, tauNeg: 2 } },
  ],
  [
    "sapo with verl's ±20 clamp",
    { surrogate: "sapo", ratioClamp: { level: "token", lower: -20, upper: 20 } },
  ],
  ["dro β 0.1", { surrogate: "dro", dro: { beta: 0.1 } }],
  ["ipo (prime-rl's ε 0.1)", { surrogate: "ipo" }],
  [
    "ipo ε 0.02 with verl's ±20 clamp",
    {
      surrogate: "ipo",
      ipo: { threshold: 0.02 },
      ratioClamp: { level: "token", lower: -20, upper: 20 },
    },
  ],
  ["vespo (TRL's k, λ)", { surrogate: "vespo" }],
  [
    "vespo with a token IS ratio truncated at 2",
    { surrogate: "vespo", isCorrection: { level: "token", cap: 2 } },
  ],
  [
    "vespo with a masking token IS ratio [0.5, 1.5]",
    { surrogate: "vespo", isCorrection: { level: "token", lower: 0.5, cap: 1.5, mode: "mask" } },
  ],
  [
    "vespo k 1/4, λ 0.5/1",
    { surrogate: "vespo", vespo: { kPos: 1, lambdaPos: 0.5, kNeg: 4, lambdaNeg: 1 } },
  ],
  [
    "dppo tv",
    { surrogate: "dppo", dppo: { divergence: "tv", low: 0.2, high: 0.2, truncation: 3 } },
  ],
  [
    "dppo kl, no truncation",
    { surrogate: "dppo", dppo: { divergence: "kl", low: 0.05, high: 0.1 } },
  ],
  [
    "pg_clip, token clamp ±0.5",
    {
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.28 },
      ratioClamp: { level: "token", lower: -0.5, upper: 0.5 },
    },
  ],
  [
    "gmpo: sequence pg, sign-aware clip ±0.4",
    {
      ratio: "sequence",
      surrogate: "pg",
      ratioClamp: { level: "token", lower: -0.4, upper: 0.4, signAware: true },
    },
  ],
  [
    "gspo-token, row clamp ≤ 0.3",
    {
      ratio: "sequence_token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      ratioClamp: { level: "row", upper: 0.3 },
    },
  ],
  [
    "gspo, row clamp [−0.3, 0.3]",
    {
      ratio: "sequence",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      ratioClamp: { level: "row", lower: -0.3, upper: 0.3 },
    },
  ],
  [
    "cispo, token clamp upper 0.4",
    {
      surrogate: "cispo",
      clip: { epsLow: null, epsHigh: 0.28 },
      ratioClamp: { level: "token", upper: 0.4 },
    },
  ],
];

describe("ipo", () => {
  it("golden: a token whose probability moved by more than ε drops, with the direction flagged; the denominator keeps it", () => {
    // Tokens: p_old = e^old = 0.5; p = e^lp = 0.55 (|Δp| 0.05 ≤ 0.1: kept), 0.7 (0.2 > 0.1:
    // dropped, rose), 0.3 (0.2: dropped, fell). pg on r = p/p_old, A = 1, token_mean over 3:
    // loss = −(0.55/0.5)/3 = −1.1/3, ∂L/∂lp = −r/3 at the kept token, 0 elsewhere.
    const lp = [[Math.log(0.55), Math.log(0.7), Math.log(0.3)]];
    const old = [[Math.log(0.5), Math.log(0.5), Math.log(0.5)]];
    const out = policyLoss(base({ surrogate: "ipo" }), {
      logprobs: lp,
      oldLogprobs: old,
      advantages: [1],
      responseMask: [[true, true, true]],
    });
    const r = Math.exp(lp[0][0] - old[0][0]);
    expect(out.loss).toBeCloseTo(-r / 3, 15);
    expect(out.gradLogprobs.data[0]).toBeCloseTo(-r / 3, 15);
    expect(Array.from(out.gradLogprobs.data.subarray(1), (x) => x + 0)).toEqual([0, 0]);
    expect(Array.from(out.clippedHigh.data)).toEqual([0, 1, 0]);
    expect(Array.from(out.clippedLow.data)).toEqual([0, 0, 1]);
  });

  it("rejects: a negative or non-finite ε and a non-token ratio, naming the field", () => {
    const inputs = {
      logprobs: [[-1]],
      oldLogprobs: [[-1]],
      advantages: [1],
      responseMask: [[true]],
    };
    for (const t of [-0.1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const e = expectPolgradError(
        () => policyLoss(base({ surrogate: "ipo", ipo: { threshold: t } }), inputs),
        ConfigError,
        "E_CONFIG",
        "config.ipo.threshold",
      );
      expect(e.message).toMatch(/a finite number ≥ 0/);
    }
    expectPolgradError(
      () => policyLoss(base({ surrogate: "ipo", ratio: "sequence" }), inputs),
      ConfigError,
      "E_CONFIG",
      "config.ratio",
    );
    expectPolgradError(
      () => policyLoss(base({ surrogate: "pg", ipo: { threshold: 0.1 } }), inputs),
      ConfigError,
      "E_CONFIG",
      "config.ipo",
    );
  });
});

describe("off-policy sequence mask", () => {
  const cases: readonly [string, Partial<PolicyLossConfig>][] = [
    [
      "pg_clip, old sampling",
      {
        surrogate: "pg_clip",
        clip: { epsLow: 0.2, epsHigh: 0.28 },
        offPolicyMask: { threshold: 0.1 },
      },
    ],
    [
      "sequence pg_clip, rollout sampling, token IS",
      {
        ratio: "sequence",
        surrogate: "pg_clip",
        clip: { epsLow: 0.2, epsHigh: 0.2 },
        offPolicyMask: { threshold: -0.2, sampling: "rollout" },
        isCorrection: { level: "token", cap: 2 },
      },
    ],
    [
      "vespo, old sampling (φ kept on the tokens the mask keeps)",
      { surrogate: "vespo", offPolicyMask: { threshold: 0 } },
    ],
    [
      "sapo, sequence IS",
      {
        surrogate: "sapo",
        offPolicyMask: { threshold: 0, sampling: "rollout" },
        isCorrection: { level: "sequence", cap: 3 },
      },
    ],
  ];
  for (const [name, over] of cases) {
    it(`gradient: closed form equals the reference for ${name}, every aggregation, with and without KL`, () => {
      for (const aggregation of AGGS) {
        for (const kl of [null, { kind: "k3", coef: 0.05 } as const]) {
          fc.assert(
            fc.property(logprobBatches(), (batch) => {
              const config = base({ ...over, aggregation, kl });
              const inputs = {
                ...policyInputs(config, batch),
                rolloutLogprobs: batch.rolloutLogprobs,
              };
              const got = policyLoss(config, inputs);
              const ref = policyLossRef(config, inputs);
              expectNormwiseClose(got.loss, ref.loss, TOL, `${name}: loss`);
              expectNormwiseClose(got.gradLogprobs, ref.grad, TOL, `${name}: grad`);
              expectNormwiseClose(
                got.perTokenObjective,
                ref.perTokenObjective,
                TOL,
                `${name}: objective`,
              );
            }),
            { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 3)) },
          );
        }
      }
    });
  }

  it("golden: a row whose mean drift exceeds δ loses its negative-advantage tokens, the rest and the denominator stay", () => {
    // Row 0: old − lp = [0.5, 0.3], mean 0.4 > δ = 0.25: its A < 0 token (t = 1) drops.
    // Row 1: old − lp = [0.1, 0.1], mean 0.1 ≤ δ: kept. token_mean over all N = 4 tokens.
    const cfg = base({ surrogate: "pg", offPolicyMask: { threshold: 0.25 } });
    const out = policyLoss(cfg, {
      logprobs: [
        [-1, -1],
        [-1, -1],
      ],
      oldLogprobs: [
        [-0.5, -0.7],
        [-0.9, -0.9],
      ],
      advantages: [
        [1, -1],
        [1, -1],
      ],
      responseMask: [
        [true, true],
        [true, true],
      ],
    });
    const r = (z: number) => Math.exp(z);
    expect(out.perTokenObjective.data[1]).toBe(0);
    expect(out.gradLogprobs.data[1]).toBe(0);
    expect(out.loss).toBeCloseTo((-r(-0.5) - r(-0.1) + r(-0.1)) / 4, 15);
    expect(out.gradLogprobs.data[3]).toBeCloseTo(r(-0.1) / 4, 15);
  });
});

describe("new surrogates and ratio clamps", () => {
  for (const [name, over] of CASES) {
    it(`gradient: closed form equals the reference for ${name}, every aggregation, with and without KL`, () => {
      for (const aggregation of AGGS) {
        for (const kl of [null, { kind: "k3", coef: 0.05 } as const]) {
          fc.assert(
            fc.property(logprobBatches(), (batch) => {
              const config = base({ ...over, aggregation, kl });
              const inputs = policyInputs(config, batch);
              const got = policyLoss(config, inputs);
              const ref = policyLossRef(config, inputs);
              const what = `${name} × ${aggregation} × kl=${kl?.kind ?? "none"}`;
              expectNormwiseClose(got.loss, ref.loss, TOL, `${what}: loss`);
              expectNormwiseClose(got.gradLogprobs, ref.grad, TOL, `${what}: grad`);
              expectNormwiseClose(
                got.perTokenObjective,
                ref.perTokenObjective,
                TOL,
                `${what}: objective`,
              );
              expectNormwiseClose(got.ratio, ref.ratio, TOL, `${what}: ratio`);
            }),
            { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 3)) },
          );
        }
      }
    });
  }

  /** Every log-ratio at least `margin` from each clamp bound and DPPO's region edges (no kink). */
  const kinkFree = (config: PolicyLossConfig, b: LogprobBatch, margin: number): boolean => {
    const rc = config.ratioClamp ?? null;
    const bounds = [rc?.lower, rc?.upper].filter((x): x is number => typeof x === "number");
    return b.responseMask.every((row, i) =>
      row.every((on, t) => {
        if (!on) return true;
        const lp = b.logprobs[i][t];
        const od = b.oldLogprobs[i][t];
        const z = lp - od;
        const rowZ =
          row.reduce((s, m, u) => s + (m ? b.logprobs[i][u] - b.oldLogprobs[i][u] : 0), 0) /
          row.filter(Boolean).length;
        const zs = rc?.level === "row" ? [rowZ] : [z];
        if (!zs.every((x) => bounds.every((e) => Math.abs(x - e) >= margin))) return false;
        const p = Math.exp(lp);
        const po = Math.exp(od);
        // IPO's trust-region edge |p − p_old| = ε.
        if (config.surrogate === "ipo") {
          const eps = config.ipo?.threshold ?? 0.1;
          if (Math.abs(Math.abs(p - po) - eps) < margin) return false;
        }
        const d = config.dppo ?? null;
        if (d === null) return true;
        const kl = po * (od - lp) + (1 - po) * Math.log((1 - po + 1e-8) / (1 - p + 1e-8));
        const edges =
          d.divergence === "tv"
            ? [p - po - d.high, p - po + d.low]
            : [kl - d.high, kl - d.low, p - po];
        return (
          edges.every((x) => Math.abs(x) >= margin) &&
          Math.abs(Math.exp(z) - (d.truncation ?? 1e300)) >= margin
        );
      }),
    );
  };

  it("gradient: central differences agree with the closed form for every new form (DPPO through its detach-free equivalent)", () => {
    // sequence_token's sg[z_b] makes the loss's own differences differ from its gradient by design
    // (its detach-free equivalent is sgFrozen's, test/losses/policyLoss.golden.test.ts); the row
    // clamp there is pinned by the reference above and the golden below.
    for (const [name, over] of CASES.filter(([, o]) => o.ratio !== "sequence_token")) {
      fc.assert(
        fc.property(logprobBatches({ maxB: 3, maxT: 5, maxGap: 1 }), (batch) => {
          const config = base({ ...over });
          fc.pre(kinkFree(config, batch, 1e-4));
          const inputs = policyInputs(config, batch);
          const got = policyLoss(config, inputs).gradLogprobs;
          let f: (lp: number[][]) => number;
          if (
            config.surrogate === "dppo" ||
            config.surrogate === "cispo" ||
            config.surrogate === "vespo"
          ) {
            // sg[min(r, C)]·valid (DPPO) and sg[ŵ] (CISPO) are data: the detach-free equivalent is
            // REINFORCE on the token advantages A·coef frozen at lp₀, with the same ratio clamp.
            const frozenA = batch.responseMask.map((row, b) =>
              row.map((on, t) => {
                if (!on) return 0;
                const a = Array.isArray(batch.advantages[b])
                  ? (batch.advantages[b] as number[])[t]
                  : (batch.advantages[b] as number);
                const one = policyLoss(config, {
                  ...inputs,
                  advantages: batch.responseMask.map((r2, b2) =>
                    r2.map((_, t2) => (b2 === b && t2 === t ? a : 0)),
                  ),
                });
                // The objective at (b, t) is −A·coef·lp: coef = −objective/(A·lp).
                const obj = one.perTokenObjective.data[b * row.length + t] as number;
                return a === 0 ? 0 : -obj / batch.logprobs[b][t];
              }),
            );
            const frozen = base({ surrogate: "reinforce", aggregation: config.aggregation });
            f = (lp) => policyLoss(frozen, { ...inputs, logprobs: lp, advantages: frozenA }).loss;
          } else {
            f = (lp) => policyLoss(config, { ...inputs, logprobs: lp }).loss;
          }
          const fd = centralDifference(f, batch.logprobs, 1e-6, batch.responseMask);
          expectNormwiseClose(
            got,
            { rows: fd.length, cols: fd[0]?.length ?? 0, data: Float64Array.from(fd.flat()) },
            1e-7,
            name,
          );
        }),
        { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 4)) },
      );
    }
  });

  it("golden: SAPO at r = 1 has the objective 2A/τ and the gradient A (the gate's slope is 1 there)", () => {
    // σ(τ·0) = ½, gate = ½·4/τ = 2/τ; ∂gate/∂r = (4/τ)·τ·σ(1 − σ) = 4·¼ = 1. One token, token_mean.
    const inputs = {
      logprobs: [[-1]],
      oldLogprobs: [[-1]],
      advantages: [3],
      responseMask: [[true]],
    };
    const pos = policyLoss(base({ surrogate: "sapo" }), inputs);
    expect(pos.loss).toBe(-(2 * 3));
    expect(pos.gradLogprobs.data[0]).toBe(-3);
    // A ≤ 0 uses τ− = 1.05: −(½·4/1.05)·(−3).
    const neg = policyLoss(base({ surrogate: "sapo" }), { ...inputs, advantages: [-3] });
    expect(neg.loss).toBe(-(0.5 * (4 / 1.05)) * -3);
    expect(neg.gradLogprobs.data[0]).toBe(3);
  });

  it("golden: DRO at z = 0.5, A = 2, β = 0.1 is 2.0125 with gradient −1.95", () => {
    // ℓ = −(lp·A − ½β z²) = −(−1·2 − 0.05·0.25) = 2.0125; ∂ℓ/∂lp = −(A − βz) = −(2 − 0.05).
    const out = policyLoss(base({ surrogate: "dro", dro: { beta: 0.1 } }), {
      logprobs: [[-1]],
      oldLogprobs: [[-1.5]],
      advantages: [2],
      responseMask: [[true]],
    });
    expect(out.loss).toBe(-(-1 * 2 - 0.5 * 0.1 * (0.5 * 0.5)));
    expect(out.gradLogprobs.data[0]).toBe(-(2 - 0.1 * 0.5));
    expect(out.ratio.data[0]).toBe(1);
  });

  it("golden: DPPO-TV drops a token whose probability rose by more than δ for A > 0 and keeps the rest, truncating the ratio at C", () => {
    // Token 0: p = e^−0.1 ≈ 0.905, p_old = e^−1 ≈ 0.368: p − p_old ≈ 0.537 > 0.2 → dropped (A > 0).
    // Token 1: p = e^−2, p_old = e^−2.05: p − p_old ≈ 0.0068 ≤ 0.2 → kept; r = e^0.05 < 3.
    // Token 2 (A < 0): p = e^−0.5, p_old = e^−3: p − p_old ≥ −0.2 → kept; r = e^2.5 ≈ 12.2 → C = 3.
    const cfg = base({
      surrogate: "dppo",
      dppo: { divergence: "tv", low: 0.2, high: 0.2, truncation: 3 },
    });
    const out = policyLoss(cfg, {
      logprobs: [[-0.1, -2, -0.5]],
      oldLogprobs: [[-1, -2.05, -3]],
      advantages: [[1, 1, -1]],
      responseMask: [[true, true, true]],
    });
    const r1 = Math.exp(-2 - -2.05);
    expect(Array.from(out.perTokenObjective.data)).toEqual([0, -(1 * r1) * -2, -(-1 * 3) * -0.5]);
    expect(Array.from(out.gradLogprobs.data)).toEqual([
      0,
      -(1 / 3) * (1 * r1),
      -(1 / 3) * (-1 * 3),
    ]);
    expect(Array.from(out.clippedHigh.data)).toEqual([1, 0, 0]);
  });

  it("golden: verl's ±20 clamp caps a log-ratio of 25 at e^20 with no gradient; GMPO's sign-aware clip binds only on the side of A", () => {
    const one = (over: Partial<PolicyLossConfig>, lp: number, old: number, a: number) =>
      policyLoss(base(over), {
        logprobs: [[lp]],
        oldLogprobs: [[old]],
        advantages: [a],
        responseMask: [[true]],
      });
    const c20 = { ratioClamp: { level: "token", lower: -20, upper: 20 } } as const;
    const big = one(c20, 0, -25, 1);
    expect(big.ratio.data[0]).toBe(Math.exp(20));
    expect(big.gradLogprobs.data[0]).toBe(0);
    // GMPO: z = 0.5 and the band ±0.2. A > 0: min(z, 0.2) = 0.2 (binds, no gradient);
    // A < 0: max(z, −0.2) = 0.5 (free: gradient −A·r·(1/L) with L = 1, i.e. −(−1)·e^0.5).
    const gm = {
      ratio: "sequence",
      ratioClamp: { level: "token", lower: -0.2, upper: 0.2, signAware: true },
    } as const;
    const p = one(gm, -1, -1.5, 1);
    expect(p.ratio.data[0]).toBe(Math.exp(0.2));
    expect(p.gradLogprobs.data[0]).toBe(0);
    const n = one(gm, -1, -1.5, -1);
    expect(n.ratio.data[0]).toBe(Math.exp(0.5));
    expect(n.gradLogprobs.data[0]).toBe(Math.exp(0.5));
    // A = 0: verl's sgn(A) = 0 makes the clipped log-ratio 0, so the ratio is e^0 = 1.
    expect(one(gm, -1, -1.5, 0).ratio.data[0]).toBe(1);
  });

  it("golden: GSPO-token's row clamp at 0.3 holds a row whose mean log-ratio is 0.5 at e^0.3 and passes no gradient", () => {
    const cfg = base({
      ratio: "sequence_token",
      surrogate: "pg",
      ratioClamp: { level: "row", upper: 0.3 },
    });
    // z = [0.25, 0.75]: mean 0.5 > 0.3 binds; z = [0.1, 0.3]: mean 0.2 is free (gradient −A·s·w).
    const out = policyLoss(cfg, {
      logprobs: [
        [-1, -1],
        [-1, -1],
      ],
      oldLogprobs: [
        [-1.25, -1.75],
        [-1.1, -1.3],
      ],
      advantages: [1, 1],
      responseMask: [
        [true, true],
        [true, true],
      ],
    });
    expect(Array.from(out.ratio.data.subarray(0, 2))).toEqual([Math.exp(0.3), Math.exp(0.3)]);
    expect(Array.from(out.gradLogprobs.data.subarray(0, 2))).toEqual([0, 0]);
    const s = Math.exp((0.1 + 0.3) / 2);
    expect(out.gradLogprobs.data[2]).toBeCloseTo(-s / 4, 15);
  });

  it("rejects: bad settings of the new surrogates and clamps, each naming its field", () => {
    const run = (over: Partial<PolicyLossConfig>) => () =>
      policyLoss(base(over), {
        logprobs: [[-1]],
        oldLogprobs: [[-1]],
        advantages: [1],
        responseMask: [[true]],
      });
    expectPolgradError(run({ surrogate: "dro" }), ConfigError, "E_CONFIG", "config.dro");
    expectPolgradError(
      run({ offPolicyMask: { threshold: Number.NaN } }),
      ConfigError,
      "E_CONFIG",
      "config.offPolicyMask.threshold",
    );
    expectPolgradError(
      run({ offPolicyMask: { threshold: 0.1, sampling: "vllm" as never } }),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "config.offPolicyMask.sampling",
    );
    expectPolgradError(
      run({ surrogate: "cispo", cispo: { cap: 5 }, clip: { epsLow: null, epsHigh: 0.2 } }),
      ConfigError,
      "E_CONFIG",
      "config.clip",
    );
    expectPolgradError(
      run({ surrogate: "cispo", cispo: { cap: 0 } }),
      ConfigError,
      "E_CONFIG",
      "config.cispo.cap",
    );
    expectPolgradError(
      run({ surrogate: "dro", dro: { beta: 0 } }),
      ConfigError,
      "E_CONFIG",
      "config.dro.beta",
    );
    expectPolgradError(run({ surrogate: "dppo" }), ConfigError, "E_CONFIG", "config.dppo");
    expectPolgradError(
      run({ surrogate: "dppo", dppo: { divergence: "js" as never, low: 0.2, high: 0.2 } }),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "config.dppo.divergence",
    );
    expectPolgradError(
      run({ surrogate: "sapo", sapo: { tauPos: -1 } }),
      ConfigError,
      "E_CONFIG",
      "config.sapo.tauPos",
    );
    expectPolgradError(
      run({ surrogate: "pg", sapo: { tauPos: 1 } }),
      ConfigError,
      "E_CONFIG",
      "config.sapo",
    );
    expectPolgradError(
      run({ surrogate: "dro", ratio: "sequence", dro: { beta: 1 } }),
      ConfigError,
      "E_CONFIG",
      "config.ratio",
    );
    expectPolgradError(
      run({ surrogate: "sapo", clip: { epsLow: 0.2, epsHigh: 0.2 } }),
      ConfigError,
      "E_CONFIG",
      "config.clip",
    );
    expectPolgradError(
      run({ ratioClamp: { level: "row", upper: 1 } }),
      ConfigError,
      "E_CONFIG",
      "config.ratioClamp.level",
    );
    expectPolgradError(
      run({ ratioClamp: { level: "token" } }),
      ConfigError,
      "E_CONFIG",
      "config.ratioClamp",
    );
    expectPolgradError(
      run({ ratioClamp: { level: "token", lower: 1, upper: -1 } }),
      ConfigError,
      "E_CONFIG",
      "config.ratioClamp.upper",
    );
    expectPolgradError(
      run({ ratio: "sequence", ratioClamp: { level: "row", upper: 1, signAware: true } }),
      ConfigError,
      "E_CONFIG",
      "config.ratioClamp.signAware",
    );
    expectPolgradError(
      run({
        ratioClamp: { level: "token", upper: 1 },
        kl: { kind: "k3", coef: 0.1, weight: "ratio" },
      }),
      ConfigError,
      "E_CONFIG",
      "config.ratioClamp",
    );
  });
});
