/** Enforces docs/conventions.md#errors: one message format per error class, pinned once. */
import { describe, expect, test } from "vitest";
import { aggregate, effectiveTokenWeights, klLoss, policyLoss, valueLoss } from "../src/index.js";

function thrown(f: () => unknown): {
  name: string;
  code: string;
  arg: string | undefined;
  message: string;
} {
  try {
    f();
  } catch (e) {
    const err = e as { name: string; code: string; arg: string | undefined; message: string };
    return { name: err.name, code: err.code, arg: err.arg, message: err.message };
  }
  throw new Error("expected an error");
}

const m = [[true, true]];

describe("errors", () => {
  test("golden: one message per error class", () => {
    expect(thrown(() => aggregate([1, 2] as unknown as number[][], m, "token_mean"))).toEqual({
      name: "ShapeError",
      code: "E_SHAPE",
      arg: "perToken",
      message: "aggregate: perToken must be 2-D [B, T]; got shape [2]",
    });
    expect(
      thrown(() =>
        effectiveTokenWeights(
          [
            [true, false],
            [false, false],
          ],
          "token_mean",
        ),
      ),
    ).toEqual({
      name: "MaskError",
      code: "E_MASK",
      arg: "responseMask",
      message:
        "effectiveTokenWeights: responseMask must be non-empty in every row (at least one response token); got zero response tokens in rows [1]",
    });
    expect(
      thrown(() => klLoss([[Number.NaN, 1]], [[0, 0]], "k1", "token_mean", { responseMask: m })),
    ).toEqual({
      name: "NonFiniteError",
      code: "E_NONFINITE",
      arg: "logprobs",
      message: "klLoss: logprobs must be finite at response positions; got NaN at (0, 0)",
    });
    expect(
      thrown(() =>
        valueLoss([[1, 1]], [[1, 1]], [[1, 1]], m, { clipEps: 0, aggregation: "token_mean" }),
      ),
    ).toEqual({
      name: "ConfigError",
      code: "E_CONFIG",
      arg: "clipEps",
      message: "valueLoss: clipEps must be a positive finite number or null; got 0",
    });
    expect(
      thrown(() =>
        policyLoss(
          { ratio: "token", surrogate: "pg_clp" as "pg", clip: null, aggregation: "token_mean" },
          { logprobs: [[0]], oldLogprobs: [[0]], advantages: [1], responseMask: [[true]] },
        ),
      ),
    ).toEqual({
      name: "UnknownNameError",
      code: "E_UNKNOWN_NAME",
      arg: "config.surrogate",
      message:
        'policyLoss: config.surrogate must be one of "pg_clip", "pg", "reinforce", "cispo", "sapo", "dro", "dppo", "vespo", "ipo"; got "pg_clp" (did you mean "pg_clip"?)',
    });
  });
});
