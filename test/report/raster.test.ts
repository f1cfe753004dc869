/**
 * Enforces docs/report-html.md#a-real-sized-batch: the raster heat map is a valid indexed PNG
 * (signature, chunk CRCs, the palette, a zlib stream that inflates to one filter byte and one
 * index a pixel); a bin of cells takes the value of largest magnitude; padding is grey and never
 * read; a batch too large for columns and SVG gets the summary table, the sequences that matter
 * and one picture per configuration, rows of bitwise equal gradients sharing one.
 */
import { unzlibSync } from "fflate";
import { describe, expect, test } from "vitest";
import { crc32 } from "../../src/io/_internal/zip.js";
import { COLOUR_STEPS, rasterHeatmap } from "../../src/report/html/raster.js";
import { batchReportHtml } from "../../src/report/html/reports.js";
import { MAX_COLUMN_SEQUENCES } from "../../src/report/realSized.js";
import { whichTable } from "../../src/which/index.js";

/** The chunks of a PNG, each CRC checked. */
function chunks(png: Uint8Array): { type: string; data: Uint8Array }[] {
  expect(Array.from(png.subarray(0, 8))).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const out: { type: string; data: Uint8Array }[] = [];
  for (let at = 8; at < png.length; ) {
    const n = v.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + n);
    expect(v.getUint32(at + 8 + n)).toBe(crc32(png.subarray(at + 4, at + 8 + n)));
    out.push({ type, data });
    at += 12 + n;
  }
  return out;
}

/** The pixels (palette indices) of an indexed 8-bit PNG data URI. */
function pixelsOf(uri: string): { w: number; h: number; px: Uint8Array; palette: Uint8Array } {
  const png = Uint8Array.from(Buffer.from(uri.replace(/^data:image\/png;base64,/, ""), "base64"));
  const cs = chunks(png);
  expect(cs.map((c) => c.type)).toEqual(["IHDR", "PLTE", "IDAT", "IEND"]);
  const ihdr = new DataView((cs[0] as { data: Uint8Array }).data.slice().buffer);
  const w = ihdr.getUint32(0);
  const h = ihdr.getUint32(4);
  expect([ihdr.getUint8(8), ihdr.getUint8(9)]).toEqual([8, 3]);
  const raw = unzlibSync((cs[2] as { data: Uint8Array }).data);
  expect(raw.length).toBe(h * (w + 1));
  const px = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    expect(raw[y * (w + 1)]).toBe(0);
    px.set(raw.subarray(y * (w + 1) + 1, (y + 1) * (w + 1)), y * w);
  }
  return { w, h, px, palette: (cs[1] as { data: Uint8Array }).data };
}

describe("rasterHeatmap", () => {
  test("golden: one pixel a cell; the palette index of each value; padding grey, never read", () => {
    // 2 × 3, the last cell padding holding junk.
    const values = [1, -1, 0, 0.5, -0.25, 1e300];
    const mask = [1, 1, 1, 1, 1, 0];
    const r = rasterHeatmap(values, mask, 2, 3);
    expect([r.width, r.height, r.rowsPerPixel, r.colsPerPixel, r.vmax]).toEqual([3, 2, 1, 1, 1]);
    const { px, palette } = pixelsOf(r.dataUri);
    // index = 2 + round((v / vmax + 1) · STEPS); padding 0.
    const idx = (v: number) => 2 + Math.round((v + 1) * COLOUR_STEPS);
    expect(Array.from(px)).toEqual([idx(1), idx(-1), idx(0), idx(0.5), idx(-0.25), 0]);
    expect(Array.from(palette.subarray(0, 3))).toEqual([228, 228, 228]);
    // The middle of the scale is PuOr's white, its ends purple and orange.
    expect(Array.from(palette.subarray(3 * idx(0), 3 * idx(0) + 3))).toEqual([247, 247, 247]);
    expect(Array.from(palette.subarray(3 * idx(-1), 3 * idx(-1) + 3))).toEqual([84, 39, 136]);
    expect(Array.from(palette.subarray(3 * idx(1), 3 * idx(1) + 3))).toEqual([179, 88, 6]);
  });

  test("golden: a bin of cells takes its value of largest magnitude, its sign kept", () => {
    // One row of 8 cells drawn 2 pixels wide: bins [0.1, -0.9, 0.2, 0.3] and [0.4, 0.5, -0.6, pad].
    const values = [0.1, -0.9, 0.2, 0.3, 0.4, 0.5, -0.6, 7];
    const mask = [1, 1, 1, 1, 1, 1, 1, 0];
    const r = rasterHeatmap(values, mask, 1, 8, { maxWidth: 2 });
    expect([r.width, r.colsPerPixel, r.vmax]).toEqual([2, 4, 0.9]);
    const { px } = pixelsOf(r.dataUri);
    const idx = (v: number) => 2 + Math.round((v / 0.9 + 1) * COLOUR_STEPS);
    expect(Array.from(px)).toEqual([idx(-0.9), idx(-0.6)]);
  });
});

