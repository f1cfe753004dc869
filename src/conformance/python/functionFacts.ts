/**
 * What an adapter contract needs from a Python source beyond the parameter lists: how many values
 * each function returns (the elements of its `return` tuples) and how many values each call site
 * of `self.<method>(…)` unpacks (the targets of `a, b = self.method(…)`), with the keywords it
 * passes. One parse per source; trees are walked on explicit stacks (no recursion on nesting).
 */
import { type SyntaxNode, withPythonTree } from "./parser.js";
import { type PythonParameter, readParameters } from "./signature.js";

/** One function or method: its parameters and the arity of every `return` in its own body. */
export interface FunctionFacts {
  /** Qualified name: `func`, `Class.method`. */
  readonly name: string;
  readonly parameters: readonly PythonParameter[];
  /**
   * The distinct arities of its `return` statements, ascending: `return a, b` and `return (a, b)`
   * are 2, `return x` is 1, a bare `return` is 0; null when a returned tuple holds a `*starred`
   * element (its length is not known from the source). Empty when the body has no `return`.
   * Returns of nested functions, lambdas and classes do not count.
   */
  readonly returnArities: readonly number[] | null;
}

/** One `… = self.<method>(…)` assignment. */
export interface CallUnpacking {
  /** The attribute called on `self`, e.g. `_get_per_token_logps_and_entropies`. */
  readonly method: string;
  /** 1-based line of the call. */
  readonly line: number;
  /**
   * Number of assignment targets: `a, b = …` and `(a, b) = …` are 2; a single name (no
   * unpacking) is 1.
   */
  readonly targets: number;
  /** True when a target is `*rest` (then `targets` counts it, and the call may return more). */
  readonly starred: boolean;
  /** The keyword arguments passed, in call order. */
  readonly keywords: readonly string[];
  /** The number of positional arguments passed. */
  readonly positional: number;
}

/** The facts of one source. */
export interface SourceFacts {
  readonly functions: ReadonlyMap<string, FunctionFacts>;
  readonly unpackings: readonly CallUnpacking[];
}

const SCOPES = new Set(["function_definition", "lambda", "class_definition"]);

function namedChildren(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (c?.isNamed && c.type !== "comment") out.push(c);
  }
  return out;
}

/** Arity of one return statement, or null for a tuple with a starred element. */
function returnArity(ret: SyntaxNode): number | null {
  const value = namedChildren(ret)[0];
  if (value === undefined) return 0;
  if (value.type !== "expression_list" && value.type !== "tuple") return 1;
  const elements = namedChildren(value);
  return elements.some((e) => e.type === "list_splat") ? null : elements.length;
}

function returnArities(fnDef: SyntaxNode): number[] | null {
  const body = fnDef.childForFieldName("body");
  const seen = new Set<number>();
  let starred = false;
  const stack: SyntaxNode[] = body === null ? [] : [body];
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    if (n.type === "return_statement") {
      const a = returnArity(n);
      if (a === null) starred = true;
      else seen.add(a);
      continue;
    }
    for (let i = 0; i < n.childCount; i++) {
      const c = n.child(i);
      if (c !== null && !SCOPES.has(c.type)) stack.push(c);
    }
  }
  return starred ? null : [...seen].sort((a, b) => a - b);
}

function collectFunctions(root: SyntaxNode): Map<string, FunctionFacts> {
  const out = new Map<string, FunctionFacts>();
  const stack: { body: SyntaxNode; prefix: string }[] = [{ body: root, prefix: "" }];
  for (let f = stack.pop(); f !== undefined; f = stack.pop()) {
    for (let i = 0; i < f.body.childCount; i++) {
      const stmt = f.body.child(i);
      const def =
        stmt?.type === "decorated_definition" ? stmt.childForFieldName("definition") : stmt;
      const nameNode = def?.childForFieldName("name") ?? null;
      if (def === null || def === undefined || nameNode === null) continue;
      const name = `${f.prefix}${nameNode.text}`;
      if (def.type === "class_definition") {
        const body = def.childForFieldName("body");
        if (body !== null) stack.push({ body, prefix: `${name}.` });
      } else if (def.type === "function_definition" && !out.has(name)) {
        // The first definition of a name wins, as in extractDefinitions.
        const params = def.childForFieldName("parameters");
        out.set(name, {
          name,
          parameters: params === null ? [] : readParameters(params),
          returnArities: returnArities(def),
        });
      }
    }
  }
  return out;
}

function selfMethod(call: SyntaxNode): string | null {
  const fn = call.childForFieldName("function");
  if (fn === null || fn.type !== "attribute") return null;
  const obj = fn.childForFieldName("object");
  const attr = fn.childForFieldName("attribute");
  return obj?.type === "identifier" && obj.text === "self" && attr !== null ? attr.text : null;
}

function unpackingOf(assign: SyntaxNode): CallUnpacking | null {
  const left = assign.childForFieldName("left");
  const right = assign.childForFieldName("right");
  if (left === null || right === null || right.type !== "call") return null;
  const method = selfMethod(right);
  if (method === null) return null;
  const multi = ["pattern_list", "tuple_pattern", "list_pattern"].includes(left.type);
  const targets = multi ? namedChildren(left) : [left];
  const args = right.childForFieldName("arguments");
  const passed = args === null ? [] : namedChildren(args);
  const keywords = passed
    .filter((a) => a.type === "keyword_argument")
    .map((a) => a.childForFieldName("name")?.text ?? "");
  return {
    method,
    line: right.startPosition.row + 1,
    targets: targets.length,
    starred: targets.some((t) => t.type === "list_splat_pattern"),
    keywords,
    positional: passed.filter((a) => a.type !== "keyword_argument" && a.type !== "dictionary_splat")
      .length,
  };
}

function collectUnpackings(root: SyntaxNode): CallUnpacking[] {
  const out: CallUnpacking[] = [];
  const stack: SyntaxNode[] = [root];
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    if (n.type === "assignment") {
      const u = unpackingOf(n);
      if (u !== null) out.push(u);
    }
    for (let i = n.childCount - 1; i >= 0; i--) {
      const c = n.child(i);
      if (c !== null) stack.push(c);
    }
  }
  return out.sort((a, b) => a.line - b.line);
}

/**
 * Read the facts an adapter contract checks from one Python source: every function's parameters
 * and return arities, and every `… = self.<method>(…)` assignment's target count.
 *
 * Formula: arity(return e₁, …, eₙ) = n, arity(return e) = 1, arity(return) = 0;
 * targets(t₁, …, tₙ = self.m(…)) = n, targets(t = self.m(…)) = 1.
 *
 * @param source - The Python source text.
 * @param path - The file it came from, named in parse-error messages.
 * @returns The functions by qualified name and the call-site unpackings in line order.
 * @throws {IoError} E_IO when the source is not valid Python (as extractDefinitions).
 * @derivation docs/conformance/adapters.md#stricter-checks
 * @enforcedBy test/contracts/adapter.test.ts > extractSourceFacts > golden: return arities and call-site unpacking of a synthetic trainer
 * @since 0.1.0
 */
export async function extractSourceFacts(source: string, path?: string): Promise<SourceFacts> {
  return withPythonTree(source, "extractSourceFacts", path, (root) => ({
    functions: collectFunctions(root),
    unpackings: collectUnpackings(root),
  }));
}
