/**
 * Validation of policyLoss's inputs, split for the fused kernel (docs/performance.md#validation):
 * the structural checks (types, shapes, mask values, empty rows, `[B]` advantages) run here, at
 * call entry, in the order policyLoss has always run them; the finiteness of the `[B, T]` streams at
 * response positions is checked by the kernel where it reads them. Errors keep their precedence:
 * when a structural check fails after a stream whose finiteness is deferred, that stream's
 * check runs first ({@link Deferred.guard}), and when the kernel meets a non-finite value or an
 * overflow, {@link Deferred.run} replays every deferred check in order before anything else is
 * thrown. So each input gives the error it gave before, and a valid input is read once.
 */
import {
  checkGlobal,
  type GlobalNormalizer,
  type ResolvedGlobal,
  rowTokenWeights,
} from "../../aggregate/effectiveTokenWeights.js";
import { fmtIndices } from "../../core/message.js";
import { isMask, type Mask, type Matrix, type MatrixLike } from "../../core/tensor.js";
import {
  advantagesOf,
  checkFiniteAt,
  checkMaskValues,
  checkSameShape,
  emptyRowsError,
  requireRecord,
  toMask,
  toMatrix,
} from "../../core/validate.js";
import { ConfigError, fail, MaskError } from "../../errors.js";
import type { ResolvedPolicyLossConfig } from "../config.js";
import { checkEntropiesAt, entropyThreshold } from "../entropyMask.js";
import { POLICY_LOSS_INPUTS, type PolicyLossInputs } from "../inputs.js";
import type { InputScratch } from "./inputScratch.js";
import { surrogateParams, surrogatePoint } from "./points.js";
import { type ISRows, klPlan, meanISWeight, type PolicyPlan } from "./policyRows.js";
import { rejectedMask } from "./rejection.js";

/** Finiteness checks postponed to the kernel, replayed in order when it stops. @internal */
export class Deferred {
  private readonly checks: (() => void)[] = [];

  /** Postpone `check` (it throws the stream's NonFiniteError). */
  add(check: () => void): void {
    this.checks.push(check);
  }

  /** Run every postponed check, in order; the first failing one throws. */
  run(): void {
    for (const c of this.checks) c();
  }

  /** Run `step`; when it throws, the postponed checks run first (they precede it). */
  guard<T>(step: () => T): T {
    try {
      return step();
    } catch (e) {
      this.run();
      throw e;
    }
  }
}

/** `x`, which the config requires (`why`): absent, a ConfigError naming `arg`. */
function requireStream(
  fn: string,
  arg: string,
  x: MatrixLike | null | undefined,
  why: string,
): MatrixLike {
  if (x === null || x === undefined)
    throw fail(ConfigError, fn, arg, `given when ${why}`, String(x));
  return x;
}

/**
 * The row metadata of a `[B, T]` mask in one branch-free pass per row: L_b = Σ_t m, the span
 * [first_b, end_b) of the row's ones (empty rows: [o, o)). Returns Σ_b L_b, or −1 when some
 * value is not 0/1 (the caller then names it). Its own function, not a loop inside
 * planPolicyLoss: that function's object feedback is cleared by full GCs (every call then
 * deoptimised it, and the 2^21-position loop ran in the interpreter, about 15 ms at 256×8192;
 * measured with --trace-deopt). A mask on a 4-byte boundary with T a multiple of 4 is read by
 * 32-bit words ({@link rowOnesByWord}: a quarter of the iterations; the mask pass of a 256×8192
 * plan 1.0 → 0.3 ms), any other byte by byte.
 */
