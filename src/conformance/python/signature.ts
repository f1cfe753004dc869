/**
 * Function signatures read from the syntax tree: parameter names, kinds, annotations and defaults
 * (as compact source text), in the order Python binds them.
 */
import type { SyntaxNode } from "./parser.js";

/** How a parameter binds, in Python's `inspect.Parameter` terms. */
export type ParameterKind =
  | "positional_only"
  | "normal"
  | "var_positional"
  | "keyword_only"
  | "var_keyword";

/** One parameter of a Python function. */
export interface PythonParameter {
  readonly name: string;
  readonly kind: ParameterKind;
  /** The default value as compact source text, or null when there is none. */
  readonly default: string | null;
  /** The annotation as compact source text, or null when there is none. */
  readonly annotation: string | null;
}

const OPENERS = new Set(["(", "[", "{"]);
const CLOSERS = new Set([")", "]", "}", ",", ":", "."]);

/** The non-empty leaf tokens under `root` in document order (strings whole, comments dropped). */
function leaves(root: SyntaxNode, out: SyntaxNode[]): void {
  // Pre-order on an explicit stack: a default nested 1e5 deep must not overflow the call stack.
  const stack: SyntaxNode[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === "comment") continue;
    if (node.childCount === 0 || node.type === "string") {
      if (node.startIndex !== node.endIndex) out.push(node);
      continue;
    }
    for (let i = node.childCount - 1; i >= 0; i--) {
      const c = node.child(i);
      if (c !== null) stack.push(c);
    }
  }
}

/**
 * The source text of an expression with comments dropped and layout made canonical: tokens that
 * were separated by whitespace (including line breaks) are joined by one space, except after an
 * opening bracket and before a closing bracket, comma, colon or dot. A trailing comma is dropped
 * when its bracket holds another comma (`(x,)` keeps its comma). String literals are kept
 * verbatim. So `tuple[\n    Tensor,\n    Tensor | None,\n]` reads `tuple[Tensor, Tensor | None]`.
 */
export function codeText(node: SyntaxNode): string {
  const toks: SyntaxNode[] = [];
  leaves(node, toks);
  const parts: string[] = [];
  // Per open bracket: the index in `parts` of its last top-level comma and how many it has.
  const groups: { lastComma: number; commas: number }[] = [];
  let prev: SyntaxNode | null = null;
  for (const t of toks) {
    const tx = t.text;
    if (prev !== null && t.startIndex > prev.endIndex) {
      if (!OPENERS.has(prev.text) && !CLOSERS.has(tx)) parts.push(" ");
    }
    if (tx === ")" || tx === "]" || tx === "}") {
      const g = groups.pop();
      // A trailing comma is layout when the group has another comma: `tuple[A, B,]` = `tuple[A, B]`.
      if (g !== undefined && g.commas >= 2 && g.lastComma === parts.length - 1) parts.pop();
    }
    parts.push(tx);
    if (OPENERS.has(tx)) groups.push({ lastComma: -1, commas: 0 });
    else if (tx === ",") {
      const g = groups.at(-1);
      if (g !== undefined) {
        g.lastComma = parts.length - 1;
        g.commas++;
      }
    }
    prev = t;
  }
  return parts.join("");
}

function splatName(node: SyntaxNode): string {
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (c !== null && c.type === "identifier") return c.text;
  }
  return node.text.replace(/^\*+/, "");
}

/**
 * Read a `parameters` node into Python's binding order. Parameters before `/` are
 * positional-only; after a bare `*` or `*args` they are keyword-only.
 */
export function readParameters(params: SyntaxNode): PythonParameter[] {
  const raw: { name: string; splat: 0 | 1 | 2; def: string | null; ann: string | null }[] = [];
  let slash = -1;
  let star = -1;
  for (let i = 0; i < params.childCount; i++) {
    const p = params.child(i);
    if (p === null || !p.isNamed || p.type === "comment") continue;
    if (p.type === "positional_separator") {
      slash = raw.length;
      continue;
    }
    if (p.type === "keyword_separator") {
      star = raw.length;
      continue;
    }
    let target: SyntaxNode = p;
    let def: string | null = null;
    let ann: string | null = null;
    if (p.type === "default_parameter" || p.type === "typed_default_parameter") {
      const value = p.childForFieldName("value");
      def = value === null ? null : codeText(value);
      const type = p.childForFieldName("type");
      ann = type === null ? null : codeText(type);
      target = p.childForFieldName("name") ?? p;
    } else if (p.type === "typed_parameter") {
      const type = p.childForFieldName("type");
      ann = type === null ? null : codeText(type);
      target = p.child(0) ?? p;
    }
    if (target.type === "list_splat_pattern") {
      if (star < 0) star = raw.length + 1;
      raw.push({ name: splatName(target), splat: 1, def, ann });
    } else if (target.type === "dictionary_splat_pattern") {
      raw.push({ name: splatName(target), splat: 2, def, ann });
    } else {
      raw.push({ name: target.text, splat: 0, def, ann });
    }
  }
  return raw.map((r, i) => {
    let kind: ParameterKind;
    if (r.splat === 1) kind = "var_positional";
    else if (r.splat === 2) kind = "var_keyword";
    else if (i < slash) kind = "positional_only";
    else if (star >= 0 && i >= star) kind = "keyword_only";
    else kind = "normal";
    return { name: r.name, kind, default: r.def, annotation: r.ann };
  });
}
