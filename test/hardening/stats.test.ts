/**
 * Enforces the numeric policy of issue 9 for the advantages, the KL functions and the value loss
 * (docs/conventions.md, numeric policy): finite input gives finite output or an OverflowError
 * naming the quantity and position — never NaN, never ±Infinity, never another error class.
 * Regressions use hand-derived values (arithmetic in the comments); properties compare with the
 * autodiff references (klLossRef, valueLossRef) or with exact power-of-two rescaling identities.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  gae,
  grpoAdvantages,
  KL_ESTIMATORS,
  klEstimate,
  klInReward,
  klLoss,
  OverflowError,
  PolgradError,
  reinforcePPAdvantages,
  reverseKlGradSurrogate,
  rlooAdvantages,
  valueLoss,
  whiten,
} from "../../src/index.js";
import { klLossRef, valueLossRef } from "../../src/verify/reference/index.js";
import { caughtAs } from "../_kit/index.js";

const FC = { seed: 9009, numRuns: 150 } as const;
const one = [[true]];

/** Run `f`; return "finite" when every number in its result is finite, else the error class. */
function outcome(f: () => unknown): string {
  let r: unknown;
  try {
    r = f();
  } catch (e) {
    return e instanceof PolgradError ? e.name : `foreign ${String(e)}`;
  }
  const bad: unknown[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "number") {
      if (!Number.isFinite(v)) bad.push(v);
    } else if (v instanceof Float64Array) v.forEach(walk);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === "object" && v !== null && !(v instanceof Uint8Array))
      Object.values(v).forEach(walk);
  };
  walk(r);
  return bad.length === 0 ? "finite" : `non-finite ${String(bad[0])}`;
}

const overflow = (f: () => unknown): OverflowError => caughtAs(OverflowError, f);

const rel = (a: number, e: number) => Math.abs(a - e) / Math.max(Math.abs(e), Number.MIN_VALUE);

/** Extreme but valid magnitudes of issue 9: ±1e300, ±1e-300, near 0, near 745 and 1e4. */
const extreme = fc.constantFrom(
  0,
  1e-300,
  -1e-300,
  1e-4,
  -1,
  -745,
  745,
  -1e4,
  1e300,
  -1e300,
  1.7e308,
  -1.7e308,
);
const exponent = fc.integer({ min: -1000, max: 1000 });
const smallInts = (min: number, max: number) =>
  fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: min, maxLength: max });

describe("grpoAdvantages", () => {
  test("regression: rewards of ±1e300 give the exact ±1/√2, not NaN", () => {
    // μ = 0; Σd² = 2e600 (scaled: exact); Bessel σ = √2·1e300; σ + 1e-4 = σ in float64;
    // A = ±1e300/(√2·1e300) = ±1/√2.
    const a = grpoAdvantages([1e300, -1e300], [0, 0]);
    expect(rel(a[0] as number, Math.SQRT1_2)).toBeLessThan(4e-16);
    expect(rel(a[1] as number, -Math.SQRT1_2)).toBeLessThan(4e-16);
  });

  test("regression: an unrepresentable centered advantage is an OverflowError at its index", () => {
    // Dr.GRPO: μ = (1.7e308 − 2·1.7e308)/3 = −5.67e307, r₀ − μ = 2.27e308 > 1.8e308.
    const e = overflow(() =>
      grpoAdvantages([1.7e308, -1.7e308, -1.7e308], [0, 0, 0], { scale: "none" }),
    );
    expect([e.code, e.quantity, e.position]).toEqual(["E_OVERFLOW", "advantages", [0]]);
  });

  test("identity: grpo advantages are invariant under rewards × 2^k with eps 0 (bitwise)", () => {
    fc.assert(
      fc.property(smallInts(2, 8), exponent, fc.boolean(), (r, k, unbiased) => {
        fc.pre(new Set(r).size > 1);
        const ids = r.map((_, i) => i % 2);
        fc.pre(new Set(r.filter((_, i) => i % 2 === 0)).size > 1 || r.length > 3);
        const cfg = { eps: 0, unbiased };
        let base: Float64Array;
        try {
          base = grpoAdvantages(r, ids, cfg);
        } catch (e) {
          return (e as PolgradError).code === "E_CONFIG" || (e as PolgradError).code === "E_SHAPE";
        }
        const scaled = grpoAdvantages(
          r.map((x) => x * 2 ** k),
          ids,
          cfg,
        );
        expect(Array.from(scaled)).toEqual(Array.from(base));
        return true;
      }),
      FC,
    );
  });
});

