#!/usr/bin/env node
/**
 * Copy the recorded release facts (src/conformance/releases/data/*.json, the compact files that
 * tools/record-releases/ writes) to dist/conformance/releases/data/, beside the compiled loader
 * that reads them on first use (docs/conformance/releases.md#data), and the recorded metric names
 * (src/diagnostics/data/*.json, tools/record-releases/metricNames.py) to dist/diagnostics/data/,
 * where src/diagnostics/logs/metricNames.ts reads them (docs/diagnostics/metric-names.md). Run by `npm run build` after
 * tsc; tsc copies no JSON it is not asked to import, and the loader imports none (a bundler would
 * then inline the facts into the browser entry).
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const folder of [
  ["conformance", "releases", "data"],
  ["diagnostics", "data"],
]) {
  const from = join(root, "src", ...folder);
  const to = join(root, "dist", ...folder);
  const files = readdirSync(from).filter((f) => f.endsWith(".json"));
  if (files.length === 0) throw new Error(`copyReleaseFacts: no .json file in ${from}`);
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  for (const f of files) copyFileSync(join(from, f), join(to, f));
}
