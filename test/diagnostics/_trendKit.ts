/**
 * Helpers of the trend tests (trend, seriesTrend, mannKendall, calibration): the error a call
 * throws, uniform reals for fast-check, and a plain least-squares residual fit written
 * independently of src/diagnostics/seriesTrend.ts (plain sums, no rescaling).
 */
import fc from "fast-check";

/** The name and arg of the error `f` throws (fails when it throws none). */
export function caught(f: () => unknown): { name: string; arg: string | undefined } {
  try {
    f();
  } catch (e) {
    const err = e as { name: string; arg: string | undefined };
    return { name: err.name, arg: err.arg };
  }
  throw new Error("expected an error");
}

/** Uniform reals on [min, max] (fc.double concentrates near 0; see clipping.test.ts). */
export const uniform = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: 0, max: 2 ** 30 }).map((k) => min + ((max - min) * k) / 2 ** 30);

/** Least-squares residuals of v on [1, s] (plain sums). */
export function olsResid(v: readonly number[], s: readonly number[]): number[] {
  const n = v.length;
  const sm = s.reduce((a, b) => a + b, 0) / n;
  const vm = v.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += ((s[i] as number) - sm) * ((v[i] as number) - vm);
    sxx += ((s[i] as number) - sm) ** 2;
  }
  return v.map((x, i) => x - vm - (sxy / sxx) * ((s[i] as number) - sm));
}
