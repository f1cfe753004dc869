/**
 * A framework config resolved against one release: every loss-relevant key with its value and
 * where the value came from, the loss in our algebra (one PolicyLossConfig per micro-batch plus the
 * trainer's plumbing: the row split, the per-micro-batch scale, the on-policy substitution, the
 * global normaliser), what a batch file stands for, and the pitfalls the config walks into
 * (docs/conformance/explain.md). Browser-safe.
 */
import type { GlobalNormalizer } from "../../aggregate/effectiveTokenWeights.js";
import type { Matrix } from "../../core/tensor.js";
import {
  checkFiniteAt,
  checkSameShape,
  requireArrayOf,
  requireObject,
  toMatrix,
} from "../../core/validate.js";
import { ConfigError, fail, MaskError } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { PolicyLossInputs } from "../../losses/policyLoss.js";
import { type FrameworkBatch, prepareBatch } from "../frameworks/batch.js";
import { evaluateOnAlgebra, readsEntropies, readsRollout } from "../frameworks/onAlgebra.js";
import type { RecordedRelease, RecordedValue } from "../releases/types.js";
import type { ConfigFramework } from "./parse.js";

/** Where a resolved value came from. */
export type SettingSource = "user" | "default" | "derived" | "world";

/** One loss-relevant key after resolution. */
export interface ResolvedSetting {
  /** The key in the framework's spelling (`epsilon_high`, `actor_rollout_ref.actor.clip_ratio_low`, `--eps_clip_low_high`). */
  readonly key: string;
  readonly value: RecordedValue;
  /** `user`: set by the config; `default`: the release's recorded default; `derived`: computed from others (how: `note`); `world`: the trainer's world (processes, accumulation). */
  readonly source: SettingSource;
  /** What the key does in this loss, one line. */
  readonly role: string;
  /** For `derived` values: the rule (e.g. `epsilon_high = epsilon when None`). */
  readonly note?: string;
  /** Whether the value changes the loss here (false: e.g. `epsilon` when the loss is on-policy). */
  readonly effective: boolean;
}

/** A warning about a known pitfall, with a stable code. */
export interface ResolutionWarning {
  readonly code: string;
  readonly message: string;
  /** The deviation-registry id it relates to, when one exists. */
  readonly deviation?: string;
}

/** The whole batch's counts, for global normalisers: tokens N, rows B, rows with a token. */
export interface WholeCounts {
  readonly N: number;
  readonly B: number;
  readonly nonEmpty: number;
}

/**
 * A term upstream adds to each micro-batch's loss outside our algebra, evaluated by its own model
 * (OpenRLHF's KL loss, computed in float32). Its loss and gradient are the micro-batch's final
 * contributions (after any division the trainer applies).
 */
export interface PlanTerm {
  readonly name: string;
  /** Upstream computes it in float32 (its values carry float32 rounding). */
  readonly float32: boolean;
  /** It reads refLogprobs. */
  readonly readsRef: boolean;
  evaluate(
    micro: FrameworkBatch,
    ctx: { readonly whole: WholeCounts; readonly microBatches: number },
  ): {
    readonly loss: number;
    readonly grad: Float64Array;
    /** A bound on |loss − upstream's| from the float32 roundings upstream does differently (0: none). */
    readonly lossBound: number;
    /** A bound on the Euclidean norm of grad − upstream's, likewise. */
    readonly gradBound: number;
  };
}

