/**
 * Covariance-selected tokens (Cui et al. 2025, "The Entropy Mechanism of Reinforcement Learning
 * for Reasoning Language Models", arXiv:2505.22617; verl's `kl_cov` policy loss): the tokens whose
 * centred advantage times centred log-probability is largest are the ones that drive the policy's
 * entropy down, and KL-Cov adds a |lp − old| penalty on them
 * (docs/derivations/losses.md#kl-cov).
 */

import { checkObject } from "../advantages/checks.js";
import { overflowError } from "../core/finite.js";
import { fmtValue, mustBe } from "../core/message.js";
import { orderStatistics } from "../core/orderStatistics.js";
import { CompensatedSum } from "../core/sum.js";
import type { Mask, MaskLike, MatrixLike, VectorLike } from "../core/tensor.js";
import { broadcastAdvantages, checkFiniteAt, toMask, toMatrix } from "../core/validate.js";
import { ConfigError } from "../errors.js";

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
  const ratio = checkObject(fn, "options", options).ratio ?? DEFAULT_KL_COV_RATIO;
  if (typeof ratio !== "number" || !(ratio > 0 && ratio <= 1)) {
    throw new ConfigError(fn, "ratio", mustBe(fn, "ratio", "a number in (0, 1]", fmtValue(ratio)));
  }
  const m = mask.data;
  const idx: number[] = [];
  const sa = new CompensatedSum();
  const sl = new CompensatedSum();
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 1) continue;
    idx.push(i);
    sa.add(a[i] as number);
    sl.add(lp.data[i] as number);
  }
  const out = new Uint8Array(m.length);
  const n = idx.length;
  if (n === 0) return { rows: lp.rows, cols: lp.cols, data: out };
  const meanA = sa.value() / n;
  const meanL = sl.value() / n;
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
