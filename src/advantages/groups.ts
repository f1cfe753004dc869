/**
 * Grouped-reward inputs shared by `grpoAdvantages`, `rlooAdvantages` and `reinforcePPAdvantages`:
 * validation of `rewards` `[B]` and `groupIds` `[B]`, the partition into groups, and per-group
 * compensated means (docs/derivations/advantages.md#grouped-inputs).
 *
 * Groups are formed from the sorted unique labels; within a group the members keep ascending batch
 * order, and every per-group sum is a Neumaier compensated sum over the members in that order.
 */
import { fmtShape } from "../core/message.js";
import { maxAbsOf, pow2Scale } from "../core/scale.js";
import { CompensatedSum } from "../core/sum.js";
import type { VectorLike } from "../core/tensor.js";
import { checkFiniteAll, describeShape, isNumberArray, toVector } from "../core/validate.js";
import { fail, NonFiniteError, ShapeError } from "../errors.js";
import { singletonError } from "./singletons.js";

/**
 * Group labels `[B]`: non-negative integers, as a plain array or an integer typed array. Labels are
 * arbitrary (non-contiguous, unsorted); only the partition they induce matters.
 */
export type GroupIdsLike =
  | readonly number[]
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array;

/** A partition of the batch into groups. */
export interface Groups {
  /** The distinct labels, ascending. */
  readonly ids: readonly number[];
  /** The batch indices of each group (ascending), parallel to `ids`. */
  readonly members: readonly Int32Array[];
}

const INTEGER_ARRAYS = [Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array];

/**
 * Validate `rewards` `[B]`: 1-D numbers, at least one entry, finite everywhere (NaN allowed, as
 * the unscorable marker, when `allowNaN`).
 * @internal
 */
export function checkRewards(fn: string, rewards: VectorLike, allowNaN = false): Float64Array {
  const r = toVector(fn, "rewards", rewards);
  if (r.length === 0) {
    throw fail(ShapeError, fn, "rewards", "non-empty (at least one sequence)", "shape [0]");
  }
  if (!allowNaN) checkFiniteAll(fn, "rewards", r);
  else {
    // NaN marks an unscorable completion; an infinite reward is still an error.
    for (let i = 0; i < r.length; i++) {
      const v = r[i] as number;
      if (v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY) {
        throw fail(
          NonFiniteError,
          fn,
          "rewards",
          "finite or NaN (unscorable)",
          `${v} at index ${i}`,
        );
      }
    }
  }
  return r;
}

/**
 * Validate `groupIds` against `rewards` of length `n`, in polgrad's order: 1-D, same length, integer,
 * non-negative. Returns the labels as plain numbers.
 * @internal
 */
export function checkGroupIds(fn: string, groupIds: GroupIdsLike, n: number): ArrayLike<number> {
  const arg = "groupIds";
  const isTyped = ArrayBuffer.isView(groupIds) && !(groupIds instanceof DataView);
  const isList = isNumberArray(groupIds);
  if (!isTyped && !isList) {
    throw fail(ShapeError, fn, arg, "1-D [B] of integers", `shape ${describeShape(groupIds)}`);
  }
  const ids = groupIds as ArrayLike<number>;
  if (ids.length !== n) {
    throw fail(
      ShapeError,
      fn,
      arg,
      `the shape of rewards ${fmtShape([n])}`,
      `shape ${fmtShape([ids.length])}`,
    );
  }
  if (isTyped && !INTEGER_ARRAYS.some((C) => groupIds instanceof C)) {
    throw fail(
      ShapeError,
      fn,
      arg,
      "an integer array (number[] of integers or an integer typed array)",
      groupIds.constructor.name,
    );
  }
  let min = 0;
  for (let i = 0; i < ids.length; i++) {
    const v = ids[i] as number;
    if (!Number.isSafeInteger(v)) {
      throw fail(ShapeError, fn, arg, "integers (safe: |id| < 2^53)", `${v} at index ${i}`);
    }
    if (v < min) min = v;
  }
  if (min < 0) {
    throw fail(ShapeError, fn, arg, "non-negative", `minimum ${min}`);
  }
  return ids;
}

/**
 * Partition the batch by label: sorted unique labels, members in ascending batch order.
 * @internal
 */
export function partition(ids: ArrayLike<number>): Groups {
  const byId = new Map<number, number[]>();
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as number;
    const list = byId.get(id);
    if (list === undefined) byId.set(id, [i]);
    else list.push(i);
  }
  const sorted = [...byId.keys()].sort((a, b) => a - b);
  return { ids: sorted, members: sorted.map((id) => Int32Array.from(byId.get(id) ?? [])) };
}

/**
 * Validate grouped inputs and partition them (the shared entry of the three grouped estimators).
 * @internal
 */
export function groupedInputs(
  fn: string,
  rewards: VectorLike,
  groupIds: GroupIdsLike,
  allowNaN = false,
): { r: Float64Array; groups: Groups } {
  const r = checkRewards(fn, rewards, allowNaN);
  const ids = checkGroupIds(fn, groupIds, r.length);
  return { r, groups: partition(ids) };
}

/**
 * The labels of the groups holding a single reward, ascending.
 * @internal
 */
export function singletonIds(groups: Groups): number[] {
  const out: number[] = [];
  groups.members.forEach((m, g) => {
    if (m.length === 1) out.push(groups.ids[g] as number);
  });
  return out;
}

/**
 * Throw {@link ShapeError} (arg `groupIds`) when some group has a single reward.
 * @internal
 */
export function rejectSingletons(fn: string, groups: Groups, why: string): void {
  const single = singletonIds(groups);
  if (single.length > 0) throw singletonError(fn, single, why);
}

/**
 * Per-group centering r_i − μ_g with μ_g = S_g / G_g (the Dr.GRPO and REINFORCE++-baseline
 * advantage). A singleton group gives 0. With `scale` null each group is centered on r·s_g
 * (s_g = 2^k from its max |r|, so no sum overflows) and returned in the units of r (a genuinely
 * unrepresentable r_i − μ_g is ±Infinity, for the caller to reject); with a number s, every group is
 * centered on r·s and returned in those scaled units. With s = 1 on moderate rewards this is bitwise
 * the plain r_i − S_g/G_g.
 * @internal
 */
export function centerByGroup(
  r: Float64Array,
  groups: Groups,
  scale: number | null = null,
  singletonRaw = false,
): Float64Array {
  const out = new Float64Array(r.length);
  for (const members of groups.members) {
    const s = scale ?? pow2Scale(maxAbsOf(r, members));
    const acc = new CompensatedSum();
    for (let k = 0; k < members.length; k++) acc.add((r[members[k] as number] as number) * s);
    // singletonRaw: a group of one takes the baseline 0 (verl), so it keeps its raw reward.
    const mean = singletonRaw && members.length === 1 ? 0 : acc.value() / members.length;
    for (let k = 0; k < members.length; k++) {
      const i = members[k] as number;
      const d = (r[i] as number) * s - mean;
      out[i] = scale === null ? d / s : d;
    }
  }
  return out;
}

/**
 * The groups restricted to their scorable members (reward not NaN); groups left empty are dropped.
 * @internal
 */
export function scorableGroups(r: Float64Array, groups: Groups): Groups {
  const ids: number[] = [];
  const members: Int32Array[] = [];
  groups.members.forEach((m, g) => {
    const kept = m.filter((i) => !Number.isNaN(r[i] as number));
    if (kept.length > 0) {
      ids.push(groups.ids[g] as number);
      members.push(kept);
    }
  });
  return { ids, members };
}
