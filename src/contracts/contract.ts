/**
 * A reduction contract as inert, frozen data (docs/contracts.md#what-a-contract-holds): a parent
 * configuration, a child configuration that extends or re-parametrises it, the parameter value at
 * which the two coincide, the batch condition the coincidence needs, and which comparisons are
 * bitwise by construction.
 */
import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import type { Matrix, MatrixLike } from "../core/tensor.js";
import { requireObject } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import type { PolicyLossConfig } from "../losses/config.js";
import type { PapoConfig } from "../losses/papoConfig.js";
import type { PolicyLossInputs } from "../losses/policyLoss.js";

/**
 * One side of a contract: a `policyLoss` configuration or a `papoLoss` configuration.
 *
 * @derivation docs/contracts.md#what-a-contract-holds
 * @enforcedBy test/contracts/reductions.test.ts > REDUCTIONS > identity: every parent is a policy loss the emulator can calibrate
 * @since 0.1.0
 */
export type ContractSide =
  | { readonly kind: "policy_loss"; readonly label: string; readonly config: PolicyLossConfig }
  | { readonly kind: "papo"; readonly label: string; readonly config: PapoConfig }
  | {
      readonly kind: "custom";
      readonly label: string;
      readonly evaluate: (batch: ContractBatch) => SideEvaluation;
    };

/**
 * What a `custom` child side returns: an adapter's own loss and gradients on the (rounded,
 * conditioned) batch, so that any implementation can be checked against its parent.
 *
 * @derivation docs/contracts.md#what-a-contract-holds
 * @enforcedBy test/contracts/leaks.test.ts > leaks > property: every seeded leak is caught in fp32, fp16 and bf16
 * @since 0.1.0
 */
export interface SideEvaluation {
  /** The scalar loss. */
  readonly loss: number;
  /** ∂loss/∂logprobs, `[B, T]`. */
  readonly gradLogprobs: Matrix;
  /** ∂loss/∂maskedLogprobs, `[B, T]`, when the side reads that stream. */
  readonly gradMaskedLogprobs?: Matrix | null;
}

/**
 * The batch condition a coincidence needs: `rollout_equals_old` (rolloutLogprobs = oldLogprobs),
 * `on_policy` (oldLogprobs = logprobs, so every ratio is exactly 1), `row_constant_advantages`
 * (one advantage per sequence).
 *
 * @derivation docs/contracts.md#batch-conditions
 * @enforcedBy test/contracts/checkReduction.test.ts > checkReduction > golden: imposing a condition is reported and strict mode rejects an unmet one
 * @since 0.1.0
 */
export type BatchCondition = "rollout_equals_old" | "on_policy" | "row_constant_advantages";

/** Every batch condition. */
export const BATCH_CONDITIONS: readonly BatchCondition[] = [
  "rollout_equals_old",
  "on_policy",
  "row_constant_advantages",
];

/**
 * How the child's numbers relate to the parent's at the coincidence point: `equal`, or
 * `token_sum_norm_rescale` (child = N/(B·normLen) · parent, Dr.GRPO against token_mean).
 *
 * @derivation docs/contracts.md#relations
 * @enforcedBy test/contracts/reductions.test.ts > REDUCTIONS > property: every registered reduction holds on generated batches in every precision
 * @since 0.1.0
 */
export type ReductionRelation = "equal" | "token_sum_norm_rescale";

/**
 * A parent/child nesting: the child configuration reduces to the parent at `parameter.value`
 * under `condition`. `exact.loss` (`exact.gradient`) states that the two constructions are
 * algebraically identical, so the loss (gradient) difference is exactly 0 in float64.
 *
 * @derivation docs/contracts.md#what-a-contract-holds
 * @enforcedBy test/contracts/reductions.test.ts > REDUCTIONS > identity: names are the keys and entries are deeply frozen
 * @since 0.1.0
 */
