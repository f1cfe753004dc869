/**
 * A rollout batch as the losses consume it (docs/io.md#batches): named tensors from a file,
 * checked for names, presence, ranks, shapes and mask values, and mapped from polgrad's
 * snake_case file names to camelCase fields. Non-finite values are kept: finiteness is a rule
 * of response positions only, checked by the losses.
 */
import { fmtShape, safeText } from "../core/message.js";
import type { Mask, Matrix } from "../core/tensor.js";
import type { IoError } from "../errors.js";
import { ioError } from "./_internal/ioError.js";
import { BATCH_TENSOR_NAMES, type BatchTensorName, REQUIRED_BATCH_TENSORS } from "./batchNames.js";
import {
  checkTensorSet,
  ignoredHint,
  type NameOptions,
  type NameResolution,
  resolveNames,
} from "./names.js";
import {
  FLOAT_DTYPES,
  type NamedTensor,
  type ReadOptions,
  type TensorFormat,
  type TensorSet,
} from "./tensorTypes.js";

export {
  BATCH_TENSOR_NAMES,
  type BatchTensorName,
  REQUIRED_BATCH_TENSORS,
} from "./batchNames.js";

/** Where a batch came from: the file, its format and each tensor's stored dtype. */
export interface BatchSource {
  readonly path: string;
  readonly format: TensorFormat;
  /** Each tensor's stored dtype, under polgrad's names. */
  readonly dtypes: Readonly<Record<string, string>>;
  /** How the file's names were read: the map, renames, ignored tensors, notes. */
  readonly names: NameResolution;
  /** What the file holds that polgrad reads but doubts (docs/io.md#warnings); empty when nothing. */
  readonly warnings: readonly BatchWarning[];
}

/**
 * A value a batch file holds that polgrad 0.2.0 accepts and polgrad reads as given, but that is
 * likely a mistake: a log-probability stream with finite values above 0 at response positions
 * (probabilities or logits stored in a logprob stream). Under `strict` it is an error instead.
 */
export interface BatchWarning {
  readonly code: "positive-logprob";
  /** polgrad's name of the tensor. */
  readonly tensor: string;
  /** The tensor's name in the file, when it was read under another name; else null. */
  readonly fileName: string | null;
  /** How many response positions hold a finite value above 0. */
  readonly count: number;
  /** The first such value, in row-major order. */
  readonly firstValue: number;
  /** Its position (row, column). */
  readonly firstAt: readonly [number, number];
  /** One line for people: tensor, count, first value and position, and the likely cause. */
  readonly message: string;
}

/**
 * The positive-log-probability warning of one tensor (its message derived from its fields).
 * @internal
 */
export function positiveLogprobWarning(
  tensor: string,
  fileName: string | null,
  count: number,
  firstValue: number,
  firstAt: readonly [number, number],
): BatchWarning {
  const label = fileName === null ? tensor : `${safeText(fileName, 60)} (read as ${tensor})`;
  return {
    code: "positive-logprob",
    tensor,
    fileName,
    count,
    firstValue,
    firstAt,
    message: `${label}: ${count} value(s) > 0, first ${firstValue} at (${firstAt[0]}, ${firstAt[1]}): probabilities or logits stored by mistake?`,
  };
}

/**
 * The warnings of a batch read in row blocks, as one read of the whole file would give them:
 * counts summed, the first value the first block's, its row shifted by the block's first row.
 * @internal
 */
export function mergeBatchWarnings(
  blocks: readonly { readonly rowOffset: number; readonly warnings: readonly BatchWarning[] }[],
): BatchWarning[] {
  const byTensor = new Map<string, { first: BatchWarning; row: number; count: number }>();
  for (const { rowOffset, warnings } of blocks) {
    for (const w of warnings) {
      const seen = byTensor.get(w.tensor);
      if (seen === undefined)
        byTensor.set(w.tensor, { first: w, row: w.firstAt[0] + rowOffset, count: w.count });
      else seen.count += w.count;
    }
  }
  return [...byTensor.values()].map(({ first, row, count }) =>
    positiveLogprobWarning(first.tensor, first.fileName, count, first.firstValue, [
      row,
      first.firstAt[1],
    ]),
  );
}

