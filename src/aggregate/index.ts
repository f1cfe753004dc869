/**
 * Aggregation: how a `[B, T]` per-token loss becomes a scalar. Every mode is an inner product with
 * closed-form weights, so ∂L/∂x = weights exactly (docs/derivations/aggregation.md).
 */

export { aggregate } from "./aggregate.js";
export { AGGREGATIONS, Aggregation } from "./aggregation.js";
export {
  type AggregationOptions,
  effectiveTokenWeights,
  type GlobalNormalizer,
} from "./effectiveTokenWeights.js";
export {
  type MicrobatchOptions,
  microbatchTokenWeights,
  NORM_LEN_SOURCES,
  type NormLenSource,
} from "./microbatchTokenWeights.js";
