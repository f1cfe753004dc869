/**
 * Order statistics without a full sort: a three-way-partition multiselect of only the ranks asked
 * for (the quantiles of the diagnostics, the Theil–Sen median, KL-Cov's k-th largest term).
 */

/**
 * The values at `ranks` (ascending, distinct, each in [0, n)) of the ascending sort of `work`,
 * which is permuted in place: a three-way-partition multiselect (expected O(n·log k) for k
 * ranks), zeros included: a selected zero gets the sign the ascending sort (−0 before +0) gives
 * its rank. `work` holds no NaN (±Infinity sorts as it does in the sort). @internal
 */
export function orderStatistics(work: Float64Array, ranks: readonly number[]): number[] {
  const n = work.length;
  multiselect(work, 0, n, ranks, 0, ranks.length);
  // Zeros: ranks [below, below + negZeros) hold −0 in the sorted order, the rest of the zeros +0.
  let below = 0;
  let negZeros = 0;
  for (let i = 0; i < n; i++) {
    const v = work[i] as number;
    if (v < 0) below++;
    else if (v === 0 && Object.is(v, -0)) negZeros++;
  }
  return ranks.map((r) => {
    const v = work[r] as number;
    return v === 0 ? (r < below + negZeros ? -0 : 0) : v;
  });
}

/** Place a[r] for every r of ranks[rlo, rhi) (all within [lo, hi)) as in the sorted array. */
function multiselect(
  a: Float64Array,
  lo: number,
  hi: number,
  ranks: readonly number[],
  rlo: number,
  rhi: number,
): void {
  while (rlo < rhi) {
    if (hi - lo <= 24) {
      // Insertion sort of a short segment.
      for (let i = lo + 1; i < hi; i++) {
        const v = a[i] as number;
        let j = i - 1;
        while (j >= lo && (a[j] as number) > v) {
          a[j + 1] = a[j] as number;
          j--;
        }
        a[j + 1] = v;
      }
      return;
    }
    // Median of three as the pivot, then a three-way partition: < p | = p | > p.
    const x = a[lo] as number;
    const y = a[(lo + hi) >> 1] as number;
    const z = a[hi - 1] as number;
    // The median of x, y, z (the sample is finite: Math.min/max order it like <).
    const p = Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
    let lt = lo;
    let gt = hi;
    let i = lo;
    while (i < gt) {
      const v = a[i] as number;
      if (v < p) {
        a[i] = a[lt] as number;
        a[lt] = v;
        lt++;
        i++;
      } else if (v > p) {
        gt--;
        a[i] = a[gt] as number;
        a[gt] = v;
      } else i++;
    }
    // Ranks below lt recurse left, ranks at or above gt continue right; [lt, gt) are placed.
    let split = rlo;
    while (split < rhi && (ranks[split] as number) < lt) split++;
    let right = split;
    while (right < rhi && (ranks[right] as number) < gt) right++;
    if (split - rlo < rhi - right) {
      multiselect(a, lo, lt, ranks, rlo, split);
      lo = gt;
      rlo = right;
    } else {
      multiselect(a, gt, hi, ranks, right, rhi);
      hi = lt;
      rhi = split;
    }
  }
}
