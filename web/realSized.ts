/**
 * The playground for a real-sized batch (docs/playground.md#a-real-sized-batch): past
 * `isRealSized` the page shows the lengths and advantages as a summary with edits that act on
 * every sequence plus a virtualised list of the sequences (only the rows in view are in the
 * document), the which table as each configuration's loss and the spread and top sequences of its
 * gradient mass, the HTML report's raster heat map, and one chosen sequence in detail. Plain DOM
 * code; main.ts owns the state and calls these.
 */

import type { WhichReport } from "../src/browser.ts";
import { RASTER_COLOURS, rasterHeatmap } from "../src/report/html/raster.ts";
import { spread, topIndices } from "../src/report/sequenceSummary.ts";
import { el } from "./dom.ts";

/** Tokens of the chosen sequence listed at once in its table (a window moved by "from token"). */
export const DETAIL_WINDOW = 256;

/** Sequences drawn as bars under the heat map: those of largest gradient mass. */
export const TOP_BARS = 10;

type Attrs = Record<string, string>;

/**
 * A table of `count` rows of fixed height in a scrolling box: only the rows in view (and a few on
 * each side) are in the document, between two spacer rows that keep the scroll height. A row
 * already shown is kept as it is while it stays in view, so an input being typed in keeps its
 * focus and text (its value is in the page's state as it is typed, so a row scrolled away and
 * back shows it again); `update` refreshes the shown rows.
 */
export class VirtualList {
  private readonly rows = new Map<number, HTMLTableRowElement>();
  private readonly before: HTMLTableRowElement;
  private readonly after: HTMLTableRowElement;
  private pending = false;
  private readonly onScroll = (): void => {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  };

  constructor(
    private readonly box: HTMLElement,
    body: HTMLTableSectionElement,
    private readonly count: number,
    private readonly rowHeight: number,
    private readonly make: (b: number) => HTMLTableRowElement,
    private readonly refreshRow: (b: number, row: HTMLTableRowElement) => void,
  ) {
    this.before = el("tr", { class: "spacer", "aria-hidden": "true" });
    this.after = el("tr", { class: "spacer", "aria-hidden": "true" });
    body.replaceChildren(this.before, this.after);
    box.addEventListener("scroll", this.onScroll);
    this.draw();
  }

  /** Show the rows in view, in order, dropping those that left it. */
  draw(): void {
    const overscan = 8;
    const height = this.box.clientHeight || 320;
    const top = Math.max(0, this.box.scrollTop - this.rowHeight);
    const first = Math.max(0, Math.floor(top / this.rowHeight) - overscan);
    const last = Math.min(this.count - 1, Math.ceil((top + height) / this.rowHeight) + overscan);
    for (const [b, row] of this.rows) {
      if (b < first || b > last) {
        row.remove();
        this.rows.delete(b);
      }
    }
    // The kept rows are a contiguous run in order; new ones go beside them, and kept ones are
    // never moved (moving a row would take the focus from an input being typed in).
    let cursor: HTMLTableRowElement = this.before;
    for (let b = first; b <= last; b++) {
      let row = this.rows.get(b);
      if (row === undefined) {
        row = this.make(b);
        row.style.height = `${this.rowHeight}px`;
        this.rows.set(b, row);
        cursor.after(row);
      }
      cursor = row;
    }
    this.before.style.height = `${first * this.rowHeight}px`;
    this.after.style.height = `${Math.max(0, this.count - 1 - last) * this.rowHeight}px`;
  }

  /** Take the rows out of the document and stop following the scroll (another batch is loaded). */
  dispose(): void {
    this.box.removeEventListener("scroll", this.onScroll);
    this.rows.clear();
    this.before.parentElement?.replaceChildren();
  }

  /** Refresh every shown row (new masses after a recompute, new values after an edit to all). */
  update(): void {
    for (const [b, row] of this.rows) this.refreshRow(b, row);
  }

  /** Scroll sequence `b` into view (and draw it). */
  scrollTo(b: number): void {
    this.box.scrollTop = Math.max(0, b * this.rowHeight);
    this.draw();
  }

