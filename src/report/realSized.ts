/**
 * When a batch is drawn as a real-sized one (docs/report-html.md#a-real-sized-batch): the HTML
 * report and the playground switch from one column, bar and SVG cell per sequence and token to
 * the summary, the sequences that matter and a raster, at the same sizes. Pure.
 */

/** Sequences a batch's which table gives one column each (beyond: their spread and top ones). */
export const MAX_COLUMN_SEQUENCES = 16;

/** Cells a heat map draws as SVG rectangles (beyond: a raster, html/raster.ts). */
export const MAX_SVG_CELLS = 4096;

/** Sequences shown in detail on a real-sized batch's page (besides those asked for). */
export const DETAIL_SEQUENCES = 6;

/** Whether a `[B, T]` batch is drawn as a real-sized one. */
export function isRealSized(B: number, T: number): boolean {
  return B > MAX_COLUMN_SEQUENCES || B * T > MAX_SVG_CELLS;
}
