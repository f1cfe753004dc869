import { checkFiniteOutput } from "../core/finite.js";
import { fmtShape } from "../core/message.js";
import { maxAbsOf, meanAndSs, pow2Scale } from "../core/scale.js";
import { fsum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { checkEps, checkFlag, checkObject, zeroDenominator } from "../core/validate.js";
import { fail, ShapeError } from "../errors.js";
import {
  centerByGroup,
  checkGroupIds,
  checkRewards,
  type GroupIdsLike,
  partition,
} from "./groups.js";
import { checkSingletons } from "./singletons.js";

/** REINFORCE++ advantage options (polgrad's ReinforcePPConfig). Inert data, validated at call time. */
export interface ReinforcePPConfig {
  /** Divide by the Bessel-corrected std of the whole batch of advantages (plus eps). */
  readonly batchNorm: boolean;
  /** Added to the batch std outside the square root. @defaultValue 1e-8 */
  readonly eps: number;
  /**
   * A singleton group's baseline (grouped form only): its own reward (`"zero"`: A = 0) or 0
   * (`"raw"`: A = r, verl's `reinforce_plus_plus_baseline`). @defaultValue "zero"
   */
  readonly singletons?: "zero" | "raw";
}

/** The default `eps` of {@link ReinforcePPConfig}. */
export const DEFAULT_REINFORCE_PP_EPS = 1e-8;

/**
 * Compute REINFORCE++ per-sequence advantages: a mean baseline, optionally batch-normalized.
 *
 * Formula: a_i = r_i − b_i with b_i the batch mean S/B (`groupIds` null, REINFORCE++) or the group
 * mean μ_g (REINFORCE++-baseline; a singleton group gives 0, or r_i with `singletons: "raw"`). With `batchNorm`:
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
 * @throws {UnknownNameError} E_UNKNOWN_NAME when config.singletons is not "zero" or "raw".
 * @throws {OverflowError} E_OVERFLOW when an exact advantage exceeds float64 (rewards near
 *   ±1.8e308 are otherwise handled by power-of-two rescaling).
 * @derivation docs/derivations/advantages.md#mean-baselines
 * @enforcedBy test/advantages/reinforcePP.test.ts > reinforcePPAdvantages > golden: batch norm on [1, 2, 3, 6] divides [-2, -1, 0, 3] by sqrt(14/3) + 1e-8
 * @enforcedBy test/advantages/reinforcePP.test.ts > reinforcePPAdvantages > identity: grouped without batch norm equals grpoAdvantages with scale none bitwise
 * @enforcedBy test/advantages/groupPolicies.test.ts > reinforcePPAdvantages > golden: a singleton keeps its raw reward with singletons raw
 * @see Hu 2025, REINFORCE++, arXiv:2501.03262
 * @enforcedBy test/hardening/stats.test.ts > reinforcePPAdvantages > regression: a batch mean of rewards near 1.8e308 is finite
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
  const raw = checkSingletons(fn, "config.singletons", cfg.singletons, ["zero", "raw"]) === "raw";
  const B = r.length;
  if (batchNorm && B < 2) {
    throw fail(
      ShapeError,
      fn,
      "rewards",
      "of length >= 2 when config.batchNorm is true (Bessel-corrected batch std)",
      `shape ${fmtShape([B])}`,
    );
  }

  if (!batchNorm) {
    let adv: Float64Array;
    if (ids === null) {
      // The batch mean on r·s (s = 2^k from max |r|; 1 on moderate rewards, bitwise the plain
      // form), mapped back by ÷ s.
      const s = pow2Scale(maxAbsOf(r));
      const mean = fsum(r.map((v) => v * s)) / B;
      adv = r.map((v) => (v * s - mean) / s);
    } else adv = centerByGroup(r, partition(ids), null, raw);
    // Only a genuinely unrepresentable r_i − b_i (beyond 1.8e308) is left.
    checkFiniteOutput(fn, "advantages", adv, 0, undefined, "the exact advantage exceeds float64");
    return adv;
  }

  // With batch norm every statistic is taken in one common scale s (the advantages a_i may
  // exceed float64 while a_i/(s + eps) does not).
  const s = pow2Scale(maxAbsOf(r));
  let adv: Float64Array;
  if (ids === null) {
    const mean = fsum(r.map((v) => v * s)) / B;
    adv = r.map((v) => v * s - mean);
  } else adv = centerByGroup(r, partition(ids), s, raw);
  const { ss } = meanAndSs(B, (i) => adv[i] as number);
  const sigma = Math.sqrt(ss / (B - 1));
  const epsS = eps * s;
  const denom = sigma + epsS;
  if (denom === 0 && eps === 0)
    throw zeroDenominator(fn, "config.eps", "every advantage is equal (zero batch std)");
  const out = new Float64Array(B);
  for (let i = 0; i < B; i++) {
    const a = adv[i] as number;
    // eps·s overflowed or underflowed to 0: divide in the original units instead.
    out[i] = denom > 0 && Number.isFinite(epsS) ? a / denom : a / s / (sigma / s + eps);
  }
  checkFiniteOutput(fn, "advantages", out, 0, undefined, "the exact advantage exceeds float64");
  return out;
}
