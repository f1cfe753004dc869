import {
  checkGlobal,
  type GlobalNormalizer,
  rowTokenWeights,
} from "../aggregate/effectiveTokenWeights.js";
import { finiteOr, overflowError } from "../core/finite.js";
import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { CompensatedSum, robustSum } from "../core/sum.js";
import type { Mask, Matrix } from "../core/tensor.js";
import { ConfigError, fail, type OverflowError } from "../errors.js";
import type { PolicyLossConfig, ResolvedPolicyLossConfig } from "./config.js";
import { validatePolicyLossConfig } from "./configValidate.js";
import { SharedArena } from "./kernel/arena.js";
import {
  BLOCK_FAILED,
  EVENT_SLOTS,
  outputsOf,
  rowBlockRunner,
  rowsOf,
  runBlock,
  type SharedPlan,
  splitRows,
} from "./kernel/blocks.js";
import { InputScratch } from "./kernel/inputScratch.js";
import {
  allocOutputs,
  allocSome,
  callerArrays,
  callerOutputs,
  type OutputKey,
  outputs,
  type PolicyLossOut,
  type PolicyOutputs,
  type SomeOutputs,
} from "./kernel/outputs.js";
import { type PlannedPolicyLoss, planPolicyLoss } from "./kernel/policyPlan.js";
import {
  accumulateRow,
  fusable,
  fusedLossAndGrad,
  klValueAt,
  LossSums,
  type PolicyPlan,
  ROW_BAD_INPUT,
  ROW_OBJECTIVE,
  ROW_OK,
} from "./kernel/policyRows.js";

export { POLICY_LOSS_FIELDS, type PolicyLossField } from "./fields.js";
export { POLICY_LOSS_INPUTS, type PolicyLossInputs } from "./inputs.js";
export type { PolicyLossOut } from "./kernel/outputs.js";

import { POLICY_LOSS_FIELDS, type PolicyLossField } from "./fields.js";
import type { PolicyLossInputs } from "./inputs.js";

/** Result of {@link policyLoss}. Every `[B, T]` field follows the masked-position contract. */
export interface PolicyLossResult {
  /** The scalar loss to minimise: aggregate(perTokenObjective) + coef·klLoss. */
  readonly loss: number;
  /** ∂loss/∂logprobs in closed form, `[B, T]`, exactly 0 at padding. */
  readonly gradLogprobs: Matrix;
  /** Per-token surrogate after TIS, before KL, `[B, T]`, 0 at padding. */
  readonly perTokenObjective: Matrix;
  /**
   * The surrogate's ratio (sg), `[B, T]`, exactly 1 at padding; all ones for reinforce. A ratio
   * whose exp overflows where the loss stays finite (clipped high, dual-clip cap, CISPO, A = 0) is
   * reported saturated, as Number.MAX_VALUE.
   */
  readonly ratio: Matrix;
  /** Tokens whose ratio sits below the band on the side that binds (false at padding). */
  readonly clippedLow: Mask;
  /** Tokens whose ratio sits above the band on the side that binds, or above the dual-clip cap. */
  readonly clippedHigh: Mask;
  /** The unscaled as-loss KL term, or null without `config.kl`. */
  readonly klLoss: number | null;
  /**
   * The aggregated entropy Σ w^H·H over the kept tokens (the loss holds −coef times it), or null
   * without `config.entropyBonus`.
   */
  readonly entropyLoss: number | null;
  /** ∂loss/∂entropies = −coef·w^H at kept tokens, 0 elsewhere, or null without the bonus. */
  readonly gradEntropies: Matrix | null;
}

/** The fields `options.fields` names (./fields.ts) are exactly the result's keys: else this fails to compile. */
const FIELDS_ARE_THE_RESULT: [PolicyLossField] extends [keyof PolicyLossResult]
  ? [keyof PolicyLossResult] extends [PolicyLossField]
    ? true
    : never
  : never = true;
void FIELDS_ARE_THE_RESULT;

/** Options of {@link policyLoss}. */
export interface PolicyLossOptions {
  /**
   * The fields to compute and return (docs/performance.md#fields): only these are allocated and
   * in the result, each bitwise what the full call gives. Default: every field. The `[B, T]`
   * fields left out are never written whole: the kernel keeps them for one block of rows at a
   * time, in reused memory. `out` may hold only fields asked for.
   */
  readonly fields?: readonly PolicyLossField[];
  /**
   * Caller-provided `[B, T]` output arrays (each of length B·T, disjoint from each other and from
   * the inputs), written in place and returned as the result's `data`; fields left out are
   * allocated. Padding is written per the masked-position contract (0, ratio 1, flags 0).
   */
  readonly out?: PolicyLossOut;
  /**
   * The most threads to run the rows on (worker threads over shared memory, Node only): a
   * positive integer; 1 runs on the calling thread. Default: 1. The rows of other threads are
   * copied in and out, so a call runs on one thread where that copy costs more than it saves:
   * with `fields` (the fused pass is as fast as the copy), and with fresh outputs for a sequence
   * ratio with no per-token term beside the surrogate (docs/performance.md#threads). The result
   * is bitwise the same for every value.
   */
  readonly threads?: number;
  /**
   * The batch is one shard of a global batch: the aggregation divides by the global token and
   * row counts and multiplies by the data-parallel size (verl's global token-mean, TRL's
   * num_items_in_batch normaliser, OpenRLHF's batch_num_tokens / global_batch_size with dp_size;
   * docs/derivations/aggregation.md#global-normalisers). Applies to the KL term too.
   */
  readonly global?: GlobalNormalizer;
}

/** The most threads a call may ask for. */
const MAX_THREADS = 256;

