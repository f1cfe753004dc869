/**
 * Input handling shared by the framework models: validation (the house rules, except that rows
 * with zero response tokens are allowed, as every framework allows them), zero-filling of padding
 * before any arithmetic, and the row/batch reductions the frameworks use
 * (docs/conformance/frameworks.md#masks-and-empty-rows).
 * @internal
 */

import { overflowError } from "../../core/finite.js";
import { fmtValue, mustBe } from "../../core/message.js";
import { oneOf } from "../../core/names.js";
import { CompensatedSum } from "../../core/sum.js";
import type { Mask, MaskLike, Matrix } from "../../core/tensor.js";
import { maskCounts } from "../../core/tensor.js";
import {
  broadcastAdvantages,
  checkFiniteAt,
  checkPositive,
  checkSameShape,
  requireRecord,
  toMask,
  toMatrix,
} from "../../core/validate.js";
import { ConfigError, fail, MaskError } from "../../errors.js";
import { POLICY_LOSS_INPUTS, type PolicyLossInputs } from "../../losses/policyLoss.js";
import type { FrameworkResult } from "./model.js";

/** A validated batch: every stream zero-filled at padding, so junk never reaches arithmetic. */
export interface FrameworkBatch {
  /** The model id, named by its errors. */
  readonly fn: string;
  readonly B: number;
  readonly T: number;
  /** The mask, 0/1 per position. */
  readonly m: Uint8Array;
  /** Row lengths L_b (0 allowed). */
  readonly L: Int32Array;
  /** N = Σ_b L_b. */
  readonly N: number;
  /** Rows with L_b > 0. */
  readonly nonEmpty: number;
  readonly lp: Float64Array;
  /** Zero-filled oldLogprobs (all zeros when the model does not read them). */
  readonly old: Float64Array;
  /** Zero-filled advantages broadcast to `[B, T]` (all zeros when the model does not read them). */
  readonly adv: Float64Array;
  readonly ref: Float64Array;
  readonly rollout: Float64Array;
}

/** Which inputs a model reads. */
export interface BatchReads {
  readonly old: boolean;
  readonly advantages: boolean;
  readonly ref: boolean;
  readonly rollout: boolean;
}

function toFrameworkMask(fn: string, x: MaskLike, rows: number, cols: number): Mask {
  // The frameworks accept rows with no response token; the mask rules are otherwise polgrad's.
  return toMask(fn, x, { rows, cols, arg: "logprobs" }, "responseMask", "allow");
}

function stream(
  fn: string,
  arg: string,
  x: PolicyLossInputs["refLogprobs"],
  like: Matrix,
  mask: Mask,
  why: string,
): Float64Array {
  if (x === null || x === undefined) {
    throw fail(ConfigError, fn, arg, `given (${why})`, String(x));
  }
  const s = toMatrix(fn, arg, x);
  checkSameShape(fn, "logprobs", like, arg, s);
  checkFiniteAt(fn, arg, s, mask);
  return zeroFilled(s.data, mask.data);
}

function zeroFilled(x: Float64Array, m: Uint8Array): Float64Array {
  const out = new Float64Array(x.length);
  for (let i = 0; i < out.length; i++) if (m[i] === 1) out[i] = x[i] as number;
  return out;
}

/** Batches prepared while {@link sharingPreparedBatches} runs, by inputs object and what is read. */
let shared: WeakMap<object, Map<string, FrameworkBatch>> | null = null;

/**
 * Run `body` with the batches {@link prepareBatch} makes shared between models: one inputs object
 * evaluated by many models (the which table's framework rows) is validated and zero-filled once per
 * set of inputs read, not once per model. Only for the duration of `body`, which must not change
 * the inputs (outside it every call prepares afresh, so a caller's edits between calls are seen).
 */
export function sharingPreparedBatches<T>(body: () => T): T {
  if (shared !== null) return body();
  shared = new WeakMap();
  try {
    return body();
  } finally {
    shared = null;
  }
}

