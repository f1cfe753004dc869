/**
 * verl's PPO trainer config (Hydra, dotted paths) resolved against one recorded release into our
 * algebra (docs/conformance/explain.md#verl). What a batch file stands for: one whole mini-batch
 * on one rank: dp_size 1, `global_batch_size` = B (emptied rows counted), the global token count
 * Σ mask. Up to v0.7.1 the old actor splits it into micro-batches of
 * `ppo_micro_batch_size_per_gpu` rows, each micro-batch's loss (local statistics) times 1/K; from
 * v0.8.0 the engine normalises every micro-batch by the mini-batch's global counts, so the split
 * does not change the loss.
 */
import { fmtValue, safeText } from "../../core/message.js";
import { ConfigError } from "../../errors.js";
import type { KLLossConfig } from "../../kl/estimator.js";
import type {
  EntropyBonusConfig,
  ISCorrectionConfig,
  PolicyLossConfig,
  RejectionRule,
} from "../../losses/config.js";
import type { RecordedValue } from "../releases/types.js";
import { atOrAfter, releaseEra } from "./eras.js";
import type { ParsedFrameworkConfig } from "./parse.js";
import { anyReleaseKeys, keysOf, type ReleaseRef, releaseHeader } from "./releases.js";
import type {
  FrameworkResolution,
  LossPlan,
  ResolutionWarning,
  ResolvedSetting,
} from "./resolution.js";
import { type MergedConfig, mergeConfig } from "./resolveShared.js";

const A = "actor_rollout_ref.actor.";

const ROLE: Readonly<Record<string, string>> = {
  [`${A}loss_agg_mode`]: "agg_loss's mode: the aggregation of the policy, KL and entropy terms",
  [`${A}policy_loss.loss_mode`]: "the policy loss function (vanilla, gspo, cispo, ...)",
  [`${A}clip_ratio`]: "the clip ε where clip_ratio_low/high are null",
  [`${A}clip_ratio_low`]: "ε_low of the clip",
  [`${A}clip_ratio_high`]: "ε_high of the clip",
  [`${A}clip_ratio_c`]: "the dual clip's c for A < 0 (vanilla); DPPO's truncation",
  [`${A}loss_scale_factor`]: "seq-mean-token-sum-norm's divisor (null: the padded width T)",
  [`${A}use_kl_loss`]: "add kl_loss_coef·agg(KL to the reference) to the loss",
  [`${A}kl_loss_coef`]: "the KL loss coefficient",
  [`${A}kl_loss_type`]: "the KL estimator (low_var_kl = k3 clamped)",
  [`${A}entropy_coeff`]: "entropy bonus coefficient (− coef·agg(entropy))",
  [`${A}tau_pos`]: "SAPO's τ for A > 0",
  [`${A}tau_neg`]: "SAPO's τ for A ≤ 0",
  [`${A}policy_loss.dro_beta`]: "DRO's β",
  [`${A}ppo_mini_batch_size`]:
    "prompts per mini-batch (global_batch_size = ppo_mini_batch_size × rollout.n)",
  [`${A}ppo_micro_batch_size_per_gpu`]:
    "rows per micro-batch (old actor: each micro-batch's loss times 1/K)",
  [`${A}ppo_micro_batch_size`]:
    "the deprecated global micro-batch size (old actor: // (n_gpus // ulysses_sequence_parallel_size) rows per GPU)",
  [`${A}ulysses_sequence_parallel_size`]:
    "sequence-parallel size (n_gpus // it ranks share the global micro-batch size)",
  [`${A}use_dynamic_bsz`]: "micro-batches packed by a token budget",
  [`${A}ppo_epochs`]: "passes over the mini-batch (1 with one mini-batch: on-policy in v0.6–v0.7)",
  "data.train_batch_size": "prompts per step (train_batch_size / ppo_mini_batch_size mini-batches)",
  "actor_rollout_ref.rollout.n": "samples per prompt",
  "algorithm.adv_estimator": "the advantage estimator (the batch carries its advantages)",
  "algorithm.norm_adv_by_std_in_grpo": "GRPO's std scaling (the batch carries its advantages)",
  "algorithm.use_kl_in_reward": "KL in the reward (the batch carries its advantages)",
  "algorithm.rollout_correction.rollout_is":
    "rollout importance-sampling weights (token / sequence)",
  "algorithm.rollout_correction.rollout_is_threshold": "the IS weights' upper clamp",
  "algorithm.rollout_correction.rollout_is_batch_normalize":
    "the IS weights rescaled to mean 1 over the batch",
  "algorithm.rollout_correction.rollout_rs": "rollout rejection sampling",
  "algorithm.rollout_correction.rollout_rs_threshold": "the rejection rules' bounds",
  "actor_rollout_ref.rollout.calculate_log_probs":
    "the rollout engine returns its logprobs (the rollout correction needs them)",
  "algorithm.rollout_correction.bypass_mode": "bypass: old logprobs from the rollout engine",
  "trainer.n_gpus_per_node":
    "GPUs per node (the batch is taken as one whole mini-batch on one rank)",
  "trainer.nnodes": "nodes (the batch is taken as one whole mini-batch on one rank)",
};

const LOSS_KEYS = new Set(Object.keys(ROLE));

/** The loss-relevant keys under a dotted key (the key itself, or a subtree holding some). @internal */
export function verlLossKeysUnder(key: string): string[] {
  return [...LOSS_KEYS].filter((k) => k === key || k.startsWith(`${key}.`));
}
const NO_WORLD: ReadonlySet<string> = new Set();

/** The era of a verl release: which actor, and agg_loss's formulas. */
interface VerlEra {
  readonly name: string;
  /** Engine worker (global normalisers, no micro-batch scaling) vs the old actor. */
  readonly engine: boolean;
  /** agg_loss drops empty rows from the seq-mean modes (else they count, or give NaN). */
  readonly dropsEmptyRows: boolean;
  /** seq-mean-token-sum-norm = ΣΣ m·ℓ / L (no row division), before v0.7.1. */
  readonly sumNormNoRows: boolean;
  readonly aggModes: readonly string[];
  readonly lossModes: readonly string[];
  /** The on-policy shortcut of v0.6.0–v0.7.1 (one mini-batch per step, one epoch). */
  readonly onPolicyShortcut: boolean;
  /** The `+` KL types work (they raise NotImplementedError before v0.8.0). */
  readonly straightThroughKl: boolean;
}