function maskRows(
  m: Uint8Array,
  B: number,
  T: number,
  first: Int32Array,
  end: Int32Array,
  L: Int32Array,
): number {
  const words =
    (m.byteOffset & 3) === 0 && (T & 3) === 0
      ? new Uint32Array(m.buffer, m.byteOffset, (B * T) >> 2)
      : null;
  let N = 0;
  let bad = false;
  for (let b = 0; b < B; b++) {
    const o = b * T;
    const n = words === null ? rowOnes(m, o, T) : rowOnesByWord(words, o >> 2, T >> 2);
    if (n < 0) {
      bad = true;
      continue;
    }
    first[b] = n === 0 ? o : m.indexOf(1, o);
    end[b] = n === 0 ? o : m.lastIndexOf(1, o + T - 1) + 1;
    L[b] = n;
    N += n;
  }
  return bad ? -1 : N;
}

/** The ones among m[o … o + T): their count, or −1 when a value is not 0/1 (the OR exceeds 1). */
function rowOnes(m: Uint8Array, o: number, T: number): number {
  let n = 0;
  let or = 0;
  for (let i = o; i < o + T; i++) {
    const v = m[i] as number;
    n += v;
    or |= v;
  }
  return or > 1 ? -1 : n;
}

/**
 * {@link rowOnes} over the 32-bit words w[k … k + Tw): a word's bytes sum to the top byte of
 * word·0x01010101 when each is 0 or 1 (no carry: the partial sums stay ≤ 3), and a byte above 1
 * sets a bit of 0xFEFEFEFE in the OR of the words.
 */
function rowOnesByWord(w: Uint32Array, k: number, Tw: number): number {
  let n = 0;
  let or = 0;
  for (let j = k; j < k + Tw; j++) {
    const x = w[j] as number;
    n += Math.imul(x, 0x01010101) >>> 24;
    or |= x;
  }
  return (or & 0xfefefefe) !== 0 ? -1 : n;
}

/** A validated plan, the matrices it reads (for error messages) and its deferred checks. @internal */
export interface PlannedPolicyLoss {
  readonly plan: PolicyPlan;
  readonly deferred: Deferred;
  readonly mask: Mask;
  readonly logprobs: Matrix;
  /** The input arrays, which caller-provided outputs must not overlap. */
  readonly reads: readonly ArrayBufferView[];
  /** The resolved global context the weights were built with (undefined: the batch's own). */
  readonly global: ResolvedGlobal | undefined;
  /** Whether that context's token count was given (else it is the shard's own). */
  readonly globalTokensGiven: boolean;
}

/** Why the call needs rollout logprobs (null: it does not). */
function needsRollout(cfg: ResolvedPolicyLossConfig): string | null {
  if (cfg.isCorrection !== null) return "config.isCorrection is set";
  if (cfg.rejection !== null) return "config.rejection is set";
  if (cfg.offPolicyMask?.sampling === "rollout")
    return 'config.offPolicyMask.sampling is "rollout"';
  return null;
}

/**
 * A stream the config asks for: required (naming why), converted, of logprobs' shape; its values
 * checked finite at response positions after the streams before it (`check`: another check in
 * place of that one), and read by the kernel.
 */
function optionalStream(
  o: {
    readonly fn: string;
    readonly deferred: Deferred;
    readonly reads: ArrayBufferView[];
    readonly logprobs: Matrix;
    readonly mask: Mask;
    readonly f64: ((n: number) => Float64Array) | undefined;
  },
  name: "rolloutLogprobs" | "refLogprobs" | "entropies",
  value: MatrixLike | null | undefined,
  why: string,
  check?: (x: Matrix) => void,
): Matrix {
  const { fn, deferred } = o;
  const x = deferred.guard(() => {
    const s = toMatrix(fn, name, requireStream(fn, name, value, why), o.f64);
    checkSameShape(fn, "logprobs", o.logprobs, name, s);
    return s;
  });
  if (check === undefined) deferred.add(() => checkFiniteAt(fn, name, x, o.mask));
  else check(x);
  o.reads.push(x.data);
  return x;
}

