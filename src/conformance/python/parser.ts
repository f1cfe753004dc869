/**
 * The Python parser behind definition extraction: tree-sitter's Python grammar (the
 * `tree-sitter-python` 0.25.0 WASM build, shipped inside `@vscode/tree-sitter-wasm` together with
 * the web-tree-sitter runtime). No native build, no network: the runtime and the one grammar are
 * vendored into the package at build time (vendor/tree-sitter/, with their licence and SHA-256s).
 *
 * Every source is parsed in a fresh instance of the WASM runtime (about 25 ms). The fuzzer found
 * that tree-sitter's module heap is not isolated between parses: parsing one small source with a
 * syntax error left it corrupted, so that a later, unrelated parse faulted ("memory access out of
 * bounds") or, after another hostile source, silently extracted no definitions from valid Python.
 * A new Parser on the same module does not help; only a new module does (docs/conformance/drift.md#the-parser).
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { mustBe, safeText } from "../../core/message.js";
import { IoError, PolgradError } from "../../errors.js";
import { MAX_BRACKET_DEPTH, MAX_INDENT_LEVELS, pythonNestingViolation } from "./nesting.js";

/** The subset of a tree-sitter syntax node that the extractor reads. */
export interface SyntaxNode {
  readonly type: string;
  readonly text: string;
  readonly isNamed: boolean;
  readonly isMissing: boolean;
  readonly hasError: boolean;
  readonly startIndex: number;
  readonly endIndex: number;
  readonly startPosition: { readonly row: number; readonly column: number };
  readonly endPosition: { readonly row: number; readonly column: number };
  readonly childCount: number;
  child(index: number): SyntaxNode | null;
  childForFieldName(field: string): SyntaxNode | null;
}

interface TreeLike {
  readonly rootNode: SyntaxNode;
  delete(): void;
}

interface ParserLike {
  delete(): void;
  parse(
    source: string,
    oldTree?: null,
    options?: { progressCallback?: (state: { currentOffset: number }) => boolean | undefined },
  ): TreeLike | null;
  reset(): void;
}

/** Longest one parse may take before it is cancelled (framework sources parse in < 100 ms). */
export const PYTHON_PARSE_BUDGET_MS: number = 5000;

/**
 * Longest source handed to tree-sitter: 8 Mi characters (the tracked framework files are under
 * 1 MB; a 52 MB source aborted the WASM runtime at 2.3 GB). Files are capped in bytes before they
 * are read (./checkout.ts); this bounds sources passed in memory.
 */
export const MAX_PYTHON_SOURCE_CHARS: number = 8 * 2 ** 20;

const require = createRequire(import.meta.url);
/**
 * The vendored runtime and grammar (vendor/tree-sitter/ at the package root, copied from
 * @vscode/tree-sitter-wasm by scripts/vendorTreeSitter.mjs at build time): only the Python
 * grammar ships, not the package's 19 (docs/packaging.md). Both src/ and dist/ sit three levels
 * below the root.
 */
const VENDOR = new URL("../../../vendor/tree-sitter/", import.meta.url);
const RUNTIME = fileURLToPath(new URL("tree-sitter.js", VENDOR));
const GRAMMAR = fileURLToPath(new URL("tree-sitter-python.wasm", VENDOR));

interface Runtime {
  readonly Parser: {
    init(): Promise<void>;
    new (): ParserLike & { setLanguage(l: unknown): void };
  };
  readonly Language: { load(path: string): Promise<unknown> };
}

/**
 * A parser on a fresh instance of the runtime: the runtime's CommonJS module is evicted from the
 * require cache and loaded again, so its WASM memory is new; the previous instance is garbage
 * once its parser is deleted.
 */
export async function freshPythonParser(): Promise<ParserLike> {
  delete require.cache[RUNTIME];
  const { Parser, Language } = require(RUNTIME) as Runtime;
  await Parser.init();
  const language = await Language.load(GRAMMAR);
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

/**
 * The first ERROR or MISSING node in document order, for the error message. Iterative (an
 * explicit stack): a source nested 1e5 deep must not overflow the call stack.
 */
function firstError(root: SyntaxNode): SyntaxNode | null {
  const stack: SyntaxNode[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === "ERROR" || node.isMissing) return node;
    for (let i = node.childCount - 1; i >= 0; i--) {
      const c = node.child(i);
      if (c !== null && (c.hasError || c.isMissing || c.type === "ERROR")) stack.push(c);
    }
  }
  return null;
}

/**
 * Layout errors tree-sitter recovers from silently but CPython rejects: a block with no statement
 * ("expected an indented block") and a statement that starts a line at a different indentation
 * from its siblings ("unexpected indent"). Returns the first, or null.
 */
function layoutError(
  root: SyntaxNode,
  lines: readonly string[],
): { at: SyntaxNode; what: string } | null {
  // Pre-order, document order, on an explicit stack (no recursion on the source's nesting).
  const stack: SyntaxNode[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const hit = blockLayoutError(node, lines);
    if (hit !== null) return hit;
    for (let i = node.childCount - 1; i >= 0; i--) {
      const c = node.child(i);
      if (c === null || (c.childCount === 0 && c.type !== "block")) continue;
      stack.push(c);
    }
  }
  return null;
}

