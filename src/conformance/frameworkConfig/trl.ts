/**
 * TRL's GRPOTrainer config (`GRPOConfig` fields plus the accelerate world) resolved against one
 * recorded release into our algebra (docs/conformance/explain.md#trl). What a batch file stands
 * for: one process's generation batch, in the row order TRL's `split_tensor_dict` cuts it (after
 * its `shuffle_sequence_dict`), split into `steps_per_generation` micro-batches whose
 * `_compute_loss` values are summed.
 */

import { fmtValue, safeText } from "../../core/message.js";
import { ConfigError } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import { TRL_ARGUMENT_KEYS } from "../releases/trlArgumentKeys.js";
import type { RecordedValue } from "../releases/types.js";
import { atOrAfter } from "./eras.js";
import type { ParsedFrameworkConfig } from "./parse.js";
import { anyReleaseKeys, keysOf, type ReleaseRef, releaseHeader } from "./releases.js";
import type {
  FrameworkResolution,
  LossPlan,
  ResolutionWarning,
  ResolvedSetting,
} from "./resolution.js";
import { type MergedConfig, mergeConfig } from "./resolveShared.js";
import { oldLogpsComputed, type TrlEra, trlEra } from "./trlEras.js";

/** The accelerate / TrainingArguments world a TRL config runs in. */
export interface TrlWorld {
  /** accelerate's process count (default 1). */
  readonly numProcesses?: number;
  /** `num_items_in_batch` as TRL would pass it (default: numProcesses × the batch's tokens: every process alike). */
  readonly numItemsInBatch?: number;
}

/**
 * Keys kept for the resolution: the world's, and every argument TRL's parser takes beside
 * GRPOConfig (TrainingArguments, the CLI dataclasses: tools/record-releases/trlArguments.py), so
 * that a known argument is never taken for a typo of a loss key (keyClasses.ts lists it as
 * ignored when the loss does not read it).
 */
const WORLD_AND_ARGUMENT_KEYS: ReadonlySet<string> = new Set([
  "gradient_accumulation_steps",
  "per_device_train_batch_size",
  "num_processes",
  ...Object.keys(TRL_ARGUMENT_KEYS),
]);

const ROLE: Readonly<Record<string, string>> = {
  loss_type: "the per-token surrogate and the normaliser",
  epsilon: "ε_low of the clip 1 − ε_low",
  epsilon_high: "ε_high of the clip 1 + ε_high (cispo: the absolute weight cap)",
  delta: "two-sided clip: the unclipped branch's ratio is capped at δ",
  beta: "coefficient of the k3 KL to the reference, added per token before aggregation (0: none)",
  use_bias_correction_kl: "the KL term times the importance ratio",
  importance_sampling_level: "token ratio or sequence ratio (GSPO)",
  num_iterations: "updates per generation: > 1 makes the old logprobs real",
  steps_per_generation: "micro-batches per generation batch",
  generation_batch_size: "rows per generation batch (all processes)",
  max_completion_length: "dr_grpo's divisor B·max_completion_length",
  sapo_temperature_pos: "SAPO's τ for A > 0",
  sapo_temperature_neg: "SAPO's τ for A ≤ 0",
  vespo_k_pos: "VESPO's k for A > 0",
  vespo_lambda_pos: "VESPO's λ for A > 0",
  vespo_k_neg: "VESPO's k for A ≤ 0",
  vespo_lambda_neg: "VESPO's λ for A ≤ 0",
  top_entropy_quantile: "policy term only on tokens in the top quantile of entropy",
  entropy_coef: "entropy bonus coefficient",
  use_adaptive_entropy: "entropy coefficient driven by a controller (first step: bonus off)",
  off_policy_mask_threshold: "off-policy sequence mask (DeepSeek-V3.2's OPSM) threshold",
  use_vllm: "rollouts from vLLM (with the IS correction: old logprobs are always real)",
  vllm_importance_sampling_correction: "importance-sampling correction of vLLM's logprobs",
  vllm_importance_sampling_mode: "IS correction level and rule (token/sequence × truncate/mask)",
  vllm_importance_sampling_clip_max: "IS correction upper bound",
  vllm_importance_sampling_clip_min: "IS correction lower bound",
  vllm_importance_sampling_cap: "IS correction cap (older spelling)",
  mask_truncated_completions:
    "truncated completions leave the loss mask (the batch's mask is taken as after it)",
  scale_rewards: "advantage scaling (the batch carries its advantages)",
  num_generations: "group size of the advantages (the batch carries its advantages)",
  gradient_accumulation_steps:
    "micro-batches per optimizer step; the divisor of the row-normalised loss types",
  per_device_train_batch_size: "rows per micro-batch",
  num_processes: "accelerate processes: dapo/cispo/vespo divide num_items_in_batch by it",
};

