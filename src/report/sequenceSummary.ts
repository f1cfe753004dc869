/**
 * Per-sequence numbers that do not fit a line (docs/cli.md#width): their minimum, median and
 * maximum and the sequences that carry the most, instead of one column or item per sequence.
 * Pure.
 */

/** Sequences named in a summary's "top" list. */
export const TOP_SEQUENCES = 3;

/** The order statistics of `values`: min, median (the lower middle for an even count), max. */
export function spread(values: ArrayLike<number>): { min: number; median: number; max: number } {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  return {
    min: sorted[0] ?? Number.NaN,
    median: n === 0 ? Number.NaN : (sorted[(n - 1) >> 1] as number),
    max: sorted[n - 1] ?? Number.NaN,
  };
}

/** The indices of the `k` largest values, largest first (ties: the lower index first). */
export function topIndices(values: ArrayLike<number>, k: number = TOP_SEQUENCES): number[] {
  return Array.from({ length: values.length }, (_, i) => i)
    .sort((a, b) => (values[b] as number) - (values[a] as number) || a - b)
    .slice(0, k);
}

/**
 * "min 0.0001, median 0.002, max 0.019 over 128 sequences; top s17 0.019, s3 0.012, s90 0.011"
 * (with lengths: "s17 (L=2) 0.019").
 */
export function sequenceSummary(
  values: ArrayLike<number>,
  fmt: (x: number) => string,
  lengths?: ArrayLike<number>,
): string {
  const s = spread(values);
  const top = topIndices(values)
    .map(
      (b) =>
        `s${b}${lengths === undefined ? "" : ` (L=${lengths[b]})`} ${fmt(values[b] as number)}`,
    )
    .join(", ");
  return `min ${fmt(s.min)}, median ${fmt(s.median)}, max ${fmt(s.max)} over ${values.length} sequences; top ${top}`;
}

/**
 * How far each sequence's share of the gradient differs between configurations: per row r,
 * share_rb = mass_rb / Σ_b mass_rb (rows of zero total left out); per sequence the lowest and the
 * highest share and their difference (0 where no row counted).
 */
export function shareSpread(
  masses: readonly ArrayLike<number>[],
  B: number,
): { readonly lo: Float64Array; readonly hi: Float64Array; readonly spread: Float64Array } {
  const lo = new Float64Array(B).fill(Number.POSITIVE_INFINITY);
  const hi = new Float64Array(B).fill(Number.NEGATIVE_INFINITY);
  for (const m of masses) {
    let total = 0;
    for (let b = 0; b < B; b++) total += m[b] as number;
    if (!(total > 0)) continue;
    for (let b = 0; b < B; b++) {
      const x = (m[b] as number) / total;
      if (x < (lo[b] as number)) lo[b] = x;
      if (x > (hi[b] as number)) hi[b] = x;
    }
  }
  const spread = Float64Array.from({ length: B }, (_, b) =>
    Number.isFinite(lo[b] as number) ? (hi[b] as number) - (lo[b] as number) : 0,
  );
  return { lo, hi, spread };
}
