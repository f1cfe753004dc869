import { fmtShape, mustBe } from "../core/message.js";
import { CompensatedSum, fsum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { ShapeError } from "../errors.js";
import { checkEps, checkFlag, checkObject, zeroDenominator } from "./checks.js";
import {
  centerByGroup,
  checkGroupIds,
  checkRewards,
  type GroupIdsLike,
  partition,
} from "./groups.js";

/** REINFORCE++ advantage options (polgrad's ReinforcePPConfig). Inert data, validated at call time. */
export interface ReinforcePPConfig {
  /** Divide by the Bessel-corrected std of the whole batch of advantages (plus eps). */
  readonly batchNorm: boolean;
  /** Added to the batch std outside the square root. @defaultValue 1e-8 */
  readonly eps: number;
}

/** The default `eps` of {@link ReinforcePPConfig}. */
export const DEFAULT_REINFORCE_PP_EPS = 1e-8;

/**
 * Compute REINFORCE++ per-sequence advantages: a mean baseline, optionally batch-normalized.
 *
 * Formula: a_i = r_i − b_i with b_i the batch mean S/B (`groupIds` null, REINFORCE++) or the group
 * mean μ_g (REINFORCE++-baseline; a singleton group gives 0). With `batchNorm`:
 * ā = Σ_i a_i / B, s² = Σ_i (a_i − ā)²/(B − 1), A_i = a_i/(s + eps) — one global scalar, a is not
 * re-centered. Without `batchNorm` and with groups this is exactly grpoAdvantages with scale "none".
 * Sums: compensated, in ascending batch order (within a group for the group mean).
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param rewards - The `[B]` sequence rewards, finite, B ≥ 1 (B ≥ 2 with batchNorm).
 * @param groupIds - The `[B]` non-negative integer group labels, or null for the global baseline.
 * @param config - `batchNorm` (required) and `eps` (default 1e-8).
 * @returns The `[B]` advantages.
 * @throws {ShapeError} E_SHAPE when rewards or groupIds are not 1-D, empty, of different lengths,
 *   not integer or negative, or when batchNorm is on and B < 2.
 * @throws {NonFiniteError} E_NONFINITE when a reward is NaN or infinite.
 * @throws {ConfigError} E_CONFIG when batchNorm is not a boolean, eps is negative or not finite, or
 *   eps is 0 and every advantage is equal (0/0).
 * @derivation docs/derivations/advantages.md#mean-baselines
 * @enforcedBy test/advantages/reinforcePP.test.ts > reinforcePPAdvantages > golden: batch norm on [1, 2, 3, 6] divides [-2, -1, 0, 3] by sqrt(14/3) + 1e-8
 * @enforcedBy test/advantages/reinforcePP.test.ts > reinforcePPAdvantages > identity: grouped without batch norm equals grpoAdvantages with scale none bitwise
 * @see Hu 2025, REINFORCE++, arXiv:2501.03262
 * @since 0.1.0
 */
export function reinforcePPAdvantages(
  rewards: VectorLike,
  groupIds: GroupIdsLike | null,
  config: Pick<ReinforcePPConfig, "batchNorm"> & Partial<ReinforcePPConfig>,
): Float64Array {
  const fn = "reinforcePPAdvantages";
  const r = checkRewards(fn, rewards);
  const ids =
    groupIds === null || groupIds === undefined ? null : checkGroupIds(fn, groupIds, r.length);
  const cfg = checkObject(fn, "config", config);
  const batchNorm = checkFlag(fn, "config.batchNorm", cfg.batchNorm);
  const eps = checkEps(fn, "config.eps", cfg.eps ?? DEFAULT_REINFORCE_PP_EPS);
  const B = r.length;
  if (batchNorm && B < 2) {
    throw new ShapeError(
      fn,
      "rewards",
      mustBe(
        fn,
        "rewards",
        "of length >= 2 when config.batchNorm is true (Bessel-corrected batch std)",
        `shape ${fmtShape([B])}`,
      ),
    );
  }

  let adv: Float64Array;
  if (ids === null) {
    const mean = fsum(r) / B;
    adv = new Float64Array(B);
    for (let i = 0; i < B; i++) adv[i] = (r[i] as number) - mean;
  } else {
    adv = centerByGroup(r, partition(ids));
  }
  if (!batchNorm) return adv;

  const advMean = fsum(adv) / B;
  const ss = new CompensatedSum();
  for (let i = 0; i < B; i++) {
    const d = (adv[i] as number) - advMean;
    ss.add(d * d);
  }
  const denom = Math.sqrt(ss.value() / (B - 1)) + eps;
  if (denom === 0)
    throw zeroDenominator(fn, "config.eps", "every advantage is equal (zero batch std)");
  const out = new Float64Array(B);
  for (let i = 0; i < B; i++) out[i] = (adv[i] as number) / denom;
  return out;
}
