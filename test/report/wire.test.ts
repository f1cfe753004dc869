/** Enforces docs/cli.md#outputs: the wire form of library results. */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { toWire, writeWireJson } from "../../src/report/wire.js";

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

/** Random documents of the shapes results take: matrices, masks, typed arrays, nested objects. */
const doc = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.double(),
    fc.constantFrom(-0, 0, 5e-324, 1e300, Number.NaN, Number.POSITIVE_INFINITY),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.integer({ min: 0, max: 3 }).chain((rows) =>
      fc.integer({ min: 0, max: 3 }).chain((cols) =>
        fc.oneof(
          fc
            .array(fc.double(), { minLength: rows * cols, maxLength: rows * cols })
            .map((xs) => ({ rows, cols, data: Float64Array.from(xs) })),
          fc
            .array(fc.constantFrom(0, 1), { minLength: rows * cols, maxLength: rows * cols })
            .map((xs) => ({ rows, cols, data: Uint8Array.from(xs) })),
        ),
      ),
    ),
    fc.array(fc.double()).map((xs) => Float64Array.from(xs)),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(
      fc.constantFrom("gradLogprobs", "loss", "klLoss", "x", "aB", "schema_version"),
      tie("value"),
      { maxKeys: 4 },
    ),
  ),
})).value;

describe("writeWireJson", () => {
  test("identity: the pieces join to JSON.stringify(toWire(value), null, 2) on random documents", () => {
    fc.assert(
      fc.property(doc, fc.integer({ min: 1, max: 64 }), (value, chunk) => {
        const pieces: string[] = [];
        writeWireJson(value, (t) => pieces.push(t), 2, chunk);
        const want = JSON.stringify(toWire(value), null, 2) ?? "null";
        expect(pieces.join("")).toBe(want);
        // Each piece but the last holds at least `chunk` characters.
        for (const p of pieces.slice(0, -1)) expect(p.length).toBeGreaterThanOrEqual(chunk);
      }),
      { numRuns: 3000 },
    );
  });

  test("golden: a matrix's pieces stay near the chunk size and add up to its text's length", () => {
    // A result's rows can exceed the longest V8 string (2^29 − 24 characters: a 512×16384 loss
    // result is ~1.6 × 2^30); written in pieces, no string is longer than a piece.
    const rows = 3;
    const cols = 200_000;
    let total = 0;
    let largest = 0;
    writeWireJson(
      { rows, cols, data: new Float64Array(rows * cols) },
      (t) => {
        total += t.length;
        largest = Math.max(largest, t.length);
      },
      2,
      1 << 16,
    );
    // "[" + per row "\n  [" + cols × "\n    0" + (cols − 1) × "," + "\n  ]", "," between rows, "\n]".
    const row = 4 + cols * 6 + (cols - 1) + 4;
    expect(total).toBe(1 + rows * row + (rows - 1) + 2);
    // A piece closes once it reaches the chunk size, so it exceeds it by at most one run of
    // 4096 joined cells ("\n    0" and "," each: 7 characters).
    expect(largest).toBeLessThan((1 << 16) + 4096 * 7 + 8);
    // Rows longer than one run of joined cells (4096) are the same text as JSON.stringify's.
    const m = {
      rows: 2,
      cols: 9000,
      data: Float64Array.from({ length: 18000 }, (_, i) => Math.sin(i) / 7),
    };
    const pieces: string[] = [];
    writeWireJson({ gradLogprobs: m }, (t) => pieces.push(t), 2, 1000);
    expect(pieces.join("")).toBe(JSON.stringify(toWire({ gradLogprobs: m }), null, 2));
  });
});
