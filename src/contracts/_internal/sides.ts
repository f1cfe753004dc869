/**
 * Evaluating a contract side, imposing or checking its batch condition, and resolving a
 * token_sum_norm budget. @internal
 */
import { fmtValue } from "../../core/message.js";
import { CompensatedSum } from "../../core/sum.js";
import type { Mask, Matrix } from "../../core/tensor.js";
import { broadcastAdvantages, toMask, toMatrix } from "../../core/validate.js";
import { ConfigError, fail } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import { papoLoss } from "../../losses/papo.js";
import { policyLoss } from "../../losses/policyLoss.js";
import type { BatchCondition, ContractBatch, ContractSide } from "../contract.js";

/** The loss and the gradients of one side (absent streams have no gradient). */
export interface SideResult {
  readonly loss: number;
  readonly logprobs: Float64Array;
  readonly maskedLogprobs: Float64Array | null;
}

/** Fill a null `normLen` of a token_sum_norm config (and of its KL) with `normLen`. */
export function withNormLen<C extends PolicyLossConfig>(config: C, normLen: number): C {
  const tsn =
    config.aggregation === "token_sum_norm" || config.kl?.aggregation === "token_sum_norm";
  if (!tsn || (config.normLen !== null && config.normLen !== undefined)) return config;
  return { ...config, normLen };
}

/** Evaluate a side on a (rounded, conditioned) batch. */
export function evaluateSide(
  side: ContractSide,
  batch: ContractBatch,
  normLen: number,
): SideResult {
  if (side.kind === "policy_loss") {
    const r = policyLoss(withNormLen(side.config, normLen), batch);
    return { loss: r.loss, logprobs: r.gradLogprobs.data, maskedLogprobs: null };
  }
  if (side.kind === "custom") {
    const r = side.evaluate(batch);
    const masked = r.gradMaskedLogprobs ?? null;
    return {
      loss: r.loss,
      logprobs: r.gradLogprobs.data,
      maskedLogprobs: masked === null ? null : masked.data,
    };
  }
  const { maskedLogprobs, entropies, maskedEntropies } = batch;
  const r = papoLoss(withNormLen(side.config, normLen), {
    ...batch,
    maskedLogprobs: maskedLogprobs as Matrix,
    entropies: entropies ?? null,
    maskedEntropies: maskedEntropies ?? null,
  });
  return { loss: r.loss, logprobs: r.gradLogprobs.data, maskedLogprobs: r.gradMaskedLogprobs.data };
}

function firstDifference(a: Matrix, b: Matrix, mask: Mask): number {
  for (let i = 0; i < mask.data.length; i++)
    if (mask.data[i] === 1 && a.data[i] !== b.data[i]) return i;
  return -1;
}

function at(i: number, cols: number): string {
  return `(${Math.floor(i / cols)}, ${i % cols})`;
}

/**
 * Make `batch` satisfy `condition` (`impose`), or check that it does. Returns the batch and a
 * description of what was imposed, or null when the batch already satisfied the condition.
 */
export function applyCondition(
  fn: string,
  condition: BatchCondition | null,
  batch: ContractBatch,
  impose: boolean,
): { batch: ContractBatch; imposed: string | null } {
  if (condition === null) return { batch, imposed: null };
  const lp = toMatrix(fn, "logprobs", batch.logprobs);
  const mask = toMask(fn, batch.responseMask, { rows: lp.rows, cols: lp.cols, arg: "logprobs" });
  const unmet = (arg: string, rule: string, actual: string): ConfigError =>
    fail(ConfigError, fn, arg, `${rule} (condition ${condition})`, actual);
  if (condition === "rollout_equals_old" || condition === "on_policy") {
    const old = toMatrix(fn, "oldLogprobs", batch.oldLogprobs);
    const [arg, other, target, source] =
      condition === "on_policy"
        ? (["oldLogprobs", old, "oldLogprobs", lp] as const)
        : (["rolloutLogprobs", batch.rolloutLogprobs ?? null, "rolloutLogprobs", old] as const);
    const cur = other === null ? null : toMatrix(fn, arg, other);
    const diff = cur === null ? 0 : firstDifference(cur, source, mask);
    if (cur !== null && diff < 0) return { batch, imposed: null };
    const srcName = condition === "on_policy" ? "logprobs" : "oldLogprobs";
    if (!impose) {
      const got = cur === null ? "nothing" : `a difference at ${at(diff, lp.cols)}`;
      throw unmet(arg, `equal to ${srcName} at every response position`, got);
    }
    return { batch: { ...batch, [target]: source }, imposed: `${target} := ${srcName}` };
  }
  const A = broadcastAdvantages(fn, batch.advantages, lp, "logprobs", mask);
  const { rows: B, cols: T } = lp;
  const means = new Float64Array(B);
  let spread = -1;
  for (let b = 0; b < B; b++) {
    const acc = new CompensatedSum();
    let L = 0;
    let first: number | null = null;
    for (let t = 0; t < T; t++) {
      if (mask.data[b * T + t] !== 1) continue;
      const a = A.data[b * T + t] as number;
      if (first === null) first = a;
      else if (a !== first && spread < 0) spread = b * T + t;
      acc.add(a);
      L++;
    }
    means[b] = acc.value() / L;
  }
  if (spread < 0) return { batch, imposed: null };
  if (!impose)
    throw unmet("advantages", "constant along every row", `a change at ${at(spread, T)}`);
  return { batch: { ...batch, advantages: means }, imposed: "advantages := per-row means" };
}

/** Check that `batch` carries every stream in `requires`. */
export function checkRequired(
  fn: string,
  contract: string,
  requires: readonly string[],
  batch: ContractBatch,
): void {
  for (const arg of requires) {
    const x = (batch as unknown as Record<string, unknown>)[arg];
    if (x === null || x === undefined) {
      throw fail(
        ConfigError,
        fn,
        `batch.${arg}`,
        `given for contract ${fmtValue(contract)}`,
        String(x),
      );
    }
  }
}
