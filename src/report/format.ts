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

/**
 * Format like Python's `format(x, ".{digits}e")`: `1.234e-07`, `0.000e+00` (two-digit exponent at
 * least, unlike JavaScript's `toExponential`), `nan`, `inf`, `-inf`. Exact decimal ties round away
 * from zero (JS), not half-even (Python).
 *
 * @param x - The number.
 * @param digits - Digits after the point (polgrad's summaries use 3).
 * @returns The text.
 * @derivation docs/testing.md#assertconforms
 * @enforcedBy test/report/format.test.ts > pyExp > golden: Python's .3e on zero, tiny, huge, negative and non-finite values
 * @since 0.2.0
 */
export function pyExp(x: number, digits: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  const [mant, exp] = x.toExponential(digits).split("e") as [string, string];
  const X = Number(exp);
  const m = Object.is(x, -0) ? `-${mant}` : mant;
  return `${m}e${X < 0 ? "-" : "+"}${Math.abs(X).toString().padStart(2, "0")}`;
}

/**
 * Format like Python's `format(x, ".{digits}f")`: JavaScript's `toFixed` with Python's `nan`,
 * `inf`, `-inf` and `-0.000…` for negative zero.
 *
 * @param x - The number.
 * @param digits - Digits after the point (polgrad's cosine: 9).
 * @returns The text.
 * @derivation docs/testing.md#assertconforms
 * @enforcedBy test/report/format.test.ts > pyFixed > golden: Python's .9f on values, negative zero and non-finite values
 * @since 0.2.0
 */
export function pyFixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  const s = x.toFixed(digits);
  return Object.is(x, -0) || (x < 0 && !s.startsWith("-")) ? `-${s}` : s;
}
