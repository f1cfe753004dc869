import { checkFiniteOutput } from "../core/finite.js";
import { fmtIndices } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { maxAbsOf, meanAndSs, pow2Scale } from "../core/scale.js";
import type { VectorLike } from "../core/tensor.js";
import { checkEps, checkFlag, checkObject, zeroDenominator } from "./checks.js";
import { type GroupIdsLike, groupedInputs, rejectSingletons } from "./groups.js";

/** How group-normalized advantages are scaled: by the group std (GRPO) or not at all (Dr.GRPO). */
export const GroupNormScale = { STD: "std", NONE: "none" } as const;
/** One of the group-normalization scale strings. */
export type GroupNormScale = (typeof GroupNormScale)[keyof typeof GroupNormScale];
/** Every group-normalization scale. */
export const GROUP_NORM_SCALES: readonly GroupNormScale[] = Object.values(GroupNormScale);

/**
 * Group normalization of rewards (polgrad's GroupNormConfig). Inert data, validated at call time.
 * GRPO is the default; Dr.GRPO is `{ scale: "none" }` (centering only).
 */
export interface GroupNormConfig {
  /** Subtract the group mean μ_g. @defaultValue true */
  readonly center: boolean;
  /** Divide by σ_g + eps (`"std"`) or not (`"none"`). @defaultValue "std" */
  readonly scale: GroupNormScale;
  /** Added to σ_g outside the square root. @defaultValue 1e-4 (TRL's value) */
  readonly eps: number;
  /** Bessel-corrected σ_g (divide by G_g − 1) rather than the population σ (divide by G_g). @defaultValue true */
  readonly unbiased: boolean;
}

/** GRPO's defaults: center, scale by the Bessel-corrected group std, eps 1e-4. */
export const DEFAULT_GROUP_NORM: GroupNormConfig = Object.freeze({
  center: true,
  scale: "std",
  eps: 1e-4,
  unbiased: true,
});

/**
 * Compute group-normalized per-sequence advantages (GRPO; Dr.GRPO with `scale: "none"`).
 *
 * Formula: μ_g = S_g / G_g; σ_g = sqrt(Σ_{j∈g} (r_j − μ_g)² / (G_g − 1)) (or / G_g when
 * `unbiased` is false), always from the *centered* deviations; then
 * A_i = (r_i − μ_g)/(σ_g + eps) (center, std), r_i − μ_g (center, none),
 * r_i/(σ_g + eps) (no center, std), r_i (no center, none). With scale std a group's advantages
 * carry the factor 1/(σ_g + eps): the difficulty bias that Dr.GRPO removes.
 * Sums: compensated, over each group's members in ascending batch order.
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param rewards - The `[B]` sequence rewards, finite, B ≥ 1.
 * @param groupIds - The `[B]` non-negative integer group labels (any labels; only the partition matters).
 * @param config - The normalization; missing fields take {@link DEFAULT_GROUP_NORM}.
 * @returns The `[B]` advantages.
 * @throws {ShapeError} E_SHAPE when rewards or groupIds are not 1-D, empty, of different lengths,
 *   not integer or negative, or when scale is "std" and a group has a single reward.
 * @throws {NonFiniteError} E_NONFINITE when a reward is NaN or infinite.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when config.scale is not "std" or "none".
 * @throws {ConfigError} E_CONFIG when center/unbiased are not booleans, eps is negative or not
 *   finite, or eps is 0 and a scaled group has zero spread.
 * @throws {OverflowError} E_OVERFLOW when an exact advantage exceeds float64 (r_i − μ_g beyond
 *   1.8e308 under scale none, or r_i/eps with zero spread); rewards near ±1.8e308 or ±1e-300 are
 *   otherwise handled by power-of-two rescaling, bitwise the plain formula on moderate rewards.
 * @derivation docs/derivations/advantages.md#group-normalization
 * @enforcedBy test/advantages/grpo.test.ts > grpoAdvantages > golden: one group [1, 2, 3] gives [-1, 0, 1] / (1 + 1e-4)
 * @enforcedBy test/advantages/grpo.test.ts > grpoAdvantages > golden: difficulty bias, std scaling weights each group by exactly 1/(sigma_g + eps)
 * @enforcedBy test/advantages/grpo.test.ts > grpoAdvantages > rejects: a singleton group under scale std, whatever unbiased is
 * @see Shao et al. 2024, DeepSeekMath (GRPO), arXiv:2402.03300; Liu et al. 2025, Dr.GRPO, arXiv:2503.20783
 * @enforcedBy test/hardening/stats.test.ts > grpoAdvantages > regression: rewards of ±1e300 give the exact ±1/√2, not NaN
 * @enforcedBy test/hardening/stats.test.ts > grpoAdvantages > identity: grpo advantages are invariant under rewards × 2^k with eps 0 (bitwise)
 * @since 0.1.0
 */
