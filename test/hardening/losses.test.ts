/**
 * Issue 9, loss side: the numeric policy (docs/conventions.md#numeric-policy). For finite input
 * every loss returns finite outputs or throws OverflowError naming the quantity and position; a
 * clipped token whose ratio overflows is finite with gradient exactly 0; nothing returns NaN or
 * ±Infinity; bad arguments are typed errors, never TypeError/RangeError.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PolgradError } from "../../src/errors.js";
import {
  ALGORITHMS,
  FRAMEWORK_MODELS,
  getFrameworkModel,
  type PolicyLossConfig,
  type PolicyLossResult,
  papoLoss,
  policyLoss,
  trlModel,
  verlModel,
} from "../../src/index.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  caught,
  FC_PARAMS,
  KL_VARIANTS,
  RATIO_SURROGATE_PAIRS,
} from "../_kit/index.js";

const MAX = Number.MAX_VALUE;
const PPO: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2 },
  aggregation: "token_mean",
};
const one = (lp: number[], old: number[], adv: number[] | number[][] = [1]) => ({
  logprobs: [lp],
  oldLogprobs: [old],
  advantages: adv,
  responseMask: [lp.map(() => true)],
});
const thrown = caught;

describe("hardening: overflowing ratios", () => {
  it("golden: a clipped token whose ratio overflows has a finite objective and gradient exactly 0", () => {
    // z = 0 − (−710) = 710 > 709.78: exp(z) = +∞ in float64. A = 1 > 0, hi = 1.2: the clamp binds,
    // obj_0 = 1.2·1, ℓ_0 = −1.2, ∂ℓ_0/∂lp = 0. Token 1: z = 0, r = 1, ℓ_1 = −1, ∂ = −1·w = −1/2.
    // token_mean: loss = (−1.2 − 1)/2 = −1.1.
    for (const name of ["ppo", "dapo", "dr_grpo", "reinforce_pp"] as const) {
      const cfg = { ...ALGORITHMS[name].loss, normLen: 2, kl: null };
      const r = policyLoss(cfg, one([0, -1], [-710, -1]));
      expect(Object.is(r.gradLogprobs.data[0], 0), name).toBe(true);
      expect(r.perTokenObjective.data[0]).toBe(-1 - (cfg.clip?.epsHigh as number));
      expect(r.ratio.data[0]).toBe(MAX);
      expect(r.clippedHigh.data[0]).toBe(1);
      expect(Number.isFinite(r.loss)).toBe(true);
    }
    const r = policyLoss(PPO, one([0, -1], [-710, -1]));
    expect(r.loss).toBe((-1.2 - 1) / 2);
    expect(Array.from(r.gradLogprobs.data)).toEqual([0, -0.5]);
  });

  it("golden: a = 0 gives objective 0 and gradient 0 for pg, pg_clip and cispo", () => {
    // r = exp(710) = ∞ and A = 0: r·A would be ∞·0 = NaN; the term is exactly 0.
    for (const cfg of [
      PPO,
      { ...PPO, surrogate: "pg", clip: null } as PolicyLossConfig,
      { ...PPO, surrogate: "cispo", clip: { epsLow: null, epsHigh: 0.28 } } as PolicyLossConfig,
    ]) {
      const r = policyLoss(cfg, one([0], [-710], [0]));
      // ℓ = −(+0) = −0 and ∂ = −w·0 = −0: signed zeros, compared by value.
      expect(r.loss === 0).toBe(true);
      expect(r.perTokenObjective.data[0] === 0).toBe(true);
      expect(r.gradLogprobs.data[0] === 0).toBe(true);
      expect(r.ratio.data[0]).toBe(MAX);
    }
  });

  it("golden: the dual-clip cap binds at an overflowing ratio with a < 0", () => {
    // A = −1, cap c = 3: obj = max(min(∞·(−1), 1.2·(−1)), 3·(−1)) = −3, ℓ = 3, gradient 0.
    const cfg = { ...PPO, clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 } };
    const r = policyLoss(cfg, one([0], [-710], [-1]));
    expect(r.loss).toBe(3);
    expect(Object.is(r.gradLogprobs.data[0], 0)).toBe(true);
    expect(r.clippedHigh.data[0]).toBe(1);
    expect(r.ratio.data[0]).toBe(MAX);
  });

  it("golden: cispo's weight min(r, hi) is finite at an overflowing ratio", () => {
    // z = −1 − (−711) = 710, ŵ = min(∞, 1.28) = 1.28, ℓ = −1.28·1·(−1) = 1.28, ∂ = −1.28·w = −1.28.
    const cfg = { ...PPO, surrogate: "cispo", clip: { epsLow: null, epsHigh: 0.28 } } as const;
    const r = policyLoss(cfg, one([-1], [-711]));
    expect(r.loss).toBe(1.28);
    expect(r.gradLogprobs.data[0]).toBe(-1.28);
    expect(r.clippedHigh.data[0]).toBe(1);
  });

  it("rejects: a genuinely infinite objective with OverflowError naming perTokenObjective and the position", () => {
    // pg_clip with A < 0 and no cap: −min(∞·(−1), 1.2·(−1)) = +∞. pg: −∞·1 = −∞.
    for (const [cfg, A] of [
      [PPO, -1],
      [{ ...PPO, surrogate: "pg", clip: null } as PolicyLossConfig, 1],
      [{ ...PPO, surrogate: "pg", clip: null } as PolicyLossConfig, -1],
    ] as const) {
      const e = thrown(() => policyLoss(cfg, one([-1, 0], [-1, -710], [A]))) as PolgradError;
      expect(e).toMatchObject({ name: "OverflowError", code: "E_OVERFLOW" });
      expect(e).toMatchObject({ quantity: "perTokenObjective", position: [0, 1] });
      expect(e.message).toContain("log-ratio lp − old = 710");
    }
  });

  it("golden: sequence ratios that overflow follow the same rules (gspo, gspo_token)", () => {
    // z = [1420, 0], mean 710: s_b = ∞; A = 1 > 0: every token clipped high, ℓ = −(1 + ε_hi),
    // gradient 0. seq_mean_token_mean: loss = −(1 + ε_hi).
    for (const name of ["gspo", "gspo_token"] as const) {
      const cfg = ALGORITHMS[name].loss;
      const r = policyLoss(cfg, one([0, -1], [-1420, -1]));
      const hi = 1 + (cfg.clip?.epsHigh as number);
      expect(r.loss, name).toBe(-hi);
      expect(Array.from(r.gradLogprobs.data)).toEqual([0, 0]);
      expect(Array.from(r.ratio.data)).toEqual([MAX, MAX]);
      expect(Array.from(r.clippedHigh.data)).toEqual([1, 1]);
    }
    const e = thrown(() =>
      policyLoss(ALGORITHMS.gspo.loss, one([0, -1], [-1420, -1], [-1])),
    ) as PolgradError;
    expect(e).toMatchObject({ quantity: "perTokenObjective", position: [0, 0] });
    expect(e.message).toContain("mean log-ratio of the row = 710");
  });

  it("golden: underflow of the ratio is exact (z ≤ −746 gives r = 0, no nan in sequence_token)", () => {
    // token: z = −746, r = 0; A = 1: obj = min(0·1, 0.8·1) = 0, ℓ = −0; ∂ = −w·A·r = −1·0 = −0.
    const r = policyLoss(PPO, one([-746], [0]));
    expect(r.ratio.data[0]).toBe(0);
    // The compensated sum of the single term −0 starts from +0: +0 + −0 = +0.
    expect(Object.is(r.loss, 0)).toBe(true);
    expect(Object.is(r.perTokenObjective.data[0], -0)).toBe(true);
    expect(Object.is(r.gradLogprobs.data[0], -0)).toBe(true);
    // sequence_token: z = [−800, 0], s = exp(−400) = 1.9151695967140057e-174 (e^−400), stored as s
    // for both tokens (exp(−800)/exp(−800) = 0/0 would be NaN). clamp binds low for A = 1? No:
    // A > 0, r < lo: unclipped branch, ℓ_t = −s, loss = −s (mean of two −s), ∂_t = −s·w_t = −s/2.
    const cfg = { ...PPO, ratio: "sequence_token", aggregation: "seq_mean_token_mean" } as const;
    const q = policyLoss(cfg, one([-800, -1], [0, -1]));
    const s = Math.exp(-400);
    expect(Array.from(q.ratio.data)).toEqual([s, s]);
    expect(Array.from(q.gradLogprobs.data)).toEqual([-s / 2, -s / 2]);
    expect(q.loss).toBe(-s);
  });

  it("property: every saturated ratio is flagged clippedHigh or sits at a token with a = 0", () => {
    const zs = fc.constantFrom(0, 1, 709.78, 709.79, 710, 745.2, 1000, -746, -1);
    const as = fc.constantFrom(-1, 0, 1, 1e-300, -1e-300);
    fc.assert(
      fc.property(
        fc.constantFrom(...RATIO_SURROGATE_PAIRS),
        fc.array(fc.tuple(zs, as), { minLength: 1, maxLength: 3 }),
        ([ratio, v], cells) => {
          const cfg = { ...PPO, ratio, surrogate: v.surrogate, clip: v.clip };
          const inputs = one(
            cells.map(() => -1),
            cells.map(([z]) => -1 - z),
            [cells.map(([, a]) => a)],
          );
          let r: PolicyLossResult;
          try {
            r = policyLoss(cfg, inputs);
          } catch (e) {
            expect(e).toMatchObject({ name: "OverflowError" });
            return;
          }
          r.ratio.data.forEach((x, i) => {
            expect(Number.isFinite(x)).toBe(true);
            if (x === MAX) expect(r.clippedHigh.data[i] === 1 || cells[i]?.[1] === 0).toBe(true);
          });
        },
      ),
      FC_PARAMS,
    );
  });
});

describe("hardening: kl overflow", () => {
  it("rejects: a k3 term at logprobs −1e4 with OverflowError naming klLoss and the position", () => {
    // δ = ref − lp = −1 − (−1e4) = 9999: e^9999 − 1 − 9999 is not representable.
    const inputs = { ...one([-1, -1e4], [-1, -1e4]), refLogprobs: [[-1, -1]] };
    for (const name of ["grpo", "grpo_tis", "papo_g"] as const) {
      const withRollout = { ...inputs, rolloutLogprobs: inputs.oldLogprobs };
      const e = thrown(() => policyLoss(ALGORITHMS[name].loss, withRollout));
      expect(e, name).toMatchObject({ code: "E_OVERFLOW", quantity: "klLoss", position: [0, 1] });
      expect((e as Error).message).toContain("δ = ref − lp = 9999");
    }
    const papo = ALGORITHMS.papo_g.papo?.official;
    expect(papo).toBeDefined();
    const e = thrown(() =>
      papoLoss(papo as NonNullable<typeof papo>, { ...inputs, maskedLogprobs: [[-1, -1e4]] }),
    );
    expect(e).toMatchObject({ fn: "papoLoss", quantity: "klLoss", position: [0, 1] });
  });

  it("golden: k1, k2 and abs stay finite and exact at logprobs −1e4 and near 0", () => {
    // lp = [−1e4, −1e-12], ref = [−1, 0]: δ = [9999, 1e-12]. Surrogate 0 (A = 0).
    // k1 = −δ: mean (−9999 − 1e-12)/2; k2 = δ²/2: (9999²/2 + 1e-24/2)/2; abs: (9999 + 1e-12)/2.
    const inputs = {
      ...one([-1e4, -1e-12], [-1e4, -1e-12], [0]),
      refLogprobs: [[-1, 0]],
    };
    const expected = {
      k1: (-9999 - 1e-12) / 2,
      k2: (9999 ** 2 / 2 + 1e-24 / 2) / 2,
      abs: (9999 + 1e-12) / 2,
    };
    for (const [kind, v] of Object.entries(expected)) {
      const r = policyLoss({ ...PPO, kl: { kind: kind as "k1", coef: 1 } }, inputs);
      expect(r.klLoss, kind).toBeCloseTo(v, 9);
      expect(r.loss).toBe(r.klLoss as number);
    }
  });
});

describe("hardening: config", () => {
  it("golden: epsLow >= 1 is polgrad's rule (finite, > 0): the lower bound 1 − epsLow <= 0 never binds, bitwise the one-sided band", () => {
    // verl's CISPO recipe sets clip_ratio_low=10 and TRL's paper index epsilon=10; polgrad 0.2.0
    // accepts any finite eps > 0. A ratio exp(lp − old) > 0 never reaches a bound <= 0, so
    // clamp(r, 1 − ε, hi) = min(r, hi) exactly: CISPO equals its one-sided form (epsLow null) bit
    // for bit, and pg_clip's objective is min(r·A, min(r, hi)·A).
    const batch = {
      logprobs: [
        [-1, -0.5, -2],
        [-0.3, -1.2, -0.9],
      ],
      oldLogprobs: [
        [-0.2, -1.5, -1.1],
        [-2.5, -0.1, -0.95],
      ],
      advantages: [0.7, -1.3],
      responseMask: [
        [true, true, true],
        [true, true, false],
      ],
    };
    for (const epsLow of [1, 1.5, 10, 1e300]) {
      const two = policyLoss({ ...PPO, surrogate: "cispo", clip: { epsLow, epsHigh: 0.2 } }, batch);
      const one = policyLoss(
        { ...PPO, surrogate: "cispo", clip: { epsLow: null, epsHigh: 0.2 } },
        batch,
      );
      expect(Object.is(two.loss, one.loss)).toBe(true);
      expect(two.gradLogprobs).toEqual(one.gradLogprobs);
      const pg = policyLoss({ ...PPO, clip: { epsLow, epsHigh: 0.2 } }, batch);
      // By hand: token mean over the 5 response tokens of −min(r·A, min(r, 1.2)·A).
      let sum = 0;
      for (let b = 0; b < 2; b++)
        for (let t = 0; t < 3; t++) {
          if (!batch.responseMask[b]?.[t]) continue;
          const r = Math.exp(
            (batch.logprobs[b]?.[t] as number) - (batch.oldLogprobs[b]?.[t] as number),
          );
          const A = batch.advantages[b] as number;
          sum += -Math.min(r * A, Math.min(r, 1.2) * A);
        }
      expect(pg.loss).toBeCloseTo(sum / 5, 15);
    }
    // 0 and non-finite stay refused, with the key named.
    for (const epsLow of [0, -1, Number.POSITIVE_INFINITY, Number.NaN])
      expect(
        thrown(() => policyLoss({ ...PPO, clip: { epsLow, epsHigh: 0.2 } }, one([-1], [-1]))),
      ).toMatchObject({ name: "ConfigError", arg: "config.clip.epsLow" });
  });
});

const deep = (): unknown => {
  let x: unknown = 0;
  for (let i = 0; i < 1e5; i++) x = [x];
  return x;
};

describe("hardening: typed errors", () => {
  it("rejects: null, undefined, a number, a string or an array as the inputs object", () => {
    for (const bad of [null, undefined, 3, "batch", [[1]]]) {
      expect(thrown(() => policyLoss(PPO, bad as never))).toMatchObject({
        name: "ShapeError",
        arg: "inputs",
      });
      const papo = ALGORITHMS.papo_g.papo?.official as NonNullable<
        typeof ALGORITHMS.papo_g.papo
      >["official"];
      expect(thrown(() => papoLoss(papo, bad as never))).toMatchObject({ arg: "inputs" });
      expect(
        thrown(() => getFrameworkModel("trl@v1.8.0:grpo").evaluate(bad as never)),
      ).toMatchObject({
        name: "ShapeError",
        arg: "inputs",
      });
    }
    expect(thrown(() => verlModel("74a718a4", "gspo", null as never))).toMatchObject({
      name: "ConfigError",
      arg: "overrides",
    });
    expect(thrown(() => trlModel("v1.8.0", "grpo:token", 5 as never))).toMatchObject({
      name: "ConfigError",
      arg: "overrides",
    });
  });

  it("rejects: streams that are strings, objects or nested 1e5 deep with ShapeError", () => {
    const base = { ...one([-1], [-1]), refLogprobs: [[-1]] };
    const d = deep();
    for (const field of ["logprobs", "oldLogprobs", "advantages", "responseMask", "refLogprobs"]) {
      for (const bad of ["abc", {}, { data: new Float64Array(3), rows: 1.5, cols: 2 }, d]) {
        const e = thrown(() =>
          policyLoss({ ...PPO, kl: { kind: "k1", coef: 1 } }, { ...base, [field]: bad }),
        );
        expect(e, field).toBeInstanceOf(PolgradError);
        expect(e).toMatchObject({ arg: field });
        expect((e as Error).message.length).toBeLessThan(400);
      }
    }
    expect(thrown(() => getFrameworkModel(d as never))).toMatchObject({ name: "UnknownNameError" });
  });
});

// ----- the property over extreme but valid inputs -----

const LP = fc.constantFrom(0, -1e-300, -1e-12, -0.5, -1e4, -1e4 + 1e-9, -9999.5);
const Z = fc.constantFrom(
  0,
  1e-9,
  709.78,
  709.79,
  745.13,
  745.14,
  -709.78,
  -745.13,
  -745.14,
  -746,
  710,
  -1,
);
const ADV = fc.constantFrom(1e300, -1e300, 1e-300, -1e-300, 0, 1, -1, 1e308, -1e308);
const D = fc.constantFrom(0, 1e-12, 9999, -9999, 745, -745, 1);

interface Extreme {
  readonly lp: number[][];
  readonly old: number[][];
  readonly ref: number[][];
  readonly rollout: number[][];
  readonly adv: number[];
  readonly mask: boolean[][];
}

const extremes: fc.Arbitrary<Extreme> = fc
  .record({ B: fc.integer({ min: 1, max: 2 }), T: fc.integer({ min: 1, max: 3 }) })
  .chain(({ B, T }) =>
    fc.record({
      cells: fc.array(fc.array(fc.tuple(LP, Z, D, D), { minLength: T, maxLength: T }), {
        minLength: B,
        maxLength: B,
      }),
      lengths: fc.array(fc.integer({ min: 1, max: T }), { minLength: B, maxLength: B }),
      adv: fc.array(ADV, { minLength: B, maxLength: B }),
    }),
  )
  .map(({ cells, lengths, adv }) => ({
    lp: cells.map((row) => row.map(([lp]) => lp)),
    old: cells.map((row) => row.map(([lp, z]) => lp - z)),
    ref: cells.map((row) => row.map(([lp, , d]) => lp + d)),
    rollout: cells.map((row) => row.map(([lp, z, , d]) => lp - z - d)),
    adv,
    mask: cells.map((row, b) => row.map((_, t) => t < (lengths[b] as number))),
  }));

function inputsOf(x: Extreme) {
  return {
    logprobs: x.lp,
    oldLogprobs: x.old,
    advantages: x.adv,
    responseMask: x.mask,
    refLogprobs: x.ref,
    rolloutLogprobs: x.rollout,
    // Entropies for the top-entropy entries: |lp|, finite and ≥ 0 however extreme lp is.
    entropies: x.lp.map((r) => r.map((v) => Math.abs(v))),
  };
}

/** Every output finite at response positions (ratio everywhere). */
function expectAllFinite(r: {
  loss: number;
  gradLogprobs: { data: Float64Array };
  perTokenObjective: { data: Float64Array };
  ratio: { data: Float64Array };
}): void {
  expect(Number.isFinite(r.loss)).toBe(true);
  for (const x of [r.gradLogprobs.data, r.perTokenObjective.data, r.ratio.data])
    for (const v of x) expect(Number.isFinite(v)).toBe(true);
}

