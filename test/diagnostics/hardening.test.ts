/**
 * Enforces the numeric policy and the bounds of issue 9 for the diagnostics
 * (docs/conventions.md, numeric policy): finite input gives a finite report or an OverflowError
 * naming the field; every user-set budget is capped with a ConfigError naming the cap; null,
 * undefined, wrong-type and deeply nested arguments give a typed error naming the argument.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import type { Mask, Matrix } from "../../src/core/tensor.js";
import {
  broadcastToTokens,
  clipReport,
  cusumStatistic,
  diagnoseBatch,
  diagnoseRun,
  entropyTrend,
  essFromLogWeights,
  gae,
  grpoAdvantages,
  importanceEss,
  klEstimate,
  klInReward,
  klLoss,
  lengthBiasProbe,
  logprobMismatch,
  OverflowError,
  PolgradError,
  quantiles,
  readTensors,
  reinforcePPAdvantages,
  reverseKlGradSurrogate,
  rlooAdvantages,
  scanRunFolder,
  slidingEss,
  theilSenSlope,
  tokenEntropyEstimate,
  toPartialBatch,
  trendTest,
  valueLoss,
  whiten,
  writeSafetensors,
} from "../../src/index.js";
import { caughtAs } from "../_kit/index.js";

const FC = { seed: 9010, numRuns: 120 } as const;

function thrown(f: () => unknown): { name: string; arg: string | undefined; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof PolgradError) return { name: e.name, arg: e.arg, message: e.message };
    return { name: `foreign ${(e as Error).name}`, arg: undefined, message: String(e) };
  }
  return { name: "none", arg: undefined, message: "" };
}

const overflow = (f: () => unknown): OverflowError => caughtAs(OverflowError, f);

/** True when every number reachable in `v` (objects, arrays, Float64Arrays) is finite. */
function allFinite(v: unknown): boolean {
  if (typeof v === "number") return Number.isFinite(v);
  if (v instanceof Float64Array || Array.isArray(v)) return Array.from(v).every(allFinite);
  if (typeof v === "object" && v !== null && !ArrayBuffer.isView(v))
    return Object.values(v).every(allFinite);
  return true;
}

const rel = (a: number, e: number) => Math.abs(a - e) / Math.abs(e);
const one = [[true]];

describe("importanceEss", () => {
  test("regression: sequence log-weights whose partial sums overflow give the exact ess, not NaN", () => {
    // Row 0: gaps [1.5e308, 1.5e308, −1.5e308] sum to lw₀ = 1.5e308 (the running sum overflowed);
    // row 1: lw₁ = 0. Shifted by the max: w' = [1, e^−1.5e308 = 0], ESS = 1²/1² = 1, ratio 1/2;
    // mean 7.5e307, Bessel std √(2·(7.5e307)²) = 7.5e307·√2.
    const r = importanceEss(
      [
        [1.5e308, 1.5e308, -1.5e308],
        [0, 0, 0],
      ],
      [
        [0, 0, 0],
        [0, 0, 0],
      ],
      [
        [true, true, true],
        [true, false, false],
      ],
    );
    expect([r.ess, r.essRatio, r.logWeightMean, r.logWeightMax]).toEqual([
      1, 0.5, 7.5e307, 1.5e308,
    ]);
    expect(rel(r.logWeightStd, 7.5e307 * Math.SQRT2)).toBeLessThan(4e-16);
  });

  test("regression: the std of token log-weights ±1e300 is finite", () => {
    // lw = [1e300, −1e300]: mean 0, std √((1e600 + 1e600)/1) = √2·1e300 (the squares overflowed).
    const r = importanceEss([[1e300, -1e300]], [[0, 0]], [[true, true]], { level: "token" });
    expect(rel(r.logWeightStd, Math.SQRT2 * 1e300)).toBeLessThan(4e-16);
    expect(r.ess).toBe(1);
  });

  test("rejects: a sequence log-weight beyond float64 with an OverflowError naming its row", () => {
    const e = overflow(() => importanceEss([[1.5e308, 1.5e308]], [[0, 0]], [[true, true]]));
    expect([e.quantity, e.position]).toEqual(["sequence log-weight", [0]]);
  });
});