describe("rlooAdvantages", () => {
  test("regression: rewards near 1.8e308 give the exact leave-one-out advantages", () => {
    // A₀ = 1.5e308 − 1e308 = 5e307, A₁ = 1e308 − 1.5e308 = −5e307 (S = 2.5e308 overflowed before).
    expect(Array.from(rlooAdvantages([1.5e308, 1e308], [0, 0]))).toEqual([5e307, -5e307]);
  });

  test("rejects: an advantage beyond float64 with an OverflowError naming its index", () => {
    // A₀ = 1.5e308 − (−1.5e308) = 3e308 > 1.8e308.
    const e = overflow(() => rlooAdvantages([1.5e308, -1.5e308], [0, 0]));
    expect([e.quantity, e.position]).toEqual(["advantages", [0]]);
  });
});

describe("reinforcePPAdvantages", () => {
  test("identity: batch-normalized advantages are invariant under rewards × 2^k with eps 0 (bitwise)", () => {
    fc.assert(
      fc.property(smallInts(2, 8), exponent, fc.boolean(), (r, k, grouped) => {
        fc.pre(new Set(r).size > 1);
        const ids = grouped ? r.map((_, i) => i % 2) : null;
        const cfg = { batchNorm: true, eps: 0 };
        let base: Float64Array;
        try {
          base = reinforcePPAdvantages(r, ids, cfg);
        } catch (e) {
          return (e as PolgradError).code === "E_CONFIG";
        }
        const scaled = reinforcePPAdvantages(
          r.map((x) => x * 2 ** k),
          ids,
          cfg,
        );
        expect(Array.from(scaled)).toEqual(Array.from(base));
        return true;
      }),
      FC,
    );
  });

  test("regression: a batch mean of rewards near 1.8e308 is finite", () => {
    // mean = (1.5e308 + 1.5e308 − 1.5e308)/3 = 5e307; a = [1e308, 1e308, −2e308] → the last is
    // beyond float64 without batch norm (OverflowError) and a/σ is finite with it:
    // σ² = (1e308² + 1e308² + 4e308²)/2 = 3e616, a/σ = [1, 1, −2]/√3.
    const r = [1.5e308, 1.5e308, -1.5e308];
    expect(overflow(() => reinforcePPAdvantages(r, null, { batchNorm: false })).position).toEqual([
      2,
    ]);
    const a = reinforcePPAdvantages(r, null, { batchNorm: true });
    expect(rel(a[0] as number, 1 / Math.sqrt(3))).toBeLessThan(1e-15);
    expect(rel(a[2] as number, -2 / Math.sqrt(3))).toBeLessThan(1e-15);
  });
});

describe("whiten", () => {
  test("regression: values near ±1.8e308 whiten to ±1/√2, not NaN", () => {
    // μ = 0, σ² = 2·(1.7e308)²/1, out = ±1.7e308/(√2·1.7e308) = ±1/√2 (eps negligible).
    const w = whiten([[1.7e308, -1.7e308]], [[true, true]]).data;
    expect(rel(w[0] as number, Math.SQRT1_2)).toBeLessThan(4e-16);
    expect(rel(w[1] as number, -Math.SQRT1_2)).toBeLessThan(4e-16);
  });

  test("identity: whiten is invariant under x × 2^k with eps 0 (bitwise)", () => {
    fc.assert(
      fc.property(smallInts(2, 10), exponent, (x, k) => {
        fc.pre(new Set(x).size > 1);
        const m = [x.map(() => true)];
        const base = whiten([x], m, { eps: 0 }).data;
        const scaled = whiten([x.map((v) => v * 2 ** k)], m, { eps: 0 }).data;
        expect(Array.from(scaled)).toEqual(Array.from(base));
        return true;
      }),
      FC,
    );
  });
});