/** whichTable of a `[B, T]` batch with its gradients kept (what the report draws). */
function reportOf(
  B: number,
  T: number,
  lp: Float64Array,
  old: Float64Array,
  adv: Float64Array,
  mask: Uint8Array,
) {
  const matrix = <D>(data: D) => ({ rows: B, cols: T, data });
  return whichTable(
    {
      logprobs: matrix(lp),
      oldLogprobs: matrix(old),
      advantages: adv,
      responseMask: matrix(mask),
    },
    { keepGradients: true },
  );
}

describe("batchReportHtml at real sizes", () => {
  test("golden: a batch too large for columns gets the summary table, the sequences that matter and shared pictures for equal gradients", () => {
    const B = MAX_COLUMN_SEQUENCES + 8;
    const T = 300;
    const lp = Float64Array.from({ length: B * T }, (_, i) => -0.2 - 0.001 * (i % 613));
    const old = Float64Array.from(lp, (x, i) => x - 0.01 * Math.cos(i));
    const mask = Uint8Array.from({ length: B * T }, (_, i) =>
      i % T < 10 + ((i / T) | 0) * 11 ? 1 : 0,
    );
    const adv = Float64Array.from({ length: B }, (_, b) => (b % 3) - 1);
    const report = reportOf(B, T, lp, old, adv, mask);
    const html = batchReportHtml(report, { source: "x", sequences: [5] });
    expect(html).toContain('<th scope="col">mass min</th>');
    expect(html).not.toContain("seq0 L=");
    const imgs = [...html.matchAll(/src="(data:image\/png;base64,[^"]+)"/g)].map(
      (m) => m[1] as string,
    );
    // One picture per configuration, and one per sequence shown.
    const shown = /data-sequences="([\d,]+)"/.exec(html)?.[1]?.split(",").map(Number) ?? [];
    expect(shown[0]).toBe(5);
    expect(imgs.length).toBe(report.rows.length + shown.length);
    for (const uri of imgs) expect(pixelsOf(uri).w).toBeGreaterThan(0);
    // verl's token-mean model is bitwise polgrad's token-mean here: the same picture.
    const pic = (label: string) => {
      const i = report.rows.findIndex((r) => r.label === label);
      return new RegExp(`id="panel-row-${i}"[\\s\\S]*?src="([^"]+)"`).exec(html)?.[1];
    };
    const a = report.rows.find((r) => r.label.startsWith("token-mean"));
    const b = report.rows.find((r) => r.label === "verl@1dda039b 'token-mean'");
    expect(Array.from(a?.gradLogprobs ?? [])).toEqual(Array.from(b?.gradLogprobs ?? []));
    expect(pic(b?.label as string)).toBe(pic(a?.label as string));
  });

  test("golden: a left-padded batch is drawn where its response tokens are: padding grey in its heat maps, each detailed sequence its response tokens in order", () => {
    const B = MAX_COLUMN_SEQUENCES + 1;
    const T = 40;
    const lengths = Array.from({ length: B }, (_, b) => 3 + b);
    // Left padding: the response is the last L_b positions of each row.
    const mask = Uint8Array.from({ length: B * T }, (_, i) =>
      i % T >= T - (lengths[(i / T) | 0] as number) ? 1 : 0,
    );
    const lp = Float64Array.from({ length: B * T }, (_, i) => -0.5 - 0.01 * (i % 37));
    const old = Float64Array.from(lp, (x, i) => x + 0.02 * Math.sin(i));
    const adv = Float64Array.from({ length: B }, (_, b) => (b % 2 === 0 ? 1 : -1));
    const report = reportOf(B, T, lp, old, adv, mask);
    const html = batchReportHtml(report, { source: "left", sequences: [2] });
    const first = /id="panel-row-0"[\s\S]*?src="([^"]+)"/.exec(html)?.[1] as string;
    const { w, h, px } = pixelsOf(first);
    expect([w, h]).toEqual([T, B]);
    // Grey (index 0) exactly at padding, a colour at every response token.
    expect(Array.from(px, (p) => (p === 0 ? 0 : 1))).toEqual(Array.from(mask));
    // Sequence 2's picture: its L_2 response tokens (the last ones of its row), one row per configuration.
    const seq = /data-sequence="2"[\s\S]*?src="([^"]+)"/.exec(html)?.[1] as string;
    const d = pixelsOf(seq);
    expect([d.w, d.h]).toEqual([lengths[2], report.rows.length]);
    const g = report.rows[0]?.gradLogprobs as Float64Array;
    const vmax = Math.max(
      ...Array.from({ length: lengths[2] as number }, (_, j) =>
        Math.abs(g[2 * T + T - (lengths[2] as number) + j] as number),
      ),
      ...report.rows
        .slice(1)
        .flatMap((r) =>
          Array.from((r.gradLogprobs as Float64Array).subarray(2 * T, 3 * T), Math.abs),
        ),
    );
    const idx = (v: number) => 2 + Math.round((v / vmax + 1) * COLOUR_STEPS);
    expect(Array.from(d.px.subarray(0, lengths[2] as number))).toEqual(
      Array.from({ length: lengths[2] as number }, (_, j) =>
        idx(g[2 * T + T - (lengths[2] as number) + j] as number),
      ),
    );
  });
});