/** The layout error of one module or block node itself (not of its descendants), or null. */
function blockLayoutError(
  node: SyntaxNode,
  lines: readonly string[],
): { at: SyntaxNode; what: string } | null {
  if (node.type !== "module" && node.type !== "block") return null;
  let indent: string | null = node.type === "module" ? "" : null;
  let statements = 0;
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (c === null || !c.isNamed || c.type === "comment") continue;
    statements++;
    const prefix = (lines[c.startPosition.row] ?? "").slice(0, c.startPosition.column);
    if (prefix.trim() !== "") continue; // after `;` or on the `def …:` line
    if (indent === null) indent = prefix;
    else if (prefix !== indent) return { at: c, what: "an unexpected indent" };
  }
  if (node.type === "block" && statements === 0)
    return { at: node, what: "a block with no statement (expected an indented block)" };
  return null;
}

/**
 * Parse `source` as Python and hand the syntax tree to `use`; the tree is freed afterwards (it
 * lives in WASM memory). A source with any syntax error is rejected: tree-sitter recovers from
 * errors, but a definition cut by one would hash as a silent drift.
 *
 * @throws {IoError} E_IO when `source` is not valid Python (the message names the line and column),
 *   or is longer than {@link MAX_PYTHON_SOURCE_CHARS} characters (checked before parsing).
 */
export async function withPythonTree<T>(
  source: string,
  fn: string,
  path: string | undefined,
  use: (root: SyntaxNode) => T,
): Promise<T> {
  if (typeof source !== "string" || source.length > MAX_PYTHON_SOURCE_CHARS) {
    const got = typeof source !== "string" ? typeof source : `${source.length} characters`;
    throw new IoError(
      fn,
      "source",
      mustBe(fn, "source", `a Python source of at most ${MAX_PYTHON_SOURCE_CHARS} characters`, got),
      path,
    );
  }
  const nesting = pythonNestingViolation(source);
  if (nesting !== null) {
    throw new IoError(
      fn,
      "source",
      mustBe(
        fn,
        safeText(path ?? "source"),
        `valid Python within the tokenizer's limits (CPython accepts at most ${MAX_INDENT_LEVELS} levels of indentation, ${MAX_BRACKET_DEPTH} nested brackets and no unterminated triple-quoted string)`,
        `${nesting.what} at line ${nesting.line}`,
      ),
      path,
    );
  }
  let parser: ParserLike;
  try {
    parser = await freshPythonParser();
  } catch (e) {
    throw new IoError(
      fn,
      "source",
      `${fn}: the Python parser could not be loaded (${safeText(e instanceof Error ? e.message : String(e))})`,
      path,
    );
  }
  const runtimeError = (e: unknown): IoError => {
    // The WASM runtime failed (e.g. "memory access out of bounds"): a typed error instead of the
    // runtime's; the instance is discarded with this call.
    const detail = e instanceof Error ? e.message : String(e);
    return new IoError(
      fn,
      "source",
      mustBe(
        fn,
        safeText(path ?? "source"),
        "a source the Python parser can process",
        `a parser runtime error (${safeText(detail)})`,
      ),
      path,
    );
  };
  const deadline = Date.now() + PYTHON_PARSE_BUDGET_MS;
  let tree: TreeLike | null;
  try {
    // tree-sitter calls back during parsing; returning true cancels the parse (then: null).
    tree = parser.parse(source, null, { progressCallback: () => Date.now() > deadline });
  } catch (e) {
    throw runtimeError(e);
  }
  if (tree === null) {
    throw new IoError(
      fn,
      "source",
      mustBe(
        fn,
        safeText(path ?? "source"),
        `a source that parses within ${PYTHON_PARSE_BUDGET_MS} ms`,
        "a parse that was cancelled at the time budget",
      ),
      path,
    );
  }
  try {
    const root = tree.rootNode;
    let bad: { at: SyntaxNode; what: string } | null = null;
    if (root.hasError) {
      const at = firstError(root) ?? root;
      bad = { at, what: at.isMissing ? `a missing '${at.type}'` : "a syntax error" };
    } else {
      bad = layoutError(root, source.split("\n"));
    }
    if (bad !== null) {
      const { row, column } = bad.at.startPosition;
      const near = bad.at.text.slice(0, 400).split("\n")[0]?.trim().slice(0, 40) ?? "";
      const actual = `${bad.what} at line ${row + 1}, column ${column + 1}${near === "" ? "" : ` near ${JSON.stringify(near)}`}`;
      throw new IoError(
        fn,
        "source",
        mustBe(fn, safeText(path ?? "source"), "valid Python", safeText(actual)),
        path,
      );
    }
    return use(root);
  } catch (e) {
    if (e instanceof PolgradError) throw e;
    throw runtimeError(e);
  } finally {
    try {
      tree.delete();
      parser.delete();
    } catch {
      // A faulted instance cannot free itself; it is unreachable after this call either way.
    }
  }
}