describe("gae", () => {
  test("regression: rewards and values near 1.8e308 give the exact advantages and returns", () => {
    // γ = λ = 1, T = 2. t = 1 (last): δ = 0 − 1.5e308 → A₁ = −1.5e308, R₁ = 0.
    // t = 0: δ = 1.5e308 + 1.5e308 − 1.5e308 = 1.5e308 (r + γV overflowed before),
    // A₀ = 1.5e308 + A₁ = 0, R₀ = 0 + 1.5e308.
    const out = gae([[1.5e308, 0]], [[1.5e308, 1.5e308]], { gamma: 1, lam: 1 }, [[true, true]]);
    expect(Array.from(out.advantages.data)).toEqual([0, -1.5e308]);
    expect(Array.from(out.returns.data)).toEqual([1.5e308, 0]);
  });

  test("rejects: a diverging recursion with an OverflowError naming advantages", () => {
    // γ = 1e300: the bootstrap γ·V₁ = 1e300·1e10 = 1e310 exceeds float64 at t = 0.
    const e = overflow(() => gae([[0, 0]], [[0, 1e10]], { gamma: 1e300, lam: 1 }, [[true, true]]));
    expect([e.quantity, e.position]).toEqual(["advantages", [0, 0]]);
  });

  test("identity: gae(2^k·r, 2^k·V) = 2^k·gae(r, V) bitwise", () => {
    fc.assert(
      fc.property(smallInts(1, 6), exponent, (r, k) => {
        const V = r.map((x) => x * 3);
        const m = [r.map(() => true)];
        const cfg = { gamma: 0.5, lam: 0.75 };
        const base = gae([r], [V], cfg, m);
        const c = 2 ** k;
        const s = gae([r.map((x) => x * c)], [V.map((x) => x * c)], cfg, m);
        expect(Array.from(s.advantages.data)).toEqual(
          Array.from(base.advantages.data, (x) => x * c),
        );
        expect(Array.from(s.returns.data)).toEqual(Array.from(base.returns.data, (x) => x * c));
      }),
      FC,
    );
  });
});

