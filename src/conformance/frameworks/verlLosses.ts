/**
 * The verl models as configs of the algebra (docs/conformance/frameworks.md#verl): `agg_loss`'s
 * modes as aggregations with verl's empty-row policy and global counts, and
 * `compute_policy_loss_vanilla`, `compute_policy_loss_gspo`, `compute_policy_loss_cispo` and
 * `kl_penalty` as policy-loss configs, each evaluated by policyLoss (./onAlgebra.ts).
 * @internal
 */

import type { GlobalNormalizer } from "../../aggregate/effectiveTokenWeights.js";
import type { KLLossConfig } from "../../kl/estimator.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { FrameworkBatch } from "./batch.js";
import type { FrameworkResult } from "./model.js";
import { evaluateOnAlgebra, type FrameworkDivisor } from "./onAlgebra.js";

/** `agg_loss` modes; `token-sum` exists only at `1dda039b`. */
export type VerlAggMode =
  | "token-mean"
  | "seq-mean-token-sum"
  | "seq-mean-token-sum-norm"
  | "seq-mean-token-mean"
  | "token-sum";

/** `kl_penalty` kinds modelled. */
export type VerlKlKind = "k1" | "k2" | "k3" | "abs" | "k3+";

/** Settings a caller may override to demonstrate normaliser provenance (all unset by default). */
export interface VerlOverrides {
  /** `loss_scale_factor` of `seq-mean-token-sum-norm` (default: the padded width T). */
  readonly lossScaleFactor?: number;
  /** `global_batch_size` of the seq-mean modes (default: rows with at least one token). */
  readonly globalBatchSize?: number;
  /** `batch_num_tokens` of `token-mean` (default: Σ mask of the batch). */
  readonly batchNumTokens?: number;
  /**
   * The mask's dtype: `bool` (default, what verl's engine passes) or `float64` (polgrad 0.2.0's
   * recordings), under which seq-mean-token-mean's row divisor L_b + 1e-8 survives (rowEpsilon).
   */
  readonly maskDtype?: "bool" | "float64";
}

/** ActorConfig defaults: clip_ratio_low/high and clip_ratio_c. */
export const CLIP_LOW = 0.2;
export const CLIP_HIGH = 0.2;
export const CLIP_C = 3;
/** The log-ratio clamp of vanilla, cispo and k3. */
export const LOG_RATIO_CLAMP = 20;
/** GSPO's clamp on the combined log-ratio. */
export const GSPO_LOG_CLAMP_MAX = 10;

const CLAMP20 = { level: "token", lower: -LOG_RATIO_CLAMP, upper: LOG_RATIO_CLAMP } as const;
/** verl's seq-mean-token-mean row epsilon (L_b + 1e-8). */
const ROW_EPS = 1e-8;

/**
 * `agg_loss(loss_mat, loss_mask, mode, dp_size=1, …)` as our aggregation: token-mean divides by
 * Σ mask (or batch_num_tokens); the seq-mean modes average over the rows with L_b > 0 (or
 * global_batch_size), so empty rows are dropped; seq-mean-token-mean's row divisor L_b + 1e-8 is
 * a float32 tensor under the bool mask verl's engine passes, exactly L_b for every L_b ≥ 1;
 * seq-mean-token-sum-norm divides by loss_scale_factor, the padded width T by default.
 */
function aggregationOf(
  mode: VerlAggMode,
  batch: FrameworkBatch,
  o: VerlOverrides,
): {
  readonly cfg: Pick<PolicyLossConfig, "aggregation" | "normLen" | "emptyRows" | "rowEpsilon">;
  readonly global?: GlobalNormalizer;
  readonly divisor: FrameworkDivisor;
} {
  const gbs =
    o.globalBatchSize === undefined
      ? { value: batch.nonEmpty, name: "rows with L > 0" }
      : { value: o.globalBatchSize, name: "global_batch_size" };
  const rows = o.globalBatchSize === undefined ? {} : { global: { rows: o.globalBatchSize } };
  switch (mode) {
    case "token-mean":
      return {
        cfg: { aggregation: "token_mean", emptyRows: "count" },
        ...(o.batchNumTokens === undefined ? {} : { global: { tokens: o.batchNumTokens } }),
        divisor:
          o.batchNumTokens === undefined
            ? { value: batch.N, name: "Σ mask" }
            : { value: o.batchNumTokens, name: "batch_num_tokens" },
      };
    case "token-sum":
      return {
        cfg: { aggregation: "token_sum", emptyRows: "count" },
        divisor: { value: 1, name: "dp_size" },
      };
    case "seq-mean-token-sum":
      return {
        cfg: { aggregation: "seq_mean_token_sum", emptyRows: "drop" },
        ...rows,
        divisor: gbs,
      };
    case "seq-mean-token-sum-norm":
      return {
        cfg: {
          aggregation: "token_sum_norm",
          normLen: o.lossScaleFactor ?? batch.T,
          emptyRows: "drop",
        },
        ...rows,
        divisor: gbs,
      };
    case "seq-mean-token-mean":
      return {
        cfg: {
          aggregation: "seq_mean_token_mean",
          emptyRows: "drop",
          ...(o.maskDtype === "float64" ? { rowEpsilon: ROW_EPS } : {}),
        },
        ...rows,
        divisor: gbs,
      };
  }
}