/** Every key ROLE names is loss-relevant wherever a release defines it. */
const LOSS_KEYS = new Set(Object.keys(ROLE));

/** The world: TrainingArguments defaults (transformers) and accelerate's process count. */
function trlWorld(
  c: MergedConfig,
  rk: { has(key: string): boolean },
  world: TrlWorld,
): { readonly G: number; readonly P: number } {
  if (!c.isUser("gradient_accumulation_steps") && !rk.has("gradient_accumulation_steps"))
    c.derive("gradient_accumulation_steps", 1, "default", "TrainingArguments' default");
  if (!c.isUser("per_device_train_batch_size") && !rk.has("per_device_train_batch_size"))
    c.derive("per_device_train_batch_size", null, "default", "not needed: the batch's rows");
  if (!c.isUser("num_processes"))
    c.derive("num_processes", world.numProcesses ?? 1, "world", "accelerate's process count");
  const G = c.int("gradient_accumulation_steps");
  const P = c.int("num_processes");

  return { G, P };
}

/**
 * Micro-batches of the generation batch: steps_per_generation (default: the accumulation G);
 * before v0.17 every micro-step generates its own batch (one micro-batch per file).
 */
function stepsPerGeneration(
  fn: string,
  c: MergedConfig,
  era: TrlEra,
  G: number,
  P: number,
): number {
  let spg = era.splitsGeneration ? G : 1;
  if (c.has("steps_per_generation")) {
    const s = c.int("steps_per_generation", { nullable: true });
    const gbs = c.has("generation_batch_size")
      ? c.int("generation_batch_size", { nullable: true })
      : null;
    if (s !== null && gbs !== null)
      throw configError(
        fn,
        "generation_batch_size",
        "unset when steps_per_generation is set (GRPOConfig rejects both)",
        gbs,
      );
    if (s === null && gbs !== null) {
      const per = c.int("per_device_train_batch_size", { nullable: true });
      if (per === null)
        throw configError(
          fn,
          "generation_batch_size",
          "set together with per_device_train_batch_size (its micro-batches are generation_batch_size / (per_device_train_batch_size × num_processes))",
          gbs,
        );
      spg = gbs / (per * P);
      if (!Number.isInteger(spg))
        throw configError(
          fn,
          "generation_batch_size",
          `divisible by per_device_train_batch_size × num_processes = ${per * P}`,
          gbs,
        );
      c.derive(
        "steps_per_generation",
        spg,
        "derived",
        "generation_batch_size / (per_device_train_batch_size × num_processes)",
      );
    } else if (s === null) {
      c.derive(
        "steps_per_generation",
        G,
        "derived",
        "steps_per_generation = gradient_accumulation_steps when None",
      );
    } else spg = s;
  }
  return spg;
}

/** The recorded keys a TRL resolution lists, in the order it lists them. */
const SETTING_KEYS: readonly string[] = [
  "loss_type",
  "epsilon",
  "epsilon_high",
  "delta",
  "beta",
  "use_bias_correction_kl",
  "importance_sampling_level",
  "num_iterations",
  "gradient_accumulation_steps",
  "steps_per_generation",
  "generation_batch_size",
  "per_device_train_batch_size",
  "num_processes",
  "max_completion_length",
  "sapo_temperature_pos",
  "sapo_temperature_neg",
  "vespo_k_pos",
  "vespo_lambda_pos",
  "vespo_k_neg",
  "vespo_lambda_neg",
  "top_entropy_quantile",
  "entropy_coef",
  "use_adaptive_entropy",
  "off_policy_mask_threshold",
  "use_vllm",
  "vllm_importance_sampling_correction",
  "vllm_importance_sampling_mode",
  "vllm_importance_sampling_clip_max",
  "vllm_importance_sampling_clip_min",
  "vllm_importance_sampling_cap",
  "mask_truncated_completions",
  "scale_rewards",
  "num_generations",
];

/** What decides whether a recorded key shaped the loss (trlSettings' facts). */
interface TrlSettingFacts {
  readonly onPolicy: boolean;
  readonly surrogate: string;
  readonly beta: number;
  readonly G: number;
  readonly spg: number;
  readonly isCorr: boolean;
  readonly tokenNormalised: boolean;
  readonly lossType: string;
}