/** The trainer plumbing around the per-micro-batch loss. */
export interface LossPlan {
  /** The loss of one micro-batch in our algebra. */
  readonly config: PolicyLossConfig;
  /**
   * The batch's rows are split into this many micro-batches of contiguous rows (equal sizes; B must
   * divide); `{ rows }`: into micro-batches of that many rows (verl's ppo_micro_batch_size_per_gpu).
   */
  readonly microBatches: number | { readonly rows: number };
  /**
   * Each micro-batch's loss is divided by this (TRL: current_gradient_accumulation_steps; 1: none);
   * `micro_batches`: by the number of micro-batches K (verl's old actor: loss × 1/GA, GA = B / rows).
   */
  readonly divideBy: number | "micro_batches";
  /** The loss is on-policy: old_logprobs := logprobs (the batch's old logprobs are not read). */
  readonly onPolicy: boolean;
  /** A global normaliser for every micro-batch, from the whole batch's counts (tokens N, rows B). */
  readonly global?: (whole: WholeCounts) => GlobalNormalizer | null;
  /** The divisor upstream divides by, named, checked positive (upstream: 0/0 = NaN). */
  readonly divisor?: (
    micro: FrameworkBatch,
    whole: WholeCounts,
  ) => {
    readonly value: number;
    readonly name: string;
  } | null;
  /**
   * token_sum_norm's length is the batch's padded width T (verl's seq-mean-token-sum-norm when
   * loss_scale_factor is null, and always in the old actor, where loss_scale_factor never reaches
   * agg_loss): `config.normLen` is left unset and taken from the batch at evaluation.
   */
  readonly normLenFromWidth?: boolean;
  /** The policy ratio is taken against the rollout logprobs (old_logprobs := rolloutLogprobs: OpenRLHF's GSPO with the vLLM IS correction). */
  readonly oldStream?: "rollout";
  /**
   * What upstream does with a micro-batch that has no response token (OpenRLHF: 0/0, or a
   * ZeroDivisionError merging its status); evaluation raises a MaskError saying so. Absent: the
   * plan's loss handles it.
   */
  readonly emptyMicroBatch?: string;
  /** Terms added outside the algebra, per micro-batch. */
  readonly terms?: readonly PlanTerm[];
  /** The per-token KL term is part of the reported per-token objective (TRL's per_token_loss). */
  readonly klInObjective: boolean;
  /** What the batch file stands for under this plan (stated in the explanation). */
  readonly batchMeaning: string;
}

/** A config resolved against one release. */
export interface FrameworkResolution {
  readonly framework: ConfigFramework;
  /** `trl@v1.9.0`, `verl@1dda039b`, `openrlhf@3c3be623`. */
  readonly ref: string;
  readonly release: Pick<RecordedRelease, "label" | "tag" | "commit" | "date">;
  readonly repo: string;
  /** Every loss-relevant key, in the framework's order. */
  readonly settings: readonly ResolvedSetting[];
  /** Keys the config set that do not affect the loss, with their values. */
  readonly ignored: readonly { readonly key: string; readonly value: RecordedValue }[];
  /** Tokens skipped before the arguments (a launcher command). */
  readonly skipped: readonly string[];
  readonly plan: LossPlan;
  /** The loss in words, one line per component (ratio, surrogate, clip, aggregation, ...). */
  readonly algebra: readonly { readonly component: string; readonly text: string }[];
  readonly warnings: readonly ResolutionWarning[];
}

/** What evaluating a resolution returns. */
export interface ResolutionResult {
  readonly loss: number;
  readonly gradLogprobs: Matrix;
  readonly perTokenObjective: Matrix;
  readonly ratio: Matrix;
  /** The plan's extra terms summed over micro-batches (included in `loss` and `gradLogprobs`). */
  readonly terms: readonly {
    readonly name: string;
    readonly float32: boolean;
    readonly loss: number;
    readonly gradLogprobs: Matrix;
    /** Bounds on the differences from upstream's float32 arithmetic (see PlanTerm.evaluate). */
    readonly lossBound: number;
    readonly gradBound: number;
  }[];
  /**
   * Each micro-batch's rows `[start, end)`, its loss (already divided by `divideBy`, terms
   * included) and the bound on its difference from upstream's float32 terms (0 when none).
   */
  readonly microBatches: readonly {
    readonly rows: readonly [number, number];
    readonly loss: number;
    readonly float32Bound: number;
  }[];
}

interface TermAcc {
  loss: number;
  grad: Float64Array;
  lossBound: number;
  gradBound: number;
}

function rowsOf(b: FrameworkBatch, s: number, e: number): FrameworkBatch {
  const T = b.T;
  const cut = (x: Float64Array) => x.subarray(s * T, e * T);
  const L = b.L.subarray(s, e);
  let N = 0;
  let nonEmpty = 0;
  for (const l of L) {
    N += l;
    if (l > 0) nonEmpty++;
  }
  return {
    fn: b.fn,
    B: e - s,
    T,
    m: b.m.subarray(s * T, e * T),
    L,
    N,
    nonEmpty,
    lp: cut(b.lp),
    old: cut(b.old),
    adv: cut(b.adv),
    ref: cut(b.ref),
    rollout: cut(b.rollout),
  };
}

