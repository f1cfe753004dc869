/**
 * Number formats of the text reports, in one place. Reports print for people; the exact values
 * are in `--json` (docs/cli.md#outputs).
 */

/** Four significant digits with trailing zeros kept: JavaScript's `toPrecision(4)`. */
export function sig4(x: number): string {
  return x.toPrecision(4);
}

/**
 * Format like Python's `format(x, ".4g")`: 4 significant digits, fixed notation when the decimal
 * exponent X satisfies −4 ≤ X < 4, scientific (`1.5e-05`, two-digit exponent at least) otherwise;
 * trailing zeros dropped. Exact decimal ties round away from zero (JS), not half-even (Python).
 */
export function g4(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const [mant, exp] = x.toExponential(3).split("e") as [string, string];
  const X = Number(exp);
  const trim = (s: string) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (X >= -4 && X < 4) return trim(x.toFixed(3 - X));
  const e = Math.abs(X).toString().padStart(2, "0");
  return `${trim(mant)}e${X < 0 ? "-" : "+"}${e}`;
}
