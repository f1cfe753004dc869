/**
 * Models of verl's shipped policy and KL losses (`verl/trainer/ppo/core_algos.py`):
 * `compute_policy_loss_vanilla`, `compute_policy_loss_gspo`, `compute_policy_loss_cispo` and
 * `kl_penalty`, each aggregated by `agg_loss` with the `ActorConfig` defaults and no global batch
 * info (dp_size 1). Values and closed-form gradients follow torch's tie conventions
 * (docs/conformance/frameworks.md#verl).
 */
import { oneOf } from "../../core/names.js";
import { ConfigError, fail } from "../../errors.js";
import type { PolicyLossInputs } from "../../losses/policyLoss.js";
import { checkOverrides, type OverrideKey, overrideSuffix, prepareBatch } from "./batch.js";
import type { FrameworkModel, FrameworkResult, FrameworkSettingValue } from "./model.js";
import { VERL_FILES } from "./pins.js";
import {
  CLIP_C,
  CLIP_HIGH,
  CLIP_LOW,
  GSPO_LOG_CLAMP_MAX,
  LOG_RATIO_CLAMP,
  type VerlAggMode,
  type VerlKlKind,
  type VerlOverrides,
  verlCispo,
  verlGspo,
  verlKl,
  verlVanilla,
} from "./verlLosses.js";

export type { VerlAggMode, VerlKlKind, VerlOverrides } from "./verlLosses.js";

/**
 * The settings a verl model may override, with their names in ids (`[mask_dtype=float64]`),
 * docs/conformance/frameworks.md#overrides.
 */
export const VERL_OVERRIDE_KEYS: readonly OverrideKey[] = Object.freeze([
  { field: "lossScaleFactor", key: "loss_scale_factor" },
  { field: "globalBatchSize", key: "global_batch_size" },
  { field: "batchNumTokens", key: "batch_num_tokens" },
  { field: "maskDtype", key: "mask_dtype", values: ["bool", "float64"] },
]);
/** The verl commits modelled: polgrad's pin and the head read. */
export type VerlLabel = "74a718a4" | "1dda039b";

const PIN_AGG: readonly VerlAggMode[] = [
  "token-mean",
  "seq-mean-token-sum",
  "seq-mean-token-sum-norm",
  "seq-mean-token-mean",
];
const KL_KINDS: readonly VerlKlKind[] = ["k1", "k2", "k3", "abs", "k3+"];

function variantsAt(aggs: readonly VerlAggMode[]): readonly string[] {
  return [...aggs.map((a) => `vanilla:${a}`), "gspo", "cispo", ...KL_KINDS.map((k) => `kl:${k}`)];
}

/** The variant names modelled at each verl commit. */
export const VERL_VARIANTS: Readonly<Record<VerlLabel, readonly string[]>> = {
  "74a718a4": variantsAt(PIN_AGG),
  "1dda039b": variantsAt([...PIN_AGG, "token-sum"]),
};

const AGG_TEXT: Readonly<Record<VerlAggMode, string>> = {
  "token-mean": "Σ m·ℓ / Σ m over the batch (batch_num_tokens unset)",
  "token-sum": "Σ m·ℓ with no normaliser (dp_size 1)",
  "seq-mean-token-sum":
    "the row sums Σ_t m·ℓ summed over rows with L_b > 0 and divided by their count (global_batch_size unset)",
  "seq-mean-token-sum-norm":
    "the seq-mean-token-sum value divided by loss_scale_factor, which defaults to the padded width T of the tensor, not the generation budget Dr.GRPO prescribes",
  "seq-mean-token-mean":
    "per row Σ_t m·ℓ / (L_b + 1e-8), summed over rows with L_b > 0 and divided by their count; with the bool mask verl's engine passes, L_b + 1e-8 is a float32 tensor equal to L_b, so the row divisor is exactly L_b (a float mask would deflate every row by L_b/(L_b + 1e-8))",
};