function verlEra(r: ReleaseRef): VerlEra {
  const at = (l: string) => atOrAfter(r, l);
  const base = [
    "token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-mean",
    "seq-mean-token-sum-norm",
  ];
  const modes = ["vanilla"];
  if (at("v0.5.0")) modes.push("gpg");
  if (at("v0.6.0")) modes.push("gspo", "geo_mean");
  if (at("v0.7.0")) modes.push("sapo", "cispo");
  if (at("v0.7.1")) modes.push("dppo_tv", "dppo_kl");
  const g = at("v0.9.0");
  if (g) modes.push("dro");
  return {
    name: releaseEra(r).name,
    engine: at("v0.8.0"),
    dropsEmptyRows: at("v0.6.1"),
    sumNormNoRows: !at("v0.7.1"),
    aggModes: g ? [...base, "token-sum"] : base,
    lossModes: modes,
    onPolicyShortcut: at("v0.6.0") && !at("v0.8.0"),
    straightThroughKl: at("v0.8.0"),
  };
}

const KL_TYPES: Readonly<Record<string, KLLossConfig>> = {
  kl: { kind: "k1", coef: 1 },
  k1: { kind: "k1", coef: 1 },
  abs: { kind: "abs", coef: 1 },
  mse: { kind: "k2", coef: 1 },
  k2: { kind: "k2", coef: 1 },
  low_var_kl: { kind: "k3", coef: 1, clamp: { delta: 20, value: 10 } },
  k3: { kind: "k3", coef: 1, clamp: { delta: 20, value: 10 } },
};

function bad(fn: string, key: string, rule: string, got: RecordedValue): ConfigError {
  return new ConfigError(fn, key, `${fn}: ${safeText(key)} must be ${rule}; got ${fmtValue(got)}`);
}

/**
 * The policy loss of a verl `loss_mode` (the surrogate, its ratio, clip and clamps), and the
 * aggregation the mode fixes whatever loss_agg_mode says (null: loss_agg_mode's).
 */
function verlPolicy(
  fn: string,
  c: MergedConfig,
  era: VerlEra,
  lossMode: string,
  lo: number,
  hi: number,
  cDual: number,
): { policy: Omit<PolicyLossConfig, "aggregation">; fixedMode: string | null } {
  const clamp20 = { level: "token", lower: -20, upper: 20 } as const;
  let policy: Omit<PolicyLossConfig, "aggregation">;
  let fixedMode: string | null = null;
  switch (lossMode) {
    case "vanilla":
      policy = {
        ratio: "token",
        surrogate: "pg_clip",
        clip: { epsLow: lo, epsHigh: hi, ratioCap: cDual },
        ratioClamp: clamp20,
      };
      break;
    case "gspo":
      policy = {
        ratio: "sequence_token",
        surrogate: "pg_clip",
        clip: { epsLow: lo, epsHigh: hi },
        ratioClamp: { level: "row", upper: 10 },
      };
      fixedMode = "seq-mean-token-mean";
      break;
    case "cispo":
      policy = {
        ratio: "token",
        surrogate: "cispo",
        clip: { epsLow: lo, epsHigh: hi },
        ratioClamp: clamp20,
      };
      break;
    case "sapo":
      policy = {
        ratio: "token",
        surrogate: "sapo",
        clip: null,
        sapo: { tauPos: c.num(`${A}tau_pos`, { gt: 0 }), tauNeg: c.num(`${A}tau_neg`, { gt: 0 }) },
        ratioClamp: clamp20,
      };
      fixedMode = "seq-mean-token-mean";
      break;
    case "gpg":
      policy = { ratio: "token", surrogate: "reinforce", clip: null };
      break;
    case "geo_mean":
      policy = {
        ratio: "sequence",
        surrogate: "pg",
        clip: null,
        ratioClamp: { level: "token", lower: -lo, upper: hi, signAware: true },
      };
      break;
    case "dppo_tv":
    case "dppo_kl":
      policy = {
        ratio: "token",
        surrogate: "dppo",
        clip: null,
        dppo: {
          divergence: lossMode === "dppo_tv" ? "tv" : "kl",
          low: lo,
          high: hi,
          truncation: cDual,
        },
      };
      break;
    case "dro": {
      const beta = c.num(`${A}policy_loss.dro_beta`, { nullable: true, gt: 0 });
      if (beta === null)
        throw bad(
          fn,
          `${A}policy_loss.dro_beta`,
          "set (> 0) when loss_mode is dro (verl requires it)",
          null,
        );
      policy = { ratio: "token", surrogate: "dro", clip: null, dro: { beta } };
      break;
    }
    default:
      throw bad(fn, `${A}policy_loss.loss_mode`, `one of ${era.lossModes.join(", ")}`, lossMode);
  }
  return { policy, fixedMode };
}

/**
 * The KL loss: kl_loss_coef·agg_loss(kl_penalty(...), mask, loss_agg_mode), added before scaling;
 * `aggregation` when the policy term's mode is fixed apart from loss_agg_mode (null: the loss's).
 */
function verlKl(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  era: VerlEra,
  aggregation: PolicyLossConfig["aggregation"] | null,
): KLLossConfig {
  const type = c.str(`${A}kl_loss_type`, [
    ...Object.keys(KL_TYPES),
    ...Object.keys(KL_TYPES).map((k) => `${k}+`),
  ]);
  const st = type.endsWith("+");
  if (st && !era.straightThroughKl)
    throw bad(
      fn,
      `${A}kl_loss_type`,
      `one without "+" at ${r.ref} (verl raises NotImplementedError: the "+" is not stripped before v0.8.0)`,
      type,
    );
  const base = KL_TYPES[st ? type.slice(0, -1) : type] as KLLossConfig;
  return {
    ...base,
    coef: c.num(`${A}kl_loss_coef`),
    ...(st ? { gradient: "straight_through" as const, clamp: null } : {}),
    ...(aggregation === null ? {} : { aggregation }),
  };
}