/**
 * Validate the inputs a model reads and zero-fill them at padding. Rows with zero response tokens
 * are accepted (the frameworks accept them); whether an all-empty batch is an error depends on the
 * reduction (see {@link reduceRows}).
 */
export function prepareBatch(
  fn: string,
  inputs: PolicyLossInputs,
  reads: BatchReads,
): FrameworkBatch {
  requireRecord(fn, "inputs", inputs, POLICY_LOSS_INPUTS);
  const key = `${reads.old}${reads.advantages}${reads.ref}${reads.rollout}`;
  const hit = shared?.get(inputs)?.get(key);
  if (hit !== undefined) return { ...hit, fn };
  const prepared = prepareAfresh(fn, inputs, reads);
  if (shared !== null) {
    const byReads = shared.get(inputs) ?? new Map<string, FrameworkBatch>();
    shared.set(inputs, byReads.set(key, prepared));
  }
  return prepared;
}

function prepareAfresh(fn: string, inputs: PolicyLossInputs, reads: BatchReads): FrameworkBatch {
  const logprobs = toMatrix(fn, "logprobs", inputs.logprobs);
  const { rows: B, cols: T } = logprobs;
  const empty = new Float64Array(B * T);
  let oldM: Matrix | null = null;
  if (reads.old) {
    oldM = toMatrix(fn, "oldLogprobs", inputs.oldLogprobs);
    checkSameShape(fn, "logprobs", logprobs, "oldLogprobs", oldM);
  }
  const mask = toFrameworkMask(fn, inputs.responseMask, B, T);
  checkFiniteAt(fn, "logprobs", logprobs, mask);
  if (oldM !== null) checkFiniteAt(fn, "oldLogprobs", oldM, mask);
  const m = mask.data;
  const ref = reads.ref
    ? stream(
        fn,
        "refLogprobs",
        inputs.refLogprobs,
        logprobs,
        mask,
        "the model reads the reference policy",
      )
    : empty;
  const rollout = reads.rollout
    ? stream(
        fn,
        "rolloutLogprobs",
        inputs.rolloutLogprobs,
        logprobs,
        mask,
        "the model reads the rollout logprobs",
      )
    : empty;
  const adv = reads.advantages
    ? broadcastAdvantages(fn, inputs.advantages, logprobs, "logprobs", mask).data
    : empty;
  const { L, N, nonEmpty } = maskCounts(mask);
  return {
    fn,
    B,
    T,
    m,
    L,
    N,
    nonEmpty,
    lp: zeroFilled(logprobs.data, m),
    old: oldM === null ? empty : zeroFilled(oldM.data, m),
    adv,
    ref,
    rollout,
  };
}

/** A reduction: loss = (Σ_b rowsum_b / rowDivisor_b) / divisor, rowsum_b = Σ_t m·x. */
export interface Reduction {
  /** Per-row divisor (1 for plain sums), length B. */
  readonly rowDivisor: Float64Array;
  /** The global divisor. */
  readonly divisor: number;
  /** Why the divisor would be 0 (named in the error when it is). */
  readonly divisorName: string;
}

/** 2^-600 and 2^600: exact power-of-two scalings for the overflow pass of {@link reduceRows}. */
const DOWN = 2 ** -600;
const UP = 2 ** 600;

/** (Σ_b (Σ_t m·x·scale)/d_b)/D in the framework's order (sum, then divide). */
function reduceScaled(
  batch: FrameworkBatch,
  x: Float64Array,
  red: Reduction,
  scale: number,
): number {
  const { B, T, m } = batch;
  const total = new CompensatedSum();
  for (let b = 0; b < B; b++) {
    const row = new CompensatedSum();
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) row.add((x[b * T + t] as number) * scale);
    total.add(row.value() / (red.rowDivisor[b] as number));
  }
  return total.value() / red.divisor;
}