describe("essFromLogWeights", () => {
  test("identity: ess is invariant under a common shift of the log-weights (bitwise)", () => {
    // Integer log-weights and shifts are exact, so lw + c − max(lw + c) = lw − max bitwise:
    // the Kish ESS of w·e^c equals that of w, here with log-weights out to ±745 and shifts to 1e12.
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -745, max: 745 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: -1e12, max: 1e12 }),
        (lw, c) => {
          expect(essFromLogWeights(lw.map((x) => x + c))).toBe(essFromLogWeights(lw));
        },
      ),
      FC,
    );
  });
});

describe("logprobMismatch", () => {
  test("regression: gaps of 1e300 and -1000 are OverflowErrors naming the estimate, not NaN", () => {
    // Δ = trainer − rollout = −1e300: k2 = Δ²/2 = 5e599 is not representable.
    const e2 = overflow(() => logprobMismatch([[-1e300]], [[0]], one));
    expect([e2.fn, e2.quantity, e2.position]).toEqual(["logprobMismatch", "k2 estimate", [0, 0]]);
    // Δ = −1000: k2 = 5e5 and k3(rollout‖trainer) = e^−1000 − 1 + 1000 = 999 are finite, but the
    // reverse k3 = e^1000 − 1 − 1000 is not.
    const e3 = overflow(() => logprobMismatch([[-1000]], [[0]], one));
    expect([e3.quantity, e3.position]).toEqual(["k3 estimate", [0, 0]]);
  });

  test("golden: gaps ±700 give a finite report", () => {
    // Δ = [700, −700]: mean 0, std √(2·700²) = 700√2, k1 0, k2 = 700²/2 = 245000,
    // k3 = (e^700 − 701 + e^−700 + 699)/2 = (e^700 + e^−700 − 2)/2, pplRatio e^0 = 1.
    const r = logprobMismatch([[700, -700]], [[0, 0]], [[true, true]]);
    expect(allFinite(r)).toBe(true);
    expect([r.gapMean, r.klK1, r.klK2, r.pplRatio]).toEqual([0, 0, 245000, 1]);
    expect(rel(r.klK3, (Math.exp(700) - 2) / 2)).toBeLessThan(1e-14);
    expect(r.catastrophicCount).toBe(2);
  });
});

describe("quantiles", () => {
  test("regression: interpolating between values near ±1.8e308 stays finite", () => {
    // x₍₀₎ = −1.7e308, x₍₁₎ = 1.7e308 (their difference overflows): Q(½) = 0, Q(¼) = −8.5e7·1e300.
    expect(quantiles([1.7e308, -1.7e308], [0.5, 0.25, 0, 1])).toEqual([
      0, -8.5e307, -1.7e308, 1.7e308,
    ]);
  });

  test("rejects: null and non-array samples with a ShapeError, not a TypeError", () => {
    expect(thrown(() => quantiles(null as never, [0.5]))).toMatchObject({
      name: "ShapeError",
      arg: "values",
    });
    expect(thrown(() => quantiles([1], null as never))).toMatchObject({
      name: "ShapeError",
      arg: "levels",
    });
    expect(thrown(() => quantiles("12" as never, [0.5]))).toMatchObject({ name: "ShapeError" });
  });
});

describe("tokenEntropyEstimate", () => {
  test("regression: a mean of entropies near 1.8e308 is finite", () => {
    // mean(1.7e308, 1.7e308) = 1.7e308 (the sum 3.4e308 overflowed before).
    const r = tokenEntropyEstimate(null, [[true, true]], { entropies: [[1.7e308, 1.7e308]] });
    expect([r.entropyEstimate, r.perSeqEntropy[0]]).toEqual([1.7e308, 1.7e308]);
  });
});

