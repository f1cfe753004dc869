/**
 * Rounded arithmetic of an emulated training precision (docs/contracts.md#the-emulated-computation):
 * every operation's float64 result is rounded to the precision, and a seeded generator picks one
 * of several algebraically equal evaluation plans — the summation order (a permutation), the
 * reduction shape (left fold or pairwise tree), the association order of a product chain, and
 * whether a normaliser is applied as a division or as a multiplication by its rounded reciprocal.
 * Without a generator the plan is canonical: row-major left folds, factors in the given order,
 * divisions.
 */
import type { Rng } from "../../core/rng.js";

/** Round a float64 to the emulated precision. */
export type Round = (x: number) => number;

/** One factor of a product chain: multiply by, or divide by, `v`. */
export interface Factor {
  readonly div: boolean;
  readonly v: number;
}

/** Rounded arithmetic with a (seeded) evaluation plan. */
export class Arith {
  readonly round: Round;
  /** Normalisers become ×R(1/R(d)) instead of ÷R(d). */
  readonly reciprocal: boolean;
  /** k3 is evaluated with expm1 (no cancellation) instead of exp(δ) − 1. */
  readonly expm1Form: boolean;
  private readonly rng: Rng | null;

  constructor(round: Round, rng: Rng | null) {
    this.round = round;
    this.rng = rng;
    this.reciprocal = rng !== null && rng.uniform() < 0.5;
    this.expm1Form = rng === null || rng.uniform() < 0.5;
  }

  /** R(exp(x)). */
  exp(x: number): number {
    return this.round(Math.exp(x));
  }

  /** The factor that normalises by the integer count `d` under this plan. */
  norm(d: number): Factor {
    const rd = this.round(d);
    return this.reciprocal ? { div: false, v: this.round(1 / rd) } : { div: true, v: rd };
  }

  /** Σ xs with every partial sum rounded, in this plan's order and shape. */
  sum(xs: number[]): number {
    if (xs.length === 0) return 0;
    const order = this.permuted(xs.length);
    if (this.rng !== null && this.rng.uniform() < 0.5)
      return this.pairwise(xs, order, 0, xs.length);
    let acc = xs[order[0] as number] as number;
    for (let k = 1; k < order.length; k++)
      acc = this.round(acc + (xs[order[k] as number] as number));
    return acc;
  }

  /** Π of the factors, each partial product rounded, in this plan's association order. */
  chain(factors: Factor[]): number {
    const order = this.permuted(factors.length);
    let acc = Number.NaN;
    for (let k = 0; k < order.length; k++) {
      const f = factors[order[k] as number] as Factor;
      if (k === 0) acc = f.div ? this.round(1 / f.v) : f.v;
      else acc = this.round(f.div ? acc / f.v : acc * f.v);
    }
    return acc;
  }

  private pairwise(xs: number[], order: Int32Array, lo: number, hi: number): number {
    if (hi - lo === 1) return xs[order[lo] as number] as number;
    const mid = lo + ((hi - lo) >> 1);
    return this.round(this.pairwise(xs, order, lo, mid) + this.pairwise(xs, order, mid, hi));
  }

  private permuted(n: number): Int32Array {
    const p = new Int32Array(n);
    for (let i = 0; i < n; i++) p[i] = i;
    if (this.rng === null) return p;
    for (let i = n - 1; i > 0; i--) {
      const j = this.rng.int(0, i);
      const t = p[i] as number;
      p[i] = p[j] as number;
      p[j] = t;
    }
    return p;
  }
}

/** A multiplication factor. */
export function times(v: number): Factor {
  return { div: false, v };
}