/** |a − b| ≤ 1e-9·scale, compared only where the reference is finite. */
function closeWhereFinite(got: number, ref: number, scale: number, what: string): void {
  if (!Number.isFinite(ref)) return;
  expect(Math.abs(got - ref), what).toBeLessThanOrEqual(1e-9 * scale + 1e-300);
}

/** Run a config: finite and equal to the reference where that is finite, or OverflowError. */
function checkConfig(cfg: PolicyLossConfig, x: Extreme): void {
  const inputs = inputsOf(x);
  let r: PolicyLossResult;
  try {
    r = policyLoss(cfg, inputs);
  } catch (e) {
    expect(e).toMatchObject({ name: "OverflowError", code: "E_OVERFLOW" });
    // A genuine overflow, not a NaN caught late: the value named is ±Infinity, and the
    // independent reference is not all-finite either.
    expect((e as Error).message).not.toContain("got NaN");
    const ref = policyLossRef(cfg, inputs);
    const refFinite =
      Number.isFinite(ref.loss) &&
      Array.from(ref.grad.data).every(Number.isFinite) &&
      (ref.klLoss === null || Number.isFinite(ref.klLoss));
    expect(refFinite, (e as Error).message).toBe(false);
    return;
  }
  expectAllFinite(r);
  if (r.klLoss !== null) expect(Number.isFinite(r.klLoss)).toBe(true);
  const ref = policyLossRef(cfg, inputs);
  let objScale = Math.abs(r.loss);
  for (const v of r.perTokenObjective.data) objScale += Math.abs(v);
  if (r.klLoss !== null) objScale += Math.abs(r.klLoss) * Math.abs(cfg.kl?.coef ?? 0);
  closeWhereFinite(r.loss, ref.loss, objScale, "loss");
  let gScale = 0;
  for (const v of r.gradLogprobs.data) gScale = Math.max(gScale, Math.abs(v));
  r.gradLogprobs.data.forEach((g, i) => {
    closeWhereFinite(g, ref.grad.data[i] as number, gScale, `grad[${i}]`);
  });
  r.perTokenObjective.data.forEach((v, i) => {
    closeWhereFinite(v, ref.perTokenObjective.data[i] as number, Math.abs(v), `obj[${i}]`);
  });
}