/** Whether num_iterations decides here whether the old logprobs are real. */
function numIterationsMatters(era: TrlEra, x: TrlSettingFacts): boolean {
  const onPolicyAtOneIteration = !oldLogpsComputed(era, {
    G: x.G,
    spg: era.splitsGeneration ? x.spg : x.G,
    iters: 1,
    vllmIs: x.isCorr,
  });
  return onPolicyAtOneIteration !== x.onPolicy;
}

/** Whether a recorded key shaped this resolution (false: listed, but it changed nothing here). */
function trlSettingEffective(key: string, era: TrlEra, x: TrlSettingFacts): boolean {
  switch (key) {
    case "epsilon":
    case "delta":
      return !x.onPolicy && x.surrogate === "pg_clip";
    case "epsilon_high":
      return !x.onPolicy && (x.surrogate === "pg_clip" || x.surrogate === "cispo");
    case "use_bias_correction_kl":
      return x.beta !== 0;
    case "num_iterations":
      // num_iterations matters only where it decides whether the old logprobs are real.
      return numIterationsMatters(era, x);
    case "num_processes":
      return x.tokenNormalised;
    case "max_completion_length":
      return x.lossType === "dr_grpo";
    case "sapo_temperature_pos":
    case "sapo_temperature_neg":
      return x.lossType === "sapo";
    case "vespo_k_pos":
    case "vespo_lambda_pos":
    case "vespo_k_neg":
    case "vespo_lambda_neg":
      return x.lossType === "vespo";
    case "vllm_importance_sampling_correction":
    case "vllm_importance_sampling_mode":
    case "vllm_importance_sampling_clip_max":
    case "vllm_importance_sampling_clip_min":
    case "vllm_importance_sampling_cap":
      return x.isCorr;
    case "generation_batch_size":
    case "per_device_train_batch_size":
    case "mask_truncated_completions":
    case "scale_rewards":
    case "num_generations":
      return false;
    default:
      return true;
  }
}

/** The recorded keys of the resolution, each marked by whether it shaped the loss here. */
function trlSettings(c: MergedConfig, era: TrlEra, x: TrlSettingFacts): ResolvedSetting[] {
  const settings: ResolvedSetting[] = [];
  for (const key of SETTING_KEYS)
    if (c.has(key) || c.isUser(key))
      settings.push(c.setting(key, ROLE[key] ?? "", trlSettingEffective(key, era, x)));
  return settings;
}

/**
 * Resolve a TRL config against a release.
 *
 * @param r - The release (findRelease("trl@…")).
 * @param parsed - The parsed config (GRPOConfig field names).
 * @param world - The accelerate world.
 * @returns The resolution.
 * @throws {ConfigError} E_CONFIG for an unknown loss key (did-you-mean), a value of the wrong type,
 *   or a combination the release rejects or polgrad does not model.
 * @derivation docs/conformance/explain.md#trl
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > golden: TRL v1.9.0's default is dapo with an on-policy ratio
 * @since 0.2.0
 */
export function resolveTrl(
  r: ReleaseRef,
  parsed: ParsedFrameworkConfig,
  world: TrlWorld = {},
): FrameworkResolution {
  const fn = r.ref;
  const era = trlEra(r);
  const rk = keysOf(r.release);
  const { merged: c, ignored } = mergeConfig(fn, r.ref, parsed, rk, {
    lossKeys: LOSS_KEYS,
    anyReleaseLossKeys: anyReleaseKeys(r.facts, LOSS_KEYS),
    worldKeys: WORLD_AND_ARGUMENT_KEYS,
  });
  const warnings: ResolutionWarning[] = [];
  const x = trlReads(fn, c, era, trlWorld(c, rk, world));
  const { config, surrogate } = trlConfig(fn, c, r, era, x, warnings);
  const plan = trlPlan(config, era, x, world);
  if (x.onPolicy && (c.isUser("epsilon") || c.isUser("epsilon_high") || c.isUser("delta")))
    warnings.push({
      code: "trl-on-policy-clip-inert",
      message: `old_per_token_logps is not computed (num_iterations = ${x.iters}, steps_per_generation = ${x.spg} divides into gradient_accumulation_steps = ${x.G}, no vLLM IS correction): the ratio is exactly 1, so epsilon, epsilon_high and delta have no effect and the batch's old_logprobs are not read`,
    });
  const settings = trlSettings(c, era, {
    onPolicy: x.onPolicy,
    surrogate: surrogate.surrogate,
    beta: x.beta,
    G: x.G,
    spg: x.spg,
    isCorr: x.isCorr,
    tokenNormalised: x.tokenNormalised,
    lossType: x.lossType,
  });
  trlWarnings(r, c, era, x, config, warnings);
  return {
    framework: "trl",
    ...releaseHeader(r),
    settings,
    ignored,
    skipped: parsed.skipped,
    plan,
    algebra: describeTrl(config, plan, x.lossType, x.level, x.onPolicy, x.P, x.G, x.spg),
    warnings,
  };
}