/**
 * Reduce a zero-filled per-token matrix: loss = (Σ_b (Σ_t m·x)/d_b)/D, compensated sums in row-major
 * order, and the per-token weights ∂loss/∂x_{b,t} = m·(1/D)/d_b (the order autograd divides in).
 * The frameworks sum, then divide; that order is kept (the recorded replays are bitwise). Only when
 * a partial sum overflows with every term finite (values near 1.8e308) is the reduction redone on
 * terms scaled by 2^-600 (exact) and scaled back, so the loss is ±Infinity only when the exact
 * value exceeds float64 (then {@link frameworkResult} names it).
 * Throws {@link MaskError} when D is not positive (the framework would compute 0/0 = NaN).
 */
export function reduceRows(
  fn: string,
  batch: FrameworkBatch,
  x: Float64Array,
  red: Reduction,
): { loss: number; weights: Float64Array } {
  const { B, T, m } = batch;
  requirePositiveDivisor(fn, red.divisor, red.divisorName);
  const total = new CompensatedSum();
  const weights = new Float64Array(B * T);
  const inv = 1 / red.divisor;
  for (let b = 0; b < B; b++) {
    const row = new CompensatedSum();
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) row.add(x[b * T + t] as number);
    const d = red.rowDivisor[b] as number;
    total.add(row.value() / d);
    const w = inv / d;
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) weights[b * T + t] = w;
  }
  let loss = total.value() / red.divisor;
  if (!Number.isFinite(loss)) {
    // A partial sum overflowed (±∞, or ∞ − ∞ = NaN across rows) with every term finite.
    let finiteTerms = true;
    for (let i = 0; i < x.length; i++)
      if (m[i] === 1 && !Number.isFinite(x[i] as number)) finiteTerms = false;
    if (finiteTerms) loss = reduceScaled(batch, x, red, DOWN) * UP;
  }
  return { loss, weights };
}

/**
 * The framework's divisor must be positive: upstream would compute 0/0 = NaN, named here as a
 * MaskError (the mask has no token the divisor counts). @internal
 */
export function requirePositiveDivisor(fn: string, value: number, name: string): void {
  if (value > 0) return;
  throw fail(
    MaskError,
    fn,
    "responseMask",
    `such that the divisor ${name} is positive (upstream would return NaN)`,
    `${name} = ${value}`,
  );
}

/** Row divisors all equal to `v`. */
export function constantRows(B: number, v: number): Float64Array {
  return new Float64Array(B).fill(v);
}

/**
 * Assemble a result under the numeric policy (docs/conventions.md#numeric-policy): the per-token
 * loss, the gradient and the loss must be finite at response positions, else an OverflowError
 * names the quantity and position (with the log-ratio there); a ratio that overflowed where
 * everything else is finite is reported saturated, Number.MAX_VALUE. `ratio` must already be 1 at
 * padding.
 */
export function frameworkResult(
  batch: FrameworkBatch,
  loss: number,
  grad: Float64Array,
  perToken: Float64Array,
  ratio: Float64Array,
): FrameworkResult {
  const { fn, B: rows, T: cols, m, lp, old } = batch;
  for (const [q, x] of [
    ["perTokenObjective", perToken],
    ["gradLogprobs", grad],
  ] as const) {
    for (let i = 0; i < x.length; i++) {
      if (m[i] !== 1 || Number.isFinite(x[i] as number)) continue;
      const why = `lp − old = ${(lp[i] as number) - (old[i] as number)}, A = ${batch.adv[i]}`;
      throw overflowError(fn, q, x[i] as number, [Math.floor(i / cols), i % cols], why);
    }
  }
  if (!Number.isFinite(loss)) throw overflowError(fn, "loss", loss, undefined, "the reduction");
  for (let i = 0; i < ratio.length; i++)
    if (ratio[i] === Number.POSITIVE_INFINITY) ratio[i] = Number.MAX_VALUE;
  return {
    loss,
    gradLogprobs: { rows, cols, data: grad },
    perTokenObjective: { rows, cols, data: perToken },
    ratio: { rows, cols, data: ratio },
  };
}

