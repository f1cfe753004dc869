/**
 * Readers for the fixtures recorded from polgrad 0.2.0 (PyTorch) by
 * tools/record-fixtures/polgrad_core.py: JSON numbers, with "NaN" / "Infinity" / "-Infinity"
 * strings for non-finite junk at padding.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** A fixture number: finite numbers as JSON numbers, non-finite ones as strings. */
export type FixtureNumber = number | "NaN" | "Infinity" | "-Infinity";

/** Decode one fixture number. */
export function num(x: FixtureNumber): number {
  if (typeof x === "number") return x;
  if (x === "NaN") return Number.NaN;
  if (x === "Infinity") return Number.POSITIVE_INFINITY;
  if (x === "-Infinity") return Number.NEGATIVE_INFINITY;
  throw new Error(`not a fixture number: ${JSON.stringify(x)}`);
}

/** Decode nested fixture rows to numbers. */
export function rows(x: readonly (readonly FixtureNumber[])[]): number[][] {
  return x.map((r) => r.map(num));
}

/** Decode a `[B]` or `[B, T]` fixture tensor. */
export function vecOrRows(
  x: readonly FixtureNumber[] | readonly (readonly FixtureNumber[])[],
): number[] | number[][] {
  return Array.isArray(x[0]) ? rows(x as FixtureNumber[][]) : (x as FixtureNumber[]).map(num);
}

/** Load a fixture file from test/fixtures/polgrad/. */
export function loadPolgradFixture<T>(name: string): T {
  const url = new URL(`../fixtures/polgrad/${name}`, import.meta.url);
  return JSON.parse(readFileSync(fileURLToPath(url), "utf8")) as T;
}

/**
 * Relative error of a scalar against a recorded value: |a − e| / |e| (|a − e| when e = 0).
 * The recorded value is torch's float64 result; 1e-12 leaves room for different but correctly
 * rounded summation orders, nothing more.
 */
export function relErr(actual: number, expected: number): number {
  const d = Math.abs(actual - expected);
  return expected === 0 ? d : d / Math.abs(expected);
}

/**
 * Norm-wise relative error of a `[B, T]` result against recorded rows:
 * max_i |a_i − e_i| / max(max_i |e_i|, tiny). Element-wise relative error is meaningless for
 * entries that are sums with cancellation; the norm-wise form bounds every entry by the scale of
 * the whole tensor.
 */
export function matrixRelErr(
  actual: { data: ArrayLike<number> },
  expected: readonly (readonly FixtureNumber[])[],
): number {
  const e = rows(expected).flat();
  if (e.length !== actual.data.length) return Number.POSITIVE_INFINITY;
  let scale = 0;
  let diff = 0;
  for (let i = 0; i < e.length; i++) {
    scale = Math.max(scale, Math.abs(e[i] as number));
    diff = Math.max(diff, Math.abs((actual.data[i] as number) - (e[i] as number)));
  }
  return scale === 0 ? diff : diff / scale;
}

/** A recorded mask as 0/1 bytes for exact comparison. */
export function maskBytes(x: readonly (readonly boolean[])[]): number[] {
  return x.flat().map((v) => (v ? 1 : 0));
}