/** Whether a recorded key shaped this resolution (false: listed, but it changed nothing here). */
function settingEffective(
  key: string,
  x: {
    readonly c: MergedConfig;
    readonly era: VerlEra;
    readonly useKl: boolean;
    readonly lossMode: string;
    readonly policyMode: string;
    readonly split: boolean;
    /** Whether the micro-batch rows come from the global ppo_micro_batch_size. */
    readonly fromGlobal: boolean;
    readonly rollout: ReadonlySet<string>;
  },
): boolean {
  if (key.endsWith("kl_loss_coef") || key.endsWith("kl_loss_type")) return x.useKl;
  if (key.endsWith("tau_pos") || key.endsWith("tau_neg")) return x.lossMode === "sapo";
  if (key.endsWith("dro_beta")) return x.lossMode === "dro";
  if (key.endsWith("loss_scale_factor"))
    return x.era.engine && x.policyMode === "seq-mean-token-sum-norm";
  if (
    key.startsWith("algorithm.rollout_correction.") ||
    key === "actor_rollout_ref.rollout.calculate_log_probs"
  )
    return x.rollout.has(key);
  if (key === `${A}ppo_micro_batch_size_per_gpu`) return x.split && !x.fromGlobal;
  // The global size and what divides it (n_gpus, the sequence-parallel size), where converted.
  if (
    key === `${A}ppo_micro_batch_size` ||
    key === `${A}ulysses_sequence_parallel_size` ||
    key === "trainer.n_gpus_per_node" ||
    key === "trainer.nnodes"
  )
    return x.split && x.fromGlobal;
  if (key.endsWith("use_dynamic_bsz")) return !x.era.engine;
  if (key.endsWith("ppo_epochs")) return x.era.onPolicyShortcut;
  if (key === `${A}clip_ratio`)
    return x.c.raw(`${A}clip_ratio_low`) === null || x.c.raw(`${A}clip_ratio_high`) === null;
  if (key.endsWith("clip_ratio_c"))
    return x.lossMode === "vanilla" || x.lossMode.startsWith("dppo");
  return !(
    key.startsWith("algorithm.") ||
    key.startsWith("trainer.") ||
    key === "data.train_batch_size" ||
    key.endsWith("ppo_mini_batch_size") ||
    key === "actor_rollout_ref.rollout.n"
  );
}

/**
 * loss_agg_mode and loss_mode, refusing the modes that select tokens by covariance (clip_cov,
 * kl_cov) and the bypass losses verl registers (bypass_mode from v0.7.0, rollout_correction at
 * v0.6.1: REINFORCE or PPO-clip with IS weights and rejection of the current policy against the
 * rollout, the rejection on the policy term only), which polgrad does not model yet.
 */
function verlModes(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  era: VerlEra,
): { mode: string; lossMode: string } {
  const mode = c.str(`${A}loss_agg_mode`, era.aggModes);
  const bypassModes = atOrAfter(r, "v0.7.0")
    ? ["bypass_mode"]
    : atOrAfter(r, "v0.6.1")
      ? ["rollout_correction"]
      : [];
  const lossMode = c.str(`${A}policy_loss.loss_mode`, [
    ...era.lossModes,
    "clip_cov",
    "kl_cov",
    ...bypassModes,
  ]);
  if (bypassModes.includes(lossMode))
    throw bad(
      fn,
      `${A}policy_loss.loss_mode`,
      `a loss mode polgrad models (${era.lossModes.join(", ")}); ${lossMode} is verl's bypass loss (rollout_correction.loss_type ppo_clip or reinforce, with IS weights and rejection of the current policy against the rollout, the rejection on the policy term only), which polgrad does not model yet`,
      lossMode,
    );
  if (lossMode === "clip_cov" || lossMode === "kl_cov")
    throw bad(
      fn,
      `${A}policy_loss.loss_mode`,
      `a loss mode polgrad models (${era.lossModes.join(", ")}); ${lossMode} selects tokens by a covariance ranking, which is not in the algebra`,
      lossMode,
    );
  return { mode, lossMode };
}

/** The clip's ε_low and ε_high (clip_ratio where null, recorded as derived) and the dual clip's c. */
function verlClip(c: MergedConfig): { lo: number; hi: number; cDual: number } {
  const eps = c.num(`${A}clip_ratio`, { min: 0 });
  const lo = c.num(`${A}clip_ratio_low`, { nullable: true, min: 0 }) ?? eps;
  const hi = c.num(`${A}clip_ratio_high`, { nullable: true, min: 0 }) ?? eps;
  if (c.raw(`${A}clip_ratio_low`) === null)
    c.derive(`${A}clip_ratio_low`, eps, "derived", "clip_ratio when null");
  if (c.raw(`${A}clip_ratio_high`) === null)
    c.derive(`${A}clip_ratio_high`, eps, "derived", "clip_ratio when null");
  const cDual = c.num(`${A}clip_ratio_c`, { gt: 1 });
  return { lo, hi, cDual };
}

/** loss_scale_factor (null: unset), with a warning where the old actor never passes it on. */
function verlLossScaleFactor(
  c: MergedConfig,
  r: ReleaseRef,
  era: VerlEra,
  warnings: ResolutionWarning[],
): number | null {
  const lsf = c.has(`${A}loss_scale_factor`)
    ? c.num(`${A}loss_scale_factor`, { nullable: true, gt: 0 })
    : null;
  if (!era.engine && c.isUser(`${A}loss_scale_factor`))
    warnings.push({
      code: "verl-loss-scale-factor-inert",
      message: `${A}loss_scale_factor is set, but at ${r.ref} the old actor never passes it to agg_loss: seq-mean-token-sum-norm divides by the padded width T whatever it says (the engine, v0.8.0+, uses it)`,
    });
  return lsf;
}

/** The settings resolveVerl reads, in the order it reads them (a bad value fails at its first). */
interface VerlSettings {
  readonly mode: string;
  readonly lossMode: string;
  readonly lo: number;
  readonly hi: number;
  readonly cDual: number;
  readonly lsf: number | null;
  readonly useKl: boolean;
  readonly entCoef: number;
  readonly mini: number;
  readonly n: number;
  readonly epochs: number;
  /** Rows per micro-batch per GPU (null: unset). */
  readonly micro: number | null;
  /** The global ppo_micro_batch_size it was converted from (null: given per GPU, or unset). */
  readonly globalMicro: number | null;
  /** How the global size was converted, for the plan (`16 // (8 // 1) = 2`). */
  readonly microFrom: string | null;
  readonly dynamic: boolean;
  readonly trainBatch: number;
}

