/**
 * Heat maps as rasters (docs/report-html.md#heat-maps-at-any-size): a `[B, T]` signed field
 * (∂loss/∂logprobs) drawn as a PNG data URI, one pixel per cell while the picture is small
 * enough, else each pixel a bin of cells holding the bin's value of largest magnitude (a spike or a
 * sign is never averaged away). Padding is drawn grey and never read. Colours are 32 steps of
 * PuOr on each side of 0 (65 and the padding's grey: an indexed PNG, one byte a pixel, which
 * keeps a 1024 × 512 map of noise under 0.5 MB). The PNG is written here (signature, IHDR, PLTE,
 * one zlib IDAT by fflate at level 3, IEND; CRC-32 of src/io/_internal/zip.ts): a few lines
 * that no dependency would shorten. Level 3, not 6: on the 512×4096 noise batch of
 * bench/report.mjs level 6 made the page 2 % smaller and took 89 ms instead of 40. Pure: no `node:` import.
 */

import { zlibSync } from "fflate";
import { crc32 } from "../../io/_internal/zip.js";

/** The largest picture a heat map is drawn at, in pixels. */
export const MAX_RASTER_WIDTH = 1024;
export const MAX_RASTER_HEIGHT = 512;

/** A rendered heat map. */
export interface RasterHeatmap {
  /** `data:image/png;base64,…` */
  readonly dataUri: string;
  readonly width: number;
  readonly height: number;
  /** Cells per pixel along each axis (1: one pixel per cell). */
  readonly rowsPerPixel: number;
  readonly colsPerPixel: number;
  /** The largest |value| over the response cells (the colour scale's end). */
  readonly vmax: number;
}

/** PuOr's ends and middle (ColorBrewer, as the SVG heat maps use): negative, 0, positive. */
const NEG: readonly [number, number, number] = [84, 39, 136];
const MID: readonly [number, number, number] = [247, 247, 247];
const POS: readonly [number, number, number] = [179, 88, 6];
const PAD: readonly [number, number, number] = [228, 228, 228];

/** The scale's colours as CSS (the playground's legend draws its bar from these). */
export const RASTER_COLOURS: {
  readonly negative: string;
  readonly zero: string;
  readonly positive: string;
  readonly padding: string;
} = {
  negative: `rgb(${NEG.join(", ")})`,
  zero: `rgb(${MID.join(", ")})`,
  positive: `rgb(${POS.join(", ")})`,
  padding: `rgb(${PAD.join(", ")})`,
};

/** Steps of the scale on each side of 0. */
export const COLOUR_STEPS = 32;

/** The palette: 0 padding, 1 a non-finite value (black), 2 + k for k in [0, 2·STEPS] (−vmax..vmax). */
const PALETTE: Uint8Array = (() => {
  const n = 2 + 2 * COLOUR_STEPS + 1;
  const p = new Uint8Array(3 * n);
  p.set(PAD, 0);
  p.set([0, 0, 0], 3);
  for (let k = 0; k <= 2 * COLOUR_STEPS; k++) {
    const x = (k - COLOUR_STEPS) / COLOUR_STEPS;
    const [a, w] = x < 0 ? [NEG, -x] : [POS, x];
    for (let c = 0; c < 3; c++)
      p[3 * (2 + k) + c] = Math.round(
        (MID[c] as number) + ((a[c] as number) - (MID[c] as number)) * w,
      );
  }
  return p;
})();

function index(v: number, vmax: number): number {
  if (!Number.isFinite(v)) return 1;
  const x = vmax > 0 ? Math.max(-1, Math.min(1, v / vmax)) : 0;
  return 2 + Math.round((x + 1) * COLOUR_STEPS);
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  v.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** An indexed image (one byte a pixel into `palette`, RGB triples) as PNG bytes. @internal */
export function encodePng(
  pixels: Uint8Array,
  width: number,
  height: number,
  palette: Uint8Array,
): Uint8Array {
  const raw = new Uint8Array(height * (1 + width));
  for (let y = 0; y < height; y++) {
    // Filter type 0 (none) before each row.
    raw.set(pixels.subarray(y * width, (y + 1) * width), y * (1 + width) + 1);
  }
  const ihdr = new Uint8Array(13);
  const h = new DataView(ihdr.buffer);
  h.setUint32(0, width);
  h.setUint32(4, height);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 3; // colour type: indexed
  const parts = [
    Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("PLTE", palette),
    chunk("IDAT", zlibSync(raw, { level: 3 })),
    chunk("IEND", new Uint8Array(0)),
  ];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    png.set(p, at);
    at += p.length;
  }
  return png;
}

function base64(bytes: Uint8Array): string {
  let s = "";
  const CH = 0x8000;
  for (let i = 0; i < bytes.length; i += CH)
    s += String.fromCharCode(...bytes.subarray(i, Math.min(bytes.length, i + CH)));
  return btoa(s);
}

/**
 * Draw a `[rows, cols]` field on its mask as a PNG heat map (see the module's comment).
 *
 * @param values - Row-major values; read only where `mask` is 1.
 * @param mask - Row-major 0/1.
 * @param rows - Rows (sequences).
 * @param cols - Columns (token positions).
 * @param o - The largest picture (default 1024 × 512 pixels) and a shared colour scale end.
 * @returns The data URI, its size, the cells per pixel and the scale's end.
 * @internal
 */
export function rasterHeatmap(
  values: ArrayLike<number>,
  mask: ArrayLike<number>,
  rows: number,
  cols: number,
  o: { readonly maxWidth?: number; readonly maxHeight?: number; readonly vmax?: number } = {},
): RasterHeatmap {
  const cpp = Math.max(1, Math.ceil(cols / (o.maxWidth ?? MAX_RASTER_WIDTH)));
  const rpp = Math.max(1, Math.ceil(rows / (o.maxHeight ?? MAX_RASTER_HEIGHT)));
  const width = Math.max(1, Math.ceil(cols / cpp));
  const height = Math.max(1, Math.ceil(rows / rpp));
  // Each pixel's value of largest magnitude, and whether any response cell fell in it.
  const px = new Float64Array(width * height);
  const any = new Uint8Array(width * height);
  let vmax = 0;
  for (let b = 0; b < rows; b++) {
    const y = Math.floor(b / rpp);
    for (let t = 0; t < cols; t++) {
      const i = b * cols + t;
      if ((mask[i] as number) !== 1) continue;
      const v = values[i] as number;
      const p = y * width + Math.floor(t / cpp);
      if (any[p] === 0 || Math.abs(v) > Math.abs(px[p] as number)) px[p] = v;
      any[p] = 1;
      if (Number.isFinite(v) && Math.abs(v) > vmax) vmax = Math.abs(v);
    }
  }
  const scale = o.vmax ?? vmax;
  const pixels = new Uint8Array(width * height);
  for (let p = 0; p < width * height; p++)
    pixels[p] = any[p] === 1 ? index(px[p] as number, scale) : 0;
  return {
    dataUri: `data:image/png;base64,${base64(encodePng(pixels, width, height, PALETTE))}`,
    width,
    height,
    rowsPerPixel: rpp,
    colsPerPixel: cpp,
    vmax,
  };
}