/** A validated batch: `[B, T]` float64 matrices, `[B]` or `[B, T]` advantages and a 0/1 mask. */
export interface Batch {
  readonly logprobs: Matrix;
  readonly oldLogprobs: Matrix;
  readonly advantages: Float64Array | Matrix;
  readonly responseMask: Mask;
  readonly refLogprobs?: Matrix;
  readonly rolloutLogprobs?: Matrix;
  readonly values?: Matrix;
  readonly oldValues?: Matrix;
  readonly returns?: Matrix;
  readonly entropies?: Matrix;
  /** PAPO: the policy's logprobs with the image masked, and that view's per-token entropies. */
  readonly maskedLogprobs?: Matrix;
  readonly maskedEntropies?: Matrix;
  /** Each sequence's reward: `[B]`, or `[B, T]` token-level rewards (summed over the response). */
  readonly rewards?: Float64Array | Matrix;
  /** Whether each sequence was cut at the length limit: `[B]`, 0 or 1. */
  readonly truncated?: Uint8Array;
  readonly source: BatchSource;
}

/** Options of {@link toBatch}: required names plus how to read the file's names. */
export interface ToBatchOptions extends NameOptions {
  /** Names required in addition to the four of {@link REQUIRED_BATCH_TENSORS}. */
  readonly require?: readonly BatchTensorName[];
}

/** Options of {@link readBatch}: reader limits plus required names. */
export interface ReadBatchOptions extends ToBatchOptions, ReadOptions {}

const OPTIONAL_FIELDS = {
  ref_logprobs: "refLogprobs",
  rollout_logprobs: "rolloutLogprobs",
  values: "values",
  old_values: "oldValues",
  returns: "returns",
  entropies: "entropies",
  masked_logprobs: "maskedLogprobs",
  masked_entropies: "maskedEntropies",
} as const;

type Fail = (arg: string, rule: string, actual: string) => IoError;

function floatMatrix(fail: Fail, name: string, t: NamedTensor, like: Matrix | undefined): Matrix {
  if (!FLOAT_DTYPES.includes(t.dtype) || !(t.data instanceof Float64Array)) {
    throw fail(name, `a float dtype (${FLOAT_DTYPES.join(", ")})`, `dtype ${t.dtype}`);
  }
  const [rows = 0, cols = 0] = t.shape;
  if (t.shape.length !== 2 || rows < 1 || cols < 1) {
    throw fail(name, "2-D [B, T] with B, T >= 1", `shape ${fmtShape(t.shape)}`);
  }
  if (like !== undefined && (rows !== like.rows || cols !== like.cols)) {
    throw fail(
      name,
      `the shape of logprobs ${fmtShape([like.rows, like.cols])}`,
      `shape ${fmtShape(t.shape)}`,
    );
  }
  return { rows, cols, data: t.data };
}

/** A per-sequence `[B]` or per-token `[B, T]` float tensor (advantages, rewards). */
function rowsOrMatrix(
  fail: Fail,
  name: string,
  t: NamedTensor,
  like: Matrix,
): Float64Array | Matrix {
  if (t.shape.length === 1) {
    if (!FLOAT_DTYPES.includes(t.dtype) || !(t.data instanceof Float64Array)) {
      throw fail(name, `a float dtype (${FLOAT_DTYPES.join(", ")})`, `dtype ${t.dtype}`);
    }
    if (t.shape[0] !== like.rows) {
      throw fail(
        name,
        `[B] with B = ${like.rows} or [B, T] = ${fmtShape([like.rows, like.cols])} (logprobs)`,
        `shape ${fmtShape(t.shape)}`,
      );
    }
    return t.data;
  }
  if (t.shape.length !== 2) {
    throw fail(
      name,
      `[B] or [B, T] = ${fmtShape([like.rows, like.cols])} (logprobs)`,
      `shape ${fmtShape(t.shape)}`,
    );
  }
  return floatMatrix(fail, name, t, like);
}

