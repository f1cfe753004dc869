/**
 * Models of TRL's `GRPOTrainer._compute_loss` (`trl/trainer/grpo_trainer.py`) for the loss types
 * grpo, bnpo, dr_grpo, dapo, cispo and sapo at importance-sampling level token or sequence, with
 * one process, no gradient accumulation, no vLLM correction, no entropy masking, and optionally
 * the β·k3 KL term, each a config of the algebra evaluated by policyLoss (./onAlgebra.ts;
 * docs/conformance/frameworks.md#trl).
 */

import type { GlobalNormalizer } from "../../aggregate/effectiveTokenWeights.js";
import { oneOf } from "../../core/names.js";
import { ConfigError, fail } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { PolicyLossInputs } from "../../losses/policyLoss.js";
import {
  checkOverrides,
  type FrameworkBatch,
  type OverrideKey,
  overrideSuffix,
  prepareBatch,
} from "./batch.js";
import type { FrameworkModel, FrameworkResult, FrameworkSettingValue } from "./model.js";
import { evaluateOnAlgebra, type FrameworkDivisor } from "./onAlgebra.js";
import { TRL_FILES } from "./pins.js";

/** The TRL versions modelled: tag v1.8.0 (polgrad's pin) and the head read. */
export type TrlLabel = "v1.8.0" | "f2cd5771";

/** `loss_type` values modelled. */
export type TrlLossType = "grpo" | "bnpo" | "dr_grpo" | "dapo" | "cispo" | "sapo";

const LOSS_TYPES: readonly TrlLossType[] = ["grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo"];
const VARIANTS: readonly string[] = [
  ...LOSS_TYPES.flatMap((lt) => [`${lt}:token`, `${lt}:sequence`]),
  "dapo:token:beta-0.04",
];

/** The variant names modelled (the same at both versions). */
export const TRL_VARIANTS: Readonly<Record<TrlLabel, readonly string[]>> = {
  "v1.8.0": VARIANTS,
  f2cd5771: VARIANTS,
};

/** Settings a caller may override (both unset by default). */
export interface TrlOverrides {
  /** `num_items_in_batch` of dapo/cispo: the generation batch's token count (default: Σ mask of this batch). */
  readonly numItemsInBatch?: number;
  /** `max_completion_length` of dr_grpo (default: the padded width T). */
  readonly maxCompletionLength?: number;
  /**
   * The completion mask's dtype: `long` (default, what TRL builds) or `float64` (polgrad 0.2.0's
   * recordings). No TRL normaliser adds an ε to a mask sum, so the arithmetic is the same under
   * both; the choice is recorded in the settings and the id.
   */
  readonly maskDtype?: "long" | "float64";
}

/** The settings a TRL model may override, with their names in ids (`[num_items_in_batch=64]`). */
export const TRL_OVERRIDE_KEYS: readonly OverrideKey[] = Object.freeze([
  { field: "numItemsInBatch", key: "num_items_in_batch" },
  { field: "maxCompletionLength", key: "max_completion_length" },
  { field: "maskDtype", key: "mask_dtype", values: ["long", "float64"] },
]);

const EPSILON = 0.2;
const CISPO_EPSILON_HIGH = 5;
const TAU_POS = 1;
// torch.where over two Python floats builds a float32 tensor, so τ_neg is float32(1.05).
const TAU_NEG = Math.fround(1.05);
const BETA = 0.04;

/**
 * The loss_type's normaliser as our aggregation, with one process and gradient_accumulation_steps
 * 1: grpo and sapo average Σ_t m·ℓ / max(L_b, 1) over all B rows (empty rows count, with 0); bnpo
 * is Σ m·ℓ / max(Σ m, 1) (a token mean; no token: 0); dr_grpo divides by B·max_completion_length;
 * dapo and cispo divide by num_items_in_batch (a global token count; clamped to at least 1 after
 * v1.8.0, where 0 divides by 0).
 */