/** Every loss and batch setting of the merged config, validated, in resolveVerl's order. */
function verlSettings(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  era: VerlEra,
  warnings: ResolutionWarning[],
): VerlSettings {
  const { mode, lossMode } = verlModes(fn, c, r, era);
  const { lo, hi, cDual } = verlClip(c);
  const lsf = verlLossScaleFactor(c, r, era, warnings);
  const dynamic = c.bool(`${A}use_dynamic_bsz`);
  const { micro, globalMicro, microFrom } = verlMicro(fn, c, r, era, dynamic, warnings);
  return {
    mode,
    lossMode,
    lo,
    hi,
    cDual,
    lsf,
    useKl: c.bool(`${A}use_kl_loss`),
    entCoef: c.num(`${A}entropy_coeff`),
    mini: c.int(`${A}ppo_mini_batch_size`),
    n: c.int("actor_rollout_ref.rollout.n"),
    epochs: c.int(`${A}ppo_epochs`),
    micro,
    globalMicro,
    microFrom,
    dynamic,
    trainBatch: c.int("data.train_batch_size"),
  };
}

/**
 * The rows per micro-batch on one GPU, validated as verl validates them (v0.4.1–v0.5.0
 * ray_trainer's _validate_config, v0.6.0+ ActorConfig's __post_init__ and validate; skipped with
 * use_dynamic_bsz): `ppo_micro_batch_size_per_gpu`, or the deprecated global
 * `ppo_micro_batch_size` converted as the FSDP worker converts it (fsdp_workers.py, "normalize
 * config"): global // (n_gpus // ulysses_sequence_parallel_size), n_gpus = n_gpus_per_node × nnodes.
 * Both set is verl's ValueError; neither set is verl's too, evaluated as one micro-batch with the
 * warning `verl-micro-batch-unset`. The global size alone works up to v0.5.0: from v0.6.0 the old
 * actor's worker refuses it (its ActorConfig sees both keys after the conversion); the engine
 * (v0.8.0+) does not convert it, and the split does not change its loss.
 */
function verlMicro(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  era: VerlEra,
  dynamic: boolean,
  warnings: ResolutionWarning[],
): { micro: number | null; globalMicro: number | null; microFrom: string | null } {
  const G = `${A}ppo_micro_batch_size`;
  const perGpu = c.int(`${A}ppo_micro_batch_size_per_gpu`, { nullable: true });
  const global = c.has(G) ? c.int(G, { nullable: true }) : null;
  if (dynamic) return { micro: perGpu, globalMicro: null, microFrom: null };
  if (global !== null && perGpu !== null)
    throw bad(
      fn,
      G,
      "null when ppo_micro_batch_size_per_gpu is set (verl raises ValueError: \"You have set both 'actor.ppo_micro_batch_size' AND 'actor.ppo_micro_batch_size_per_gpu'. Please remove 'actor.ppo_micro_batch_size'\")",
      global,
    );
  if (global === null) {
    if (perGpu === null)
      warnings.push({
        code: "verl-micro-batch-unset",
        message: `neither ${A}ppo_micro_batch_size_per_gpu nor the global ppo_micro_batch_size is set with use_dynamic_bsz off, which verl refuses ("Please set at least one of 'actor.ppo_micro_batch_size' or 'actor.ppo_micro_batch_size_per_gpu'"); evaluated as one micro-batch`,
      });
    return { micro: perGpu, globalMicro: null, microFrom: null };
  }
  // v0.6.0–v0.7.1: the FSDP worker converts it, then rebuilds ActorConfig from its converted copy,
  // where both micro keys are set, and ActorConfig refuses that (fsdp_workers.py init_model).
  if (!era.engine && atOrAfter(r, "v0.6.0"))
    throw bad(
      fn,
      G,
      "null at this release (the FSDP worker converts it into ppo_micro_batch_size_per_gpu, then builds the actor's ActorConfig from that copy, with both keys set, and ActorConfig raises ValueError \"You have set both 'actor.ppo_micro_batch_size' AND 'actor.ppo_micro_batch_size_per_gpu'\"); set ppo_micro_batch_size_per_gpu",
      global,
    );
  const mini = c.int(`${A}ppo_mini_batch_size`);
  const sp = c.int(`${A}ulysses_sequence_parallel_size`);
  const nGpus = c.int("trainer.n_gpus_per_node") * c.int("trainer.nnodes");
  if (mini % global !== 0)
    throw bad(
      fn,
      G,
      `a divisor of ppo_mini_batch_size (${mini}) (verl: "ppo_mini_batch_size must be divisible by ppo_micro_batch_size")`,
      global,
    );
  if (global * sp < nGpus)
    throw bad(
      fn,
      G,
      `at least n_gpus / ulysses_sequence_parallel_size = ${nGpus} / ${sp} (verl: "ppo_micro_batch_size * ulysses_sequence_parallel_size must be >= n_gpus")`,
      global,
    );
  const ranks = Math.floor(nGpus / sp);
  const micro = Math.floor(global / ranks);
  return { micro, globalMicro: global, microFrom: `${global} // (${nGpus} // ${sp}) = ${micro}` };
}

/** The aggregation of the policy term (aggregationOf's answer). */
type VerlAggregation = ReturnType<typeof aggregationOf>;

/**
 * The loss terms (policy, its aggregation, KL, entropy bonus) before the rollout correction, and
 * the mode the policy term aggregates with (loss_mode's fixed one, else loss_agg_mode).
 */
function verlTerms(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  era: VerlEra,
  s: VerlSettings,
  warnings: ResolutionWarning[],
): { config: PolicyLossConfig; policyMode: string; agg: VerlAggregation } {
  const { policy, fixedMode } = verlPolicy(fn, c, era, s.lossMode, s.lo, s.hi, s.cDual);
  if (fixedMode !== null && c.isUser(`${A}loss_agg_mode`) && s.mode !== fixedMode)
    warnings.push({
      code: "verl-loss-mode-ignores-aggregation",
      message: `loss_mode ${s.lossMode} aggregates with ${fixedMode} whatever loss_agg_mode says (${s.mode} is ignored for the policy term)`,
      deviation: "verl-gspo-ignores-aggregation",
    });
  const policyMode = fixedMode ?? s.mode;
  const agg = aggregationOf(fn, era, policyMode, s.lsf, s.lossMode === "geo_mean");

  // ppo_loss (engine) and update_policy (old actor) aggregate the KL and entropy terms with
  // config.loss_agg_mode, whatever aggregation the loss mode fixes for the policy term (gspo,
  // sapo) or its plain mean (geo_mean): recorded in verl-releases.json (issue 33).
  // A seq-mean-token-sum-norm term divides by loss_scale_factor (engine) or the padded width T.
  const own = policyMode !== s.mode || s.lossMode === "geo_mean";
  const term = own ? aggregationOf(fn, era, s.mode, s.lsf, false) : agg;
  const termAgg = term.cfg.aggregation;
  const termNorm = own && term.cfg.normLen != null ? { normLen: term.cfg.normLen } : {};
  const kl = s.useKl ? verlKl(fn, c, r, era, own ? termAgg : null) : null;
  const entropyBonus: EntropyBonusConfig | null =
    s.entCoef === 0 ? null : { coef: s.entCoef, aggregation: termAgg, ...termNorm };
  const config: PolicyLossConfig = {
    ...policy,
    ...agg.cfg,
    kl: kl === null ? null : { ...kl, ...termNorm },
    ...(entropyBonus === null ? {} : { entropyBonus }),
  };
  // T from the batch's width reaches the terms through the config's normLen, which they inherit.
  const width = agg.normLenFromWidth === true || (own && term.normLenFromWidth === true);
  return { config, policyMode, agg: width ? { ...agg, normLenFromWidth: true } : agg };
}

