/**
 * OpenRLHF's PPO command line (`openrlhf.cli.train_ppo_ray`, flags in the release's own spelling)
 * resolved against one recorded release into our algebra (docs/conformance/explain.md#openrlhf).
 * What a batch file stands for: one optimizer-step window on one rank (train_batch_size rows,
 * dp 1): from v0.10.4 the loss is the exact token mean (GSPO: sample mean) over the window; before,
 * each micro-batch of `micro_train_batch_size` rows is a mean of its own, and the window's loss is
 * the mean of the micro-batch means.
 */
import { overflowError } from "../../core/finite.js";
import { fmtValue, safeText } from "../../core/message.js";
import { twoSumError } from "../../core/sum.js";
import { ConfigError } from "../../errors.js";
import type { ISCorrectionConfig, PolicyLossConfig } from "../../losses/config.js";
import { openRlhfKlPoint } from "../frameworks/openrlhf.js";
import type { RecordedValue } from "../releases/types.js";
import { atOrAfter } from "./eras.js";
import type { ParsedFrameworkConfig } from "./parse.js";
import { anyReleaseKeys, keysOf, type ReleaseRef, releaseHeader } from "./releases.js";
import type {
  FrameworkResolution,
  LossPlan,
  PlanTerm,
  ResolutionWarning,
  ResolvedSetting,
} from "./resolution.js";
import { type MergedConfig, mergeConfig } from "./resolveShared.js";

/** Each concept's flag: the flat spelling (≤ v0.10.1) and the dotted one (v0.10.2+). */
const FLAGS: Readonly<
  Record<string, { readonly flat: string; readonly dotted: string; readonly role: string }>
> = {
  eps_clip: {
    flat: "--eps_clip",
    dotted: "--actor.eps_clip",
    role: "the clip ε (both sides unless eps_clip_low_high)",
  },
  eps_clip_low_high: {
    flat: "--eps_clip_low_high",
    dotted: "--actor.eps_clip_low_high",
    role: "ε_low ε_high of the clip",
  },
  dual_clip: {
    flat: "--dual_clip",
    dotted: "--actor.dual_clip",
    role: "the dual clip's c for A < 0 (None: off)",
  },
  policy_loss_type: {
    flat: "--policy_loss_type",
    dotted: "--actor.policy_loss_type",
    role: "ppo (token ratio) or gspo (sequence ratio, sample mean)",
  },
  use_kl_loss: {
    flat: "--use_kl_loss",
    dotted: "--algo.kl.use_loss",
    role: "KL to the reference in the loss (else in the reward)",
  },
  init_kl_coef: {
    flat: "--init_kl_coef",
    dotted: "--algo.kl.init_coef",
    role: "the KL coefficient kl_ctl",
  },
  kl_estimator: {
    flat: "--kl_estimator",
    dotted: "--algo.kl.estimator",
    role: "k1, k2 or k3 (float32)",
  },
  kl_target: {
    flat: "--kl_target",
    dotted: "--algo.kl.target",
    role: "adaptive KL controller target (None: fixed)",
  },
  entropy_coef: {
    flat: "--entropy_loss_coef",
    dotted: "--actor.entropy_coef",
    role: "entropy bonus coefficient (None: off)",
  },
  is_enable: {
    flat: "--enable_vllm_is_correction",
    dotted: "--algo.advantage.is_correction_enable",
    role: "vLLM importance-sampling correction",
  },
  is_threshold: {
    flat: "--vllm_is_truncated_threshold",
    dotted: "--algo.advantage.is_correction_threshold",
    role: "the IS correction's bounds",
  },
  is_type: {
    flat: "--vllm_is_correction_type",
    dotted: "--algo.advantage.is_correction_type",
    role: "tis (clamp), icepop (zero outside), seq-mask-tis (mask rows by the geometric mean)",
  },
  use_icepop: {
    flat: "--use_icepop",
    dotted: "--use_icepop",
    role: "IcePop: zero IS weights outside the bounds (v0.9.1–v0.9.2)",
  },
  micro_train_batch_size: {
    flat: "--micro_train_batch_size",
    dotted: "--train.micro_batch_size",
    role: "rows per micro-batch (a mean of its own before v0.10.4)",
  },
  train_batch_size: {
    flat: "--train_batch_size",
    dotted: "--train.batch_size",
    role: "rows per optimizer step (the window)",
  },
  dynamic_batch: {
    flat: "--use_dynamic_batch",
    dotted: "--train.dynamic_batch_enable",
    role: "token-budget micro-batches",
  },
  advantage_estimator: {
    flat: "--advantage_estimator",
    dotted: "--algo.advantage.estimator",
    role: "the advantage estimator (the batch carries its advantages)",
  },
  n_samples_per_prompt: {
    flat: "--n_samples_per_prompt",
    dotted: "--rollout.n_samples_per_prompt",
    role: "samples per prompt (the batch carries its advantages)",
  },
};