describe("trendTest", () => {
  const rng = () => createRng(1);
  test("rejects: nPerm 1e9 and other budgets past their caps with a ConfigError naming the cap", () => {
    const x = Array.from({ length: 30 }, (_, i) => i % 3);
    const big = thrown(() => trendTest(x, { window: 30, nPerm: 1e9, rng: rng() }));
    expect(big).toMatchObject({ name: "ConfigError", arg: "nPerm" });
    expect(big.message).toContain("1000000");
    const work = thrown(() =>
      trendTest(new Array(4000).fill(1), { window: 4000, nPerm: 1e5, rng: rng() }),
    );
    expect(work).toMatchObject({ name: "ConfigError", arg: "nPerm" });
    const wide = thrown(() => trendTest(new Array(5000).fill(1), { window: 5000, rng: rng() }));
    expect(wide).toMatchObject({ name: "ConfigError", arg: "window" });
    expect(thrown(() => trendTest(x, null as never))).toMatchObject({
      name: "ConfigError",
      arg: "options",
    });
    expect(thrown(() => entropyTrend(x, { window: 2, nPerm: 2e6, rng: rng() }))).toMatchObject({
      name: "ConfigError",
      arg: "nPerm",
    });
  });

  test("regression: a series near ±1.8e308 gives the exact cusum statistic, not NaN", () => {
    // x = [−a, a, −a, a], a = 1.6e308: x − min overflowed before. Mean 0, S = [−a, 0, −a, 0]:
    // stat = a at k = 0; slope: pairwise (x_j − x_i)/(j − i) sorted [−2a, 0, 0, 2a/3, 2a, 2a]
    // (2a beyond float64 only in the unscaled form), median (0 + 2a/3)/2 = a/3.
    const x = [-1.6e308, 1.6e308, -1.6e308, 1.6e308];
    expect(cusumStatistic(x)).toEqual({ stat: 1.6e308, argmax: 0 });
    expect(rel(theilSenSlope(x), 1.6e308 / 3)).toBeLessThan(4e-16);
    // A permutation [a, a, −a, −a] has S = [a, 2a, a, 0]: its statistic 2a = 3.2e308 is not
    // representable, so the threshold is an OverflowError; at a/2 everything is finite and the
    // statistic halves exactly.
    expect(overflow(() => trendTest(x, { window: 4, nPerm: 19, rng: createRng(3) })).quantity).toBe(
      "threshold",
    );
    const r = trendTest(
      x.map((v) => v / 2),
      { window: 4, nPerm: 19, rng: createRng(3) },
    );
    expect(allFinite(r)).toBe(true);
    expect(r.cusumStat).toBe(0.8e308);
  });

  test("rejects: a slope beyond float64 and a series past the theil–sen cap", () => {
    // (1.7e308 − (−1.7e308))/1 = 3.4e308.
    expect(overflow(() => theilSenSlope([-1.7e308, 1.7e308])).quantity).toBe("slope");
    expect(thrown(() => theilSenSlope(new Array(5000).fill(0)))).toMatchObject({
      name: "ShapeError",
      arg: "x",
    });
  });
});

describe("slidingEss", () => {
  test("rejects: window and step whose total work passes the cap with a ConfigError", () => {
    // B = 20000 rows of one token, window 10000, step 1: 10001 windows × 10000 = 1.0001e8 > 1e8.
    const B = 20000;
    const m: Mask = { rows: B, cols: 1, data: new Uint8Array(B).fill(1) };
    const lp: Matrix = { rows: B, cols: 1, data: new Float64Array(B) };
    expect(thrown(() => slidingEss(lp, lp, m, { window: 10000 }))).toMatchObject({
      name: "ConfigError",
      arg: "window",
    });
    expect(thrown(() => slidingEss(lp, lp, m, undefined as never))).toMatchObject({
      name: "ConfigError",
      arg: "options",
    });
  });
});

describe("lengthBiasProbe", () => {
  test("identity: slope, se and intercept scale with advantages × 2^k (bitwise)", () => {
    // Lengths [1, 2, 3] with |A| = [1, 2, 4]·2^k under seq_mean_token_sum (w = 1/B): y = L·|A|/3.
    const mask = [
      [true, false, false],
      [true, true, false],
      [true, true, true],
    ];
    const base = lengthBiasProbe([1, 2, 4], mask, { aggMode: "seq_mean_token_sum" });
    for (const k of [-1000, 1000, 1020]) {
      const c = 2 ** k;
      const r = lengthBiasProbe([c, 2 * c, 4 * c], mask, { aggMode: "seq_mean_token_sum" });
      expect([r.slope, r.slopeSe, r.intercept]).toEqual([
        base.slope * c,
        base.slopeSe * c,
        base.intercept * c,
      ]);
    }
  });
});