/** A per-sequence 0/1 flag `[B]` (truncated), of any numeric or bool dtype. */
function flagsOf(fail: Fail, name: string, t: NamedTensor, like: Matrix): Uint8Array {
  if (t.shape.length !== 1 || t.shape[0] !== like.rows)
    throw fail(name, `[B] with B = ${like.rows}`, `shape ${fmtShape(t.shape)}`);
  const out = new Uint8Array(like.rows);
  for (let b = 0; b < like.rows; b++) {
    const v = Number(t.data[b]);
    if (v !== 0 && v !== 1) throw fail(name, "0/1 valued (or true/false)", `${t.data[b]} at ${b}`);
    out[b] = v;
  }
  return out;
}

/** The first index of a byte other than 0 or 1, or −1. */
function firstNot01(d: Uint8Array): number {
  for (let i = 0; i < d.length; i++) if ((d[i] as number) > 1) return i;
  return -1;
}

function maskOf(fail: Fail, t: NamedTensor, like: Matrix): Mask {
  if (t.shape.length !== 2 || t.shape[0] !== like.rows || t.shape[1] !== like.cols) {
    throw fail(
      "response_mask",
      `2-D with the shape of logprobs ${fmtShape([like.rows, like.cols])}`,
      `shape ${fmtShape(t.shape)}`,
    );
  }
  // A BOOL/U8 mask (the usual one) is checked and copied in monomorphic loops; other dtypes below.
  const bad = t.data instanceof Uint8Array ? firstNot01(t.data) : -2;
  if (bad === -1) return { rows: like.rows, cols: like.cols, data: (t.data as Uint8Array).slice() };
  const data = new Uint8Array(t.data.length);
  for (let i = 0; i < data.length; i++) {
    const v = t.data[i] as number;
    if (v !== 0 && v !== 1) {
      const b = Math.floor(i / like.cols);
      throw fail(
        "response_mask",
        "0/1 valued (or true/false)",
        `${v} at (${b}, ${i - b * like.cols})`,
      );
    }
    data[i] = v;
  }
  return { rows: like.rows, cols: like.cols, data };
}

/**
 * Validate named tensors as a batch and map them to camelCase fields.
 *
 * Format: the file's names read as polgrad's (resolveNames: a framework's map, detected or
 * given, renames; unused tensors set aside in `source.names.ignored`, an error with `strict`),
 * then names from {@link BATCH_TENSOR_NAMES}; value tensors float `[B, T]` (the shape of
 * `logprobs`); `advantages` float `[B]` or `[B, T]`; `response_mask` `[B, T]` of any dtype whose
 * values are exactly 0 or 1. A log-probability stream (logprobs, old_logprobs, ref_logprobs,
 * rollout_logprobs, masked_logprobs) with finite values above 0 at response positions is read as
 * given, as polgrad 0.2.0 reads it, with a {@link BatchWarning} in `source.warnings` (tensor,
 * count, first value and position); under `strict` it is an error. NaN/±Inf are left to the
 * losses. Empty mask rows are not checked here (the losses reject them).
 *
 * @param tensors - The tensors, e.g. from {@link readTensors}.
 * @param options - `require`: names needed beyond logprobs, old_logprobs, advantages,
 *   response_mask; and the name options (names, rename, strict, responseSlice).
 * @returns The batch (matrices share the tensors' Float64Arrays) with its source.
 * @throws {IoError} E_IO for an unused name under `strict` (with a did-you-mean suggestion),
 *   ambiguous or conflicting names, missing required names (listing the missing, the present
 *   and ignored near misses), a wrong rank, shape or dtype, mask values
 *   other than 0/1, or, under `strict`, a log-probability above 0 at a response position
 *   (naming tensor, position and count).
 * @derivation docs/io.md#batches
 * @enforcedBy test/io/batch.test.ts > toBatch > rejects: an unknown tensor name with a suggestion
 * @enforcedBy test/io/batch.test.ts > toBatch > golden: a log-probability above 0 at a response position is a warning naming tensor, count and first position, in every stream
 * @enforcedBy test/io/batch.test.ts > toBatch > rejects: under strict, a log-probability above 0 at a response position in every stream
 * @enforcedBy test/io/batch.test.ts > toBatch > rejects: missing required tensors listing missing and present
 * @since 0.1.0
 */