/** What resolveTrl reads from the merged config before it builds the loss. */
interface TrlReads {
  readonly G: number;
  readonly P: number;
  readonly lossType: string;
  readonly eps: number;
  readonly epsHigh: number;
  readonly beta: number;
  readonly iters: number;
  readonly level: "token" | "sequence";
  readonly spg: number;
  readonly useVllm: boolean;
  readonly isCorr: boolean;
  readonly onPolicy: boolean;
  readonly tokenNormalised: boolean;
}

/** The clip's ε_low and ε_high (epsilon where epsilon_high is None, recorded as derived). */
function trlClip(c: MergedConfig): { eps: number; epsHigh: number } {
  // v0.14–v0.15 have no clip (and no epsilon key).
  const eps = c.has("epsilon") ? c.num("epsilon", { min: 0 }) : 0.2;
  if (!c.has("epsilon_high")) return { eps, epsHigh: eps };
  const h = c.num("epsilon_high", { nullable: true, min: 0 });
  if (h === null) c.derive("epsilon_high", eps, "derived", "epsilon_high = epsilon when None");
  return { eps, epsHigh: h ?? eps };
}

/** Whether vLLM generates, and whether its importance-sampling correction applies at this release. */
function trlVllm(c: MergedConfig, era: TrlEra): { useVllm: boolean; isCorr: boolean } {
  const useVllm = c.has("use_vllm") ? c.bool("use_vllm") : false;
  const isCorr =
    era.vllmIs !== "none" &&
    useVllm &&
    c.has("vllm_importance_sampling_correction") &&
    c.bool("vllm_importance_sampling_correction");
  return { useVllm, isCorr };
}

/** The loss type, clip widths, β, iterations, ratio level, micro-batches and the on-policy test. */
function trlReads(
  fn: string,
  c: MergedConfig,
  era: TrlEra,
  w: { readonly G: number; readonly P: number },
): TrlReads {
  const { G, P } = w;
  const lossType = era.hardCoded ?? c.str("loss_type", era.lossTypes);
  if (c.has("use_liger_loss") && c.raw("use_liger_loss") !== null && c.bool("use_liger_loss"))
    throw configError(
      fn,
      "use_liger_loss",
      "false (the Liger fused loss path is not resolved by polgrad)",
      true,
    );
  const { eps, epsHigh } = trlClip(c);
  const beta = c.num("beta", { min: 0 });
  const iters = c.has("num_iterations") ? c.int("num_iterations") : 1;
  const level = c.has("importance_sampling_level")
    ? c.str("importance_sampling_level", ["token", "sequence"] as const)
    : "token";
  const spg = stepsPerGeneration(fn, c, era, G, P);
  const { useVllm, isCorr } = trlVllm(c, era);
  // old_per_token_logps is computed only when generation and optimisation are misaligned (or for
  // vLLM's IS correction); otherwise per_token_logps.detach() stands in: ratio 1, on-policy.
  const onPolicy = !oldLogpsComputed(era, {
    G,
    spg: era.splitsGeneration ? spg : G,
    iters,
    vllmIs: isCorr,
  });
  if (lossType === "luspo" && level === "token")
    throw configError(
      fn,
      "importance_sampling_level",
      '"sequence" with loss_type "luspo" here: at token level TRL averages L_b·ℓ over every [B, T] position, padding included (deviation trl-luspo-token-padding, modelled by trlLuspoTokenLoss, not by this resolver)',
      level,
    );
  const tokenNormalised = lossType === "dapo" || lossType === "cispo" || lossType === "vespo";
  return {
    G,
    P,
    lossType,
    eps,
    epsHigh,
    beta,
    iters,
    level,
    spg,
    useVllm,
    isCorr,
    onPolicy,
    tokenNormalised,
  };
}

