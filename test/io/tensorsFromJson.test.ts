/**
 * Enforces docs/io.md#json-batches: nested arrays become row-major tensors (numbers → F64,
 * booleans → BOOL), the NaN/Infinity strings stand for non-finite numbers, and ragged or mistyped
 * arrays are IoErrors naming the tensor and the row.
 */
import { describe, expect, test } from "vitest";
import { tensorsFromJson } from "../../src/io/index.js";
import { expectIoError } from "./_kit.js";

describe("tensorsFromJson", () => {
  test("golden: nan and infinity strings become non-finite numbers", () => {
    const set = tensorsFromJson(
      {
        x: [
          ["NaN", "Infinity", "-Infinity"],
          ["nan", "INF", "-inf"],
          ["+Infinity", "-NaN", 1.5],
        ],
      },
      "doc.json",
    );
    const x = set.tensors.get("x");
    expect(x?.dtype).toBe("F64");
    expect(x?.shape).toEqual([3, 3]);
    const inf = Number.POSITIVE_INFINITY;
    expect(Array.from(x?.data ?? [])).toEqual([
      Number.NaN,
      inf,
      -inf,
      Number.NaN,
      inf,
      -inf,
      inf,
      Number.NaN,
      1.5,
    ]);
  });

  test("golden: booleans become a bool tensor and numbers an f64 tensor", () => {
    const set = tensorsFromJson(
      {
        m: [
          [true, false],
          [false, true],
        ],
        a: [0.5, -1],
        e: [],
      },
      "doc.json",
    );
    expect(set.format).toBe("json");
    expect(set.tensors.get("m")).toEqual({
      dtype: "BOOL",
      shape: [2, 2],
      data: Uint8Array.from([1, 0, 0, 1]),
    });
    expect(set.tensors.get("a")).toEqual({
      dtype: "F64",
      shape: [2],
      data: Float64Array.from([0.5, -1]),
    });
    expect(set.tensors.get("e")).toEqual({ dtype: "F64", shape: [0], data: new Float64Array(0) });
    expect([...set.tensors.keys()]).toEqual(["m", "a", "e"]);
  });

  test("golden: a __metadata__ object of strings is kept apart", () => {
    const set = tensorsFromJson({ __metadata__: { seed: "7" }, a: [1] }, "doc.json");
    expect(set.metadata).toEqual({ seed: "7" });
    expect([...set.tensors.keys()]).toEqual(["a"]);
  });

  test("rejects: a ragged row naming the tensor and row", () => {
    const e = expectIoError(
      () =>
        tensorsFromJson(
          {
            logprobs: [
              [1, 2, 3],
              [4, 5, 6],
              [7, 8],
            ],
          },
          "b.json",
        ),
      "logprobs",
    );
    expect(e.message).toContain("row 2 of length 2");
    expect(e.path).toBe("b.json");
    expectIoError(() => tensorsFromJson({ logprobs: [[1, 2], 3] }, "b.json"), "logprobs");
    expectIoError(() => tensorsFromJson({ logprobs: [1, [2]] }, "b.json"), "logprobs");
    expectIoError(() => tensorsFromJson({ x: [[[1], [2, 3]]] }, "b.json"), "x");
  });

  test("rejects: mixed booleans and numbers", () => {
    const e = expectIoError(
      () => tensorsFromJson({ response_mask: [[true, 0]] }, "b.json"),
      "response_mask",
    );
    expect(e.message).toContain("all numbers or all booleans");
  });

  test("rejects: other strings, nulls and non-array tensors", () => {
    expectIoError(() => tensorsFromJson({ x: [["1.5"]] }, "b.json"), "x");
    expectIoError(() => tensorsFromJson({ x: [["Infinit"]] }, "b.json"), "x");
    expectIoError(() => tensorsFromJson({ x: [null] }, "b.json"), "x");
    expectIoError(() => tensorsFromJson({ x: 3 }, "b.json"), "x");
    expectIoError(() => tensorsFromJson({ __metadata__: { a: 1 } }, "b.json"), "__metadata__");
  });

  test("rejects: a document that is not an object", () => {
    expectIoError(() => tensorsFromJson([[1, 2]], "b.json"), "json");
    expectIoError(() => tensorsFromJson(null, "b.json"), "json");
  });
});
