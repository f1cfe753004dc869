import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { type Mask, type MaskLike, type Matrix, maskCounts, rowLengths } from "../core/tensor.js";
import { toMask } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import { Aggregation, checkAggregation } from "./aggregation.js";
import { EMPTY_ROWS, type EmptyRows } from "./emptyRows.js";

/** Options of the aggregation functions. */
export interface AggregationOptions {
  /** Generation budget ℓ for `token_sum_norm` (required for it, ignored by the other modes). */
  readonly normLen?: number | null | undefined;
  /**
   * The batch is a shard of a global one (docs/derivations/aggregation.md#global-normalisers):
   * its weights divide by the global counts and multiply by D, as policyLoss's options.global.
   * Absent fields are the batch's own. Null or absent: none.
   */
  readonly global?: GlobalNormalizer | null;
  /** Rows with no response token: `reject` (default), `count` or `drop`, as policyLoss's config.emptyRows. */
  readonly emptyRows?: EmptyRows;
}

/**
 * The mask of an aggregation call, with empty rows allowed when `options.emptyRows` asks for
 * them (read leniently here: the policy itself is validated after the mask, whose errors come
 * first). @internal
 */
export function aggregationMask(
  fn: string,
  responseMask: MaskLike,
  options: unknown,
  like?: { readonly rows: number; readonly cols: number; readonly arg: string },
): Mask {
  const asked =
    typeof options === "object" && options !== null
      ? (options as AggregationOptions).emptyRows
      : undefined;
  const allow = asked === "count" || asked === "drop";
  return toMask(fn, responseMask, like, "responseMask", allow ? "allow" : "reject");
}

/**
 * Fill `out` with the weights of `mode` under the options' empty-row policy and global context
 * (both validated here, in that order): B counts the non-empty rows under `drop` (unless
 * `global.rows` is given), every row otherwise; with neither, the bits of {@link fillTokenWeights}.
 * @internal
 */
export function fillContextWeights(
  fn: string,
  mask: Mask,
  mode: Aggregation,
  normLen: number,
  opts: Partial<AggregationOptions>,
  out: Float64Array,
): void {
  const emptyRows = oneOf(fn, "emptyRows", opts.emptyRows ?? "reject", EMPTY_ROWS);
  const { rows: B, cols: T, data: m } = mask;
  const { L, N, nonEmpty } = maskCounts(mask);
  const counted = emptyRows === "drop" ? nonEmpty : B;
  const g =
    opts.global === null || opts.global === undefined
      ? counted === B
        ? undefined
        : { tokens: N, rows: counted, dpSize: 1 }
      : checkGlobal(fn, "options.global", opts.global, N, counted);
  const w = rowTokenWeights(mode, normLen, L, N, g);
  out.fill(0);
  for (let b = 0; b < B; b++) {
    const wb = w[b] as number;
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) out[b * T + t] = wb;
  }
}

/**
 * Require `options` to be an object (or undefined, for the defaults), so that reading its fields
 * cannot throw a TypeError; a {@link ConfigError} naming `options` otherwise. Returns the options.
 * @internal
 */
export function checkOptions<O extends object>(fn: string, options: O | undefined): Partial<O> {
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw fail(ConfigError, fn, "options", "an options object or undefined", fmtValue(options));
  }
  return options;
}

/**
 * Validate `normLen` against the mode: required (a positive integer) iff the mode is
 * `token_sum_norm`, ignored otherwise. Returns the budget, or 0 when unused.
 * @internal
 */
export function checkNormLen(
  fn: string,
  mode: Aggregation,
  normLen: unknown,
  arg = "normLen",
): number {
  if (mode !== Aggregation.TOKEN_SUM_NORM) return 0;
  if (normLen === null || normLen === undefined) {
    throw fail(
      ConfigError,
      fn,
      arg,
      'a positive integer when the aggregation is "token_sum_norm" (the generation budget)',
      fmtValue(normLen),
    );
  }
  if (typeof normLen !== "number" || !Number.isInteger(normLen) || normLen < 1) {
    throw fail(ConfigError, fn, arg, "a positive integer", fmtValue(normLen));
  }
  return normLen;
}

