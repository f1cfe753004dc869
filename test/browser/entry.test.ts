/**
 * The browser entry (issue 16, docs/browser.md): no module reachable from src/browser.ts or the
 * `polgrad/verify` subpath imports a `node:` module, and Vite (rolldown) bundles src/browser.ts for
 * the browser into one file with no `node:` import left in it, that runs the which table.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { expect, test } from "vitest";
import { importGraph } from "../_kit/moduleGraph.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

test.each(["src/browser.ts", "src/verify/index.ts"])(
  "identity: no module reachable from %s imports node:",
  (entry) => {
    const g = importGraph(join(root, entry));
    expect(g.size).toBeGreaterThan(20);
    const offenders = [...g].filter(([, bare]) => bare.some((s) => s.startsWith("node:")));
    expect(offenders.map(([f]) => f)).toEqual([]);
  },
);

test("conformance: vite bundles src/browser.ts for the browser with no node: import, and the bundle computes the which table", async () => {
  const { build } = await import("vite");
  const outDir = mkdtempSync(join(tmpdir(), "polgrad-browser-"));
  await build({
    configFile: false,
    logLevel: "silent",
    build: {
      lib: { entry: join(root, "src/browser.ts"), formats: ["es"], fileName: "polgrad" },
      outDir,
      minify: false,
      target: "es2022",
      emptyOutDir: true,
    },
  });
  const files = readdirSync(outDir).filter((f) => f.endsWith(".js"));
  expect(files.length).toBeGreaterThan(0);
  for (const f of files) {
    const code = readFileSync(join(outDir, f), "utf8");
    expect(code).not.toMatch(/from\s*["']node:|import\(\s*["']node:|require\(/);
  }
  // The bundle is an ES module that runs: the which table of the built-in batch.
  const mod = (await import(
    pathToFileURL(join(outDir, files[0] as string)).href
  )) as typeof import("../../src/browser.js");
  const report = mod.whichTable(mod.BUILTIN_BATCH);
  const { whichTable } = await import("../../src/which/index.js");
  const { BUILTIN_BATCH } = await import("../../src/which/index.js");
  expect(report.rows.map((r) => r.loss)).toEqual(whichTable(BUILTIN_BATCH).rows.map((r) => r.loss));
  expect(report.rows.length).toBeGreaterThan(5);
}, 120_000);