/**
 * Require a {@link FrameworkResolution} (resolveFrameworkConfig's result): an object with its
 * ref, settings, algebra and a plan holding a config; otherwise a ConfigError naming `arg`.
 * @internal
 */
export function checkResolution(
  fn: string,
  arg: string,
  res: unknown,
): asserts res is FrameworkResolution {
  requireObject(fn, arg, res, "a FrameworkResolution (resolveFrameworkConfig)", [
    "ref",
    "settings",
    "algebra",
    "plan",
  ]);
  const { plan, settings, algebra } = res as { plan: unknown; settings: unknown; algebra: unknown };
  requireObject(fn, `${arg}.plan`, plan, "a loss plan", ["config"]);
  requireObject(
    fn,
    `${arg}.plan.config`,
    (plan as { config: unknown }).config,
    "a PolicyLossConfig",
    ["ratio", "surrogate", "aggregation"],
  );
  const isObj = (x: unknown) => typeof x === "object" && x !== null;
  requireArrayOf(fn, `${arg}.settings`, settings, "an array of settings", isObj);
  requireArrayOf(fn, `${arg}.algebra`, algebra, "an array of {component, text}", isObj);
}

/**
 * Evaluate a resolved framework config on a batch: the batch's rows are split into
 * `plan.microBatches` contiguous micro-batches, each evaluated by policyLoss under `plan.config`
 * (old := logprobs when on-policy; the plan's global normaliser) and divided by `plan.divideBy`;
 * the loss is the sum over micro-batches, the gradient the micro-batches' gradients in place.
 *
 * Formula: loss = Σ_k L_k(rows of k) / divideBy (normLen := T when `plan.normLenFromWidth`).
 *
 * @param res - The resolution (from `resolveFrameworkConfig`).
 * @param inputs - The batch (PolicyLossInputs; `refLogprobs` when the config has a KL term,
 *   `entropies` when it has an entropy mask or bonus, `rolloutLogprobs` for an IS correction).
 * @returns The loss, its gradient w.r.t. logprobs, the per-token objective, the ratio and the micro-batch losses.
 * @throws {ConfigError} E_CONFIG when B does not divide into the micro-batches.
 * @derivation docs/conformance/explain.md#evaluation
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > golden: TRL v1.9.0's default is dapo with an on-policy ratio
 * @since 0.2.0
 */
