/** Enforces docs/diagnostics/length-bias.md (spec §7.5): goldens, exact properties, validation. */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { lengthBiasProbe, Z_975 } from "../../src/diagnostics/lengthBias.js";
import {
  AGGREGATIONS,
  type Aggregation,
  ConfigError,
  effectiveTokenWeights,
  MaskError,
  NonFiniteError,
  ShapeError,
  UnknownNameError,
} from "../../src/index.js";
import { expectBitwise, expectMaskInvariant, FC_PARAMS, JUNK } from "../_kit/index.js";
import { sandwich } from "./sandwich.js";

const P = Number.NaN; // padding junk

/** Run `f` and return what it throws (fails the test when it does not throw). */
function thrown(f: () => unknown): Error & { code?: string; arg?: string } {
  try {
    f();
  } catch (e) {
    return e as Error & { code?: string; arg?: string };
  }
  throw new Error("expected a throw");
}

function maskOf(lengths: readonly number[], T = Math.max(...lengths)): boolean[][] {
  return lengths.map((L) => Array.from({ length: T }, (_, t) => t < L));
}

const opts = (aggMode: Aggregation) => ({ aggMode, normLen: 5 });

/**
 * Batches for the exact properties: B ∈ [3, 7] rows of width T ∈ [2, 8], any 0/1 pattern with ≥ 1
 * token per row (not only right-padded), lengths that pass the degeneracy checks, advantages k/1000
 * for integer k ∈ [−3000, 3000] (normal floats or 0, so doubling is exact), junk at padding.
 */
const batches = fc
  .tuple(fc.integer({ min: 3, max: 7 }), fc.integer({ min: 2, max: 8 }))
  .chain(([B, T]) =>
    fc.record({
      responseMask: fc.array(
        fc.array(fc.boolean(), { minLength: T, maxLength: T }).filter((row) => row.some((v) => v)),
        { minLength: B, maxLength: B },
      ),
      cells: fc.array(fc.integer({ min: -3000, max: 3000 }), {
        minLength: B * T,
        maxLength: B * T,
      }),
      junk: fc.constantFrom(...JUNK),
      mode: fc.constantFrom(...AGGREGATIONS),
    }),
  )
  .filter(({ responseMask }) => {
    const L = responseMask.map((r) => r.filter((v) => v).length);
    const counts = [...new Set(L)].map((l) => L.filter((x) => x === l).length);
    return counts.length > 2 || (counts.length === 2 && !counts.includes(1));
  })
  .map(({ responseMask, cells, junk, mode }) => {
    const T = responseMask[0].length;
    const advantages = responseMask.map((row, b) =>
      row.map((on, t) => (on ? cells[b * T + t] / 1000 : junk)),
    );
    return { responseMask, advantages, mode };
  });