const CONCEPTS = Object.keys(FLAGS);
const ALL_FLAGS = new Set(
  CONCEPTS.flatMap((k) => [FLAGS[k]?.flat as string, FLAGS[k]?.dotted as string]),
);
const NO_WORLD: ReadonlySet<string> = new Set();

function bad(fn: string, key: string, rule: string, got: RecordedValue): ConfigError {
  return new ConfigError(fn, key, `${fn}: ${safeText(key)} must be ${rule}; got ${fmtValue(got)}`);
}

/** Whether a listed flag shaped the resolution (false: listed, but it changed nothing here). */
function conceptEffective(
  concept: string,
  x: {
    readonly pair: unknown;
    readonly useKl: boolean;
    readonly isCorrection: ISCorrectionConfig | null;
    readonly split: boolean;
  },
): boolean {
  switch (concept) {
    case "advantage_estimator":
    case "n_samples_per_prompt":
    case "train_batch_size":
    case "kl_target":
      return false;
    case "eps_clip":
      return x.pair === null || x.pair === undefined;
    case "init_kl_coef":
    case "kl_estimator":
      return x.useKl;
    case "is_threshold":
    case "is_type":
    case "use_icepop":
      return x.isCorrection !== null;
    case "micro_train_batch_size":
      return x.split;
    default:
      return true;
  }
}

/** The KL component in words: none (in the reward, or a zero coefficient), else the float32 term. */
function orlKlText(
  r: ReleaseRef,
  x: {
    readonly useKl: boolean;
    readonly klTerm: unknown;
    readonly klCoef: number;
    readonly klKind: string;
  },
): string {
  if (!x.useKl)
    return "none in the loss (in the reward: −kl_ctl·KL per token, reflected in the batch's advantages)";
  if (x.klTerm === null) return "init_kl_coef = 0: none";
  return `+ ${x.klCoef}·mean(${x.klKind}(lp − ref))${atOrAfter(r, "v0.8.6") ? " clamped to ±10" : ""}, in float32 (compute_approx_kl casts both streams), with the policy term's normaliser`;
}

/** The vLLM IS correction in words: its mode and bounds, and the geometric-mean row mask if any. */
function orlIsCorrectionText(isCorrection: ISCorrectionConfig): string {
  const { mode, lower, cap, rowMask } = isCorrection;
  const mask =
    rowMask == null
      ? ""
      : `, rows masked when their geometric-mean weight leaves [${rowMask.lower}, ${rowMask.cap}]`;
  return `vLLM IS weight exp(old − rollout), ${mode ?? "truncate"} to [${lower ?? "−"}, ${cap ?? "∞"}]${mask}, as data`;
}

/** The loss in words, component by component. */
function describeOpenRlhf(
  r: ReleaseRef,
  config: PolicyLossConfig,
  x: {
    readonly gspo: boolean;
    readonly isRolloutRatio: boolean;
    readonly lo: number;
    readonly hi: number;
    readonly dual: number | null;
    readonly sampleMean: boolean;
    readonly exactWindow: boolean;
    readonly dynamic: boolean;
    readonly useKl: boolean;
    readonly klTerm: unknown;
    readonly klCoef: number;
    readonly klKind: string;
    readonly isCorrection: ISCorrectionConfig | null;
  },
): FrameworkResolution["algebra"] {
  const at = (l: string) => atOrAfter(r, l);
  const { gspo, isRolloutRatio, lo, hi, dual, sampleMean, exactWindow, dynamic } = x;
  const { isCorrection } = x;
  return [
    {
      component: "ratio",
      text: gspo
        ? `s_b = exp(Σ_t m·(lp − ${isRolloutRatio ? "rollout" : "old"}) / L_b) (GSPO${isRolloutRatio ? ": with the IS correction the ratio is against the vLLM logprobs" : ""})`
        : `r = exp(${at("v0.10.3") ? "clamp(lp − old, ±20)" : "lp − old"}) per token`,
    },
    {
      component: "surrogate",
      text: `ℓ = −min(r·A, clamp(r, 1 − ${lo}, 1 + ${hi})·A)${dual === null ? "" : `, for A < 0 min(−${dual}·A, ℓ) (dual clip)`}`,
    },
    {
      component: "aggregation",
      text: `${sampleMean ? "mean over non-empty samples of Σ_t m·ℓ / L_b" : "Σ m·ℓ / Σ m"} ${exactWindow || dynamic ? "over the window" : "per micro-batch, then the mean of the micro-batch means"}`,
    },
    { component: "kl", text: orlKlText(r, x) },
    ...(isCorrection === null
      ? []
      : [{ component: "is_correction", text: orlIsCorrectionText(isCorrection) }]),
    {
      component: "entropy_bonus",
      text: config.entropyBonus == null ? "none" : `− ${config.entropyBonus.coef}·mean entropy`,
    },
    {
      component: "advantage",
      text: "from the batch (OpenRLHF: --advantage_estimator; not recomputed here)",
    },
  ];
}