/**
 * Compute a policy-gradient loss and its closed-form gradient w.r.t. `logprobs` in one pass.
 *
 * Formula: L = Σ_{b,t} w_{b,t}·ρ_{b,t}·ℓ_{b,t} + coef·Σ_{b,t} w^kl_{b,t}·k(ref − lp), with w the
 * aggregation weights, ρ the TIS weight and ℓ the surrogate: pg −r·A; pg_clip −min(r·A,
 * clamp(r, 1−ε_lo, 1+ε_hi)·A) (dual clip: −max(·, c·A) for A < 0); reinforce −A·lp;
 * cispo −sg[ŵ]·A·lp. The ratio r is token exp(lp − old), sequence exp(Σ_t (lp − old)/L_b), or
 * sequence_token sg[s_b]·exp(lp − old)/sg[exp(lp − old)].
 * With `topEntropyQuantile` ρ a token keeps its term iff its entropy is ≥ the (1 − ρ) quantile
 * (weight 0 otherwise, denominators kept); `entropyBonus` subtracts coef·Σ w^H·H over the kept
 * tokens (gradEntropies = −coef·w^H).
 * Gradient / stop-gradient: ∂L/∂lp in closed form; constants are old, ref, rollout, A, sg[ρ]
 * (TIS weights are data), sg[ŵ] (CISPO holds the clipped weight constant), sg[s_b] and
 * sg[exp(lp − old)] in the sequence_token ratio (token-local gradient by construction).
 *
 * @param config - The loss configuration; validated at call entry.
 * Implementation: the fused row kernel of ./kernel/ (docs/performance.md#the-fused-kernel): one
 * pass over each row's span per stage, validation folded in, outputs allocated once; bitwise the
 * unfused evaluation (Σ w·ℓ is maskedDot's compensated sum in row-major order).
 *
 * @param inputs - The batch (`[B, T]` streams, `[B]` or `[B, T]` advantages, mask).
 * @param options - `out`: caller-provided output arrays; `threads`: rows on worker threads, the
 *   same bits (PolicyLossOptions, docs/performance.md#threads).
 * @returns The loss, its gradient and per-token diagnostics; at padding gradient and objective
 *   are 0, ratio is 1 and the clip flags are false.
 * @throws {ConfigError} E_CONFIG when the config breaks a rule or a required stream is missing.
 * @throws {ShapeError} E_SHAPE when a stream or the advantages have the wrong shape.
 * @throws {MaskError} E_MASK when the mask is not 0/1, misshaped, or has an empty row.
 * @throws {NonFiniteError} E_NONFINITE when a stream is not finite at a response position.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown ratio, surrogate, mode or estimator.
 * @throws {OverflowError} E_OVERFLOW when a result is not representable for finite input, naming
 *   the quantity (`perTokenObjective`, `klLoss`, `gradLogprobs`, `loss`) and the position: an
 *   overflowing ratio on the unclipped branch (pg; pg_clip with A < 0 and no binding cap), r·A or
 *   A·lp past 1.8e308, a k3 term e^δ with δ ≥ 710. A clipped token whose ratio overflows is finite
 *   with gradient exactly 0 (docs/conventions.md#numeric-policy).
 * @derivation docs/derivations/losses.md#policy-loss
 * @enforcedBy test/losses/policyLoss.golden.test.ts > policyLoss > golden: pg_clip inside the band
 * @enforcedBy test/losses/policyLoss.kernel.test.ts > policyLoss kernel > identity: equals the equation-level reference and the unfused stage-by-stage evaluation on random ragged batches
 * @enforcedBy test/losses/policyLoss.golden.test.ts > policyLoss > golden: 2x2 ragged batch
 * @enforcedBy test/losses/policyLoss.fixtures.test.ts > policyLoss > conformance: matches polgrad 0.2.0 (pytorch autograd) on every recorded case
 * @enforcedBy test/hardening/losses.test.ts > hardening: overflowing ratios > golden: a clipped token whose ratio overflows has a finite objective and gradient exactly 0
 * @enforcedBy test/hardening/losses.test.ts > hardening: extreme inputs > property: every algorithm and every ratio × surrogate × aggregation is finite or throws OverflowError, and equals the reference where that is finite
 * @enforcedBy test/losses/entropy.test.ts > top-entropy mask and entropy bonus > gradient: closed form equals the reference for entropy bonus on the tokens ρ 0.4 keeps, every aggregation, with and without KL
 * @see arXiv 1707.06347 eq. 7 (PPO), 2507.18071 eqs. 7 and 14 (GSPO), 2506.13585 eq. 4 (CISPO)
 * @since 0.1.0
 */
export function policyLoss(
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
  options?: PolicyLossOptions & { readonly fields?: undefined },
): PolicyLossResult;
export function policyLoss<F extends PolicyLossField>(
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
  options: PolicyLossOptions & { readonly fields: readonly F[] },
): Pick<PolicyLossResult, F>;
export function policyLoss(
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
  options: PolicyLossOptions = {},
): Partial<PolicyLossResult> {
  return policyLossAs("policyLoss", config, inputs, options as PolicyLossOptions & { fields: [] });
}

/**
 * {@link policyLoss} under the name of the public function that calls it (papoLoss), so that its
 * errors name that function. @internal
 */
export function policyLossAs(
  fn: string,
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
  options?: PolicyLossOptions & { readonly fields?: undefined },
): PolicyLossResult;
export function policyLossAs<F extends PolicyLossField>(
  fn: string,
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
  options: PolicyLossOptions & { readonly fields: readonly F[] },
): Pick<PolicyLossResult, F>;
export function policyLossAs(
  fn: string,
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
  options: PolicyLossOptions = {},
): Partial<PolicyLossResult> {
  const cfg = validatePolicyLossConfig(fn, config);
  const opts = checkPolicyLossOptions(fn, options);
  const fields = opts.fields === undefined ? null : checkFields(fn, opts.fields, opts.out);
  scratch.enter();
  try {
    const planned = planPolicyLoss(fn, cfg, inputs, scratch, opts.global);
    if (fields === null) return evaluate(fn, cfg, opts, planned);
    // Anything the row blocks stop at (an error, an overflow, a sum past float64) is judged by
    // the whole call, which throws what it always throws or returns the fields asked for.
    const some = evaluateFields(fn, cfg, opts, planned, fields);
    if (some !== null) return some;
    fieldPaths.whole++;
    return pickFields(evaluate(fn, cfg, opts, planned), fields);
  } finally {
    scratch.exit();
  }
}