/** The rows rejection emptied join `empty`; with emptyRows "reject" they are an error. */
function emptiedByRejection(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  L: Int32Array,
  empty: number[],
): void {
  const emptied: number[] = [];
  for (let b = 0; b < L.length; b++) if (L[b] === 0 && !empty.includes(b)) emptied.push(b);
  if (emptied.length > 0 && cfg.emptyRows === "reject") {
    throw fail(
      MaskError,
      fn,
      "responseMask",
      "left with a response token in every row by config.rejection (or config.emptyRows count or drop)",
      `every token rejected in rows ${fmtIndices(emptied)}`,
    );
  }
  for (const b of emptied) empty.push(b);
}

/** The response mask and its rows (spans, lengths, their sum, the rows with no response token). */
interface MaskedRows {
  readonly mask: Mask;
  readonly first: Int32Array;
  readonly end: Int32Array;
  readonly L: Int32Array;
  readonly N: number;
  readonly empty: number[];
}

/** The response mask converted, checked 0/1 and measured by row; empty rows per emptyRows. */
function checkedMask(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  given: PolicyLossInputs["responseMask"],
  logprobs: Matrix,
  u8: ((n: number) => Uint8Array) | undefined,
): MaskedRows {
  const like = { rows: logprobs.rows, cols: logprobs.cols, arg: "logprobs" };
  // A Mask's values are checked in the row pass below (which reads each once); when toMask
  // throws first, they are checked before it, as toMask itself orders the two.
  const checkValues = (): void => {
    if (isMask(given)) checkMaskValues(fn, "responseMask", given.data);
  };
  let mask: Mask;
  try {
    mask = toMask(fn, given, like, "responseMask", "allow", "caller", u8);
  } catch (e) {
    checkValues();
    throw e;
  }
  const { rows: B, cols: T, data: m } = mask;
  const first = new Int32Array(B);
  const end = new Int32Array(B);
  const L = new Int32Array(B);
  const N = maskRows(m, B, T, first, end, L);
  if (N < 0) checkValues();
  const empty: number[] = [];
  for (let b = 0; b < B; b++) if (L[b] === 0) empty.push(b);
  if (empty.length > 0 && cfg.emptyRows === "reject") {
    throw emptyRowsError(fn, "responseMask", empty);
  }
  return { mask, first, end, L, N, empty };
}

/** The `[B, T]` streams and advantages a call reads, converted, and their deferred checks. */
interface Streams {
  readonly deferred: Deferred;
  readonly reads: ArrayBufferView[];
  readonly rollout: Matrix | null;
  readonly ref: Matrix | null;
  readonly ent: Matrix | null;
  readonly adv: ReturnType<typeof advantagesOf>;
}

/** Why the call needs entropies (null: it does not). */
function needsEntropies(cfg: ResolvedPolicyLossConfig): string | null {
  if (cfg.topEntropyQuantile !== null) return "config.topEntropyQuantile is set";
  if (cfg.entropyBonus !== null) return "config.entropyBonus is set";
  return null;
}

/** The streams after the mask in order (rollout, ref, entropies, advantages), finiteness deferred. */
function checkedStreams(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  inputs: PolicyLossInputs,
  rows: { readonly logprobs: Matrix; readonly old: Matrix; readonly mask: Mask },
  f64: ((n: number) => Float64Array) | undefined,
): Streams {
  const { logprobs, old, mask } = rows;
  const deferred = new Deferred();
  deferred.add(() => checkFiniteAt(fn, "logprobs", logprobs, mask));
  deferred.add(() => checkFiniteAt(fn, "oldLogprobs", old, mask));
  const reads: ArrayBufferView[] = [logprobs.data, old.data, mask.data];
  const opt = { fn, deferred, reads, logprobs, mask, f64 };
  const rolloutWhy = needsRollout(cfg);
  const rollout =
    rolloutWhy === null
      ? null
      : optionalStream(opt, "rolloutLogprobs", inputs.rolloutLogprobs, rolloutWhy);
  const ref =
    cfg.kl === null
      ? null
      : optionalStream(opt, "refLogprobs", inputs.refLogprobs, "config.kl is set");
  const entWhy = needsEntropies(cfg);
  // Entropies are checked here, not in the kernel (which reads H only for the mask): after the
  // deferred checks of the streams before it when it fails.
  const ent =
    entWhy === null
      ? null
      : optionalStream(opt, "entropies", inputs.entropies, entWhy, (x) =>
          deferred.guard(() => checkEntropiesAt(fn, x, mask)),
        );
  const adv = deferred.guard(() =>
    advantagesOf(fn, inputs.advantages, logprobs, "logprobs", "advantages", f64),
  );
  if (adv.token !== null) {
    const a = adv.token;
    deferred.add(() => checkFiniteAt(fn, "advantages", a, mask));
    reads.push(a.data);
  }
  return { deferred, reads, rollout, ref, ent, adv };
}

