import { fmtValue } from "./message.js";
import { requireNumber } from "./validate.js";
/**
 * Python's repr of the constants polgrad's `describe()` and `summary()` print (`10.0`, `1e-08`,
 * `None`, `True`, `'std'`), so a user can compare the TypeScript text with polgrad's line by line
 * (docs/derivations/variants.md#describe-format). Pure.
 */

/**
 * Python's `repr(float(x))`: the shortest round-trip digits (the same digits as JavaScript's),
 * fixed notation when the decimal exponent e satisfies −4 ≤ e < 16 (with `.0` for an integral
 * value), else `d.ddde±XX` with a two-digit exponent at least; `nan`, `inf`, `-inf`.
 *
 * @param x - The number.
 * @returns Its Python float repr.
 * @derivation docs/derivations/variants.md#describe-format
 * @enforcedBy test/core/pyRepr.test.ts > pyFloat > golden: Python's repr of integral, small, large and non-finite floats
 * @since 0.2.0
 */
export function pyFloat(x: number): string {
  requireNumber("pyFloat", "x", x);
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [m, e] = Math.abs(x).toExponential().split("e") as [string, string];
  const digits = m.replace(".", "");
  const exp = Number(e);
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
    const int = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1);
    return `${sign}${int}.${frac === "" ? "0" : frac}`;
  }
  const mant = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  return `${sign}${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
}

/**
 * Python's repr of a config value: `None`, `True`/`False`, `'text'` (Python's quoting: `"it's"`,
 * `'a\\'b"'`), integers as they are when `int` is set, every other number as a float ({@link pyFloat}).
 *
 * @param v - The value.
 * @param int - Print a number as a Python int (e.g. norm_len).
 * @returns Its Python repr.
 * @derivation docs/derivations/variants.md#describe-format
 * @enforcedBy test/core/pyRepr.test.ts > pyValue > golden: None, booleans, quoted strings, ints and floats
 * @since 0.2.0
 */
export function pyValue(v: unknown, int = false): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return int && Number.isInteger(v) ? String(v) : pyFloat(v);
  if (typeof v === "string") {
    // Python quotes with ' unless the text holds a ' and no ", then with ".
    const q = v.includes("'") && !v.includes('"') ? '"' : "'";
    const body = v.replace(/\\/g, "\\\\");
    return `${q}${q === "'" ? body.replace(/'/g, "\\'") : body}${q}`;
  }
  // An object or array is no config scalar: described, bounded (String() would join every item).
  return typeof v === "object" ? fmtValue(v) : String(v);
}