/**
 * Whether the old actor splits the mini-batch into micro-batches, whether the step is on-policy,
 * and the rollout correction (refused where its batch normalisation would meet the split).
 */
function verlBatching(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  era: VerlEra,
  s: VerlSettings,
  warnings: ResolutionWarning[],
): { split: boolean; onPolicy: boolean; rollout: VerlRollout } {
  // The old actor's micro-batches (the engine normalises each by global counts: one pass equals them all).
  const split = !era.engine && s.micro !== null && !s.dynamic;
  if (!era.engine && s.dynamic)
    warnings.push({
      code: "verl-dynamic-bsz-packing",
      message:
        "use_dynamic_bsz packs micro-batches by a token budget: each micro-batch's loss is weighted by its rows / B, and token-mean then depends on the packing, which a batch file does not record; evaluated as one micro-batch",
    });
  const onPolicy = era.onPolicyShortcut && s.trainBatch === s.mini && s.epochs === 1;
  const rollout = rolloutCorrectionOf(fn, c, r, warnings);
  if (rollout.isCorrection?.normalize === true && split && (s.micro as number) > 0)
    throw bad(
      fn,
      "algorithm.rollout_correction.rollout_is_batch_normalize",
      "false when the old actor splits the mini-batch into micro-batches here (verl normalises the IS weights over the whole batch before the split; polgrad would normalise each micro-batch)",
      true,
    );
  return { split, onPolicy, rollout };
}

/** The loss plan: the config, its micro-batches and scaling, global normalisers, what a batch stands for. */
function verlPlan(
  config: PolicyLossConfig,
  era: VerlEra,
  s: VerlSettings,
  agg: VerlAggregation,
  split: boolean,
  onPolicy: boolean,
  bypass: boolean,
): LossPlan {
  const { micro } = s;
  // The old actor's on-policy shortcut (old := log_prob.detach()) wins over bypass's old := rollout.
  const fromRollout = bypass && !onPolicy;
  return {
    config,
    microBatches: split ? { rows: micro as number } : 1,
    divideBy: split ? "micro_batches" : 1,
    ...(fromRollout ? { oldStream: "rollout" as const } : {}),
    onPolicy,
    ...(agg.global === null || agg.global === undefined ? {} : { global: agg.global }),
    ...(agg.normLenFromWidth === true ? { normLenFromWidth: true } : {}),
    klInObjective: true,
    batchMeaning: `${
      era.engine
        ? `one whole mini-batch on one rank (dp_size 1, global_batch_size = B rows, emptied rows counted; ppo_mini_batch_size × rollout.n = ${s.mini * s.n} in the config), normalised by its global counts`
        : `one whole mini-batch on one rank${micro === null ? ", one micro-batch (ppo_micro_batch_size_per_gpu unset)" : `, split into micro-batches of ${microText(s)} rows, each micro-batch's loss on its own statistics times 1/K`}`
    }${fromRollout ? "; old_log_probs are the rollout engine's (bypass_mode)" : ""}`,
  };
}

/** Where the rows per micro-batch come from, for the plan's text. */
function microText(s: VerlSettings): string {
  return s.globalMicro === null
    ? `ppo_micro_batch_size_per_gpu = ${s.micro}`
    : `ppo_micro_batch_size // (n_gpus // ulysses_sequence_parallel_size) = ${s.microFrom}`;
}

/**
 * Resolve a verl config against a release.
 *
 * @param r - The release (findRelease("verl@…")).
 * @param parsed - The parsed config (dotted Hydra paths).
 * @returns The resolution.
 * @throws {ConfigError} E_CONFIG for an unknown loss key (did-you-mean), a bad value, or a loss
 *   mode polgrad does not model (clip_cov, kl_cov: covariance-selected tokens).
 * @derivation docs/conformance/explain.md#verl
 * @enforcedBy test/conformance/frameworkConfig/pinReplay.test.ts > verl releases > conformance: the recorded token-mean, cispo and k-free fixtures at 1dda039b replay through resolved overrides
 * @since 0.2.0
 */
export function resolveVerl(r: ReleaseRef, parsed: ParsedFrameworkConfig): FrameworkResolution {
  const fn = r.ref;
  const era = verlEra(r);
  const rk = keysOf(r.release);
  const { merged: c, ignored } = mergeConfig(fn, r.ref, parsed, rk, {
    lossKeys: LOSS_KEYS,
    anyReleaseLossKeys: anyReleaseKeys(r.facts, LOSS_KEYS),
    worldKeys: NO_WORLD,
  });
  const warnings: ResolutionWarning[] = [];
  const s = verlSettings(fn, c, r, era, warnings);
  const terms = verlTerms(fn, c, r, era, s, warnings);
  const { split, onPolicy, rollout } = verlBatching(fn, c, r, era, s, warnings);
  const config: PolicyLossConfig = {
    ...terms.config,
    ...(rollout.isCorrection === null ? {} : { isCorrection: rollout.isCorrection }),
    ...(rollout.rejection === null ? {} : { rejection: rollout.rejection }),
  };
  const plan = verlPlan(config, era, s, terms.agg, split, onPolicy, rollout.bypass === true);
  const { useKl, lossMode } = s;
  const { policyMode } = terms;
  const fromGlobal = s.globalMicro !== null;
  const ctx = {
    c,
    era,
    useKl,
    lossMode,
    policyMode,
    split,
    fromGlobal,
    rollout: rollout.effective,
  };
  const settings: ResolvedSetting[] = Object.keys(ROLE)
    .filter((key) => c.has(key))
    .map((key) => c.setting(key, ROLE[key] ?? "", settingEffective(key, ctx)));
  return {
    framework: "verl",
    ...releaseHeader(r),
    settings,
    ignored,
    skipped: parsed.skipped,
    plan,
    algebra: describeVerl(config, era, lossMode, policyMode, s.mode, onPolicy),
    warnings,
  };
}

