import { checkFiniteOutput } from "../core/finite.js";
import { maxAbsOf, pow2Scale } from "../core/scale.js";
import { CompensatedSum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { checkObject } from "../core/validate.js";
import { type GroupIdsLike, groupedInputs, rejectSingletons } from "./groups.js";
import { checkSingletons, singletonAdvantage } from "./singletons.js";

/**
 * Compute RLOO (leave-one-out baseline) per-sequence advantages.
 *
 * Formula: A_i = r_i − (S_g − r_i)/(G_g − 1), computed literally in this form, with S_g the
 * compensated sum of the group's rewards (ascending batch order). Identities:
 * A_i = (G_g·r_i − S_g)/(G_g − 1) = (G_g/(G_g − 1))·(r_i − μ_g); Σ_{i∈g} A_i = 0; per-group
 * centering is ((G_g − 1)/G_g)·RLOO.
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param rewards - The `[B]` sequence rewards, finite, B ≥ 1.
 * Singleton groups have no leave-one-out baseline: `options.singletons` is `"raise"` (default,
 * polgrad's rule), `"raw"` (A = r_i, verl's loop `rloo`) or `"zero"` (A = 0, verl's
 * `rloo_vectorized`).
 *
 * @param rewards - The `[B]` sequence rewards, finite, B ≥ 1.
 * @param groupIds - The `[B]` non-negative integer group labels; every group needs ≥ 2 rewards
 *   unless `options.singletons` says otherwise.
 * @param options - `singletons`: `"raise"` (default), `"raw"` or `"zero"`.
 * @returns The `[B]` advantages.
 * @throws {ShapeError} E_SHAPE when rewards or groupIds are not 1-D, empty, of different lengths,
 *   not integer or negative, or when a group has a single reward (no leave-one-out baseline).
 * @throws {NonFiniteError} E_NONFINITE when a reward is NaN or infinite.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when options.singletons is not a known policy.
 * @throws {OverflowError} E_OVERFLOW when an exact advantage exceeds float64 (|r_i − μ_g| near
 *   1.8e308); rewards near ±1.8e308 are otherwise handled by power-of-two rescaling.
 * @derivation docs/derivations/advantages.md#rloo
 * @enforcedBy test/advantages/rloo.test.ts > rlooAdvantages > golden: groups [1, 3] and [2, 4, 6] give [-2, 2] and [-3, 0, 3]
 * @enforcedBy test/advantages/rloo.test.ts > rlooAdvantages > identity: leave-one-out form equals (G·r − S)/(G − 1) bitwise on dyadic rewards with G − 1 in {1, 2, 4}
 * @enforcedBy test/advantages/rloo.test.ts > rlooAdvantages > rejects: a singleton group
 * @enforcedBy test/advantages/groupPolicies.test.ts > rlooAdvantages > golden: singletons raw keep R and zero give 0, the other groups unchanged bitwise
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b rloo replays within its tolerance
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b rloo_vectorized replays within its tolerance
 * @see Ahmadian et al. 2024, Back to Basics (RLOO), arXiv:2402.14740
 * @enforcedBy test/hardening/stats.test.ts > rlooAdvantages > regression: rewards near 1.8e308 give the exact leave-one-out advantages
 * @since 0.1.0
 */
export function rlooAdvantages(
  rewards: VectorLike,
  groupIds: GroupIdsLike,
  options: { readonly singletons?: "raise" | "raw" | "zero" } = {},
): Float64Array {
  const fn = "rlooAdvantages";
  const { r, groups } = groupedInputs(fn, rewards, groupIds);
  const opts = checkObject(fn, "options", options);
  const singletons =
    checkSingletons(fn, "options.singletons", opts.singletons, ["raise", "raw", "zero"]) ?? "raise";
  if (singletons === "raise")
    rejectSingletons(fn, groups, "(the leave-one-out baseline needs 2 rewards)");
  const out = new Float64Array(r.length);
  for (const members of groups.members) {
    if (members.length === 1) {
      const i = members[0] as number;
      out[i] = singletonAdvantage(singletons, r[i] as number);
      continue;
    }
    // On r·s (s = 2^k from the group's max |r|, 1 on moderate rewards: bitwise the plain form)
    // the group sum S_g cannot overflow; the advantage is mapped back by ÷ s.
    const s = pow2Scale(maxAbsOf(r, members));
    const acc = new CompensatedSum();
    for (let k = 0; k < members.length; k++) acc.add((r[members[k] as number] as number) * s);
    const S = acc.value();
    const others = members.length - 1;
    for (let k = 0; k < members.length; k++) {
      const i = members[k] as number;
      const ri = (r[i] as number) * s;
      out[i] = (ri - (S - ri) / others) / s;
    }
  }
  // Only a genuinely unrepresentable advantage is left: G/(G − 1)·(r_i − μ_g) beyond 1.8e308.
  checkFiniteOutput(fn, "advantages", out, 0, undefined, "the exact advantage exceeds float64");
  return out;
}
