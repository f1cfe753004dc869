/**
 * The summary of one per-step series that run reports carry (tensor runs and logged scalars
 * alike): its first, last and extreme points and its Theil–Sen slope. Pure: no `node:` import.
 */

import { MAX_THEIL_SEN_POINTS, theilSenSlope } from "./trend.js";

/** First, last, extremes and Theil–Sen slope of one per-step series. */
export interface SeriesSummary {
  readonly steps: number;
  readonly first: { readonly step: number; readonly value: number };
  readonly last: { readonly step: number; readonly value: number };
  readonly min: { readonly step: number; readonly value: number };
  readonly max: { readonly step: number; readonly value: number };
  /** Theil–Sen slope per training step (the steps' numbers as abscissa), over the last 4096 points. */
  readonly slope: number;
}

/** The summary of `points` (in step order), or null when there is none. @internal */
export function summarize(
  points: readonly { step: number; value: number }[],
): SeriesSummary | null {
  if (points.length === 0) return null;
  let min = points[0] as { step: number; value: number };
  let max = min;
  for (const p of points) {
    if (p.value < min.value) min = p;
    if (p.value > max.value) max = p;
  }
  return {
    steps: points.length,
    first: points[0] as { step: number; value: number },
    last: points[points.length - 1] as { step: number; value: number },
    min,
    max,
    // Theil–Sen sorts n(n − 1)/2 slopes: past MAX_THEIL_SEN_POINTS steps, the trailing ones.
    slope:
      points.length >= 2
        ? theilSenSlope(
            points.slice(-MAX_THEIL_SEN_POINTS).map((p) => p.value),
            points.slice(-MAX_THEIL_SEN_POINTS).map((p) => p.step),
          )
        : 0,
  };
}
