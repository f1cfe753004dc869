/**
 * The static import graph of a source module: every relative module it imports, transitively
 * (`import … from "./x.js"`, `export … from`, `import("./x.js")`; `import type` is erased and
 * skipped), read from the .ts sources, and
 * every bare specifier they name. For the browser-safety tests (no `node:` import reachable).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SPEC =
  /(?:import|export)\s[^"']*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

/** Every module reachable from `entry` (absolute .ts paths) and the non-relative specifiers each imports. */
export function importGraph(entry: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (out.has(file)) continue;
    const text = readFileSync(file, "utf8");
    const bare: string[] = [];
    for (const m of text.matchAll(SPEC)) {
      // `import type` / `export type` are erased at run time.
      if (/^\s*(?:import|export)\s+type\s/.test(m[0])) continue;
      const s = (m[1] ?? m[2] ?? m[3]) as string;
      if (s.startsWith(".")) todo.push(resolve(dirname(file), s.replace(/\.js$/, ".ts")));
      else bare.push(s);
    }
    out.set(file, bare);
  }
  return out;
}

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Every .ts file below `dir`, recursively. */
export function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith(".ts")) out.push(p);
  }
  return out;
}

/**
 * Relative import specifiers of a module: static imports, re-exports and dynamic imports;
 * `import type` / `export type` too unless `types` is false (they are erased at run time).
 */
export function specifiers(text: string, types = true): string[] {
  const out: string[] = [];
  const patterns = [
    /(?:^|[\s;}])(?:import|export)\s[^;"']*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']/g,
    /(?:^|[\s;])import\s*["'](\.{1,2}\/[^"']+)["']/g,
    /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g,
  ];
  for (const re of patterns)
    for (const m of text.matchAll(re))
      if (types || !/^\s*[;}]?\s*(?:import|export)\s+type\s/.test(m[0])) out.push(m[1] as string);
  return out;
}

/** The import graph of src/: repository-relative module path -> the modules it imports. */
export function sourceImportGraph(options: { readonly types: boolean }): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(join(root, "src"))) {
    const from = relative(root, file);
    const targets = specifiers(readFileSync(file, "utf8"), options.types).map((s) =>
      relative(root, resolve(dirname(file), s.replace(/\.js$/, ".ts"))),
    );
    graph.set(from, [...new Set(targets)]);
  }
  return graph;
}

/** Every cycle the depth-first search closes (one per back edge), each as its node path. */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const s = state.get(next);
      if (s === "open") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}