function aggregationOf(
  lt: TrlLossType,
  label: TrlLabel,
  batch: FrameworkBatch,
  o: TrlOverrides,
): {
  readonly cfg: Pick<PolicyLossConfig, "aggregation" | "normLen" | "emptyRows">;
  readonly global?: GlobalNormalizer;
  readonly divisor?: FrameworkDivisor;
} {
  switch (lt) {
    case "grpo":
    case "sapo":
      return { cfg: { aggregation: "seq_mean_token_mean", emptyRows: "count" } };
    case "bnpo":
      return { cfg: { aggregation: "token_mean", emptyRows: "count" } };
    case "dr_grpo":
      return {
        cfg: {
          aggregation: "token_sum_norm",
          normLen: o.maxCompletionLength ?? batch.T,
          emptyRows: "count",
        },
      };
    case "dapo":
    case "cispo": {
      const items = o.numItemsInBatch ?? batch.N;
      const tokens = label === "v1.8.0" ? items : Math.max(items, 1);
      return {
        cfg: { aggregation: "token_mean", emptyRows: "count" },
        ...(tokens === batch.N ? {} : { global: { tokens } }),
        divisor: { value: tokens, name: "num_items_in_batch" },
      };
    }
  }
}

/** The per-token loss of the loss_type, on the token or the sequence ratio coef_1. */
function surrogateOf(lt: TrlLossType): Omit<PolicyLossConfig, "ratio" | "aggregation"> {
  switch (lt) {
    case "cispo":
      // sg[min(coef_1, ε_high)]: ε_high = 5 is an absolute cap, no lower clip.
      return { surrogate: "cispo", clip: null, cispo: { cap: CISPO_EPSILON_HIGH } };
    case "sapo":
      return { surrogate: "sapo", clip: null, sapo: { tauPos: TAU_POS, tauNeg: TAU_NEG } };
    default:
      return { surrogate: "pg_clip", clip: { epsLow: EPSILON, epsHigh: EPSILON } };
  }
}

function trlLoss(
  label: TrlLabel,
  lt: TrlLossType,
  sequence: boolean,
  beta: number,
  batch: FrameworkBatch,
  o: TrlOverrides,
): FrameworkResult {
  const a = aggregationOf(lt, label, batch, o);
  const config: PolicyLossConfig = {
    ratio: sequence ? "sequence" : "token",
    ...surrogateOf(lt),
    ...a.cfg,
    // β·k3 (unclamped) is added per token before aggregation: it is normalised like the policy term.
    kl: beta === 0 ? null : { kind: "k3", coef: beta },
  };
  return evaluateOnAlgebra(batch, config, { ...a, klInObjective: true });
}

const NORM_TEXT: Readonly<Record<TrlLossType, string>> = {
  grpo: "mean over all B rows of Σ_t m·ℓ / max(L_b, 1) (empty rows count in the mean)",
  sapo: "mean over all B rows of Σ_t m·ℓ / max(L_b, 1) (empty rows count in the mean)",
  bnpo: "Σ m·ℓ / max(Σ m, 1) over the local batch",
  dr_grpo:
    "Σ m·ℓ / (B·max_completion_length), max_completion_length defaulting here to the padded width T",
  dapo: "Σ m·ℓ / num_items_in_batch, the token count of the whole generation batch (here: of this batch, one process)",
  cispo:
    "Σ m·ℓ / num_items_in_batch, the token count of the whole generation batch (here: of this batch, one process)",
};

function describe(label: TrlLabel, lt: TrlLossType, sequence: boolean, beta: number): string {
  const ratio = sequence
    ? "coef_1 = exp(Σ_t m·(lp − old)/max(L_b, 1)) per row (importance_sampling_level sequence, gradient through the mean)"
    : "coef_1 = exp(lp − old) per token";
  const per =
    lt === "cispo"
      ? "ℓ = −sg[min(coef_1, ε_high)]·A·lp with ε_high = 5.0 an absolute cap (not 1 + ε) and no lower clip; TRL's own default ε_high is ε = 0.2, which would cap every weight at 0.2"
      : lt === "sapo"
        ? "ℓ = −sigmoid(τ(coef_1 − 1))·(4/τ)·A with τ = 1.0 for A > 0 and float32(1.05) = 1.0499999523… otherwise (torch.where over two Python floats builds a float32 tensor; no clip)"
        : "ℓ = −min(coef_1·A, clamp(coef_1, 0.8, 1.2)·A) (no log-ratio clamp, no dual clip)";
  const clamp =
    lt === "dapo" || lt === "cispo"
      ? label === "v1.8.0"
        ? " At v1.8.0 num_items_in_batch is not clamped, so an empty generation batch divides by 0."
        : " At this commit num_items_in_batch is clamped to at least 1 (a change made after v1.8.0)."
      : "";
  const kl =
    beta !== 0
      ? ` With β = ${beta} the per-token k3 = exp(ref − lp) − (ref − lp) − 1 (unclamped) is added to ℓ before aggregation, so it is normalised like the policy term.`
      : "";
  return `GRPOTrainer._compute_loss with loss_type ${lt}: ${ratio}; ${per}; normalised as ${NORM_TEXT[lt]}.${clamp}${kl} One process, gradient_accumulation_steps 1, no vLLM importance correction, no entropy or off-policy mask.`;
}

