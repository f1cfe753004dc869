/** Central finite differences for checking gradients (docs/derivations/reference.md#tolerance). */

/**
 * Central differences g_i = (f(x + h·e_i) − f(x − h·e_i)) / (2h) of a scalar function of a flat
 * vector, or of `[B, T]` rows (then only at positions where `mask` is true; 0 elsewhere).
 */
export function centralDifference(
  f: (x: number[]) => number,
  x: readonly number[],
  h: number,
): number[];
export function centralDifference(
  f: (x: number[][]) => number,
  x: readonly (readonly number[])[],
  h: number,
  mask?: readonly (readonly boolean[])[],
): number[][];
export function centralDifference(
  f: ((x: number[]) => number) | ((x: number[][]) => number),
  x: readonly number[] | readonly (readonly number[])[],
  h: number,
  mask?: readonly (readonly boolean[])[],
): number[] | number[][] {
  if (x.length > 0 && Array.isArray(x[0])) {
    const rows = x as readonly (readonly number[])[];
    const g = f as (x: number[][]) => number;
    return rows.map((row, b) =>
      row.map((v, t) => {
        if (mask !== undefined && !mask[b][t]) return 0;
        const plus = rows.map((r) => [...r]);
        const minus = rows.map((r) => [...r]);
        plus[b][t] = v + h;
        minus[b][t] = v - h;
        return (g(plus) - g(minus)) / (2 * h);
      }),
    );
  }
  const xs = x as readonly number[];
  const g = f as (x: number[]) => number;
  return xs.map((v, i) => {
    const plus = [...xs];
    const minus = [...xs];
    plus[i] = v + h;
    minus[i] = v - h;
    return (g(plus) - g(minus)) / (2 * h);
  });
}
