import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { type MaskLike, type Matrix, maskCounts } from "../core/tensor.js";
import { ConfigError, fail } from "../errors.js";
import { Aggregation, checkAggregation } from "./aggregation.js";
import {
  type AggregationOptions,
  aggregationMask,
  checkGlobal,
  checkNormLen,
  checkOptions,
  type GlobalNormalizer,
  type ResolvedGlobal,
  rowTokenWeights,
} from "./effectiveTokenWeights.js";
import { EMPTY_ROWS, type EmptyRows } from "./emptyRows.js";

/** Where token_sum_norm's divisor ℓ comes from (docs/derivations/aggregation.md#divisor-sources). */
export type NormLenSource = "fixed" | "padded_width" | "microbatch_max";
/** Every divisor source. */
export const NORM_LEN_SOURCES: readonly NormLenSource[] = [
  "fixed",
  "padded_width",
  "microbatch_max",
];

/** Options of {@link microbatchTokenWeights}. */
export interface MicrobatchOptions extends AggregationOptions {
  /** How the K micro-batch losses are combined: `"mean"` (divide by K, default) or `"sum"`. */
  readonly lossScale?: "mean" | "sum";
  /**
   * The global context every micro-batch is aggregated against (the counts of the whole
   * optimizer step on every rank, and D): verl's `global_batch_info`, TRL's `num_items_in_batch`
   * over `num_processes`, OpenRLHF's step-window counts. Absent: each chunk's own counts.
   */
  readonly global?: GlobalNormalizer | null;
  /** Rows with no response token: `reject` (default), `count` or `drop` (as policyLoss's config.emptyRows). */
  readonly emptyRows?: EmptyRows;
  /**
   * token_sum_norm's ℓ: `fixed` (options.normLen, default: TRL's max_completion_length, verl's
   * loss_scale_factor), `padded_width` (the mask's T: verl's default), `microbatch_max` (each
   * chunk's longest row: verl's engine path, which re-pads every micro-batch to its longest).
   */
  readonly normLenFrom?: NormLenSource;
}

/** Whether every index of `sizes` holds an integer ≥ 1 (a hole is not one; `new Array(1e9)` stops at 0). */
function isPositiveIntegers(sizes: readonly unknown[]): boolean {
  for (let i = 0; i < sizes.length; i++) {
    const s = sizes[i];
    if (!Number.isInteger(s) || (s as number) < 1) return false;
  }
  return true;
}

/**
 * Return the per-token weights that gradient accumulation over consecutive micro-batches really
 * applies: each chunk is aggregated with its own B_c and N_c (or against one global context),
 * then the K chunk losses are averaged (`mean`) or summed (`sum`).
 *
 * Formula: w[b,t] = w_c[b,t] / K (mean) or w_c[b,t] (sum), where w_c = the row weights of chunk c
 * alone (token_mean 1/N_c, seq_mean_token_mean 1/(B_c·L_b), seq_mean_token_sum 1/B_c,
 * token_sum_norm 1/(B_c·ℓ_c), token_sum 1) or, with `global` {N_g, B_g, D}, D/N_g, D/(B_g·L_b),
 * D/B_g, D/(B_g·ℓ_c), D. ℓ_c = normLen, T or max_b L_b of the chunk (`normLenFrom`). With
 * emptyRows `drop`, B_c counts the chunk's rows with a response token (unless `global.rows` is
 * given); with `count`, every row.
 * Gradient / stop-gradient: the weights are ∂(accumulated loss)/∂x; a function of the mask only.
 *
 * @param responseMask - The `[B, T]` response mask.
 * @param mode - The aggregation mode used inside each micro-batch.
 * @param microbatchSizes - Row counts of the consecutive chunks; each ≥ 1, summing to B.
 * @param options - `normLen`, `lossScale` ("mean" or "sum"), `global`, `emptyRows`, `normLenFrom`.
 * @returns `[B, T]` float64 weights, 0 at padding.
 * @throws {ConfigError} E_CONFIG when a size is < 1, the sizes do not sum to B, lossScale,
 *   emptyRows or normLenFrom is unknown, normLen is invalid (or given with a normLenFrom other
 *   than fixed), normLenFrom is not fixed for a mode other than token_sum_norm, a global field is
 *   smaller than the whole mask's count, or `options` is not an object.
 * @throws {MaskError} E_MASK when the mask is invalid (an empty row under emptyRows reject).
 * @derivation docs/derivations/aggregation.md#micro-batch-weights
 * @enforcedBy test/aggregate/microbatchTokenWeights.test.ts > microbatchTokenWeights > identity: equals the gradient of an explicit accumulation loop
 * @enforcedBy test/aggregate/microbatchTokenWeights.test.ts > microbatchTokenWeights > identity: with a global context, equals the gradient of the accumulation loop of policyLoss shards, every mode
 * @enforcedBy test/aggregate/microbatchTokenWeights.test.ts > microbatchTokenWeights > golden: divisor sources and empty rows on lengths [2, 0, 3] in chunks [2, 1]
 * @since 0.1.0
 */
