/**
 * The report's charts as SVG markup, drawn by Observable Plot into linkedom's DOM (no browser):
 * line charts with rules and bands, a bar chart and a token heat map. Colours: the Okabe–Ito
 * palette for series and PuOr (colour-blind-safe, diverging) for signed gradients; every chart
 * carries an aria-label. The numbers come from polgrad's results only; no user string reaches
 * the charting library.
 */
import * as Plot from "@observablehq/plot";
import { parseHTML } from "linkedom";

/** Okabe & Ito's colour-blind-safe palette. */
export const OKABE_ITO: readonly string[] = [
  "#0072B2",
  "#E69F00",
  "#009E73",
  "#CC79A7",
  "#56B4E9",
  "#D55E00",
  "#000000",
];

// The DOM Plot draws into (linkedom's; the lib has no DOM types here, so it is opaque).
type PlotDocument = NonNullable<Plot.PlotOptions["document"]>;
let doc: PlotDocument | null = null;
function document(): PlotDocument {
  if (doc === null)
    doc = parseHTML("<!doctype html><html><body></body></html>")
      .document as unknown as PlotDocument;
  return doc;
}

/** A rendered chart: the SVG markup and its x scale (so a test can place a marker). */
export interface Chart {
  readonly svg: string;
  readonly xDomain: readonly [number, number] | null;
  readonly xRange: readonly [number, number] | null;
}

function render(options: Plot.PlotOptions): Chart {
  const el = Plot.plot({ ...options, document: document() }) as unknown as {
    outerHTML: string;
    scale: (n: string) => { domain?: unknown[]; range?: unknown[] } | undefined;
  };
  const x = el.scale("x");
  const pair = (v: unknown[] | undefined) =>
    v !== undefined && v.length === 2 && v.every((n) => typeof n === "number")
      ? ([v[0], v[1]] as [number, number])
      : null;
  return { svg: el.outerHTML, xDomain: pair(x?.domain), xRange: pair(x?.range) };
}

/** One line series. */
export interface Series {
  readonly name: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

/**
 * A line chart over steps: one line per series (Okabe–Ito colours, a legend), optional vertical
 * rules (e.g. a changepoint, drawn dashed with the class `marker-<id>`), horizontal rules (a
 * threshold), and a shaded band (a confidence interval).
 */
export function lineChart(o: {
  readonly series: readonly Series[];
  readonly xLabel: string;
  readonly yLabel: string;
  readonly ariaLabel: string;
  readonly vRules?: readonly { readonly x: number; readonly id: string }[];
  readonly hRules?: readonly number[];
  readonly band?: readonly { readonly x: number; readonly lo: number; readonly hi: number }[];
  readonly width?: number;
  readonly height?: number;
}): Chart {
  const data = o.series.flatMap((s) => s.points.map((p) => ({ ...p, series: s.name })));
  const marks: Plot.Markish[] = [];
  if (o.band !== undefined && o.band.length > 0)
    marks.push(
      Plot.areaY(o.band, { x: "x", y1: "lo", y2: "hi", fill: OKABE_ITO[0], fillOpacity: 0.18 }),
    );
  for (const y of o.hRules ?? [])
    marks.push(Plot.ruleY([y], { stroke: "#777", strokeDasharray: "3,3" }));
  marks.push(
    Plot.lineY(data, { x: "x", y: "y", stroke: "series", strokeWidth: 1.6 }),
    Plot.dot(data, { x: "x", y: "y", fill: "series", r: data.length > 400 ? 0 : 1.5 }),
  );
  for (const r of o.vRules ?? [])
    marks.push(
      Plot.ruleX([r.x], {
        stroke: "#D55E00",
        strokeWidth: 2,
        strokeDasharray: "6,3",
        className: `marker-${r.id}`,
      }),
    );
  return render({
    width: o.width ?? 900,
    height: o.height ?? 240,
    marginLeft: 56,
    ariaLabel: o.ariaLabel,
    x: { label: o.xLabel },
    y: { label: o.yLabel, grid: true },
    color: { domain: o.series.map((s) => s.name), range: OKABE_ITO, legend: o.series.length > 1 },
    marks,
  });
}

/** Horizontal bars, one per label (the per-sequence gradient mass). */
export function barChart(o: {
  readonly labels: readonly string[];
  readonly values: readonly number[];
  readonly xLabel: string;
  readonly ariaLabel: string;
}): Chart {
  const data = o.values.map((v, i) => ({ label: o.labels[i] as string, v }));
  return render({
    width: 420,
    height: 26 * data.length + 40,
    marginLeft: 70,
    ariaLabel: o.ariaLabel,
    x: { label: o.xLabel, grid: true },
    y: { label: null, domain: o.labels as string[] },
    marks: [Plot.barX(data, { x: "v", y: "label", fill: OKABE_ITO[0] }), Plot.ruleX([0])],
  });
}

/**
 * A token heat map: rows = sequences, columns = positions; response tokens coloured by the signed
 * value (PuOr, symmetric about 0), padding drawn light grey and labelled as padding.
 */
export function heatmap(o: {
  readonly values: ArrayLike<number>;
  readonly mask: ArrayLike<number>;
  readonly rows: number;
  readonly cols: number;
  readonly ariaLabel: string;
}): Chart {
  const cells: { row: number; col: number; v: number | null }[] = [];
  let vmax = 0;
  for (let b = 0; b < o.rows; b++)
    for (let t = 0; t < o.cols; t++) {
      const i = b * o.cols + t;
      const on = (o.mask[i] as number) !== 0;
      const v = on ? (o.values[i] as number) : null;
      if (v !== null && Number.isFinite(v)) vmax = Math.max(vmax, Math.abs(v));
      cells.push({ row: b, col: t, v });
    }
  const size = Math.max(6, Math.min(28, Math.floor(880 / Math.max(o.cols, 1))));
  return render({
    width: Math.min(940, size * o.cols + 90),
    height: Math.min(900, size * o.rows + 70),
    marginLeft: 50,
    padding: 0.04,
    ariaLabel: o.ariaLabel,
    x: { label: "token position", type: "band", ...(o.cols > 40 ? { ticks: [] } : {}) },
    y: { label: "sequence", type: "band" },
    // No ramp legend: Plot draws it on a canvas, which linkedom has not; the page prints the
    // colour key as text beside the map.
    color: { type: "diverging", scheme: "PuOr", domain: [-(vmax || 1), vmax || 1] },
    marks: [
      Plot.cell(
        cells.filter((c) => c.v === null),
        { x: "col", y: "row", fill: "#e4e4e4" },
      ),
      Plot.cell(
        cells.filter((c) => c.v !== null),
        { x: "col", y: "row", fill: "v", title: (c: { v: number }) => String(c.v) },
      ),
    ],
  });
}
