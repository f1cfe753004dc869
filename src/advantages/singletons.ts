/**
 * What a group estimator does with a group of one reward (docs/derivations/advantages.md#singleton-groups).
 * polgrad raises; the frameworks do not, and each does something different: verl's GRPO, GPG and
 * REINFORCE++-baseline take μ = 0 (and σ = 1), so a singleton keeps its raw reward R (R/(1 + ε)
 * under std scaling); verl's loop RLOO keeps R, its vectorised RLOO gives 0; TRL's nan-aware
 * statistics give 0 to a group with one scorable reward. Each is one policy here.
 * @internal
 */
import { fmtIndices } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { fail, ShapeError } from "../errors.js";

/**
 * The singleton-group policies: `"raise"` (an error naming the groups), `"zero"` (A = 0), `"raw"`
 * (A = R, neither centred nor scaled), `"unit"` (the group's statistics are taken as μ = 0, σ = 1,
 * so the estimator's own formula gives R/(1 + ε) under std scaling, R without it; verl's GRPO).
 */
export const SingletonPolicy = {
  RAISE: "raise",
  ZERO: "zero",
  RAW: "raw",
  UNIT: "unit",
} as const;
/** One of the singleton-group policy strings. */
export type SingletonPolicy = (typeof SingletonPolicy)[keyof typeof SingletonPolicy];
/** Every singleton-group policy. */
export const SINGLETON_POLICIES: readonly SingletonPolicy[] = Object.values(SingletonPolicy);

/**
 * Check a `singletons` option against the policies an estimator allows (undefined passes through:
 * the estimator's default).
 * @internal
 */
export function checkSingletons(
  fn: string,
  arg: string,
  value: unknown,
  allowed: readonly SingletonPolicy[] = SINGLETON_POLICIES,
): SingletonPolicy | undefined {
  if (value === undefined) return undefined;
  return oneOf(fn, arg, value as string, allowed);
}

/**
 * The error a `"raise"` policy (or an estimator that needs two rewards) gives for singleton groups.
 * @internal
 */
export function singletonError(fn: string, ids: readonly number[], why: string): ShapeError {
  return fail(
    ShapeError,
    fn,
    "groupIds",
    `a partition into groups of at least 2 rewards ${why}`,
    `group id(s) ${fmtIndices(ids)} with a single reward`,
  );
}

/**
 * A singleton's advantage under the policies that set it directly: r under `"raw"`, 0 otherwise
 * (`"zero"`; the callers handle `"raise"` and `"unit"` before).
 * @internal
 */
export function singletonAdvantage(policy: SingletonPolicy, r: number): number {
  return policy === "raw" ? r : 0;
}
