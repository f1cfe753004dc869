/**
 * The HTML reports (docs/report-html.md): `batchReportHtml` — the which table with per-sequence
 * gradient-mass bars and a per-token gradient heat map per configuration — and `runReportHtml` —
 * per-step traces of every run detector with the alarms on top linking to their panels. One
 * self-contained file each (page.ts); the charts are drawn by charts.ts.
 */
import { g4 } from "../../core/pyFormat.js";
import type { LogsDiagnosis } from "../../diagnostics/diagnoseLogs.js";
import type { RunDiagnosis } from "../../diagnostics/diagnoseRun.js";
import type { QuantitySeries } from "../../diagnostics/logs/detectors.js";
import { LOG_QUANTITIES, type LogQuantity } from "../../diagnostics/logs/quantities.js";
import type { RunStep } from "../../diagnostics/runSteps.js";
import { ConfigError, fail } from "../../errors.js";
import type { WhichReport } from "../../which/whichTable.js";
import { DETAIL_SEQUENCES, isRealSized } from "../realSized.js";
import { shareSpread, spread, topIndices } from "../sequenceSummary.js";
import { barChart, type Chart, heatmap, lineChart, type Series } from "./charts.js";
import { esc, type Panel, page } from "./page.js";
import { rasterHeatmap } from "./raster.js";

const num = (x: number) => (Number.isFinite(x) ? g4(x) : String(x));

function chartData(c: Chart): Record<string, string> {
  return c.xDomain === null || c.xRange === null
    ? {}
    : { "x-domain": c.xDomain.join(","), "x-range": c.xRange.join(",") };
}

/** Options of {@link batchReportHtml}. */
export interface BatchReportOptions {
  /** Where the batch came from (shown escaped). */
  readonly source: string;
  /** Sequences to show in detail beside those that matter most (a real-sized batch). */
  readonly sequences?: readonly number[];
  /** Called after each configuration's panel is drawn (a progress bar). */
  readonly progress?: (done: number, total: number) => void;
}

/**
 * The report of one batch.
 *
 * @param report - whichTable's report of the batch, made with `keepGradients: true` (each row's
 *   gradient is drawn as it was computed for the table, not again).
 * @param o - `source`: where the batch came from (shown escaped).
 * @returns The HTML text.
 * @throws {ConfigError} E_CONFIG when a row carries no gradient (the report was made without keepGradients).
 * @derivation docs/report-html.md#a-batch
 * @enforcedBy test/report/html.test.ts > html reports > golden: a batch report holds the which table, the mass bars and one heat map per row, padding as padding
 * @since 0.2.0
 */
