/** Enforces docs/derivations/aggregation.md#effective-token-weights (spec §2.2). */
import { describe, expect, test } from "vitest";
import {
  AGGREGATIONS,
  ConfigError,
  effectiveTokenWeights,
  MaskError,
  toRows,
  UnknownNameError,
} from "../../src/index.js";
import { loadPolgradFixture } from "../_kit/polgradFixtures.js";

const m21 = [
  [true, true],
  [true, false],
];

describe("effectiveTokenWeights", () => {
  test("golden: weights of the five modes on lengths [2, 1]", () => {
    // B = 2, L = [2, 1], N = 3. token_mean m/3; seq_mean_token_mean m/(2·L_b) = [1/4, 1/4], [1/2];
    // seq_mean_token_sum m/2; token_sum_norm (ℓ = 4) m/(2·4) = 1/8; token_sum m.
    expect(toRows(effectiveTokenWeights(m21, "token_sum"))).toEqual([
      [1, 1],
      [1, 0],
    ]);
    expect(toRows(effectiveTokenWeights(m21, "token_mean"))).toEqual([
      [1 / 3, 1 / 3],
      [1 / 3, 0],
    ]);
    expect(toRows(effectiveTokenWeights(m21, "seq_mean_token_mean"))).toEqual([
      [0.25, 0.25],
      [0.5, 0],
    ]);
    expect(toRows(effectiveTokenWeights(m21, "seq_mean_token_sum"))).toEqual([
      [0.5, 0.5],
      [0.5, 0],
    ]);
    expect(toRows(effectiveTokenWeights(m21, "token_sum_norm", { normLen: 4 }))).toEqual([
      [0.125, 0.125],
      [0.125, 0],
    ]);
  });

  test("property: the mean modes sum to one and padding weighs zero", () => {
    const m = [
      [true, true, true, false],
      [true, false, false, false],
      [true, true, false, false],
    ];
    for (const mode of ["token_mean", "seq_mean_token_mean"] as const) {
      const w = effectiveTokenWeights(m, mode).data;
      expect(w.reduce((a, x) => a + x, 0)).toBeCloseTo(1, 15);
      expect([w[3], w[5], w[6], w[7], w[10], w[11]]).toEqual([0, 0, 0, 0, 0, 0]);
    }
  });

  test("identity: normLen is ignored by the modes that do not use it", () => {
    for (const mode of AGGREGATIONS.filter((a) => a !== "token_sum_norm")) {
      expect(toRows(effectiveTokenWeights(m21, mode, { normLen: 99 }))).toEqual(
        toRows(effectiveTokenWeights(m21, mode)),
      );
    }
  });

  test("rejects: token_sum_norm without a positive integer normLen, bad masks and unknown modes", () => {
    expect(() => effectiveTokenWeights(m21, "token_sum_norm")).toThrow(ConfigError);
    expect(() => effectiveTokenWeights(m21, "token_sum_norm", { normLen: 0 })).toThrow(ConfigError);
    expect(() => effectiveTokenWeights(m21, "token_sum_norm", { normLen: 2.5 })).toThrow(
      ConfigError,
    );
    expect(() => effectiveTokenWeights([[true], [false]], "token_mean")).toThrow(MaskError);
    expect(() => effectiveTokenWeights([[1, 2]], "token_mean")).toThrow(MaskError);
    const err = (() => {
      try {
        effectiveTokenWeights(m21, "token-mean" as "token_mean");
      } catch (e) {
        return e as UnknownNameError;
      }
      throw new Error("no error");
    })();
    expect(err).toBeInstanceOf(UnknownNameError);
    expect(err.suggestions[0]).toBe("token_mean");
  });

  test("conformance: matches polgrad 0.2.0 bitwise on the recorded weights", () => {
    const f = loadPolgradFixture<{
      cases: {
        name: string;
        function: string;
        args: { response_mask: boolean[][]; mode: "token_mean"; norm_len: number | null };
        outputs: { weights: number[][] };
      }[];
    }>("advantages.json");
    const cases = f.cases.filter((c) => c.function === "effective_token_weights");
    expect(cases.length).toBe(8);
    for (const c of cases) {
      expect(
        toRows(
          effectiveTokenWeights(c.args.response_mask, c.args.mode, { normLen: c.args.norm_len }),
        ),
        c.name,
      ).toEqual(c.outputs.weights);
    }
  });
});