function settingsOf(
  lt: TrlLossType,
  sequence: boolean,
  beta: number,
  o: TrlOverrides,
): Record<string, FrameworkSettingValue> {
  return {
    loss_type: lt,
    response_mask_dtype: o.maskDtype === "float64" ? "torch.float64" : "torch.long",
    importance_sampling_level: sequence ? "sequence" : "token",
    epsilon: EPSILON,
    epsilon_high: lt === "cispo" ? CISPO_EPSILON_HIGH : EPSILON,
    delta: null,
    beta,
    use_bias_correction_kl: false,
    sapo_temperature_pos: TAU_POS,
    sapo_temperature_neg: 1.05,
    max_completion_length: o.maxCompletionLength ?? null,
    num_items_in_batch: o.numItemsInBatch ?? null,
    num_processes: 1,
    gradient_accumulation_steps: 1,
    use_vllm: false,
    top_entropy_quantile: 1,
    off_policy_mask_threshold: null,
  };
}

/**
 * Build the model of one TRL GRPOTrainer loss variant at one version.
 *
 * Formula: per variant, see docs/conformance/frameworks.md#trl (clipped, CISPO or SAPO per-token
 * loss on the token or sequence ratio; grpo/sapo row mean, bnpo token mean, dr_grpo B·max length,
 * dapo/cispo num_items_in_batch; optional β·k3).
 * Gradient / stop-gradient: closed form w.r.t. logprobs; cispo holds sg[min(coef_1, ε_high)] constant.
 *
 * @param label - The version: `v1.8.0` (polgrad's pin) or `f2cd5771` (head read).
 * @param variant - One of {@link TRL_VARIANTS}[label].
 * @param overrides - Optional `num_items_in_batch` (dapo, cispo) and `max_completion_length` (dr_grpo).
 * @returns The model; its `evaluate` validates inputs at call entry.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown label or variant.
 * @throws {ConfigError} E_CONFIG for a non-positive override or one the variant does not read.
 * @derivation docs/conformance/frameworks.md#trl
 * @enforcedBy test/conformance/frameworks/trl.test.ts > trlModel > golden: the six loss types on one ragged batch
 * @since 0.1.0
 */
export function trlModel(
  label: TrlLabel,
  variant: string,
  overrides: TrlOverrides = {},
): FrameworkModel {
  const fnName = "trlModel";
  const o = checkOverrides<TrlOverrides>(fnName, overrides, TRL_OVERRIDE_KEYS);
  const lab = oneOf(fnName, "label", label, Object.keys(TRL_FILES) as TrlLabel[]);
  const v = oneOf(fnName, "variant", variant, TRL_VARIANTS[lab]);
  const [ltRaw, level] = v.split(":") as [string, string];
  const lt = ltRaw as TrlLossType;
  const sequence = level === "sequence";
  const beta = v.endsWith(":beta-0.04") ? BETA : 0;
  const items = o.numItemsInBatch;
  const maxLen = o.maxCompletionLength;
  if (items !== undefined && lt !== "dapo" && lt !== "cispo") {
    throw fail(ConfigError, fnName, "overrides.numItemsInBatch", "set only for dapo or cispo", v);
  }
  if (maxLen !== undefined && lt !== "dr_grpo") {
    throw fail(ConfigError, fnName, "overrides.maxCompletionLength", "set only for dr_grpo", v);
  }
  const id = `trl@${lab}:${v}${overrideSuffix(TRL_OVERRIDE_KEYS, o)}`;
  const reads = { old: true, advantages: true, ref: beta !== 0, rollout: false };
  const evaluate = (inputs: PolicyLossInputs): FrameworkResult =>
    trlLoss(lab, lt, sequence, beta, prepareBatch(id, inputs, reads), o);
  return Object.freeze({
    id,
    framework: "trl",
    pin: Object.freeze({ ...TRL_FILES[lab], function: "GRPOTrainer._compute_loss" }),
    variant: v,
    description: describe(lab, lt, sequence, beta),
    settings: Object.freeze(settingsOf(lt, sequence, beta, o)),
    needs: Object.freeze(beta !== 0 ? ["refLogprobs" as const] : []),
    evaluate,
  });
}
