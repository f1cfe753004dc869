/**
 * IEEE 754 binary16 (F16) and bfloat16 (BF16) ↔ float64, written by hand from the bit layouts.
 * Decoding is exact (every half value is a float64); encoding rounds to nearest, ties to even,
 * in one step (no double rounding through float32).
 *
 * | format | sign | exponent (bias) | mantissa | smallest subnormal | largest finite |
 * | --- | --- | --- | --- | --- | --- |
 * | F16 | 1 | 5 (15) | 10 | 2^−24 | 65504 |
 * | BF16 | 1 | 8 (127) | 7 | 2^−133 | (2 − 2^−7)·2^127 |
 */

import { ConfigError, fail } from "../errors.js";
import { fmtValue } from "./message.js";

interface HalfLayout {
  readonly mantBits: number;
  readonly expBits: number;
}

const F16: HalfLayout = { mantBits: 10, expBits: 5 };
const BF16: HalfLayout = { mantBits: 7, expBits: 8 };

function decode(bits: number, { mantBits, expBits }: HalfLayout): number {
  const bias = (1 << (expBits - 1)) - 1;
  const expAll = (1 << expBits) - 1;
  const negative = (bits >>> (mantBits + expBits)) & 1;
  const e = (bits >>> mantBits) & expAll;
  const m = bits & ((1 << mantBits) - 1);
  let v: number;
  if (e === expAll) v = m === 0 ? Number.POSITIVE_INFINITY : Number.NaN;
  else if (e === 0)
    v = m * 2 ** (1 - bias - mantBits); // subnormal: m · 2^(emin − p)
  else v = (m + 2 ** mantBits) * 2 ** (e - bias - mantBits); // normal: 1.m · 2^(e − bias)
  return negative ? -v : v;
}

function encode(x: number, { mantBits, expBits }: HalfLayout): number {
  const bias = (1 << (expBits - 1)) - 1;
  const expAll = (1 << expBits) - 1;
  const signBit = 1 << (mantBits + expBits);
  const inf = expAll << mantBits;
  if (Number.isNaN(x)) return inf | (1 << (mantBits - 1)); // canonical quiet NaN
  const sign = x < 0 || Object.is(x, -0) ? signBit : 0;
  const a = Math.abs(x);
  if (a === Number.POSITIVE_INFINITY) return sign | inf;
  if (a === 0) return sign;
  const emin = 1 - bias;
  let e = Math.floor(Math.log2(a));
  while (2 ** e > a) e--;
  while (2 ** (e + 1) <= a) e++;
  if (e < emin) e = emin; // subnormal range shares the quantum of the smallest binade
  // n = a / 2^(e − p) is exact (power-of-two scaling inside the float64 normal range).
  const n = a / 2 ** (e - mantBits);
  let r = Math.floor(n);
  const frac = n - r; // exact: the low bits of n
  if (frac > 0.5 || (frac === 0.5 && r % 2 === 1)) r += 1;
  if (r === 2 ** (mantBits + 1)) {
    r = 2 ** mantBits;
    e += 1;
  }
  if (e > bias) return sign | inf; // overflow rounds to infinity
  if (r < 2 ** mantBits) return sign | r; // subnormal (or underflow to ±0)
  return sign | ((e + bias) << mantBits) | (r - 2 ** mantBits);
}

let f16Table: Float64Array | undefined;
let bf16Table: Float64Array | undefined;

/** Lookup table bits → float64 for F16 (65536 entries, built on first use). @internal */
export function f16DecodeTable(): Float64Array {
  if (f16Table === undefined) {
    f16Table = new Float64Array(65536);
    for (let b = 0; b < 65536; b++) f16Table[b] = decode(b, F16);
  }
  return f16Table;
}

/** Lookup table bits → float64 for BF16 (65536 entries, built on first use). @internal */
export function bf16DecodeTable(): Float64Array {
  if (bf16Table === undefined) {
    bf16Table = new Float64Array(65536);
    for (let b = 0; b < 65536; b++) bf16Table[b] = decode(b, BF16);
  }
  return bf16Table;
}