export function toBatch(tensors: TensorSet, options: ToBatchOptions = {}): Batch {
  return toBatchAs("toBatch", tensors, options);
}

/** {@link toBatch} reporting errors as `fn`. @internal */
export function toBatchAs(fn: string, file: TensorSet, options: ToBatchOptions): Batch {
  checkTensorSet(fn, "tensors", file);
  const fail: Fail = (arg, rule, actual) => ioError(fn, file.path, arg, rule, actual);
  const { set, names } = resolveNames(fn, file, options);
  const present = [...set.tensors.keys()];
  const required = [...new Set([...REQUIRED_BATCH_TENSORS, ...(options.require ?? [])])];
  const missing = required.filter((n) => !set.tensors.has(n));
  if (missing.length > 0) {
    throw fail(
      "tensors",
      `a set including ${required.join(", ")} (missing ${missing.join(", ")})`,
      `${present.length > 0 ? `only ${present.join(", ")}` : "no tensors"}${names.map === "polgrad" ? "" : ` under ${names.map} names`}${ignoredHint(names)}`,
    );
  }
  // logprobs fixes [B, T]; every other tensor is checked against it.
  const logprobs = floatMatrix(
    fail,
    "logprobs",
    set.tensors.get("logprobs") as NamedTensor,
    undefined,
  );
  // All four required names are present, so the assembled batch is a full Batch.
  return assemble(
    fail,
    set,
    names,
    set.tensors.get("response_mask") as NamedTensor,
    logprobs,
    options.strict === true,
  ) as Batch;
}

/** A batch in which every tensor but the mask is optional (the input of `diagnose`). */
export interface PartialBatch {
  readonly logprobs?: Matrix;
  readonly oldLogprobs?: Matrix;
  readonly advantages?: Float64Array | Matrix;
  readonly responseMask: Mask;
  readonly refLogprobs?: Matrix;
  readonly rolloutLogprobs?: Matrix;
  readonly values?: Matrix;
  readonly oldValues?: Matrix;
  readonly returns?: Matrix;
  readonly entropies?: Matrix;
  /** PAPO: the policy's logprobs with the image masked, and that view's per-token entropies. */
  readonly maskedLogprobs?: Matrix;
  readonly maskedEntropies?: Matrix;
  /** Each sequence's reward: `[B]`, or `[B, T]` token-level rewards (summed over the response). */
  readonly rewards?: Float64Array | Matrix;
  /** Whether each sequence was cut at the length limit: `[B]`, 0 or 1. */
  readonly truncated?: Uint8Array;
  readonly source: BatchSource;
}

/**
 * Validate named tensors as a partial batch: `response_mask` is required and fixes `[B, T]`; every
 * other known tensor is optional and must match it (advantages `[B]` or `[B, T]`).
 *
 * Format: as {@link toBatch}, with only `response_mask` required.
 *
 * @param tensors - The tensors, e.g. from {@link readTensors}.
 * @returns The partial batch.
 * @throws {IoError} E_IO for an unknown name (with a suggestion), a missing mask, a wrong rank,
 *   shape, dtype or mask value, or (strict) a log-probability above 0 at a response position.
 * @derivation docs/io.md#batches
 * @enforcedBy test/io/partialBatch.test.ts > toPartialBatch > golden: any subset of tensors with a mask is accepted
 * @since 0.1.0
 */
export function toPartialBatch(tensors: TensorSet, options: NameOptions = {}): PartialBatch {
  return toPartialBatchAs("toPartialBatch", tensors, options);
}

/** {@link toPartialBatch} reporting errors as `fn`. @internal */
export function toPartialBatchAs(fn: string, file: TensorSet, options: NameOptions): PartialBatch {
  checkTensorSet(fn, "tensors", file);
  const fail: Fail = (arg, rule, actual) => ioError(fn, file.path, arg, rule, actual);
  const { set, names } = resolveNames(fn, file, options);
  const m = set.tensors.get("response_mask");
  if (m === undefined) {
    throw fail(
      "tensors",
      "a set including response_mask",
      `${[...set.tensors.keys()].join(", ") || "no tensors"}${names.map === "polgrad" ? "" : ` under ${names.map} names`}${ignoredHint(names)}`,
    );
  }
  const [rows = 0, cols = 0] = m.shape;
  if (m.shape.length !== 2 || rows < 1 || cols < 1)
    throw fail("response_mask", "2-D [B, T] with B, T >= 1", `shape ${fmtShape(m.shape)}`);
  return assemble(
    fail,
    set,
    names,
    m,
    { rows, cols, data: new Float64Array(0) },
    options.strict === true,
  );
}