describe("klLoss", () => {
  test("regression: k3 at delta = 1e4 is an OverflowError naming the estimate and position", () => {
    // δ = ref − lp = 0 − (−1e4) = 1e4: e^1e4 exceeds float64.
    const e = overflow(() => klLoss([[-1e4]], [[0]], "k3", "token_mean", { responseMask: one }));
    expect([e.fn, e.quantity, e.position]).toEqual(["klLoss", "k3 estimate", [0, 0]]);
  });

  test("golden: k3 at delta = -1e4 is finite, 1e4 − 1 with gradient 1", () => {
    // δ = −1e4 − 0: expm1(δ) = −1 in float64, value −1 − δ = 9999, ∂/∂lp = −expm1(δ) = 1.
    const r = klLoss([[0]], [[-1e4]], "k3", "token_mean", { responseMask: one });
    expect([r.loss, r.gradLogprobs.data[0]]).toEqual([9999, 1]);
  });

  test("regression: k2 at delta = 1.5e154 is finite (delta² alone would overflow)", () => {
    // δ²/2 = 2.25e308/2 = 1.125e308 < 1.8e308, while δ² = 2.25e308 > 1.8e308.
    const r = klLoss([[0]], [[1.5e154]], "k2", "token_mean", { responseMask: one });
    expect(rel(r.loss, 1.125e308)).toBeLessThan(1e-15);
    const e = overflow(() => klLoss([[0]], [[1e300]], "k2", "token_mean", { responseMask: one }));
    expect(e.quantity).toBe("k2 estimate");
  });

  test("regression: k3 near delta = 0 is exact to an ulp, where expm1(delta) − delta cancels", () => {
    // e^δ − 1 − δ = δ²/2 + δ³/6 + δ⁴/24 + … at δ = 1e-6: 5e-13 + 1.6666666666666667e-19 +
    // 4.2e-26 = 5.000001666666667e-13 (expm1(δ) − δ gives 5.0000016656e-13, off by 2e-10).
    const v = klEstimate([[0]], [[1e-6]], "k3", { responseMask: one }).data[0] as number;
    expect(rel(v, 5e-13 + 1.6666666666666667e-19 + 4.166666666666667e-26)).toBeLessThan(5e-16);
  });

  test("regression: a log-ratio beyond float64 is an OverflowError, not Infinity", () => {
    const e = overflow(() =>
      klLoss([[-1e308]], [[1e308]], "k1", "token_mean", { responseMask: one }),
    );
    expect([e.quantity, e.position]).toEqual(["refLogprobs - logprobs", [0, 0]]);
  });

  test("regression: partial sums that overflow leave a finite loss finite", () => {
    // seq_mean_token_sum, B = 1: w = 1; k1 = lp − ref = [1e308, 1e308, −1e308], Σ = 1e308.
    const m = [[true, true, true]];
    const r = klLoss([[1e308, 1e308, -1e308]], [[0, 0, 0]], "k1", "seq_mean_token_sum", {
      responseMask: m,
    });
    expect(r.loss).toBe(1e308);
    const e = overflow(() =>
      klLoss([[1e308, 1e308]], [[0, 0]], "k1", "seq_mean_token_sum", {
        responseMask: [[true, true]],
      }),
    );
    expect(e.quantity).toBe("klLoss");
  });

  test("property: extreme logprobs give finite results matching klLossRef, or OverflowError", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(extreme, extreme), { minLength: 1, maxLength: 4 }),
        fc.constantFrom(...KL_ESTIMATORS),
        fc.constantFrom("token_mean", "seq_mean_token_sum", "seq_mean_token_mean"),
        (pairs, kind, agg) => {
          const lp = [pairs.map((p) => p[0])];
          const ref = [pairs.map((p) => p[1])];
          const m = [pairs.map(() => true)];
          const o = outcome(() => klLoss(lp, ref, kind, agg, { responseMask: m }));
          expect(["finite", "OverflowError"]).toContain(o);
          if (o !== "finite") return;
          const got = klLoss(lp, ref, kind, agg, { responseMask: m });
          const want = klLossRef(lp, ref, kind, agg, { responseMask: m });
          // The reference is the literal definition summed left to right without compensation,
          // so it is exact only to ε·Σ|w·k| (cancellation between ±1.7e308 terms); k2 (δ²)/2 and
          // k3 expm1(δ) − δ carry a few ulps more at these δ (none in (0, 2^-8) but 1e-300, 1e-4).
          if (Number.isFinite(want.loss)) {
            const k = klEstimate(lp, ref, kind, { responseMask: m }).data;
            const mass = Array.from(k).reduce((a, x) => a + Math.abs(x), 0);
            const tol = kind === "k3" ? 1e-11 : 1e-15;
            expect(Math.abs(got.loss - want.loss)).toBeLessThanOrEqual(
              tol * Math.max(Math.abs(want.loss), mass) + 1e-300,
            );
          }
        },
      ),
      FC,
    );
  });
});

describe("klInReward", () => {
  test("rejects: a non-finite coef with a ConfigError, and an unrepresentable shaped reward", () => {
    const args = [[[1]], [[-1]], [[-2]], "k1"] as const;
    expect(outcome(() => klInReward(...args, Number.NaN, { responseMask: one }))).toBe(
      "ConfigError",
    );
    // r − coef·k1 = 1 − 1e300·(old − ref) = 1 − 1e300·1e10 = −1e310.
    const e = overflow(() =>
      klInReward([[1]], [[1e10]], [[0]], "k1", 1e300, { responseMask: one }),
    );
    expect([e.quantity, e.position]).toEqual(["shaped reward", [0, 0]]);
  });
});

describe("reverseKlGradSurrogate", () => {
  test("rejects: a surrogate term (lp − ref)·lp beyond float64 with an OverflowError", () => {
    // (1e200 − (−1e200))·1e200 = 2e400.
    const e = overflow(() =>
      reverseKlGradSurrogate([[1e200]], [[-1e200]], "token_mean", { responseMask: one }),
    );
    expect(e.position).toEqual([0, 0]);
  });
});