/**
 * The global context of a shard (docs/derivations/aggregation.md#global-normalisers): the batch is
 * one shard of a larger one (other data-parallel ranks, other accumulation micro-batches), and the
 * aggregation divides by the global counts and multiplies by the data-parallel size D, so that the
 * mean the framework's DDP takes over D ranks of summed micro-batches is the aggregate of the
 * global batch. Absent fields are the shard's own: tokens N, rows B, D = 1.
 */
export interface GlobalNormalizer {
  /** Response tokens of the global batch, N_g (verl's global token count, TRL's num_items_in_batch, OpenRLHF's batch_num_tokens). */
  readonly tokens?: number | null;
  /** Rows of the global batch, B_g (OpenRLHF's global_batch_size). */
  readonly rows?: number | null;
  /** The data-parallel size D the loss is multiplied by (verl/OpenRLHF dp_size, TRL num_processes). */
  readonly dpSize?: number | null;
}

/** A {@link GlobalNormalizer} with every field resolved. @internal */
export interface ResolvedGlobal {
  readonly tokens: number;
  readonly rows: number;
  readonly dpSize: number;
}

/**
 * Validate a global context against the shard (N response tokens, B rows): positive integers, a
 * global batch at least as large as the shard. @internal
 */
export function checkGlobal(
  fn: string,
  arg: string,
  g: unknown,
  N: number,
  B: number,
): ResolvedGlobal {
  if (typeof g !== "object" || g === null || Array.isArray(g)) {
    throw fail(ConfigError, fn, arg, "a GlobalNormalizer object", fmtValue(g));
  }
  const x = g as GlobalNormalizer;
  for (const k of Object.keys(x)) {
    if (k !== "tokens" && k !== "rows" && k !== "dpSize") {
      throw fail(ConfigError, fn, `${arg}.${k}`, "one of tokens, rows, dpSize", "an unknown field");
    }
  }
  const count = (k: keyof GlobalNormalizer, atLeast: number, what: string): number => {
    const v = x[k];
    if (v === null || v === undefined) return atLeast;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < atLeast) {
      throw fail(ConfigError, fn, `${arg}.${k}`, `an integer >= ${atLeast} (${what})`, fmtValue(v));
    }
    return v;
  };
  return {
    tokens: count("tokens", N, "the shard's own response tokens"),
    rows: count("rows", B, "the shard's own rows"),
    dpSize: count("dpSize", 1, "the data-parallel size"),
  };
}

/**
 * The weight of each row's response tokens under `mode` (every mode weighs the tokens of one row
 * alike): token_mean 1/N, seq_mean_token_mean 1/(B·L_b), seq_mean_token_sum 1/B, token_sum_norm
 * 1/(B·normLen), token_sum 1, each one correctly rounded division. `L` holds the row lengths, `N` their sum.
 * With a global context `g`: D/N_g, D/(B_g·L_b), D/B_g, D/(B_g·normLen), D (token_sum: verl's
 * Σ m·x·dp_size), each one division of D
 * by the correctly rounded product (so that g = {N, B, 1} gives the same bits as no context).
 * @internal
 */
export function rowTokenWeights(
  mode: Aggregation,
  normLen: number,
  L: Int32Array,
  N: number,
  g?: ResolvedGlobal,
  rowEps = 0,
): Float64Array {
  if (g !== undefined) return globalRowTokenWeights(mode, normLen, L, g, rowEps);
  const B = L.length;
  const w = new Float64Array(B);
  if (mode === Aggregation.SEQ_MEAN_TOKEN_MEAN) {
    // L_b + ε with ε = 0 is L_b exactly: the default weights are the plain ones, bitwise.
    for (let b = 0; b < B; b++) w[b] = 1 / (B * ((L[b] as number) + rowEps));
    return w;
  }
  return w.fill(
    mode === Aggregation.TOKEN_MEAN
      ? 1 / N
      : mode === Aggregation.SEQ_MEAN_TOKEN_SUM
        ? 1 / B
        : mode === Aggregation.TOKEN_SUM
          ? 1
          : 1 / (B * normLen),
  );
}

