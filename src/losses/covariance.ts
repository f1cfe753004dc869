/**
 * Covariance-selected tokens (Cui et al. 2025, "The Entropy Mechanism of Reinforcement Learning
 * for Reasoning Language Models", arXiv:2505.22617; verl's `kl_cov` policy loss): the tokens whose
 * centred advantage times centred log-probability is largest are the ones that drive the policy's
 * entropy down, and KL-Cov adds a |lp − old| penalty on them
 * (docs/derivations/losses.md#kl-cov).
 */

import { overflowError } from "../core/finite.js";
import { fmtValue, mustBe } from "../core/message.js";
import { orderStatistics } from "../core/orderStatistics.js";
import { createRng } from "../core/rng.js";
import { CompensatedSum } from "../core/sum.js";
import type { Mask, MaskLike, Matrix, MatrixLike, VectorLike } from "../core/tensor.js";
import {
  broadcastAdvantages,
  checkFiniteAt,
  checkObject,
  checkSameShape,
  toMask,
  toMatrix,
} from "../core/validate.js";
import { ConfigError, fail, OverflowError } from "../errors.js";

/** Require a selection fraction in (0, 1]. */
function checkRatio(fn: string, ratio: unknown): number {
  if (typeof ratio !== "number" || !(ratio > 0 && ratio <= 1)) {
    throw fail(ConfigError, fn, "ratio", "a number in (0, 1]", fmtValue(ratio));
  }
  return ratio;
}

/** N and the compensated means Ā, l̄ of the advantages and logprobs over the response tokens. */
function responseMeans(
  m: Uint8Array,
  a: Float64Array,
  lp: Float64Array,
): { readonly N: number; readonly meanA: number; readonly meanL: number } {
  const sa = new CompensatedSum();
  const sl = new CompensatedSum();
  let N = 0;
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 1) continue;
    N++;
    sa.add(a[i] as number);
    sl.add(lp[i] as number);
  }
  return { N, meanA: sa.value() / N, meanL: sl.value() / N };
}

/** verl's default `kl_cov_ratio` (actor.policy_loss.kl_cov_ratio). */
export const DEFAULT_KL_COV_RATIO: number = 0.0002;

/** Options of {@link klCovSelection}. */
export interface KlCovOptions {
  /** The fraction of response tokens selected, in (0, 1] (default 2e-4, verl's). */
  readonly ratio?: number;
}

/**
 * Select KL-Cov's tokens: the k response tokens of largest covariance term.
 *
 * Formula: over the N response tokens in row-major order, c_i = (A_i − Ā)(lp_i − l̄) with Ā and
 * l̄ the means over those tokens (compensated sums); k = max(1, ⌊N·ratio⌋); the selected tokens
 * are the k largest c_i (ties: the earlier flat index first; verl's torch.topk leaves ties
 * unspecified). N = 0 selects nothing.
 * Gradient / stop-gradient: the selection is data (sg[lp]); KL-Cov's loss is then
 * −A·r + coef·|lp − old| at the selected tokens, which policyLoss computes as surrogate `pg` plus a
 * KL term `{kind: "abs", coef}` against refLogprobs = old at the selected tokens and lp elsewhere
 * (|lp − lp| = 0 with derivative 0 there, as torch's abs at 0).
 *
 * @param advantages - `[B]` or `[B, T]` advantages, finite at response positions.
 * @param logprobs - `[B, T]` current-policy logprobs, finite at response positions.
 * @param responseMask - `[B, T]` response mask (rows may be empty).
 * @param options - `ratio`.
 * @returns The `[B, T]` mask of the selected tokens.
 * @throws {ShapeError} E_SHAPE when the shapes differ or are not `[B]` / `[B, T]`.
 * @throws {MaskError} E_MASK when the mask is not 0/1.
 * @throws {NonFiniteError} E_NONFINITE when an advantage or a logprob is not finite at a response
 *   position.
 * @throws {ConfigError} E_CONFIG when ratio is not a number in (0, 1] or options is not an object.
 * @throws {OverflowError} E_OVERFLOW when a covariance term is not representable (NaN).
 * @derivation docs/derivations/losses.md#kl-cov
 * @enforcedBy test/losses/covariance.test.ts > klCovSelection > golden: the largest covariance term of five tokens, and ratio 0.4 selects two
 * @enforcedBy test/conformance/frameworks/surrogates.fixtures.test.ts > KL-Cov vs verl > conformance: verl@1dda039b kl_cov:token-mean selections match and the composed loss replays to 1e-12
 * @since 0.1.0
 */