/** Check `options.fields`: an array of result fields, at least one; `out` only for fields in it. */
function checkFields(fn: string, fields: unknown, out: unknown): ReadonlySet<PolicyLossField> {
  if (!Array.isArray(fields) || fields.length === 0) {
    const rule = `a non-empty array of result fields (${POLICY_LOSS_FIELDS.join(", ")})`;
    throw fail(ConfigError, fn, "options.fields", rule, fmtValue(fields));
  }
  const set = new Set<PolicyLossField>(
    fields.map((f, i) => oneOf(fn, `options.fields[${i}]`, f, POLICY_LOSS_FIELDS)),
  );
  if (typeof out === "object" && out !== null) {
    for (const [key, v] of Object.entries(out)) {
      if (v !== undefined && !set.has(key as PolicyLossField)) {
        const rule = "given only for a field listed in options.fields";
        throw fail(ConfigError, fn, `options.out.${key}`, rule, `${key}, which is not asked for`);
      }
    }
  }
  return set;
}

/** The asked-for fields of a whole result, in the result's order. */
function pickFields(
  r: PolicyLossResult,
  fields: ReadonlySet<PolicyLossField>,
): Partial<PolicyLossResult> {
  const out: Record<string, unknown> = {};
  for (const f of POLICY_LOSS_FIELDS) if (fields.has(f)) out[f] = r[f];
  return out as Partial<PolicyLossResult>;
}

/** The `[B, T]` outputs a call with `fields` may ask for. */
const OUTPUT_KEYS: readonly OutputKey[] = [
  "gradLogprobs",
  "perTokenObjective",
  "ratio",
  "clippedLow",
  "clippedHigh",
];

/**
 * How many calls with `fields` took each path (tests check each path is exercised): `fused`
 * (fusedLossAndGrad), `blocks` (the row blocks), `whole` (the whole call, where the others stop).
 * @internal
 */
export const fieldPaths: { fused: number; blocks: number; whole: number } = {
  fused: 0,
  blocks: 0,
  whole: 0,
};

/** Positions per block of rows of a call with `fields` (the left-out outputs' reused memory). */
let fieldBlockPositions = 8192;

/**
 * Set the positions per block of a call with `fields` (tests: every block size gives the same
 * bits); returns the previous value. @internal
 */
export function setFieldBlockPositions(positions: number): number {
  const was = fieldBlockPositions;
  fieldBlockPositions = positions;
  return was;
}

/**
 * policyLoss with only `fields` (docs/performance.md#fields): the rows run in blocks of about
 * fieldBlockPositions positions (rowsOf: every row gives the bits it gives in the whole call),
 * each block writing the asked-for `[B, T]` outputs in place and the others into memory reused
 * from block to block; the sums are the whole call's, in row-major order. Returns null where
 * {@link runRowBlocks} stops, and for the entropy bonus (its own `[B, T]` gradient): the whole call
 * then decides. Runs on one thread.
 */
function evaluateFields(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  opts: PolicyLossOptions,
  planned: PlannedPolicyLoss,
  fields: ReadonlySet<PolicyLossField>,
): Partial<PolicyLossResult> | null {
  if (cfg.entropyBonus !== null) return null;
  const { plan } = planned;
  const { B, T } = plan;
  const n = B * T;
  const given = callerArrays(fn, opts.out, n, planned.reads);
  const want = OUTPUT_KEYS.filter((k) => fields.has(k));
  const full = allocSome(n, want, given ?? {});
  // Padding is written only into arrays that were not zero-filled by allocation.
  const fresh = given === undefined;
  if (fusable(plan) && want.every((k) => k === "gradLogprobs")) {
    // The loss and the gradient alone of a loss with no stage beside the surrogate and a plain
    // KL term (any ratio): one pass per row, nothing else written.
    const acc = new LossSums();
    if (!fusedLossAndGrad(plan, full.gradLogprobs ?? null, fresh, acc)) return null;
    // finish()'s arithmetic on finite sums; anything non-finite is the whole call's to name.
    const surrogate = acc.loss();
    if (!Number.isFinite(surrogate)) return null;
    let scalars: PolicyLossScalars = { loss: surrogate, klLoss: null };
    if (cfg.kl !== null) {
      const klLoss = acc.kl();
      const loss = surrogate + cfg.kl.coef * klLoss;
      if (!Number.isFinite(klLoss) || !Number.isFinite(loss)) return null;
      scalars = { loss, klLoss };
    }
    fieldPaths.fused++;
    return pickFromScalars(fields, scalars, full, B, T);
  }
  const rows = Math.max(1, Math.min(B, Math.floor(fieldBlockPositions / Math.max(1, T))));
  const spare = allocOutputs(rows * T, false);
  const scalars = runRowBlocks(
    cfg,
    B,
    T,
    rows * T,
    (b0, b1) => rowsOf(plan, b0, b1),
    () => {},
    (b0, b1) => {
      const lo = b0 * T;
      const hi = b1 * T;
      const m = hi - lo;
      const pick = <A extends Float64Array | Uint8Array>(x: A | undefined, s: A): A =>
        (x === undefined ? s.subarray(0, m) : x.subarray(lo, hi)) as A;
      return outputs(
        pick(full.gradLogprobs, spare.grad),
        pick(full.perTokenObjective, spare.objective),
        pick(full.ratio, spare.ratio),
        pick(full.clippedLow, spare.low),
        pick(full.clippedHigh, spare.high),
        fresh,
      );
    },
  );
  if (scalars === null) return null;
  fieldPaths.blocks++;
  return pickFromScalars(fields, scalars, full, B, T);
}

