import { checkFiniteOutput } from "../core/finite.js";
import { fmtIndices } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { maxAbsOf, meanAndSs, pow2Scale } from "../core/scale.js";
import type { VectorLike } from "../core/tensor.js";
import { checkEps, checkFlag, checkObject, zeroDenominator } from "../core/validate.js";
import { fail, ShapeError } from "../errors.js";
import { type GroupIdsLike, groupedInputs, rejectSingletons, scorableGroups } from "./groups.js";
import { checkSingletons, type SingletonPolicy } from "./singletons.js";

/**
 * How group-normalized advantages are scaled: by the group std (GRPO), by the std of the whole
 * batch while still centring by the group mean (TRL's `scale_rewards="batch"`), or not at all
 * (Dr.GRPO).
 */
export const GroupNormScale = { STD: "std", NONE: "none", BATCH: "batch" } as const;
/** One of the group-normalization scale strings. */
export type GroupNormScale = (typeof GroupNormScale)[keyof typeof GroupNormScale];
/** Every group-normalization scale. */
export const GROUP_NORM_SCALES: readonly GroupNormScale[] = Object.values(GroupNormScale);

/**
 * What a NaN reward means: an error (`"reject"`, polgrad's rule) or an unscorable completion
 * (`"unscorable"`, TRL's rule when every reward function returned None): it is left out of every
 * statistic and its advantage is 0.
 */
export const NanRewards = { REJECT: "reject", UNSCORABLE: "unscorable" } as const;
/** One of the NaN-reward policy strings. */
export type NanRewards = (typeof NanRewards)[keyof typeof NanRewards];
/** Every NaN-reward policy. */
export const NAN_REWARDS: readonly NanRewards[] = Object.values(NanRewards);

/**
 * Group normalization of rewards (polgrad's GroupNormConfig, extended). Inert data, validated at
 * call time. GRPO is the default; Dr.GRPO is `{ scale: "none" }` (centering only).
 */
export interface GroupNormConfig {
  /** Subtract the group mean μ_g. @defaultValue true */
  readonly center: boolean;
  /** Divide by σ_g + eps (`"std"`), by σ_batch + eps (`"batch"`) or not (`"none"`). @defaultValue "std" */
  readonly scale: GroupNormScale;
  /** Added to the std outside the square root. @defaultValue 1e-4 (TRL's value; verl 1e-6, OpenRLHF 1e-9) */
  readonly eps: number;
  /** Bessel-corrected std (divide by n − 1) rather than the population std (divide by n). @defaultValue true */
  readonly unbiased: boolean;
  /**
   * A group of one (scorable) reward: `"raise"`, `"zero"`, `"raw"` or `"unit"` (μ = 0, σ = 1:
   * verl's GRPO). Unset: the group's own statistics (μ_g = R, so 0 when centred), and an error
   * under scale `"std"`, whose σ_g needs two rewards. @defaultValue unset
   */
  readonly singletons?: SingletonPolicy;
  /** `"reject"` or `"unscorable"` (TRL). @defaultValue "reject" */
  readonly nanRewards?: NanRewards;
}

/** GRPO's defaults: center, scale by the Bessel-corrected group std, eps 1e-4. */
export const DEFAULT_GROUP_NORM: GroupNormConfig = Object.freeze({
  center: true,
  scale: "std",
  eps: 1e-4,
  unbiased: true,
});