describe("lengthBiasProbe", () => {
  test("golden: lengths [1, 2, 3] with y = [1, 2, 4] give slope 3/2, intercept −2/3 and hc3 se 1/√2", () => {
    // seq_mean_token_sum: w = 1/B = 1/3 per token ⇒ y = [3·⅓, (3 + 3)·⅓, (4 + 4 + 4)·⅓] = [1, 2, 4].
    // OLS on x = [1, 2, 3]: β̂ = 3/2, α̂ = −2/3, e = [1/6, −1/3, 1/6], h = [5/6, 1/3, 5/6],
    // ω = [1, 1/4, 1], Var = (1 + 0 + 1)/2² = 1/2, se = 1/√2 (test/diagnostics/ols.test.ts derives
    // each step); CI = 3/2 ± 1.959963984540054/√2 = [0.11409…, 2.88590…].
    const r = lengthBiasProbe(
      [
        [3, P, P],
        [3, 3, P],
        [4, 4, 4],
      ],
      maskOf([1, 2, 3]),
      { aggMode: "seq_mean_token_sum" },
    );
    const close = (a: number, b: number, tol = 2e-15) =>
      expect(Math.abs(a - b)).toBeLessThanOrEqual(tol);
    close(r.slope, 1.5);
    close(r.intercept, -2 / 3);
    close(r.slopeSe, Math.SQRT1_2);
    close(r.ciLow, 1.5 - 1.959963984540054 * Math.SQRT1_2, 4e-15);
    close(r.ciHigh, 1.5 + 1.959963984540054 * Math.SQRT1_2, 4e-15);
    expect(r.ciLow).toBe(r.slope - Z_975 * r.slopeSe);
    expect(r.n).toBe(3);
    expect(r.perSeqLength).toEqual(new Int32Array([1, 2, 3]));
    // Σ_t w = L/3 = [1/3, 2/3, 1]
    expect(Array.from(r.perSeqWeightSum)).toEqual([1 / 3, 2 / 3, 1]);
  });

  test("golden: structural slopes with |A| ≡ 1 on lengths [1, 2, 3, 3]", () => {
    // B = 4, N = 9, x̄ = 9/4. With |A| ≡ 1, y_i = Σ_t w = W_i:
    //   seq_mean_token_mean W = L·1/(4L) = 1/4 for every row ⇒ slope 0, intercept 1/4;
    //   token_sum_norm (ℓ = 5) W = L/20 ⇒ slope 1/20, intercept 0;
    //   token_mean W = L/9 ⇒ slope 1/9, intercept 0;  seq_mean_token_sum W = L/4 ⇒ slope 1/4;
    //   token_sum W = L ⇒ slope 1, intercept 0.
    // y is exactly linear in L, so residuals and se vanish up to rounding (≤ 1e-16 here).
    const mask = maskOf([1, 2, 3, 3]);
    const ones = [1, 1, 1, 1];
    const expected: Record<Aggregation, [number, number]> = {
      seq_mean_token_mean: [0, 1 / 4],
      token_sum_norm: [1 / 20, 0],
      token_mean: [1 / 9, 0],
      seq_mean_token_sum: [1 / 4, 0],
      token_sum: [1, 0],
    };
    for (const mode of AGGREGATIONS) {
      const r = lengthBiasProbe(ones, mask, opts(mode));
      const [slope, intercept] = expected[mode];
      expect(Math.abs(r.slope - slope), mode).toBeLessThanOrEqual(1e-16);
      expect(Math.abs(r.intercept - intercept), mode).toBeLessThanOrEqual(1e-15);
      expect(r.slopeSe, mode).toBeLessThanOrEqual(1e-16);
      expect(Array.from(r.perSeqWeightSum), mode).toEqual(
        Array.from(lengthBiasProbe([-1, 1, -1, 1], mask, opts(mode)).perSeqWeightSum),
      );
    }
  });

  test("golden: |A| proportional to length is data-level bias under seq_mean_token_mean", () => {
    // lengths [1, 2, 3, 4], [B] advantages ±[1, 2, 3, 4]: W_i = 1/4 for every row, y_i = |a_i|/4 =
    // L_i/4 ⇒ slope 1/4 (per token), intercept 0, zero residuals: the aggregation is length-neutral
    // but the advantages are not.
    const r = lengthBiasProbe([1, -2, 3, -4], maskOf([1, 2, 3, 4]), {
      aggMode: "seq_mean_token_mean",
    });
    expect(Math.abs(r.slope - 0.25)).toBeLessThanOrEqual(1e-16);
    expect(Math.abs(r.intercept)).toBeLessThanOrEqual(1e-15);
    expect(r.ciLow).toBeGreaterThan(0.2499);
    expect(Array.from(r.perSeqWeightSum).map((w) => Math.abs(w - 0.25))).toEqual([0, 0, 0, 0]);
  });

  test("identity: equals the plain matrix sandwich for every mode on 12 seeded batches", () => {
    // Independent path: weights from effectiveTokenWeights, y by a plain loop, the HC3 fit by the
    // matrix sandwich of test/diagnostics/sandwich.ts. 1e-9 relative covers its uncompensated sums.
    const rng = createRng(20261130);
    for (const mode of AGGREGATIONS) {
      let cases = 0;
      while (cases < 12) {
        const B = rng.int(3, 16);
        const T = rng.int(2, 10);
        const L = Array.from({ length: B }, () => rng.int(1, T));
        const counts = [...new Set(L)].map((l) => L.filter((x) => x === l).length);
        if (counts.length < 2 || (counts.length === 2 && counts.includes(1))) continue;
        const mask = maskOf(L, T);
        const adv = mask.map((row) => row.map((on) => (on ? rng.uniformIn(-3, 3) : P)));
        const w = effectiveTokenWeights(mask, mode, { normLen: 7 });
        const y = L.map((_, b) => {
          let s = 0;
          for (let t = 0; t < T; t++) if (mask[b][t]) s += Math.abs(adv[b][t]) * w.data[b * T + t];
          return s;
        });
        const ref = sandwich(L, y);
        const r = lengthBiasProbe(adv, mask, { aggMode: mode, normLen: 7 });
        const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-300);
        const label = `${mode} case ${cases}`;
        expect(rel(r.slope, ref.slope), label).toBeLessThanOrEqual(1e-9);
        expect(rel(r.intercept, ref.intercept), label).toBeLessThanOrEqual(1e-9);
        expect(rel(r.slopeSe, ref.se), label).toBeLessThanOrEqual(1e-9);
        expect(Array.from(r.perSeqLength), label).toEqual(L);
        cases++;
      }
    }
  });

  test("identity: [B] advantages give bitwise the same report as their [B, T] expansion", () => {
    fc.assert(
      fc.property(batches, ({ responseMask, advantages, mode }) => {
        const perSeq = advantages.map((row, b) => row[responseMask[b].indexOf(true)]);
        const expanded = responseMask.map((row, b) => row.map((on) => (on ? perSeq[b] : P)));
        expectBitwise(
          lengthBiasProbe(perSeq, responseMask, opts(mode)),
          lengthBiasProbe(expanded, responseMask, opts(mode)),
        );
      }),
      FC_PARAMS,
    );
  });

  test("property: doubling the advantages doubles slope, se, intercept and ci exactly", () => {
    // |2a|·w = 2(|a|·w) exactly (no subnormals: |a| ≥ 1e-3 or 0), compensated sums, centering,
    // products and divisions all commute with ×2, and √(4v) = 2√v: every field doubles bitwise.
    fc.assert(
      fc.property(batches, ({ responseMask, advantages, mode }) => {
        const r = lengthBiasProbe(advantages, responseMask, opts(mode));
        const d = lengthBiasProbe(
          advantages.map((row) => row.map((v) => 2 * v)),
          responseMask,
          opts(mode),
        );
        expectBitwise(
          [d.slope, d.slopeSe, d.intercept, d.ciLow, d.ciHigh],
          [2 * r.slope, 2 * r.slopeSe, 2 * r.intercept, 2 * r.ciLow, 2 * r.ciHigh],
        );
        expectBitwise(d.perSeqWeightSum, r.perSeqWeightSum);
      }),
      FC_PARAMS,
    );
  });

  test("identity: only |A| matters, so flipping signs leaves the report bitwise unchanged", () => {
    fc.assert(
      fc.property(batches, ({ responseMask, advantages, mode }) => {
        expectBitwise(
          lengthBiasProbe(
            advantages.map((row) => row.map((v) => -v)),
            responseMask,
            opts(mode),
          ),
          lengthBiasProbe(advantages, responseMask, opts(mode)),
        );
      }),
      FC_PARAMS,
    );
  });

  test("mask invariance: non-finite junk at padding leaves the report bitwise unchanged", () => {
    // expectMaskInvariant rewrites every padding cell of the [B, T] advantages with 0, 123, NaN,
    // +Inf and −Inf and requires bitwise-identical reports.
    fc.assert(
      fc.property(batches, ({ responseMask, advantages, mode }) => {
        expectMaskInvariant(
          (i: { advantages: number[][]; responseMask: boolean[][] }) =>
            lengthBiasProbe(i.advantages, i.responseMask, opts(mode)),
          { advantages, responseMask },
        );
      }),
      FC_PARAMS,
    );
  });

  test("rejects: degenerate designs in the spec's order (B ≥ 3, constant lengths, leverage one) before normLen", () => {
    const probe = (L: number[], aggMode: Aggregation = "token_sum_norm") =>
      thrown(() =>
        lengthBiasProbe(
          L.map(() => 1),
          maskOf(L),
          { aggMode },
        ),
      );
    // B = 2 (and constant): the row count is checked first.
    const few = probe([2, 2]);
    expect(few).toBeInstanceOf(ShapeError);
    expect([few.code, few.arg]).toEqual(["E_SHAPE", "responseMask"]);
    // Constant lengths, before the missing normLen of token_sum_norm.
    const flat = probe([3, 3, 3]);
    expect(flat).toBeInstanceOf(MaskError);
    expect([flat.code, flat.arg, flat.message]).toEqual([
      "E_MASK",
      "responseMask",
      expect.stringContaining("every sequence has 3 response tokens"),
    ]);
    // Exactly two distinct lengths, one held by a single row: leverage 1.
    for (const L of [
      [1, 1, 2],
      [4, 2, 2, 2, 2],
    ]) {
      const lev = probe(L);
      expect(lev).toBeInstanceOf(MaskError);
      expect([lev.code, lev.arg, lev.message]).toEqual([
        "E_MASK",
        "responseMask",
        expect.stringContaining(`per-sequence lengths [${L.join(", ")}]`),
      ]);
    }
    // Non-degenerate: now the missing normLen is reported.
    const norm = probe([1, 1, 2, 2]);
    expect(norm).toBeInstanceOf(ConfigError);
    expect([norm.code, norm.arg]).toEqual(["E_CONFIG", "normLen"]);
    expect(() =>
      lengthBiasProbe([1, 1, 1, 1], maskOf([1, 1, 2, 2]), opts("token_mean")),
    ).not.toThrow();
  });

  test("rejects: bad masks, mismatched or non-finite advantages, unknown modes and bad normLen", () => {
    const mask = maskOf([1, 2, 3]);
    const cases: [() => unknown, unknown, string, string][] = [
      [
        () => lengthBiasProbe([1, 2, 3], [[1, 2, 0]], opts("token_mean")),
        MaskError,
        "E_MASK",
        "responseMask",
      ],
      [
        () => lengthBiasProbe([1, 2, 3], [[true], [false], [true]], opts("token_mean")),
        MaskError,
        "E_MASK",
        "responseMask",
      ],
      [
        () => lengthBiasProbe([1, 2], mask, opts("token_mean")),
        ShapeError,
        "E_SHAPE",
        "advantages",
      ],
      [
        () =>
          lengthBiasProbe(
            [
              [1, 2],
              [1, 2],
              [1, 2],
            ],
            mask,
            opts("token_mean"),
          ),
        ShapeError,
        "E_SHAPE",
        "advantages",
      ],
      [
        () => lengthBiasProbe([1, Number.NaN, 3], mask, opts("token_mean")),
        NonFiniteError,
        "E_NONFINITE",
        "advantages",
      ],
      [
        () =>
          lengthBiasProbe(
            [
              [1, P, P],
              [1, Number.POSITIVE_INFINITY, P],
              [1, 1, 1],
            ],
            mask,
            opts("token_mean"),
          ),
        NonFiniteError,
        "E_NONFINITE",
        "advantages",
      ],
      [
        () => lengthBiasProbe([1, 2, 3], mask, { aggMode: "token-mean" as Aggregation }),
        UnknownNameError,
        "E_UNKNOWN_NAME",
        "aggMode",
      ],
      [
        () => lengthBiasProbe([1, 2, 3], mask, { aggMode: "token_sum_norm", normLen: 0 }),
        ConfigError,
        "E_CONFIG",
        "normLen",
      ],
      // The mask is validated first: a bad mask wins over bad advantages.
      [() => lengthBiasProbe([1], [[2]], opts("token_mean")), MaskError, "E_MASK", "responseMask"],
    ];
    for (const [f, cls, code, arg] of cases) {
      const e = thrown(f);
      expect(e).toBeInstanceOf(cls as typeof Error);
      expect([e.code, e.arg]).toEqual([code, arg]);
    }
  });
});
