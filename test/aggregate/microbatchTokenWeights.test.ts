/** Enforces docs/derivations/aggregation.md#micro-batch-weights (spec §2.4). */
import { describe, expect, test } from "vitest";
import {
  AGGREGATIONS,
  aggregate,
  ConfigError,
  effectiveTokenWeights,
  MaskError,
  microbatchTokenWeights,
  policyLoss,
  toRows,
} from "../../src/index.js";
import { loadPolgradFixture } from "../_kit/polgradFixtures.js";

/** The explicit accumulation loop: Σ_c scale·aggregate(chunk_c); linear in x, so its gradient w.r.t.
 * x[b, t] is read off by evaluating it on the indicator of (b, t). */
function loopGradient(
  mask: boolean[][],
  mode: (typeof AGGREGATIONS)[number],
  sizes: number[],
  lossScale: "mean" | "sum",
  normLen: number,
): number[][] {
  const T = mask[0]!.length;
  return mask.map((row, b) =>
    row.map((on, t) => {
      if (!on) return 0;
      let row0 = 0;
      let total = 0;
      for (const s of sizes) {
        if (b >= row0 && b < row0 + s) {
          const x = Array.from({ length: s }, (_, i) =>
            Array.from({ length: T }, (_, u) => (i === b - row0 && u === t ? 1 : 0)),
          );
          const value = aggregate(x, mask.slice(row0, row0 + s), mode, { normLen });
          total = lossScale === "mean" ? value / sizes.length : value;
        }
        row0 += s;
      }
      return total;
    }),
  );
}

const ragged = [
  [true, false, false],
  [true, true, true],
  [true, true, false],
  [true, true, true],
];

