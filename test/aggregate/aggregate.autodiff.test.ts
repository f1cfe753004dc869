/**
 * Enforces docs/derivations/aggregation.md#aggregate and #micro-batch-weights through the exact
 * autodiff of src/verify: the gradient of Σ w·x is the weights bitwise, and the gradient of an
 * explicit micro-batch accumulation loop equals microbatchTokenWeights.
 */
import { describe, expect, test } from "vitest";
import { AGGREGATIONS, effectiveTokenWeights, microbatchTokenWeights } from "../../src/index.js";
import { div, grad, mul, type Node, type Scalar, sum } from "../../src/verify/autodiff.js";

const mask = [
  [true, false, false],
  [true, true, true],
  [true, true, false],
  [true, true, true],
];
const x0 = [0.3, -1.2, 2.5, 0.7, 4.1, -0.6, 1.9, 0.25, -3.3];
/** Response positions in row-major order (the autodiff variables). */
const pos = mask.flatMap((row, b) => row.flatMap((on, t) => (on ? [[b, t] as const] : [])));

function scatter(g: Float64Array): number[][] {
  const out = mask.map((row) => row.map(() => 0));
  pos.forEach(([b, t], k) => {
    out[b]![t] = g[k]!;
  });
  return out;
}

describe("aggregate gradient", () => {
  test("identity: the autodiff gradient of the aggregated loss is effectiveTokenWeights bitwise", () => {
    for (const mode of AGGREGATIONS) {
      const w = effectiveTokenWeights(mask, mode, { normLen: 5 });
      const wAt = (b: number, t: number) => w.data[b * 3 + t]!;
      const g = grad(
        (xs: readonly Node[]) => sum(pos.map(([b, t], k) => mul(wAt(b, t), xs[k]!))),
        x0,
      ).grad;
      const expected = mask.map((row, b) => row.map((_, t) => wAt(b, t)));
      scatter(g).forEach((row, b) =>
        row.forEach((v, t) =>
          expect(Object.is(v, expected[b]![t]), `${mode} (${b}, ${t})`).toBe(true),
        ),
      );
    }
  });
});

describe("microbatchTokenWeights gradient", () => {
  test("identity: the autodiff gradient of an explicit accumulation loop equals the weights", () => {
    // Loop: for each chunk c, L_c = Σ w_c·x over its rows; total = Σ_c L_c (sum) or (Σ_c L_c)/K (mean).
    for (const mode of AGGREGATIONS) {
      for (const sizes of [
        [2, 2],
        [1, 3],
        [1, 1, 2],
      ]) {
        for (const lossScale of ["mean", "sum"] as const) {
          const g = grad((xs: readonly Node[]) => {
            const chunkLosses: Scalar[] = [];
            let row0 = 0;
            for (const s of sizes) {
              const sub = mask.slice(row0, row0 + s);
              const w = effectiveTokenWeights(sub, mode, { normLen: 5 });
              const terms = pos.flatMap(([b, t], k) =>
                b >= row0 && b < row0 + s ? [mul(w.data[(b - row0) * 3 + t]!, xs[k]!)] : [],
              );
              chunkLosses.push(sum(terms));
              row0 += s;
            }
            const total = sum(chunkLosses);
            return lossScale === "mean" ? div(total, sizes.length) : total;
          }, x0).grad;
          const w = microbatchTokenWeights(mask, mode, sizes, { normLen: 5, lossScale }).data;
          scatter(g).forEach((row, b) =>
            row.forEach((v, t) => {
              const e = w[b * 3 + t]!;
              // sum: the same products, bitwise; mean: (1/K)·w_c vs w_c/K differ by at most one rounding.
              if (lossScale === "sum")
                expect(Object.is(v, e), `${mode} ${sizes} sum (${b}, ${t})`).toBe(true);
              else
                expect(Math.abs(v - e), `${mode} ${sizes} mean (${b}, ${t})`).toBeLessThanOrEqual(
                  1e-15 * Math.abs(e),
                );
            }),
          );
        }
      }
    }
  });
});