export function batchReportHtml(report: WhichReport, o: BatchReportOptions): string {
  const B = report.batchSize;
  const T = report.width;
  if (isRealSized(B, T)) return largeBatchHtml(report, o);
  const lengths = report.lengths;
  const mask = maskOf(report);
  const maxMass = Math.max(...report.rows.flatMap((r) => Array.from(r.gradMass)), 1e-300);
  const head = `<tr><th scope="col">configuration</th><th scope="col">loss</th>${lengths.map((L, b) => `<th scope="col">seq${b} L=${L}</th>`).join("")}</tr>`;
  const body = report.rows
    .map(
      (r, i) =>
        `<tr data-row="${i}"><td>${esc(r.label)}</td><td data-col="loss" data-value="${r.loss}">${num(r.loss)}</td>${Array.from(
          r.gradMass,
        )
          .map(
            (m, b) =>
              `<td data-col="seq${b}" data-value="${m}"><span class="bar" style="width:${((60 * m) / maxMass).toFixed(1)}px" aria-hidden="true"></span> ${num(m)}</td>`,
          )
          .join("")}</tr>`,
    )
    .join("");
  const table = `<table aria-label="the which table"><thead>${head}</thead><tbody>${body}</tbody></table>`;
  const panels: Panel[] = [
    {
      id: "panel-which",
      title: "Which loss: one batch, every configuration",
      reading:
        "Each row is one configuration's loss on the same tensors and its gradient mass Σ_t |∂loss/∂logprobs| per sequence: where the rows disagree, the aggregation decides which sequences the update listens to.",
      docs: "docs/derivations/variants.md#which-grpo-am-i-running",
      body: table,
      alt: `${report.rows.length} configurations on B = ${B}, T = ${T}, N = ${report.numTokens} tokens, lengths ${lengths.join(", ")}.`,
    },
  ];
  report.rows.forEach((r, i) => {
    const grad = gradOf(r);
    const bars = barChart({
      labels: lengths.map((L, b) => `seq${b} L=${L}`),
      values: Array.from(r.gradMass),
      xLabel: "gradient mass Σ_t |∂loss/∂logprobs|",
      ariaLabel: `gradient mass per sequence, ${r.key}`,
    });
    const heat = heatmap({
      values: grad,
      mask,
      rows: B,
      cols: T,
      ariaLabel: `per-token gradient, ${r.key}`,
    });
    panels.push({
      id: `panel-row-${i}`,
      title: r.label,
      reading: `Loss ${num(r.loss)}. Bars: the gradient mass of each sequence; heat map: ∂loss/∂logprobs per token (purple negative, orange positive, grey padding).`,
      docs: "docs/derivations/aggregation.md",
      body: `<details${i === 0 ? " open" : ""}><summary>gradient mass and per-token gradient</summary>${bars.svg}${heat.svg}<p class="docs">colour key: <span style="color:#542788">■</span> negative ∂loss/∂logprobs, <span style="color:#f7f7f7;background:#999">■</span> 0, <span style="color:#b35806">■</span> positive; <span style="color:#e4e4e4;background:#999">■</span> padding (no gradient by contract)</p></details>`,
      alt: `gradient mass per sequence: ${Array.from(r.gradMass, (m, b) => `seq${b} ${num(m)}`).join(", ")}`,
    });
  });
  return page({
    title: "polgrad report: one batch",
    meta: `batch ${o.source}`,
    alarms: null,
    panels,
  });
}

/** The batch's response mask, kept by whichTable beside the gradients (any mask: left or right padded, or with holes). */
function maskOf(report: WhichReport): Uint8Array {
  if (report.responseMask === undefined)
    throw fail(
      ConfigError,
      "batchReportHtml",
      "report",
      "a which report made with { keepGradients: true }",
      "a report without responseMask",
    );
  return report.responseMask;
}

function gradOf(r: WhichReport["rows"][number]): Float64Array {
  if (r.gradLogprobs === undefined)
    throw fail(
      ConfigError,
      "batchReportHtml",
      "report",
      "a which report made with { keepGradients: true }",
      `row ${r.key} without gradLogprobs`,
    );
  return r.gradLogprobs;
}

/**
 * The page of a real-sized batch (docs/report-html.md#a-real-sized-batch): the which table as
 * each configuration's loss and the spread and top sequences of its gradient mass; the
 * sequences that matter most (top mass, most disputed between configurations, longest,
 * shortest, and those asked for), each with its per-token gradient under every configuration;
 * and one raster heat map per configuration.
 */