  /** How many rows are in the document (the test checks the list stays small). */
  get shown(): number {
    return this.rows.size;
  }
}

/** The which table of a real-sized batch: loss, mass min / median / max and top sequences per row. */
export function renderWhichSummary(
  table: HTMLTableElement,
  report: WhichReport,
  fmt: (x: number) => string,
): void {
  const hr = el("tr");
  for (const h of [
    "Configuration",
    "Source",
    "Loss",
    "Mass min",
    "Mass median",
    "Mass max",
    "Top sequences (mass)",
  ])
    hr.append(el("th", { scope: "col" }, h));
  (table.tHead as HTMLTableSectionElement).replaceChildren(hr);
  const num = (x: number, attrs: Attrs) => el("td", { ...attrs, "data-value": String(x) }, fmt(x));
  (table.tBodies[0] as HTMLTableSectionElement).replaceChildren(
    ...report.rows.map((r, i) => {
      const at = { "data-row": String(i) };
      const s = spread(r.gradMass);
      const top = topIndices(r.gradMass);
      const tr = el("tr", { ...at, "data-key": r.key });
      tr.append(
        el("th", { scope: "row", ...at, "data-col": "label" }, r.label),
        el("td", { ...at, "data-col": "source" }, r.source),
        num(r.loss, { ...at, "data-col": "loss" }),
        num(s.min, { ...at, "data-col": "spread-min" }),
        num(s.median, { ...at, "data-col": "spread-median" }),
        num(s.max, { ...at, "data-col": "spread-max" }),
        el(
          "td",
          { ...at, "data-col": "top", "data-value": top.join(",") },
          top.map((b) => `s${b} (${fmt(r.gradMass[b] as number)})`).join(", "),
        ),
      );
      return tr;
    }),
  );
  table.dataset.rows = String(report.rows.length);
  table.dataset.layout = "summary";
}

/** The raster heat map of one configuration's gradient, its reading and its legend; returns the scale's end. */
export function renderRaster(
  host: HTMLElement,
  legend: HTMLElement,
  grad: Float64Array,
  mask: Uint8Array,
  B: number,
  T: number,
  fmt: (x: number) => string,
): number {
  const img = rasterHeatmap(grad, mask, B, T);
  const pic = el("img", {
    id: "heatmap-img",
    src: img.dataUri,
    width: String(Math.min(1024, Math.max(320, img.width))),
    height: String(Math.min(512, Math.max(160, img.height))),
    alt: `Per-token gradient of ${B} sequences × ${T} positions (rows are sequences, columns positions).`,
    "data-cells-per-pixel": `${img.rowsPerPixel}x${img.colsPerPixel}`,
    "data-vmax": String(img.vmax),
  });
  pic.style.imageRendering = "pixelated";
  pic.style.maxWidth = "100%";
  const binned = img.rowsPerPixel > 1 || img.colsPerPixel > 1;
  host.replaceChildren(
    pic,
    el(
      "p",
      { id: "heatmap-summary", class: "help" },
      `${img.width} × ${img.height} pixels${binned ? `, each ${img.rowsPerPixel} sequence(s) × ${img.colsPerPixel} token(s) drawn with the value of largest magnitude among them (a spike or a sign is never averaged away)` : ", one a token"}; the colour scale ends at ±${fmt(img.vmax)}.`,
    ),
  );
  const bar = el("span", { class: "ramp", "aria-hidden": "true" });
  bar.style.background = `linear-gradient(to right, ${RASTER_COLOURS.negative}, ${RASTER_COLOURS.zero}, ${RASTER_COLOURS.positive})`;
  const pad = el("span", { class: "swatch", "aria-hidden": "true" });
  pad.style.background = RASTER_COLOURS.padding;
  legend.replaceChildren(
    el("span", {}, `−${fmt(img.vmax)} `),
    bar,
    el("span", {}, ` +${fmt(img.vmax)}  `),
    pad,
    el("span", {}, " padding"),
    el(
      "p",
      { class: "help" },
      `Legend: ∂loss/∂logprobs from −${fmt(img.vmax)} (purple) through 0 (white) to +${fmt(img.vmax)} (orange); grey is padding. "One sequence" below lists the values.`,
    ),
  );
  return img.vmax;
}

