import { type Aggregation, checkAggregation } from "../aggregate/aggregation.js";
import {
  checkNormLen,
  fillContextWeights,
  type GlobalNormalizer,
} from "../aggregate/effectiveTokenWeights.js";
import type { EmptyRows } from "../aggregate/emptyRows.js";
import { overflowError } from "../core/finite.js";
import { fmtValue } from "../core/message.js";
import type { MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import { checkFiniteAt, checkObject, checkSameShape, toMask, toMatrix } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import { checkedMaskedDot } from "../kl/robustDot.js";

/** Options of {@link valueLoss}. */
export interface ValueLossOptions {
  /** Clip width ε of the value update around `oldValues`, or null for the unclipped loss. */
  readonly clipEps: number | null;
  /** Aggregation mode of the per-token value loss. */
  readonly aggregation: Aggregation;
  /** Budget ℓ, required iff aggregation is `token_sum_norm`. */
  readonly normLen?: number | null;
  /** The global context (docs/derivations/aggregation.md#global-normalisers); null or absent: none. */
  readonly global?: GlobalNormalizer | null;
  /** Rows with no response token: `reject` (default), `count` or `drop`, as policyLoss's config.emptyRows. */
  readonly emptyRows?: EmptyRows;
}

/** Result of {@link valueLoss}. */
export interface ValueLossResult {
  /** The aggregated value loss. */
  readonly loss: number;
  /** ∂loss/∂values in closed form, `[B, T]`, exactly 0 at padding. */
  readonly gradValues: Matrix;
  /** Fraction of response tokens whose clipped error is strictly larger (0 when unclipped). */
  readonly clippedFrac: number;
}

/**
 * Compute the (optionally clipped) PPO value loss and its gradient w.r.t. `values`.
 *
 * Formula: e = (v − R)²; unclipped ℓ = ½·e; clipped v_c = clamp(v, v_old − ε, v_old + ε) (a clamp
 * of v itself, so inside the band v_c is v bitwise), ℓ = ½·max(e, (v_c − R)²);
 * L = Σ w·ℓ with the aggregation weights w.
 * Gradient / stop-gradient: ∂L/∂v = w·(v − R) on the unclipped branch, 0 where the clipped error
 * wins strictly (v is outside the band there), half of it at a tie outside the band; old values and
 * returns are constants.
 *
 * @param values - `[B, T]` current value predictions.
 * @param oldValues - `[B, T]` value predictions at rollout time.
 * @param returns - `[B, T]` regression targets.
 * @param responseMask - `[B, T]` response mask.
 * @param options - `clipEps` (null or finite > 0), `aggregation`, `normLen`.
 * @returns loss, gradient (0 at padding) and the strict clipped fraction.
 * @throws {ShapeError} E_SHAPE when shapes differ or a stream is not 2-D.
 * @throws {MaskError} E_MASK when the mask is invalid.
 * @throws {NonFiniteError} E_NONFINITE when a stream is not finite at a response position.
 * @throws {ConfigError} E_CONFIG when clipEps is not null or a positive finite number, normLen is
 *   invalid, or options is not an object.
 * @throws {OverflowError} E_OVERFLOW when v − R, a per-token loss ½(v − R)² (past |v − R| ≈
 *   1.9e154) or the aggregated loss exceeds float64, naming the quantity and (b, t).
 * @derivation docs/derivations/losses.md#value-loss
 * @enforcedBy test/losses/valueLoss.test.ts > valueLoss > golden: clipped token_mean loss 0.7225
 * @enforcedBy test/hardening/stats.test.ts > valueLoss > regression: a squared error of 1e300 scale is an OverflowError naming position
 * @enforcedBy test/hardening/stats.test.ts > valueLoss > property: extreme values give finite results matching valueLossRef, or OverflowError
 * @enforcedBy test/aggregate/emptyRowsAndGlobal.test.ts > klLoss, reverseKlGradSurrogate and valueLoss with empty rows and a global context > identity: valueLoss weighs each token's derivative by effectiveTokenWeights under the same policy and context
 * @since 0.1.0
 */
export function valueLoss(
  values: MatrixLike,
  oldValues: MatrixLike,
  returns: MatrixLike,
  responseMask: MaskLike,
  options: ValueLossOptions,
): ValueLossResult {
  const fn = "valueLoss";
  const v = toMatrix(fn, "values", values);
  const vo = toMatrix(fn, "oldValues", oldValues);
  const R = toMatrix(fn, "returns", returns);
  checkSameShape(fn, "values", v, "oldValues", vo);
  checkSameShape(fn, "values", v, "returns", R);
  const allow =
    typeof options === "object" &&
    options !== null &&
    (options.emptyRows === "count" || options.emptyRows === "drop");
  const like = { rows: v.rows, cols: v.cols, arg: "values" };
  const mask = toMask(fn, responseMask, like, "responseMask", allow ? "allow" : "reject");
  checkFiniteAt(fn, "values", v, mask);
  checkFiniteAt(fn, "oldValues", vo, mask);
  checkFiniteAt(fn, "returns", R, mask);
  const opts = checkObject(fn, "options", options);
  const eps = opts.clipEps;
  if (eps !== null && (typeof eps !== "number" || !Number.isFinite(eps) || eps <= 0)) {
    throw fail(ConfigError, fn, "clipEps", "a positive finite number or null", fmtValue(eps));
  }
  const agg = checkAggregation(fn, "aggregation", opts.aggregation);
  const normLen = checkNormLen(fn, agg, opts.normLen);
  const n = v.rows * v.cols;
  const m = mask.data;
  const w = new Float64Array(n);
  fillContextWeights(fn, mask, agg, normLen, opts, w);
  const ell = new Float64Array(n);
  const grad = new Float64Array(n);
  let clipped = 0;
  let N = 0;
  const at = (i: number): number[] => [Math.floor(i / v.cols), i % v.cols];
  for (let i = 0; i < n; i++) {
    if (m[i] !== 1) continue;
    N++;
    const vi = v.data[i] as number;
    const Ri = R.data[i] as number;
    const d = vi - Ri;
    if (!Number.isFinite(d)) {
      throw overflowError(fn, "values - returns", d, at(i), "the exact error exceeds float64");
    }
    // ½·d² as (½·d)·d: round(d²)/2 bitwise wherever d² is finite, and finite up to |d| ≈ 1.9e154.
    const h = 0.5 * d * d;
    if (eps === null) {
      if (!Number.isFinite(h)) throw overflowError(fn, "value loss ½(v − R)²", h, at(i));
      ell[i] = h;
      grad[i] = (w[i] as number) * d;
      continue;
    }
    // The band edges may overflow to ±Infinity for |oldValues| near 1.8e308; clamping a finite v
    // into [lo, hi] then still gives the exact clamp (the true edge lies beyond every float).
    const lo = (vo.data[i] as number) - eps;
    const hi = (vo.data[i] as number) + eps;
    const vc = Math.min(Math.max(vi, lo), hi);
    const dc = vc - Ri;
    const hc = 0.5 * dc * dc;
    const worst = Math.max(h, hc);
    if (!Number.isFinite(worst)) {
      throw overflowError(fn, "value loss ½·max((v − R)², (v_c − R)²)", worst, at(i));
    }
    if (hc > h) {
      ell[i] = hc;
      clipped++;
      // Clipped branch wins only outside the band, where clamp passes no gradient.
      grad[i] = vi >= lo && vi <= hi ? (w[i] as number) * dc : 0;
    } else if (h > hc) {
      ell[i] = h;
      grad[i] = (w[i] as number) * d;
    } else {
      ell[i] = h;
      const pass = vi >= lo && vi <= hi;
      grad[i] = pass ? (w[i] as number) * d : (w[i] as number) * d * 0.5;
    }
  }
  return {
    loss: checkedMaskedDot(fn, "valueLoss", w, ell, mask),
    gradValues: { rows: v.rows, cols: v.cols, data: grad },
    clippedFrac: clipped / N,
  };
}