/** A `[B, T]` buffer holding 1 everywhere (the ratio at padding, and the ratio of KL models). */
export function ones(batch: FrameworkBatch): Float64Array {
  return new Float64Array(batch.B * batch.T).fill(1);
}

/** Require the overrides argument to be an object (reading its fields must not throw a TypeError). */
export function requireOverrides(fn: string, overrides: unknown): void {
  if (typeof overrides !== "object" || overrides === null || Array.isArray(overrides)) {
    throw fail(
      ConfigError,
      fn,
      "overrides",
      "an overrides object (or omitted)",
      fmtValue(overrides),
    );
  }
}

/**
 * One setting a framework model may override: its field in the overrides object, its name in a
 * model id's `[key=value,…]` suffix (the framework's own config name), and its values (one of
 * `values`, or a positive finite number). Each framework's table is the one source of both.
 */
export interface OverrideKey {
  readonly field: string;
  readonly key: string;
  readonly values?: readonly string[];
}

/**
 * Validate an overrides object against a framework's table: every field known (did-you-mean
 * otherwise), each value one of its `values` or a positive finite number.
 *
 * @returns The overrides with only the fields set.
 * @throws {ConfigError} E_CONFIG for a non-object or a non-positive number.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown field or value.
 */
export function checkOverrides<O>(fn: string, overrides: unknown, keys: readonly OverrideKey[]): O {
  requireOverrides(fn, overrides);
  const out: Record<string, number | string> = {};
  for (const [field, x] of Object.entries(overrides as Record<string, unknown>)) {
    const k = keys.find((e) => e.field === field);
    if (k === undefined) {
      oneOf(
        fn,
        "overrides",
        field,
        keys.map((e) => e.field),
      );
      continue;
    }
    if (x === undefined) continue;
    out[field] =
      k.values === undefined
        ? checkPositive(fn, `overrides.${field}`, x)
        : oneOf(fn, `overrides.${field}`, x, k.values);
  }
  return out as O;
}

/** The id suffix listing overridden settings in table order, e.g. `[loss_scale_factor=16]` (empty without overrides). */
export function overrideSuffix(keys: readonly OverrideKey[], overrides: object): string {
  const o = overrides as Record<string, unknown>;
  const set = keys.filter((k) => o[k.field] !== undefined).map((k) => `${k.key}=${o[k.field]}`);
  return set.length === 0 ? "" : `[${set.join(",")}]`;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Parse the `key=value,…` inside a model id's brackets into an overrides object, by a framework's
 * table (the inverse of {@link overrideSuffix}); values are checked by {@link checkOverrides}.
 *
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown key (did-you-mean over the table).
 * @throws {ConfigError} E_CONFIG for an item that is not key=value, a key given twice, or a number
 *   that is not a decimal.
 */
export function parseOverrideSuffix(
  fn: string,
  text: string,
  keys: readonly OverrideKey[],
): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const item of text.split(",")) {
    const eq = item.indexOf("=");
    const name = eq < 0 ? item.trim() : item.slice(0, eq).trim();
    const raw = eq < 0 ? "" : item.slice(eq + 1).trim();
    if (eq <= 0 || raw === "")
      throw fail(ConfigError, fn, "id", "overrides written [key=value,…]", fmtValue(item));
    const k = keys.find((e) => e.key === name);
    if (k === undefined) {
      oneOf(
        fn,
        "id's override",
        name,
        keys.map((e) => e.key),
      );
      continue;
    }
    if (Object.hasOwn(out, k.field))
      throw fail(ConfigError, fn, "id", "each override given once", fmtValue(name));
    if (k.values !== undefined) out[k.field] = oneOf(fn, `id's ${name}`, raw, k.values);
    else {
      const x = DECIMAL.test(raw) ? Number(raw) : Number.NaN;
      if (!(Number.isFinite(x) && x > 0))
        throw new ConfigError(
          fn,
          "id",
          mustBe(fn, `id's ${name}`, "a positive finite number", fmtValue(raw)),
        );
      out[k.field] = x;
    }
  }
  return out;
}
