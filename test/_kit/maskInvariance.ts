/** Mask-invariance assertion of the test kit (conventions: padding never influences any output). */
import type { Matrix } from "../../src/core/tensor.js";
import { expectBitwise } from "./expect.js";

/** The junk written at padding by {@link expectMaskInvariant}. */
export const PADDING_PERTURBATIONS: readonly number[] = [
  0,
  123,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
];

function isMatrix(x: unknown): x is Matrix {
  return (
    typeof x === "object" && x !== null && "data" in x && (x as Matrix).data instanceof Float64Array
  );
}

function perturb(x: unknown, mask: readonly (readonly boolean[])[], junk: number): unknown {
  const B = mask.length;
  const T = mask[0].length;
  if (Array.isArray(x) && x.length === B && x.every((r) => Array.isArray(r) && r.length === T)) {
    return (x as number[][]).map((row, b) => row.map((v, t) => (mask[b][t] ? v : junk)));
  }
  if (isMatrix(x) && x.rows === B && x.cols === T) {
    const data = Float64Array.from(x.data, (v, i) => (mask[Math.floor(i / T)][i % T] ? v : junk));
    return { rows: B, cols: T, data };
  }
  return x;
}

/**
 * Run `run` on `inputs` and on copies whose every `[B, T]` field (nested rows or Matrix, the mask
 * excepted) holds 0, 123, NaN, +Inf and −Inf at padding; require bitwise-identical outputs (values
 * and gradients, Object.is per element).
 */
export function expectMaskInvariant<
  I extends { readonly responseMask: readonly (readonly boolean[])[] },
>(
  run: (inputs: I) => unknown,
  inputs: I,
  junkValues: readonly number[] = PADDING_PERTURBATIONS,
): void {
  const baseline = run(inputs);
  for (const junk of junkValues) {
    const perturbed = Object.fromEntries(
      Object.entries(inputs).map(([k, v]) => [
        k,
        k === "responseMask" ? v : perturb(v, inputs.responseMask, junk),
      ]),
    ) as I;
    expectBitwise(run(perturbed), baseline, `output with padding = ${junk}`);
  }
}