export function grpoAdvantages(
  rewards: VectorLike,
  groupIds: GroupIdsLike,
  config: Partial<GroupNormConfig> = DEFAULT_GROUP_NORM,
): Float64Array {
  const fn = "grpoAdvantages";
  const { r, groups } = groupedInputs(fn, rewards, groupIds);
  const cfg = checkObject(fn, "config", config);
  const scale = oneOf(fn, "config.scale", cfg.scale ?? DEFAULT_GROUP_NORM.scale, GROUP_NORM_SCALES);
  const center = checkFlag(fn, "config.center", cfg.center ?? DEFAULT_GROUP_NORM.center);
  const unbiased = checkFlag(fn, "config.unbiased", cfg.unbiased ?? DEFAULT_GROUP_NORM.unbiased);
  const eps = checkEps(fn, "config.eps", cfg.eps ?? DEFAULT_GROUP_NORM.eps);
  if (scale === "std")
    rejectSingletons(fn, groups, 'when config.scale is "std" (the group std needs 2 rewards)');

  const out = new Float64Array(r.length);
  const flat: number[] = [];
  groups.members.forEach((members, g) => {
    const G = members.length;
    // Every statistic is taken on r·s (s = 2^k from the group's max |r|; s = 1 on moderate
    // rewards, where the results are bitwise the plain formulas): no sum, deviation or square of
    // rewards near ±1.8e308 or ±1e-300 overflows or underflows.
    const s = pow2Scale(maxAbsOf(r, members));
    const x = (k: number) => (r[members[k] as number] as number) * s;
    // σ_g from the centered deviations, whether or not the output is centered.
    const { mean, ss } = meanAndSs(G, x);
    const sigma = scale === "std" ? Math.sqrt(ss / (unbiased ? G - 1 : G)) : 0;
    const epsS = eps * s;
    const denom = sigma + epsS;
    if (scale === "std" && denom === 0 && eps === 0) flat.push(groups.ids[g] as number);
    for (let k = 0; k < G; k++) {
      const i = members[k] as number;
      const num = center ? x(k) - mean : x(k);
      if (scale !== "std") out[i] = center ? num / s : (r[i] as number);
      else if (denom > 0 && Number.isFinite(epsS)) out[i] = num / denom;
      // eps·s overflowed (tiny rewards, eps > 2) or underflowed to 0 (huge rewards, zero
      // spread): divide in the original units, where σ_g + eps is representable.
      else out[i] = num / s / (sigma / s + eps);
    }
  });
  if (flat.length > 0) {
    throw zeroDenominator(
      fn,
      "config.eps",
      `a group has zero reward spread (group id(s) ${fmtIndices(flat)})`,
    );
  }
  // Only a genuinely unrepresentable advantage is left: r − μ_g beyond 1.8e308 (scale none), or
  // r/eps with zero spread and a tiny eps.
  checkFiniteOutput(fn, "advantages", out, 0, undefined, "the exact advantage exceeds float64");
  return out;
}
