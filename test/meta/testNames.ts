/**
 * The full names of the tests in the repository, read statically with the TypeScript compiler's
 * parser (fast: no test file is imported): nested `describe` / `test` / `it` calls whose title is a
 * string literal give exact names; a template literal with substitutions, or a `.each` title with
 * printf placeholders, gives a pattern (each placeholder matches any text).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

function testFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== "fixtures") testFiles(p, out);
    } else if (p.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A title as a regex source: literal text escaped, placeholders as `.+`. */
function titleOf(node: ts.Expression, isEach: boolean): { text: string; exact: boolean } {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
    const t = node.text;
    if (isEach && /%[sdifjo#%]|\$[a-zA-Z_]/.test(t))
      return {
        text: escapeRegex(t).replace(/%[sdifjo#]|\\\$[a-zA-Z_][\w.]*/g, ".+"),
        exact: false,
      };
    return { text: t, exact: true };
  }
  if (ts.isTemplateExpression(node)) {
    let src = escapeRegex(node.head.text);
    for (const span of node.templateSpans) src += `.+${escapeRegex(span.literal.text)}`;
    return { text: src, exact: false };
  }
  // A computed title (a loop variable, a call): any text.
  return { text: ".+", exact: false };
}

function calleeKind(expr: ts.Expression): { kind: "describe" | "test"; each: boolean } | null {
  // describe(...), test(...), it(...), test.each(...)(...), describe.skip(...), test.concurrent(...)
  let e = expr;
  let each = false;
  if (ts.isCallExpression(e)) {
    each = true;
    e = e.expression;
  }
  while (ts.isPropertyAccessExpression(e)) {
    if (e.name.text === "each") each = true;
    e = e.expression;
  }
  if (!ts.isIdentifier(e)) return null;
  if (e.text === "describe") return { kind: "describe", each };
  if (e.text === "test" || e.text === "it") return { kind: "test", each };
  return null;
}

/** Exact full names and name patterns ("file > describe … > title") of every test. */
export function staticTestNames(root: string): { exact: Set<string>; patterns: RegExp[] } {
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const file of testFiles(join(root, "test"))) {
    const rel = relative(root, file);
    const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node, path: { text: string; exact: boolean }[]): void => {
      if (ts.isCallExpression(node) && node.arguments.length > 0) {
        const kind = calleeKind(node.expression);
        const title = kind ? titleOf(node.arguments[0] as ts.Expression, kind.each) : null;
        if (kind && title) {
          const full = [...path, title];
          if (kind.kind === "test") {
            if (full.every((p) => p.exact))
              exact.add(`${rel} > ${full.map((p) => p.text).join(" > ")}`);
            else
              patterns.push(
                new RegExp(
                  `^${escapeRegex(rel)} > ${full.map((p) => (p.exact ? escapeRegex(p.text) : p.text)).join(" > ")}$`,
                ),
              );
            return;
          }
          for (const a of node.arguments.slice(1)) ts.forEachChild(a, (c) => visit(c, full));
          for (const a of node.arguments.slice(1))
            if (ts.isArrowFunction(a) || ts.isFunctionExpression(a)) visit(a.body, full);
          return;
        }
      }
      ts.forEachChild(node, (c) => visit(c, path));
    };
    visit(sf, []);
  }
  return { exact, patterns };
}
