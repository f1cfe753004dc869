/** `polgrad/testing` is browser-safe: nothing reachable from src/testing/index.ts imports a `node:` module. */
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { importGraph } from "../_kit/moduleGraph.js";

test("identity: no module reachable from src/testing/index.ts imports node:", () => {
  const g = importGraph(fileURLToPath(new URL("../../src/testing/index.ts", import.meta.url)));
  expect(g.size).toBeGreaterThan(10);
  const offenders = [...g].filter(([, bare]) => bare.some((s) => s.startsWith("node:")));
  expect(offenders.map(([f]) => f)).toEqual([]);
});