function largeBatchHtml(report: WhichReport, o: BatchReportOptions): string {
  const B = report.batchSize;
  const T = report.width;
  const lengths = report.lengths;
  const mask = maskOf(report);
  const rows = report.rows;
  const grads = rows.map(gradOf);
  const head = `<tr><th scope="col">configuration</th><th scope="col">loss</th><th scope="col">mass min</th><th scope="col">median</th><th scope="col">max</th><th scope="col">top sequences</th></tr>`;
  const body = rows
    .map((r, i) => {
      const m = spread(r.gradMass);
      const top = topIndices(r.gradMass)
        .map((b) => `s${b} (L=${lengths[b]}) ${num(r.gradMass[b] as number)}`)
        .join(", ");
      return `<tr data-row="${i}"><td>${esc(r.label)}</td><td data-col="loss" data-value="${r.loss}">${num(r.loss)}</td><td>${num(m.min)}</td><td>${num(m.median)}</td><td>${num(m.max)}</td><td>${esc(top)}</td></tr>`;
    })
    .join("");
  // The sequences that matter most, with why.
  const why = new Map<number, string[]>();
  const add = (b: number, reason: string) => {
    if (b < 0 || b >= B) return;
    why.set(b, [...(why.get(b) ?? []), reason]);
  };
  for (const b of o.sequences ?? []) add(b, "asked for");
  const first = rows[0];
  if (first !== undefined)
    for (const b of topIndices(first.gradMass, 2)) add(b, `top gradient mass (${first.label})`);
  const share = shareSpread(
    rows.map((r) => r.gradMass),
    B,
  ).spread;
  for (const b of topIndices(share, 2)) add(b, "most disputed between configurations");
  const byLength = Array.from({ length: B }, (_, b) => b).sort(
    (a, b) => (lengths[b] as number) - (lengths[a] as number) || a - b,
  );
  add(byLength[0] as number, "longest");
  add(byLength[B - 1] as number, "shortest");
  const chosen = [...why.keys()].slice(0, DETAIL_SEQUENCES + (o.sequences?.length ?? 0));
  const detail = chosen
    .map((b) => {
      // The sequence's response positions in order, wherever the mask puts them.
      const at: number[] = [];
      for (let t = 0; t < T; t++) if (mask[b * T + t] === 1) at.push(b * T + t);
      const L = at.length;
      const field = new Float64Array(rows.length * Math.max(L, 1));
      grads.forEach((g, i) => {
        at.forEach((k, j) => {
          field[i * L + j] = g[k] as number;
        });
      });
      const img = rasterHeatmap(
        field,
        new Uint8Array(field.length).fill(L > 0 ? 1 : 0),
        rows.length,
        Math.max(L, 1),
        { maxHeight: rows.length },
      );
      const masses = rows.map((r) => `${esc(r.label)} ${num(r.gradMass[b] as number)}`).join("; ");
      return `<div class="sequence" data-sequence="${b}"><h3>s${b} (L=${L}): ${esc((why.get(b) ?? []).join(", "))}</h3><img src="${img.dataUri}" width="${Math.min(900, Math.max(200, img.width))}" height="${Math.max(60, rows.length * 14)}" style="image-rendering:pixelated" alt="${esc(`per-token gradient of sequence ${b} under each configuration (one row each, in the table's order)`)}"><p class="docs">gradient mass: ${masses}</p></div>`;
    })
    .join("");
  const panels: Panel[] = [
    {
      id: "panel-which",
      title: "Which loss: one batch, every configuration",
      reading: `Each row is one configuration's loss on the same ${B} sequences and the spread of its gradient mass Σ_t |∂loss/∂logprobs| per sequence, with the sequences that get the most.`,
      docs: "docs/report-html.md#a-real-sized-batch",
      body: `<table aria-label="the which table"><thead>${head}</thead><tbody>${body}</tbody></table>`,
      alt: `${rows.length} configurations on B = ${B}, T = ${T}, N = ${report.numTokens} tokens; lengths ${spread(lengths).min} to ${spread(lengths).max}.`,
    },
    {
      id: "panel-sequences",
      title: "The sequences that matter most",
      reading:
        "Each picture is one sequence's ∂loss/∂logprobs per token (columns) under every configuration (rows, in the table's order): purple negative, orange positive.",
      docs: "docs/report-html.md#a-real-sized-batch",
      body: detail,
      alt: `${chosen.length} sequences: ${chosen.map((b) => `s${b}`).join(", ")}.`,
      data: { sequences: chosen.join(",") },
    },
  ];
  o.progress?.(0, rows.length);
  // Rows with bitwise the same gradient (a framework's model of a polgrad row) share one picture.
  const drawn: { grad: Float64Array; sig: number; img: ReturnType<typeof rasterHeatmap> }[] = [];
  rows.forEach((r, i) => {
    const grad = grads[i] as Float64Array;
    let sig = 0;
    for (let k = 0; k < grad.length; k += 61) sig += grad[k] as number;
    const same = drawn.find((d) => d.sig === sig && sameValues(d.grad, grad));
    const img = same?.img ?? rasterHeatmap(grad, mask, B, T);
    if (same === undefined) drawn.push({ grad, sig, img });
    const m = spread(r.gradMass);
    panels.push({
      id: `panel-row-${i}`,
      title: r.label,
      reading: `Loss ${num(r.loss)}. ∂loss/∂logprobs per token (purple negative, orange positive, grey padding)${img.colsPerPixel > 1 || img.rowsPerPixel > 1 ? `; each pixel is ${img.rowsPerPixel} sequence(s) × ${img.colsPerPixel} token(s), drawn with the value of largest magnitude among them` : ""}.`,
      docs: "docs/report-html.md#a-real-sized-batch",
      body: `<details${i === 0 ? " open" : ""}><summary>per-token gradient</summary><img src="${img.dataUri}" width="${Math.min(940, Math.max(300, img.width))}" height="${Math.min(600, Math.max(150, img.height))}" style="image-rendering:pixelated" alt="${esc(`per-token gradient, ${r.key}`)}"></details>`,
      alt: `gradient mass per sequence: min ${num(m.min)}, median ${num(m.median)}, max ${num(m.max)}; colour scale ±${num(img.vmax)}.`,
      data: { "cells-per-pixel": `${img.rowsPerPixel}x${img.colsPerPixel}` },
    });
    o.progress?.(i + 1, rows.length);
  });
  return page({
    title: "polgrad report: one batch",
    meta: `batch ${o.source}: B = ${B}, T = ${T}`,
    alarms: null,
    panels,
  });
}

/** Bitwise the same values (Object.is per element: 0 and −0 differ, NaN equals NaN). */
function sameValues(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) {
    const x = a[k] as number;
    const y = b[k] as number;
    if (x !== y || (x === 0 && 1 / x !== 1 / y)) {
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      return false;
    }
  }
  return true;
}

