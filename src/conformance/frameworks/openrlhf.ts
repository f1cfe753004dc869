/**
 * Models of OpenRLHF's shipped policy and KL losses: `PolicyLoss.forward` (ppo with optional dual
 * clip, gspo) aggregated by `aggregate_loss` without global batch info, as configs of the algebra
 * evaluated by policyLoss (./onAlgebra.ts), and the as-loss KL term
 * `aggregate_loss(compute_approx_kl(lp, ref, estimator), mask)`, whose float32 arithmetic is the one
 * framework numeric kept outside the algebra (docs/conformance/frameworks.md#openrlhf).
 */
import { overflowError } from "../../core/finite.js";
import { oneOf } from "../../core/names.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { PolicyLossInputs } from "../../losses/policyLoss.js";
import {
  checkOverrides,
  constantRows,
  type FrameworkBatch,
  frameworkResult,
  type OverrideKey,
  ones,
  overrideSuffix,
  prepareBatch,
  reduceRows,
} from "./batch.js";
import type { FrameworkModel, FrameworkResult, FrameworkSettingValue } from "./model.js";
import { evaluateOnAlgebra, type FrameworkDivisor } from "./onAlgebra.js";
import { OPENRLHF_LOSS_FILES, OPENRLHF_UTILS_FILES } from "./pins.js";

/** Settings a caller may override (unset by default). */
export interface OpenRlhfOverrides {
  /**
   * The action mask's dtype: `long` (default, what OpenRLHF builds) or `float64` (polgrad
   * 0.2.0's recordings), under which the sample mean's divisor L_b + 1e-8 survives.
   */
  readonly maskDtype?: "long" | "float64";
}

/** The settings an OpenRLHF model may override, with their names in ids (`[mask_dtype=float64]`). */
export const OPENRLHF_OVERRIDE_KEYS: readonly OverrideKey[] = Object.freeze([
  { field: "maskDtype", key: "mask_dtype", values: ["long", "float64"] },
]);

/** The OpenRLHF commits modelled: polgrad's pin and the head read. */
export type OpenRlhfLabel = "bc71bb19" | "3c3be623";

/** `compute_approx_kl` estimators. */
export type OpenRlhfKlKind = "k1" | "k2" | "k3";

const VARIANTS: readonly string[] = [
  "ppo:token",
  "ppo:sample",
  "ppo:token:dual-clip-3",
  "gspo",
  "kl:k1",
  "kl:k2",
  "kl:k3",
];

/** The variant names modelled (the same at both commits). */
export const OPENRLHF_VARIANTS: Readonly<Record<OpenRlhfLabel, readonly string[]>> = {
  bc71bb19: VARIANTS,
  "3c3be623": VARIANTS,
};

const CLIP_LOW = 0.2;
const CLIP_HIGH = 0.2;
const LOG_RATIO_CLAMP = 20;
const KL_CLAMP = 10;

/**
 * `aggregate_loss(…, token_level_loss)` with no global info: a token mean Σ m·x / Σ m, or a sample
 * mean over the rows with L_b > 0 (empty rows dropped) of Σ_t m·x / (L_b + 1e-8), whose divisor is
 * a float32 tensor under OpenRLHF's long mask, exactly L_b for every L_b ≥ 1.
 */
function aggregationOf(
  tokenLevel: boolean,
  batch: FrameworkBatch,
  float64Mask: boolean,
): Pick<PolicyLossConfig, "aggregation" | "emptyRows" | "rowEpsilon"> & {
  divisor: FrameworkDivisor;
} {
  return tokenLevel
    ? { aggregation: "token_mean", emptyRows: "count", divisor: { value: batch.N, name: "Σ mask" } }
    : {
        aggregation: "seq_mean_token_mean",
        emptyRows: "drop",
        // Under a float64 mask the divisor L_b + 1e-8 is no longer L_b.
        ...(float64Mask ? { rowEpsilon: 1e-8 } : {}),
        divisor: { value: batch.nonEmpty, name: "rows with L > 0" },
      };
}

/** ppo: r = exp(clamp(z, ±20)); ℓ = −min(r·A, clamp(r, 0.8, 1.2)·A), dual clip −max(·, c·A) for A < 0. */
function ppo(
  batch: FrameworkBatch,
  tokenLevel: boolean,
  dualClip: number | null,
  float64Mask: boolean,
): FrameworkResult {
  const { divisor, ...agg } = aggregationOf(tokenLevel, batch, float64Mask);
  return evaluateOnAlgebra(
    batch,
    {
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: CLIP_LOW, epsHigh: CLIP_HIGH, ratioCap: dualClip },
      ratioClamp: { level: "token", lower: -LOG_RATIO_CLAMP, upper: LOG_RATIO_CLAMP },
      ...agg,
    },
    { divisor },
  );
}

