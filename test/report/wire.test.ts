/** Enforces docs/cli.md#outputs: the wire form of library results. */
import { describe, expect, test } from "vitest";
import { toWire } from "../../src/report/wire.js";

describe("toWire", () => {
  test("golden: matrices become rows and keys snake_case", () => {
    const value = {
      gradLogprobs: { rows: 1, cols: 2, data: new Float64Array([0.1, -0]) },
      clippedHigh: { rows: 1, cols: 2, data: new Uint8Array([1, 0]) },
      gradMass: new Float64Array([1.5]),
      klLoss: null,
      nested: { normLen: 8, isCorrection: undefined },
    };
    expect(toWire(value)).toEqual({
      grad_logprobs: [[0.1, -0]],
      clipped_high: [[true, false]],
      grad_mass: [1.5],
      kl_loss: null,
      nested: { norm_len: 8 },
    });
  });

  test("golden: non-finite numbers become strings, never null", () => {
    expect(toWire([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])).toEqual([
      "NaN",
      "Infinity",
      "-Infinity",
    ]);
  });
});