/** The tokens the loss sees (the mask after rejection, re-measured) and their entropy threshold. */
function keptTokens(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  rows: MaskedRows,
  old: Matrix,
  s: Streams,
): Kept {
  const { mask, first, end, L } = rows;
  const { rows: B, cols: T } = mask;
  // Rejection sampling takes tokens and rows out of the mask before anything is aggregated: the
  // streams are checked finite first (a rejected position is still a response position given).
  let mk = mask.data;
  let Nk = rows.N;
  let isRows: ISRows | null = null;
  if (cfg.rejection !== null) {
    s.deferred.run();
    // IS weights are formed on the mask as given, as verl forms them before it rejects.
    if (cfg.isCorrection !== null)
      isRows = { m: mask.data, first: first.slice(), end: end.slice(), L: L.slice() };
    mk = rejectedMask(
      cfg.rejection,
      mask.data,
      B,
      first,
      end,
      old.data,
      (s.rollout as Matrix).data,
    );
    Nk = maskRows(mk, B, T, first, end, L);
    emptiedByRejection(fn, cfg, L, rows.empty);
  }
  // The top-entropy mask's threshold: the (1 − ρ) quantile of the response tokens' entropies,
  // after rejection (the tokens the loss sees), the streams checked first (it reads them).
  let entThreshold = Number.NEGATIVE_INFINITY;
  if (cfg.topEntropyQuantile !== null) {
    s.deferred.run();
    entThreshold = entropyThreshold((s.ent as Matrix).data, mk, cfg.topEntropyQuantile);
  }
  return { m: mk, N: Nk, entThreshold, isRows };
}

/** The tokens the loss sees, their entropy threshold, and the rows IS weights are formed on. */
interface Kept {
  readonly m: Uint8Array;
  readonly N: number;
  readonly entThreshold: number;
  readonly isRows: ISRows | null;
}

/** The normalisers' global context (options.global, or the rows emptyRows counts) and its source. */
function normaliserContext(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  B: number,
  emptyRows: number,
  N: number,
  global: unknown,
): { readonly g: ResolvedGlobal | undefined; readonly tokensGiven: boolean } {
  // Rows with no response token: "count" keeps them in the row means' B, "drop" leaves them out
  // (docs/derivations/aggregation.md#rows-with-no-response-token); either way they have no term.
  const rowsCounted = cfg.emptyRows === "drop" ? B - emptyRows : B;
  const g =
    global === undefined
      ? rowsCounted === B
        ? undefined
        : { tokens: N, rows: rowsCounted, dpSize: 1 }
      : checkGlobal(fn, "options.global", global, N, rowsCounted);
  // checkGlobal accepted `global` as a GlobalNormalizer when it is given.
  return { g, tokensGiven: (global as GlobalNormalizer | undefined)?.tokens != null };
}