export function klCovSelection(
  advantages: VectorLike | MatrixLike,
  logprobs: MatrixLike,
  responseMask: MaskLike,
  options: KlCovOptions = {},
): Mask {
  const fn = "klCovSelection";
  const lp = toMatrix(fn, "logprobs", logprobs);
  const mask = toMask(
    fn,
    responseMask,
    { rows: lp.rows, cols: lp.cols, arg: "logprobs" },
    "responseMask",
    "allow",
  );
  checkFiniteAt(fn, "logprobs", lp, mask);
  const a = broadcastAdvantages(fn, advantages, lp, "logprobs", mask).data;
  const ratio = checkRatio(fn, checkObject(fn, "options", options).ratio ?? DEFAULT_KL_COV_RATIO);
  const m = mask.data;
  const idx: number[] = [];
  for (let i = 0; i < m.length; i++) if (m[i] === 1) idx.push(i);
  const out = new Uint8Array(m.length);
  const n = idx.length;
  if (n === 0) return { rows: lp.rows, cols: lp.cols, data: out };
  const { meanA, meanL } = responseMeans(m, a, lp.data);
  const cov = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const i = idx[j] as number;
    const c = ((a[i] as number) - meanA) * ((lp.data[i] as number) - meanL);
    if (Number.isNaN(c)) {
      const b = Math.floor(i / lp.cols);
      throw overflowError(fn, "covariance term (A − mean A)·(lp − mean lp)", c, [
        b,
        i - b * lp.cols,
      ]);
    }
    cov[j] = c;
  }
  const k = Math.max(1, Math.floor(n * ratio));
  // The k-th largest term by selection (O(N)), then every term above it and, in index order,
  // as many equal to it as k still needs: the k largest, earlier index first among equals.
  const kth = orderStatistics(Float64Array.from(cov), [n - k])[0] as number;
  let left = k;
  for (let j = 0; j < n; j++) {
    if ((cov[j] as number) > kth) {
      out[idx[j] as number] = 1;
      left--;
    }
  }
  for (let j = 0; j < n && left > 0; j++) {
    if (cov[j] === kth) {
      out[idx[j] as number] = 1;
      left--;
    }
  }
  return { rows: lp.rows, cols: lp.cols, data: out };
}

/** verl's Clip-Cov defaults (actor.policy_loss.clip_cov_ratio, clip_cov_lb, clip_cov_ub). */
export const DEFAULT_CLIP_COV = { ratio: 0.0002, lb: 1, ub: 5 } as const;

/** Options of {@link clipCovSelection}. */
export interface ClipCovOptions {
  /** The PPO band: ε_lo and ε_hi (verl: clip_ratio_low / clip_ratio_high, 0.2). */
  readonly clip: { readonly epsLow: number; readonly epsHigh: number };
  /** The fraction of response tokens selected at most, in (0, 1] (default 2e-4). */
  readonly ratio?: number;
  /** The open covariance band (lb, ub) of the candidates (defaults 1 and 5). */
  readonly lb?: number;
  readonly ub?: number;
  /**
   * The order in which candidates are taken: a permutation of 0 … n − 1 over the n candidates in
   * row-major order (e.g. the torch.randperm upstream drew), or absent for a seeded shuffle.
   */
  readonly permutation?: readonly number[] | null;
  /** The seed of the shuffle when no permutation is given (default 0). */
  readonly seed?: number;
}

/** Clip-Cov's candidates (row-major) and the selected tokens. */
export interface ClipCovSelection {
  /** Response tokens the clip does not bind at, with covariance term strictly inside (lb, ub). */
  readonly candidates: Mask;
  /** The first min(k, n) candidates in the permutation's order, k = max(1, ⌊N·ratio⌋). */
  readonly selected: Mask;
}