describe("diagnoseBatch", () => {
  test("regression: a log-ratio of 800 keeps the clip census (the ratio overflowed before)", () => {
    // ratio exp(800) is above 1 + ε_hi and the dual-clip cap 3 either way: with A = −1 < 0 it is
    // clipped high and its gradient is killed by the cap, so killed fraction 1.
    const mat = (x: number): Matrix => ({ rows: 1, cols: 1, data: Float64Array.of(x) });
    const d = diagnoseBatch({
      responseMask: { rows: 1, cols: 1, data: Uint8Array.of(1) },
      logprobs: mat(0),
      oldLogprobs: mat(-800),
      advantages: Float64Array.of(-1),
      source: { kind: "memory" } as never,
    });
    expect(d.clip?.fracNegAdvClippedHigh).toBe(1);
    expect(d.clip?.gradientKilledFrac).toBe(1);
    expect(thrown(() => diagnoseBatch(null as never))).toMatchObject({
      name: "ConfigError",
      arg: "batch",
    });
  });
});

describe("diagnostics", () => {
  test("property: extreme logprob streams give finite reports or OverflowError, never another class", () => {
    const extreme = fc.constantFrom(0, -1e-300, -1e-4, -1, -745, -1e4, -1e300, 1e-300, 700);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(extreme, extreme, fc.constantFrom(-1, 0, 1e300, 1e-300)), {
          minLength: 3,
          maxLength: 6,
        }),
        (cells) => {
          const B = cells.length;
          const m = cells.map((_, b) => [true, b % 3 > 0, b % 3 > 1]);
          const a = cells.map((c) => [c[0], c[0], c[1]]);
          const o = cells.map((c) => [c[1], c[1], c[0]]);
          const adv = cells.map((c) => c[2]);
          const calls: (() => unknown)[] = [
            () => importanceEss(a, o, m),
            () => importanceEss(a, o, m, { level: "token" }),
            () => slidingEss(a, o, m, { window: 2 }),
            () => logprobMismatch(a, o, m),
            () => tokenEntropyEstimate(a, m),
            () => lengthBiasProbe(adv, m, { aggMode: "seq_mean_token_sum" }),
            () =>
              clipReport(
                a.map((r) => r.map(() => 2)),
                adv,
                m,
                { epsLow: 0.2, epsHigh: 0.2 },
              ),
            () => quantiles(a.flat(), [0, 0.3, 1]),
            () => theilSenSlope(a.flat()),
            () => trendTest(a.flat(), { window: 3 * B, nPerm: 19, rng: createRng(B) }),
          ];
          for (const f of calls) {
            try {
              const r = f();
              expect(allFinite(r)).toBe(true);
            } catch (e) {
              // A degenerate design (equal lengths) is a typed MaskError; overflow an OverflowError.
              expect(e instanceof OverflowError || (e as PolgradError).code === "E_MASK").toBe(
                true,
              );
            }
          }
        },
      ),
      FC,
    );
  });

  test("rejects: null, undefined and wrong-type arguments with a typed error naming the argument", () => {
    const lp = [[-1, -2]];
    const m = [[true, true]];
    const rng = createRng(1);
    const cases: [string, () => unknown][] = [
      ["klEstimate options", () => klEstimate(lp, lp, "k1", null as never)],
      ["klLoss options", () => klLoss(lp, lp, "k1", "token_mean", undefined as never)],
      ["klInReward options", () => klInReward(lp, lp, lp, "k1", 1, null as never)],
      ["reverseKl options", () => reverseKlGradSurrogate(lp, lp, "token_mean", null as never)],
      ["klLoss logprobs", () => klLoss(null as never, lp, "k1", "token_mean", { responseMask: m })],
      ["valueLoss options", () => valueLoss(lp, lp, lp, m, null as never)],
      [
        "valueLoss values",
        () =>
          valueLoss(undefined as never, lp, lp, m, { clipEps: null, aggregation: "token_mean" }),
      ],
      ["grpo rewards", () => grpoAdvantages(null as never, [0])],
      ["grpo config", () => grpoAdvantages([1, 2], [0, 0], null as never)],
      ["rloo groupIds", () => rlooAdvantages([1, 2], null as never)],
      ["reinforcePP config", () => reinforcePPAdvantages([1, 2], null, null as never)],
      ["whiten options", () => whiten(lp, m, null as never)],
      ["gae config", () => gae(lp, lp, null as never, m)],
      ["broadcast perSeq", () => broadcastToTokens(null as never, m)],
      ["ess options", () => importanceEss(lp, lp, m, null as never)],
      ["essFromLogWeights", () => essFromLogWeights(null as never)],
      ["mismatch options", () => logprobMismatch(lp, lp, m, null as never)],
      ["mismatch gap", () => logprobMismatch(lp, lp, m, { catastrophicGap: "5" as never })],
      ["entropy options", () => tokenEntropyEstimate(lp, m, null as never)],
      ["lengthBias options", () => lengthBiasProbe([1], m, null as never)],
      ["clipReport clip", () => clipReport(lp, [1], m, null as never)],
      ["theilSen", () => theilSenSlope(undefined as never)],
      ["cusum", () => cusumStatistic({ length: 3 } as never)],
      ["trendTest series", () => trendTest(null as never, { window: 2, rng })],
      ["diagnoseRun options", () => diagnoseRun("/nonexistent", null as never)],
      ["diagnoseRun onStep", () => diagnoseRun("/nonexistent", {}, 5 as never)],
      ["scanRunFolder dir", () => scanRunFolder(null as never)],
    ];
    const bad = cases
      .map(([label, f]) => ({ label, ...thrown(f) }))
      .filter((r) => r.name === "none" || r.name.startsWith("foreign") || r.arg === undefined);
    expect(bad).toEqual([]);
  });

  test("rejects: arrays nested 1e5 deep with a ShapeError and a bounded message", () => {
    let deep: unknown = [1];
    for (let i = 0; i < 1e5; i++) deep = [deep];
    const m = [[true]];
    const calls: (() => unknown)[] = [
      () => quantiles(deep as never, [0.5]),
      () => klLoss(deep as never, [[0]], "k1", "token_mean", { responseMask: m }),
      () => essFromLogWeights(deep as never),
      () => theilSenSlope(deep as never),
      () => whiten(deep as never, m),
      () => importanceEss([[0]], deep as never, m),
    ];
    for (const f of calls) {
      const r = thrown(f);
      expect(r.name).toBe("ShapeError");
    }
    expect(thrown(() => quantiles(deep as never, [0.5])).message.length).toBeLessThan(400);
  });
});