export function evaluateResolution(
  res: FrameworkResolution,
  inputs: PolicyLossInputs,
): ResolutionResult {
  checkResolution("evaluateResolution", "res", res);
  const fn = res.ref;
  const { plan } = res;
  const terms = plan.terms ?? [];
  const batch = prepareBatch(fn, inputs, {
    old: !plan.onPolicy && plan.oldStream === undefined,
    advantages: true,
    ref: plan.config.kl != null || terms.some((t) => t.readsRef),
    rollout: readsRollout(plan.config) || plan.oldStream === "rollout",
  });
  const cfg = plan.normLenFromWidth === true ? { ...plan.config, normLen: batch.T } : plan.config;
  const whole: WholeCounts = { N: batch.N, B: batch.B, nonEmpty: batch.nonEmpty };
  const split = plan.microBatches;
  const K = typeof split === "number" ? split : batch.B / split.rows;
  if (!Number.isInteger(K) || batch.B % K !== 0)
    throw new ConfigError(
      fn,
      "inputs",
      `${fn}: the batch's rows must split into ${typeof split === "number" ? `${split} equal micro-batches` : `micro-batches of ${split.rows} rows`} (${plan.batchMeaning}); got B = ${batch.B}`,
    );
  const size = batch.B / K;
  const d = plan.divideBy === "micro_batches" ? K : plan.divideBy;
  const { T } = batch;
  const grad = new Float64Array(batch.B * T);
  const obj = new Float64Array(batch.B * T);
  const ratio = new Float64Array(batch.B * T);
  const micro: { rows: readonly [number, number]; loss: number; float32Bound: number }[] = [];
  const entropies = entropiesOf(fn, inputs, cfg, batch);
  // The global normaliser comes from the whole batch's counts: the same for every micro-batch.
  const global = plan.global?.(whole) ?? null;
  const termAcc: TermAcc[] = terms.map(() => ({
    loss: 0,
    grad: new Float64Array(batch.B * T),
    lossBound: 0,
    gradBound: 0,
  }));
  let loss = 0;
  for (let k = 0; k < K; k++) {
    const s = k * size;
    const e = s + size;
    const sub = rowsOf(batch, s, e);
    if (sub.N === 0 && plan.emptyMicroBatch !== undefined)
      throw fail(
        MaskError,
        fn,
        "responseMask",
        `a response token in every micro-batch (${plan.emptyMicroBatch})`,
        `none in micro-batch ${k} (rows ${s}..${e - 1})`,
      );
    const subBatch: FrameworkBatch = plan.onPolicy
      ? { ...sub, old: sub.lp }
      : plan.oldStream === "rollout"
        ? { ...sub, old: sub.rollout }
        : sub;
    const divisor = plan.divisor?.(sub, whole) ?? undefined;
    const r = evaluateOnAlgebra(subBatch, cfg, {
      ...(global === null ? {} : { global }),
      ...(divisor === undefined || divisor === null ? {} : { divisor }),
      klInObjective: plan.klInObjective,
      ...(entropies === null ? {} : { entropies: entropies.subarray(s * T, e * T) }),
    });
    const lk = d === 1 ? r.loss : r.loss / d;
    for (let i = 0; i < size * T; i++) {
      grad[s * T + i] =
        d === 1 ? (r.gradLogprobs.data[i] as number) : (r.gradLogprobs.data[i] as number) / d;
      obj[s * T + i] = r.perTokenObjective.data[i] as number;
      ratio[s * T + i] = r.ratio.data[i] as number;
    }
    let lt = lk;
    let f32Part = 0;
    terms.forEach((t, j) => {
      const x = t.evaluate(sub, { whole, microBatches: K });
      const acc = termAcc[j] as TermAcc;
      acc.loss += x.loss;
      for (let i = 0; i < size * T; i++) {
        const v = x.grad[i] as number;
        grad[s * T + i] = (grad[s * T + i] as number) + v;
        acc.grad[s * T + i] = v;
      }
      lt += x.loss;
      f32Part += x.lossBound;
      acc.lossBound += x.lossBound;
      acc.gradBound = Math.hypot(acc.gradBound, x.gradBound);
    });
    micro.push({ rows: [s, e], loss: lt, float32Bound: f32Part });
    loss += lt;
  }
  const mat = (data: Float64Array) => ({ rows: batch.B, cols: T, data });
  return {
    loss,
    gradLogprobs: mat(grad),
    perTokenObjective: mat(obj),
    ratio: mat(ratio),
    terms: terms.map((t, j) => {
      const acc = termAcc[j] as TermAcc;
      return {
        name: t.name,
        float32: t.float32,
        loss: acc.loss,
        gradLogprobs: mat(acc.grad),
        lossBound: acc.lossBound,
        gradBound: acc.gradBound,
      };
    }),
    microBatches: micro,
  };
}

function entropiesOf(
  fn: string,
  inputs: PolicyLossInputs,
  cfg: PolicyLossConfig,
  batch: FrameworkBatch,
): Float64Array | null {
  if (!readsEntropies(cfg)) return null;
  if (inputs.entropies === null || inputs.entropies === undefined)
    throw new ConfigError(
      fn,
      "entropies",
      `${fn}: entropies must be given (the config has a top-entropy mask or an entropy bonus); got ${String(inputs.entropies)}`,
    );
  const like = { rows: batch.B, cols: batch.T, data: batch.lp };
  const e = toMatrix(fn, "entropies", inputs.entropies);
  checkSameShape(fn, "logprobs", like, "entropies", e);
  const mask = { rows: batch.B, cols: batch.T, data: batch.m };
  checkFiniteAt(fn, "entropies", e, mask);
  const out = new Float64Array(e.data.length);
  for (let i = 0; i < out.length; i++) if (batch.m[i] === 1) out[i] = e.data[i] as number;
  return out;
}