function describe(variant: string, agg: VerlAggMode | null, kind: VerlKlKind | null): string {
  if (agg !== null) {
    return `PPO clipped surrogate of compute_policy_loss_vanilla with dual clip always on: the log-ratio lp − old is clamped to ±20 before exp (the gradient is 0 where the clamp binds), ℓ = max(−A·r, −A·clamp(r, 0.8, 1.2)) and, for A < 0, min(−3·A, ·) (clip_ratio_c = 3). Aggregated by agg_loss("${agg}"): ${AGG_TEXT[agg]}. The published PPO objective has neither the log-ratio clamp nor the dual clip.`;
  }
  if (variant === "gspo") {
    return "GSPO-token form of compute_policy_loss_gspo: log s_t = lp_t − sg[lp_t] + sg[Σ_t m·(lp − old)/max(L_b, 1)], clamped at max 10, s = exp(log s); ℓ = max(−A·s, −A·clamp(s, 0.8, 1.2)) with no dual clip. Its value equals the GSPO sequence ratio of eq. 7, but the gradient is token-local (eq. 14 with the detached sequence weight), so it differs from eq. 7's whenever advantages vary within a row. The aggregation is hard-coded to seq-mean-token-mean (rows divided by L_b + 1e-8, which is exactly L_b under the bool mask) whatever loss_agg_mode says.";
  }
  if (variant === "cispo") {
    return "CISPO of compute_policy_loss_cispo: r = exp(clamp(lp − old, ±20)), ℓ = −sg[clamp(r, 0.8, 1.2)]·A·lp, aggregated token-mean. The clip is two-sided (the CISPO paper clips only from above, at 1 + ε_high), and the weight is a stop-gradient, so only lp carries gradient.";
  }
  const k = kind as VerlKlKind;
  const base =
    k === "k1"
      ? "k1 = lp − ref"
      : k === "k2"
        ? "k2 = ½(lp − ref)²"
        : k === "abs"
          ? "abs = |lp − ref|"
          : "k3 (low_var_kl) = clamp(e^x − x − 1, ±10) with x = clamp(ref − lp, ±20), whose gradient is 0 where either clamp binds";
  const plus =
    k === "k3+"
      ? " The `+` suffix makes it straight-through: the value is k3's but the gradient is that of ½(lp − ref)² (unclamped), whose expectation under on-policy sampling is ∇KL."
      : "";
  return `The KL loss term of verl's actor: kl_penalty(lp, ref, "${k}") per token, ${base}, aggregated token-mean (Σ m·k / Σ m) and returned unscaled (verl multiplies it by kl_loss_coef, default 0.001).${plus}`;
}

function settingsOf(
  variant: string,
  agg: VerlAggMode | null,
  kind: VerlKlKind | null,
  o: VerlOverrides,
): Record<string, FrameworkSettingValue> {
  const globals = {
    response_mask_dtype: o.maskDtype === "float64" ? "torch.float64" : "torch.bool",
    dp_size: 1,
    batch_num_tokens: o.batchNumTokens ?? null,
    global_batch_size: o.globalBatchSize ?? null,
    loss_scale_factor: o.lossScaleFactor ?? null,
  };
  if (kind !== null)
    return { kl_loss_type: kind, loss_agg_mode: "token-mean", kl_loss_coef: null, ...globals };
  const clip = { clip_ratio: 0.2, clip_ratio_low: CLIP_LOW, clip_ratio_high: CLIP_HIGH };
  if (agg !== null) {
    return {
      loss_mode: "vanilla",
      ...clip,
      clip_ratio_c: CLIP_C,
      log_ratio_clamp: LOG_RATIO_CLAMP,
      loss_agg_mode: agg,
      rollout_is_weights: null,
      ...globals,
    };
  }
  if (variant === "gspo") {
    return {
      loss_mode: "gspo",
      ...clip,
      log_ratio_clamp_max: GSPO_LOG_CLAMP_MAX,
      loss_agg_mode: "seq-mean-token-mean",
      rollout_is_weights: null,
      ...globals,
    };
  }
  return {
    loss_mode: "cispo",
    ...clip,
    log_ratio_clamp: LOG_RATIO_CLAMP,
    loss_agg_mode: "token-mean",
    rollout_is_weights: null,
    ...globals,
  };
}

