/**
 * Enforces docs/diagnostics/entropy.md: tokenEntropyEstimate (spec §7.4 goldens, identities, mask
 * invariance, validation) and entropyTrend (Theil–Sen and CUSUM goldens, determinism, trailing
 * window, validation), plus their text renderings. Calibrations live in entropy.calibration.test.ts.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { entropyTrend, tokenEntropyEstimate } from "../../src/diagnostics/entropy.js";
import { aggregate } from "../../src/index.js";
import { renderEntropyText, renderTrendText } from "../../src/report/entropyText.js";
import { expectMaskInvariant, FC_PARAMS, paddedMasks } from "../_kit/index.js";

const J = 123;
const MASK = [
  [true, true],
  [true, false],
];

function caught(f: () => unknown): { name: string; code: string; arg: string | undefined } {
  try {
    f();
  } catch (e) {
    const err = e as { name: string; code: string; arg: string | undefined };
    return { name: err.name, code: err.code, arg: err.arg };
  }
  throw new Error("expected an error");
}

/** Uniform reals on [min, max] (fc.double concentrates near 0; see clipping.test.ts). */
const uniform = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: 0, max: 2 ** 30 }).map((k) => min + ((max - min) * k) / 2 ** 30);

const batches = paddedMasks({ maxB: 5, maxT: 8 }).chain((mask) => {
  const n = mask.length * mask[0].length;
  return fc.array(uniform(-8, 0), { minLength: n, maxLength: n }).map((v) => ({
    logprobs: mask.map((row, b) => row.map((on, t) => (on ? v[b * row.length + t] : J))),
    responseMask: mask,
  }));
});

describe("tokenEntropyEstimate", () => {
  test("golden: mc path gives 7/3 pooled and [1.5, 4] per sequence", () => {
    // h = −lp = [1, 2 | 4]; pooled (1 + 2 + 4)/3 = 7/3; rows 3/2 and 4/1.
    const r = tokenEntropyEstimate(
      [
        [-1, -2],
        [-4, J],
      ],
      MASK,
    );
    expect(r.entropyEstimate).toBe(7 / 3);
    expect(Array.from(r.perSeqEntropy)).toEqual([1.5, 4]);
    expect(r.nTokens).toBe(3);
    expect(r.estimator).toBe("mc_cross_entropy");
  });

  test("golden: exact path averages the given entropies", () => {
    // Uniform distributions over 2, 4 and 3 outcomes have entropies ln 2, ln 4, ln 3; −77 is
    // negative junk at padding and is never read. Pooled (ln 2 + ln 4 + ln 3)/3 = ln 24 / 3.
    const entropies = [
      [Math.LN2, Math.log(4)],
      [Math.log(3), -77],
    ];
    const r = tokenEntropyEstimate(null, MASK, { entropies });
    expect(r.entropyEstimate).toBeCloseTo(Math.log(24) / 3, 15);
    expect(r.perSeqEntropy[0]).toBeCloseTo((3 * Math.LN2) / 2, 15);
    expect(r.perSeqEntropy[1]).toBe(Math.log(3));
    expect(r.estimator).toBe("exact");
    // entropies win over logprobs when both are given.
    expect(tokenEntropyEstimate([[0, 0]], MASK, { entropies })).toEqual(r);
  });

  test("identity: pooled estimate is the length-weighted mean of the per-sequence estimates", () => {
    fc.assert(
      fc.property(batches, ({ logprobs, responseMask }) => {
        const r = tokenEntropyEstimate(logprobs, responseMask);
        const L = responseMask.map((row) => row.filter(Boolean).length);
        const N = L.reduce((a, b) => a + b, 0);
        const weighted = L.reduce((s, l, b) => s + l * r.perSeqEntropy[b], 0) / N;
        expect(r.nTokens).toBe(N);
        expect(r.entropyEstimate).toBeCloseTo(weighted, 12);
      }),
      FC_PARAMS,
    );
  });

  test("identity: mc estimate equals minus the token-mean aggregate of the logprobs", () => {
    fc.assert(
      fc.property(batches, ({ logprobs, responseMask }) => {
        const r = tokenEntropyEstimate(logprobs, responseMask);
        const agg = aggregate(logprobs, responseMask, "token_mean");
        expect(Math.abs(r.entropyEstimate + agg)).toBeLessThanOrEqual(1e-14 * Math.max(1, -agg));
      }),
      FC_PARAMS,
    );
  });

  test("mask invariance: junk at padding never changes either path", () => {
    fc.assert(
      fc.property(batches, ({ logprobs, responseMask }) => {
        expectMaskInvariant((x) => tokenEntropyEstimate(x.logprobs, x.responseMask), {
          logprobs,
          responseMask,
        });
        const entropies = logprobs.map((row) => row.map((v) => -v));
        expectMaskInvariant(
          (x) => tokenEntropyEstimate(null, x.responseMask, { entropies: x.entropies }),
          { entropies, responseMask },
        );
      }),
      FC_PARAMS,
    );
  });

  test("rejects: mc path needs logprobs, 2-d, a valid mask and finite response values", () => {
    const cases: [() => unknown, string, string][] = [
      [() => tokenEntropyEstimate(null, MASK), "ConfigError", "logprobs"],
      [() => tokenEntropyEstimate(null, MASK, { entropies: null }), "ConfigError", "logprobs"],
      [() => tokenEntropyEstimate([-1, -2] as never, MASK), "ShapeError", "logprobs"],
      [() => tokenEntropyEstimate([[-1, -2]], MASK), "ShapeError", "responseMask"],
      [() => tokenEntropyEstimate([[-1, -2]], [[false, false]]), "MaskError", "responseMask"],
      [
        () => tokenEntropyEstimate([[-1, Number.NaN]], [[true, true]]),
        "NonFiniteError",
        "logprobs",
      ],
    ];
    for (const [f, name, arg] of cases) expect(caught(f)).toMatchObject({ name, arg });
    expect(() => tokenEntropyEstimate([[-1, Number.NaN]], [[true, false]])).not.toThrow();
  });

  test("rejects: exact path needs 2-d, finite and non-negative entropies at response positions", () => {
    const run =
      (entropies: unknown, mask: boolean[][] = [[true, true]]) =>
      () =>
        tokenEntropyEstimate(null, mask, { entropies: entropies as number[][] });
    const cases: [() => unknown, string, string][] = [
      [run([1, 2]), "ShapeError", "entropies"],
      [run([[1, 2]], MASK), "ShapeError", "responseMask"],
      [run([[1, Number.POSITIVE_INFINITY]]), "NonFiniteError", "entropies"],
      [run([[1, -1e-12]]), "ConfigError", "entropies"],
    ];
    for (const [f, name, arg] of cases) expect(caught(f)).toMatchObject({ name, arg });
    expect(run([[1, -5]], [[true, false]])).not.toThrow();
  });
});