/** The PPO clip of vanilla: ε 0.2/0.2, dual clip c = 3, r = exp(clamp(z, ±20)). */
const VANILLA = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: CLIP_LOW, epsHigh: CLIP_HIGH, ratioCap: CLIP_C },
  ratioClamp: CLAMP20,
} as const;

/** vanilla: ℓ = where(A<0, min(−A·c, max(−A·r, −A·clamp(r))), max(…)), r = exp(clamp(z, ±20)). */
export function verlVanilla(
  mode: VerlAggMode,
  batch: FrameworkBatch,
  o: VerlOverrides,
): FrameworkResult {
  const a = aggregationOf(mode, batch, o);
  return evaluateOnAlgebra(batch, { ...VANILLA, ...a.cfg }, a);
}

/**
 * gspo (GSPO-token): log s = lp − sg[lp] + sg[mean_t m·z] clamped at max 10, s = exp(log s);
 * ℓ = max(−A·s, −A·clamp(s, 0.8, 1.2)); always seq-mean-token-mean.
 */
export function verlGspo(batch: FrameworkBatch, o: VerlOverrides): FrameworkResult {
  const a = aggregationOf("seq-mean-token-mean", batch, o);
  return evaluateOnAlgebra(
    batch,
    {
      ratio: "sequence_token",
      surrogate: "pg_clip",
      clip: { epsLow: CLIP_LOW, epsHigh: CLIP_HIGH },
      ratioClamp: { level: "row", upper: GSPO_LOG_CLAMP_MAX },
      ...a.cfg,
    },
    a,
  );
}

/** cispo: ℓ = −sg[clamp(r, 0.8, 1.2)]·A·lp with r = exp(clamp(z, ±20)); token-mean. */
export function verlCispo(batch: FrameworkBatch, o: VerlOverrides): FrameworkResult {
  const a = aggregationOf("token-mean", batch, o);
  return evaluateOnAlgebra(
    batch,
    {
      ratio: "token",
      surrogate: "cispo",
      clip: { epsLow: CLIP_LOW, epsHigh: CLIP_HIGH },
      ratioClamp: CLAMP20,
      ...a.cfg,
    },
    a,
  );
}

/**
 * `kl_penalty(lp, ref, kind)` as our KL term: k1, k2, abs as defined; k3 (low_var_kl) with δ
 * clamped to ±20 before and the value to ±10 after; `k3+` straight-through (k3's value, k2's
 * gradient, unclamped).
 */
export function verlKlConfig(kind: VerlKlKind): KLLossConfig {
  if (kind === "k3" || kind === "k3+") {
    return {
      kind: "k3",
      coef: 1,
      clamp: { delta: LOG_RATIO_CLAMP, value: 10 },
      ...(kind === "k3+" ? { gradient: "straight_through" as const } : {}),
    };
  }
  return { kind, coef: 1 };
}

/**
 * The KL models: the unscaled KL term aggregated token-mean (a zero-advantage reinforce term
 * carries it, so the ratio reported is 1 and the objective is the per-token k).
 */
export function verlKl(kind: VerlKlKind, batch: FrameworkBatch, o: VerlOverrides): FrameworkResult {
  const a = aggregationOf("token-mean", batch, o);
  return evaluateOnAlgebra(
    batch,
    { ratio: "token", surrogate: "reinforce", clip: null, kl: verlKlConfig(kind), ...a.cfg },
    { ...a, klInObjective: true },
  );
}
