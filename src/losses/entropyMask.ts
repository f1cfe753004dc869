/**
 * The top-entropy-quantile token mask (Wang et al. 2025, "Beyond the 80/20 Rule: High-Entropy
 * Minority Tokens Drive Effective Reinforcement Learning for LLM Reasoning", arXiv:2506.01939;
 * TRL's `top_entropy_quantile`): only the tokens whose entropy is in the top ρ fraction of the
 * batch's response tokens keep their policy-gradient term (docs/derivations/losses.md#top-entropy-mask).
 */
import { fmtValue } from "../core/message.js";
import { quantilesOf } from "../core/quantile.js";
import type { Mask, MaskLike, MatrixLike } from "../core/tensor.js";
import { checkFiniteAt, toMask, toMatrix } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";

/**
 * The threshold of the mask: the q = 1 − ρ quantile, by linear interpolation at h = q·(n − 1)
 * (torch.quantile's default, as TRL's `get_high_entropy_mask` takes it), of the values of `H` at
 * the n positions where `m` is 1; −∞ when n = 0. Unchecked kernel: H finite there, 0 ≤ ρ ≤ 1.
 * @internal
 */
export function entropyThreshold(H: Float64Array, m: Uint8Array, rho: number): number {
  let n = 0;
  for (let i = 0; i < m.length; i++) n += m[i] as number;
  if (n === 0) return Number.NEGATIVE_INFINITY;
  const sample = new Float64Array(n);
  let k = 0;
  for (let i = 0; i < m.length; i++) if (m[i] === 1) sample[k++] = H[i] as number;
  return quantilesOf(sample, [1 - rho])[0] as number;
}

/**
 * The entropies are finite and ≥ 0 at response positions (a distribution's entropy is never
 * negative; a negative value is a caller's bug, named). @internal
 */
export function checkEntropiesAt(
  fn: string,
  x: { rows: number; cols: number; data: Float64Array },
  mask: Mask,
): void {
  checkFiniteAt(fn, "entropies", x, mask);
  const { data } = x;
  const m = mask.data;
  for (let i = 0; i < data.length; i++) {
    if (m[i] === 1 && (data[i] as number) < 0) {
      const b = Math.floor(i / x.cols);
      throw fail(
        ConfigError,
        fn,
        "entropies",
        ">= 0 at response positions (a distribution's entropy is never negative)",
        `${data[i]} at (${b}, ${i - b * x.cols})`,
      );
    }
  }
}

/**
 * The tokens the top-entropy-quantile mask keeps (what policyLoss applies with
 * `config.topEntropyQuantile`).
 *
 * Formula: keep_{b,t} = m_{b,t} ∧ H_{b,t} ≥ τ, τ = quantile_{1−ρ}({H_{b,t} : m_{b,t} = 1}) by
 * linear interpolation; no response token: nothing kept.
 * Gradient / stop-gradient: a mask (piecewise constant in H); no gradient.
 *
 * @param entropies - `[B, T]` per-token entropies, finite and ≥ 0 at response positions.
 * @param responseMask - `[B, T]` response mask (rows may be empty).
 * @param quantile - ρ ∈ [0, 1]: the fraction of tokens kept (0: the largest entropy only; 1: every token).
 * @returns The `[B, T]` mask of the kept tokens (false at padding).
 * @throws {ShapeError} E_SHAPE when the shapes differ or are not `[B, T]`.
 * @throws {MaskError} E_MASK when the mask is not 0/1.
 * @throws {NonFiniteError} E_NONFINITE when an entropy is not finite at a response position.
 * @throws {ConfigError} E_CONFIG when an entropy is negative or ρ is not in [0, 1].
 * @derivation docs/derivations/losses.md#top-entropy-mask
 * @enforcedBy test/losses/entropy.test.ts > top-entropy mask and entropy bonus > golden: ρ 0.5 of four entropies keeps the two at or above the median, the denominator keeps all four
 * @enforcedBy test/conformance/frameworks/surrogates.fixtures.test.ts > entropy terms vs verl and TRL > conformance: trl@f2cd5771 top-entropy-0.2:dapo:token masks and replays to 1e-12
 * @since 0.3.0
 */
export function topEntropyMask(
  entropies: MatrixLike,
  responseMask: MaskLike,
  quantile: number,
): Mask {
  const fn = "topEntropyMask";
  const H = toMatrix(fn, "entropies", entropies);
  const mask = toMask(
    fn,
    responseMask,
    { rows: H.rows, cols: H.cols, arg: "entropies" },
    "responseMask",
    "allow",
  );
  if (typeof quantile !== "number" || !(quantile >= 0 && quantile <= 1)) {
    throw fail(ConfigError, fn, "quantile", "a number in [0, 1]", fmtValue(quantile));
  }
  checkEntropiesAt(fn, H, mask);
  const thr = entropyThreshold(H.data, mask.data, quantile);
  const m = mask.data;
  const out = new Uint8Array(m.length);
  for (let i = 0; i < m.length; i++) out[i] = m[i] === 1 && (H.data[i] as number) >= thr ? 1 : 0;
  return { rows: H.rows, cols: H.cols, data: out };
}