function aggregationOf(
  fn: string,
  era: VerlEra,
  mode: string,
  lsf: number | null,
  plainMean: boolean,
): {
  cfg: Pick<PolicyLossConfig, "aggregation" | "normLen" | "emptyRows">;
  global: LossPlan["global"] | null;
  normLenFromWidth?: true;
} {
  // geo_mean takes a plain mean over the rows (every row), no global normaliser.
  if (plainMean)
    return { cfg: { aggregation: "seq_mean_token_mean", emptyRows: "count" }, global: null };
  const rowsGlobal: LossPlan["global"] = (w) => ({ rows: w.B });
  switch (mode) {
    case "token-mean":
      return { cfg: { aggregation: "token_mean", emptyRows: "count" }, global: null };
    case "token-sum":
      return { cfg: { aggregation: "token_sum", emptyRows: "count" }, global: null };
    case "seq-mean-token-sum":
      return era.engine
        ? { cfg: { aggregation: "seq_mean_token_sum", emptyRows: "drop" }, global: rowsGlobal }
        : {
            cfg: {
              aggregation: "seq_mean_token_sum",
              emptyRows: era.dropsEmptyRows ? "drop" : "count",
            },
            global: null,
          };
    case "seq-mean-token-mean":
      return era.engine
        ? { cfg: { aggregation: "seq_mean_token_mean", emptyRows: "drop" }, global: rowsGlobal }
        : {
            cfg: {
              aggregation: "seq_mean_token_mean",
              emptyRows: era.dropsEmptyRows ? "drop" : "reject",
            },
            global: null,
          };
    case "seq-mean-token-sum-norm":
      if (era.sumNormNoRows)
        throw new ConfigError(
          fn,
          `${A}loss_agg_mode`,
          `${fn}: ${A}loss_agg_mode must be a mode polgrad resolves at this release; got "seq-mean-token-sum-norm" (before v0.7.1 it is ΣΣ m·ℓ / T with no row division, not yet in the resolver)`,
        );
      // The engine divides by loss_scale_factor (null: the padded width T); the old actor never
      // passes loss_scale_factor to agg_loss, so there it is always T.
      return era.engine && lsf !== null
        ? {
            cfg: { aggregation: "token_sum_norm", normLen: lsf, emptyRows: "drop" },
            global: rowsGlobal,
          }
        : {
            cfg: { aggregation: "token_sum_norm", emptyRows: "drop" },
            global: era.engine ? rowsGlobal : null,
            normLenFromWidth: true,
          };
    default:
      throw new ConfigError(
        fn,
        `${A}loss_agg_mode`,
        `${fn}: unknown loss_agg_mode ${fmtValue(mode)}`,
      );
  }
}

