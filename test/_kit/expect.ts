/**
 * Numeric assertions of the test kit: element-wise closeness (`expectClose`), the norm-wise relative
 * criterion used against the reference (`expectNormwiseClose`) and bitwise identity
 * (`expectBitwise`, Object.is per element, so −0 vs 0 and NaN payload-free equality are exact).
 * Each failure names the worst (or first) index and both values.
 */
import type { Mask, Matrix } from "../../src/core/tensor.js";

/** A number, a `[B, T]` matrix (Matrix or rows) or a flat vector. */
export type Numeric =
  | number
  | Matrix
  | Float64Array
  | readonly number[]
  | readonly (readonly number[])[];

interface Flat {
  readonly values: readonly number[];
  readonly label: (i: number) => string;
}

function isMatrix(x: unknown): x is Matrix {
  return (
    typeof x === "object" && x !== null && "data" in x && (x as Matrix).data instanceof Float64Array
  );
}

function flat(x: Numeric): Flat {
  if (typeof x === "number") return { values: [x], label: () => "scalar" };
  if (isMatrix(x)) {
    return {
      values: Array.from(x.data),
      label: (i) => `(${Math.floor(i / x.cols)}, ${i % x.cols})`,
    };
  }
  if (x instanceof Float64Array) return { values: Array.from(x), label: (i) => `[${i}]` };
  if (x.length > 0 && Array.isArray(x[0])) {
    const rows = x as readonly (readonly number[])[];
    const cols = rows[0].length;
    return { values: rows.flat(), label: (i) => `(${Math.floor(i / cols)}, ${i % cols})` };
  }
  return { values: x as readonly number[], label: (i) => `[${i}]` };
}

function pair(actual: Numeric, expected: Numeric, what: string): [Flat, Flat] {
  const a = flat(actual);
  const e = flat(expected);
  if (a.values.length !== e.values.length) {
    throw new Error(`${what}: ${a.values.length} values, expected ${e.values.length}`);
  }
  return [a, e];
}

/**
 * Assert |actual − expected| ≤ atol + rtol·|expected| element-wise (NaN never passes unless both are
 * NaN); reports the index with the largest excess.
 */
export function expectClose(
  actual: Numeric,
  expected: Numeric,
  { rtol = 0, atol = 0, what = "value" }: { rtol?: number; atol?: number; what?: string } = {},
): void {
  const [a, e] = pair(actual, expected, what);
  let worst = -1;
  let worstExcess = 0;
  for (let i = 0; i < a.values.length; i++) {
    const x = a.values[i];
    const y = e.values[i];
    if (Number.isNaN(x) && Number.isNaN(y)) continue;
    const excess = Math.abs(x - y) - (atol + rtol * Math.abs(y));
    if (!(excess <= 0) && (worst < 0 || !(excess <= worstExcess))) {
      worst = i;
      worstExcess = excess;
    }
  }
  if (worst >= 0) {
    const x = a.values[worst];
    const y = e.values[worst];
    throw new Error(
      `${what} not close at ${a.label(worst)}: actual ${x}, expected ${y}, |diff| ${Math.abs(x - y)} ` +
        `(rtol ${rtol}, atol ${atol})`,
    );
  }
}

/**
 * The norm-wise relative disagreement max_i |a_i − e_i| / max(1, max_i |e_i|) (∞ on NaN or a
 * length mismatch).
 */
export function normwiseDisagreement(actual: Numeric, expected: Numeric): number {
  const a = flat(actual);
  const e = flat(expected);
  if (a.values.length !== e.values.length) return Number.POSITIVE_INFINITY;
  let diff = 0;
  let scale = 1;
  for (let i = 0; i < a.values.length; i++) {
    const d = Math.abs(a.values[i] - e.values[i]);
    if (Number.isNaN(d)) return Number.POSITIVE_INFINITY;
    diff = Math.max(diff, d);
    scale = Math.max(scale, Math.abs(e.values[i]));
  }
  return diff / scale;
}

