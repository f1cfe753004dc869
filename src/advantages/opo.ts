import { checkFiniteOutput } from "../core/finite.js";
import { fmtShape, fmtValue } from "../core/message.js";
import { maxAbsOf, pow2Scale } from "../core/scale.js";
import { CompensatedSum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { checkObject, toVector } from "../core/validate.js";
import { ConfigError, fail, ShapeError } from "../errors.js";
import { type GroupIdsLike, groupedInputs, rejectSingletons } from "./groups.js";
import { checkSingletons, singletonAdvantage } from "./singletons.js";

/**
 * Compute OPO per-sequence advantages: the reward minus the group's length-weighted mean reward.
 *
 * Formula: b_g = Σ_{j∈g} L_j·r_j / Σ_{j∈g} L_j, A_i = r_i − b_g; no std. L_j is row j's response
 * length (its token count). A singleton group has no baseline: `options.singletons` is `"raise"`
 * (default), `"raw"` (b = 0, A = r_i: verl's `opo`) or `"zero"`.
 * Sums: compensated, over each group's members in ascending batch order.
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param rewards - The `[B]` sequence rewards, finite, B ≥ 1.
 * @param groupIds - The `[B]` non-negative integer group labels.
 * @param lengths - The `[B]` response lengths L_j, finite and > 0.
 * @param options - `singletons`: `"raise"` (default), `"raw"` or `"zero"`.
 * @returns The `[B]` advantages.
 * @throws {ShapeError} E_SHAPE when the shapes disagree, group ids are not non-negative integers,
 *   or a group has a single reward under `"raise"`.
 * @throws {NonFiniteError} E_NONFINITE when a reward or a length is not finite.
 * @throws {ConfigError} E_CONFIG when a length is not > 0.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when options.singletons is not a known policy.
 * @throws {OverflowError} E_OVERFLOW when an exact advantage exceeds float64.
 * @derivation docs/derivations/advantages.md#opo
 * @enforcedBy test/advantages/outcomeBaselines.test.ts > opoAdvantages > golden: rewards [1, 0] with lengths [3, 1] give the baseline 3/4
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b opo replays within its tolerance
 * @see Hao et al. 2025, On-Policy RL with Optimal Reward Baseline (OPO), arXiv:2505.23585
 * @since 0.3.0
 */
export function opoAdvantages(
  rewards: VectorLike,
  groupIds: GroupIdsLike,
  lengths: VectorLike,
  options: { readonly singletons?: "raise" | "raw" | "zero" } = {},
): Float64Array {
  const fn = "opoAdvantages";
  const { r, groups } = groupedInputs(fn, rewards, groupIds);
  const L = toVector(fn, "lengths", lengths);
  if (L.length !== r.length) {
    throw fail(
      ShapeError,
      fn,
      "lengths",
      `the shape of rewards ${fmtShape([r.length])}`,
      `shape ${fmtShape([L.length])}`,
    );
  }
  for (let i = 0; i < L.length; i++) {
    const v = L[i] as number;
    if (!(v > 0) || !Number.isFinite(v)) {
      throw fail(
        ConfigError,
        fn,
        "lengths",
        "finite and > 0 (token counts)",
        `${fmtValue(v)} at index ${i}`,
      );
    }
  }
  const opts = checkObject(fn, "options", options);
  const singletons =
    checkSingletons(fn, "options.singletons", opts.singletons, ["raise", "raw", "zero"]) ?? "raise";
  if (singletons === "raise") rejectSingletons(fn, groups, "(the baseline needs 2 rewards)");
  const out = new Float64Array(r.length);
  for (const members of groups.members) {
    if (members.length === 1) {
      const i = members[0] as number;
      out[i] = singletonAdvantage(singletons, r[i] as number);
      continue;
    }
    // On r·s (s = 2^k from the group's max |r|; 1 on moderate rewards) Σ L·r cannot overflow.
    const s = pow2Scale(maxAbsOf(r, members));
    const num = new CompensatedSum();
    const den = new CompensatedSum();
    for (let k = 0; k < members.length; k++) {
      const i = members[k] as number;
      num.add((L[i] as number) * ((r[i] as number) * s));
      den.add(L[i] as number);
    }
    const base = num.value() / den.value();
    for (let k = 0; k < members.length; k++) {
      const i = members[k] as number;
      out[i] = ((r[i] as number) * s - base) / s;
    }
  }
  checkFiniteOutput(fn, "advantages", out, 0, undefined, "the exact advantage exceeds float64");
  return out;
}
