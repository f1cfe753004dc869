/**
 * Definition extraction from Python source: every top-level function and class, and the methods
 * (and nested classes) of classes, keyed by qualified name (`func`, `Class`, `Class.method`), with
 * the segment polgrad's drift check hashes and, for functions, the signature.
 */

import { requireObject, requireString } from "../../core/validate.js";
import { normaliseLines, sha256Text, sourceLines } from "./normalize.js";
import { type SyntaxNode, withPythonTree } from "./parser.js";
import { codeText, type PythonParameter, readParameters } from "./signature.js";

/** What a definition is. */
export type DefinitionKind = "function" | "class";

/** One extracted definition. Lines are 1-based and inclusive. */
export interface PythonDefinition {
  /** Qualified name: `func`, `Class`, `Class.method`, `Class.Inner.method`. */
  readonly name: string;
  readonly kind: DefinitionKind;
  /** First line of the segment: the first decorator's line when decorated, else the `def`/`class` line. */
  readonly startLine: number;
  /** Last line of the node: the line where its last statement ends (trailing comments excluded). */
  readonly endLine: number;
  /** The segment's lines with trailing whitespace stripped, joined with `\n`. */
  readonly text: string;
  /** SHA-256 (hex) of `text` as UTF-8. */
  readonly sha256: string;
  /** The parameter list in source order; null for a class. */
  readonly parameters: readonly PythonParameter[] | null;
  /** The return annotation as compact source text; null when absent or for a class. */
  readonly returnAnnotation: string | null;
}

/** Options of {@link extractDefinitions}. */
export interface ExtractOptions {
  /** The file the source came from, named in parse-error messages. */
  readonly path?: string;
}

/**
 * The end row of a node as Python's `ast` reports it: the end of its last token that is not a
 * comment. tree-sitter lets a block own comments that follow its last statement; `ast` does not.
 * Walks down the last-child chain in a loop (no recursion on the source's nesting).
 */
function lastTokenRow(node: SyntaxNode): number {
  let cur = node;
  for (;;) {
    let next: SyntaxNode | null = null;
    for (let i = cur.childCount - 1; i >= 0 && next === null; i--) {
      const c = cur.child(i);
      if (c === null || c.type === "comment" || c.startIndex === c.endIndex) continue;
      next = c;
    }
    if (next === null) return cur.endPosition.row;
    cur = next;
  }
}

function defKind(node: SyntaxNode): DefinitionKind | null {
  if (node.type === "function_definition") return "function";
  if (node.type === "class_definition") return "class";
  return null;
}

function collect(
  root: SyntaxNode,
  lines: readonly string[],
  out: Map<string, PythonDefinition>,
): void {
  // One frame per class body being scanned; a class's body is scanned before its next sibling
  // (source order), on an explicit stack rather than by recursion.
  const stack: { body: SyntaxNode; prefix: string; i: number }[] = [
    { body: root, prefix: "", i: 0 },
  ];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as { body: SyntaxNode; prefix: string; i: number };
    if (frame.i >= frame.body.childCount) {
      stack.pop();
      continue;
    }
    const stmt = frame.body.child(frame.i++);
    if (stmt === null) continue;
    const def = stmt.type === "decorated_definition" ? stmt.childForFieldName("definition") : stmt;
    if (def === null) continue;
    const kind = defKind(def);
    const nameNode = kind === null ? null : def.childForFieldName("name");
    if (kind === null || nameNode === null) continue;
    const name = `${frame.prefix}${nameNode.text}`;
    const startLine = stmt.startPosition.row + 1;
    const endLine = lastTokenRow(def) + 1;
    const text = normaliseLines(lines.slice(startLine - 1, endLine));
    let parameters: readonly PythonParameter[] | null = null;
    let returnAnnotation: string | null = null;
    if (kind === "function") {
      const params = def.childForFieldName("parameters");
      parameters = params === null ? [] : readParameters(params);
      const ret = def.childForFieldName("return_type");
      returnAnnotation = ret === null ? null : codeText(ret);
    }
    // The first definition of a name wins, as when polgrad's tool scans a body in order.
    if (!out.has(name)) {
      out.set(name, {
        name,
        kind,
        startLine,
        endLine,
        text,
        sha256: sha256Text(text),
        parameters,
        returnAnnotation,
      });
    }
    if (kind === "class") {
      const classBody = def.childForFieldName("body");
      if (classBody !== null) stack.push({ body: classBody, prefix: `${name}.`, i: 0 });
    }
  }
}

/**
 * Extract every top-level function and class of a Python source, and every method and nested
 * class of those classes, with the segment the drift check hashes and the function signatures.
 *
 * Segment: the whole lines from the first decorator (or the `def`/`class` line) to the line where
 * the node's last statement ends, each stripped of trailing whitespace, joined with `\n`; hash =
 * SHA-256 of its UTF-8 bytes. Comments and docstrings inside the span count. Functions nested in
 * functions are not extracted; a name defined twice keeps its first definition.
 *
 * @param source - The Python source text.
 * @param options - `path`, named in the error message when the source does not parse.
 * @returns A map from qualified name to definition, in source order.
 * @throws {IoError} E_IO when the source has a syntax error (line and column in the message).
 * @derivation docs/conformance/drift.md#definitions-and-segments
 * @enforcedBy test/conformance/python/definitions.test.ts > extractDefinitions > golden: a decorated function's segment starts at its first decorator line
 * @enforcedBy test/conformance/python/definitions.test.ts > extractDefinitions > rejects: a syntax error names its line
 * @since 0.1.0
 */
export async function extractDefinitions(
  source: string,
  options: ExtractOptions = {},
): Promise<ReadonlyMap<string, PythonDefinition>> {
  requireString("extractDefinitions", "source", source);
  requireObject("extractDefinitions", "options", options, "ExtractOptions");
  const lines = sourceLines(source);
  return withPythonTree(source, "extractDefinitions", options.path, (root) => {
    const out = new Map<string, PythonDefinition>();
    collect(root, lines, out);
    return out;
  });
}