/** The per-micro-batch loss in polgrad's algebra: surrogate, aggregation, KL, entropy, masks, IS. */
function trlConfig(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  era: TrlEra,
  x: TrlReads,
  warnings: ResolutionWarning[],
): { config: PolicyLossConfig; surrogate: ReturnType<typeof surrogateOf> } {
  const surrogate = surrogateOf(fn, c, era, x.lossType, x.eps, x.epsHigh, warnings);
  const aggregation = aggregationOf(x.lossType);
  const config: PolicyLossConfig = {
    ratio: x.level === "sequence" ? "sequence" : "token",
    ...surrogate,
    aggregation: aggregation.aggregation,
    ...(x.lossType === "dr_grpo" ? { normLen: c.int("max_completion_length") } : {}),
    // Before v0.17 the row and token divisors are not clamped: an empty row divides by 0 (NaN upstream).
    emptyRows: era.clampedDivisors ? "count" : "reject",
    kl:
      x.beta === 0
        ? null
        : {
            kind: "k3",
            coef: x.beta,
            ...(c.has("use_bias_correction_kl") && c.bool("use_bias_correction_kl")
              ? { weight: "ratio" as const }
              : {}),
          },
    ...entropyTerms(c, x.lossType, warnings),
    ...(c.has("off_policy_mask_threshold") &&
    c.num("off_policy_mask_threshold", { nullable: true }) !== null
      ? {
          offPolicyMask: {
            threshold: c.num("off_policy_mask_threshold", { nullable: true }) as number,
            // From v0.28 vLLM's sampling logprobs reach _compute_loss whenever vLLM generates (IS
            // correction or not) and OPSM prefers them; before, or without vLLM, the old logprobs.
            sampling:
              (x.useVllm && atOrAfter(r, "v0.28.0")) || x.isCorr
                ? ("rollout" as const)
                : ("old" as const),
          },
        }
      : {}),
    ...(x.isCorr ? { isCorrection: isCorrectionOf(c, era) } : {}),
  };
  return { config, surrogate };
}

/** The trainer plumbing: micro-batches, the divisor, num_items_in_batch, what the batch stands for. */
function trlPlan(config: PolicyLossConfig, era: TrlEra, x: TrlReads, world: TrlWorld): LossPlan {
  const { G, P, spg } = x;
  const items = (whole: { readonly N: number }) => world.numItemsInBatch ?? P * whole.N;
  return {
    config,
    microBatches: spg,
    // Up to v0.21 transformers' Trainer divides every loss by the accumulation; from v0.22 TRL
    // divides the row-normalised types itself and normalises dapo/cispo/vespo by num_items_in_batch.
    divideBy: era.accumulation === "trainer" || !x.tokenNormalised ? G : 1,
    onPolicy: x.onPolicy,
    ...(x.tokenNormalised
      ? {
          global: (whole) => ({
            tokens: era.numItemsClamped ? Math.max(items(whole), 1) : items(whole),
            dpSize: P,
          }),
          ...(era.numItemsClamped
            ? {}
            : { divisor: (_m, whole) => ({ value: items(whole), name: "num_items_in_batch" }) }),
        }
      : x.lossType === "token_mean_clipped" && !era.clampedDivisors
        ? { divisor: (m) => ({ value: m.N, name: "Σ completion_mask of the micro-batch" }) }
        : {}),
    klInObjective: true,
    batchMeaning:
      `one process's generation batch (B rows, in the order split_tensor_dict cuts them after TRL's shuffle), ` +
      `split into steps_per_generation = ${spg} micro-batch${spg === 1 ? "" : "es"} of B/${spg} contiguous rows whose _compute_loss values are summed; ` +
      `${P} process${P === 1 ? "" : "es"}, every process's batch alike`,
  };
}

/** The warnings about the generation window, the rewards, the entropy mask and num_items_in_batch. */
function trlWarnings(
  r: ReleaseRef,
  c: MergedConfig,
  era: TrlEra,
  x: TrlReads,
  config: PolicyLossConfig,
  warnings: ResolutionWarning[],
): void {
  const { G, P, spg } = x;
  if (era.splitsGeneration && spg > G)
    warnings.push({
      code: "trl-several-steps-per-generation",
      message: `steps_per_generation = ${spg} > gradient_accumulation_steps = ${G}: one generation batch feeds ${spg % G === 0 ? spg / G : `${spg}/${G}`} optimizer steps of ${G} micro-batches each; the loss shown is the sum over all ${spg} micro-batches (each divided as TRL divides it), i.e. the sum of those steps' losses, and the gradient their sum, not one step's`,
    });
  if (era.scaleRewardsInverted && c.has("scale_rewards") && c.raw("scale_rewards") === "group")
    warnings.push({
      code: "trl-scale-rewards-inverted",
      message: `at ${r.ref} scale_rewards "group" does not divide the advantages by the group std (the "group"/"batch" comparisons are inverted; fixed in v0.22.2): the batch's advantages are what the run used, this only explains them`,
    });
  if (P > 1 && config.topEntropyQuantile != null)
    warnings.push({
      code: "trl-entropy-quantile-processes",
      message: `top_entropy_quantile's threshold is gathered over all ${P} processes upstream; it is evaluated here over this batch's micro-batch alone`,
    });
  if (
    x.tokenNormalised &&
    c.has("mask_truncated_completions") &&
    c.bool("mask_truncated_completions") &&
    era.numItemsBeforeTruncationMask
  )
    warnings.push({
      code: "trl-num-items-counts-masked",
      message:
        "num_items_in_batch is counted before mask_truncated_completions zeroes truncated completions: the divisor counts tokens that the loss then masks",
      deviation: "trl-dapo-generation-batch-normaliser",
    });
}

