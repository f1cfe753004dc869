/**
 * Enforces docs/io.md#json-files (parser): the strict parser agrees with JSON.parse on every valid
 * document without duplicate keys, and reports — never throws — on anything else.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { lineColumn, parseStrictJson } from "../../src/io/_internal/strictJson.js";

const FC = { seed: 20261130, numRuns: 300 };

describe("parseStrictJson", () => {
  test("property: agrees with JSON.parse on valid json", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (v, pretty) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        const r = parseStrictJson(text);
        expect(r.ok).toBe(true);
        if (r.ok) expect(r.value).toStrictEqual(JSON.parse(text));
      }),
      FC,
    );
  });

  test("property: never throws on arbitrary text", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'{}[]",:0123456789.eE+-tfnrulase \\\n') }),
        (text) => {
          const r = parseStrictJson(text);
          let native = true;
          try {
            JSON.parse(text);
          } catch {
            native = false;
          }
          // Stricter than JSON.parse only through duplicate keys.
          if (!native) expect(r.ok).toBe(false);
          else if (!r.ok) expect(r.reason).toContain("duplicate key");
        },
      ),
      FC,
    );
  });

  test("golden: line and column of an error", () => {
    expect(parseStrictJson('{"a":\n  tru}')).toMatchObject({ ok: false, line: 2, column: 3 });
    expect(lineColumn("ab\ncd", 4)).toEqual({ line: 2, column: 2 });
  });
});