export interface ReductionContract {
  /** Registry key, snake_case. */
  readonly name: string;
  /** One line: "child at parameter = value reduces to parent". */
  readonly summary: string;
  readonly parent: ContractSide;
  readonly child: ContractSide;
  /** The child's parameter and the value at which child and parent coincide. */
  readonly parameter: { readonly name: string; readonly value: number; readonly note: string };
  readonly condition: BatchCondition | null;
  readonly relation: ReductionRelation;
  /** Which comparisons are bitwise by construction (difference exactly 0 in float64). */
  readonly exact: { readonly loss: boolean; readonly gradient: boolean };
  /** Streams the batch must carry beyond the parent's (e.g. `maskedLogprobs`). */
  readonly requires: readonly ("maskedLogprobs" | "entropies" | "maskedEntropies")[];
  /** Why the reduction holds, and where it stops holding. */
  readonly notes: string;
}

/**
 * A batch for a contract: the policy-loss inputs plus the streams an extension reads.
 *
 * @derivation docs/contracts.md#what-a-contract-holds
 * @enforcedBy test/contracts/checkReduction.test.ts > checkReduction > rejects: a batch without a stream the contract requires
 * @since 0.1.0
 */
export interface ContractBatch extends PolicyLossInputs {
  /** `[B, T]` logprobs of the sampled tokens with the image masked (PAPO). */
  readonly maskedLogprobs?: MatrixLike | null;
  /** `[B, T]` entropies of the original view (PAPO trl form with double entropy). */
  readonly entropies?: MatrixLike | null;
  /** `[B, T]` entropies of the masked view (PAPO trl form with double entropy). */
  readonly maskedEntropies?: MatrixLike | null;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

/**
 * Check a reduction contract's invariants and return a deeply frozen copy.
 *
 * Formula: requires parent.kind = "policy_loss" (the calibration emulates the parent; the child
 * may be a policy loss, a PAPO loss or a custom evaluator), a finite
 * parameter value, a known condition and relation, and exact.gradient ⇒ exact.loss.
 *
 * @param contract - The contract; it is copied, never frozen in place.
 * @returns A structurally equal, deeply frozen copy.
 * @throws {ConfigError} E_CONFIG when the parent is not a policy loss, the parameter value is not
 *   finite, or a bitwise gradient is claimed without a bitwise loss.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown side kind, condition or relation.
 * @derivation docs/contracts.md#what-a-contract-holds
 * @enforcedBy test/contracts/reductions.test.ts > defineReduction > rejects: a parent that is not a policy loss and a non-finite parameter
 * @since 0.1.0
 */
export function defineReduction(contract: ReductionContract): ReductionContract {
  requireObject("defineReduction", "contract", contract, "a ReductionContract", [
    "name",
    "parent",
    "child",
    "relation",
    "requires",
  ]);
  requireObject("defineReduction", "contract.child", contract.child, "a ContractSide {kind, …}", [
    "kind",
  ]);
  requireObject("defineReduction", "contract.parent", contract.parent, "a ContractSide {kind, …}", [
    "kind",
  ]);
  const fn = "defineReduction";
  oneOf(fn, "contract.child.kind", contract.child.kind, ["policy_loss", "papo", "custom"] as const);
  if (contract.parent.kind !== "policy_loss") {
    const arg = "contract.parent.kind";
    throw fail(
      ConfigError,
      fn,
      arg,
      '"policy_loss" (the tolerance is calibrated on the parent)',
      fmtValue(contract.parent.kind),
    );
  }
  if (contract.condition !== null)
    oneOf(fn, "contract.condition", contract.condition, BATCH_CONDITIONS);
  oneOf(fn, "contract.relation", contract.relation, ["equal", "token_sum_norm_rescale"] as const);
  if (typeof contract.parameter.value !== "number" || !Number.isFinite(contract.parameter.value)) {
    const arg = "contract.parameter.value";
    throw fail(
      ConfigError,
      fn,
      arg,
      "a finite number (a huge finite value stands in for ∞)",
      fmtValue(contract.parameter.value),
    );
  }
  if (contract.exact.gradient && !contract.exact.loss) {
    const arg = "contract.exact";
    throw fail(
      ConfigError,
      fn,
      arg,
      "bitwise in the loss when bitwise in the gradient",
      fmtValue(contract.exact),
    );
  }
  const child = contract.child;
  if (child.kind !== "custom") return deepFreeze(structuredClone(contract));
  // A custom side carries a function: clone the data around it, keep the function itself.
  const { child: _, ...rest } = contract;
  return deepFreeze({ ...structuredClone(rest), child: { ...child } });
}