/** Bars of the sequences of largest mass, and the spread of the rest, under the heat map. */
export function renderTopMass(
  host: HTMLElement,
  masses: Float64Array,
  lengths: readonly number[],
  fmt: (x: number) => string,
  colour: string,
): void {
  const s = spread(masses);
  const top = topIndices(masses, TOP_BARS);
  const max = masses[top[0] as number] ?? 0;
  const list = el("ul", { class: "bars", id: "mass-list" });
  for (const b of top) {
    const m = masses[b] as number;
    const li = el("li", { "data-row": String(b), "data-value": String(m) });
    const bar = el("span", { class: "bar", "aria-hidden": "true" });
    bar.style.width = `${max > 0 ? (m / max) * 100 : 0}%`;
    bar.style.background = colour;
    const track = el("span", { class: "track" });
    track.append(bar);
    li.append(el("span", { class: "bar-label" }, `seq ${b}`), track, el("span", {}, fmt(m)));
    list.append(li);
  }
  host.replaceChildren(
    el(
      "p",
      { class: "help", id: "mass-summary" },
      `Over ${masses.length} sequences: min ${fmt(s.min)}, median ${fmt(s.median)}, max ${fmt(s.max)}. The ${top.length} largest (lengths ${top.map((b) => lengths[b]).join(", ")}):`,
    ),
    list,
  );
}

/** The chosen sequence: a strip of its response tokens' gradient (on the heat map's colour scale, `vmax`) and a window of their values. */
export function renderSequenceDetail(
  o: {
    readonly strip: HTMLElement;
    readonly summary: HTMLElement;
    readonly table: HTMLTableElement;
  },
  grad: Float64Array,
  mask: Uint8Array,
  T: number,
  b: number,
  from: number,
  mass: number,
  vmax: number,
  fmt: (x: number) => string,
): void {
  // Its response positions in order, wherever the mask puts them.
  const at: number[] = [];
  for (let t = 0; t < T; t++) if (mask[b * T + t] === 1) at.push(t);
  const L = at.length;
  const values = Float64Array.from(at, (t) => grad[b * T + t] as number);
  const start = Math.min(Math.max(0, from), Math.max(0, L - 1));
  const end = Math.min(L, start + DETAIL_WINDOW);
  o.summary.textContent =
    L === 0
      ? `Sequence ${b} has no response token.`
      : `Sequence ${b}: ${L} response tokens, gradient mass ${fmt(mass)}; listed: response tokens ${start} to ${end - 1}.`;
  if (L === 0) {
    o.strip.replaceChildren();
    o.table.replaceChildren();
    return;
  }
  // On the heat map's scale, so the strip's colours read as the big picture's.
  const img = rasterHeatmap(values, new Uint8Array(L).fill(1), 1, L, { vmax });
  const pic = el("img", {
    id: "detail-img",
    src: img.dataUri,
    width: String(Math.min(1024, Math.max(320, img.width))),
    height: "24",
    alt: `Per-token gradient of sequence ${b}'s ${L} response tokens, left to right.`,
  });
  pic.style.imageRendering = "pixelated";
  pic.style.maxWidth = "100%";
  o.strip.replaceChildren(pic);
  const head = el("tr");
  head.append(
    el("th", { scope: "col" }, "Response token"),
    el("th", { scope: "col" }, "Position t"),
    el("th", { scope: "col" }, "∂loss/∂logprobs"),
  );
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  for (let j = start; j < end; j++) {
    const tr = el("tr", { "data-token": String(j), "data-t": String(at[j]) });
    const v = values[j] as number;
    tr.append(
      el("th", { scope: "row" }, String(j)),
      el("td", {}, String(at[j])),
      el("td", { "data-col": "grad", "data-value": String(v) }, fmt(v)),
    );
    tbody.append(tr);
  }
  o.table.replaceChildren(thead, tbody);
  o.table.dataset.sequence = String(b);
}