/** The asked-for fields of a call whose `[B, T]` outputs are `full` and whose sums are `scalars`. */
function pickFromScalars(
  fields: ReadonlySet<PolicyLossField>,
  scalars: PolicyLossScalars,
  full: SomeOutputs,
  B: number,
  T: number,
): Partial<PolicyLossResult> {
  const matrix = <A>(data: A) => ({ rows: B, cols: T, data });
  // Undefined where an output was not asked for (pickFields keeps only those asked).
  const all = {
    loss: scalars.loss,
    gradLogprobs: full.gradLogprobs && matrix(full.gradLogprobs),
    perTokenObjective: full.perTokenObjective && matrix(full.perTokenObjective),
    ratio: full.ratio && matrix(full.ratio),
    clippedLow: full.clippedLow && matrix(full.clippedLow),
    clippedHigh: full.clippedHigh && matrix(full.clippedHigh),
    klLoss: scalars.klLoss,
    entropyLoss: null,
    gradEntropies: null,
  };
  return pickFields(all as PolicyLossResult, fields);
}

/** Streams converted by a call live in this memory until the next call (./kernel/inputScratch.ts). */
const scratch = new InputScratch();

/**
 * A plan kept for the life of the module, as KEEP_MAPS keeps the kernel's classes: every plan
 * shares one hidden class (and its surrogate parameters and KL plan theirs: this one has a KL
 * term), which V8 holds weakly; when the
 * last plan of a call has died, a full GC may collect it and throw away the optimised code that
 * checks it, rebuilt on the next call. Measured: a 256×8192 dapo call with `fields` right after
 * a full GC took 47.9 ms without this plan and 27.4 ms with it (19.6 ms for the floor). A 1×1
 * batch: it holds no memory to speak of. @internal
 */
export const KEPT_PLAN: PolicyPlan = planPolicyLoss(
  "policyLoss",
  validatePolicyLossConfig("policyLoss", {
    ratio: "token",
    surrogate: "pg_clip",
    clip: { epsLow: 0.2, epsHigh: 0.28, ratioCap: null },
    aggregation: "token_mean",
    kl: { kind: "k3", coef: 0.04 },
  }),
  {
    logprobs: [[-1]],
    oldLogprobs: [[-1]],
    refLogprobs: [[-1]],
    advantages: [1],
    responseMask: [[1]],
  },
).plan;

/**
 * The positions (B·T) each thread of a call must have: a call of fewer than twice this many runs
 * on one thread whatever `threads` asks (measured: at 64×4096, 2^18 positions, two threads took
 * 1.04–1.38× one thread's time wherever the workers ran; at 256×8192, 2^21, they paid;
 * docs/performance.md#threads).
 */
let threadMinPositions = 2 ** 20;

/**
 * Set the positions each thread of a call must have (tests: tiny batches on the workers); returns
 * the previous value. @internal
 */
export function setThreadMinPositions(positions: number): number {
  const was = threadMinPositions;
  threadMinPositions = positions;
  return was;
}

/**
 * Whether a call's rows cost less than copying them: a sequence ratio (one exp per row) with no
 * per-token term beside the surrogate (no KL, IS weights, entropy, off-policy mask, VESPO). With
 * fresh outputs such a call runs on one thread whatever `threads` asks: another thread's rows
 * would be copied in and its five outputs copied out, which costs more than the half of the row
 * pass it saves (measured at 256×8192 ragged: gspo 1.09× one thread; docs/performance.md#threads).
 */
function copyBound(plan: PolicyPlan): boolean {
  return (
    plan.ratio !== "token" &&
    plan.kl === null &&
    plan.tis === null &&
    plan.ent === null &&
    !plan.entMask &&
    plan.opsm === null &&
    plan.vespo === null
  );
}

function evaluate(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  opts: PolicyLossOptions,
  planned: PlannedPolicyLoss,
): PolicyLossResult {
  const { plan } = planned;
  const n = plan.B * plan.T;
  const given = callerOutputs(fn, opts.out, n, planned.reads);
  const runner = rowBlockRunner();
  // IS weights formed on the mask before rejection (plan.isRows) run on one thread: the shared
  // plan the workers read carries the mask the loss sees only.
  // At most a thread per threadMinPositions positions: below that the workers' start-up and
  // the copies cost more than a thread's share of the rows.
  const most = Math.max(1, Math.floor((plan.B * plan.T) / threadMinPositions));
  const threads =
    plan.isRows === null && (given !== undefined || !copyBound(plan))
      ? Math.min(plan.B, opts.threads ?? 1, most)
      : 1;
  if (runner === null || threads <= 1) {
    const out = given ?? allocOutputs(n, false);
    return finish(fn, cfg, planned, out, runRows(fn, cfg, planned, out));
  }
  return runThreaded(fn, cfg, planned, given, threads);
}

function checkPolicyLossOptions(fn: string, options: unknown): PolicyLossOptions {
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw fail(ConfigError, fn, "options", "an options object or undefined", fmtValue(options));
  }
  for (const key of Object.keys(options)) {
    if (key !== "out" && key !== "threads" && key !== "global" && key !== "fields") {
      const arg = `options.${key}`;
      throw fail(ConfigError, fn, arg, "one of out, threads, global, fields", "an unknown option");
    }
  }
  const { threads } = options as PolicyLossOptions;
  if (
    threads !== undefined &&
    (typeof threads !== "number" ||
      !Number.isInteger(threads) ||
      threads < 1 ||
      threads > MAX_THREADS)
  ) {
    const rule = `a positive integer at most ${MAX_THREADS}`;
    throw fail(ConfigError, fn, "options.threads", rule, fmtValue(threads));
  }
  return options as PolicyLossOptions;
}

/** What a stopped row reports: its flat index and the values its message needs. */
interface StopEvent {
  readonly at: number;
  readonly mz: number;
  readonly p: number;
  readonly ell: number;
}

/** What the rows left for the end: the sums and the first KL and gradient overflows. */
interface RowSums {
  readonly acc: LossSums;
  readonly klAt: number;
  readonly klValue: number;
  readonly klDelta: number;
  readonly gradAt: number;
}

/**
 * Run every row in order on this thread as one block, adding each row's terms to the sums right
 * after it (the row is still in cache; KL terms in one row's scratch).
 */
