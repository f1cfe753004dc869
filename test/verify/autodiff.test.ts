/**
 * Enforces src/verify/autodiff.ts against hand-derived derivatives (arithmetic in comments) and the
 * torch tie conventions it must reproduce (docs/derivations/reference.md#autodiff).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  abs,
  add,
  clamp,
  div,
  exp,
  expm1,
  grad,
  log,
  max,
  min,
  mul,
  type Node,
  neg,
  type Scalar,
  scalarValue,
  sg,
  square,
  sub,
  sum,
  where,
} from "../../src/verify/autodiff.js";
import { centralDifference, expectClose, FC_PARAMS } from "../_kit/index.js";

const g1 = (f: (x: Node) => Scalar, x: number) => {
  const out = grad(([v]) => f(v), [x]);
  return { value: out.value, d: out.grad[0] };
};

describe("grad", () => {
  it("golden: f(x, y) = x·y + exp(x) at (1, 2)", () => {
    // value = 1·2 + e = 2 + e; ∂f/∂x = y + eˣ = 2 + e; ∂f/∂y = x = 1.
    const out = grad(([x, y]) => add(mul(x, y), exp(x)), [1, 2]);
    expect(out.value).toBe(2 + Math.E);
    expect(Array.from(out.grad)).toEqual([2 + Math.E, 1]);
  });

  it("golden: a variable used twice accumulates both paths", () => {
    // f(x) = x·x + x at 3: value 9 + 3 = 12; f' = 2x + 1 = 7 (x·x contributes x + x).
    const out = g1((x) => add(mul(x, x), x), 3);
    expect(out).toEqual({ value: 12, d: 7 });
  });

  it("golden: a constant result has a zero gradient", () => {
    // f(x) = 5 (x unused) and f(x) = sg[x]·2: constants, so ∂f/∂x = 0.
    expect(Array.from(grad(() => 5, [1, 2]).grad)).toEqual([0, 0]);
    expect(g1((x) => mul(sg(x), 2), 4)).toEqual({ value: 8, d: 0 });
  });

  it("tie: signed zeros accumulate as in torch", () => {
    // f(x) = −(x·a) with a = +0: ∂f/∂x = −a = −0 (torch assigns the first contribution, so −0
    // survives); with a = −0 it is +0. f(x) = x·0 + x·0: −0? no: +0 + +0 = +0. Unused x: +0.
    const d = (a: number) => g1((x) => neg(mul(x, a)), -0.0625).d;
    expect(Object.is(d(0), -0)).toBe(true);
    expect(Object.is(d(-0), 0)).toBe(true);
    expect(Object.is(g1((x) => add(mul(x, 0), mul(x, 0)), 2).d, 0)).toBe(true);
    expect(Object.is(grad(([x]) => x, [1, 2]).grad[1], 0)).toBe(true);
  });

  it("rejects: operands recorded on different tapes", () => {
    let leaked: Node | null = null;
    grad(
      ([x]) => {
        leaked = x;
        return x;
      },
      [1],
    );
    expect(() => grad(([y]) => add(y, leaked as unknown as Node), [2])).toThrow(/different tapes/);
  });

  it("property: gradients of smooth compositions match central differences", () => {
    // f(x, y) = exp(x·y)/(1 + y²) + log(1 + x²) − expm1(x − y)·|y + 3| (y + 3 > 0 on the domain).
    const f = ([x, y]: readonly Scalar[]): Scalar =>
      sub(
        add(div(exp(mul(x, y)), add(1, square(y))), log(add(1, square(x)))),
        mul(expm1(sub(x, y)), abs(add(y, 3))),
      );
    fc.assert(
      fc.property(
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        (x, y) => {
          const out = grad((v) => f(v), [x, y]);
          expect(out.value).toBe(scalarValue(f([x, y])));
          const fd = centralDifference((v) => scalarValue(f(v)), [x, y], 1e-6);
          expectClose(out.grad, fd, { rtol: 1e-6, atol: 1e-8, what: "∇f" });
        },
      ),
      FC_PARAMS,
    );
  });
});

describe("arithmetic", () => {
  it("golden: add, sub, mul, div, neg at (x, y) = (3, −2)", () => {
    const at = (f: (x: Node, y: Node) => Scalar) => {
      const out = grad(([x, y]) => f(x, y), [3, -2]);
      return [out.value, ...out.grad];
    };
    // x + y = 1; ∂ = (1, 1).
    expect(at(add)).toEqual([1, 1, 1]);
    // x − y = 5; ∂ = (1, −1).
    expect(at(sub)).toEqual([5, 1, -1]);
    // x·y = −6; ∂ = (y, x) = (−2, 3).
    expect(at(mul)).toEqual([-6, -2, 3]);
    // x/y = −1.5; ∂x = 1/y = −0.5; ∂y = −x/y² = −3/4.
    expect(at(div)).toEqual([-1.5, -0.5, -0.75]);
    // −x = −3; ∂x = −1, ∂y = 0.
    expect(at((x) => neg(x))).toEqual([-3, -1, 0]);
    // constants fold: no node, plain numbers.
    expect(add(1, 2)).toBe(3);
  });
});

describe("elementary", () => {
  it("golden: exp, expm1, log, square at x = 0.5", () => {
    // exp: e^0.5, derivative e^0.5.
    expect(g1(exp, 0.5)).toEqual({ value: Math.exp(0.5), d: Math.exp(0.5) });
    // expm1: e^0.5 − 1 (accurately), derivative e^0.5.
    expect(g1(expm1, 0.5)).toEqual({ value: Math.expm1(0.5), d: Math.exp(0.5) });
    // log: ln 0.5 = −ln 2, derivative 1/0.5 = 2.
    expect(g1(log, 0.5)).toEqual({ value: -Math.LN2, d: 2 });
    // square: 0.25, derivative 2·0.5 = 1.
    expect(g1(square, 0.5)).toEqual({ value: 0.25, d: 1 });
  });
});

describe("abs", () => {
  it("golden: abs' is the sign away from 0", () => {
    // |−2| = 2 with slope −1; |3| = 3 with slope +1.
    expect(g1(abs, -2)).toEqual({ value: 2, d: -1 });
    expect(g1(abs, 3)).toEqual({ value: 3, d: 1 });
  });

  it("tie: abs'(0) = 0 and abs'(−0) = 0", () => {
    // torch: d|x|/dx = sgn(x) and sgn(0) = 0.
    expect(g1(abs, 0)).toEqual({ value: 0, d: 0 });
    expect(g1(abs, -0).d).toBe(0);
  });
});

describe("min", () => {
  it("golden: the gradient goes to the smaller operand", () => {
    // min(2, 5) = 2: ∂ = (1, 0); min(5, 2) = 2: ∂ = (0, 1).
    expect(Array.from(grad(([x, y]) => min(x, y), [2, 5]).grad)).toEqual([1, 0]);
    expect(Array.from(grad(([x, y]) => min(x, y), [5, 2]).grad)).toEqual([0, 1]);
  });

  it("tie: equal operands split the gradient ½/½", () => {
    // min(4, 4): ∂ = (½, ½); min(x, x) recombines ½ + ½ = 1; min(x, 4) at x = 4: ∂x = ½.
    expect(Array.from(grad(([x, y]) => min(x, y), [4, 4]).grad)).toEqual([0.5, 0.5]);
    expect(g1((x) => min(x, x), 4).d).toBe(1);
    expect(g1((x) => min(x, 4), 4).d).toBe(0.5);
  });
});

describe("max", () => {
  it("golden: the gradient goes to the larger operand", () => {
    // max(2, 5) = 5: ∂ = (0, 1); max(5, 2) = 5: ∂ = (1, 0).
    expect(Array.from(grad(([x, y]) => max(x, y), [2, 5]).grad)).toEqual([0, 1]);
    expect(Array.from(grad(([x, y]) => max(x, y), [5, 2]).grad)).toEqual([1, 0]);
  });

  it("tie: equal operands split the gradient ½/½", () => {
    // max(−3, −3): ∂ = (½, ½); max(2x, 6) at x = 3: ∂x = ½·2 = 1.
    expect(Array.from(grad(([x, y]) => max(x, y), [-3, -3]).grad)).toEqual([0.5, 0.5]);
    expect(g1((x) => max(mul(2, x), 6), 3).d).toBe(1);
  });
});

describe("clamp", () => {
  it("golden: the gradient passes strictly inside the band", () => {
    // clamp(1, 0.8, 1.2) = 1 with slope 1.
    expect(g1((x) => clamp(x, 0.8, 1.2), 1)).toEqual({ value: 1, d: 1 });
  });

  it("tie: the gradient passes at both edges (inclusive)", () => {
    // torch: ∂clamp/∂x = 1 iff lo ≤ x ≤ hi, so x = 0.8 and x = 1.2 pass.
    expect(g1((x) => clamp(x, 0.8, 1.2), 0.8)).toEqual({ value: 0.8, d: 1 });
    expect(g1((x) => clamp(x, 0.8, 1.2), 1.2)).toEqual({ value: 1.2, d: 1 });
  });

  it("golden: outside the band the gradient goes to the bound", () => {
    // clamp(1.5, 0.8, 1.2) = 1.2: ∂x = 0, ∂lo = 0, ∂hi = 1; clamp(0.5, …) = 0.8: ∂lo = 1.
    const above = grad(([x, lo, hi]) => clamp(x, lo, hi), [1.5, 0.8, 1.2]);
    expect([above.value, ...above.grad]).toEqual([1.2, 0, 0, 1]);
    const below = grad(([x, lo, hi]) => clamp(x, lo, hi), [0.5, 0.8, 1.2]);
    expect([below.value, ...below.grad]).toEqual([0.8, 0, 1, 0]);
    const inside = grad(([x, lo, hi]) => clamp(x, lo, hi), [1, 0.8, 1.2]);
    expect([inside.value, ...inside.grad]).toEqual([1, 1, 0, 0]);
  });
});

describe("where", () => {
  it("golden: the gradient flows only into the selected branch, even past NaN", () => {
    // where(true, 2x, y·NaN) = 2x: ∂x = 2 and ∂y = 0 (the NaN branch is never multiplied).
    const t = grad(([x, y]) => where(true, mul(2, x), mul(y, Number.NaN)), [1, 1]);
    expect([t.value, ...t.grad]).toEqual([2, 2, 0]);
    const f = grad(([x, y]) => where(false, mul(x, Number.POSITIVE_INFINITY), mul(3, y)), [1, 1]);
    expect([f.value, ...f.grad]).toEqual([3, 0, 3]);
  });
});

describe("sum", () => {
  it("golden: plain left-to-right order, every partial 1", () => {
    // (1e16 + 1) rounds to 1e16 (ulp 2, ties to even), then − 1e16 = 0; a compensated sum would
    // give 1. ∂/∂x = 1 for the middle term all the same.
    const out = g1((x) => sum([1e16, x, -1e16]), 1);
    expect(out).toEqual({ value: 0, d: 1 });
    expect(sum([])).toBe(0);
    // x + x + 3x = 5x: ∂ = 1 + 1 + 3 = 5.
    expect(g1((x) => sum([x, x, mul(3, x)]), 2)).toEqual({ value: 10, d: 5 });
  });
});

describe("sg", () => {
  it("golden: the value passes and the gradient does not", () => {
    // f(x) = x·sg[x] at 3: value 9; ∂f/∂x = sg[x] = 3 (not 2x = 6).
    expect(g1((x) => mul(x, sg(x)), 3)).toEqual({ value: 9, d: 3 });
    // sg[s]·(r/sg[r]) at r = e^0.3, s = 2: value 2·1 = 2, slope 2/e^0.3 · e^0.3 ≈ 2 (GSPO-token form).
    const out = g1((z) => {
      const r = exp(z);
      return mul(2, div(r, sg(r)));
    }, 0.3);
    expect(out.value).toBe(2);
    expect(out.d).toBeCloseTo(2, 14);
    expect(scalarValue(7)).toBe(7);
  });
});