/** Encode without argument checks (x is a number). @internal */
export function encodeF16(x: number): number {
  return encode(x, F16);
}

/** Encode without argument checks (x is a number). @internal */
export function encodeBf16(x: number): number {
  return encode(x, BF16);
}

function checkBits(fn: string, bits: unknown): number {
  if (typeof bits !== "number" || !Number.isInteger(bits) || bits < 0 || bits > 0xffff) {
    throw fail(ConfigError, fn, "bits", "an integer in [0, 0xFFFF]", fmtValue(bits));
  }
  return bits;
}

function checkNumber(fn: string, x: unknown): number {
  if (typeof x !== "number") {
    throw fail(ConfigError, fn, "x", "a number", fmtValue(x));
  }
  return x;
}

/**
 * Return the exact float64 value of an F16 (IEEE binary16) bit pattern.
 *
 * Formula: (−1)^s · 2^(e−15) · (1 + m/2^10) for 0 < e < 31; (−1)^s · m · 2^−24 for e = 0;
 * ±Inf for e = 31, m = 0; NaN for e = 31, m ≠ 0.
 *
 * @param bits - The 16-bit pattern, an integer in [0, 0xFFFF].
 * @returns The float64 value (exact; −0 for 0x8000).
 * @throws {ConfigError} E_CONFIG when `bits` is not an integer in [0, 0xFFFF].
 * @derivation docs/io.md#half-precision
 * @enforcedBy test/core/halfFloat.test.ts > f16ToNumber > golden: hand-computed bit patterns decode exactly
 * @since 0.1.0
 */
export function f16ToNumber(bits: number): number {
  return f16DecodeTable()[checkBits("f16ToNumber", bits)] as number;
}

/**
 * Return the exact float64 value of a BF16 (bfloat16) bit pattern.
 *
 * Formula: (−1)^s · 2^(e−127) · (1 + m/2^7) for 0 < e < 255; (−1)^s · m · 2^−133 for e = 0;
 * ±Inf for e = 255, m = 0; NaN for e = 255, m ≠ 0.
 *
 * @param bits - The 16-bit pattern, an integer in [0, 0xFFFF].
 * @returns The float64 value (exact; −0 for 0x8000).
 * @throws {ConfigError} E_CONFIG when `bits` is not an integer in [0, 0xFFFF].
 * @derivation docs/io.md#half-precision
 * @enforcedBy test/core/halfFloat.test.ts > bf16ToNumber > golden: hand-computed bit patterns decode exactly
 * @since 0.1.0
 */
export function bf16ToNumber(bits: number): number {
  return bf16DecodeTable()[checkBits("bf16ToNumber", bits)] as number;
}

/**
 * Return the F16 bit pattern nearest to `x` (round to nearest, ties to even).
 *
 * Formula: bits(round_RNE(x)); |x| ≥ 65520 → ±Inf; |x| ≤ 2^−25 → ±0; NaN → 0x7E00.
 *
 * @param x - The value to encode.
 * @returns The 16-bit pattern, an integer in [0, 0xFFFF].
 * @throws {ConfigError} E_CONFIG when `x` is not a number.
 * @derivation docs/io.md#half-precision
 * @enforcedBy test/core/halfFloat.test.ts > numberToF16 > property: decoding then encoding every pattern is the identity
 * @since 0.1.0
 */
export function numberToF16(x: number): number {
  return encode(checkNumber("numberToF16", x), F16);
}

/**
 * Return the BF16 bit pattern nearest to `x` (round to nearest, ties to even).
 *
 * Formula: bits(round_RNE(x)), rounded once from float64; overflow → ±Inf; NaN → 0x7FC0.
 *
 * @param x - The value to encode.
 * @returns The 16-bit pattern, an integer in [0, 0xFFFF].
 * @throws {ConfigError} E_CONFIG when `x` is not a number.
 * @derivation docs/io.md#half-precision
 * @enforcedBy test/core/halfFloat.test.ts > numberToBf16 > property: decoding then encoding every pattern is the identity
 * @since 0.1.0
 */
export function numberToBf16(x: number): number {
  return encode(checkNumber("numberToBf16", x), BF16);
}
