/** Enforces docs/io.md#batches for partial batches (the input of diagnose). */
import { describe, expect, test } from "vitest";
import { IoError, tensorsFromJson } from "../../src/index.js";
import { toPartialBatch } from "../../src/io/batch.js";

describe("toPartialBatch", () => {
  test("golden: any subset of tensors with a mask is accepted", () => {
    const set = tensorsFromJson(
      {
        response_mask: [[true, false]],
        old_logprobs: [[-1, "NaN"]],
        rollout_logprobs: [[-1.5, 0]],
      },
      "mem.json",
    );
    const b = toPartialBatch(set);
    expect(b.logprobs).toBeUndefined();
    expect(Array.from(b.oldLogprobs!.data)).toEqual([-1, Number.NaN]);
    expect(Array.from(b.responseMask.data)).toEqual([1, 0]);
  });

  test("rejects: no mask, a misshapen stream and an unknown name", () => {
    expect(() => toPartialBatch(tensorsFromJson({ logprobs: [[-1]] }, "a.json"))).toThrow(IoError);
    expect(() =>
      toPartialBatch(tensorsFromJson({ response_mask: [[1, 1]], logprobs: [[-1]] }, "b.json")),
    ).toThrow(IoError);
    expect(() =>
      toPartialBatch(tensorsFromJson({ response_mask: [[1]], entropie: [[1]] }, "c.json"), {
        strict: true,
      }),
    ).toThrow(/did you mean "entropies"/);
    // Without strict the unknown name is set aside, and listed.
    const lax = toPartialBatch(
      tensorsFromJson({ response_mask: [[1]], entropie: [[1]] }, "c.json"),
    );
    expect(lax.source.names.ignored).toEqual(["entropie"]);
  });
});