/** The E_CONFIG error for a key whose value breaks a rule: "<fn>: <key> must be <rule>; got <value>". */
function configError(fn: string, key: string, rule: string, got: RecordedValue): ConfigError {
  return new ConfigError(fn, key, `${fn}: ${safeText(key)} must be ${rule}; got ${fmtValue(got)}`);
}

/** The surrogate of a loss type: its per-token term, clip or cap, and their parameters. */
function surrogateOf(
  fn: string,
  c: MergedConfig,
  era: TrlEra,
  lossType: string,
  eps: number,
  epsHigh: number,
  warnings: ResolutionWarning[],
): Pick<PolicyLossConfig, "surrogate" | "clip" | "cispo" | "sapo" | "vespo"> {
  switch (lossType) {
    case "seq_mean_unclipped":
      // v0.14–v0.15: −exp(lp − sg[lp])·A, no clip (the ratio is 1).
      return { surrogate: "pg", clip: null };
    case "cispo":
      if (!c.isUser("epsilon_high"))
        warnings.push({
          code: "trl-cispo-default-cap",
          message: `loss_type="cispo" caps every weight at epsilon_high, which defaults to epsilon = ${epsHigh}: every ratio near 1 is capped at ${epsHigh} (ScaleRL recommends epsilon_high = 5)`,
          deviation: "trl-cispo-absolute-cap",
        });
      return { surrogate: "cispo", clip: null, cispo: { cap: epsHigh } };
    case "sapo":
      // torch.where over two Python floats builds a float32 tensor: the temperatures are float32.
      return {
        surrogate: "sapo",
        clip: null,
        sapo: {
          tauPos: Math.fround(c.num("sapo_temperature_pos", { gt: 0 })),
          tauNeg: Math.fround(c.num("sapo_temperature_neg", { gt: 0 })),
        },
      };
    case "vespo":
      return {
        surrogate: "vespo",
        clip: null,
        vespo: {
          kPos: c.num("vespo_k_pos"),
          lambdaPos: c.num("vespo_lambda_pos"),
          kNeg: c.num("vespo_k_neg"),
          lambdaNeg: c.num("vespo_lambda_neg"),
        },
      };
    default:
      void era;
      return pgClipOf(fn, c, eps, epsHigh);
  }
}

/** The clipped surrogate, with delta as the cap of its unclipped branch (refused unless δ > 1 + ε_high). */
function pgClipOf(
  fn: string,
  c: MergedConfig,
  eps: number,
  epsHigh: number,
): Pick<PolicyLossConfig, "surrogate" | "clip"> {
  const delta = c.has("delta") ? c.num("delta", { nullable: true }) : null;
  if (delta !== null && delta <= 1 + epsHigh)
    throw configError(
      fn,
      "delta",
      `> 1 + epsilon_high = ${1 + epsHigh} (polgrad models delta as the dual clip min(r, δ) of the unclipped branch, exact when δ > 1 + ε_high; TRL's documentation recommends δ > 1 + ε)`,
      delta,
    );
  return {
    surrogate: "pg_clip",
    clip: { epsLow: eps, epsHigh, ...(delta === null ? {} : { ratioCap: delta }) },
  };
}

/** The aggregation a loss type normalises its per-token terms with. */
function aggregationOf(lossType: string): Pick<PolicyLossConfig, "aggregation"> {
  switch (lossType) {
    case "grpo":
    case "sapo":
    case "seq_mean_unclipped":
      return { aggregation: "seq_mean_token_mean" };
    case "bnpo":
    case "token_mean_clipped":
    case "dapo":
    case "cispo":
    case "vespo":
      return { aggregation: "token_mean" };
    case "dr_grpo":
      return { aggregation: "token_sum_norm" };
    case "luspo":
      return { aggregation: "seq_mean_token_sum" };
    default:
      return { aggregation: "seq_mean_token_mean" };
  }
}

