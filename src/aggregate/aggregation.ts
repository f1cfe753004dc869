/**
 * The five token-aggregation modes (docs/derivations/aggregation.md). Each maps a `[B, T]` per-token
 * loss to a scalar as an inner product with closed-form weights w[b, t] (zero at padding):
 *
 * | mode | L | w[b, t] |
 * | --- | --- | --- |
 * | `token_mean` | Σ m·x / N | m / N |
 * | `seq_mean_token_mean` | (1/B) Σ_b (Σ_t m·x) / L_b | m / (B·L_b) |
 * | `seq_mean_token_sum` | (1/B) Σ_b Σ_t m·x | m / B |
 * | `token_sum_norm` | Σ m·x / (B·norm_len) | m / (B·norm_len) |
 * | `token_sum` | Σ m·x (verl's `token-sum`, no normaliser) | m |
 */
import { oneOf } from "../core/names.js";

/** The aggregation modes, with polgrad's snake_case string values. */
export const Aggregation = {
  TOKEN_MEAN: "token_mean",
  SEQ_MEAN_TOKEN_MEAN: "seq_mean_token_mean",
  SEQ_MEAN_TOKEN_SUM: "seq_mean_token_sum",
  TOKEN_SUM_NORM: "token_sum_norm",
  TOKEN_SUM: "token_sum",
} as const;

/** One of the five aggregation mode strings. */
export type Aggregation = (typeof Aggregation)[keyof typeof Aggregation];

/** Every aggregation mode, in declaration order. */
export const AGGREGATIONS: readonly Aggregation[] = Object.values(Aggregation);

/** Validate an aggregation mode name (throws UnknownNameError with suggestions). */
export function checkAggregation(fn: string, arg: string, mode: unknown): Aggregation {
  return oneOf(fn, arg, mode, AGGREGATIONS);
}
