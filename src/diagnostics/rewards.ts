/**
 * A step's reward statistics and truncation rate (docs/diagnostics/run.md#rewards-and-truncation),
 * where the dump holds `rewards` and `truncated`: the mean and the sample standard deviation of
 * the sequences' rewards, and the fraction of sequences cut at the length limit, over the rows
 * with at least one response token (verl leaves rows with no response token out of its
 * critic/score metrics, metric_utils.py:471). Padding is never read.
 */

import { CompensatedSum } from "../core/sum.js";
import { isMask } from "../core/tensor.js";
import type { PartialBatch } from "../io/batch.js";

/** The step's reward mean and std and truncation rate (null where the dump lacks the tensor). */
export interface RewardStats {
  readonly rewardMean: number | null;
  readonly rewardStd: number | null;
  readonly truncationRate: number | null;
}

/**
 * Reward and truncation statistics of one step.
 *
 * Formula: for each row b with a response token, R_b = rewards[b] (`[B]`) or Σ_t mask[b,t] ·
 * rewards[b,t] (`[B, T]`); rewardMean = mean_b R_b, rewardStd = sqrt(Σ (R_b − mean)² / (n − 1))
 * (null below 2 rows), truncationRate = mean_b truncated[b]. A non-finite reward makes the mean
 * and std null.
 * @internal
 */
export function rewardStats(batch: PartialBatch): RewardStats {
  const { responseMask: mask, rewards, truncated } = batch;
  if (!isMask(mask)) return { rewardMean: null, rewardStd: null, truncationRate: null };
  const { rows, cols } = mask;
  const live: number[] = [];
  for (let b = 0; b < rows; b++) {
    let any = false;
    for (let t = 0; t < cols && !any; t++) any = mask.data[b * cols + t] === 1;
    if (any) live.push(b);
  }
  let rewardMean: number | null = null;
  let rewardStd: number | null = null;
  if (rewards !== undefined && live.length > 0) {
    const R = live.map((b) => {
      if (rewards instanceof Float64Array) return rewards[b] as number;
      const s = new CompensatedSum();
      for (let t = 0; t < cols; t++)
        if (mask.data[b * cols + t] === 1) s.add(rewards.data[b * cols + t] as number);
      return s.value();
    });
    if (R.every(Number.isFinite)) {
      const sum = new CompensatedSum();
      for (const r of R) sum.add(r);
      const mean = sum.value() / R.length;
      rewardMean = mean;
      if (R.length >= 2) {
        const ss = new CompensatedSum();
        for (const r of R) ss.add((r - mean) * (r - mean));
        rewardStd = Math.sqrt(ss.value() / (R.length - 1));
      }
    }
  }
  let truncationRate: number | null = null;
  if (truncated !== undefined && live.length > 0) {
    let k = 0;
    for (const b of live) k += truncated[b] as number;
    truncationRate = k / live.length;
  }
  return { rewardMean, rewardStd, truncationRate };
}