/** The entropy mask (top_entropy_quantile < 1) and the entropy bonus (a fixed, non-zero coef). */
function entropyTerms(
  c: MergedConfig,
  lossType: string,
  warnings: ResolutionWarning[],
): Pick<PolicyLossConfig, "topEntropyQuantile" | "entropyBonus"> {
  const out: {
    topEntropyQuantile?: number;
    entropyBonus?: NonNullable<PolicyLossConfig["entropyBonus"]>;
  } = {};
  if (c.has("top_entropy_quantile")) {
    const q = c.num("top_entropy_quantile", { min: 0, max: 1 });
    if (q < 1) out.topEntropyQuantile = q;
  }
  if (c.has("entropy_coef")) {
    const coef = c.num("entropy_coef");
    const adaptive = c.has("use_adaptive_entropy") && c.bool("use_adaptive_entropy");
    if (adaptive)
      warnings.push({
        code: "trl-adaptive-entropy-first-step",
        message:
          "use_adaptive_entropy: the coefficient applied at a step depends on the previous step's world entropy; on the first step (last_world_entropy = inf) the bonus is 0, which is what is evaluated",
      });
    else if (coef !== 0) out.entropyBonus = { coef, aggregation: "token_mean" };
    void lossType;
  }
  return out;
}

/** vLLM's importance-sampling correction: its level, truncate or mask, and its bounds. */
function isCorrectionOf(
  c: MergedConfig,
  era: TrlEra,
): NonNullable<PolicyLossConfig["isCorrection"]> {
  if (era.vllmIs === "cap")
    // v0.23–v0.25: the token ratio exp(old − rollout) truncated at vllm_importance_sampling_cap.
    return {
      level: "token",
      mode: "truncate",
      cap: c.num("vllm_importance_sampling_cap", { gt: 0 }),
    };
  const mode = c.has("vllm_importance_sampling_mode")
    ? c.str("vllm_importance_sampling_mode", [
        "token_truncate",
        "token_mask",
        "sequence_truncate",
        "sequence_mask",
      ] as const)
    : "token_truncate";
  // v1.6+: GRPOConfig.__post_init__ sets clip_max = the deprecated cap whenever cap is not None.
  const capSet =
    c.has("vllm_importance_sampling_cap") && c.raw("vllm_importance_sampling_cap") !== null;
  const max =
    c.has("vllm_importance_sampling_clip_max") && !capSet
      ? c.num("vllm_importance_sampling_clip_max", { nullable: true, gt: 0 })
      : c.num("vllm_importance_sampling_cap", { nullable: true, gt: 0 });
  if (capSet && c.has("vllm_importance_sampling_clip_max"))
    c.derive(
      "vllm_importance_sampling_clip_max",
      max,
      "derived",
      "vllm_importance_sampling_clip_max = vllm_importance_sampling_cap when cap is set (GRPOConfig.__post_init__, cap deprecated)",
    );
  const min = c.has("vllm_importance_sampling_clip_min")
    ? c.num("vllm_importance_sampling_clip_min", { nullable: true, min: 0 })
    : null;
  return {
    level: mode.startsWith("sequence") ? "sequence" : "token",
    mode: mode.endsWith("mask") ? "mask" : "truncate",
    cap: max,
    lower: min,
  };
}

/** The ratio's formula: 1 on-policy, else GSPO's sequence ratio or the token ratio. */
function ratioText(onPolicy: boolean, level: string): string {
  if (onPolicy)
    return "r = exp(lp − sg[lp]) = 1 (old_per_token_logps not computed: per_token_logps.detach() stands in)";
  if (level === "sequence")
    return "s_b = exp(Σ_t m·(lp − old) / max(L_b, 1)) (GSPO's sequence ratio)";
  return "r = exp(lp − old) per token, no log-ratio clamp";
}

