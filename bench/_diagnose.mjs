// Run diagnosis from disk, as bench/diagnoseMemory.js does it: `polgrad demo-run` writes the run
// (steps × B = 32 × T, F64) to a temporary folder, then a separate Node process calls the public
// diagnoseRun on it, timing the call itself and reporting its own peak RSS; MB/s is the run's
// bytes on disk over that time. One measurement (a run takes seconds; it is not repeated).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../bin/polgrad.js", import.meta.url));
const DIST = new URL("../dist/index.js", import.meta.url).href;

/** Write a steps × 32 × width run, diagnose it in a child, delete it; returns the measurement. */
export function benchDiagnose(steps, width) {
  const root = mkdtempSync(join(tmpdir(), "polgrad-bench-run-"));
  const dir = join(root, "run");
  try {
    const t0 = process.hrtime.bigint();
    const w = spawnSync(
      process.execPath,
      [BIN, "demo-run", dir, "--steps", String(steps), "--width", String(width)],
      { encoding: "utf8" },
    );
    if (w.status !== 0) throw new Error(`bench: demo-run failed: ${w.stderr}`);
    const writeSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const bytes = readdirSync(dir).reduce((a, f) => a + statSync(join(dir, f)).size, 0);
    // One child per thread count (1, then 2: diagnoseRun's threads option), the same run.
    const measure = (threads) => {
      const probe = `
        import { diagnoseRun } from ${JSON.stringify(DIST)};
        const t0 = process.hrtime.bigint();
        const d = diagnoseRun(${JSON.stringify(dir)}, { threads: ${threads} });
        const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
        console.log(JSON.stringify({ steps: d.steps.length, seconds, maxRssKiB: process.resourceUsage().maxRSS }));
      `;
      const t1 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", probe], {
        encoding: "utf8",
        maxBuffer: 1 << 24,
      });
      const wallSeconds = Number(process.hrtime.bigint() - t1) / 1e9;
      if (r.status !== 0) throw new Error(`bench: diagnoseRun failed: ${r.stderr}`);
      const out = JSON.parse(r.stdout);
      return {
        threads,
        steps: out.steps,
        diagnoseSeconds: out.seconds,
        processWallSeconds: wallSeconds,
        mbPerSecond: bytes / 1e6 / out.seconds,
        peakRssMiB: out.maxRssKiB / 1024,
        peakRssOverRun: (out.maxRssKiB * 1024) / bytes,
      };
    };
    const one = measure(1);
    const two = measure(2);
    return {
      steps: one.steps,
      batchSize: 32,
      width,
      runBytes: bytes,
      writeSeconds,
      // The one-thread figures at the top level (the document's earlier shape), both rows below.
      diagnoseSeconds: one.diagnoseSeconds,
      processWallSeconds: one.processWallSeconds,
      mbPerSecond: one.mbPerSecond,
      peakRssMiB: one.peakRssMiB,
      peakRssOverRun: one.peakRssOverRun,
      threads: [one, two],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