describe("valueLoss", () => {
  const unclipped = { clipEps: null, aggregation: "token_mean" } as const;

  test("regression: a squared error of 1e300 scale is an OverflowError naming position", () => {
    // ½(1e300 − (−1e300))² = 2e600.
    const e = overflow(() =>
      valueLoss([[0, 1e300]], [[0, 0]], [[0, -1e300]], [[true, true]], unclipped),
    );
    expect([e.fn, e.position]).toEqual(["valueLoss", [0, 1]]);
    const d = overflow(() => valueLoss([[1.7e308]], [[0]], [[-1.7e308]], one, unclipped));
    expect(d.quantity).toBe("values - returns");
  });

  test("regression: ½(v − R)² is finite up to |v − R| ≈ 1.9e154", () => {
    // ½·(1.5e154)² = 1.125e308; gradient w·(v − R) = 1.5e154.
    const r = valueLoss([[1.5e154]], [[0]], [[0]], one, unclipped);
    expect(rel(r.loss, 1.125e308)).toBeLessThan(1e-15);
    expect(r.gradValues.data[0]).toBe(1.5e154);
  });

  test("golden: a clip band overflowing float64 still clamps exactly", () => {
    // v_old + ε = 1.7e308 + 1e308 overflows; v = R = 1.7e308 lies inside the band: loss 0, grad 0.
    const r = valueLoss([[1.7e308]], [[1.7e308]], [[1.7e308]], one, {
      clipEps: 1e308,
      aggregation: "token_mean",
    });
    expect([r.loss, r.gradValues.data[0], r.clippedFrac]).toEqual([0, 0, 0]);
  });

  test("property: extreme values give finite results matching valueLossRef, or OverflowError", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(extreme, extreme, extreme), { minLength: 1, maxLength: 3 }),
        fc.constantFrom(null, 0.2, 1e300),
        (cols, clipEps) => {
          const v = [cols.map((c) => c[0])];
          const vo = [cols.map((c) => c[1])];
          const R = [cols.map((c) => c[2])];
          const m = [cols.map(() => true)];
          const opts = { clipEps, aggregation: "token_mean" } as const;
          const o = outcome(() => valueLoss(v, vo, R, m, opts));
          expect(["finite", "OverflowError"]).toContain(o);
          if (o !== "finite") return;
          const got = valueLoss(v, vo, R, m, opts);
          const want = valueLossRef(v, vo, R, m, opts);
          if (!Number.isFinite(want.loss)) return; // the literal reference squares first
          expect(Math.abs(got.loss - want.loss)).toBeLessThanOrEqual(1e-15 * Math.abs(want.loss));
          got.gradValues.data.forEach((g, i) => {
            const w = want.grad.data[i] as number;
            expect(Math.abs(g - w)).toBeLessThanOrEqual(1e-15 * Math.abs(w));
          });
        },
      ),
      FC,
    );
  });
});

describe("advantages", () => {
  test("property: extreme rewards give finite advantages or OverflowError, never another class", () => {
    fc.assert(
      fc.property(fc.array(extreme, { minLength: 2, maxLength: 6 }), (r) => {
        const ids = r.map((_, i) => (r.length > 3 ? i % 2 : 0));
        const m = [r.map(() => true)];
        const calls: (() => unknown)[] = [
          () => grpoAdvantages(r, ids),
          () => grpoAdvantages(r, ids, { scale: "none" }),
          () => grpoAdvantages(r, ids, { center: false, eps: 1e-8 }),
          () => rlooAdvantages(r, ids),
          () => reinforcePPAdvantages(r, null, { batchNorm: true }),
          () => reinforcePPAdvantages(r, ids, { batchNorm: true }),
          () => reinforcePPAdvantages(r, ids, { batchNorm: false }),
          () => whiten([r], m),
          () => whiten([r], m, { shiftMean: false }),
          () => gae([r], [r.map((x) => -x)], { gamma: 1, lam: 0.95 }, m),
        ];
        for (const f of calls) expect(["finite", "OverflowError"]).toContain(outcome(f));
      }),
      FC,
    );
  });
});