/**
 * Assert max|actual − expected| ≤ tol·max(1, max|expected|) (the norm-wise criterion of
 * docs/derivations/reference.md#tolerance); returns the measured disagreement.
 */
export function expectNormwiseClose(
  actual: Numeric,
  expected: Numeric,
  tol: number,
  what = "value",
): number {
  const d = normwiseDisagreement(actual, expected);
  if (!(d <= tol)) {
    const [a, e] = pair(actual, expected, what);
    let worst = 0;
    for (let i = 0; i < a.values.length; i++) {
      const di = Math.abs(a.values[i] - e.values[i]);
      if (!(di <= Math.abs(a.values[worst] - e.values[worst]))) worst = i;
    }
    throw new Error(
      `${what}: norm-wise relative disagreement ${d} > ${tol}; worst at ${a.label(worst)}: ` +
        `actual ${a.values[worst]}, expected ${e.values[worst]}`,
    );
  }
  return d;
}

function isMask(x: unknown): x is Mask {
  return (
    typeof x === "object" && x !== null && "data" in x && (x as Mask).data instanceof Uint8Array
  );
}

/** Print a value for a failure message, keeping the sign of zero visible. */
function fmt(x: unknown): string {
  return Object.is(x, -0) ? "-0" : String(x);
}

function firstDifference(a: unknown, e: unknown, path: string): string | null {
  if (typeof a === "number" || typeof e === "number") {
    return typeof a === "number" && typeof e === "number" && Object.is(a, e)
      ? null
      : `${path}: ${fmt(a)} vs ${fmt(e)}`;
  }
  if (
    a === null ||
    e === null ||
    a === undefined ||
    e === undefined ||
    typeof a !== "object" ||
    typeof e !== "object"
  ) {
    return a === e ? null : `${path}: ${fmt(a)} vs ${fmt(e)}`;
  }
  if (isMatrix(a) || isMask(a) || isMatrix(e) || isMask(e)) {
    const am = a as Matrix | Mask;
    const em = e as Matrix | Mask;
    if (am.rows !== em.rows || am.cols !== em.cols || am.data.constructor !== em.data.constructor) {
      return `${path}: shape/kind [${am.rows}, ${am.cols}] vs [${em.rows}, ${em.cols}]`;
    }
    for (let i = 0; i < am.data.length; i++) {
      if (!Object.is(am.data[i], em.data[i])) {
        return `${path}(${Math.floor(i / am.cols)}, ${i % am.cols}): ${fmt(am.data[i])} vs ${fmt(em.data[i])}`;
      }
    }
    return null;
  }
  if (ArrayBuffer.isView(a) || Array.isArray(a)) {
    const aa = a as ArrayLike<unknown>;
    const ea = e as ArrayLike<unknown>;
    if (aa.length !== ea.length) return `${path}: length ${aa.length} vs ${ea.length}`;
    for (let i = 0; i < aa.length; i++) {
      const d = firstDifference(aa[i], ea[i], `${path}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(e)]);
  for (const k of keys) {
    const d = firstDifference(
      (a as Record<string, unknown>)[k],
      (e as Record<string, unknown>)[k],
      `${path}.${k}`,
    );
    if (d !== null) return d;
  }
  return null;
}

/**
 * Assert bitwise identity: numbers compared with Object.is (so −0 ≠ 0, NaN = NaN), matrices, masks,
 * arrays and plain records compared element by element; reports the first difference.
 */
export function expectBitwise(actual: unknown, expected: unknown, what = "value"): void {
  const d = firstDifference(actual, expected, what);
  if (d !== null) throw new Error(`not bitwise identical: ${d}`);
}

/** The value `f` throws; fails the test when `f` returns. */
export function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

/** The error of class `C` that `f` throws; any other throw, or none, fails the test. */
export function caughtAs<E extends Error>(
  C: abstract new (...a: never[]) => E,
  f: () => unknown,
): E {
  const e = caught(f);
  if (e instanceof C) return e;
  throw e;
}