/**
 * Compute group-normalized per-sequence advantages (GRPO; Dr.GRPO with `scale: "none"`; TRL's
 * batch scaling with `scale: "batch"`).
 *
 * Formula: μ_g = S_g / G_g; σ_g = sqrt(Σ_{j∈g} (r_j − μ_g)² / (G_g − 1)) (or / G_g when
 * `unbiased` is false), always from the *centered* deviations; σ_batch the same statistic over
 * every (scorable) reward of the batch around the batch mean; then with σ = σ_g (`"std"`) or
 * σ_batch (`"batch"`): A_i = (r_i − μ_g)/(σ + eps) (center), r_i/(σ + eps) (no center);
 * r_i − μ_g or r_i under `"none"`. With scale std a group's advantages carry the factor
 * 1/(σ_g + eps): the difficulty bias that Dr.GRPO removes (and batch scaling spreads evenly).
 * Singleton groups follow `singletons`; under `nanRewards: "unscorable"` a NaN reward is left out
 * of μ_g, σ_g and σ_batch, gets A = 0, and a group's size counts its scorable rewards only.
 * Sums: compensated, over each group's members in ascending batch order (σ_batch: ascending).
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param rewards - The `[B]` sequence rewards, finite (NaN allowed under `"unscorable"`), B ≥ 1.
 * @param groupIds - The `[B]` non-negative integer group labels (any labels; only the partition matters).
 * @param config - The normalization; missing fields take {@link DEFAULT_GROUP_NORM}.
 * @returns The `[B]` advantages.
 * @throws {ShapeError} E_SHAPE when rewards or groupIds are not 1-D, empty, of different lengths,
 *   not integer or negative; when a group has a single reward under scale "std" (singletons
 *   unset) or singletons "raise"; or when scale is "batch" with fewer than 2 scorable rewards.
 * @throws {NonFiniteError} E_NONFINITE when a reward is infinite, or NaN under `"reject"`.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when scale, singletons or nanRewards is not a known name.
 * @throws {ConfigError} E_CONFIG when center/unbiased are not booleans, eps is negative or not
 *   finite, or eps is 0 and a scaled group (or the batch) has zero spread.
 * @throws {OverflowError} E_OVERFLOW when an exact advantage exceeds float64 (r_i − μ_g beyond
 *   1.8e308 under scale none, or r_i/eps with zero spread); rewards near ±1.8e308 or ±1e-300 are
 *   otherwise handled by power-of-two rescaling, bitwise the plain formula on moderate rewards.
 * @derivation docs/derivations/advantages.md#group-normalization
 * @enforcedBy test/advantages/grpo.test.ts > grpoAdvantages > golden: one group [1, 2, 3] gives [-1, 0, 1] / (1 + 1e-4)
 * @enforcedBy test/advantages/grpo.test.ts > grpoAdvantages > golden: difficulty bias, std scaling weights each group by exactly 1/(sigma_g + eps)
 * @enforcedBy test/advantages/grpo.test.ts > grpoAdvantages > rejects: a singleton group under scale std, whatever unbiased is
 * @enforcedBy test/advantages/groupPolicies.test.ts > grpoAdvantages > golden: batch scaling centres by the group mean and divides by the batch std
 * @enforcedBy test/advantages/groupPolicies.test.ts > grpoAdvantages > golden: each singleton policy on a singleton group of reward 3
 * @enforcedBy test/advantages/groupPolicies.test.ts > grpoAdvantages > golden: unscorable rewards are left out of every statistic and get 0
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b grpo:norm_adv_by_std_in_grpo=True replays within its tolerance
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: trl@f2cd5771 sum_then_normalize:scale_rewards=batch replays within its tolerance
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: openrlhf@3c3be623 group_norm replays within its tolerance
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
  // The NaN policy is read first: it decides how the rewards are validated.
  const cfg = checkObject(fn, "config", config);
  const nanRewards = oneOf(fn, "config.nanRewards", cfg.nanRewards ?? "reject", NAN_REWARDS);
  const unscorable = nanRewards === "unscorable";
  const { r, groups: all } = groupedInputs(fn, rewards, groupIds, unscorable);
  const scale = oneOf(fn, "config.scale", cfg.scale ?? DEFAULT_GROUP_NORM.scale, GROUP_NORM_SCALES);
  const center = checkFlag(fn, "config.center", cfg.center ?? DEFAULT_GROUP_NORM.center);
  const unbiased = checkFlag(fn, "config.unbiased", cfg.unbiased ?? DEFAULT_GROUP_NORM.unbiased);
  const eps = checkEps(fn, "config.eps", cfg.eps ?? DEFAULT_GROUP_NORM.eps);
  const singletons = checkSingletons(fn, "config.singletons", cfg.singletons);
  const groups = unscorable ? scorableGroups(r, all) : all;
  if (singletons === "raise") rejectSingletons(fn, groups, 'when config.singletons is "raise"');
  else if (scale === "std" && singletons === undefined)
    rejectSingletons(fn, groups, 'when config.scale is "std" (the group std needs 2 rewards)');

  // Batch scaling: σ_batch over every scorable reward, and the group means, in one common scale.
  let batch: { s: number; sigma: number } | null = null;
  if (scale === "batch") {
    const idx = Int32Array.from(groups.members.flatMap((m) => [...m])).sort();
    if (idx.length < 2) {
      throw fail(
        ShapeError,
        fn,
        "rewards",
        'at least 2 scorable rewards when config.scale is "batch" (the batch std needs 2)',
        `${idx.length}`,
      );
    }
    const s = pow2Scale(maxAbsOf(r, idx));
    const { ss } = meanAndSs(idx.length, (k) => (r[idx[k] as number] as number) * s);
    const sigma = Math.sqrt(ss / (unbiased ? idx.length - 1 : idx.length));
    if (sigma === 0 && eps === 0)
      throw zeroDenominator(fn, "config.eps", "every scorable reward is equal (zero batch std)");
    batch = { s, sigma };
  }

  const out = new Float64Array(r.length);
  const flat: number[] = [];
  groups.members.forEach((members, g) => {
    const G = members.length;
    if (G === 1 && (singletons === "zero" || singletons === "raw")) {
      const i = members[0] as number;
      out[i] = singletons === "zero" ? 0 : (r[i] as number);
      return;
    }
    // Every statistic is taken on r·s (s = 2^k from the group's max |r|, or the batch's under
    // batch scaling; s = 1 on moderate rewards, where the results are bitwise the plain
    // formulas): no sum, deviation or square of rewards near ±1.8e308 or ±1e-300 overflows.
    const s = batch !== null ? batch.s : pow2Scale(maxAbsOf(r, members));
    const x = (k: number) => (r[members[k] as number] as number) * s;
    // σ_g from the centered deviations, whether or not the output is centered; "unit": μ = 0, σ = 1.
    const unit = G === 1 && singletons === "unit";
    const { mean, ss } = unit ? { mean: 0, ss: 0 } : meanAndSs(G, x);
    const sigma =
      batch !== null
        ? batch.sigma
        : scale !== "std"
          ? 0
          : unit
            ? s
            : Math.sqrt(ss / (unbiased ? G - 1 : G));
    const epsS = eps * s;
    const denom = sigma + epsS;
    if (scale === "std" && denom === 0 && eps === 0) flat.push(groups.ids[g] as number);
    for (let k = 0; k < G; k++) {
      const i = members[k] as number;
      const num = center ? x(k) - mean : x(k);
      if (scale === "none") out[i] = center ? num / s : (r[i] as number);
      else if (denom > 0 && Number.isFinite(epsS)) out[i] = num / denom;
      // eps·s overflowed (tiny rewards, eps > 2) or underflowed to 0 (huge rewards, zero
      // spread): divide in the original units, where σ + eps is representable.
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
