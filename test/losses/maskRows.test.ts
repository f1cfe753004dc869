/**
 * Enforces docs/performance.md#fields (the mask four bytes at a time): the plan's row pass reads
 * a 4-byte-aligned mask with T a multiple of 4 by 32-bit words, any other mask byte by byte, and
 * the two agree: the same loss and gradient bitwise for the same 0/1 values (rows empty, full,
 * with holes), and a value other than 0/1 refused at its flat index either way.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MaskError } from "../../src/errors.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { FC_PARAMS } from "../_kit/index.js";

const config = {
  ratio: "token" as const,
  surrogate: "pg_clip" as const,
  clip: { epsLow: 0.2, epsHigh: 0.28, ratioCap: null },
  aggregation: "seq_mean_token_mean" as const,
  emptyRows: "count" as const,
};

/** `values` as a mask whose data starts `offset` bytes into its buffer. */
function maskAt(values: number[], B: number, T: number, offset: number) {
  const data = new Uint8Array(new ArrayBuffer(values.length + 8), offset, values.length);
  data.set(values);
  return { rows: B, cols: T, data };
}

function inputs(B: number, T: number, responseMask: ReturnType<typeof maskAt>) {
  const n = B * T;
  const old = Float64Array.from({ length: n }, (_, i) => -1 - ((i * 7) % 5) / 10);
  const lp = Float64Array.from(
    { length: n },
    (_, i) => (old[i] as number) + (((i * 3) % 7) - 3) / 20,
  );
  return {
    logprobs: { rows: B, cols: T, data: lp },
    oldLogprobs: { rows: B, cols: T, data: old },
    advantages: Float64Array.from({ length: B }, (_, b) => (b % 3) - 1 + 0.25),
    responseMask,
  };
}

describe("the mask's row pass", () => {
  it("property: a word-aligned mask (T a multiple of 4) gives the bits of the same values read byte by byte (offset 1)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 1 }), { minLength: 5 * 24, maxLength: 5 * 24 }),
        (B, quads, bits) => {
          const T = 4 * quads;
          const values = bits.slice(0, B * T);
          const words = policyLoss(config, inputs(B, T, maskAt(values, B, T, 0)));
          const bytes = policyLoss(config, inputs(B, T, maskAt(values, B, T, 1)));
          expect(Object.is(words.loss, bytes.loss)).toBe(true);
          expect(Array.from(words.gradLogprobs.data)).toEqual(Array.from(bytes.gradLogprobs.data));
        },
      ),
      FC_PARAMS,
    );
  });

  it("rejects: a value other than 0 or 1 at any byte of a word, aligned or not, by its flat index", () => {
    for (const offset of [0, 1])
      for (const at of [0, 1, 2, 3, 5, 7])
        for (const bad of [2, 128, 255]) {
          const values = [1, 1, 0, 1, 1, 0, 1, 1];
          values[at] = bad;
          const call = () => policyLoss(config, inputs(2, 4, maskAt(values, 2, 4, offset)));
          expect(call).toThrow(MaskError);
          expect(call).toThrow(`responseMask must be 0/1 valued; got ${bad} at flat index ${at}`);
        }
  });
});