export function microbatchTokenWeights(
  responseMask: MaskLike,
  mode: Aggregation,
  microbatchSizes: readonly number[],
  options: MicrobatchOptions = {},
): Matrix {
  const fn = "microbatchTokenWeights";
  const agg = checkAggregation(fn, "mode", mode);
  const mask = aggregationMask(fn, responseMask, options);
  const sizes = microbatchSizes;
  if (!Array.isArray(sizes) || sizes.length === 0 || !isPositiveIntegers(sizes)) {
    throw fail(
      ConfigError,
      fn,
      "microbatchSizes",
      "a non-empty list of integers >= 1",
      fmtValue(sizes),
    );
  }
  const total = sizes.reduce((a, s) => a + s, 0);
  if (total !== mask.rows) {
    throw fail(
      ConfigError,
      fn,
      "microbatchSizes",
      `sizes summing to the batch size ${mask.rows}`,
      `${fmtValue(sizes)} summing to ${total}`,
    );
  }
  const opts = checkOptions(fn, options);
  const lossScale = opts.lossScale ?? "mean";
  if (lossScale !== "mean" && lossScale !== "sum") {
    throw fail(ConfigError, fn, "lossScale", '"mean" or "sum"', fmtValue(lossScale));
  }
  const from = oneOf(fn, "normLenFrom", opts.normLenFrom ?? "fixed", NORM_LEN_SOURCES);
  if (from !== "fixed") {
    if (agg !== Aggregation.TOKEN_SUM_NORM) {
      const rule = '"fixed" unless the mode is "token_sum_norm" (the only mode with a divisor ℓ)';
      throw fail(ConfigError, fn, "normLenFrom", rule, `"${from}" with mode "${agg}"`);
    }
    if (opts.normLen !== null && opts.normLen !== undefined) {
      throw fail(
        ConfigError,
        fn,
        "normLen",
        `absent when normLenFrom is "${from}"`,
        fmtValue(opts.normLen),
      );
    }
  }
  const normLen = from === "fixed" ? checkNormLen(fn, agg, opts.normLen) : 0;
  const emptyRows = oneOf(fn, "emptyRows", opts.emptyRows ?? "reject", EMPTY_ROWS);
  const T = mask.cols;
  const { L, N, nonEmpty } = maskCounts(mask);
  const g =
    opts.global === null || opts.global === undefined
      ? null
      : checkGlobal(
          fn,
          "options.global",
          opts.global,
          N,
          emptyRows === "drop" ? nonEmpty : mask.rows,
        );
  const out = new Float64Array(mask.rows * T);
  const K = sizes.length;
  let row0 = 0;
  for (const size of sizes) {
    const Lc = L.subarray(row0, row0 + size);
    let Nc = 0;
    let maxL = 0;
    let kept = 0;
    for (let b = 0; b < size; b++) {
      const l = Lc[b] as number;
      Nc += l;
      if (l > maxL) maxL = l;
      if (l > 0) kept++;
    }
    const ell = from === "fixed" ? normLen : from === "padded_width" ? T : maxL;
    // drop without a global context: the chunk's row means count its non-empty rows (the same
    // context policyLoss builds for it); the chunk's own counts otherwise.
    const gc: ResolvedGlobal | undefined =
      g ??
      (emptyRows === "drop" && kept < size ? { tokens: Nc, rows: kept, dpSize: 1 } : undefined);
    const w = rowTokenWeights(agg, ell, Lc, Nc, gc);
    for (let b = 0; b < size; b++) {
      const wb = lossScale === "mean" ? (w[b] as number) / K : (w[b] as number);
      const o = (row0 + b) * T;
      for (let t = 0; t < T; t++) if (mask.data[o + t] === 1) out[o + t] = wb;
    }
    row0 += size;
  }
  return { rows: mask.rows, cols: T, data: out };
}