/** The surrogate's formula, with its clip, cap or temperatures. */
function surrogateText(cfg: PolicyLossConfig): string {
  const clip = cfg.clip;
  if (cfg.surrogate === "pg_clip" && clip !== null)
    return `ℓ = −min(r·A, clamp(r, 1 − ${clip.epsLow}, 1 + ${clip.epsHigh})·A)${clip.ratioCap != null ? `, the unclipped r capped at δ = ${clip.ratioCap}` : ""}`;
  if (cfg.surrogate === "pg") return "ℓ = −r·A, no clip";
  if (cfg.surrogate === "cispo")
    return `ℓ = −sg[min(r, ${cfg.cispo?.cap})]·A·lp (CISPO, absolute cap)`;
  if (cfg.surrogate === "sapo")
    return `ℓ = −σ(τ(r − 1))·4/τ·A, τ+ = ${cfg.sapo?.tauPos}, τ− = ${cfg.sapo?.tauNeg} (float32)`;
  return `ℓ = −sg[φ]·A·lp (VESPO gamma weights)`;
}

/** The aggregation's formula: its divisor, and whether an empty row or micro-batch divides by 0. */
function aggregationText(cfg: PolicyLossConfig, lossType: string, P: number): string {
  switch (cfg.aggregation) {
    case "seq_mean_token_mean":
      if (cfg.emptyRows === "reject")
        return "mean over all B rows of Σ_t m·ℓ / L_b (seq_mean_token_mean; no clamp: an empty row divides by 0)";
      return "mean over all B rows of Σ_t m·ℓ / max(L_b, 1) (seq_mean_token_mean; empty rows count)";
    case "token_mean":
      if (lossType === "bnpo") return "Σ m·ℓ / max(Σ m, 1) over the micro-batch (token_mean)";
      if (lossType === "token_mean_clipped")
        return "Σ m·ℓ / Σ m over the micro-batch (token_mean; no clamp: an empty micro-batch divides by 0)";
      return `Σ m·ℓ / (num_items_in_batch / num_processes), num_items_in_batch the generation batch's tokens over all processes (${P}) (token_mean with a global normaliser)`;
    case "token_sum_norm":
      return `Σ m·ℓ / (B·max_completion_length), max_completion_length = ${cfg.normLen} (token_sum_norm)`;
    case "seq_mean_token_sum":
      return "mean over rows of L_b·ℓ_b (seq_mean_token_sum; LUSPO)";
    default:
      return cfg.aggregation;
  }
}

/** The explanation's components, one formula each, in the order explain prints them. */
function describeTrl(
  cfg: PolicyLossConfig,
  plan: LossPlan,
  lossType: string,
  level: string,
  onPolicy: boolean,
  P: number,
  G: number,
  spg: number,
): { component: string; text: string }[] {
  const out: { component: string; text: string }[] = [];
  out.push({ component: "ratio", text: ratioText(onPolicy, level) });
  out.push({ component: "surrogate", text: surrogateText(cfg) });
  out.push({ component: "aggregation", text: aggregationText(cfg, lossType, P) });
  out.push({
    component: "accumulation",
    text: `${spg} micro-batch${spg === 1 ? "" : "es"} per generation batch, summed${plan.divideBy === 1 ? "" : `, each divided by gradient_accumulation_steps = ${G}`}`,
  });
  out.push({
    component: "kl",
    text:
      cfg.kl == null
        ? "none (beta = 0: no reference model)"
        : `+ ${cfg.kl.coef}·k3 per token before aggregation, k3 = exp(ref − lp) − (ref − lp) − 1, unclamped${cfg.kl.weight === "ratio" ? ", times the ratio (use_bias_correction_kl)" : ""}`,
  });
  if (cfg.isCorrection != null)
    out.push({
      component: "is_correction",
      text: `vLLM IS weight exp(old − rollout) per ${cfg.isCorrection.level}, ${cfg.isCorrection.mode} to [${cfg.isCorrection.lower ?? "−"}, ${cfg.isCorrection.cap ?? "∞"}], as data`,
    });
  if (cfg.topEntropyQuantile != null)
    out.push({
      component: "entropy_mask",
      text: `policy term only on tokens with entropy in the top ${cfg.topEntropyQuantile} quantile of the micro-batch`,
    });
  if (cfg.entropyBonus != null)
    out.push({
      component: "entropy_bonus",
      text: `− ${cfg.entropyBonus.coef}·mean entropy of the kept tokens`,
    });
  if (cfg.offPolicyMask != null)
    out.push({
      component: "off_policy_mask",
      text: `A < 0 tokens of rows with mean(${cfg.offPolicyMask.sampling === "rollout" ? "vLLM sampling logprobs" : "old"} − lp) > ${cfg.offPolicyMask.threshold} get weight 0`,
    });
  out.push({
    component: "advantage",
    text: "from the batch (TRL: group-normalised rewards, scale_rewards; not recomputed here)",
  });
  return out;
}
