import { checkFiniteOutput } from "../core/finite.js";
import { oneOf } from "../core/names.js";
import { maxAbsOf, pow2Scale } from "../core/scale.js";
import { CompensatedSum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { checkEps, checkObject } from "../core/validate.js";
import { type GroupIdsLike, groupedInputs } from "./groups.js";

/** Options of {@link looAdvantages}. */
export interface LOOConfig {
  /** Divide by the leave-one-out std + eps where it is > 0 (`"std"`), or not (`"none"`). @defaultValue "std" */
  readonly scale?: "std" | "none";
  /** Added to the leave-one-out std. @defaultValue 1e-6 (NeMo-RL's value) */
  readonly eps?: number;
}

/**
 * Compute NeMo-RL's GRPO advantages: a leave-one-out baseline and a leave-one-out std.
 *
 * Formula: for member i of a group g of G rewards, μ₋ᵢ = (S_g − r_i)/(G − 1) and σ₋ᵢ the
 * Bessel-corrected std of the other G − 1 rewards (0 when G − 1 < 2); A_i = (r_i − μ₋ᵢ)/(σ₋ᵢ + eps)
 * where σ₋ᵢ > 0 ("don't sharpen the ones with no variation"), r_i − μ₋ᵢ elsewhere or under scale
 * "none"; a group of one gets A = 0 (NeMo sets its baseline to its reward). r_i − μ₋ᵢ is
 * G/(G − 1)·(r_i − μ_g), RLOO's advantage.
 * Numerics: σ₋ᵢ is computed from the exact deviations; NeMo computes it as
 * sqrt((E₋ᵢ[r²] − μ₋ᵢ²)·n/(n − 1)), which can lose digits to cancellation (a registered difference,
 * not modelled). Sums: compensated, in ascending batch order.
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param rewards - The `[B]` sequence rewards, finite.
 * @param groupIds - The `[B]` non-negative integer group labels.
 * @param config - `scale` (default "std") and `eps` (default 1e-6).
 * @returns The `[B]` advantages.
 * @throws {ShapeError} E_SHAPE when the shapes disagree or the group ids are not non-negative integers.
 * @throws {NonFiniteError} E_NONFINITE when a reward is not finite.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when scale is not "std" or "none".
 * @throws {ConfigError} E_CONFIG when eps is negative or not finite.
 * @throws {OverflowError} E_OVERFLOW when an exact advantage exceeds float64.
 * @derivation docs/derivations/advantages.md#leave-one-out-std
 * @enforcedBy test/advantages/outcomeBaselines.test.ts > looAdvantages > golden: group [1, 2, 4, 9] takes each member's baseline and std from the other three
 * @enforcedBy test/conformance/frameworks/nemoLoo.fixtures.test.ts > NeMo-RL's GRPO advantages > conformance: nemo-rl@7ea279ab grpo:float64:leave_one_out=True:normalize=True replays within its tolerance
 * @see NeMo-RL nemo_rl/algorithms/advantage_estimator.py (GRPOAdvantageEstimator) and utils.py (calculate_baseline_and_std_per_prompt)
 * @since 0.3.0
 */
export function looAdvantages(
  rewards: VectorLike,
  groupIds: GroupIdsLike,
  config: LOOConfig = {},
): Float64Array {
  const fn = "looAdvantages";
  const { r, groups } = groupedInputs(fn, rewards, groupIds);
  const cfg = checkObject(fn, "config", config);
  const scale = oneOf(fn, "config.scale", cfg.scale ?? "std", ["std", "none"]);
  const eps = checkEps(fn, "config.eps", cfg.eps ?? 1e-6);
  const out = new Float64Array(r.length);
  for (const members of groups.members) {
    const G = members.length;
    if (G === 1) continue; // NeMo: the baseline is the reward itself, A = 0
    // On r·s (s = 2^k from the group's max |r|; 1 on moderate rewards): no sum or square overflows.
    const s = pow2Scale(maxAbsOf(r, members));
    const acc = new CompensatedSum();
    for (const i of members) acc.add((r[i] as number) * s);
    const S = acc.value();
    for (const i of members) {
      const ri = (r[i] as number) * s;
      const mu = (S - ri) / (G - 1);
      let sigma = 0;
      if (scale === "std" && G - 1 >= 2) {
        const ss = new CompensatedSum();
        for (const j of members) {
          if (j === i) continue;
          const d = (r[j] as number) * s - mu;
          ss.add(d * d);
        }
        sigma = Math.sqrt(ss.value() / (G - 2));
      }
      const a = ri - mu;
      const epsS = eps * s;
      // eps·s overflowed (tiny rewards): divide in the original units instead.
      out[i] =
        sigma > 0
          ? Number.isFinite(epsS)
            ? a / (sigma + epsS)
            : a / s / (sigma / s + eps)
          : a / s;
    }
  }
  checkFiniteOutput(fn, "advantages", out, 0, undefined, "the exact advantage exceeds float64");
  return out;
}