function series(
  steps: readonly RunStep[],
  pick: (s: RunStep) => number | null,
): { x: number; y: number }[] {
  const out: { x: number; y: number }[] = [];
  for (const s of steps) {
    const v = pick(s);
    if (v !== null && Number.isFinite(v)) out.push({ x: s.step, y: v });
  }
  return out;
}

const PANEL_OF: Readonly<Record<string, string>> = {
  ess_low: "panel-ess",
  mismatch_overflow: "panel-mismatch",
  catastrophic_tokens: "panel-mismatch",
  entropy_collapse: "panel-entropy",
  clip_shift: "panel-clip",
  kl_ref_shift: "panel-kl-ref",
  truncation_shift: "panel-rewards",
  length_bias: "panel-length",
};

/**
 * The report of a run (diagnoseRun's result).
 *
 * @param d - The run diagnosis.
 * @param o - `essAlarm`: the ESS/n threshold drawn on its panel (default 0.5).
 * @returns The HTML text.
 * @derivation docs/report-html.md#a-run
 * @enforcedBy test/report/html.test.ts > html reports > golden: the demo run's report shows every detector's panel, the alarms link to them and the changepoint marker sits at the detected step
 * @since 0.2.0
 */
export function runReportHtml(d: RunDiagnosis, o: { readonly essAlarm?: number } = {}): string {
  const steps = d.steps;
  const panels: Panel[] = [];
  const add = (p: Omit<Panel, "body" | "data"> & { chart: Chart; data?: Record<string, string> }) =>
    panels.push({ ...p, body: p.chart.svg, data: { ...chartData(p.chart), ...(p.data ?? {}) } });
  const ess = series(steps, (s) => s.essRatio);
  if (ess.length > 0)
    add({
      id: "panel-ess",
      title: "Importance ESS / n per step",
      reading:
        "The effective sample size of the old→new importance weights over the batch size: 1 is on-policy, a fall means a few sequences carry the update.",
      docs: "docs/diagnostics/ess.md",
      chart: lineChart({
        series: [{ name: "ESS/n", points: ess }],
        xLabel: "step",
        yLabel: "ESS / n",
        ariaLabel: "ESS/n per step",
        hRules: [o.essAlarm ?? 0.5],
      }),
      alt: `ESS/n from ${num((ess[0] as { y: number }).y)} at step ${(ess[0] as { x: number }).x} to ${num((ess.at(-1) as { y: number }).y)} at step ${(ess.at(-1) as { x: number }).x}; minimum ${num(Math.min(...ess.map((p) => p.y)))}.`,
    });
  const gap = series(steps, (s) => s.mismatchGapStd);
  const cat = series(steps, (s) => s.catastrophicCount);
  if (gap.length > 0)
    add({
      id: "panel-mismatch",
      title: "Trainer vs rollout log-prob mismatch per step",
      reading:
        "The std of trainer − rollout log-probs per step, and the count of catastrophic tokens (a gap beyond the threshold): a spike is an inference-engine mismatch, not learning.",
      docs: "docs/diagnostics/mismatch.md",
      chart: lineChart({
        series: [
          { name: "gap std", points: gap },
          { name: "catastrophic tokens", points: cat },
        ],
        xLabel: "step",
        yLabel: "value",
        ariaLabel: "mismatch per step",
      }),
      alt: `gap std max ${num(Math.max(...gap.map((p) => p.y)))}; ${d.catastrophic.total} catastrophic tokens${d.catastrophic.steps.length > 0 ? ` at steps ${d.catastrophic.steps.slice(0, 10).join(", ")}` : ""}.`,
      data: { "catastrophic-steps": d.catastrophic.steps.join(",") },
    });
  const quad: Series[] = [
    { name: "A>0 clipped high (killed)", points: series(steps, (s) => s.clipPosHighFrac) },
    { name: "A>0 clipped low", points: series(steps, (s) => s.clipPosLowFrac) },
    { name: "A<0 clipped low (killed)", points: series(steps, (s) => s.clipNegLowFrac) },
    { name: "A<0 clipped high", points: series(steps, (s) => s.clipNegHighFrac) },
    { name: "killed by the clip", points: series(steps, (s) => s.clipKilledFrac) },
    { name: "zero advantage (no gradient)", points: series(steps, (s) => s.zeroAdvFrac) },
  ];
  if ((quad[4] as Series).points.length > 0)
    add({
      id: "panel-clip",
      title: "PPO clip census per step: the four quadrants",
      reading:
        "Fractions of response tokens outside the clip band, by the sign of the advantage: the killed quadrants get no gradient; a growing killed share is a policy moving too fast for its clip. Zero-advantage tokens get no gradient either, whatever the ratio: they are drawn apart, not counted as the clip's.",
      docs: "docs/diagnostics/clipping.md",
      chart: lineChart({
        series: quad,
        xLabel: "step",
        yLabel: "fraction of tokens",
        ariaLabel: "clip quadrants per step",
      }),
      alt: `fraction killed by the clip from ${num(((quad[4] as Series).points[0] as { y: number }).y)} to ${num(((quad[4] as Series).points.at(-1) as { y: number }).y)}.`,
    });
  const ent = series(steps, (s) => s.entropy);
  if (ent.length > 0) {
    const tr = d.entropyTrend;
    const trendLine: Series[] =
      tr === null
        ? []
        : [
            {
              name: "trend (Theil–Sen)",
              points: ent
                .slice(-tr.window)
                .map((p) => ({ x: p.x, y: tr.intercept + tr.slope * p.x })),
            },
          ];
    const cp = tr?.changepointStep ?? null;
    add({
      id: "panel-entropy",
      title: "Token entropy per step, its trend and changepoint",
      reading:
        "The policy's entropy estimate per step with the Theil–Sen trend over the trailing window; the dashed marker is the detected changepoint beyond the trend (entropy collapse).",
      docs: "docs/diagnostics/run.md#alarms",
      chart: lineChart({
        series: [{ name: "entropy", points: ent }, ...trendLine],
        xLabel: "step",
        yLabel: "nats",
        ariaLabel: "entropy per step",
        ...(cp === null ? {} : { vRules: [{ x: cp, id: "changepoint" }] }),
      }),
      alt: `entropy from ${num((ent[0] as { y: number }).y)} to ${num((ent.at(-1) as { y: number }).y)}${tr === null ? "" : `; trend slope ${num(tr.slope)} per step`}${cp === null ? "; no changepoint" : `; changepoint at step ${cp}`}.`,
      data: { "changepoint-step": cp === null ? "" : String(cp) },
    });
  }
  const kl = series(steps, (s) => s.klRef ?? null);
  if (kl.length > 0)
    add({
      id: "panel-kl-ref",
      title: "KL to the reference per step",
      reading:
        "The mean k3 estimate of KL(policy ‖ reference) over each step's response tokens: a steady climb is the policy leaving its reference; a jump beyond the trend is an alarm.",
      docs: "docs/diagnostics/run.md#kl-to-the-reference",
      chart: lineChart({
        series: [{ name: "KL to the reference (k3)", points: kl }],
        xLabel: "step",
        yLabel: "nats",
        ariaLabel: "KL to the reference per step",
      }),
      alt: `KL to the reference from ${num((kl[0] as { y: number }).y)} to ${num((kl.at(-1) as { y: number }).y)}.`,
    });
  const reward = series(steps, (s) => s.rewardMean ?? null);
  const rewardStd = series(steps, (s) => s.rewardStd ?? null);
  const truncation = series(steps, (s) => s.truncationRate ?? null);
  if (reward.length > 0 || truncation.length > 0)
    add({
      id: "panel-rewards",
      title: "Rewards and truncation per step",
      reading:
        "The mean and the standard deviation of the step's sequence rewards, and the fraction of its sequences cut at the length limit: a reward std falling to 0 leaves GRPO no signal; a rising truncation rate is the policy running into the length budget.",
      docs: "docs/diagnostics/run.md#rewards-and-truncation",
      chart: lineChart({
        series: [
          ...(reward.length > 0 ? [{ name: "reward mean", points: reward }] : []),
          ...(rewardStd.length > 0 ? [{ name: "reward std", points: rewardStd }] : []),
          ...(truncation.length > 0 ? [{ name: "truncated (fraction)", points: truncation }] : []),
        ],
        xLabel: "step",
        yLabel: "value",
        ariaLabel: "rewards and truncation per step",
      }),
      alt: `${reward.length > 0 ? `reward mean from ${num((reward[0] as { y: number }).y)} to ${num((reward.at(-1) as { y: number }).y)}` : "no reward"}; ${truncation.length > 0 ? `truncated from ${num((truncation[0] as { y: number }).y)} to ${num((truncation.at(-1) as { y: number }).y)}` : "no truncation flag"}.`,
    });
  const slope = series(steps, (s) => s.lengthSlope);
  if (slope.length > 0) {
    const band = steps
      .filter((s) => s.lengthCiLow !== null && s.lengthCiHigh !== null)
      .map((s) => ({ x: s.step, lo: s.lengthCiLow as number, hi: s.lengthCiHigh as number }));
    add({
      id: "panel-length",
      title: "Length-bias slope per step with its 95% CI",
      reading:
        "The slope of per-sequence gradient weight on sequence length (HC3 interval shaded): an interval that leaves 0 means the update favours long or short sequences.",
      docs: "docs/diagnostics/length-bias.md",
      chart: lineChart({
        series: [{ name: "slope", points: slope }],
        xLabel: "step",
        yLabel: "slope",
        ariaLabel: "length-bias slope per step",
        hRules: [0],
        band,
      }),
      alt: `${d.lengthBias?.stepsExcludingZero ?? 0} steps whose interval excludes 0${d.lengthBias?.firstExcludingZero == null ? "" : `, first at step ${d.lengthBias.firstExcludingZero}`}.`,
    });
  }
  const alarms = d.alarms.map((a) => ({
    text: `${a.code}${a.step === null ? "" : ` (step ${a.step})`}: ${a.message}`,
    panel: PANEL_OF[a.code] ?? "alarms",
  }));
  return page({
    title: "polgrad report: a run",
    meta: `${d.dir}: ${steps.length} steps${d.stride === null ? "" : `, stride ${d.stride}`}`,
    alarms,
    panels,
  });
}

