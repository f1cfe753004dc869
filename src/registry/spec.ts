/**
 * An algorithm as inert, frozen data: a policy-loss config, an advantage estimator with its
 * config, where the KL term goes, a citation and provenance notes
 * (docs/derivations/variants.md#what-an-entry-holds).
 */
import type { GAEConfig, GroupNormConfig, ReinforcePPConfig } from "../advantages/index.js";
import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { requireObject } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import type { KLLossConfig } from "../kl/estimator.js";
import type { PolicyLossConfig } from "../losses/config.js";
import type { PapoConfig } from "../losses/papoConfig.js";
import type { Citation } from "./citation.js";

/**
 * The config of an entry's advantage estimator: group normalisation (`grpo`), GAE (`gae`) or the
 * REINFORCE++ baseline (`reinforce_pp`); `rloo` takes none (`null`).
 *
 * @derivation docs/derivations/variants.md#what-an-entry-holds
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > golden: grpo ships the deepseekmath constants
 * @since 0.1.0
 */
export type AdvantageConfig = GroupNormConfig | GAEConfig | ReinforcePPConfig;

/**
 * The advantage estimator families an entry can name.
 *
 * @derivation docs/derivations/variants.md#what-an-entry-holds
 * @enforcedBy test/registry/spec.test.ts > defineAlgorithm > rejects: an unknown advantage family
 * @since 0.1.0
 */
export type AdvantageKind = "grpo" | "rloo" | "gae" | "reinforce_pp";

/**
 * Where the KL penalty goes: added to the loss (`loss.kl`), folded into the rewards with
 * `klInReward` before advantage estimation (`klReward`), or nowhere.
 *
 * @derivation docs/derivations/variants.md#what-an-entry-holds
 * @enforcedBy test/registry/spec.test.ts > defineAlgorithm > rejects: an unknown kl placement
 * @since 0.1.0
 */
export type KLPlacement = "reward" | "loss" | "none";

const ADVANTAGE_KINDS: readonly AdvantageKind[] = ["grpo", "rloo", "gae", "reinforce_pp"];
const KL_PLACEMENTS: readonly KLPlacement[] = ["reward", "loss", "none"];

/**
 * A published algorithm expressed as polgrad configuration plus provenance. Invariant (checked by
 * {@link defineAlgorithm}): `klPlacement` is `"loss"` exactly when `loss.kl` is set, and `"reward"`
 * exactly when `klReward` is set, so `"none"` carries no KL config on either side.
 *
 * @derivation docs/derivations/variants.md#what-an-entry-holds
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: every key equals its entry's name
 * @since 0.1.0
 */
export interface AlgorithmSpec {
  /** Registry key; equals the key in `ALGORITHMS`. */
  readonly name: string;
  /** The policy-loss config to hand to `policyLoss` (dr_grpo's needs `normLen` first). */
  readonly loss: PolicyLossConfig;
  /** Which advantage estimator family the algorithm uses. */
  readonly advantage: AdvantageKind;
  /** The estimator's config, or `null` where it takes none (rloo). */
  readonly advantageConfig: AdvantageConfig | null;
  /** Where the KL term goes. */
  readonly klPlacement: KLPlacement;
  /** Estimator kind and coefficient of the in-reward KL; set iff `klPlacement` is `"reward"`. */
  readonly klReward: KLLossConfig | null;
  /** The source of the equations and constants. */
  readonly citation: Citation;
  /** Aggregation, clip, KL and advantage facts, including every knob the paper leaves unstated. */
  readonly notes: string;
  /**
   * An extension evaluated on top of `loss` (its parent): PAPO's perception and double-entropy
   * terms in the official (default) and TRL forms. Absent for plain policy losses.
   */
  readonly papo?: { readonly official: PapoConfig; readonly trl: PapoConfig };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

/**
 * Check an algorithm spec's KL-placement invariant and return a deeply frozen copy of it.
 *
 * The two checks run in polgrad's order: first `klPlacement === "loss"` iff `loss.kl` is set, then
 * `klPlacement === "reward"` iff `klReward` is set (so placement `"loss"` with both configs set fails
 * the second check). Before them, `advantage` and `klPlacement` must be known names.
 *
 * @param spec - The spec to check; it is copied, never frozen in place.
 * @returns A structurally equal copy in which every nested object is frozen.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when `advantage` or `klPlacement` is not a known name.
 * @throws {ConfigError} E_CONFIG with arg `spec.loss.kl` when placement `"loss"` and `loss.kl`
 *   disagree; with arg `spec.klReward` when placement `"reward"` and `klReward` disagree.
 * @derivation docs/derivations/variants.md#what-an-entry-holds
 * @enforcedBy test/registry/spec.test.ts > defineAlgorithm > rejects: placement loss without loss.kl
 * @enforcedBy test/registry/spec.test.ts > defineAlgorithm > rejects: placement loss with both kl configs set fails the reward check
 * @enforcedBy test/registry/spec.test.ts > defineAlgorithm > property: exactly the three consistent placement combinations are accepted
 * @enforcedBy test/registry/spec.test.ts > defineAlgorithm > identity: the result is a deeply frozen copy
 * @since 0.1.0
 */
export function defineAlgorithm(spec: AlgorithmSpec): AlgorithmSpec {
  requireObject("defineAlgorithm", "spec", spec, "an AlgorithmSpec", [
    "name",
    "advantage",
    "klPlacement",
    "loss",
  ]);
  requireObject("defineAlgorithm", "spec.loss", spec.loss, "a PolicyLossConfig", [
    "ratio",
    "surrogate",
    "aggregation",
  ]);
  const fn = "defineAlgorithm";
  oneOf(fn, "spec.advantage", spec.advantage, ADVANTAGE_KINDS);
  const placement = oneOf(fn, "spec.klPlacement", spec.klPlacement, KL_PLACEMENTS);
  const lossKl = spec.loss.kl ?? null;
  const klReward = spec.klReward ?? null;
  const got = (arg: string, value: unknown): string =>
    `klPlacement ${fmtValue(placement)} with ${arg} ${fmtValue(value)} (algorithm ${fmtValue(spec.name)})`;
  if ((placement === "loss") !== (lossKl !== null)) {
    const arg = "spec.loss.kl";
    throw fail(
      ConfigError,
      fn,
      arg,
      'set exactly when spec.klPlacement is "loss"',
      got("loss.kl", lossKl),
    );
  }
  if ((placement === "reward") !== (klReward !== null)) {
    const arg = "spec.klReward";
    throw fail(
      ConfigError,
      fn,
      arg,
      'set exactly when spec.klPlacement is "reward"',
      got("klReward", klReward),
    );
  }
  return deepFreeze(structuredClone(spec));
}