function runRows(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  planned: PlannedPolicyLoss,
  out: PolicyOutputs,
): RowSums {
  const { plan } = planned;
  const k = new Float64Array(plan.kl === null ? 0 : plan.T);
  const acc = new LossSums();
  const events = new Float64Array(EVENT_SLOTS);
  runBlock(plan, out, k, 0, Int32Array.of(0, plan.B), events, 0, (b) =>
    accumulateRow(plan, out.objective, b, acc, k, 0),
  );
  return { acc, ...resolveEvents(fn, cfg, planned, events, 1, () => out) };
}

/** The scalars of a policy loss whose `[B, T]` fields went to a consumer block by block. */
export interface PolicyLossScalars {
  readonly loss: number;
  readonly klLoss: number | null;
}

/**
 * {@link policyLoss} with its `[B, T]` fields handed out a block of rows at a time instead of
 * allocated whole (the memory of `polgrad loss --out`, docs/performance.md#loss---out-by-row-blocks):
 * rows [b0, b1) of about `positions` positions are run on reused outputs, then given to
 * `onBlock(b0, b1, out)` (each array `(b1 − b0)·T` long, the masked-position contract written; valid
 * only during the call). The loss is the same compensated sum in the same row-major order, so every
 * bit equals policyLoss's.
 *
 * Returns null, having stopped, when the rows meet anything the exact path must judge with the
 * whole result in hand (a non-finite input, an overflow, a sum past float64): the caller then runs
 * {@link policyLoss}, which throws the error it always throws or returns the result. Structural
 * errors throw here, exactly as policyLoss throws them. @internal
 *
 * @enforcedBy test/losses/policyLoss.blocks.test.ts > policyLossBlocks > identity: blocks of every size give policyLoss's bits, and null exactly where policyLoss throws or overflows
 */
export function policyLossBlocks(
  config: PolicyLossConfig,
  inputs: PolicyLossInputs,
  positions: number,
  onBlock: (b0: number, b1: number, out: PolicyOutputs) => void,
  global?: GlobalNormalizer,
): PolicyLossScalars | null {
  const fn = "policyLoss";
  const cfg = validatePolicyLossConfig(fn, config);
  const planned = planPolicyLoss(fn, cfg, inputs, undefined, global);
  // The entropy bonus adds a second `[B, T]` output (its gradient): the whole-result path writes it.
  if (cfg.entropyBonus !== null) return null;
  const { plan } = planned;
  return runRowBlocks(cfg, plan.B, plan.T, positions, (b0, b1) => rowsOf(plan, b0, b1), onBlock);
}

/** The totals of a batch read by rows, from a first pass over its mask. @internal */
export interface RowStreamTotals {
  /** Σ_b L_b, the response tokens of the whole batch. */
  readonly tokens: number;
  /** The rows whose mask has no response token. */
  readonly emptyRows: number;
}

/**
 * {@link policyLossBlocks} on a batch that is never whole in memory (`polgrad loss --out` on a
 * safetensors file, docs/performance.md#loss---out-streamed): `read(b0, b1)` returns the inputs of
 * rows [b0, b1) alone, and each block is planned on its own with the whole batch's normaliser as
 * its global context: {N, B_counted, 1} without `global` (rowTokenWeights gives those the bits of
 * no context), else `global` resolved once against the whole batch's `totals`. Every row's weight,
 * term and output, and the row-major compensated sum, are then those of policyLoss on the whole
 * batch.
 *
 * Returns null, having stopped, where policyLossBlocks does, and also for anything a block cannot
 * judge alone: any error in a block (the whole call names it against the whole batch), empty rows
 * with `emptyRows: "reject"`, a `global` the whole batch breaks, and the configs whose plan reads
 * every row before the first (`isCorrection.normalize`, `rejection`, `topEntropyQuantile`,
 * `entropyBonus`). The caller then takes the whole-batch path. @internal
 *
 * @enforcedBy test/cli/lossStreamed.test.ts > lossOutStreamed > identity: the streamed file, JSON and text are byte for byte the whole-batch path's, across dtypes, name maps, configs and block sizes
 */
export function policyLossRowStream(
  config: PolicyLossConfig,
  B: number,
  T: number,
  totals: RowStreamTotals,
  read: (b0: number, b1: number) => PolicyLossInputs | null,
  positions: number,
  onBlock: (b0: number, b1: number, out: PolicyOutputs) => void,
  global?: GlobalNormalizer,
): PolicyLossScalars | null {
  const fn = "policyLoss";
  const cfg = validatePolicyLossConfig(fn, config);
  if (
    cfg.entropyBonus !== null ||
    cfg.topEntropyQuantile !== null ||
    cfg.rejection !== null ||
    cfg.isCorrection?.normalize === true
  )
    return null;
  if (totals.emptyRows > 0 && cfg.emptyRows === "reject") return null;
  const rowsCounted = cfg.emptyRows === "drop" ? B - totals.emptyRows : B;
  let g: GlobalNormalizer;
  try {
    g =
      global === undefined
        ? { tokens: totals.tokens, rows: rowsCounted, dpSize: 1 }
        : checkGlobal(fn, "options.global", global, totals.tokens, rowsCounted);
  } catch {
    return null;
  }
  const planBlock = (b0: number, b1: number): PolicyPlan | null => {
    const inputs = read(b0, b1);
    if (inputs === null) return null;
    try {
      const { plan } = planPolicyLoss(fn, cfg, inputs, undefined, g);
      return plan.B === b1 - b0 && plan.T === T ? plan : null;
    } catch {
      return null;
    }
  };
  return runRowBlocks(cfg, B, T, positions, planBlock, onBlock);
}

/**
 * The block loop of {@link policyLossBlocks} and {@link policyLossRowStream}: rows [b0, b1) of
 * about `positions` positions at a time, each planned by `planBlock` (null: stop), run on outputs
 * reused from block to block, handed to `onBlock`, and added to one compensated sum in row-major
 * order.
 */
