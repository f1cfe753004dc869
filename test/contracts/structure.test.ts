/**
 * Enforces docs/contracts.md#reduction-contracts (the module layout): signature,
 * reduction and liveness contracts share src/contracts/, which takes in-memory batches and imports
 * nothing from src/io/, and no module under src/contracts/ or src/conformance/ is part of an import
 * cycle. The import graph is read from the sources: every relative specifier of an `import`,
 * `export … from` or dynamic `import()` in src/**\/*.ts, type-only imports included.
 */
import { describe, expect, test } from "vitest";
import { findCycles, sourceImportGraph, specifiers } from "../_kit/moduleGraph.js";

const importGraph = () => sourceImportGraph({ types: true });

const inScope = (m: string) => m.startsWith("src/contracts/") || m.startsWith("src/conformance/");

describe("contracts structure", () => {
  test("identity: the cycle search finds a two-module circle and passes a chain", () => {
    // a -> b -> a is a cycle; c -> d -> e is not.
    const circle = new Map([
      ["a", ["b"]],
      ["b", ["a"]],
    ]);
    expect(findCycles(circle)).toEqual([["a", "b", "a"]]);
    const chain = new Map([
      ["c", ["d"]],
      ["d", ["e"]],
      ["e", []],
    ]);
    expect(findCycles(chain)).toEqual([]);
    // The specifier scan sees type-only imports, re-exports and dynamic imports.
    const text = [
      'import type { X } from "./x.js";',
      'export { Y } from "../y.js";',
      'const z = await import("./z.js");',
      'import "./side.js";',
      'import { join } from "node:path";',
    ].join("\n");
    expect(specifiers(text).sort()).toEqual(["../y.js", "./side.js", "./x.js", "./z.js"]);
  });

  test("identity: the import graph resolves every relative import to a source module", () => {
    const graph = importGraph();
    const unresolved = [...graph].flatMap(([from, to]) =>
      to.filter((t) => !graph.has(t)).map((t) => `${from} -> ${t}`),
    );
    expect(unresolved).toEqual([]);
    // The graph is the real one: the signature checker reads its pins and its leaf types.
    expect(graph.get("src/contracts/signature.ts")).toEqual(
      expect.arrayContaining(["src/contracts/pins.ts", "src/contracts/signatureTypes.ts"]),
    );
  });

  test("identity: no module under src/contracts/ or src/conformance/ is part of an import cycle", () => {
    const cycles = findCycles(importGraph()).filter((c) => c.some(inScope));
    expect(cycles.map((c) => c.join(" -> "))).toEqual([]);
  });

  test("identity: the pins are leaves: their types modules import neither pins nor checkers", () => {
    const graph = importGraph();
    expect(graph.get("src/contracts/pins.ts")).toEqual(["src/contracts/signatureTypes.ts"]);
    expect(graph.get("src/conformance/pins.ts")).toEqual(["src/conformance/driftTypes.ts"]);
    expect(graph.get("src/conformance/driftTypes.ts")).toEqual([]);
    const signatureTypes = graph.get("src/contracts/signatureTypes.ts") ?? [];
    expect(signatureTypes.filter((m) => m.startsWith("src/contracts/"))).toEqual([]);
  });

  test("identity: nothing under src/contracts/ imports from src/io/", () => {
    const graph = importGraph();
    const offending = [...graph]
      .filter(([from]) => from.startsWith("src/contracts/"))
      .flatMap(([from, to]) =>
        to.filter((t) => t.startsWith("src/io/")).map((t) => `${from} -> ${t}`),
      );
    expect(offending).toEqual([]);
    // The half-precision arithmetic the emulation needs is core, not io.
    expect(graph.get("src/contracts/precision.ts")).toContain("src/core/halfFloat.ts");
  });
});
