/**
 * Enforces CONTRIBUTING.md#the-layer-map: the modules of src/ import one another without a cycle
 * (type-only imports included), the top-level folders form layers that import in one direction
 * (at run time; the entries src/index.ts and src/browser.ts sit above every layer, and the root
 * modules src/errors.ts and src/version.ts belong to core), and no library module imports what
 * `polgrad/testing` publishes.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { findCycles, sourceImportGraph } from "../_kit/moduleGraph.js";

const ENTRIES = new Set(["src/index.ts", "src/browser.ts"]);

/** The layer of a module: its top-level folder under src/, core for the root modules. */
function layer(module: string): string {
  const parts = module.split("/");
  return parts.length > 2 ? (parts[1] as string) : "core";
}

/** The folder graph of the run-time imports (entries left out). */
function layerGraph(): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const [from, to] of sourceImportGraph({ types: false })) {
    if (ENTRIES.has(from)) continue;
    const a = layer(from);
    const set = out.get(a) ?? new Set<string>();
    out.set(a, set);
    for (const t of to) if (!ENTRIES.has(t) && layer(t) !== a) set.add(layer(t));
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}

describe("import graph", () => {
  test("identity: no module of src/ is part of an import cycle, type-only imports included", () => {
    const cycles = findCycles(sourceImportGraph({ types: true }));
    expect(cycles.map((c) => c.join(" -> "))).toEqual([]);
  });

  test("identity: the top-level folders import in one direction, and CONTRIBUTING.md lists each with what it may import", () => {
    const graph = layerGraph();
    expect(findCycles(graph).map((c) => c.join(" -> "))).toEqual([]);
    // The layer map of CONTRIBUTING.md names every folder and exactly the folders it imports.
    const map = readFileSync(new URL("../../CONTRIBUTING.md", import.meta.url), "utf8");
    const rows = new Map(
      [...map.matchAll(/^\| `src\/(\w+)\/?` \| [^|]+ \|\s*([^|]*?)\s*\|$/gm)].map((m) => [
        m[1] as string,
        [...(m[2] as string).matchAll(/`(\w+)`/g)].map((x) => x[1] as string).sort(),
      ]),
    );
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(graph));
  });

  test("identity: no library module imports what polgrad/testing publishes", () => {
    const offending = [...sourceImportGraph({ types: true })]
      .filter(([from]) => !from.startsWith("src/testing/") && !ENTRIES.has(from))
      .flatMap(([from, to]) =>
        to.filter((t) => t.startsWith("src/testing/")).map((t) => `${from} -> ${t}`),
      );
    expect(offending).toEqual([]);
  });
});