describe("diagnoseRun", () => {
  test("regression: a rollout gap beyond 709 nats raises an alarm instead of passing as a skipped detector", () => {
    // Δ = trainer − rollout = 0 − (−800) = 800 at (0, 0): the k3 mean e^800/N of the mismatch
    // report is not representable, so logprobMismatch raises E_OVERFLOW; a gap of 800 nats is
    // catastrophic by any threshold, so the batch's skip carries the code and the run alarms.
    const dir = mkdtempSync(join(tmpdir(), "polgrad-overflow-run-"));
    const step = (rollout0: number) => ({
      logprobs: { dtype: "F64" as const, shape: [1, 2], data: Float64Array.of(-0.5, -0.25) },
      old_logprobs: { dtype: "F64" as const, shape: [1, 2], data: Float64Array.of(-0.5, -0.25) },
      rollout_logprobs: {
        dtype: "F64" as const,
        shape: [1, 2],
        data: Float64Array.of(rollout0, -0.25),
      },
      advantages: { dtype: "F64" as const, shape: [1], data: Float64Array.of(1) },
      response_mask: { dtype: "BOOL" as const, shape: [1, 2], data: Uint8Array.of(1, 1) },
    });
    writeSafetensors(join(dir, "step_000000.safetensors"), step(-0.5));
    writeSafetensors(join(dir, "step_000001.safetensors"), step(-800.5));
    writeSafetensors(join(dir, "step_000002.safetensors"), step(-0.5));
    const r = diagnoseRun(dir);
    expect(r.steps.length).toBe(3);
    expect(r.alarms).toContainEqual({
      code: "mismatch_overflow",
      message:
        "rollout/trainer logprob gap beyond 709 nats (the mismatch KL overflows float64) on 1 step(s), first at step 1",
      step: 1,
    });
    const batch = diagnoseBatch(toPartialBatch(readTensors(join(dir, "step_000001.safetensors"))));
    expect(batch.mismatch).toBeNull();
    expect(batch.skipped.find((s) => s.detector === "mismatch")?.code).toBe("E_OVERFLOW");
    expect(batch.alarms.map((a) => a.code)).toEqual(["mismatch_overflow"]);
    rmSync(dir, { recursive: true });
  });
});