/**
 * Build the model of one verl loss variant at one commit.
 *
 * Formula: per variant, see docs/conformance/frameworks.md#verl (vanilla PPO with the ±20
 * log-ratio clamp and dual clip c = 3 under `agg_loss`; GSPO-token; two-sided CISPO; `kl_penalty`
 * aggregated token-mean).
 * Gradient / stop-gradient: closed form w.r.t. logprobs; gspo holds sg[lp] and the sequence mean
 * constant, cispo holds sg[clamp(r)] constant, `k3+` takes k2's gradient.
 *
 * @param label - The commit: `74a718a4` (polgrad's pin) or `1dda039b` (head read).
 * @param variant - One of {@link VERL_VARIANTS}[label].
 * @param overrides - Optional normaliser settings (`loss_scale_factor`, `global_batch_size`, `batch_num_tokens`).
 * @returns The model; its `evaluate` validates inputs at call entry.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown label or variant.
 * @throws {ConfigError} E_CONFIG for a non-positive override.
 * @derivation docs/conformance/frameworks.md#verl
 * @enforcedBy test/conformance/frameworks/verl.test.ts > verlModel > golden: vanilla token-mean on a 2x2 batch with dual clip and a clamped log-ratio
 * @since 0.1.0
 */
export function verlModel(
  label: VerlLabel,
  variant: string,
  overrides: VerlOverrides = {},
): FrameworkModel {
  const fnName = "verlModel";
  const o = checkOverrides<VerlOverrides>(fnName, overrides, VERL_OVERRIDE_KEYS);
  const lab = oneOf(fnName, "label", label, Object.keys(VERL_FILES) as VerlLabel[]);
  const v = oneOf(fnName, "variant", variant, VERL_VARIANTS[lab]);
  const agg = v.startsWith("vanilla:") ? (v.slice("vanilla:".length) as VerlAggMode) : null;
  const kind = v.startsWith("kl:") ? (v.slice("kl:".length) as VerlKlKind) : null;
  if (o.lossScaleFactor !== undefined && agg !== "seq-mean-token-sum-norm") {
    throw fail(
      ConfigError,
      fnName,
      "overrides.lossScaleFactor",
      "set only for vanilla:seq-mean-token-sum-norm",
      v,
    );
  }
  const id = `verl@${lab}:${v}${overrideSuffix(VERL_OVERRIDE_KEYS, o)}`;
  const fn =
    kind !== null
      ? "kl_penalty"
      : agg !== null
        ? "compute_policy_loss_vanilla"
        : `compute_policy_loss_${v}`;
  const reads = {
    old: kind === null,
    advantages: kind === null,
    ref: kind !== null,
    rollout: false,
  };
  const evaluate = (inputs: PolicyLossInputs): FrameworkResult => {
    const batch = prepareBatch(id, inputs, reads);
    if (agg !== null) return verlVanilla(agg, batch, o);
    if (kind !== null) return verlKl(kind, batch, o);
    return v === "gspo" ? verlGspo(batch, o) : verlCispo(batch, o);
  };
  return Object.freeze({
    id,
    framework: "verl",
    pin: Object.freeze({ ...VERL_FILES[lab], function: fn }),
    variant: v,
    description: describe(v, agg, kind),
    settings: Object.freeze(settingsOf(v, agg, kind, o)),
    needs: Object.freeze(kind !== null ? ["refLogprobs" as const] : []),
    evaluate,
  });
}