/** gspo: s_b = exp(Σ_t m·z / max(L_b, 1)) (no clamp, gradient through the mean); sample mean. */
function gspo(batch: FrameworkBatch, float64Mask: boolean): FrameworkResult {
  const { divisor, ...agg } = aggregationOf(false, batch, float64Mask);
  return evaluateOnAlgebra(
    batch,
    {
      ratio: "sequence",
      surrogate: "pg_clip",
      clip: { epsLow: CLIP_LOW, epsHigh: CLIP_HIGH },
      ...agg,
    },
    { divisor },
  );
}

const f32 = Math.fround;

/**
 * One `compute_approx_kl` value and its gradient contribution, in float32 as upstream computes it
 * (`.float()` on both streams): x = f32(lp) − f32(ref); k1 = x, k2 = x²/2, k3 = e^{−x} − 1 + x;
 * clamp to [−10, 10] (`clamp`; OpenRLHF v0.8.6+). `g` is the float32 upstream gradient of the
 * token (f32(1/N)); the returned ∂ is the float32 value autograd produces (0 where the clamp binds).
 */
export function openRlhfKlPoint(
  kind: OpenRlhfKlKind,
  lp: number,
  ref: number,
  g: number,
  clamp = true,
): { value: number; grad: number } {
  const x = f32(f32(lp) - f32(ref));
  let v: number;
  let d: number;
  switch (kind) {
    case "k1":
      v = x;
      d = g;
      break;
    case "k2":
      v = f32(f32(x * x) / 2);
      d = f32(g * x);
      break;
    case "k3": {
      const e = f32(Math.exp(-x));
      v = f32(f32(e - 1) + x);
      d = f32(g - f32(g * e));
      break;
    }
  }
  // The ±10 output clamp exists from v0.8.6.
  if (!clamp) return { value: v, grad: d };
  const pass = v >= -KL_CLAMP && v <= KL_CLAMP;
  return { value: Math.min(Math.max(v, -KL_CLAMP), KL_CLAMP), grad: pass ? d : 0 };
}

function kl(fn: string, kind: OpenRlhfKlKind, batch: FrameworkBatch): FrameworkResult {
  const { m, lp, ref, N } = batch;
  const n = lp.length;
  const red = {
    rowDivisor: constantRows(batch.B, 1),
    divisor: N,
    divisorName: "Σ mask",
  };
  const g = f32(1 / N);
  const k = new Float64Array(n);
  const grad = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (m[i] !== 1) continue;
    // Upstream casts to float32 first: |values| past 3.4e38, or a difference past it, are ±∞ in
    // float32 (then ∞ − ∞ = NaN); finite float64 input whose float32 image is not finite.
    const x = f32(f32(lp[i] as number) - f32(ref[i] as number));
    if (!Number.isFinite(x)) {
      const why = `upstream computes in float32 (|x| <= 3.4e38); lp = ${lp[i]}, ref = ${ref[i]}`;
      throw overflowError(
        fn,
        "float32(logprobs − refLogprobs)",
        x,
        [Math.floor(i / batch.T), i % batch.T],
        why,
      );
    }
    const pt = openRlhfKlPoint(kind, lp[i] as number, ref[i] as number, g);
    k[i] = pt.value;
    grad[i] = pt.grad;
  }
  // Upstream sums the float32 matrix in float32 and divides by the int64 count in float32: the
  // model rounds the (compensated) sum to float32, then the quotient.
  reduceRows(fn, batch, k, red);
  const sum = reduceRows(fn, batch, k, { ...red, divisor: 1 }).loss;
  return frameworkResult(batch, f32(f32(sum) / N), grad, k, ones(batch));
}

function describe(variant: string): string {
  switch (variant) {
    case "ppo:token":
      return "PolicyLoss (policy_loss_type ppo, no dual clip): r = exp(clamp(lp − old, ±20)) (the gradient is 0 where the clamp binds), ℓ = −min(r·A, clamp(r, 0.8, 1.2)·A), aggregated as a token mean Σ m·ℓ / Σ m (token_level_loss, no batch_num_tokens). The published PPO objective has no log-ratio clamp.";
    case "ppo:sample":
      return "PolicyLoss (ppo) with token_level_loss = False: the same per-token loss as ppo:token, aggregated per sample as Σ_t m·ℓ / (L_b + 1e-8), then averaged over rows with L_b > 0. With the long action_mask OpenRLHF builds, L_b + 1e-8 is a float32 tensor equal to L_b, so rows are exact sequence means (a float mask would deflate every row by L_b/(L_b + 1e-8)).";
    case "ppo:token:dual-clip-3":
      return "PolicyLoss (ppo) with dual_clip = 3: for A < 0 the clipped objective is floored at 3·A, ℓ = −max(min(r·A, clamp(r, 0.8, 1.2)·A), 3·A); token mean. Numerically the same as verl's always-on dual clip.";
    case "gspo":
      return "PolicyLoss (policy_loss_type gspo): the true sequence ratio s_b = exp(Σ_t m·(lp − old)/max(L_b, 1)) with the gradient flowing through the mean (GSPO eq. 7), no log-ratio clamp (the ±20 clamp applies only to ppo; at the pin a clamped copy is computed and never used), ℓ = −min(s·A, clamp(s, 0.8, 1.2)·A); token_level_loss is forced to False, so rows are averaged per sample (divisor L_b + 1e-8, exactly L_b under the long mask).";
    default: {
      const k = variant.slice("kl:".length);
      const formula = k === "k1" ? "d" : k === "k2" ? "d²/2" : "e^{−d} − 1 + d";
      return `The as-loss KL term of OpenRLHF's actor: compute_approx_kl(lp, ref, "${k}") = clamp(${formula}, −10, 10) with d = lp − ref (no clamp before the exp), aggregated as a token mean Σ m·k / Σ m and returned unscaled (the actor multiplies it by the KL coefficient). Upstream casts both streams to float32 (.float()), so the loss and every gradient are float32 numbers even for float64 inputs; the model rounds every operation to float32, with a correctly rounded exp and sum where torch's vectorised kernels may differ by an ulp.`;
    }
  }
}

