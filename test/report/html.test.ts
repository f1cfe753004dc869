/**
 * The HTML reports (docs/report-html.md): self-contained (no script, no external URL), every
 * user string escaped, the batch report's which table and heat maps, and the run report of the
 * demo run with every detector's panel, the alarms linking to their panels and the changepoint
 * marker at the detected step.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { diagnoseRun, type RunDiagnosis } from "../../src/diagnostics/diagnoseRun.js";
import { ConfigError } from "../../src/errors.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { batchReportHtml, runReportHtml } from "../../src/report/html/reports.js";
import { BUILTIN_BATCH, whichTable } from "../../src/which/index.js";

const PLANT = `<script>alert("x")</script>`;
/** A folder name cannot hold "/": the opening tag alone. */
const DIR_PLANT = `<script>alert("x")`;
let dir = "";
let d: RunDiagnosis;
let html = "";

beforeAll(() => {
  // The run folder's own name carries the planted script tag: the report prints the folder.
  const base = mkdtempSync(join(tmpdir(), "polgrad-html-"));
  dir = join(base, `run ${DIR_PLANT}`);
  mkdirSync(dir);
  writeDemoRun(dir, { steps: 120, batchSize: 16, width: 12 });
  d = diagnoseRun(dir);
  html = runReportHtml(d);
}, 120_000);

/** Self-contained: no script element, no URL outside the page, a CSP that forbids fetches. */
function selfContained(page: string): void {
  expect(page).not.toMatch(/<script/i);
  expect(page).not.toMatch(/(src|href)="(https?:)?\/\//i);
  expect(page).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
}

describe("html reports", () => {
  test("golden: a batch report holds the which table, the mass bars and one heat map per row, padding as padding", () => {
    const r = whichTable(BUILTIN_BATCH, { keepGradients: true });
    // The heat maps draw the gradients the table computed: each row's is its loss's, bit for bit.
    const row0 = r.rows[0] as (typeof r.rows)[number];
    expect(row0.gradLogprobs).toEqual(
      policyLoss(row0.config as PolicyLossConfig, BUILTIN_BATCH).gradLogprobs.data,
    );
    expect(() => batchReportHtml(whichTable(BUILTIN_BATCH), { source: "x" })).toThrow(ConfigError);
    const page = batchReportHtml(r, { source: `batch ${PLANT}.json` });
    selfContained(page);
    expect(page).toContain("batch &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;.json");
    // Every loss and mass of the table, exactly, in data-value attributes.
    r.rows.forEach((row, i) => {
      expect(page).toContain(`<tr data-row="${i}">`);
      expect(page).toContain(`data-col="loss" data-value="${row.loss}"`);
      row.gradMass.forEach((m, b) =>
        expect(page).toContain(`data-col="seq${b}" data-value="${m}"`),
      );
    });
    // One heat map per row; each has B·T − N padding cells (grey) and N coloured cells.
    const heat = page.match(/aria-label="per-token gradient, [^"]+"/g) ?? [];
    expect(heat).toHaveLength(r.rows.length);
    const grey = (page.match(/fill="#e4e4e4"/g) ?? []).length;
    // Plot puts the constant fill on the mark's <g>: one per heat map.
    expect(grey).toBe(r.rows.length);
    const B = r.batchSize;
    const T = r.width;
    expect(B * T - r.numTokens).toBe(12); // lengths 2, 4, 6, 8 of T = 8: 6 + 4 + 2 + 0 padding
  });

  test("golden: the demo run's report shows every detector's panel, the alarms link to them and the changepoint marker sits at the detected step", () => {
    selfContained(html);
    expect(html).not.toContain(DIR_PLANT);
    expect(html).toContain("run &lt;script&gt;alert(&quot;x&quot;)");
    for (const id of ["panel-ess", "panel-mismatch", "panel-clip", "panel-entropy", "panel-length"])
      expect(html).toContain(`<section class="panel" id="${id}"`);
    // Every alarm is listed and links to its panel.
    expect(d.alarms.length).toBeGreaterThanOrEqual(3);
    for (const a of d.alarms)
      expect(html).toMatch(new RegExp(`<li><a href="#panel-[a-z]+">${a.code}`));
    // The injected entropy collapse: the marker's x is the x scale at the detected step.
    const cp = d.entropyTrend?.changepointStep;
    expect(cp).not.toBeNull();
    const fig = html.match(
      /<figure data-x-domain="([^"]+)" data-x-range="([^"]+)" data-changepoint-step="(\d+)"/,
    ) as RegExpMatchArray;
    expect(fig[3]).toBe(String(cp));
    const [d0, d1] = (fig[1] as string).split(",").map(Number) as [number, number];
    const [r0, r1] = (fig[2] as string).split(",").map(Number) as [number, number];
    const x1 = Number(
      html.match(/class="marker-changepoint"[^>]*>\s*<line[^>]*x1="([\d.]+)"/)?.[1],
    );
    expect(Math.abs(x1 - (r0 + ((Number(cp) - d0) / (d1 - d0)) * (r1 - r0)))).toBeLessThan(0.5);
    // The injected catastrophic tokens are named on the mismatch panel.
    expect(html).toMatch(/data-catastrophic-steps="\d+(,\d+)*"/);
  });
});
