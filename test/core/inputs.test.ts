/**
 * Enforces docs/conventions.md#inputs: the library takes what people hold — typed arrays, flat
 * buffers through matrix()/mask(), typed rows, 0/1 masks of any numeric type, booleans — and says
 * accurately what it received when it cannot.
 */
import { describe, expect, test } from "vitest";
import { describeInput } from "../../src/core/validate.js";
import { getAlgorithm, MaskError, mask, matrix, policyLoss, ShapeError } from "../../src/index.js";

// A 2 × 3 batch (lengths 3 and 2): the same numbers in every representation below.
const LP = [-0.5, -1.25, -2, -0.75, -1.5, 0];
const OLD = [-0.625, -1, -2.25, -0.5, -1.75, 0];
const MASK = [1, 1, 1, 1, 1, 0];
const ADV = [0.5, -1];
const rows = (flat: readonly number[]) => [flat.slice(0, 3), flat.slice(3)];
const config = getAlgorithm("dapo").loss;
const reference = policyLoss(config, {
  logprobs: rows(LP),
  oldLogprobs: rows(OLD),
  advantages: ADV,
  responseMask: rows(MASK).map((r) => r.map((v) => v === 1)),
});

describe("matrix", () => {
  test("golden: flat float32, float64 and plain data become a float64 matrix", () => {
    // Every value above is a dyadic rational, exact in float32: the float32 path must agree bitwise.
    for (const data of [Float32Array.from(LP), Float64Array.from(LP), LP]) {
      const m = matrix(2, 3, data);
      expect(m.data).toBeInstanceOf(Float64Array);
      expect(Array.from(m.data)).toEqual(LP);
    }
    expect(() => matrix(2, 3, LP.slice(1))).toThrow(ShapeError);
    expect(() => matrix(0, 3, [])).toThrow(ShapeError);
  });
});

describe("mask", () => {
  test("golden: uint8, float64 0/1 and boolean data become a mask", () => {
    for (const data of [Uint8Array.from(MASK), Float64Array.from(MASK), MASK.map((v) => v === 1)]) {
      expect(Array.from(mask(2, 3, data).data)).toEqual(MASK);
    }
    expect(() => mask(2, 3, [1, 1, 1, 1, 0.5, 0])).toThrow(MaskError);
  });
});

describe("policyLoss inputs", () => {
  test("identity: typed arrays, flat buffers and typed rows give bitwise the loss and gradient of nested arrays", () => {
    const variants = [
      {
        logprobs: matrix(2, 3, Float32Array.from(LP)),
        oldLogprobs: matrix(2, 3, Float32Array.from(OLD)),
        advantages: Float32Array.from(ADV),
        responseMask: mask(2, 3, Uint8Array.from(MASK)),
      },
      {
        logprobs: { rows: 2, cols: 3, data: Float32Array.from(LP) },
        oldLogprobs: { rows: 2, cols: 3, data: OLD },
        advantages: ADV,
        responseMask: { rows: 2, cols: 3, data: Float64Array.from(MASK) },
      },
      {
        logprobs: rows(LP).map((r) => Float32Array.from(r)),
        oldLogprobs: rows(OLD).map((r) => Float64Array.from(r)),
        advantages: ADV,
        responseMask: rows(MASK).map((r) => Uint8Array.from(r)),
      },
    ];
    for (const inputs of variants) {
      const r = policyLoss(config, inputs);
      expect(Object.is(r.loss, reference.loss)).toBe(true);
      expect(Array.from(r.gradLogprobs.data)).toEqual(Array.from(reference.gradLogprobs.data));
    }
  });

  test("regression: a flat Float32Array is named as such, not as 'shape object'", () => {
    expect(() =>
      policyLoss(config, {
        logprobs: Float32Array.from(LP) as never,
        oldLogprobs: rows(OLD),
        advantages: ADV,
        responseMask: rows(MASK),
      }),
    ).toThrow(/got a flat Float32Array of length 6 \(give 2-D data as matrix\(rows, cols, data\)/);
  });

  test("regression: a 0/1 Float64Array mask is accepted, not 'must be 2-D [B, T]; got shape [2, 3]'", () => {
    const r = policyLoss(config, {
      logprobs: rows(LP),
      oldLogprobs: rows(OLD),
      advantages: ADV,
      responseMask: { rows: 2, cols: 3, data: Float64Array.from(MASK) },
    });
    expect(Object.is(r.loss, reference.loss)).toBe(true);
  });

  test("regression: snake_case keys suggest the camelCase field instead of 'got shape undefined'", () => {
    let err: unknown;
    try {
      policyLoss(config, {
        logprobs: rows(LP),
        old_logprobs: rows(OLD),
        advantages: ADV,
        response_mask: rows(MASK),
      } as never);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ShapeError);
    expect((err as ShapeError).message).toContain(
      'the snake_case key "old_logprobs" (did you mean "oldLogprobs"?)',
    );
  });
});

describe("describeInput", () => {
  test("golden: every kind of received value is named accurately", () => {
    expect(describeInput(undefined)).toBe("undefined");
    expect(describeInput(null)).toBe("null");
    expect(describeInput([[1, 2, 3]])).toBe("shape [1, 3]");
    expect(describeInput({ rows: 2, cols: 3, data: new Float64Array(5) })).toBe(
      "{rows: 2, cols: 3} with 5 values",
    );
    expect(describeInput(new Int16Array(4))).toMatch(/^a flat Int16Array of length 4 /);
    expect(describeInput("x")).toBe('a string "x"');
    expect(describeInput({ a: 1 })).toBe("an object with keys a");
  });
});
