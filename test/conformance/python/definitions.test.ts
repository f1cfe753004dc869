/**
 * Enforces docs/conformance/drift.md#definitions-and-segments and #the-parser: segments span from
 * the first decorator line to the node's last statement, normalisation strips trailing whitespace
 * only, qualified names reach methods and nested classes, signatures keep Python's binding kinds,
 * and anything CPython would not parse is rejected.
 */
import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import { extractDefinitions } from "../../../src/conformance/python/index.js";
import { freshPythonParser } from "../../../src/conformance/python/parser.js";
import { IoError } from "../../../src/errors.js";

const SOURCE = [
  "import os",
  "",
  "# a comment above the decorators is not part of the segment",
  "@first(",
  "    'multi-line',",
  ")",
  "@second",
  "def decorated(a, b=1):",
  '    """Docstring."""',
  "    return a + b",
  "    # a trailing comment after the last statement is not part of it either",
  "",
  "",
  "class Outer(Base):",
  "    x = 1",
  "",
  "    async def method(self, *, k='a  b') -> None:",
  "        await k",
  "",
  "    class Inner:",
  "        @property",
  "        def prop(self):",
  "            def nested():",
  "                pass",
  "            return nested",
  "",
  "",
  "def twice():",
  "    return 1",
  "",
  "",
  "def twice():",
  "    return 2",
  "",
].join("\n");

describe("extractDefinitions", () => {
  test("golden: a decorated function's segment starts at its first decorator line", async () => {
    const defs = await extractDefinitions(SOURCE);
    const d = defs.get("decorated");
    expect(d).toMatchObject({ kind: "function", startLine: 4, endLine: 10 });
    expect(d?.text.split("\n")[0]).toBe("@first(");
    expect(d?.text.split("\n").at(-1)).toBe("    return a + b");
  });

  test("golden: qualified names reach methods and nested classes but not nested functions", async () => {
    const defs = await extractDefinitions(SOURCE);
    expect([...defs.keys()]).toEqual([
      "decorated",
      "Outer",
      "Outer.method",
      "Outer.Inner",
      "Outer.Inner.prop",
      "twice",
    ]);
    // The whole class is one segment; a method's segment keeps its indentation.
    expect(defs.get("Outer")).toMatchObject({ kind: "class", startLine: 14, endLine: 25 });
    expect(defs.get("Outer.Inner.prop")).toMatchObject({ startLine: 21, endLine: 25 });
    expect(defs.get("Outer.method")?.text).toBe(
      "    async def method(self, *, k='a  b') -> None:\n        await k",
    );
  });

  test("identity: a name defined twice keeps its first definition", async () => {
    const defs = await extractDefinitions(SOURCE);
    expect(defs.get("twice")).toMatchObject({ startLine: 28, endLine: 29 });
  });

  test("identity: the hash is the SHA-256 of the normalised segment", async () => {
    const defs = await extractDefinitions(SOURCE);
    for (const d of defs.values()) {
      expect(d.sha256).toBe(createHash("sha256").update(d.text, "utf8").digest("hex"));
    }
  });

  test("identity: trailing whitespace and CRLF line ends do not change a hash", async () => {
    const before = await extractDefinitions(SOURCE);
    const spaced = SOURCE.split("\n")
      .map((l, i) => (i % 2 === 0 ? `${l} \t` : l))
      .join("\r\n");
    const after = await extractDefinitions(spaced);
    for (const [name, d] of before) expect(after.get(name)?.sha256).toBe(d.sha256);
  });

  test("golden: a docstring-only or comment-only change inside a segment changes its hash", async () => {
    const before = (await extractDefinitions(SOURCE)).get("decorated")?.sha256;
    const doc = await extractDefinitions(SOURCE.replace('"""Docstring."""', '"""Docstring!"""'));
    expect(doc.get("decorated")?.sha256).not.toBe(before);
    const comment = await extractDefinitions(
      SOURCE.replace("    return a + b", "    # added\n    return a + b"),
    );
    expect(comment.get("decorated")?.sha256).not.toBe(before);
    // A comment outside the span (above the decorators) does not.
    const outside = await extractDefinitions(SOURCE.replace("# a comment above", "# edited above"));
    expect(outside.get("decorated")?.sha256).toBe(before);
  });

  test("golden: parameter kinds, defaults and annotations in binding order", async () => {
    const src = [
      "def f(a, /, b: int = 2, *args: str, c, d=None, **kw) -> tuple[",
      "    int,  # first",
      "    int | None,",
      "]:",
      "    pass",
      "def g(x, *, y=lambda q: q + 1, z: 'Tensor | None' = None): pass",
    ].join("\n");
    const defs = await extractDefinitions(src);
    const f = defs.get("f");
    expect(f?.parameters).toEqual([
      { name: "a", kind: "positional_only", default: null, annotation: null },
      { name: "b", kind: "normal", default: "2", annotation: "int" },
      { name: "args", kind: "var_positional", default: null, annotation: "str" },
      { name: "c", kind: "keyword_only", default: null, annotation: null },
      { name: "d", kind: "keyword_only", default: "None", annotation: null },
      { name: "kw", kind: "var_keyword", default: null, annotation: null },
    ]);
    // Layout, comments and the trailing comma of a multi-line annotation are dropped.
    expect(f?.returnAnnotation).toBe("tuple[int, int | None]");
    expect(defs.get("g")?.parameters).toEqual([
      { name: "x", kind: "normal", default: null, annotation: null },
      { name: "y", kind: "keyword_only", default: "lambda q: q + 1", annotation: null },
      { name: "z", kind: "keyword_only", default: "None", annotation: "'Tensor | None'" },
    ]);
    expect(defs.get("g")?.returnAnnotation).toBeNull();
  });

  test("golden: a class has no parameters and no return annotation", async () => {
    const defs = await extractDefinitions("class C:\n    pass\n");
    expect(defs.get("C")).toMatchObject({ parameters: null, returnAnnotation: null });
  });

  test("rejects: a syntax error names its line", async () => {
    const err = await extractDefinitions("x = 1\ndef f(:\n    pass\n", { path: "bad.py" }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IoError);
    expect(err).toMatchObject({ code: "E_IO", arg: "source", path: "bad.py" });
    expect((err as IoError).message).toMatch(/bad\.py must be valid Python; got .* at line 2/);
  });

  test("rejects: layout CPython refuses but tree-sitter recovers from", async () => {
    // An empty block and an unexpected indent parse without ERROR nodes in tree-sitter.
    await expect(extractDefinitions("def f(x):\nreturn x\n")).rejects.toThrow(
      /expected an indented block/,
    );
    await expect(extractDefinitions("x = 1\n  y = 2\n")).rejects.toThrow(/unexpected indent/);
    // Statements after `;` or on the header line are not indentation.
    await expect(extractDefinitions("if x: a = 1; b = 2\nclass C: pass\n")).resolves.toBeDefined();
  });

  test("identity: every source gets a parser on its own runtime instance", async () => {
    // One module heap per source (parser.ts): a shared one was corrupted by hostile sources.
    const [a, b] = await Promise.all([freshPythonParser(), freshPythonParser()]);
    expect(a).not.toBe(b);
    a.delete();
    b.delete();
  });
});