function runRowBlocks(
  cfg: ResolvedPolicyLossConfig,
  B: number,
  T: number,
  positions: number,
  planBlock: (b0: number, b1: number) => PolicyPlan | null,
  onBlock: (b0: number, b1: number, out: PolicyOutputs) => void,
  outputsFor: (b0: number, b1: number) => PolicyOutputs = reusedOutputs(B, T, positions),
): PolicyLossScalars | null {
  const rows = Math.max(1, Math.min(B, Math.floor(positions / Math.max(1, T))));
  const k = new Float64Array(cfg.kl === null ? 0 : T);
  const acc = new LossSums();
  const events = new Float64Array(EVENT_SLOTS);
  for (let b0 = 0; b0 < B; b0 += rows) {
    const b1 = Math.min(B, b0 + rows);
    const sub = planBlock(b0, b1);
    if (sub === null) return null;
    const out = outputsFor(b0, b1);
    runBlock(sub, out, k, 0, Int32Array.of(0, b1 - b0), events, 0, (b) =>
      accumulateRow(sub, out.objective, b, acc, k, 0),
    );
    // A stop, a KL overflow or a gradient overflow: policyLoss names it.
    if (events[0] !== ROW_OK || (events[5] as number) >= 0 || (events[8] as number) >= 0) {
      return null;
    }
    onBlock(b0, b1, out);
  }
  // finish()'s arithmetic on finite sums; anything non-finite is policyLoss's to name.
  const surrogate = acc.loss();
  if (!Number.isFinite(surrogate)) return null;
  if (cfg.kl === null) return { loss: surrogate, klLoss: null };
  const klLoss = acc.kl();
  const loss = surrogate + cfg.kl.coef * klLoss;
  if (!Number.isFinite(klLoss) || !Number.isFinite(loss)) return null;
  return { loss, klLoss };
}

/** Outputs of one block of rows at a time, reused from block to block (policyLossBlocks). */
function reusedOutputs(
  B: number,
  T: number,
  positions: number,
): (b0: number, b1: number) => PolicyOutputs {
  const rows = Math.max(1, Math.min(B, Math.floor(positions / Math.max(1, T))));
  const buf = allocOutputs(rows * T, false);
  return (b0, b1) => {
    const n = (b1 - b0) * T;
    return outputs(
      buf.grad.subarray(0, n),
      buf.objective.subarray(0, n),
      buf.ratio.subarray(0, n),
      buf.low.subarray(0, n),
      buf.high.subarray(0, n),
      false,
    );
  };
}

/**
 * The blocks' events in block order (so in row-major order): the first stop is thrown (a deferred
 * finiteness check, else the earliest objective overflow; `outputsOf(j)` holds block j's raw
 * ratios for the message), else the first KL and gradient overflows are returned.
 */
function resolveEvents(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  planned: PlannedPolicyLoss,
  events: Float64Array,
  blocks: number,
  outputsOf: (j: number) => PolicyOutputs,
): Omit<RowSums, "acc"> {
  for (let j = 0; j < blocks; j++) {
    const e = j * EVENT_SLOTS;
    if (events[e] === ROW_OK) continue;
    const ev: StopEvent = {
      at: events[e + 1] as number,
      mz: events[e + 2] as number,
      p: events[e + 3] as number,
      ell: events[e + 4] as number,
    };
    throw stopError(fn, cfg, planned, outputsOf(j), events[e] as number, ev);
  }
  let klAt = -1;
  let klValue = 0;
  let klDelta = 0;
  let gradAt = -1;
  for (let j = 0; j < blocks; j++) {
    const e = j * EVENT_SLOTS;
    if (klAt < 0 && (events[e + 5] as number) >= 0) {
      klAt = events[e + 5] as number;
      klValue = events[e + 6] as number;
      klDelta = events[e + 7] as number;
    }
    if (gradAt < 0 && (events[e + 8] as number) >= 0) gradAt = events[e + 8] as number;
  }
  return { klAt, klValue, klDelta, gradAt };
}

/** The arena the workers' share of a call lives in, reused from call to call. */
const arena = new SharedArena();

/** The arena is let go after this long without a threaded call (as the pools' idle workers). */
const ARENA_IDLE_MS = 30_000;

/**
 * A view of the arena holding `src`'s elements from `from` on. Always a copy, even of shared
 * input: a job must name no memory but the arena's (see SharedArena).
 */
function staged<A extends Float64Array | Uint8Array | Int32Array>(
  src: A,
  dst: () => A,
  from: number,
): A {
  const d = dst();
  d.set(src.subarray(from) as unknown as ArrayLike<number>, from);
  return d;
}

/**
 * Run the rows in `threads` blocks: block 0 on this thread, reading the inputs in place and
 * writing the result; the others on worker threads, reading arena copies of their rows and
 * writing arena outputs that are then copied into the result. Then the reductions here, in
 * row-major order, and the events in block order, so that the result and any error are bitwise
 * those of {@link runRows}.
 */