/**
 * Resolve an OpenRLHF command line against a release.
 *
 * @param r - The release (findRelease("openrlhf@…")).
 * @param parsed - The parsed arguments (flags with their dashes).
 * @returns The resolution.
 * @throws {ConfigError} E_CONFIG for an unknown loss flag (did-you-mean), a bad value, or a setting
 *   this resolver does not model (the float32 KL loss: use the framework model `openrlhf@…:kl:<kind>`;
 *   dynamic batching before v0.10.3).
 * @derivation docs/conformance/explain.md#openrlhf
 * @enforcedBy test/conformance/frameworkConfig/pinReplay.test.ts > OpenRLHF releases > conformance: the recorded PolicyLoss fixtures replay through the resolved command lines
 * @since 0.2.0
 */
export function resolveOpenRlhf(r: ReleaseRef, parsed: ParsedFrameworkConfig): FrameworkResolution {
  const fn = r.ref;
  const at = (l: string) => atOrAfter(r, l);
  const rk = keysOf(r.release);
  const flag = (concept: string): string => {
    const f = FLAGS[concept] as { flat: string; dotted: string };
    return rk.has(f.dotted) ? f.dotted : f.flat;
  };
  const { merged: c, ignored } = mergeConfig(fn, r.ref, parsed, rk, {
    lossKeys: new Set(CONCEPTS.map(flag)),
    anyReleaseLossKeys: anyReleaseKeys(r.facts, ALL_FLAGS),
    worldKeys: NO_WORLD,
  });
  const has = (concept: string) => c.has(flag(concept));
  const warnings: ResolutionWarning[] = [];
  const x = orlReads(fn, c, r, flag, has);
  const { pair, useKl, isCorrection, gspo, isRolloutRatio, lo, hi, dual } = x;
  const { sampleMean, exactWindow, dynamic, klCoef, klKind } = x;
  const config = orlConfig(x, at);
  const { plan, split, klTerm } = orlPlan(config, x, at, warnings);
  const settings: ResolvedSetting[] = [];
  for (const concept of CONCEPTS) {
    const key = flag(concept);
    if (!c.has(key)) continue;
    const eff = conceptEffective(concept, { pair, useKl, isCorrection, split });
    settings.push(c.setting(key, (FLAGS[concept] as { role: string }).role, eff));
  }
  return {
    framework: "openrlhf",
    ...releaseHeader(r),
    settings,
    ignored,
    skipped: parsed.skipped,
    plan,
    algebra: describeOpenRlhf(r, config, {
      gspo,
      isRolloutRatio,
      lo,
      hi,
      dual,
      sampleMean,
      exactWindow,
      dynamic,
      useKl,
      klTerm,
      klCoef,
      klKind,
      isCorrection,
    }),
    warnings,
  };
}

/** The clip: ε (eps_clip), its ε_low ε_high pair (derived from ε when None), and the dual clip's c. */
function orlClip(
  fn: string,
  c: MergedConfig,
  flag: (concept: string) => string,
  has: (concept: string) => boolean,
): { eps: number; pair: RecordedValue | undefined; lo: number; hi: number; dual: number | null } {
  const eps = c.num(flag("eps_clip"), { min: 0 });
  const pair = has("eps_clip_low_high") ? c.raw(flag("eps_clip_low_high")) : null;
  let lo = eps;
  let hi = eps;
  if (pair !== null && pair !== undefined) {
    if (
      !Array.isArray(pair) ||
      pair.length !== 2 ||
      pair.some((x) => typeof x !== "number" || !(x >= 0))
    )
      throw bad(fn, flag("eps_clip_low_high"), "two numbers ≥ 0 (nargs=2: low high)", pair);
    [lo, hi] = pair as [number, number];
  } else if (has("eps_clip_low_high"))
    c.derive(flag("eps_clip_low_high"), [eps, eps], "derived", "(eps_clip, eps_clip) when None");
  const dual = has("dual_clip") ? c.num(flag("dual_clip"), { nullable: true, gt: 1 }) : null;
  return { eps, pair, lo, hi, dual };
}