/**
 * Select Clip-Cov's tokens (Cui et al. 2025, arXiv:2505.22617; verl's `clip_cov` policy loss).
 *
 * Formula: r = exp(lp − old); a response token is clipped by origin when
 * −A·clamp(r, 1 − ε_lo, 1 + ε_hi) > −A·r; c_i = (A_i − Ā)(lp_i − l̄) with the means over the N
 * response tokens; the candidates are the unclipped response tokens with lb < c_i < ub, in
 * row-major order; k = max(1, ⌊N·ratio⌋); the selected tokens are the candidates at
 * permutation[0 … min(k, n) − 1]. Without a permutation, a Fisher–Yates shuffle seeded by `seed`
 * (verl draws torch.randperm; its stream is torch's, so a replay passes the recorded permutation).
 * Gradient / stop-gradient: the selection is data. Clip-Cov's loss is the pg_clip loss (no dual
 * clip) with the selected tokens' terms multiplied by 0 and the denominators unchanged:
 * {@link clipCovInputs} builds the inputs that give it through a token IS weight.
 *
 * @param advantages - `[B]` or `[B, T]` advantages, finite at response positions.
 * @param logprobs - `[B, T]` current logprobs, finite at response positions.
 * @param oldLogprobs - `[B, T]` old logprobs, finite at response positions.
 * @param responseMask - `[B, T]` response mask (rows may be empty).
 * @param options - clip, ratio, lb, ub, permutation or seed.
 * @returns The candidates and the selection.
 * @throws {ShapeError} E_SHAPE when the shapes differ.
 * @throws {MaskError} E_MASK when the mask is not 0/1.
 * @throws {NonFiniteError} E_NONFINITE when a stream is not finite at a response position.
 * @throws {ConfigError} E_CONFIG when clip, ratio, lb < ub, the permutation (of the n candidates)
 *   or the seed break their rules, or options is not an object.
 * @derivation docs/derivations/losses.md#clip-cov
 * @enforcedBy test/losses/covariance.test.ts > clipCovSelection > golden: candidates in the band and unclipped, the permutation's first k, and the seeded shuffle
 * @enforcedBy test/conformance/frameworks/surrogates.fixtures.test.ts > Clip-Cov vs verl > conformance: verl@1dda039b clip_cov:token-mean candidates and selections match with upstream's permutation, and the composed loss replays to 1e-12
 * @since 0.1.0
 */
export function clipCovSelection(
  advantages: VectorLike | MatrixLike,
  logprobs: MatrixLike,
  oldLogprobs: MatrixLike,
  responseMask: MaskLike,
  options: ClipCovOptions,
): ClipCovSelection {
  const fn = "clipCovSelection";
  const lp = toMatrix(fn, "logprobs", logprobs);
  const old = toMatrix(fn, "oldLogprobs", oldLogprobs);
  checkSameShape(fn, "logprobs", lp, "oldLogprobs", old);
  const like = { rows: lp.rows, cols: lp.cols, arg: "logprobs" };
  const mask = toMask(fn, responseMask, like, "responseMask", "allow");
  checkFiniteAt(fn, "logprobs", lp, mask);
  checkFiniteAt(fn, "oldLogprobs", old, mask);
  const a = broadcastAdvantages(fn, advantages, lp, "logprobs", mask).data;
  const opts = checkObject(fn, "options", options);
  const clip = opts.clip as ClipCovOptions["clip"] | undefined;
  const positive = (x: unknown): boolean => typeof x === "number" && Number.isFinite(x) && x > 0;
  if (
    typeof clip !== "object" ||
    clip === null ||
    !positive(clip.epsLow) ||
    !positive(clip.epsHigh)
  ) {
    throw fail(
      ConfigError,
      fn,
      "clip",
      "{epsLow, epsHigh}, each a positive finite number",
      fmtValue(clip),
    );
  }
  const ratio = checkRatio(fn, opts.ratio ?? DEFAULT_CLIP_COV.ratio);
  const lb = opts.lb ?? DEFAULT_CLIP_COV.lb;
  const ub = opts.ub ?? DEFAULT_CLIP_COV.ub;
  if (typeof lb !== "number" || typeof ub !== "number" || !(lb < ub)) {
    throw fail(
      ConfigError,
      fn,
      "lb",
      "a number below ub (the open band (lb, ub))",
      `lb ${fmtValue(lb)}, ub ${fmtValue(ub)}`,
    );
  }
  const m = mask.data;
  const lo = 1 - clip.epsLow;
  const hi = 1 + clip.epsHigh;
  const candidates = new Uint8Array(m.length);
  const selected = new Uint8Array(m.length);
  const shape = (data: Uint8Array): Mask => ({ rows: lp.rows, cols: lp.cols, data });
  const { N, meanA, meanL } = responseMeans(m, a, lp.data);
  if (N === 0) return { candidates: shape(candidates), selected: shape(selected) };
  const at: number[] = [];
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 1) continue;
    const ai = a[i] as number;
    const r = Math.exp((lp.data[i] as number) - (old.data[i] as number));
    const rc = Math.min(Math.max(r, lo), hi);
    // −A·clamp(r) > −A·r: the clip binds (the same test as torch's on the two loss terms).
    if (-ai * rc > -ai * r) continue;
    const c = (ai - meanA) * ((lp.data[i] as number) - meanL);
    if (c > lb && c < ub) {
      candidates[i] = 1;
      at.push(i);
    }
  }
  const n = at.length;
  const perm = opts.permutation ?? null;
  let order: number[];
  if (perm !== null) {
    const ok =
      Array.isArray(perm) &&
      perm.length === n &&
      new Set(perm).size === n &&
      perm.every((j) => Number.isInteger(j) && j >= 0 && j < n);
    if (!ok) {
      throw fail(
        ConfigError,
        fn,
        "permutation",
        `a permutation of 0 … ${n - 1} (the ${n} candidates)`,
        fmtValue(perm),
      );
    }
    order = [...perm];
  } else {
    const rng = createRng(opts.seed ?? 0);
    order = Array.from({ length: n }, (_, j) => j);
    for (let j = n - 1; j > 0; j--) {
      const k = rng.int(0, j);
      const t = order[j] as number;
      order[j] = order[k] as number;
      order[k] = t;
    }
  }
  const k = Math.min(Math.max(1, Math.floor(N * ratio)), n);
  for (let j = 0; j < k; j++) selected[at[order[j] as number] as number] = 1;
  return { candidates: shape(candidates), selected: shape(selected) };
}