function runThreaded(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  planned: PlannedPolicyLoss,
  given: PolicyOutputs | undefined,
  threads: number,
): PolicyLossResult {
  const { plan } = planned;
  const { B, T } = plan;
  const n = B * T;
  const blocks0 = splitRows(plan.L, threads);
  // Workers read and write rows blocks[1] … B − 1 only: just those are copied in and out.
  const from = (blocks0[1] as number) * T;
  const out = given ?? allocOutputs(n, false);
  const streams = [plan.lp, plan.old, plan.advTok, plan.rollout, plan.ref, plan.ent].filter(
    (x) => x !== null,
  );
  // Every view the job takes from the arena, by byte length.
  const views = [
    ...(plan.kl === null ? [] : [n * 8]), // k
    (threads + 1) * 4, // blocks
    n, // mask
    B * 4, // first
    B * 4, // end
    B * 4, // L
    ...streams.map(() => n * 8), // lp, old, and advTok, rollout, ref, entropies when given
    ...(plan.advRow === null ? [] : [B * 8]),
    B * 8, // w
    ...(plan.kl === null ? [] : [B * 8]), // klW
    n * 8, // grad
    n * 8, // objective
    n * 8, // ratio
    n, // clippedLow
    n, // clippedHigh
    threads * EVENT_SLOTS * 8,
  ];
  arena.begin(SharedArena.bytesFor(views));
  const f64 = (x: Float64Array | null): Float64Array | null =>
    x === null ? null : staged(x, () => arena.f64(n), from);
  const small = <A extends Float64Array | Int32Array>(x: A, make: (n: number) => A): A =>
    staged(x, () => make(x.length), 0);
  const k = plan.kl === null ? new Float64Array(0) : arena.f64(n);
  const blocks = small(blocks0, (m) => arena.i32(m));
  const job: SharedPlan = {
    // The call's IS settings (a batch-normalised divisor is the call's, not the config's).
    cfg: plan.tis === cfg.isCorrection ? cfg : { ...cfg, isCorrection: plan.tis },
    B,
    T,
    m: staged(plan.m, () => arena.u8(n), from),
    first: small(plan.first, (m) => arena.i32(m)),
    end: small(plan.end, (m) => arena.i32(m)),
    L: small(plan.L, (m) => arena.i32(m)),
    lp: f64(plan.lp) as Float64Array,
    old: f64(plan.old) as Float64Array,
    advRow: plan.advRow === null ? null : small(plan.advRow, (m) => arena.f64(m)),
    advTok: f64(plan.advTok),
    rollout: f64(plan.rollout),
    ref: f64(plan.ref),
    ent: f64(plan.ent),
    entThreshold: plan.entThreshold,
    w: small(plan.w, (m) => arena.f64(m)),
    klW: plan.kl === null ? null : small(plan.kl.w, (m) => arena.f64(m)),
    grad: arena.f64(n),
    objective: arena.f64(n),
    ratio: arena.f64(n),
    low: arena.u8(n),
    high: arena.u8(n),
    // The arena is reused: the workers write every position of their rows, padding included.
    fresh: false,
    k,
    blocks,
    events: arena.f64(threads * EVENT_SLOTS),
  };
  const { events } = job;
  (rowBlockRunner() as NonNullable<ReturnType<typeof rowBlockRunner>>).run(job, () =>
    runBlock(plan, out, k, T, blocks, events, 0),
  );
  arena.releaseWhenIdle(ARENA_IDLE_MS);
  // Blocks the workers ran are copied into the result; a block they could not run is rerun here,
  // straight into the result (a retired worker may still read the arena: the next call gets a
  // new one).
  const shared = outputsOf(job);
  // Which blocks the workers ran, read once: a rerun below writes its own block's event slot, so
  // testing the slot again would take a rerun block for a worker's and copy the arena's stale
  // rows over it (a pool that could not start, e.g. under a V8 flag: row blocks left zero).
  const ran = Array.from(
    { length: threads },
    (_, j) => j > 0 && events[j * EVENT_SLOTS] !== BLOCK_FAILED,
  );
  const onWorker = (j: number): boolean => ran[j] === true;
  for (let j = 1; j < threads; j++) {
    if (onWorker(j)) continue;
    arena.drop();
    runBlock(plan, out, k, T, blocks, events, j);
  }
  for (let j = 1; j < threads; j++) {
    if (!onWorker(j)) continue;
    const a = (blocks[j] as number) * T;
    const z = (blocks[j + 1] as number) * T;
    out.ratio.set(shared.ratio.subarray(a, z), a);
    if (given !== undefined) {
      out.grad.set(shared.grad.subarray(a, z), a);
      out.objective.set(shared.objective.subarray(a, z), a);
      out.low.set(shared.low.subarray(a, z), a);
      out.high.set(shared.high.subarray(a, z), a);
      continue;
    }
    // A fresh result is zero outside [first, end) of each row (where the ratio alone is 1): only
    // the rows' spans are copied.
    for (let b = blocks[j] as number; b < (blocks[j + 1] as number); b++) {
      const f = plan.first[b] as number;
      const e = plan.end[b] as number;
      if (e <= f) continue;
      out.grad.set(shared.grad.subarray(f, e), f);
      out.objective.set(shared.objective.subarray(f, e), f);
      out.low.set(shared.low.subarray(f, e), f);
      out.high.set(shared.high.subarray(f, e), f);
    }
  }
  const overflows = resolveEvents(fn, cfg, planned, events, threads, (j) =>
    onWorker(j) ? shared : out,
  );
  const acc = new LossSums();
  for (let b = 0; b < B; b++) accumulateRow(plan, out.objective, b, acc, k, b * T);
  return finish(fn, cfg, planned, out, { acc, ...overflows });
}

function overflowAt(
  fn: string,
  plan: PolicyPlan,
  i: number,
  q: string,
  v: number,
  why: string,
): OverflowError {
  return overflowError(fn, q, v, [Math.floor(i / plan.T), i % plan.T], why);
}

/**
 * The error a stopped row stands for: a deferred finiteness check first (it precedes any
 * overflow), else the objective's overflow at the row's event.
 */
function stopError(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  planned: PlannedPolicyLoss,
  out: PolicyOutputs,
  ev: number,
  sc: StopEvent,
): Error {
  planned.deferred.run();
  const { plan } = planned;
  const i = sc.at;
  if (ev === ROW_BAD_INPUT) {
    // Unreachable: the kernel's finiteness test and checkFiniteAt agree on every float64.
    return new Error(`${fn}: internal error: a non-finite input passed validation`);
  }
  const a =
    plan.advTok === null
      ? (plan.advRow?.[Math.floor(i / plan.T)] as number)
      : (plan.advTok[i] as number);
  const lp = plan.lp[i] as number;
  if (ev === ROW_OBJECTIVE) {
    const token = cfg.ratio === "token";
    const which = token ? "log-ratio lp − old" : "mean log-ratio of the row";
    const lr = token ? lp - (plan.old[i] as number) : sc.mz;
    const why = plan.sur.why(which, lr, out.ratio[i] as number, a, lp);
    return overflowAt(fn, plan, i, "perTokenObjective", sc.ell, why);
  }
  return overflowAt(
    fn,
    plan,
    i,
    "perTokenObjective",
    sc.ell * sc.p,
    `TIS weight ${sc.p} × ${sc.ell}`,
  );
}