/** The KL loss: whether it is on, its coefficient (finite in float32 when on) and its estimator. */
function orlKl(
  fn: string,
  c: MergedConfig,
  flag: (concept: string) => string,
  has: (concept: string) => boolean,
): { useKl: boolean; klCoef: number; klKind: "k1" | "k2" | "k3" } {
  const useKl = has("use_kl_loss") && c.bool(flag("use_kl_loss"));
  const klCoef = has("init_kl_coef") ? c.num(flag("init_kl_coef"), { min: 0 }) : 0;
  // kl_loss · kl_ctl is a float32 product upstream: a coefficient past float32's range is inf there.
  if (useKl && !Number.isFinite(Math.fround(klCoef)))
    throw bad(
      fn,
      flag("init_kl_coef"),
      "finite in float32 (|x| <= 3.4e38: OpenRLHF multiplies the KL loss by it in float32)",
      klCoef,
    );
  const klKind = has("kl_estimator")
    ? c.str(flag("kl_estimator"), ["k1", "k2", "k3"] as const)
    : "k1";
  return { useKl, klCoef, klKind };
}

/** The batching: dynamic batching (refused before v0.10.3), the micro-batch rows, the exact window. */
function orlBatching(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  flag: (concept: string) => string,
  has: (concept: string) => boolean,
): { dynamic: boolean; micro: number; exactWindow: boolean } {
  const at = (l: string) => atOrAfter(r, l);
  const dynamic = has("dynamic_batch") && c.bool(flag("dynamic_batch"));
  const micro = c.int(flag("micro_train_batch_size"));
  // The window: v0.10.4+ one exact mean over the optimizer step; before, a mean of micro-batch means.
  const exactWindow = at("v0.10.4");
  if (dynamic && !at("v0.10.3"))
    throw bad(
      fn,
      flag("dynamic_batch"),
      "off before v0.10.3 (each micro-batch is weighted by its share of the window's samples, a packing the batch file does not record)",
      true,
    );
  return { dynamic, micro, exactWindow };
}

/** What resolveOpenRlhf reads: the loss type, clip, dual clip, KL, entropy, micro-batching, IS. */
function orlReads(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  flag: (concept: string) => string,
  has: (concept: string) => boolean,
) {
  const at = (l: string) => atOrAfter(r, l);
  const type = has("policy_loss_type")
    ? c.str(flag("policy_loss_type"), ["ppo", "gspo"] as const)
    : "ppo";
  const { eps, pair, lo, hi, dual } = orlClip(fn, c, flag, has);
  const { useKl, klCoef, klKind } = orlKl(fn, c, flag, has);
  const ent = has("entropy_coef") ? c.num(flag("entropy_coef"), { nullable: true }) : null;
  const { dynamic, micro, exactWindow } = orlBatching(fn, c, r, flag, has);
  const gspo = type === "gspo";
  const sampleMean = gspo && at("v0.8.9");
  // From v0.8.10 the vLLM IS correction weighs ppo only; GSPO takes its ratio against the rollout.
  const isOn = has("is_enable") && c.bool(flag("is_enable"));
  const isRolloutRatio = isOn && gspo && at("v0.8.10");
  const isCorrection = isRolloutRatio ? null : isCorrectionOf(fn, c, r, flag, has);
  return {
    type,
    eps,
    pair,
    lo,
    hi,
    dual,
    useKl,
    klCoef,
    klKind,
    ent,
    dynamic,
    micro,
    exactWindow,
    gspo,
    sampleMean,
    isOn,
    isRolloutRatio,
    isCorrection,
  };
}

/** The OpenRLHF reads of one resolution. */
type OrlReads = ReturnType<typeof orlReads>;

