/** Enforces docs/derivations/aggregation.md#micro-batch-weights (spec §2.4). */
import { describe, expect, test } from "vitest";
import {
  AGGREGATIONS,
  aggregate,
  ConfigError,
  effectiveTokenWeights,
  microbatchTokenWeights,
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