function describeVerl(
  cfg: PolicyLossConfig,
  era: VerlEra,
  lossMode: string,
  policyMode: string,
  mode: string,
  onPolicy: boolean,
): { component: string; text: string }[] {
  const clip = cfg.clip;
  const ratio = onPolicy
    ? "r = 1: old_log_prob := log_prob.detach() (one mini-batch per step, one epoch)"
    : cfg.ratio === "token"
      ? `r = exp(clamp(lp − old, ±20)) per token${lossMode === "gpg" ? " (unused: gpg is −A·lp)" : ""}`
      : cfg.ratio === "sequence_token"
        ? "GSPO-token: log s = lp − sg[lp] + sg[mean_t m·(lp − old)], clamped at ≤ 10"
        : "the geometric mean of the token ratios, each log-ratio clipped on its advantage's side";
  const surrogate: Record<string, string> = {
    vanilla: `ℓ = max(−A·r, −A·clamp(r, 1 − ${clip?.epsLow}, 1 + ${clip?.epsHigh})), for A < 0 min(−${clip?.ratioCap}·A, ℓ) (dual clip, always on)`,
    gspo: `ℓ = max(−A·s, −A·clamp(s, 1 − ${clip?.epsLow}, 1 + ${clip?.epsHigh}))`,
    cispo: `ℓ = −sg[clamp(r, 1 − ${clip?.epsLow}, 1 + ${clip?.epsHigh})]·A·lp (both sides clipped)`,
    sapo: `ℓ = −σ(τ(r − 1))·4/τ·A, τ+ = ${cfg.sapo?.tauPos}, τ− = ${cfg.sapo?.tauNeg}`,
    gpg: "ℓ = −A·lp",
    geo_mean: "ℓ = −A·(geometric-mean ratio)",
    dppo_tv: "DPPO (total variation)",
    dppo_kl: "DPPO (binary KL)",
    dro: `DRO, β = ${cfg.dro?.beta}`,
  };
  const aggText: Record<string, string> = {
    token_mean: era.engine
      ? "Σ m·ℓ / N (the mini-batch's global token count)"
      : "Σ m·ℓ / Σ m per micro-batch",
    token_sum: "Σ m·ℓ · dp_size",
    seq_mean_token_sum: era.engine
      ? "Σ_b Σ_t m·ℓ / global_batch_size (empty rows counted in B)"
      : "mean over rows of Σ_t m·ℓ",
    seq_mean_token_mean:
      lossMode === "geo_mean"
        ? "plain mean over the rows (no global normaliser)"
        : era.engine
          ? "Σ_b (Σ_t m·ℓ / L_b) / global_batch_size (empty rows counted in B)"
          : "mean over rows of Σ_t m·ℓ / L_b",
    token_sum_norm: `Σ m·ℓ / (global_batch_size · ${cfg.normLen ?? "T"})`,
  };
  const out = [
    { component: "ratio", text: ratio },
    { component: "surrogate", text: surrogate[lossMode] ?? lossMode },
    {
      component: "aggregation",
      text: `${policyMode}${policyMode !== mode ? ` (loss_mode ${lossMode} ignores loss_agg_mode ${mode})` : ""}: ${aggText[cfg.aggregation] ?? cfg.aggregation}`,
    },
    {
      component: "kl",
      text:
        cfg.kl == null
          ? "none (use_kl_loss false; KL in the reward if algorithm.use_kl_in_reward)"
          : `+ ${cfg.kl.coef}·agg(${cfg.kl.kind}${cfg.kl.clamp == null ? "" : ", δ clamped ±20, value ±10"}${cfg.kl.gradient === "straight_through" ? ", straight-through gradient" : ""}) with loss_agg_mode's aggregation${cfg.kl.aggregation == null ? "" : ` (${cfg.kl.aggregation}, not the policy term's)`}`,
    },
    {
      component: "entropy_bonus",
      text: cfg.entropyBonus == null ? "none" : `− ${cfg.entropyBonus.coef}·agg(entropy)`,
    },
    {
      component: "advantage",
      text: "from the batch (verl: algorithm.adv_estimator; not recomputed here)",
    },
  ];
  return out;
}

const RC = "algorithm.rollout_correction.";
const RS_OPTIONS: ReadonlySet<string> = new Set([
  "token_k1",
  "token_k2",
  "token_k3",
  "seq_sum_k1",
  "seq_sum_k2",
  "seq_sum_k3",
  "seq_mean_k1",
  "seq_mean_k2",
  "seq_mean_k3",
  "seq_max_k2",
  "seq_max_k3",
]);

/** A positive float as Python's float() reads a threshold string, or NaN. */
function positive(text: string): number {
  const t = text.trim();
  const v = t === "" ? Number.NaN : Number(t);
  return Number.isFinite(v) && v > 0 ? v : Number.NaN;
}

/** A comma-separated list's trimmed, non-empty items. */
function commaList(text: string): string[] {
  return text
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
}

/** The rollout correction a config asks for (IS level, rejection spec, the key asking); null: none. */
function rolloutAsked(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
): { level: ISCorrectionConfig["level"] | null; rs: RecordedValue | null; key: string } | null {
  const level = c.has(`${RC}rollout_is`)
    ? c.str(`${RC}rollout_is`, ["token", "sequence"] as const, { nullable: true })
    : null;
  const rs = c.has(`${RC}rollout_rs`) ? (c.raw(`${RC}rollout_rs`) ?? null) : null;
  if (level === null && rs === null) return null;
  const key = level !== null ? `${RC}rollout_is` : `${RC}rollout_rs`;
  if (!atOrAfter(r, "v0.7.1"))
    throw bad(
      fn,
      key,
      "null at this release (before v0.7.1 the rollout correction has other rules: rollout_rs_threshold_lower, rollout_token_veto_threshold; not resolved)",
      level ?? rs,
    );
  return { level, rs, key };
}

/** rollout_is_threshold's bounds: a number caps; v0.8.0+ also "upper" or "lower_upper" (NaN: bad). */
function isBounds(t: RecordedValue, r: ReleaseRef): { upper: number; lower: number | null } {
  if (typeof t === "number") return { upper: t > 0 ? t : Number.NaN, lower: null };
  if (typeof t !== "string" || !atOrAfter(r, "v0.8.0")) return { upper: Number.NaN, lower: null };
  const i = t.indexOf("_");
  if (i < 0) return { upper: positive(t), lower: null };
  const lower = positive(t.slice(0, i));
  const upper = positive(t.slice(i + 1));
  return { upper: lower <= upper ? upper : Number.NaN, lower };
}

/** The IS weights of rollout_is (null: no threshold, so none), marking the keys that shaped them. */
function rolloutIsOf(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  level: ISCorrectionConfig["level"],
  warnings: ResolutionWarning[],
  effective: Set<string>,
): ISCorrectionConfig | null {
  const tk = `${RC}rollout_is_threshold`;
  const t = c.raw(tk) ?? null;
  if (t === null) {
    warnings.push({
      code: "verl-rollout-is-no-threshold",
      message: `${RC}rollout_is is ${level} but rollout_is_threshold is null: verl computes no IS weights`,
    });
    return null;
  }
  const { upper, lower } = isBounds(t, r);
  if (!Number.isFinite(upper) || (lower !== null && !Number.isFinite(lower)))
    throw bad(
      fn,
      tk,
      atOrAfter(r, "v0.8.0")
        ? 'a number > 0, or a "lower_upper" string with 0 < lower ≤ upper'
        : "a number > 0",
      t,
    );
  const nk = `${RC}rollout_is_batch_normalize`;
  const normalize = c.has(nk) && c.bool(nk);
  for (const k of ["rollout_is", "rollout_is_threshold", "rollout_is_batch_normalize"])
    effective.add(`${RC}${k}`);
  return {
    level,
    cap: upper,
    lower,
    mode: lower === null ? "truncate" : "mask",
    logClamp: 20,
    ...(normalize ? { normalize: true } : {}),
  };
}

/** rollout_rs's options (the rejection statistics), refusing an empty list or an unknown option. */
function rsOptions(fn: string, rs: RecordedValue): string[] {
  const options = typeof rs === "string" ? commaList(rs) : [];
  const unknown = options.filter((o) => !RS_OPTIONS.has(o));
  if (options.length === 0 || unknown.length > 0)
    throw bad(
      fn,
      `${RC}rollout_rs`,
      `a comma-separated list of ${[...RS_OPTIONS].join(", ")}${unknown.length > 0 ? ` (unknown: ${unknown.join(", ")})` : ""}`,
      rs,
    );
  return options;
}

/** rollout_rs_threshold's items: a number is one, a string a comma-separated list (else none). */
function thresholdTexts(spec: RecordedValue): string[] {
  if (typeof spec === "number") return [String(spec)];
  if (typeof spec === "string") return commaList(spec);
  return [];
}

/** rollout_rs_threshold's bound text for each option (one for all, or one per option). */
function rsThresholds(fn: string, c: MergedConfig, options: readonly string[]): string[] {
  const tk = `${RC}rollout_rs_threshold`;
  const spec = c.raw(tk) ?? null;
  if (spec === null) throw bad(fn, tk, "set when rollout_rs is set (verl raises ValueError)", null);
  const raw = thresholdTexts(spec);
  if (raw.length === 0 || (raw.length !== 1 && raw.length !== options.length))
    throw bad(
      fn,
      tk,
      `one threshold for every option or exactly ${options.length} (one per rollout_rs option)`,
      spec,
    );
  return raw.length === 1 ? options.map(() => raw[0] as string) : raw;
}

/** One rejection rule: option o's statistic and estimator, bounded by its threshold text s. */
function rejectionRule(fn: string, o: string, s: string): RejectionRule {
  const tk = `${RC}rollout_rs_threshold`;
  const estimator = o.slice(-2) as "k1" | "k2" | "k3";
  const statistic = o.slice(0, -3) as RejectionRule["statistic"];
  if (estimator === "k1") {
    const i = s.indexOf("_");
    const upper = positive(i < 0 ? s : s.slice(i + 1));
    const lower = i < 0 ? 1 / upper : positive(s.slice(0, i));
    if (!Number.isFinite(upper) || !Number.isFinite(lower))
      throw bad(fn, tk, `positive bounds for ${o} ("lower_upper" or one upper u: [1/u, u])`, s);
    return { statistic, estimator, lower, upper, logClamp: 20 };
  }
  const upper = s.includes("_") ? Number.NaN : positive(s);
  if (!Number.isFinite(upper)) throw bad(fn, tk, `one positive upper bound for ${o} (no "_")`, s);
  return { statistic, estimator, upper, logClamp: 20 };
}

/** The rejection rules of rollout_rs at rollout_rs_threshold, marking the keys that shaped them. */
function rolloutRejectionOf(
  fn: string,
  c: MergedConfig,
  rs: RecordedValue,
  effective: Set<string>,
): RejectionRule[] {
  const options = rsOptions(fn, rs);
  const specs = rsThresholds(fn, c, options);
  const rejection = options.map((o, j) => rejectionRule(fn, o, specs[j] as string));
  effective.add(`${RC}rollout_rs`).add(`${RC}rollout_rs_threshold`);
  return rejection;
}

/** The rollout correction's IS weights and rejection rules, and the keys that shaped them. */
interface VerlRollout {
  readonly isCorrection: ISCorrectionConfig | null;
  readonly rejection: RejectionRule[] | null;
  readonly effective: ReadonlySet<string>;
  /** bypass_mode: the batch's old_log_probs are the rollout's (the policy ratio is against them). */
  readonly bypass?: true;
}

/**
 * verl's bypass mode (`algorithm.rollout_correction.bypass_mode: true`, v0.6.1+), as the Ray
 * trainer runs it: ray_trainer.py sets the batch's old_log_probs := rollout_log_probs
 * (apply_bypass_mode; apply_rollout_correction at v0.6.1; a ValueError without rollout logprobs)
 * and skips compute_rollout_correction_and_add_to_batch. apply_bypass_mode also writes
 * `loss_mode = "bypass_mode"` (and the rollout_correction section) into the driver's
 * `actor.policy_loss`, but only after init_workers has created the actor workers with their own
 * copy of the config, so the workers compute their configured loss_mode: rollout_is, rollout_rs,
 * loss_type (use_policy_gradient at v0.6.1) do not reach the loss, which a warning says.
 */
function bypassOf(c: MergedConfig, fn: string, warnings: ResolutionWarning[]): VerlRollout {
  const clp = "actor_rollout_ref.rollout.calculate_log_probs";
  if (!c.bool(clp))
    throw bad(
      fn,
      clp,
      `true when ${RC}bypass_mode is true (apply_bypass_mode raises ValueError: "bypass_mode=True requires rollout_log_probs in batch")`,
      c.raw(clp) ?? null,
    );
  const unread = [
    ["rollout_is", null],
    ["rollout_rs", null],
    ["loss_type", "ppo_clip"],
    ["use_policy_gradient", false],
  ]
    .map(([k, none]) => [`${RC}${k}`, none] as const)
    .filter(([k, none]) => c.has(k) && c.raw(k) !== none && c.raw(k) !== undefined)
    .map(([k]) => `${k} = ${fmtValue(c.raw(k) ?? null)}`);
  const lossMode = c.raw(`${A}policy_loss.loss_mode`);
  warnings.push({
    code: "verl-bypass-correction-unread",
    message: `bypass_mode: the trainer takes old_log_probs from the rollout engine and skips the rollout correction; apply_bypass_mode sets loss_mode "bypass_mode" in the driver's copy of actor.policy_loss after the actor workers were created with theirs, so they compute loss_mode ${fmtValue(lossMode ?? null)} against the rollout's logprobs${unread.length > 0 ? `, and ${unread.join(", ")} do not reach the loss` : ""}`,
  });
  return {
    isCorrection: null,
    rejection: null,
    effective: new Set([`${RC}bypass_mode`, clp]),
    bypass: true,
  };
}

/**
 * verl's rollout correction (algorithm.rollout_correction, v0.7.1+), computed by the trainer once
 * for the whole batch before the actor update (rollout_corr_helper.py): IS weights
 * exp(clamp(old − rollout, ±20)) per token, or exp(clamp(Σ_t, ±20)) per row, truncated at the
 * threshold (v0.8.0+: a `lower_upper` string masks outside [lower, upper] instead, IcePop), as
 * data; rejection rules `rollout_rs` take tokens or rows out of the mask.
 */
function rolloutCorrectionOf(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  warnings: ResolutionWarning[],
): VerlRollout {
  const none = { isCorrection: null, rejection: null, effective: new Set<string>() };
  if (c.has(`${RC}bypass_mode`) && c.bool(`${RC}bypass_mode`)) return bypassOf(c, fn, warnings);
  const asked = rolloutAsked(fn, c, r);
  if (asked === null) return none;
  const { level, rs, key } = asked;
  const clp = "actor_rollout_ref.rollout.calculate_log_probs";
  if (c.has(clp) && !c.bool(clp)) {
    warnings.push({
      code: "verl-rollout-correction-skipped",
      message: `${key} is set but ${clp} is false: the batch has no rollout_log_probs, and ray_trainer skips the rollout correction without a word (no IS weights, no rejection)`,
    });
    return { ...none, effective: new Set([clp]) };
  }
  const effective = new Set<string>([clp]);
  const isCorrection = level === null ? null : rolloutIsOf(fn, c, r, level, warnings, effective);
  if (rs === null) return { isCorrection, rejection: null, effective };
  // The kernel forms the IS weights on the mask before rejection, as verl does.
  const rejection = rolloutRejectionOf(fn, c, rs, effective);
  return { isCorrection, rejection, effective };
}
