#!/usr/bin/env node
// `npm run bench`: the loss, CLI and diagnosis benchmark (bench/losses.mjs, every argument passed
// on), then the large-run memory bench (bench/diagnoseMemory.js). Run after `npm run build`.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = (f) => fileURLToPath(new URL(f, import.meta.url));
const args = process.argv.slice(2);
// --quick (a smoke run) shrinks the memory bench to 50 steps as it shrinks everything else.
const memory = args.includes("--quick") ? ["50", "1024"] : [];
const steps = [
  [here("./losses.mjs"), ...args],
  [here("./diagnoseMemory.js"), ...memory],
];
for (const step of steps) {
  const r = spawnSync(process.execPath, step, { stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
  process.stdout.write("\n");
}
