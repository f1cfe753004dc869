/**
 * The frame of polgrad's self-contained HTML reports (docs/report-html.md): one file, inline CSS
 * and SVG, no script, no network request; escaped text everywhere a user's string appears.
 * Pure (no `node:` import).
 */

/** Escape text for HTML content and double-quoted attributes. */
export function esc(s: unknown): string {
  return String(s)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** One panel: a chart (SVG markup we generated) with its reading, docs page and text alternative. */
export interface Panel {
  /** The anchor id (`panel-ess`). */
  readonly id: string;
  readonly title: string;
  /** One line: what the panel shows and how to read it. */
  readonly reading: string;
  /** The docs page it comes from, relative to the package (`docs/diagnostics/ess.md`). */
  readonly docs: string;
  /** Chart markup (SVG from the charting library, or an HTML table) — trusted, built by us. */
  readonly body: string;
  /** The text alternative: the numbers the chart shows, in words. */
  readonly alt: string;
  /** Extra attributes of the panel's figure (data-* values a test reads), already escaped. */
  readonly data?: Readonly<Record<string, string>>;
}

const CSS = `
:root { color-scheme: light; --ink: #1b1b1b; --muted: #555; --line: #d0d0d0; --warn: #8a3b00; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0 auto; max-width: 1040px; padding: 24px; }
h1 { font-size: 1.5em; margin: 0 0 4px; }
h2 { font-size: 1.15em; margin: 0 0 4px; }
.meta { color: var(--muted); margin: 0 0 16px; }
.alarms { border: 2px solid var(--warn); border-radius: 6px; padding: 10px 14px; margin: 0 0 20px; }
.alarms.none { border-color: var(--line); }
.alarms h2 { color: var(--warn); }
.alarms.none h2 { color: var(--ink); }
section.panel { border-top: 1px solid var(--line); padding: 14px 0 18px; break-inside: avoid; page-break-inside: avoid; }
.reading { margin: 0 0 8px; }
.docs { color: var(--muted); font-size: 0.9em; }
figure { margin: 0; }
figcaption { color: var(--muted); font-size: 0.85em; margin-top: 4px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: right; }
th:first-child, td:first-child { text-align: left; }
.bar { display: inline-block; height: 10px; background: #0072b2; vertical-align: middle; }
details { margin: 6px 0; }
summary { cursor: pointer; }
@media print { body { max-width: none; padding: 0; } details { display: block; } a { color: inherit; } }
`;

/**
 * A whole report page.
 *
 * @param o - Title, the meta line, the alarms (each with the panel it links to) and the panels.
 * @returns The HTML text.
 */
export function page(o: {
  readonly title: string;
  readonly meta: string;
  readonly alarms: readonly { readonly text: string; readonly panel: string }[] | null;
  readonly panels: readonly Panel[];
}): string {
  const alarms =
    o.alarms === null
      ? ""
      : o.alarms.length === 0
        ? `<div class="alarms none" id="alarms"><h2>No alarm</h2><p>No detector fired on this run.</p></div>`
        : `<div class="alarms" id="alarms" role="alert"><h2>${o.alarms.length} alarm${o.alarms.length === 1 ? "" : "s"}</h2><ul>${o.alarms
            .map((a) => `<li><a href="#${esc(a.panel)}">${esc(a.text)}</a></li>`)
            .join("")}</ul></div>`;
  const panels = o.panels
    .map((p) => {
      const data = Object.entries(p.data ?? {})
        .map(([k, v]) => ` data-${k}="${v}"`)
        .join("");
      return `<section class="panel" id="${esc(p.id)}" aria-labelledby="${esc(p.id)}-title"><h2 id="${esc(p.id)}-title">${esc(p.title)}</h2><p class="reading">${esc(p.reading)} <span class="docs">(${esc(p.docs)})</span></p><figure${data} role="group" aria-label="${esc(p.title)}">${p.body}<figcaption>${esc(p.alt)}</figcaption></figure></section>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(o.title)}</title><style>${CSS}</style></head>
<body><h1>${esc(o.title)}</h1><p class="meta">${esc(o.meta)}</p>
${alarms}
${panels}
<p class="meta">Made by polgrad. Everything in this file is inline: it makes no network request.</p>
</body></html>
`;
}