function globalRowTokenWeights(
  mode: Aggregation,
  normLen: number,
  L: Int32Array,
  g: ResolvedGlobal,
  rowEps: number,
): Float64Array {
  const w = new Float64Array(L.length);
  const { tokens, rows, dpSize: D } = g;
  if (mode === Aggregation.SEQ_MEAN_TOKEN_MEAN) {
    for (let b = 0; b < L.length; b++) w[b] = D / (rows * ((L[b] as number) + rowEps));
    return w;
  }
  return w.fill(
    mode === Aggregation.TOKEN_MEAN
      ? D / tokens
      : mode === Aggregation.SEQ_MEAN_TOKEN_SUM
        ? D / rows
        : mode === Aggregation.TOKEN_SUM
          ? D
          : D / (rows * normLen),
  );
}

/**
 * Fill `out` with the weights of `mode` for a validated mask (the kernel behind
 * {@link effectiveTokenWeights}; `out` is zero at padding).
 * @internal
 */
export function fillTokenWeights(
  mask: Mask,
  mode: Aggregation,
  normLen: number,
  out: Float64Array,
): void {
  const { cols: T, data: m } = mask;
  const L = rowLengths(mask);
  let N = 0;
  for (let b = 0; b < L.length; b++) N += L[b] as number;
  const w = rowTokenWeights(mode, normLen, L, N);
  out.fill(0);
  for (let b = 0; b < L.length; b++) {
    const wb = w[b] as number;
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) out[b * T + t] = wb;
  }
}

/**
 * Return the weight each token carries in the aggregated loss, w[b, t] = ∂L/∂x[b, t].
 *
 * Formula: token_mean m/N; seq_mean_token_mean m/(B·L_b); seq_mean_token_sum m/B;
 * token_sum_norm m/(B·norm_len). Each weight is one correctly rounded division 1/(integer).
 * With `global` {N_g, B_g, D}: D/N_g, D/(B_g·L_b), D/B_g, D/(B_g·norm_len), D; with emptyRows
 * `drop`, B counts the rows with a response token (docs/derivations/aggregation.md#global-normalisers).
 * Gradient / stop-gradient: none (a function of the mask only).
 *
 * @param responseMask - The `[B, T]` response mask; every row needs a response token unless
 *   options.emptyRows is count or drop.
 * @param mode - The aggregation mode.
 * @param options - `normLen`: the budget ℓ, required iff mode is `token_sum_norm`; `global`;
 *   `emptyRows`.
 * @returns `[B, T]` float64 weights, exactly 0 at padding; the mean modes sum to 1 (without a
 *   context or empty rows).
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has an empty row under emptyRows reject.
 * @throws {ConfigError} E_CONFIG when `normLen` is missing or not a positive integer for token_sum_norm,
 *   or `options` is not an object.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown mode.
 * @throws {ShapeError} E_SHAPE when the mask is not a 2-D array (null, a number, a string).
 * @derivation docs/derivations/aggregation.md#effective-token-weights
 * @enforcedBy test/aggregate/effectiveTokenWeights.test.ts > effectiveTokenWeights > golden: weights of the five modes on lengths [2, 1]
 * @enforcedBy test/aggregate/emptyRowsAndGlobal.test.ts > effectiveTokenWeights and aggregate with empty rows and a global context > identity: the weights are policyLoss's gradient and the value its loss, bitwise, every mode, count and drop, with and without a context
 * @since 0.1.0
 */
export function effectiveTokenWeights(
  responseMask: MaskLike,
  mode: Aggregation,
  options: AggregationOptions = {},
): Matrix {
  const fn = "effectiveTokenWeights";
  const agg = checkAggregation(fn, "mode", mode);
  const mask = aggregationMask(fn, responseMask, options);
  const opts = checkOptions(fn, options);
  const normLen = checkNormLen(fn, agg, opts.normLen);
  const data = new Float64Array(mask.rows * mask.cols);
  fillContextWeights(fn, mask, agg, normLen, opts, data);
  return { rows: mask.rows, cols: mask.cols, data };
}
