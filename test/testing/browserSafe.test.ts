/**
 * The browser-safe entries import no `node:` module, transitively: `polgrad/testing`, `polgrad/report`
 * and the conformance vectors and config resolvers (the CLI adds the file reading and writing).
 */
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { importGraph } from "../_kit/moduleGraph.js";

const ENTRIES = [
  "src/testing/index.ts",
  "src/report/index.ts",
  "src/conformance/vectors.ts",
  "src/conformance/frameworkConfig/explain.ts",
];

test.each(ENTRIES)("identity: no module reachable from %s imports node:", (entry) => {
  const g = importGraph(fileURLToPath(new URL(`../../${entry}`, import.meta.url)));
  expect(g.size).toBeGreaterThan(10);
  const offenders = [...g].filter(([, bare]) => bare.some((s) => s.startsWith("node:")));
  expect(offenders.map(([f]) => f)).toEqual([]);
});