const PARAMS = { ...FC_PARAMS, numRuns: Math.max(FC_PARAMS.numRuns, 150) };

describe("hardening: extreme inputs", () => {
  it("property: every algorithm and every ratio × surrogate × aggregation is finite or throws OverflowError, and equals the reference where that is finite", () => {
    const grid: PolicyLossConfig[] = [];
    for (const spec of Object.values(ALGORITHMS))
      grid.push({ ...spec.loss, normLen: spec.loss.normLen ?? 3 });
    for (const [ratio, v] of RATIO_SURROGATE_PAIRS)
      for (const aggregation of AGGREGATIONS)
        grid.push({ ratio, surrogate: v.surrogate, clip: v.clip, aggregation, normLen: 3 });
    const extras = fc.record({
      tis: fc.constantFrom(
        null,
        { cap: 2, level: "token" as const },
        { cap: 0.5, level: "sequence" as const },
      ),
      kl: fc.constantFrom(...KL_VARIANTS),
    });
    fc.assert(
      fc.property(fc.constantFrom(...grid), extras, extremes, (cfg, { tis, kl }, x) => {
        checkConfig(cfg, x);
        // VESPO folds only a token-level IS weight into its gamma weight (a sequence one is a ConfigError).
        const is = cfg.surrogate === "vespo" && tis?.level === "sequence" ? null : tis;
        checkConfig({ ...cfg, isCorrection: cfg.isCorrection ?? is, kl: cfg.kl ?? kl }, x);
      }),
      PARAMS,
    );
  });

  it("property: papoLoss in both forms is finite or throws OverflowError", () => {
    const forms = Object.values(ALGORITHMS).flatMap((s) =>
      s.papo ? [s.papo.official, s.papo.trl] : [],
    );
    fc.assert(
      fc.property(fc.constantFrom(...forms), extremes, D, (cfg, x, dm) => {
        const lpm = x.lp.map((row) => row.map((v) => v + dm));
        const inputs = {
          ...inputsOf(x),
          maskedLogprobs: lpm,
          entropies: lpm,
          maskedEntropies: lpm,
        };
        try {
          const r = papoLoss(cfg, inputs);
          expect(Number.isFinite(r.loss)).toBe(true);
          for (const v of r.gradLogprobs.data) expect(Number.isFinite(v)).toBe(true);
          for (const v of r.perceptionPerToken.data) expect(Number.isFinite(v)).toBe(true);
        } catch (e) {
          expect(e).toMatchObject({ name: "OverflowError" });
          expect((e as Error).message).not.toContain("got NaN");
        }
      }),
      PARAMS,
    );
  });

  it("property: every framework model is finite or throws OverflowError on the same extremes", () => {
    const ids = Object.keys(FRAMEWORK_MODELS);
    fc.assert(
      fc.property(fc.constantFrom(...ids), extremes, (id, x) => {
        const model = FRAMEWORK_MODELS[id];
        if (model === undefined) throw new Error(id);
        try {
          expectAllFinite(model.evaluate(inputsOf(x)));
        } catch (e) {
          expect(e).toMatchObject({ name: "OverflowError", code: "E_OVERFLOW" });
          expect((e as Error).message, id).not.toContain("got NaN");
        }
      }),
      { ...PARAMS, numRuns: PARAMS.numRuns * 2 },
    );
  });
});