/** robustSum's scaled pass over Σ_b Σ_t w_b·term(i) in row-major order (maskedDot's fallback). */
function robustRows(plan: PolicyPlan, w: Float64Array, term: (i: number) => number): number {
  const at: number[] = [];
  for (let b = 0; b < plan.B; b++)
    for (let i = plan.first[b] as number; i < (plan.end[b] as number); i++)
      if (plan.m[i] === 1) at.push(i);
  return robustSum(at.length, (k) => {
    const i = at[k] as number;
    return (w[Math.floor(i / plan.T)] as number) * term(i);
  });
}

/** A compensated sum, or its scaled recomputation when it overflowed (maskedDot's rule). */
function robustTotal(plain: number, recompute: () => number): number {
  // ±∞: the plain sum overflowed; NaN: a sum of finite terms whose branch-free correction came
  // out NaN (t − s overflowed near 2^1024, twoSumError) — both are recomputed, scaled and exact.
  return Number.isFinite(plain) ? plain : recompute();
}

/** The scalars, in the unfused code's order of checks, and the result. */
function finish(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  planned: PlannedPolicyLoss,
  out: PolicyOutputs,
  sums: RowSums,
): PolicyLossResult {
  const { plan } = planned;
  const { objective } = out;
  const surrogate = robustTotal(sums.acc.loss(), () =>
    robustRows(plan, plan.w, (i) => objective[i] as number),
  );
  let loss = finiteOr(fn, "loss", surrogate, undefined, "Σ w·ℓ exceeds float64");
  let klLoss: number | null = null;
  if (plan.kl !== null && cfg.kl !== null) {
    if (sums.klAt >= 0) {
      const why = `the ${cfg.kl.kind} term at δ = ref − lp = ${sums.klDelta} exceeds float64`;
      throw overflowAt(fn, plan, sums.klAt, "klLoss", sums.klValue, why);
    }
    const { w } = plan.kl;
    const klp = plan.kl;
    const ref = plan.ref as Float64Array;
    const pt = new Float64Array(2);
    // The kernel's value of each KL term (its clamps included), for the scaled recomputation.
    const kTerm = (i: number): number =>
      klValueAt(klp, (ref[i] as number) - (plan.lp[i] as number), pt);
    // A ratio-weighted KL sum past float64 is named, not recomputed: its terms need the ratio.
    const klSum =
      klp.weight === "none"
        ? robustTotal(sums.acc.kl(), () => robustRows(plan, w, kTerm))
        : sums.acc.kl();
    klLoss = finiteOr(fn, "klLoss", klSum, undefined, "Σ w·k exceeds float64");
    loss = finiteOr(fn, "loss", loss + cfg.kl.coef * klLoss, undefined, "surrogate + coef·klLoss");
  }
  let entropyLoss: number | null = null;
  let gradEntropies: Matrix | null = null;
  if (cfg.entropyBonus !== null) {
    const bonus = entropyBonusTerm(fn, cfg.entropyBonus, planned, cfg.rowEpsilon);
    entropyLoss = bonus.value;
    gradEntropies = bonus.grad;
    loss = finiteOr(
      fn,
      "loss",
      loss - cfg.entropyBonus.coef * bonus.value,
      undefined,
      "loss − coef·entropyLoss",
    );
  }
  if (sums.gradAt >= 0) {
    // gradAt is the first non-finite gradient in row-major order (each row records its first).
    const i = sums.gradAt;
    throw overflowAt(
      fn,
      plan,
      i,
      "gradLogprobs",
      out.grad[i] as number,
      "∂loss/∂logprobs exceeds float64",
    );
  }
  const { B: rows, T: cols } = plan;
  return {
    loss,
    gradLogprobs: { rows, cols, data: out.grad },
    perTokenObjective: { rows, cols, data: objective },
    ratio: { rows, cols, data: out.ratio },
    clippedLow: { rows, cols, data: out.low },
    clippedHigh: { rows, cols, data: out.high },
    klLoss,
    entropyLoss,
    gradEntropies,
  };
}

/**
 * The entropy bonus's aggregate Σ w^H·H and its gradient −coef·w^H (docs/derivations/losses.md#entropy-bonus):
 * over the tokens the top-entropy mask keeps (every response token without one), w^H the bonus
 * aggregation's weights over them. With a global context its token count is the context's when
 * given (TRL's dapo divides the bonus by num_items_in_batch), else the kept tokens'.
 */
function entropyBonusTerm(
  fn: string,
  bonus: NonNullable<ResolvedPolicyLossConfig["entropyBonus"]>,
  planned: PlannedPolicyLoss,
  rowEps: number,
): { value: number; grad: Matrix } {
  const { plan } = planned;
  const { B, T, m } = plan;
  const H = plan.ent as Float64Array;
  const thr = plan.entThreshold;
  const L = new Int32Array(B);
  let N = 0;
  for (let b = 0; b < B; b++) {
    let n = 0;
    for (let i = plan.first[b] as number; i < (plan.end[b] as number); i++)
      if (m[i] === 1 && (H[i] as number) >= thr) n++;
    L[b] = n;
    N += n;
  }
  const g = planned.global;
  const ctx =
    g === undefined
      ? undefined
      : { tokens: planned.globalTokensGiven ? g.tokens : N, rows: g.rows, dpSize: g.dpSize };
  const w = rowTokenWeights(bonus.aggregation, bonus.normLen, L, N, ctx, rowEps);
  const grad = new Float64Array(B * T);
  const sum = new CompensatedSum();
  for (let b = 0; b < B; b++) {
    if (L[b] === 0) continue;
    const wb = w[b] as number;
    for (let i = plan.first[b] as number; i < (plan.end[b] as number); i++) {
      if (m[i] !== 1 || (H[i] as number) < thr) continue;
      sum.add(wb * (H[i] as number));
      grad[i] = -bonus.coef * wb;
    }
  }
  const value = finiteOr(fn, "entropyLoss", sum.value(), undefined, "Σ w·H exceeds float64");
  return { value, grad: { rows: B, cols: T, data: grad } };
}
