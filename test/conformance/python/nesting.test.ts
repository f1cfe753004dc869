/**
 * Enforces docs/conformance/drift.md#the-parser (nesting limits): a source nested past CPython's
 * tokenizer limits is rejected before tree-sitter sees it, with a typed error and no WASM runtime
 * fault; the limits are CPython's own, cross-checked live against python3 when it is installed.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, test } from "vitest";
import { extractDefinitions } from "../../../src/conformance/python/index.js";
import {
  MAX_BRACKET_DEPTH,
  MAX_INDENT_LEVELS,
  pythonNestingViolation,
} from "../../../src/conformance/python/nesting.js";
import { IoError } from "../../../src/errors.js";

/** k nested `if x:` blocks with `pass` at indentation level k. */
function nestedIfs(k: number): string {
  let s = "";
  for (let i = 0; i < k; i++) s += `${" ".repeat(i)}if x:\n`;
  return `${s}${" ".repeat(k)}pass\n`;
}

/** An assignment of 1 inside k nested parentheses. */
function nestedParens(k: number): string {
  return `x = ${"(".repeat(k)}1${")".repeat(k)}\n`;
}

const python3 = spawnSync("python3", ["--version"], { encoding: "utf8" });
const hasPython = python3.status === 0;
if (!hasPython) console.log("skipping the live CPython cross-check: python3 is not installed");

/** Whether CPython's compile() accepts `src` (the live cross-check). */
function cpythonAccepts(src: string): boolean {
  const r = spawnSync("python3", ["-c", "import sys; compile(sys.stdin.read(), 's', 'exec')"], {
    input: src,
    encoding: "utf8",
  });
  return r.status === 0;
}

describe("pythonNestingViolation", () => {
  test("golden: 99 indentation levels and 200 nested brackets pass, 100 and 201 do not", () => {
    // Recorded with CPython 3.11.7: compile() of nestedIfs(99) succeeds and of nestedIfs(100)
    // raises "IndentationError: too many levels of indentation"; nestedParens(200) compiles and
    // nestedParens(201) raises "SyntaxError: too many nested parentheses".
    expect(MAX_INDENT_LEVELS).toBe(99);
    expect(MAX_BRACKET_DEPTH).toBe(200);
    expect(pythonNestingViolation(nestedIfs(99))).toBeNull();
    expect(pythonNestingViolation(nestedIfs(100))).toEqual({
      what: "more than 99 levels of indentation",
      line: 101,
    });
    expect(pythonNestingViolation(nestedParens(200))).toBeNull();
    expect(pythonNestingViolation(nestedParens(201))?.what).toBe("more than 200 nested brackets");
  });

  test("golden: brackets and indentation inside strings, comments and continuation lines do not count", () => {
    const deep = "(".repeat(300);
    const src = [
      `a = "${deep}"`,
      `b = '${deep}'`,
      `c = """${deep}`,
      `${" ".repeat(200)}still the string"""`,
      `# ${deep}`,
      "d = (1,",
      `${" ".repeat(200)}2)`,
      "e = 1 + \\",
      `${" ".repeat(200)}2`,
      "",
    ].join("\n");
    expect(pythonNestingViolation(src)).toBeNull();
  });

  test.skipIf(!hasPython)(
    "conformance: agrees with the installed CPython at both edges of both limits",
    () => {
      for (const src of [nestedIfs(99), nestedIfs(100), nestedParens(200), nestedParens(201)]) {
        expect(pythonNestingViolation(src) === null).toBe(cpythonAccepts(src));
      }
    },
  );
});

describe("extractDefinitions", () => {
  test("regression: a source nested 1349 levels deep is an io error, not a wasm runtime fault", async () => {
    // The fuzzer's input 84 (seed 1) nests `if x:` 1349 deep; tree-sitter's WASM runtime answered
    // "RuntimeError: memory access out of bounds" and was left unusable for later sources.
    const err = await extractDefinitions(nestedIfs(1349), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IoError);
    expect((err as IoError).message).toContain("more than 99 levels of indentation at line 101");
    const ok = await extractDefinitions("def f(a):\n    return a\n", {});
    expect([...ok.keys()]).toEqual(["f"]);
  });
});

describe("extractDefinitions on an unterminated string", () => {
  test("regression: an unterminated triple-quoted string is an io error before tree-sitter (fuzz input 1396)", async () => {
    // The campaign's input 1396 (seed 1, after the npy/npz/pt targets were added): a docstring
    // opened and never closed over 1 MB of `if x:` lines indented one more space each; tree-sitter's
    // error recovery did not end in minutes. CPython rejects it ("unterminated triple-quoted
    // string literal"); so do we, before parsing, in milliseconds.
    const body = Array.from({ length: 30 }, (_, k) => `${" ".repeat(k)}if x:`).join("\n");
    const src = `"""A docstring never closed.\n${body}\n`;
    expect(pythonNestingViolation(src)).toEqual({
      what: "an unterminated triple-quoted string (opened at line 1)",
      line: 1,
    });
    if (hasPython) expect(cpythonAccepts(src)).toBe(false);
    const closed = `${src}"""\n`;
    expect(pythonNestingViolation(closed)).toBeNull();
    if (hasPython) expect(cpythonAccepts(closed)).toBe(true);
    const err = await extractDefinitions(src, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IoError);
    expect((err as IoError).message).toContain("an unterminated triple-quoted string");
    // Inside a string, lines indented past the parser's bound count too (error recovery may lex
    // them as code): 201 increasing levels inside a docstring are refused.
    const deep = `"""${Array.from({ length: 202 }, (_, k) => `${" ".repeat(k)}x`).join("\n")}"""\n`;
    expect(pythonNestingViolation(deep)?.what).toMatch(
      /more than 200 levels of indentation over physical lines/,
    );
  });
});

describe("extractDefinitions after a hostile source", () => {
  test("regression: 1400 blocks nested inside a bracket are refused, and a valid source still extracts its definitions", async () => {
    // Fuzzer input 640 (seed 1): `if x:` lines 1,400 deep spliced into a parameter list. Inside
    // brackets CPython's indentation rule does not apply, but tree-sitter-python's scanner pushes
    // every level during error recovery; the runtime was left corrupted, and afterwards a valid
    // three-definition source extracted no definition at all, without any error.
    const hostile = `def f(\n    a,${nestedIfs(1400)}):\n    pass\n`;
    const err = await extractDefinitions(hostile, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IoError);
    expect((err as IoError).message).toContain(
      "more than 200 levels of indentation over physical lines",
    );
    const valid =
      "def a():\n    pass\n\n\ndef b():\n    pass\n\n\nclass C:\n    def m(self):\n        pass\n";
    expect([...(await extractDefinitions(valid, {})).keys()]).toEqual(["a", "b", "C", "C.m"]);
  });
});