describe("microbatchTokenWeights", () => {
  test("identity: equals the gradient of an explicit accumulation loop", () => {
    for (const mode of AGGREGATIONS) {
      for (const sizes of [[2, 2], [1, 3], [1, 1, 2], [4]]) {
        for (const lossScale of ["mean", "sum"] as const) {
          const w = toRows(microbatchTokenWeights(ragged, mode, sizes, { lossScale, normLen: 5 }));
          expect(w, `${mode} ${sizes} ${lossScale}`).toEqual(
            loopGradient(ragged, mode, sizes, lossScale, 5),
          );
        }
      }
    }
  });

  test("golden: token_mean chunks of one row on lengths [2, 1] and [1, 3]", () => {
    // Lengths [2, 1], sizes [1, 1]: chunk weights 1/2 and 1/1; mean halves them.
    const m21 = [
      [true, true],
      [true, false],
    ];
    expect(toRows(microbatchTokenWeights(m21, "token_mean", [1, 1]))).toEqual([
      [0.25, 0.25],
      [0.5, 0],
    ]);
    expect(toRows(microbatchTokenWeights(m21, "token_mean", [1, 1], { lossScale: "sum" }))).toEqual(
      [
        [0.5, 0.5],
        [1, 0],
      ],
    );
    // Lengths [1, 3]: (1/1)/2 and (1/3)/2 = 1/6 — not the full batch's 1/4 per token.
    const w = toRows(
      microbatchTokenWeights(
        [
          [true, false, false],
          [true, true, true],
        ],
        "token_mean",
        [1, 1],
      ),
    );
    expect(w[0]).toEqual([0.5, 0, 0]);
    expect(w[1]).toEqual([1 / 3 / 2, 1 / 3 / 2, 1 / 3 / 2]);
  });

  test("identity: equal row counts reproduce the full-batch per-sequence modes bitwise", () => {
    // B_c = B/K: each chunk weight 1/(B_c·L_b) divided by K is 1/(B·L_b)… up to rounding of two
    // divisions; exact here because B_c = 2, K = 2 are powers of two.
    for (const mode of ["seq_mean_token_mean", "seq_mean_token_sum", "token_sum_norm"] as const) {
      expect(toRows(microbatchTokenWeights(ragged, mode, [2, 2], { normLen: 5 }))).toEqual(
        toRows(effectiveTokenWeights(ragged, mode, { normLen: 5 })),
      );
    }
  });

  test("identity: with a global context, equals the gradient of the accumulation loop of policyLoss shards, every mode", () => {
    // Each chunk is a policyLoss call with the same global context (N = 10 tokens, B = 5 rows of
    // which 4 are non-empty); reinforce with A = −1 has
    // ∂L/∂lp = the token weight exactly (g·A with g = −w), so the loop's gradient, ÷K for mean,
    // is the weights. Empty rows (row 2) under count and drop; ℓ from every divisor source.
    const mask = [
      [true, true, false, false],
      [true, false, false, false],
      [false, false, false, false],
      [true, true, true, true],
      [true, true, true, false],
    ];
    const T = 4;
    const loop = (
      mode: (typeof AGGREGATIONS)[number],
      sizes: number[],
      lossScale: "mean" | "sum",
      emptyRows: "count" | "drop",
      from: "fixed" | "padded_width" | "microbatch_max",
      global: { tokens?: number; rows?: number; dpSize?: number } | undefined,
    ): number[][] => {
      const rows: number[][] = [];
      let row0 = 0;
      for (const s of sizes) {
        const m = mask.slice(row0, row0 + s);
        const longest = Math.max(...m.map((r) => r.filter(Boolean).length));
        const normLen = from === "fixed" ? 6 : from === "padded_width" ? T : longest;
        if (longest === 0) {
          for (const r of m) rows.push(r.map(() => 0));
        } else {
          const lp = m.map((r) => r.map(() => -0.5));
          const res = policyLoss(
            {
              ratio: "token",
              surrogate: "reinforce",
              clip: null,
              aggregation: mode,
              normLen: mode === "token_sum_norm" ? normLen : null,
              emptyRows,
            },
            { logprobs: lp, oldLogprobs: lp, advantages: m.map(() => -1), responseMask: m },
            // Absent global fields are the whole step's (this mask's) counts, not the chunk's.
            global === undefined
              ? {}
              : {
                  global: {
                    tokens: global.tokens ?? 10,
                    rows: global.rows ?? (emptyRows === "drop" ? 4 : 5),
                    dpSize: global.dpSize ?? 1,
                  },
                },
          );
          for (const r of toRows(res.gradLogprobs))
            rows.push(r.map((v) => (lossScale === "mean" ? v / sizes.length : v)));
        }
        row0 += s;
      }
      return rows;
    };
    let cases = 0;
    for (const mode of AGGREGATIONS)
      for (const sizes of [[2, 3], [1, 2, 2], [5]])
        for (const lossScale of ["mean", "sum"] as const)
          for (const emptyRows of ["count", "drop"] as const)
            for (const from of ["fixed", "padded_width", "microbatch_max"] as const) {
              if (from !== "fixed" && mode !== "token_sum_norm") continue;
              for (const global of [
                undefined,
                { tokens: 40, rows: 16, dpSize: 4 },
                { dpSize: 2 },
              ]) {
                const got = microbatchTokenWeights(mask, mode, sizes, {
                  lossScale,
                  emptyRows,
                  global: global ?? null,
                  normLenFrom: from,
                  normLen: from === "fixed" ? 6 : null,
                });
                expect(
                  toRows(got),
                  `${mode} ${sizes} ${lossScale} ${emptyRows} ${from} ${JSON.stringify(global)}`,
                ).toEqual(loop(mode, sizes, lossScale, emptyRows, from, global));
                cases++;
              }
            }
    expect(cases).toBe(5 * 3 * 2 * 2 * 3 + 3 * 2 * 2 * 2 * 3);
  });

  test("golden: divisor sources and empty rows on lengths [2, 0, 3] in chunks [2, 1]", () => {
    const mask = [
      [true, true, false, false],
      [false, false, false, false],
      [true, true, true, false],
    ];
    const tsn = (o: Parameters<typeof microbatchTokenWeights>[3]) =>
      toRows(microbatchTokenWeights(mask, "token_sum_norm", [2, 1], o));
    // padded width ℓ = T = 4, empty row counted, summed: 1/(B_c·ℓ) = 1/(2·4) and 1/(1·4).
    expect(tsn({ normLenFrom: "padded_width", emptyRows: "count", lossScale: "sum" })).toEqual([
      [1 / 8, 1 / 8, 0, 0],
      [0, 0, 0, 0],
      [1 / 4, 1 / 4, 1 / 4, 0],
    ]);
    // the chunk's longest row, empty row dropped, averaged over K = 2: 1/(1·2)/2 and 1/(1·3)/2.
    expect(tsn({ normLenFrom: "microbatch_max", emptyRows: "drop" })).toEqual([
      [1 / 4, 1 / 4, 0, 0],
      [0, 0, 0, 0],
      [1 / 6, 1 / 6, 1 / 6, 0],
    ]);
    // A global context {N_g 10, B_g 6, D 2}, summed: seq_mean_token_mean D/(B_g·L_b) = 2/12, 2/18;
    // token_mean D/N_g = 2/10 for every token.
    const global = { tokens: 10, rows: 6, dpSize: 2 };
    expect(
      toRows(
        microbatchTokenWeights(mask, "seq_mean_token_mean", [2, 1], {
          global,
          emptyRows: "count",
          lossScale: "sum",
        }),
      ),
    ).toEqual([
      [2 / 12, 2 / 12, 0, 0],
      [0, 0, 0, 0],
      [2 / 18, 2 / 18, 2 / 18, 0],
    ]);
    expect(
      toRows(
        microbatchTokenWeights(mask, "token_mean", [2, 1], {
          global,
          emptyRows: "drop",
          lossScale: "sum",
        }),
      )[2],
    ).toEqual([2 / 10, 2 / 10, 2 / 10, 0]);
    // Rejected by default, as before.
    expect(() => microbatchTokenWeights(mask, "token_mean", [2, 1])).toThrow(MaskError);
  });

  test("rejects: a divisor source outside token_sum_norm, normLen beside one, a global count below the mask's and an unknown policy", () => {
    const m = [
      [true, true],
      [true, false],
    ];
    const msg = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        return `${(e as Error).constructor.name}: ${(e as Error).message}`;
      }
      return "no error";
    };
    expect(
      msg(() => microbatchTokenWeights(m, "token_mean", [1, 1], { normLenFrom: "padded_width" })),
    ).toBe(
      'ConfigError: microbatchTokenWeights: normLenFrom must be "fixed" unless the mode is "token_sum_norm" (the only mode with a divisor ℓ); got "padded_width" with mode "token_mean"',
    );
    expect(
      msg(() =>
        microbatchTokenWeights(m, "token_sum_norm", [1, 1], {
          normLenFrom: "microbatch_max",
          normLen: 4,
        }),
      ),
    ).toBe(
      'ConfigError: microbatchTokenWeights: normLen must be absent when normLenFrom is "microbatch_max"; got 4',
    );
    expect(
      msg(() => microbatchTokenWeights(m, "token_mean", [1, 1], { global: { tokens: 2 } })),
    ).toMatch(
      /^ConfigError: microbatchTokenWeights: options\.global\.tokens must be an integer >= 3/,
    );
    expect(
      msg(() => microbatchTokenWeights(m, "token_mean", [1, 1], { emptyRows: "keep" as "count" })),
    ).toMatch(/emptyRows/);
  });

  test("rejects: sizes below one, sizes not summing to B and an unknown loss scale", () => {
    expect(() => microbatchTokenWeights(ragged, "token_mean", [0, 4])).toThrow(ConfigError);
    expect(() => microbatchTokenWeights(ragged, "token_mean", [2, 1])).toThrow(ConfigError);
    expect(() =>
      microbatchTokenWeights(ragged, "token_mean", [2, 2], { lossScale: "avg" as "mean" }),
    ).toThrow(ConfigError);
  });

  test("conformance: matches polgrad 0.2.0 on the recorded micro-batch weights", () => {
    const f = loadPolgradFixture<{
      cases: {
        name: string;
        function: string;
        args: {
          response_mask: boolean[][];
          mode: "token_mean";
          microbatch_sizes: number[];
          norm_len: number | null;
          loss_scale: "mean" | "sum";
        };
        outputs: { weights: number[][] };
      }[];
    }>("advantages.json");
    const cases = f.cases.filter((c) => c.function === "microbatch_token_weights");
    expect(cases.length).toBe(64);
    for (const c of cases) {
      const w = microbatchTokenWeights(c.args.response_mask, c.args.mode, c.args.microbatch_sizes, {
        normLen: c.args.norm_len,
        lossScale: c.args.loss_scale,
      });
      const e = c.outputs.weights.flat();
      w.data.forEach((v, i) =>
        expect(Math.abs(v - e[i]!), c.name).toBeLessThanOrEqual(1e-15 * Math.abs(e[i]!)),
      );
    }
  });
});