/** The per-micro-batch loss in polgrad's algebra. */
function orlConfig(x: OrlReads, at: (l: string) => boolean): PolicyLossConfig {
  const { gspo, sampleMean, lo, hi, dual, isCorrection, ent } = x;
  return {
    ratio: gspo ? "sequence" : "token",
    surrogate: "pg_clip",
    clip: { epsLow: lo, epsHigh: hi, ratioCap: dual },
    aggregation: sampleMean ? "seq_mean_token_mean" : "token_mean",
    emptyRows: gspo && !at("v0.10.3") ? "reject" : sampleMean ? "drop" : "count",
    ...(!gspo && at("v0.10.3")
      ? { ratioClamp: { level: "token", lower: -20, upper: 20 } as const }
      : {}),
    ...(isCorrection === null ? {} : { isCorrection }),
    ...(ent === null || ent === 0
      ? {}
      : {
          entropyBonus: {
            coef: ent,
            aggregation: sampleMean ? "seq_mean_token_mean" : "token_mean",
          },
        }),
  };
}

/** The window, its micro-batches and their normalisers, the float32 KL term, and the micro-batch-one warning. */
function orlPlan(
  config: PolicyLossConfig,
  x: OrlReads,
  at: (l: string) => boolean,
  warnings: ResolutionWarning[],
): { plan: LossPlan; split: boolean; klTerm: ReturnType<typeof openRlhfKlTerm> | null } {
  const { dynamic, micro, exactWindow, gspo, sampleMean, useKl, klCoef, klKind, isRolloutRatio } =
    x;
  // The micro-batches of micro_train_batch_size rows (dynamic batching packs by tokens instead,
  // which a batch file does not record: evaluated as one window).
  const split = !dynamic && micro > 0;
  if (split && !exactWindow && micro === 1 && !gspo)
    warnings.push({
      code: "openrlhf-micro-batch-one",
      message: `micro_train_batch_size = 1 (the default from v0.10.0): before v0.10.4 every micro-batch is one row, so the window's "token mean" is the mean of per-row token means, the seq-mean-token-mean of GRPO`,
    });
  // v0.10.4+: every micro-batch is normalised by the window's counts (upstream divides by
  // float32(count) / gas and DeepSpeed by gas: the window's exact mean when count / gas is a
  // float32); before, by its own counts, and DeepSpeed divides each by gas.
  const windowGlobal: LossPlan["global"] = sampleMean
    ? (w) => ({ rows: w.nonEmpty })
    : (w) => ({ tokens: w.N });
  const klTerm =
    useKl && klCoef > 0
      ? openRlhfKlTerm(klKind, klCoef, exactWindow || dynamic, at("v0.8.6"))
      : null;
  const plan: LossPlan = {
    config,
    microBatches: split ? { rows: micro } : 1,
    divideBy: split && !exactWindow ? "micro_batches" : 1,
    onPolicy: false,
    ...(exactWindow || dynamic ? { global: windowGlobal } : {}),
    ...(split && !exactWindow && !sampleMean
      ? { divisor: (m) => ({ value: m.N, name: "Σ action_mask of the micro-batch" }) }
      : {}),
    ...(gspo && isRolloutRatio ? { oldStream: "rollout" as const } : {}),
    ...(split
      ? {
          emptyMicroBatch: at("v0.9.8")
            ? "OpenRLHF's ppo_train raises ZeroDivisionError merging the status of a micro-batch with no action token"
            : "a micro-batch with no action token is 0/0 = NaN in OpenRLHF's masked_mean",
        }
      : {}),
    ...(klTerm === null ? {} : { terms: [klTerm] }),
    klInObjective: false,
    batchMeaning:
      exactWindow || dynamic
        ? "one optimizer-step window on one rank (train_batch_size rows, dp 1), normalised by the window's tokens (GSPO: non-empty samples)"
        : `one optimizer-step window on one rank, split into micro-batches of micro_train_batch_size = ${micro} rows, each its own mean, the window the mean of the micro-batch means`,
  };
  return { plan, split, klTerm };
}