/**
 * The inputs under which policyLoss computes Clip-Cov's loss: the given inputs with
 * rolloutLogprobs = old at every token but the selected, where it is old + 800, so that with
 * `isCorrection: {level: "token", cap: null}` each token's IS weight exp(old − rollout) is exactly
 * 1 (exp(0)) or exactly 0 (exp(−800) underflows): the selected terms are multiplied by 0 and every
 * denominator is unchanged, verl's `corr`. The config is Clip-Cov's PPO loss: surrogate pg_clip
 * without a dual clip, the aggregation of the run.
 *
 * @param inputs - The batch (its rolloutLogprobs must be absent: the weight slot is taken).
 * @param selection - The selected tokens (clipCovSelection's `selected`).
 * @returns The inputs with the rollout stream set.
 * @throws {ConfigError} E_CONFIG when inputs already carry rolloutLogprobs.
 * @throws {OverflowError} E_OVERFLOW when an old logprob is so large that old + 800 − old does not
 *   underflow the weight (|old| beyond about 1e17).
 * @derivation docs/derivations/losses.md#clip-cov
 * @enforcedBy test/losses/covariance.test.ts > clipCovSelection > identity: the composed loss zeroes exactly the selected terms and keeps every denominator
 * @since 0.1.0
 */
export function clipCovInputs<
  I extends { readonly oldLogprobs: MatrixLike; readonly rolloutLogprobs?: MatrixLike | null },
>(inputs: I, selection: Mask): I & { readonly rolloutLogprobs: Matrix } {
  const fn = "clipCovInputs";
  const x = checkObject(fn, "inputs", inputs);
  if (x.rolloutLogprobs !== undefined && x.rolloutLogprobs !== null) {
    throw fail(
      ConfigError,
      fn,
      "inputs.rolloutLogprobs",
      "absent (Clip-Cov's zero weights take the token IS slot)",
      "a stream",
    );
  }
  const old = toMatrix(fn, "inputs.oldLogprobs", x.oldLogprobs);
  const sel = toMask(
    fn,
    selection,
    { rows: old.rows, cols: old.cols, arg: "inputs.oldLogprobs" },
    "selection",
    "allow",
  );
  const roll = Float64Array.from(old.data);
  for (let i = 0; i < roll.length; i++) {
    if (sel.data[i] !== 1) continue;
    const v = (old.data[i] as number) + 800;
    if (!((old.data[i] as number) - v < -746)) {
      const b = Math.floor(i / old.cols);
      throw new OverflowError(
        fn,
        "inputs.oldLogprobs",
        mustBe(
          fn,
          "inputs.oldLogprobs",
          "small enough that old + 800 is 800 above it (a zero IS weight)",
          `${old.data[i]} at (${b}, ${i - b * old.cols})`,
        ),
      );
    }
    roll[i] = v;
  }
  return { ...x, rolloutLogprobs: { rows: old.rows, cols: old.cols, data: roll } };
}
