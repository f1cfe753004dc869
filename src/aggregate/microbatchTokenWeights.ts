import { fmtValue, mustBe } from "../core/message.js";
import type { MaskLike, Matrix } from "../core/tensor.js";
import { toMask } from "../core/validate.js";
import { ConfigError } from "../errors.js";
import { type Aggregation, checkAggregation } from "./aggregation.js";
import {
  type AggregationOptions,
  checkNormLen,
  checkOptions,
  fillTokenWeights,
} from "./effectiveTokenWeights.js";

/** Options of {@link microbatchTokenWeights}. */
export interface MicrobatchOptions extends AggregationOptions {
  /** How the K micro-batch losses are combined: `"mean"` (divide by K, default) or `"sum"`. */
  readonly lossScale?: "mean" | "sum";
}

/**
 * Return the per-token weights that gradient accumulation over consecutive micro-batches really
 * applies: each chunk is aggregated with its own B_c and N_c, then the K chunk losses are averaged
 * (`mean`) or summed (`sum`).
 *
 * Formula: w[b,t] = w_c[b,t] / K (mean) or w_c[b,t] (sum), where w_c = effectiveTokenWeights of
 * chunk c alone (token_sum_norm uses B_c·ℓ).
 * Gradient / stop-gradient: the weights are ∂(accumulated loss)/∂x; a function of the mask only.
 *
 * @param responseMask - The `[B, T]` response mask.
 * @param mode - The aggregation mode used inside each micro-batch.
 * @param microbatchSizes - Row counts of the consecutive chunks; each ≥ 1, summing to B.
 * @param options - `normLen` (token_sum_norm budget) and `lossScale` ("mean" or "sum").
 * @returns `[B, T]` float64 weights, 0 at padding.
 * @throws {ConfigError} E_CONFIG when a size is < 1, the sizes do not sum to B, lossScale is
 *   unknown, normLen is invalid, or `options` is not an object.
 * @throws {MaskError} E_MASK when the mask is invalid.
 * @derivation docs/derivations/aggregation.md#micro-batch-weights
 * @enforcedBy test/aggregate/microbatchTokenWeights.test.ts > microbatchTokenWeights > identity: equals the gradient of an explicit accumulation loop
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
  const mask = toMask(fn, responseMask);
  const sizes = microbatchSizes;
  if (
    !Array.isArray(sizes) ||
    sizes.length === 0 ||
    sizes.some((s) => !Number.isInteger(s) || s < 1)
  ) {
    throw new ConfigError(
      fn,
      "microbatchSizes",
      mustBe(fn, "microbatchSizes", "a non-empty list of integers >= 1", fmtValue(sizes)),
    );
  }
  const total = sizes.reduce((a, s) => a + s, 0);
  if (total !== mask.rows) {
    throw new ConfigError(
      fn,
      "microbatchSizes",
      mustBe(
        fn,
        "microbatchSizes",
        `sizes summing to the batch size ${mask.rows}`,
        `${fmtValue(sizes)} summing to ${total}`,
      ),
    );
  }
  const opts = checkOptions(fn, options);
  const lossScale = opts.lossScale ?? "mean";
  if (lossScale !== "mean" && lossScale !== "sum") {
    throw new ConfigError(
      fn,
      "lossScale",
      mustBe(fn, "lossScale", '"mean" or "sum"', fmtValue(lossScale)),
    );
  }
  const normLen = checkNormLen(fn, agg, opts.normLen);
  const T = mask.cols;
  const out = new Float64Array(mask.rows * T);
  const K = sizes.length;
  let row0 = 0;
  for (const size of sizes) {
    const chunk = { rows: size, cols: T, data: mask.data.subarray(row0 * T, (row0 + size) * T) };
    const w = out.subarray(row0 * T, (row0 + size) * T);
    fillTokenWeights(chunk, agg, normLen, w);
    if (lossScale === "mean") for (let i = 0; i < w.length; i++) w[i] = (w[i] as number) / K;
    row0 += size;
  }
  return { rows: mask.rows, cols: T, data: out };
}
