#!/usr/bin/env node
// `npm run bench:report`: the size of the HTML report of a 1,000-step demo run and its render time
// in headless Chromium (issue 16's targets: under 5 MB, under 2 s). Medians of 5 loads; run after
// `npm run build`. Chromium: Debian's (scripts/install-test-tools.sh) or $POLGRAD_CHROMIUM; without
// it only the size and the generation time are printed.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const { writeDemoRun, diagnoseRun } = await import("../dist/index.js");
const { runReportHtml } = await import("../dist/report/html/reports.js");

const steps = Number(process.argv[2] ?? 1000);
const dir = mkdtempSync(join(tmpdir(), "polgrad-bench-report-"));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  writeDemoRun(join(dir, "run"), { steps });
  const d = diagnoseRun(join(dir, "run"));
  const gen = [];
  let html = "";
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    html = runReportHtml(d);
    gen.push(performance.now() - t);
  }
  const file = join(dir, "run.html");
  writeFileSync(file, html);
  const bytes = Buffer.byteLength(html);
  console.log(
    `report of a ${steps}-step demo run: ${(bytes / 1e6).toFixed(2)} MB (target < 5 MB); generated in ${median(gen).toFixed(0)} ms (median of 5)`,
  );
  await drawTime(file, "render of the run report");
  await batchSection(dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The batch report at real sizes (issue 35, point 1): `polgrad report BATCH --out` beside its peer
 * `polgrad loss --algorithm dapo --batch BATCH --out` on the same file, as processes, interleaved
 * (5 rounds after a warm-up), medians; the page's size; targets: at 512×4096 ≤ 10 MB and ≤ 4× the
 * peer; at 128×1024 loaded and drawn in headless Chromium in under 2 s. The batches are seeded
 * noise (log-probabilities uniform in [-3, 0), the worst case for the pictures' compression).
 */
async function batchSection(dir) {
  const { encodeSafetensors } = await import("../dist/io/writeSafetensors.js");
  const { measureProcess } = await import("./_process.mjs");
  const { interleave } = await import("./_timing.mjs");
  const { createRng } = await import("../dist/core/rng.js");
  const bin = new URL("../bin/polgrad.js", import.meta.url).pathname;
  console.log("\nbatch report at real sizes (processes, interleaved, medians of 5):");
  for (const [B, T] of [
    [128, 1024],
    [512, 4096],
  ]) {
    const rng = createRng(35);
    const lp = new Float32Array(B * T);
    const old = new Float32Array(B * T);
    const mask = new Uint8Array(B * T);
    const adv = new Float32Array(B);
    for (let b = 0; b < B; b++) {
      const L = 1 + Math.floor(rng.uniform() * T);
      adv[b] = rng.uniform() * 2 - 1;
      for (let t = 0; t < T; t++) {
        lp[b * T + t] = -3 * rng.uniform();
        old[b * T + t] = lp[b * T + t] - 0.05 * (rng.uniform() - 0.5);
        mask[b * T + t] = t < L ? 1 : 0;
      }
    }
    const file = join(dir, `b${B}x${T}.safetensors`);
    writeFileSync(
      file,
      encodeSafetensors({
        logprobs: { dtype: "F32", shape: [B, T], data: Float64Array.from(lp) },
        old_logprobs: { dtype: "F32", shape: [B, T], data: Float64Array.from(old) },
        advantages: { dtype: "F32", shape: [B], data: Float64Array.from(adv) },
        response_mask: { dtype: "U8", shape: [B, T], data: mask },
      }),
    );
    const page = join(dir, `b${B}x${T}.html`);
    const arms = [
      {
        name: "report",
        run: () => measureProcess(process.execPath, [bin, "report", file, "--out", page]).seconds,
      },
      {
        name: "loss --out (peer)",
        run: () =>
          measureProcess(process.execPath, [
            bin,
            "loss",
            "--algorithm",
            "dapo",
            "--batch",
            file,
            "--out",
            join(dir, "out.safetensors"),
          ]).seconds,
      },
    ];
    const r = await interleave(5, arms);
    const rep = r.report.median;
    const peer = r["loss --out (peer)"].median;
    const mb = Buffer.byteLength(readFileSync(page)) / 1e6;
    const big = B === 512;
    console.log(
      `  ${B}x${T}: page ${mb.toFixed(2)} MB${big ? ` (target <= 10 MB: ${mb <= 10 ? "met" : "NOT met"})` : ""}; report ${rep.toFixed(2)} s, loss --out ${peer.toFixed(2)} s, ratio ${(rep / peer).toFixed(2)}x${big ? ` (target <= 4x: ${rep / peer <= 4 ? "met" : "NOT met"})` : ""}`,
    );
    if (B === 128) await drawTime(page, "  128x1024 draw");
  }
}

/** Load and two frames of a page in headless Chromium, median of 5 (skipped without Chromium). */
async function drawTime(file, what) {
  const exe = [process.env.POLGRAD_CHROMIUM, "/usr/bin/chromium"].find((p) => p && existsSync(p));
  if (exe === undefined) {
    console.log(`${what}: skipped (no Chromium; scripts/install-test-tools.sh installs it)`);
    return;
  }
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: exe,
    headless: true,
    args: ["--no-sandbox"],
  });
  const times = [];
  for (let i = 0; i < 5; i++) {
    const p = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const t = performance.now();
    await p.goto(pathToFileURL(file).href, { waitUntil: "load" });
    await p.evaluate(
      () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
    );
    times.push(performance.now() - t);
    await p.close();
  }
  await browser.close();
  const ms = median(times);
  console.log(
    `${what} in headless Chromium (load + two frames): ${ms.toFixed(0)} ms median of 5 (target < 2000 ms: ${ms < 2000 ? "met" : "NOT met"})`,
  );
}
