import { checkFiniteOutput } from "../core/finite.js";
import type { VectorLike } from "../core/tensor.js";
import { checkObject } from "../core/validate.js";
import { centerByGroup, type GroupIdsLike, groupedInputs, rejectSingletons } from "./groups.js";
import { checkSingletons } from "./singletons.js";

/**
 * Compute GPG per-sequence advantages: group-centred rewards rescaled by the batch's share of
 * non-zero rewards.
 *
 * Formula: α = B / max(#{i : r_i ≠ 0}, 1), A_i = α·(r_i − μ_g); no std (verl computes σ_g and
 * does not use it, and fixes f_norm = 1). A singleton group: `options.singletons` `"raise"`
 * (default), `"raw"` (μ = 0, A = α·r_i: verl's `gpg`) or `"zero"`.
 * Sums: compensated, over each group's members in ascending batch order.
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param rewards - The `[B]` sequence rewards, finite.
 * @param groupIds - The `[B]` non-negative integer group labels.
 * @param options - `singletons`: `"raise"` (default), `"raw"` or `"zero"`.
 * @returns The `[B]` advantages.
 * @throws {ShapeError} E_SHAPE when the shapes disagree or a group has a single reward under `"raise"`.
 * @throws {NonFiniteError} E_NONFINITE when a reward is not finite.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when options.singletons is not a known policy.
 * @throws {OverflowError} E_OVERFLOW when an exact advantage exceeds float64.
 * @derivation docs/derivations/advantages.md#gpg
 * @enforcedBy test/advantages/outcomeBaselines.test.ts > gpgAdvantages > golden: rewards [1, 0, 0, 0] in two groups give alpha 4 times the centred rewards
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b gpg replays within its tolerance
 * @see Chu et al. 2025, GPG: A Simple and Strong Reinforcement Learning Baseline, arXiv:2504.02546
 * @since 0.3.0
 */
export function gpgAdvantages(
  rewards: VectorLike,
  groupIds: GroupIdsLike,
  options: { readonly singletons?: "raise" | "raw" | "zero" } = {},
): Float64Array {
  const fn = "gpgAdvantages";
  const { r, groups } = groupedInputs(fn, rewards, groupIds);
  const opts = checkObject(fn, "options", options);
  const singletons =
    checkSingletons(fn, "options.singletons", opts.singletons, ["raise", "raw", "zero"]) ?? "raise";
  if (singletons === "raise") rejectSingletons(fn, groups, "(the group mean needs 2 rewards)");
  let nonzero = 0;
  for (let i = 0; i < r.length; i++) if (r[i] !== 0) nonzero++;
  const alpha = r.length / Math.max(nonzero, 1);
  const centred = centerByGroup(r, groups, null, singletons === "raw");
  const out = new Float64Array(r.length);
  groups.members.forEach((members) => {
    for (const i of members) {
      out[i] = members.length === 1 && singletons === "zero" ? 0 : alpha * (centred[i] as number);
    }
  });
  checkFiniteOutput(fn, "advantages", out, 0, undefined, "α·(r − μ_g) exceeds float64");
  return out;
}
