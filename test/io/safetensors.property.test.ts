/**
 * Enforces docs/io.md#safetensors (error behaviour): whatever the bytes, the reader either returns
 * tensors or throws an IoError — random byte mutations and truncations of a valid file, and random
 * JSON headers, never surface another error type (seeded fast-check runs).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { IoError } from "../../src/errors.js";
import { encodeSafetensors, parseSafetensors, readSafetensors } from "../../src/io/index.js";
import { stBytes, useTmpDir, writeFile } from "./_kit.js";

const FC = { seed: 20261130, numRuns: 300 };
const tmp = useTmpDir();

const VALID = encodeSafetensors(
  {
    logprobs: { dtype: "F32", shape: [2, 3], data: [-0.5, -1, -2, -0.25, 0, -3] },
    response_mask: { dtype: "BOOL", shape: [2, 3], data: [1, 1, 0, 1, 0, 0] },
    h: { dtype: "BF16", shape: [2], data: [1, -2] },
    k: { dtype: "I64", shape: [1], data: [7] },
  },
  { source: "property" },
);

/** Run `read`; pass if it returns or throws an IoError with code E_IO, fail on anything else. */
function parsesOrIoError(read: () => unknown): void {
  try {
    read();
  } catch (e) {
    if (!(e instanceof IoError) || e.code !== "E_IO") {
      throw new Error(
        `expected an IoError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`,
      );
    }
  }
}

const mutations = fc.record({
  edits: fc.array(
    fc.record({ at: fc.nat({ max: VALID.length - 1 }), byte: fc.integer({ min: 0, max: 255 }) }),
    {
      maxLength: 6,
    },
  ),
  keep: fc.option(fc.nat({ max: VALID.length }), { nil: undefined }),
});

describe("parseSafetensors", () => {
  test("property: mutated or truncated files parse or throw IoError", () => {
    let n = 0;
    fc.assert(
      fc.property(mutations, ({ edits, keep }) => {
        const bytes = VALID.slice(0, keep ?? VALID.length);
        for (const { at, byte } of edits) if (at < bytes.length) bytes[at] = byte;
        parsesOrIoError(() => parseSafetensors(bytes));
        parsesOrIoError(() => readSafetensors(writeFile(tmp(`m${n++ % 8}.safetensors`), bytes)));
      }),
      FC,
    );
  });

  test("property: random json headers parse or throw IoError", () => {
    const entry = fc.record(
      {
        dtype: fc.constantFrom("F64", "F32", "F16", "BF16", "BOOL", "U8", "I64", "I32", "X"),
        shape: fc.array(fc.integer({ min: -1, max: 4 }), { maxLength: 3 }),
        data_offsets: fc.array(fc.integer({ min: -1, max: 40 }), { minLength: 1, maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    const header = fc.dictionary(
      fc.string({ maxLength: 4 }),
      fc.oneof(entry, fc.jsonValue({ maxDepth: 2 })),
      {
        maxKeys: 4,
      },
    );
    fc.assert(
      fc.property(header, fc.uint8Array({ maxLength: 40 }), (h, body) => {
        parsesOrIoError(() => parseSafetensors(stBytes(h, body)));
      }),
      FC,
    );
  });

  test("identity: the unmutated file parses", () => {
    const set = parseSafetensors(VALID);
    expect([...set.tensors.keys()]).toEqual(["logprobs", "response_mask", "h", "k"]);
  });
});
