#!/usr/bin/env node
// Write a large demo run (default 1,000 steps of B = 32, T = 1,024, F64, about 1.1 GB) to a
// temporary directory, diagnose it, and report the run's size on disk beside the diagnosing
// process's peak RSS. The run is deleted afterwards unless KEEP=1. Usage:
//   node bench/diagnoseMemory.js [steps] [width]     (after `npm run build`)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const steps = Number(process.argv[2] ?? 1000);
const width = Number(process.argv[3] ?? 1024);
const bin = fileURLToPath(new URL("../bin/polgrad.js", import.meta.url));
const dir = join(mkdtempSync(join(tmpdir(), "polgrad-bigrun-")), "run");
const t0 = Date.now();
const w = spawnSync(
  process.execPath,
  [bin, "demo-run", dir, "--steps", String(steps), "--width", String(width)],
  { encoding: "utf8" },
);
if (w.status !== 0) throw new Error(w.stderr);
const t1 = Date.now();
const bytes = readdirSync(dir).reduce((a, f) => a + statSync(join(dir, f)).size, 0);
// Measure the diagnose process itself: a child that reports its own peak RSS on exit.
const probe = `
  import { diagnoseRun } from ${JSON.stringify(new URL("../dist/diagnostics/diagnoseRun.js", import.meta.url).href)};
  const d = diagnoseRun(${JSON.stringify(dir)});
  console.log(JSON.stringify({ steps: d.steps.length, alarms: d.alarms, changepoint: d.entropyTrend?.changepointStep ?? null, maxRssKiB: process.resourceUsage().maxRSS }));
`;
const r = spawnSync(process.execPath, ["--input-type=module", "-e", probe], {
  encoding: "utf8",
  maxBuffer: 1 << 24,
});
if (r.status !== 0) throw new Error(r.stderr);
const t2 = Date.now();
const out = JSON.parse(r.stdout);
console.log(
  `run: ${steps} steps of B=32, T=${width} (F64): ${(bytes / 1e9).toFixed(3)} GB on disk, written in ${((t1 - t0) / 1000).toFixed(1)} s`,
);
console.log(
  `diagnose: ${out.steps} steps in ${((t2 - t1) / 1000).toFixed(1)} s, peak RSS ${(out.maxRssKiB / 1024).toFixed(0)} MiB (${((out.maxRssKiB * 1024) / bytes).toFixed(3)}x the run size)`,
);
console.log(
  `alarms: ${out.alarms.map((a) => a.message).join("; ")}; entropy changepoint after step ${out.changepoint}`,
);
if (process.env.KEEP !== "1") rmSync(dir, { recursive: true, force: true });
