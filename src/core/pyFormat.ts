import { requireInteger, requireNumber } from "../core/validate.js";
/**
 * Number formats of the text reports, in one place: Python's `format(x, spec)` for the specs
 * polgrad's `summary()` methods use (`.4g`, `g`, `.3e`, `.9f`), so a user can compare the texts
 * line by line. Reports print for people; the exact values are in `--json` (docs/cli.md#outputs).
 *
 * Python and JavaScript both round the exact binary value of a double correctly; they differ only
 * on an exact decimal tie, which JavaScript rounds away from zero and Python to even. Every
 * formatter here starts from JavaScript's digits and, when the shortest repr of x shows a possible
 * tie at the rounded digit, checks it exactly (BigInt) and rounds it half to even.
 */

/** Four significant digits with trailing zeros kept: JavaScript's `toPrecision(4)`. */
export function sig4(x: number): string {
  requireNumber("sig4", "x", x);
  return x.toPrecision(4);
}

/** The shortest round-trip digits of |x| (x finite, non-zero) and their decimal exponent. */
function shortest(x: number): { digits: string; exp: number } {
  const [m, e] = Math.abs(x).toExponential().split("e") as [string, string];
  return { digits: m.replace(".", ""), exp: Number(e) };
}

/** |x| = m·2^k exactly, for finite x. */
function binaryParts(x: number): { m: bigint; k: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const hi = view.getUint32(0);
  const frac = (BigInt(hi & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  const e = (hi >>> 20) & 0x7ff;
  return e === 0 ? { m: frac, k: -1074 } : { m: frac | (1n << 52n), k: e - 1075 };
}

/** Whether |x| equals the decimal `digits`·10^(exp − len + 1) exactly. */
function isExactly(x: number, digits: string, exp: number): boolean {
  const { m, k } = binaryParts(x);
  const n = BigInt(digits);
  const s = exp - digits.length + 1;
  // m·2^k = n·10^s, both sides multiplied through by 2^max(−k, 0)·10^max(−s, 0).
  const left = m * (k >= 0 ? 1n << BigInt(k) : 1n) * (s < 0 ? 10n ** BigInt(-s) : 1n);
  const right = n * (k < 0 ? 1n << BigInt(-k) : 1n) * (s >= 0 ? 10n ** BigInt(s) : 1n);
  return left === right;
}

/**
 * |x| (finite, non-zero) rounded half to even to `p` significant digits: the `p` digits and the
 * decimal exponent of the rounded value.
 */
function roundSignificant(x: number, p: number): { digits: string; exp: number } {
  const s = shortest(x);
  const kept = s.digits.charCodeAt(p - 1) - 48;
  if (
    s.digits.length === p + 1 &&
    s.digits.endsWith("5") &&
    kept % 2 === 0 &&
    isExactly(x, s.digits, s.exp)
  )
    // An exact tie below an even digit: Python keeps it (JavaScript would round up).
    return { digits: s.digits.slice(0, p), exp: s.exp };
  const [m, e] = Math.abs(x)
    .toExponential(p - 1)
    .split("e") as [string, string];
  return { digits: m.replace(".", ""), exp: Number(e) };
}

const sign = (x: number): string => (x < 0 || Object.is(x, -0) ? "-" : "");
const nonFinite = (x: number): string => (Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf");
const pyExponent = (e: number): string =>
  `e${e < 0 ? "-" : "+"}${Math.abs(e).toString().padStart(2, "0")}`;

/**
 * Format like Python's `format(x, ".{precision}g")` (`format(x, "g")` is precision 6): round to
 * `precision` significant digits (half to even on exact ties); fixed notation when the rounded
 * value's decimal exponent X satisfies −4 ≤ X < precision, scientific (`1.5e-05`, a two-digit
 * exponent at least) otherwise; trailing zeros dropped; `nan`, `inf`, `-inf`, `-0`.
 *
 * @param x - The number.
 * @param precision - Significant digits (polgrad's summaries: 4, and 6 for `:g`); 0 counts as 1.
 * @returns The text.
 * @derivation docs/report.md#number-formats
 * @enforcedBy test/core/pyFormat.test.ts > pyGeneral > golden: Python's .4g and g, exact ties rounded half to even
 * @since 0.2.0
 */
export function pyGeneral(x: number, precision: number): string {
  requireNumber("pyGeneral", "x", x);
  requireInteger("pyGeneral", "precision", precision, 0, 100);
  if (!Number.isFinite(x)) return nonFinite(x);
  if (x === 0) return `${sign(x)}0`;
  const p = Math.max(1, precision);
  const { digits, exp } = roundSignificant(x, p);
  const trim = (frac: string) => {
    const f = frac.replace(/0+$/, "");
    return f === "" ? "" : `.${f}`;
  };
  if (exp >= -4 && exp < p) {
    const body =
      exp >= 0
        ? `${digits.slice(0, exp + 1)}${trim(digits.slice(exp + 1))}`
        : `0${trim(`${"0".repeat(-exp - 1)}${digits}`)}`;
    return `${sign(x)}${body}`;
  }
  return `${sign(x)}${digits[0]}${trim(digits.slice(1))}${pyExponent(exp)}`;
}

/**
 * Format like Python's `format(x, ".4g")`: {@link pyGeneral} with 4 significant digits.
 *
 * @param x - The number.
 * @returns The text (`0.3333`, `-8.732e-06`, `1.235e+04`, `0.5`).
 * @derivation docs/report.md#number-formats
 * @enforcedBy test/core/pyFormat.test.ts > g4 > golden: python's .4g for fixed and scientific ranges
 * @since 0.1.0
 */
export function g4(x: number): string {
  requireNumber("g4", "x", x);
  return pyGeneral(x, 4);
}

/**
 * Format like Python's `format(x, ".{digits}e")`: `1.234e-07`, `0.000e+00` (two-digit exponent at
 * least, unlike JavaScript's `toExponential`), `nan`, `inf`, `-inf`; exact ties half to even.
 *
 * @param x - The number.
 * @param digits - Digits after the point (polgrad's summaries use 3).
 * @returns The text.
 * @derivation docs/testing.md#assertconforms
 * @enforcedBy test/core/pyFormat.test.ts > pyExp > golden: Python's .3e on zero, tiny, huge, negative and non-finite values
 * @since 0.2.0
 */
export function pyExp(x: number, digits: number): string {
  requireNumber("pyExp", "x", x);
  requireInteger("pyExp", "digits", digits, 0, 99);
  if (!Number.isFinite(x)) return nonFinite(x);
  if (x === 0) return `${sign(x)}0${digits > 0 ? `.${"0".repeat(digits)}` : ""}e+00`;
  const r = roundSignificant(x, digits + 1);
  const mant = digits > 0 ? `${r.digits[0]}.${r.digits.slice(1)}` : r.digits;
  return `${sign(x)}${mant}${pyExponent(r.exp)}`;
}

/**
 * Format like Python's `format(x, ".{digits}f")`: fixed notation with `digits` decimals (exact
 * ties half to even; every integer digit, also past 1e21 where JavaScript's `toFixed` switches to
 * exponent notation), `nan`, `inf`, `-inf`, and the sign of a negative value that rounds to 0
 * (`-0.000…`).
 *
 * @param x - The number.
 * @param digits - Digits after the point (polgrad's cosine: 9).
 * @returns The text.
 * @derivation docs/testing.md#assertconforms
 * @enforcedBy test/core/pyFormat.test.ts > pyFixed > golden: Python's .9f on values, negative zero and non-finite values
 * @since 0.2.0
 */
export function pyFixed(x: number, digits: number): string {
  requireNumber("pyFixed", "x", x);
  requireInteger("pyFixed", "digits", digits, 0, 100);
  if (!Number.isFinite(x)) return nonFinite(x);
  const a = Math.abs(x);
  if (a >= 1e21) return `${sign(x)}${BigInt(a)}${digits > 0 ? `.${"0".repeat(digits)}` : ""}`;
  if (a !== 0) {
    const s = shortest(a);
    const decimals = s.digits.length - 1 - s.exp;
    const kept = s.digits.length >= 2 ? s.digits.charCodeAt(s.digits.length - 2) - 48 : 0;
    if (
      decimals === digits + 1 &&
      s.digits.endsWith("5") &&
      kept % 2 === 0 &&
      isExactly(a, s.digits, s.exp)
    ) {
      // An exact tie below an even digit: drop the 5 (JavaScript would round up).
      const t = a.toFixed(digits + 1).slice(0, -1);
      return `${sign(x)}${t.endsWith(".") ? t.slice(0, -1) : t}`;
    }
  }
  return `${sign(x)}${a.toFixed(digits)}`;
}