describe("renderEntropyText", () => {
  test("golden: two lines of the mc golden", () => {
    const r = tokenEntropyEstimate(
      [
        [-1, -2],
        [-4, J],
      ],
      MASK,
    );
    expect(renderEntropyText(r).split("\n")).toEqual([
      "token entropy estimate: 2.333 nats over n_tokens=3 (estimator=mc_cross_entropy)",
      "per-sequence entropy: min=1.5 max=4 (B=2)",
    ]);
  });
});

const linear = (n: number): number[] => Array.from({ length: n }, (_, t) => 5 - 0.1 * t);

/** 3.0 for steps 0…29 and 1.0 from step 30 on, plus N(0, 1e-3²) noise. */
function levelShift(S: number): number[] {
  const rng = createRng(30);
  return Array.from({ length: S }, (_, t) => (t < 30 ? 3 : 1) + 1e-3 * rng.normal());
}

describe("entropyTrend", () => {
  test("golden: exact linear series 5 - 0.1t recovers slope -0.1", () => {
    // Every pairwise slope is −0.1 up to rounding of 5 − 0.1t, so the median is −0.1 to ~1e-15.
    const r = entropyTrend(linear(30), { window: 30, nPerm: 99, rng: createRng(1) });
    expect(r.slope).toBeCloseTo(-0.1, 13);
  });

  test("property: three of thirty points corrupted by ±5 move the slope by less than 0.05", () => {
    // A corrupted point spoils the 29 pairs it belongs to; three spoil 1 − C(27,2)/C(30,2) = 19.3 %
    // of the 435 pairs, below Theil–Sen's 29 % breakdown point, so the median stays on a clean pair.
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 29 }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.constantFrom(-5, 5), { minLength: 3, maxLength: 3 }),
        (where, signs) => {
          const x = linear(30);
          where.forEach((i, k) => {
            x[i] += signs[k];
          });
          const r = entropyTrend(x, { window: 30, nPerm: 19, rng: createRng(2) });
          expect(Math.abs(r.slope + 0.1)).toBeLessThan(0.05);
        },
      ),
      FC_PARAMS,
    );
  });

  test("golden: a level shift 3 to 1 at step 30 is located at global index 29 for windows 60 and 40", () => {
    // Shift after p pre-change steps of a window w: peak E|S_{p−1}| = p(w − p)|a − b|/w:
    // w = 60, p = 30 → 30·30·2/60 = 30 at local 29 = global 29; w = 40 (steps 20…59), p = 10 →
    // 10·30·2/40 = 15 at local 9 = global 20 + 9 = 29.
    const x = levelShift(60);
    const w60 = entropyTrend(x, { window: 60, nPerm: 199, rng: createRng(3) });
    expect(w60.changepointIndex).toBe(29);
    expect(w60.cusumStat).toBeCloseTo(30, 1);
    const w40 = entropyTrend(x, { window: 40, nPerm: 199, rng: createRng(3) });
    expect(w40.changepointIndex).toBe(29);
    expect(w40.cusumStat).toBeCloseTo(15, 1);
    expect(w40.cusumStat).toBeGreaterThan(w40.threshold);
  });

  test("golden: a constant series has slope 0, statistic 0 and no changepoint", () => {
    for (const c of [2.5, 0.1, 1.7, -3.3]) {
      const r = entropyTrend(new Array(25).fill(c), { window: 20, nPerm: 99, rng: createRng(4) });
      expect(r).toEqual({
        slope: 0,
        changepointIndex: null,
        cusumStat: 0,
        threshold: 0,
        alpha: 0.05,
        nPerm: 99,
      });
    }
  });

  test("identity: equal seeds give equal reports", () => {
    const rng = createRng(9);
    const x = Array.from({ length: 50 }, () => rng.normal());
    const a = entropyTrend(x, { window: 40, rng: createRng(5) });
    const b = entropyTrend(x, { window: 40, rng: createRng(5) });
    expect(a).toEqual(b);
    expect(a.nPerm).toBe(999);
  });

  test("identity: values before the trailing window change nothing", () => {
    const x = levelShift(60);
    const y = x.map((v, t) => (t < 20 ? 1e6 * (t + 1) : v));
    expect(entropyTrend(y, { window: 40, nPerm: 199, rng: createRng(6) })).toEqual(
      entropyTrend(x, { window: 40, nPerm: 199, rng: createRng(6) }),
    );
  });

  test("rejects: validation in polgrad's order (series, window, nPerm, alpha, alpha too small, rng)", () => {
    const rng = createRng(0);
    const x = new Array(10).fill(1);
    const cases: [() => unknown, string, string][] = [
      [() => entropyTrend([[1, 2]] as never, { window: 2, rng }), "ShapeError", "entropyPerStep"],
      [
        () => entropyTrend([1, Number.NaN, 1], { window: 2, rng }),
        "NonFiniteError",
        "entropyPerStep",
      ],
      // the whole series must be finite, even before the window
      [
        () => entropyTrend([Number.NaN, 1, 1], { window: 2, rng }),
        "NonFiniteError",
        "entropyPerStep",
      ],
      [() => entropyTrend(x, { window: 1, rng }), "ConfigError", "window"],
      [() => entropyTrend(x, { window: 2.5, rng }), "ConfigError", "window"],
      [() => entropyTrend(x, { window: 11, rng }), "ConfigError", "window"],
      [() => entropyTrend(x, { window: 5, nPerm: 0, rng }), "ConfigError", "nPerm"],
      [() => entropyTrend(x, { window: 5, alpha: 0, rng }), "ConfigError", "alpha"],
      [() => entropyTrend(x, { window: 5, alpha: 1, rng }), "ConfigError", "alpha"],
      [() => entropyTrend(x, { window: 5, alpha: Number.NaN, rng }), "ConfigError", "alpha"],
      // ⌊0.05·(9 + 1)⌋ = 0: the test could never reject.
      [() => entropyTrend(x, { window: 5, nPerm: 9, alpha: 0.05, rng }), "ConfigError", "alpha"],
      [() => entropyTrend(x, { window: 5, rng: undefined as never }), "ConfigError", "rng"],
      // order: a bad window is reported before a bad alpha
      [() => entropyTrend(x, { window: 11, alpha: 2, rng }), "ConfigError", "window"],
    ];
    for (const [f, name, arg] of cases) expect(caught(f)).toMatchObject({ name, arg });
    expect(caught(() => entropyTrend(x, { window: 11, rng })).code).toBe("E_CONFIG");
    // ⌊0.05·(19 + 1)⌋ = 1 is enough.
    expect(() => entropyTrend(x, { window: 5, nPerm: 19, alpha: 0.05, rng })).not.toThrow();
  });
});

describe("renderTrendText", () => {
  test("golden: three lines with and without a changepoint", () => {
    const detected = {
      slope: -0.007888,
      changepointIndex: 139,
      cusumStat: 22.93,
      threshold: 5.388,
      alpha: 0.05,
      nPerm: 999,
    };
    expect(renderTrendText(detected).split("\n")).toEqual([
      "entropy trend: Theil-Sen slope=-0.007888 per step",
      "CUSUM stat=22.93 vs threshold=5.388 (alpha=0.05, n_perm=999)",
      "changepoint: detected at step 139",
    ]);
    expect(renderTrendText({ ...detected, changepointIndex: null }, "ESS").split("\n")).toEqual([
      "ESS trend: Theil-Sen slope=-0.007888 per step",
      "CUSUM stat=22.93 vs threshold=5.388 (alpha=0.05, n_perm=999)",
      "changepoint: none detected",
    ]);
  });
});
