/**
 * Enforces docs/io.md#json-files: JSON files are read strictly (UTF-8, RFC 8259, no duplicate
 * keys, bounded nesting, size checked first) and every failure is an IoError naming the file,
 * with the line and column of a syntax error.
 */
import { mkdirSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { readJsonFile } from "../../src/io/index.js";
import { expectIoError, useTmpDir, writeFile } from "./_kit.js";

const tmp = useTmpDir();

describe("readJsonFile", () => {
  test("golden: parses a utf-8 file with a byte order mark", () => {
    const path = writeFile(
      tmp("bom.json"),
      '\uFEFF{"a": [1, 2.5e-3, -0], "s": "\\u00e9\\n", "n": null}',
    );
    expect(readJsonFile(path, "test")).toEqual({ a: [1, 0.0025, -0], s: "é\n", n: null });
  });

  test("golden: a key named __proto__ is an own property", () => {
    const v = readJsonFile(
      writeFile(tmp("proto.json"), '{"__proto__": {"x": 1}}'),
      "test",
    ) as Record<string, unknown>;
    expect(Object.hasOwn(v, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  });

  test("rejects: malformed json with its line and column", () => {
    const path = writeFile(tmp("bad.json"), '{\n  "a": [1, 2],\n  "b": [3,, 4]\n}\n');
    const e = expectIoError(() => readJsonFile(path, "readBatch"), "json");
    expect(e.fn).toBe("readBatch");
    expect(e.path).toBe(path);
    expect(e.message).toContain("line 3, column 11");
    expectIoError(() => readJsonFile(writeFile(tmp("nan.json"), "[NaN]"), "test"), "json");
    expectIoError(() => readJsonFile(writeFile(tmp("empty.json"), ""), "test"), "json");
    expectIoError(() => readJsonFile(writeFile(tmp("str.json"), '"abc'), "test"), "json");
  });

  test("rejects: duplicate keys", () => {
    const e = expectIoError(
      () => readJsonFile(writeFile(tmp("dup.json"), '{"a": 1, "a": 2}'), "test"),
      "json",
    );
    expect(e.message).toContain('duplicate key "a"');
  });

  test("rejects: invalid utf-8", () => {
    const path = writeFile(tmp("latin1.json"), Uint8Array.from([0x22, 0xe9, 0x22]));
    expect(expectIoError(() => readJsonFile(path, "test"), "json").message).toContain("UTF-8");
  });

  test("rejects: nesting deeper than 256 levels", () => {
    const path = writeFile(tmp("deep.json"), `${"[".repeat(300)}${"]".repeat(300)}`);
    expect(expectIoError(() => readJsonFile(path, "test"), "json").message).toContain(
      "nesting deeper",
    );
  });

  test("rejects: a missing file and a directory", () => {
    const missing = tmp("missing.json");
    const e = expectIoError(() => readJsonFile(missing, "test"), "path");
    expect(e.message).toContain("ENOENT");
    expect(e.path).toBe(missing);
    const dir = tmp("dir.json");
    mkdirSync(dir);
    expectIoError(() => readJsonFile(dir, "test"), "path");
  });

  test("rejects: a file over options.maxBytes", () => {
    const path = writeFile(tmp("big.json"), `[${"0,".repeat(50)}0]`);
    expectIoError(() => readJsonFile(path, "test", { maxBytes: 10 }), "path");
  });
});