/** The log-probability streams of a batch file: a finite value above 0 is a warning (or, strict, an error). @internal */
export const LOGPROB_STREAMS = [
  "logprobs",
  "old_logprobs",
  "ref_logprobs",
  "rollout_logprobs",
  "masked_logprobs",
] as const;

/**
 * The response positions holding a finite value above 0: how many, and the first (−1 when none).
 * NaN and ±Infinity are left to the losses' finiteness rule (E_NONFINITE); padding is never read.
 */
function positives(d: ArrayLike<number>, m: Uint8Array): { count: number; first: number } {
  let count = 0;
  let first = -1;
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 1) continue;
    const v = d[i] as number;
    if (v > 0 && v < Number.POSITIVE_INFINITY) {
      if (count === 0) first = i;
      count++;
    }
  }
  return { count, first };
}

/**
 * A finite log-probability above 0 at a response position (probabilities or logits in a logprob
 * stream): polgrad 0.2.0 accepts any finite value, so it is a warning; under `strict` an error.
 */
function checkLogprobs(
  fail: Fail,
  set: TensorSet,
  mask: Mask,
  names: NameResolution,
  strict: boolean,
): BatchWarning[] {
  const warnings: BatchWarning[] = [];
  for (const name of LOGPROB_STREAMS) {
    const t = set.tensors.get(name);
    if (t === undefined) continue;
    const { count, first } = positives(t.data, mask.data);
    if (count === 0) continue;
    const b = Math.floor(first / mask.cols);
    const at = [b, first - b * mask.cols] as const;
    if (strict) {
      throw fail(
        name,
        "a log-probability (≤ 0) at every response position (strict)",
        `${t.data[first]} at (${at[0]}, ${at[1]}) (${count} value(s) > 0)`,
      );
    }
    warnings.push(
      positiveLogprobWarning(name, names.renamed[name] ?? null, count, t.data[first] as number, at),
    );
  }
  return warnings;
}

/** Validate every present tensor against the `[B, T]` of `like` and map names to fields. */
function assemble(
  fail: Fail,
  set: TensorSet,
  names: NameResolution,
  mask: NamedTensor,
  like: Matrix,
  strict: boolean,
): PartialBatch {
  const dtypes: Record<string, string> = {};
  for (const [name, t] of set.tensors) dtypes[name] = t.dtype;
  const warnings: BatchWarning[] = [];
  const out: { -readonly [K in keyof PartialBatch]: PartialBatch[K] } = {
    responseMask: maskOf(fail, mask, like),
    source: { path: set.path, format: set.format, dtypes, names, warnings },
  };
  const lp = set.tensors.get("logprobs");
  if (lp !== undefined) out.logprobs = floatMatrix(fail, "logprobs", lp, like);
  const old = set.tensors.get("old_logprobs");
  if (old !== undefined) out.oldLogprobs = floatMatrix(fail, "old_logprobs", old, like);
  const adv = set.tensors.get("advantages");
  if (adv !== undefined) out.advantages = rowsOrMatrix(fail, "advantages", adv, like);
  const rewards = set.tensors.get("rewards");
  if (rewards !== undefined) out.rewards = rowsOrMatrix(fail, "rewards", rewards, like);
  const truncated = set.tensors.get("truncated");
  if (truncated !== undefined) out.truncated = flagsOf(fail, "truncated", truncated, like);
  for (const [name, field] of Object.entries(OPTIONAL_FIELDS)) {
    const t = set.tensors.get(name);
    if (t !== undefined) out[field] = floatMatrix(fail, name, t, like);
  }
  // Every stream now has the mask's shape, so position i is the same token in each.
  warnings.push(...checkLogprobs(fail, set, out.responseMask, names, strict));
  return out;
}