/** The kernel's plan: the rows, the streams, the row weights and the config's resolved stages. */
function buildPlan(
  cfg: ResolvedPolicyLossConfig,
  rows: MaskedRows,
  lp: Matrix,
  old: Matrix,
  s: Streams,
  kept: Kept,
  g: ResolvedGlobal | undefined,
): PolicyPlan {
  const { first, end, L } = rows;
  const { rollout, ref, ent, adv } = s;
  const Nk = kept.N;
  return {
    B: rows.mask.rows,
    T: rows.mask.cols,
    m: kept.m,
    first,
    end,
    L,
    lp: lp.data,
    old: old.data,
    advRow: adv.row,
    advTok: adv.token === null ? null : adv.token.data,
    rollout: rollout === null ? null : rollout.data,
    ref: ref === null ? null : ref.data,
    ratio: cfg.ratio,
    sur: surrogatePoint(cfg),
    params: surrogateParams(cfg),
    w: rowTokenWeights(cfg.aggregation, cfg.normLen, L, Nk, g, cfg.rowEpsilon),
    tis: cfg.isCorrection,
    isRows: kept.isRows,
    kl:
      cfg.kl === null
        ? null
        : klPlan(
            cfg.kl,
            rowTokenWeights(cfg.kl.aggregation, cfg.kl.normLen, L, Nk, g, cfg.rowEpsilon),
          ),
    rclamp: cfg.ratioClamp,
    vespo: cfg.vespo,
    ent: ent === null ? null : ent.data,
    entThreshold: kept.entThreshold,
    entMask: cfg.topEntropyQuantile !== null,
    opsm:
      cfg.offPolicyMask === null
        ? null
        : {
            threshold: cfg.offPolicyMask.threshold,
            sampling:
              cfg.offPolicyMask.sampling === "rollout" ? (rollout as Matrix).data : old.data,
          },
  };
}

/** The plan with its IS weights rescaled to mean 1 when the IS correction normalises them. */
function normalizedIS(cfg: ResolvedPolicyLossConfig, plan: PolicyPlan): PolicyPlan {
  if (cfg.isCorrection === null || !cfg.isCorrection.normalize) return plan;
  // Rescale to mean 1 (verl's rollout_is_batch_normalize): divide only when the mean exceeds
  // 1e-8, as verl's code has it. The same plan, with the call's divisor in its IS settings.
  const mean = meanISWeight(plan);
  return mean > 1e-8 ? { ...plan, tis: { ...cfg.isCorrection, div: mean } } : plan;
}

/**
 * Validate `inputs` for `cfg` structurally (see the header) and build the kernel's plan: row spans
 * and lengths from one pass over the mask, per-row aggregation weights, the surrogate's point
 * function. @internal
 */
export function planPolicyLoss(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  inputs: PolicyLossInputs,
  scratch?: InputScratch,
  global?: unknown,
): PlannedPolicyLoss {
  requireRecord(fn, "inputs", inputs, POLICY_LOSS_INPUTS);
  // Converted streams go to the call's scratch when it has one (reused memory).
  const f64 = scratch?.f64;
  const logprobs = toMatrix(fn, "logprobs", inputs.logprobs, f64);
  const old = toMatrix(fn, "oldLogprobs", inputs.oldLogprobs, f64);
  checkSameShape(fn, "logprobs", logprobs, "oldLogprobs", old);
  const rows = checkedMask(fn, cfg, inputs.responseMask, logprobs, scratch?.u8);
  const { mask } = rows;
  const s = checkedStreams(fn, cfg, inputs, { logprobs, old, mask }, f64);
  const kept = keptTokens(fn, cfg, rows, old, s);
  const { g, tokensGiven } = normaliserContext(
    fn,
    cfg,
    mask.rows,
    rows.empty.length,
    kept.N,
    global,
  );
  const plan = normalizedIS(cfg, buildPlan(cfg, rows, logprobs, old, s, kept, g));
  const { deferred, reads } = s;
  return { plan, deferred, mask, logprobs, reads, global: g, globalTokensGiven: tokensGiven };
}
