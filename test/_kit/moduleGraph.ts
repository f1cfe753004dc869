/**
 * The static import graph of a source module: every relative module it imports, transitively
 * (`import … from "./x.js"`, `export … from`, `import("./x.js")`; `import type` is erased and
 * skipped), read from the .ts sources, and
 * every bare specifier they name. For the browser-safety tests (no `node:` import reachable).
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

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