function settingsOf(variant: string, float64Mask: boolean): Record<string, FrameworkSettingValue> {
  const globals = {
    response_mask_dtype: float64Mask ? "torch.float64" : "torch.long",
    dp_size: 1,
    batch_num_tokens: null,
    global_batch_size: null,
  };
  if (variant.startsWith("kl:")) {
    return {
      kl_estimator: variant.slice(3),
      output_clamp: KL_CLAMP,
      compute_dtype: "float32",
      token_level_loss: true,
      ...globals,
    };
  }
  const gspoV = variant === "gspo";
  return {
    policy_loss_type: gspoV ? "gspo" : "ppo",
    clip_eps_low: CLIP_LOW,
    clip_eps_high: CLIP_HIGH,
    dual_clip: variant === "ppo:token:dual-clip-3" ? 3 : null,
    token_level_loss: variant === "ppo:token" || variant === "ppo:token:dual-clip-3",
    log_ratio_clamp: gspoV ? null : LOG_RATIO_CLAMP,
    enable_vllm_is_correction: false,
    ...globals,
  };
}

/**
 * Build the model of one OpenRLHF loss variant at one commit.
 *
 * Formula: per variant, see docs/conformance/frameworks.md#openrlhf (ppo with the ±20 log-ratio
 * clamp, token or sample mean, optional dual clip; gspo with the true sequence ratio and a forced
 * sample mean; `compute_approx_kl` k1/k2/k3 clamped to ±10, token mean, in float32).
 * Gradient / stop-gradient: closed form w.r.t. logprobs; no stop-gradients.
 *
 * @param label - The commit: `bc71bb19` (polgrad's pin) or `3c3be623` (head read).
 * @param variant - One of {@link OPENRLHF_VARIANTS}[label].
 * @returns The model; its `evaluate` validates inputs at call entry.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown label or variant.
 * @derivation docs/conformance/frameworks.md#openrlhf
 * @enforcedBy test/conformance/frameworks/openrlhf.test.ts > openRlhfModel > golden: ppo sample mean and gspo on a ragged 2x3 batch
 * @since 0.1.0
 */
export function openRlhfModel(
  label: OpenRlhfLabel,
  variant: string,
  overrides: OpenRlhfOverrides = {},
): FrameworkModel {
  const fnName = "openRlhfModel";
  const o = checkOverrides<OpenRlhfOverrides>(fnName, overrides, OPENRLHF_OVERRIDE_KEYS);
  const lab = oneOf(fnName, "label", label, Object.keys(OPENRLHF_LOSS_FILES) as OpenRlhfLabel[]);
  const v = oneOf(fnName, "variant", variant, OPENRLHF_VARIANTS[lab]);
  const f64 = o.maskDtype === "float64";
  const id = `openrlhf@${lab}:${v}${overrideSuffix(OPENRLHF_OVERRIDE_KEYS, o)}`;
  const isKl = v.startsWith("kl:");
  const reads = { old: !isKl, advantages: !isKl, ref: isKl, rollout: false };
  const evaluate = (inputs: PolicyLossInputs): FrameworkResult => {
    const batch = prepareBatch(id, inputs, reads);
    if (isKl) return kl(id, v.slice(3) as OpenRlhfKlKind, batch);
    if (v === "gspo") return gspo(batch, f64);
    return ppo(batch, v !== "ppo:sample", v === "ppo:token:dual-clip-3" ? 3 : null, f64);
  };
  const pin = isKl
    ? { ...OPENRLHF_UTILS_FILES[lab], function: "compute_approx_kl" }
    : { ...OPENRLHF_LOSS_FILES[lab], function: "PolicyLoss.forward" };
  return Object.freeze({
    id,
    framework: "openrlhf",
    pin: Object.freeze(pin),
    variant: v,
    description: describe(v),
    settings: Object.freeze(settingsOf(v, f64)),
    needs: Object.freeze(isKl ? ["refLogprobs" as const] : []),
    evaluate,
  });
}
