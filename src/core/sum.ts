/**
 * Reductions in one fixed, documented order: Neumaier's compensated summation over the elements in
 * row-major order (docs/conventions.md#summation). Every reduction in polgrad goes through these
 * helpers, so identities that polgrad states as bitwise (aggregate = Σ w·x, micro-batch sums) hold
 * by construction, and results are accurate to about one ulp of the exact sum plus O(n·ε²)·Σ|x|.
 *
 * Written by hand: the algorithm is four lines (Neumaier 1974, "Rundungsfehleranalyse einiger
 * Verfahren zur Summation endlicher Summen", ZAMM 54), and no maintained npm package offers it over
 * strided Float64Array views without allocation.
 */

/** A running compensated sum; add terms in order, then read `value()`. */
export class CompensatedSum {
  private s = 0;
  private c = 0;

  /** Add one term. */
  add(x: number): void {
    const t = this.s + x;
    if (Math.abs(this.s) >= Math.abs(x)) this.c += this.s - t + x;
    else this.c += x - t + this.s;
    this.s = t;
  }

  /** The compensated sum of the terms added so far. */
  value(): number {
    return this.s + this.c;
  }
}

/** Compensated sum of `xs` in index order. */
export function fsum(xs: ArrayLike<number>): number {
  const acc = new CompensatedSum();
  for (let i = 0; i < xs.length; i++) acc.add(xs[i] as number);
  return acc.value();
}
