/**
 * Issue 9 for src/aggregate: NaN at a response position is E_NONFINITE (not a NaN result), a sum
 * whose partial sums overflow is computed stably, a genuinely overflowing aggregate is
 * E_OVERFLOW, and non-object options are typed errors (docs/conventions.md#numeric-policy).
 */
import { describe, expect, it } from "vitest";
import { aggregate, effectiveTokenWeights, microbatchTokenWeights } from "../../src/index.js";
import { caught } from "../_kit/index.js";

const thrown = caught;

describe("aggregate", () => {
  it("rejects: nan or infinity at a response position with E_NONFINITE", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(thrown(() => aggregate([[1, bad]], [[1, 1]], "token_mean"))).toMatchObject({
        name: "NonFiniteError",
        code: "E_NONFINITE",
        arg: "perToken",
      });
    }
    // Padding may still hold junk.
    expect(aggregate([[1, Number.NaN]], [[1, 0]], "token_mean")).toBe(1);
  });

  it("golden: a sum whose partial sums overflow but whose value is representable is finite and exact", () => {
    // seq_mean_token_sum, B = 1: weights 1. 1.5e308 + 1.5e308 = ∞ in float64, but the exact value
    // 1.5e308 + 1.5e308 − 1.5e308 = 1.5e308 is representable; the scaled pass (×2^-600, exact)
    // recovers it exactly.
    expect(aggregate([[1.5e308, 1.5e308, -1.5e308]], [[1, 1, 1]], "seq_mean_token_sum")).toBe(
      1.5e308,
    );
    // token_sum_norm with normLen 1: the same weights, the same answer.
    expect(
      aggregate([[1.5e308, 1.5e308, -1.5e308]], [[1, 1, 1]], "token_sum_norm", { normLen: 1 }),
    ).toBe(1.5e308);
  });

  it("rejects: an aggregate that exceeds float64 with OverflowError naming value", () => {
    // 1.5e308 + 1.5e308 = 3e308 > 1.797e308: not representable.
    expect(
      thrown(() => aggregate([[1.5e308, 1.5e308]], [[1, 1]], "seq_mean_token_sum")),
    ).toMatchObject({
      name: "OverflowError",
      code: "E_OVERFLOW",
      quantity: "value",
    });
  });

  it("rejects: options, masks and tensors of the wrong kind with typed errors, never a TypeError", () => {
    for (const bad of [null, 3, "x", [1]]) {
      expect(thrown(() => aggregate([[1]], [[1]], "token_mean", bad as never))).toMatchObject({
        name: "ConfigError",
        arg: "options",
      });
      expect(thrown(() => effectiveTokenWeights([[1]], "token_mean", bad as never))).toMatchObject({
        name: "ConfigError",
        arg: "options",
      });
      expect(
        thrown(() => microbatchTokenWeights([[1]], "token_mean", [1], bad as never)),
      ).toMatchObject({ name: "ConfigError", arg: "options" });
    }
    for (const bad of [null, undefined, 3, "x"]) {
      expect(thrown(() => aggregate([[1]], bad as never, "token_mean"))).toMatchObject({
        name: "ShapeError",
      });
      expect(thrown(() => aggregate(bad as never, [[1]], "token_mean"))).toMatchObject({
        name: "ShapeError",
        arg: "perToken",
      });
      expect(thrown(() => effectiveTokenWeights(bad as never, "token_mean"))).toMatchObject({
        name: "ShapeError",
      });
    }
    expect(thrown(() => microbatchTokenWeights([[1]], "token_mean", null as never))).toMatchObject({
      name: "ConfigError",
      arg: "microbatchSizes",
    });
  });
});