/** The vLLM IS correction the flags ask for (null: off), its threshold checked for the release. */
function isCorrectionOf(
  fn: string,
  c: MergedConfig,
  r: ReleaseRef,
  flag: (concept: string) => string,
  has: (concept: string) => boolean,
): ISCorrectionConfig | null {
  if (!has("is_enable") || !c.bool(flag("is_enable"))) return null;
  const at = (l: string) => atOrAfter(r, l);
  const t = c.raw(flag("is_threshold"));
  if (!at("v0.9.1")) {
    if (typeof t !== "number" || !(t > 0))
      throw bad(fn, flag("is_threshold"), "a number > 0", t ?? null);
    return { level: "token", mode: "truncate", cap: t };
  }
  if (!Array.isArray(t) || t.length !== 2 || t.some((x) => typeof x !== "number" || !(x >= 0)))
    throw bad(fn, flag("is_threshold"), "two numbers ≥ 0 (low high)", t ?? null);
  const [lower, cap] = t as [number, number];
  const kind = has("is_type")
    ? c.str(
        flag("is_type"),
        at("v0.9.4")
          ? (["tis", "icepop", "seq-mask-tis"] as const)
          : (["tis", "icepop", "mis"] as const),
      )
    : has("use_icepop") && c.bool(flag("use_icepop"))
      ? "icepop"
      : "tis";
  if (kind === "tis") return { level: "token", mode: "truncate", lower, cap };
  if (kind === "icepop") return { level: "token", mode: "mask", lower, cap };
  return {
    level: "token",
    mode: "truncate",
    lower: null,
    cap: null,
    rowMask: { level: "geometric", lower, cap },
  };
}

const f32 = Math.fround;

/**
 * OpenRLHF's KL loss term `kl_loss · kl_ctl` of one micro-batch, as upstream computes it in float32
 * (compute_approx_kl casts both streams with `.float()`): k = clamp(k_kind(f32(lp) − f32(ref)), ±10)
 * per token (openRlhfKlPoint), kl_loss = f32(Σ m·k) / a with a = the micro-batch's token count
 * (before v0.10.4) or f32(f32(N_window) / gas) (v0.10.4+, the window's), times f32(kl_ctl) in
 * float32, then DeepSpeed's 1/gas in float64. The gradient is autograd's float32 chain:
 * g = f32(f32(f32(1/gas)·f32(kl_ctl)) / a), then the estimator's derivative. The float32 sum is the
 * correctly rounded sum, where torch's vectorised float32 sum may differ by an ulp.
 */
function openRlhfKlTerm(
  kind: "k1" | "k2" | "k3",
  klCtl: number,
  window: boolean,
  clamp: boolean,
): PlanTerm {
  return {
    name: `kl_loss·kl_ctl (${kind}, float32)`,
    float32: true,
    readsRef: true,
    evaluate(micro, { whole, microBatches: K }) {
      const a = window ? f32(f32(whole.N) / K) : micro.N;
      const c = f32(klCtl);
      const g = f32(f32(f32(1 / K) * c) / a);
      const grad = new Float64Array(micro.m.length);
      let sum = 0;
      let comp = 0;
      // The float32 roundings upstream may do differently (u = 2⁻²⁴): torch's exp is within an
      // ulp, not correctly rounded (k3: |Δe| ≤ u·e, through e − 1 + x and the gradient g − g·e);
      // its float32 sum runs in another order (≤ n·u·Σ|k|). Everything else is one IEEE operation
      // on the same float32 operands, bit for bit.
      const u = 2 ** -24;
      let absSum = 0;
      let dv = 0;
      let dg2 = 0;
      let n = 0;
      for (let i = 0; i < micro.m.length; i++) {
        if (micro.m[i] !== 1) continue;
        const pt = openRlhfKlPoint(kind, micro.lp[i] as number, micro.ref[i] as number, g, clamp);
        const t = sum + pt.value;
        comp += twoSumError(sum, pt.value, t); // every value is within ±10: no overflow
        sum = t;
        grad[i] = pt.grad;
        absSum += Math.abs(pt.value);
        n++;
        if (kind === "k3") {
          const e = f32(Math.exp(-f32(f32(micro.lp[i] as number) - f32(micro.ref[i] as number))));
          dv += 2 * u * (e + Math.abs(pt.value));
          const dd = 2 * u * (Math.abs(g) * e + Math.abs(pt.grad));
          dg2 += dd * dd;
        }
      }
      const klLoss = f32(f32(sum + comp) / a);
      const loss = f32(klLoss * c) / K;
      // Every KL value is within ±10, so only the float32 product with kl_ctl can overflow.
      if (!Number.isFinite(loss) || !Number.isFinite(g))
        throw overflowError(
          micro.fn,
          "float32(kl_loss · kl_ctl)",
          Number.isFinite(loss) ? g : loss,
          undefined,
          `OpenRLHF computes the KL term in float32, |x| <= 3.4e38; kl_loss = ${klLoss}, kl_ctl = ${klCtl}`,
        );
      const lossBound =
        ((dv + n * u * absSum) / a + 4 * u * Math.abs(klLoss)) * (c / K) + 2 * u * Math.abs(loss);
      return { loss, grad, lossBound, gradBound: Math.sqrt(dg2) };
    },
  };
}
