import { type EmptyRows, emptyRowsMaskRule } from "../aggregate/emptyRows.js";
import { checkFiniteOutput } from "../core/finite.js";
import { oneOf } from "../core/names.js";
import { maxAbsOf, meanAndSs, pow2Scale } from "../core/scale.js";
import { CompensatedSum } from "../core/sum.js";
import type { MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import {
  checkEps,
  checkFiniteAll,
  checkFlag,
  checkObject,
  toMask,
  toMatrix,
  zeroDenominator,
} from "../core/validate.js";
import { fail, MaskError } from "../errors.js";

/** Options of {@link whiten}. */
export interface WhitenOptions {
  /** Keep the output centered (true) or add the masked mean μ back (false). @defaultValue true */
  readonly shiftMean?: boolean;
  /** The regularizer of the variance (see `epsForm`). @defaultValue 1e-8 */
  readonly eps?: number;
  /** Bessel-corrected variance (÷ (n − 1), verl) or the population variance (÷ n, OpenRLHF). @defaultValue true */
  readonly unbiased?: boolean;
  /** `"add"`: 1/sqrt(σ² + eps) (verl); `"floor"`: 1/sqrt(max(σ², eps)) (OpenRLHF). @defaultValue "add" */
  readonly epsForm?: "add" | "floor";
  /** Divide by the std (true) or only centre (false: OpenRLHF's `no_std_norm`). @defaultValue true */
  readonly scale?: boolean;
  /**
   * Added to the token count n of both masked means, as verl's `masked_mean` adds 1e-8 (it
   * survives only when the mask is float64; an integer mask's count rounds it away in float32).
   * A framework-numerics option: 0 is the exact statistic. @defaultValue 0
   */
  readonly countEps?: number;
  /**
   * Rows with no response token: `reject` (default), `count` or `drop` (the same for a
   * token-weighted statistic: such a row adds nothing and gets zeros). @defaultValue "reject"
   */
  readonly emptyRows?: EmptyRows;
}

/**
 * Whiten a `[B, T]` tensor with the masked (token-weighted) mean and variance of the batch.
 *
 * Formula: over the n response positions, μ = Σ m·x / n, σ² = Σ m·(x − μ)² / (n − 1) (÷ n with
 * `unbiased` false), out = (x − μ)·(1/sqrt(σ² + eps)) (`epsForm` "add") or
 * (x − μ)·(1/sqrt(max(σ², eps))) ("floor"), or x − μ with `scale` false; + μ when `shiftMean` is
 * false; 0 at padding. The default output has masked mean 0 (μ with shiftMean false) and masked
 * variance σ²/(σ² + eps). Note eps sits *inside* the square root here, unlike grpoAdvantages and
 * reinforcePPAdvantages. With `countEps` c (verl's numerics) μ = Σ m·x/(n + c) and
 * σ² = (Σ m·(x − μ)²/(n + c))·n/(n − 1).
 * Sums: compensated, over response positions in row-major order; padding is never read.
 * Gradient / stop-gradient: none; used on advantages, which are constants to every loss (sg[A]).
 *
 * @param x - The `[B, T]` values, finite everywhere (padding included, as in polgrad).
 * @param responseMask - The `[B, T]` response mask, ≥ 1 response token per row and ≥ 2 in total
 *   (≥ 1 when the variance is not Bessel-corrected or not used).
 * @param options - `shiftMean` (default true), `eps` (default 1e-8), `unbiased` (default true),
 *   `epsForm` (default "add"), `scale` (default true), `countEps` (default 0).
 * @returns The `[B, T]` whitened values, exactly 0 at padding.
 * @throws {ShapeError} E_SHAPE when x is not 2-D or the mask shape differs.
 * @throws {NonFiniteError} E_NONFINITE when x holds NaN or ±Inf anywhere.
 * @throws {MaskError} E_MASK when the mask is not 0/1, has an empty row, or has too few response
 *   tokens for the variance.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when epsForm is not "add" or "floor".
 * @throws {ConfigError} E_CONFIG when shiftMean/unbiased/scale are not booleans, eps or countEps is
 *   negative or not finite, or eps is 0 and every response value is equal (0/0).
 * @throws {OverflowError} E_OVERFLOW when an output exceeds float64 (only possible with shiftMean
 *   false); values near ±1.8e308 or ±1e-300 are otherwise handled by power-of-two rescaling.
 * @derivation docs/derivations/advantages.md#whitening
 * @enforcedBy test/advantages/whiten.test.ts > whiten > golden: x = [1, 2, 3, 4] gives (x − 2.5)/sqrt(5/3 + 1e-8)
 * @enforcedBy test/advantages/whiten.test.ts > whiten > property: masked mean is 0 and masked variance is σ²/(σ² + eps)
 * @enforcedBy test/advantages/whiten.test.ts > whiten > mask invariance: finite junk in the padding never reaches the output (bitwise)
 * @enforcedBy test/advantages/groupPolicies.test.ts > whiten > golden: OpenRLHF's biased floor form and centring only on [1, 2, 3, 4]
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b masked_whiten:shift_mean=True:float64-mask replays within its tolerance
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: openrlhf@3c3be623 whiten replays within its tolerance
 * @enforcedBy test/hardening/stats.test.ts > whiten > identity: whiten is invariant under x × 2^k with eps 0 (bitwise)
 * @enforcedBy test/advantages/emptyRows.test.ts > token-level functions with rows of no response token > identity: whiten gives an empty row zeros and the others the bits of the batch without it, under count and drop
 * @since 0.1.0
 */
export function whiten(x: MatrixLike, responseMask: MaskLike, options: WhitenOptions = {}): Matrix {
  const fn = "whiten";
  const xm = toMatrix(fn, "x", x);
  checkFiniteAll(fn, "x", xm.data, xm.cols);
  const opts = checkObject(fn, "options", options);
  const rule = emptyRowsMaskRule(fn, "options.emptyRows", opts.emptyRows);
  const mask = toMask(
    fn,
    responseMask,
    { rows: xm.rows, cols: xm.cols, arg: "x" },
    "responseMask",
    rule,
  );
  const m = mask.data;
  const shiftMean = checkFlag(fn, "options.shiftMean", opts.shiftMean ?? true);
  const eps = checkEps(fn, "options.eps", opts.eps ?? 1e-8);
  const unbiased = checkFlag(fn, "options.unbiased", opts.unbiased ?? true);
  const floor = oneOf(fn, "options.epsForm", opts.epsForm ?? "add", ["add", "floor"]) === "floor";
  const scaled = checkFlag(fn, "options.scale", opts.scale ?? true);
  const countEps = checkEps(fn, "options.countEps", opts.countEps ?? 0);
  let n = 0;
  for (let i = 0; i < m.length; i++) n += m[i] as number;
  const need = scaled && unbiased ? 2 : 1;
  if (n < need) {
    throw fail(
      MaskError,
      fn,
      "responseMask",
      need === 2
        ? "a mask with at least 2 response tokens in total (Bessel-corrected variance)"
        : "a mask with at least 1 response token",
      `${n} response token(s)`,
    );
  }

  const data = xm.data;
  const idx = new Int32Array(n);
  for (let i = 0, k = 0; i < m.length; i++) if (m[i] === 1) idx[k++] = i;
  // Statistics on x·s (s = 2^k from max |x| over response positions; 1 on moderate values, where
  // this is bitwise the plain formula): no sum, deviation or square overflows or underflows.
  const s = pow2Scale(maxAbsOf(data, idx));
  const at = (k: number) => (data[idx[k] as number] as number) * s;
  let mean: number;
  let variance: number;
  if (countEps === 0) {
    const st = meanAndSs(n, at);
    mean = st.mean;
    variance = st.ss / (unbiased ? n - 1 : n);
  } else {
    // verl's arithmetic: both means over n + c, then the Bessel factor n/(n − 1).
    const sum = new CompensatedSum();
    for (let k = 0; k < n; k++) sum.add(at(k));
    mean = sum.value() / (n + countEps);
    const ss = new CompensatedSum();
    for (let k = 0; k < n; k++) {
      const d = at(k) - mean;
      ss.add(d * d);
    }
    variance = ss.value() / (n + countEps);
    if (unbiased) variance *= n / (n - 1);
  }
  let invStd = 1;
  if (scaled) {
    if (variance === 0 && eps === 0)
      throw zeroDenominator(fn, "options.eps", "every response value is equal (zero variance)");
    // 1/sqrt(σ² + eps) in the units of s: 1/sqrt(σ'² + eps·s²). When eps·s² is not representable
    // exactly enough (it overflows for tiny x, or is 0 while σ' = 0 for huge x), use the
    // overflow-safe hypot(σ', s·√eps) instead. The floor form compares σ'² with eps·s² likewise.
    const epsS2 = eps * s * s;
    const exact = s === 1 || (Number.isFinite(epsS2) && (epsS2 > 0 || eps === 0) && variance > 0);
    if (floor) {
      invStd = exact
        ? 1 / Math.sqrt(Math.max(variance, epsS2))
        : 1 / Math.max(Math.sqrt(variance), s * Math.sqrt(eps));
    } else {
      invStd = exact
        ? 1 / Math.sqrt(variance + epsS2)
        : 1 / Math.hypot(Math.sqrt(variance), s * Math.sqrt(eps));
    }
  }
  const out = new Float64Array(data.length);
  for (let k = 0; k < n; k++) {
    const i = idx[k] as number;
    const w = scaled ? (at(k) - mean) * invStd : (at(k) - mean) / s;
    out[i] = shiftMean ? w : w + mean / s;
  }
  checkFiniteOutput(fn, "whitened x", out, xm.cols, m, "the exact value exceeds float64");
  return { rows: xm.rows, cols: xm.cols, data: out };
}
