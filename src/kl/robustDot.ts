/**
 * The aggregated value of the KL and value losses: maskedDot's compensated row-major inner product
 * Σ w·x over response positions, made overflow-safe with robustSum (bitwise maskedDot whenever
 * that sum is finite) and checked: a loss that exceeds float64 is an OverflowError, never ±Infinity.
 * @internal
 */
import { finiteOr } from "../core/finite.js";
import { robustSum } from "../core/sum.js";
import type { Mask } from "../core/tensor.js";

/**
 * Σ_{b,t} w·x over the response positions of `mask`, row-major, compensated; finite whenever the
 * exact sum is representable, else OverflowError naming `quantity`.
 * @internal
 */
export function checkedMaskedDot(
  fn: string,
  quantity: string,
  w: Float64Array,
  x: Float64Array,
  mask: Mask,
): number {
  const m = mask.data;
  let n = 0;
  for (let i = 0; i < m.length; i++) n += m[i] === 1 ? 1 : 0;
  const idx = new Int32Array(n);
  for (let i = 0, k = 0; i < m.length; i++) if (m[i] === 1) idx[k++] = i;
  const total = robustSum(n, (k) => {
    const i = idx[k] as number;
    return (w[i] as number) * (x[i] as number);
  });
  return finiteOr(fn, quantity, total, undefined, "the exact aggregate exceeds float64");
}
