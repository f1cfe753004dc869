import { checkFiniteOutput } from "../core/finite.js";
import { oneOf } from "../core/names.js";
import { maxAbsOf, meanAndSs, pow2Scale } from "../core/scale.js";
import type { VectorLike } from "../core/tensor.js";
import { checkEps, checkFlag, checkObject, zeroDenominator } from "../core/validate.js";
import { type GroupIdsLike, groupedInputs, rejectSingletons } from "./groups.js";

/** Options of {@link passAtKAdvantages}. */
export interface PassAtKConfig {
  /** Divide the margin by σ_g + eps (`"std"`, verl's `norm_adv_by_std_in_grpo`) or not. @defaultValue "std" */
  readonly scale?: "std" | "none";
  /** Added to σ_g outside the square root. @defaultValue 1e-6 (verl's value) */
  readonly eps?: number;
  /** Bessel-corrected σ_g. @defaultValue true */
  readonly unbiased?: boolean;
}

/**
 * Compute GRPO pass@k advantages: only each group's best response is credited, by its margin
 * over the runner-up.
 *
 * Formula: for each group g with rewards sorted r_(1) ≥ r_(2) ≥ …: A_{i*} = (r_(1) − r_(2))/(σ_g + eps)
 * (or r_(1) − r_(2) under scale "none") for the best member i* (the first in batch order on a tie,
 * where the margin is 0 anyway), and A_i = 0 for every other member. σ_g as in grpoAdvantages.
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param rewards - The `[B]` sequence rewards, finite.
 * @param groupIds - The `[B]` non-negative integer group labels; every group needs ≥ 2 rewards.
 * @param config - `scale` (default "std"), `eps` (default 1e-6), `unbiased` (default true).
 * @returns The `[B]` advantages.
 * @throws {ShapeError} E_SHAPE when the shapes disagree or a group has a single reward.
 * @throws {NonFiniteError} E_NONFINITE when a reward is not finite.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when scale is not "std" or "none".
 * @throws {ConfigError} E_CONFIG when eps is negative or not finite, or eps is 0 and a group has zero spread.
 * @throws {OverflowError} E_OVERFLOW when an exact advantage exceeds float64.
 * @derivation docs/derivations/advantages.md#pass-at-k
 * @enforcedBy test/advantages/outcomeBaselines.test.ts > passAtKAdvantages > golden: group [1, 3, 2] credits only the 3, by (3 − 2)/(1 + 1e-6)
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b grpo_passk:norm_adv_by_std_in_grpo=True replays within its tolerance
 * @see arXiv:2503.19595, the paper verl's `grpo_passk` estimator cites (its code is the reference read)
 * @since 0.3.0
 */
export function passAtKAdvantages(
  rewards: VectorLike,
  groupIds: GroupIdsLike,
  config: PassAtKConfig = {},
): Float64Array {
  const fn = "passAtKAdvantages";
  const { r, groups } = groupedInputs(fn, rewards, groupIds);
  const cfg = checkObject(fn, "config", config);
  const scale = oneOf(fn, "config.scale", cfg.scale ?? "std", ["std", "none"]);
  const eps = checkEps(fn, "config.eps", cfg.eps ?? 1e-6);
  const unbiased = checkFlag(fn, "config.unbiased", cfg.unbiased ?? true);
  rejectSingletons(fn, groups, "(pass@k needs a runner-up)");
  const out = new Float64Array(r.length);
  groups.members.forEach((members, g) => {
    let best = members[0] as number;
    for (const i of members) if ((r[i] as number) > (r[best] as number)) best = i;
    let second = Number.NEGATIVE_INFINITY;
    for (const i of members) if (i !== best && (r[i] as number) > second) second = r[i] as number;
    // The margin on r·s (s from the group's max |r|; 1 on moderate rewards), so that neither it
    // nor σ_g overflows.
    const s = pow2Scale(maxAbsOf(r, members));
    const margin = (r[best] as number) * s - second * s;
    if (scale === "none") {
      out[best] = margin / s;
      return;
    }
    const { ss } = meanAndSs(members.length, (k) => (r[members[k] as number] as number) * s);
    const sigma = Math.sqrt(ss / (unbiased ? members.length - 1 : members.length));
    const epsS = eps * s;
    if (sigma + epsS === 0 && eps === 0) {
      throw zeroDenominator(fn, "config.eps", `group id ${groups.ids[g]} has zero reward spread`);
    }
    out[best] =
      sigma + epsS > 0 && Number.isFinite(epsS)
        ? margin / (sigma + epsS)
        : margin / s / (sigma / s + eps);
  });
  checkFiniteOutput(fn, "advantages", out, 0, undefined, "the exact advantage exceeds float64");
  return out;
}
