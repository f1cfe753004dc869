/**
 * The numeric policy's one enforcement point (docs/conventions.md#numeric-policy): for finite
 * inputs every output is finite, or the function throws {@link OverflowError} naming the quantity
 * that overflowed and where. Kernels compute what has a finite answer stably and call these
 * checks on what can still overflow; no public function returns NaN or ±Infinity from finite input.
 */
import { OverflowError } from "../errors.js";
import { fmtPosition } from "./message.js";

/**
 * Build the one overflow message: `<fn>: <quantity> must be finite in float64 (|x| ≤ 1.8e308);
 * got <value> at (b, t) (<why>)`.
 */
export function overflowError(
  fn: string,
  quantity: string,
  value: number,
  position?: readonly number[],
  why?: string,
): OverflowError {
  const at = position !== undefined ? ` at ${fmtPosition(position)}` : "";
  const reason = why !== undefined ? ` (${why})` : "";
  return new OverflowError(
    fn,
    quantity,
    `${fn}: ${quantity} must be finite in float64 (|x| <= 1.8e308); got ${String(value)}${at}${reason}`,
    position,
  );
}

/** Return `value` when finite; otherwise throw {@link OverflowError} for `quantity`. */
export function finiteOr(
  fn: string,
  quantity: string,
  value: number,
  position?: readonly number[],
  why?: string,
): number {
  if (Number.isFinite(value)) return value;
  throw overflowError(fn, quantity, value, position, why);
}

/**
 * Check every response position of a `[B, T]` output (or every entry of a `[B]` output when `cols`
 * is 0); throw {@link OverflowError} at the first non-finite one, naming its position.
 */
export function checkFiniteOutput(
  fn: string,
  quantity: string,
  data: ArrayLike<number>,
  cols: number,
  mask?: ArrayLike<number>,
  why?: string,
): void {
  for (let i = 0; i < data.length; i++) {
    if (mask !== undefined && mask[i] !== 1) continue;
    const v = data[i] as number;
    if (Number.isFinite(v)) continue;
    const pos = cols > 0 ? [Math.floor(i / cols), i % cols] : [i];
    throw overflowError(fn, quantity, v, pos, why);
  }
}