/** Points drawn per logged series (a longer series is thinned to every k-th point, its alarm steps kept). */
export const MAX_LOG_CHART_POINTS = 2000;

/**
 * The report of a diagnosis of metric logs: per run, one panel per mapped quantity (the metric as
 * logged, finite points, a marker at each alarm's step), alarms on top linking to their panel.
 *
 * @param d - diagnoseLogs' result.
 * @param series - Per run (by its name), per quantity, the metric's points (quantitySeries).
 * @returns The page.
 * @derivation docs/diagnostics/logs.md#the-command
 * @enforcedBy test/cli/diagnoseLogs.test.ts > diagnose on metric logs > golden: --html and --json on logs: the alarm links to the entropy panel, the document validates
 * @since 0.1.0
 */
export function logsReportHtml(
  d: LogsDiagnosis,
  series: ReadonlyMap<string, Partial<Record<LogQuantity, QuantitySeries>>>,
): string {
  const panels: Panel[] = [];
  const alarms: { text: string; panel: string }[] = [];
  d.runs.forEach((r, k) => {
    const of = series.get(r.run) ?? {};
    const runLabel = r.run === "" ? d.path : r.run;
    for (const q of LOG_QUANTITIES) {
      const s = of[q];
      if (s === undefined) continue;
      const id = `panel-${k}-${q}`;
      const marks = r.family.findings
        .filter((f) => f.quantity === q && f.alarm && f.step !== undefined && f.step !== null)
        .map((f) => f.step as number);
      const pts: { x: number; y: number }[] = [];
      const stride = Math.max(1, Math.ceil(s.values.length / MAX_LOG_CHART_POINTS));
      for (let i = 0; i < s.values.length; i++) {
        const x = s.steps[i] as number;
        const y = s.values[i] as number;
        if (Number.isFinite(y) && (i % stride === 0 || marks.includes(x))) pts.push({ x, y });
      }
      if (pts.length === 0) continue;
      const sum = r.series[q];
      const chart = lineChart({
        series: [{ name: s.metric, points: pts }],
        xLabel: "step",
        yLabel: q,
        ariaLabel: `${s.metric} per step`,
        ...(marks.length === 0 ? {} : { vRules: marks.map((x) => ({ x, id: "alarm" })) }),
      });
      panels.push({
        id,
        title: `${runLabel}: ${s.metric} (${q})`,
        reading: `The logged ${q} per step${stride > 1 ? `, every ${stride}th point drawn` : ""}; a dashed marker is an alarm's step.`,
        docs: "docs/diagnostics/log-detectors.md",
        body: chart.svg,
        data: { ...chartData(chart), "alarm-steps": marks.join(",") },
        alt:
          sum === undefined
            ? `${s.metric}: no finite point.`
            : `${s.metric} from ${num(sum.first.value)} at step ${sum.first.step} to ${num(sum.last.value)} at step ${sum.last.step}; minimum ${num(sum.min.value)}, maximum ${num(sum.max.value)}${marks.length === 0 ? "" : `; alarm at step ${marks.join(", ")}`}.`,
      });
    }
    for (const a of r.alarms) {
      const f = r.family.findings.find((x) => x.detector === a.code);
      alarms.push({
        text: `${a.code}${a.step === null ? "" : ` (step ${a.step})`}: ${d.runs.length > 1 ? `${runLabel}: ` : ""}${a.message}`,
        panel: f === undefined ? "alarms" : `panel-${k}-${f.quantity}`,
      });
    }
  });
  return page({
    title: "polgrad report: logged metrics",
    meta: `${d.path}: ${d.runs.length} run(s), ${d.runs.map((r) => `${r.run === "" ? "(the path)" : r.run} (${r.format}, steps ${r.steps.first ?? "-"}..${r.steps.last ?? "-"})`).join(", ")}`,
    alarms,
    panels,
  });
}
