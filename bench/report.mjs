#!/usr/bin/env node
// `npm run bench:report`: the size of the HTML report of a 1,000-step demo run and its render time
// in headless Chromium (issue 16's targets: under 5 MB, under 2 s). Medians of 5 loads; run after
// `npm run build`. Chromium: Debian's (scripts/install-test-tools.sh) or $POLGRAD_CHROMIUM; without
// it only the size and the generation time are printed.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
  const exe = [process.env.POLGRAD_CHROMIUM, "/usr/bin/chromium"].find((p) => p && existsSync(p));
  if (exe === undefined) {
    console.log("render: skipped (no Chromium; scripts/install-test-tools.sh installs it)");
  } else {
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({
      executablePath: exe,
      headless: true,
      args: ["--no-sandbox"],
    });
    const times = [];
    for (let i = 0; i < 5; i++) {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      const t = performance.now();
      await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
      await page.evaluate(
        () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
      );
      times.push(performance.now() - t);
      await page.close();
    }
    await browser.close();
    console.log(
      `render in headless Chromium (load + two frames): ${median(times).toFixed(0)} ms median of 5 (target < 2000 ms)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
