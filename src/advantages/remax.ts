import { type EmptyRows, emptyRowsMaskRule } from "../aggregate/emptyRows.js";
import { checkFiniteOutput } from "../core/finite.js";
import { fmtShape } from "../core/message.js";
import type { MaskLike, Matrix, MatrixLike, VectorLike } from "../core/tensor.js";
import { checkFiniteAll, checkObject, toMask, toMatrix, toVector } from "../core/validate.js";
import { fail, ShapeError } from "../errors.js";
import { returnsOf } from "./returns.js";

/**
 * Compute ReMax per-token advantages: the return-to-go minus the greedy rollout's reward.
 *
 * Formula: G_t = Σ_{s ≥ t} m_s·r_s (returnsToGo with γ = 1, masked rewards read as 0), then
 * A_t = G_t − b_i at response positions, 0 at padding; b_i is the reward of the greedy
 * (argmax-decoded) response to row i's prompt. No whitening.
 * Gradient / stop-gradient: none; advantages are constants to every loss (sg[A]).
 *
 * @param tokenRewards - `[B, T]` per-token rewards, finite at response positions.
 * @param responseMask - The `[B, T]` response mask, ≥ 1 response token per row.
 * @param baselines - The `[B]` greedy-response rewards b_i, finite.
 * @returns The `[B, T]` advantages, exactly 0 at padding.
 * @throws {ShapeError} E_SHAPE when the shapes disagree.
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has an empty row.
 * @throws {NonFiniteError} E_NONFINITE when a reward or a baseline is not finite.
 * @throws {OverflowError} E_OVERFLOW when a return or an advantage exceeds float64.
 * @derivation docs/derivations/advantages.md#remax
 * @enforcedBy test/advantages/outcomeBaselines.test.ts > remaxAdvantages > golden: rewards [0, 0, 2] with baseline 0.5 give [1.5, 1.5, 1.5]
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b remax replays within its tolerance
 * @see Li et al. 2023, ReMax, arXiv:2310.10505
 * @enforcedBy test/advantages/emptyRows.test.ts > token-level functions with rows of no response token > identity: remaxAdvantages gives an empty row zeros and the others the bits of the batch without it, under count and drop
 * @since 0.3.0
 */
export function remaxAdvantages(
  tokenRewards: MatrixLike,
  responseMask: MaskLike,
  baselines: VectorLike,
  options: { readonly emptyRows?: EmptyRows } = {},
): Matrix {
  const fn = "remaxAdvantages";
  const x = toMatrix(fn, "tokenRewards", tokenRewards);
  const rule = emptyRowsMaskRule(
    fn,
    "options.emptyRows",
    checkObject(fn, "options", options).emptyRows,
  );
  const like = { rows: x.rows, cols: x.cols, arg: "tokenRewards" };
  const mask = toMask(fn, responseMask, like, "responseMask", rule);
  const b = toVector(fn, "baselines", baselines);
  if (b.length !== x.rows) {
    throw fail(
      ShapeError,
      fn,
      "baselines",
      `[B] = ${fmtShape([x.rows])}`,
      `shape ${fmtShape([b.length])}`,
    );
  }
  checkFiniteAll(fn, "baselines", b);
  const g = returnsOf(fn, x, mask, 1, "discount");
  const m = mask.data;
  const out = new Float64Array(g.data.length);
  for (let i = 0; i < out.length; i++) {
    if (m[i] === 1) out[i] = (g.data[i] as number) - (b[Math.floor(i / g.cols)] as number);
  }
  checkFiniteOutput(fn, "advantage", out, g.cols, m, "G_t − b exceeds float64");
  return { rows: g.rows, cols: g.cols, data: out };
}
