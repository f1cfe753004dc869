/**
 * A small, exact reverse-mode automatic differentiator over float64 scalars: the independent
 * oracle behind the closed-form gradients of polgrad (docs/derivations/reference.md).
 *
 * Every operation on a {@link Node} appends one node to its tape, holding the value and the local
 * partial derivatives with respect to its operands. {@link grad} then walks the tape once in reverse
 * creation order over the nodes the output depends on, accumulating adjoints by the chain rule:
 * adj[parent] += adj[node] · ∂node/∂parent.
 * Plain numbers are constants: an operation whose operands are all numbers returns a number, so a
 * constant never becomes a node and never receives a gradient.
 *
 * Tie conventions follow torch exactly: `min`/`max` of two equal values split the gradient ½/½;
 * `clamp(x, lo, hi)` passes the gradient to x iff lo ≤ x ≤ hi (inclusive); abs'(0) = 0. `sum`
 * adds left to right with plain float64 additions (no compensation), so the oracle shares no
 * summation code with the closed forms it checks. Adjoints start at −0, so signed zeros accumulate
 * as torch's do.
 */
import { fmtValue } from "../core/message.js";
import { describeInput, isNumberArray, requireFunction } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";

/**
 * A recorded value on a tape: a variable, or the result of an operation that depends on one.
 * @since 0.1.0
 */
export class Node {
  /** The float64 value. */
  readonly value: number;
  /** The tape that recorded this node. @internal */
  readonly tape: Tape;
  /** Operands this node depends on. @internal */
  readonly parents: readonly Node[];
  /** ∂(this)/∂(parents[i]), evaluated at the recorded values. @internal */
  readonly partials: readonly number[];
  /** Position on the tape (creation order). @internal */
  readonly index: number;

  constructor(tape: Tape, value: number, parents: readonly Node[], partials: readonly number[]) {
    if (!(tape instanceof Tape))
      throw fail(
        ConfigError,
        "Node",
        "tape",
        "the Tape of a grad call (nodes are made by grad and the operations)",
        fmtValue(tape),
      );
    this.tape = tape;
    this.value = value;
    this.parents = parents;
    this.partials = partials;
    this.index = tape.nodes.length;
    tape.nodes.push(this);
  }
}

/**
 * The record of one differentiation: every node, in creation order.
 * @internal
 * @since 0.1.0
 */
export class Tape {
  readonly nodes: Node[] = [];
}

/**
 * A differentiable scalar: a recorded {@link Node} or a plain number (a constant).
 * @since 0.1.0
 */
export type Scalar = Node | number;

/** Return the float64 value of a scalar; anything else is a ConfigError naming `fn`. */
function val(x: Scalar, fn: string): number {
  if (typeof x === "number") return x;
  if (x instanceof Node) return x.value;
  throw fail(ConfigError, fn, "operand", "a Node (recorded by grad) or a number", fmtValue(x));
}

/**
 * Record a node with value `value` over operands `args` with local partials `partials`; constant
 * operands are dropped. Returns the plain value when no operand is a node.
 */
function record(value: number, args: readonly Scalar[], partials: readonly number[]): Scalar {
  const parents: Node[] = [];
  const kept: number[] = [];
  let tape: Tape | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (typeof a === "number") continue;
    if (tape === null) tape = a.tape;
    else if (a.tape !== tape)
      throw new ConfigError(
        "autodiff",
        "operand",
        "autodiff: operands must be recorded on one tape (one grad call); got nodes recorded on different tapes",
      );
    parents.push(a);
    kept.push(partials[i]);
  }
  return tape === null ? value : new Node(tape, value, parents, kept);
}

/**
 * Differentiate `f` at `xs` in reverse mode.
 * Formula: value = f(x); grad_i = ∂f/∂x_i, accumulated over the tape in reverse creation order.
 * Gradient / stop-gradient: constants and `sg[·]` values carry no gradient.
 * @param f - The function of the variables; it receives one {@link Node} per entry of `xs`.
 * @param xs - The point at which to differentiate.
 * @returns The value f(xs) and the gradient ∂f/∂xs (+0 where f does not depend on x_i; all +0
 *   when f returns a constant).
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > grad > golden: f(x, y) = x·y + exp(x) at (1, 2)
 * @enforcedBy test/verify/autodiff.test.ts > grad > golden: a variable used twice accumulates both paths
 * @enforcedBy test/verify/autodiff.test.ts > grad > tie: signed zeros accumulate as in torch
 * @enforcedBy test/verify/autodiff.test.ts > grad > property: gradients of smooth compositions match central differences
 * @since 0.1.0
 */
export function grad(
  f: (xs: readonly Node[]) => Scalar,
  xs: readonly number[],
): { value: number; grad: Float64Array } {
  requireFunction("grad", "f", f);
  if (!isNumberArray(xs))
    throw fail(ConfigError, "grad", "xs", "an array of numbers", describeInput(xs));
  const tape = new Tape();
  const vars = xs.map((x) => new Node(tape, x, [], []));
  const out: unknown = f(vars);
  const g = new Float64Array(xs.length);
  if (typeof out === "number") return { value: out, grad: g };
  if (!(out instanceof Node) || out.tape !== tape)
    throw fail(
      ConfigError,
      "grad",
      "f",
      "a function returning a number or a Node of its variables",
      out instanceof Node ? "a node from another tape" : fmtValue(out),
    );
  // Only nodes that `out` depends on take part (as in torch): a recorded but unused node, such as
  // the branch `where` did not select, is never multiplied into an adjoint.
  // Adjoints start at −0, the exact additive identity of float64 (−0 + x = x for every x, zeros
  // included), so a sum of contributions keeps the sign of zero that torch's assign-then-add
  // accumulation gives; a variable that receives no contribution reports +0.
  const reached = new Uint8Array(tape.nodes.length);
  const adj = new Float64Array(tape.nodes.length).fill(-0);
  reached[out.index] = 1;
  adj[out.index] = 1;
  for (let i = out.index; i >= 0; i--) {
    if (reached[i] === 0) continue;
    const node = tape.nodes[i];
    for (let k = 0; k < node.parents.length; k++) {
      const p = node.parents[k];
      reached[p.index] = 1;
      adj[p.index] += adj[i] * node.partials[k];
    }
  }
  for (let i = 0; i < vars.length; i++)
    g[i] = reached[vars[i].index] === 1 ? adj[vars[i].index] : 0;
  return { value: out.value, grad: g };
}

/**
 * Add two scalars.
 * Formula: a + b; ∂/∂a = 1, ∂/∂b = 1.
 * @param a - The first term.
 * @param b - The second term.
 * @returns a + b.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > arithmetic > golden: add, sub, mul, div, neg at (x, y) = (3, −2)
 * @since 0.1.0
 */
export function add(a: Scalar, b: Scalar): Scalar {
  return record(val(a, "add") + val(b, "add"), [a, b], [1, 1]);
}

/**
 * Subtract two scalars.
 * Formula: a − b; ∂/∂a = 1, ∂/∂b = −1.
 * @param a - The minuend.
 * @param b - The subtrahend.
 * @returns a − b.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > arithmetic > golden: add, sub, mul, div, neg at (x, y) = (3, −2)
 * @since 0.1.0
 */
export function sub(a: Scalar, b: Scalar): Scalar {
  return record(val(a, "sub") - val(b, "sub"), [a, b], [1, -1]);
}

/**
 * Multiply two scalars.
 * Formula: a·b; ∂/∂a = b, ∂/∂b = a.
 * @param a - The first factor.
 * @param b - The second factor.
 * @returns a·b.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > arithmetic > golden: add, sub, mul, div, neg at (x, y) = (3, −2)
 * @since 0.1.0
 */
export function mul(a: Scalar, b: Scalar): Scalar {
  return record(val(a, "mul") * val(b, "mul"), [a, b], [val(b, "mul"), val(a, "mul")]);
}

/**
 * Divide two scalars.
 * Formula: a/b; ∂/∂a = 1/b, ∂/∂b = −a/b².
 * @param a - The numerator.
 * @param b - The denominator.
 * @returns a/b.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > arithmetic > golden: add, sub, mul, div, neg at (x, y) = (3, −2)
 * @since 0.1.0
 */
export function div(a: Scalar, b: Scalar): Scalar {
  const av = val(a, "div");
  const bv = val(b, "div");
  return record(av / bv, [a, b], [1 / bv, -av / (bv * bv)]);
}

/**
 * Negate a scalar.
 * Formula: −a; ∂/∂a = −1.
 * @param a - The operand.
 * @returns −a.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > arithmetic > golden: add, sub, mul, div, neg at (x, y) = (3, −2)
 * @since 0.1.0
 */
export function neg(a: Scalar): Scalar {
  return record(-val(a, "neg"), [a], [-1]);
}

/**
 * Exponentiate a scalar.
 * Formula: eˣ; d/dx = eˣ.
 * @param x - The exponent.
 * @returns exp(x).
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > elementary > golden: exp, expm1, log, square at x = 0.5
 * @since 0.1.0
 */
export function exp(x: Scalar): Scalar {
  const e = Math.exp(val(x, "exp"));
  return record(e, [x], [e]);
}

/**
 * Compute eˣ − 1 accurately near 0.
 * Formula: expm1(x); d/dx = eˣ.
 * @param x - The exponent.
 * @returns expm1(x).
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > elementary > golden: exp, expm1, log, square at x = 0.5
 * @since 0.1.0
 */
export function expm1(x: Scalar): Scalar {
  return record(Math.expm1(val(x, "expm1")), [x], [Math.exp(val(x, "expm1"))]);
}

/**
 * Take the natural logarithm.
 * Formula: ln x; d/dx = 1/x.
 * @param x - The operand (> 0 for a finite result).
 * @returns log(x).
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > elementary > golden: exp, expm1, log, square at x = 0.5
 * @since 0.1.0
 */
export function log(x: Scalar): Scalar {
  return record(Math.log(val(x, "log")), [x], [1 / val(x, "log")]);
}

/**
 * Square a scalar.
 * Formula: x²; d/dx = 2x.
 * @param x - The operand.
 * @returns x·x.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > elementary > golden: exp, expm1, log, square at x = 0.5
 * @since 0.1.0
 */
export function square(x: Scalar): Scalar {
  const v = val(x, "square");
  return record(v * v, [x], [2 * v]);
}

/**
 * Take the absolute value (torch convention at the kink).
 * Formula: |x|; d/dx = sign(x), with abs'(0) = 0.
 * @param x - The operand.
 * @returns |x|.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > abs > golden: abs' is the sign away from 0
 * @enforcedBy test/verify/autodiff.test.ts > abs > tie: abs'(0) = 0 and abs'(−0) = 0
 * @since 0.1.0
 */
export function abs(x: Scalar): Scalar {
  const v = val(x, "abs");
  return record(Math.abs(v), [x], [v > 0 ? 1 : v < 0 ? -1 : 0]);
}

/**
 * Take the smaller of two scalars (torch `minimum` convention at ties).
 * Formula: min(a, b); the gradient goes to the smaller operand, ½/½ when a = b.
 * @param a - The first operand.
 * @param b - The second operand.
 * @returns min(a, b).
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > min > golden: the gradient goes to the smaller operand
 * @enforcedBy test/verify/autodiff.test.ts > min > tie: equal operands split the gradient ½/½
 * @since 0.1.0
 */
export function min(a: Scalar, b: Scalar): Scalar {
  const av = val(a, "min");
  const bv = val(b, "min");
  const pa = av < bv ? 1 : av > bv ? 0 : 0.5;
  return record(Math.min(av, bv), [a, b], [pa, 1 - pa]);
}

/**
 * Take the larger of two scalars (torch `maximum` convention at ties).
 * Formula: max(a, b); the gradient goes to the larger operand, ½/½ when a = b.
 * @param a - The first operand.
 * @param b - The second operand.
 * @returns max(a, b).
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > max > golden: the gradient goes to the larger operand
 * @enforcedBy test/verify/autodiff.test.ts > max > tie: equal operands split the gradient ½/½
 * @since 0.1.0
 */
export function max(a: Scalar, b: Scalar): Scalar {
  const av = val(a, "max");
  const bv = val(b, "max");
  const pa = av > bv ? 1 : av < bv ? 0 : 0.5;
  return record(Math.max(av, bv), [a, b], [pa, 1 - pa]);
}

/**
 * Clamp a scalar to [lo, hi] (torch `clamp` convention; requires lo ≤ hi).
 * Formula: min(max(x, lo), hi); ∂/∂x = 1 iff lo ≤ x ≤ hi (inclusive at both edges),
 * ∂/∂lo = 1 iff x < lo, ∂/∂hi = 1 iff x > hi.
 * @param x - The operand.
 * @param lo - The lower bound.
 * @param hi - The upper bound.
 * @returns x clamped to [lo, hi].
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > clamp > golden: the gradient passes strictly inside the band
 * @enforcedBy test/verify/autodiff.test.ts > clamp > tie: the gradient passes at both edges (inclusive)
 * @enforcedBy test/verify/autodiff.test.ts > clamp > golden: outside the band the gradient goes to the bound
 * @since 0.1.0
 */
export function clamp(x: Scalar, lo: Scalar, hi: Scalar): Scalar {
  const xv = val(x, "clamp");
  const lv = val(lo, "clamp");
  const hv = val(hi, "clamp");
  const inside = lv <= xv && xv <= hv ? 1 : 0;
  return record(
    Math.min(Math.max(xv, lv), hv),
    [x, lo, hi],
    [inside, xv < lv ? 1 : 0, xv > hv ? 1 : 0],
  );
}

/**
 * Select one of two scalars (torch `where`): the gradient flows only into the selected branch, and
 * the other is never multiplied by anything, so junk (NaN, ±Inf) there cannot leak.
 * Formula: cond ? a : b.
 * @param cond - The selector.
 * @param a - The value when `cond` is true.
 * @param b - The value when `cond` is false.
 * @returns `a` or `b`, unchanged.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > where > golden: the gradient flows only into the selected branch, even past NaN
 * @since 0.1.0
 */
export function where(cond: boolean, a: Scalar, b: Scalar): Scalar {
  return cond ? a : b;
}

/**
 * Sum scalars with plain float64 additions from left to right (deliberately not compensated: the
 * oracle must not share its summation with the closed forms it checks).
 * Formula: (((x₀ + x₁) + x₂) + …); ∂/∂x_i = 1. The empty sum is 0.
 * @param xs - The terms, in order.
 * @returns Their left-to-right sum.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > sum > golden: plain left-to-right order, every partial 1
 * @since 0.1.0
 */
export function sum(xs: readonly Scalar[]): Scalar {
  if (!Array.isArray(xs))
    throw fail(ConfigError, "sum", "xs", "an array of scalars", describeInput(xs));
  if (xs.length === 0) return 0;
  let s = val(xs[0], "sum");
  for (let i = 1; i < xs.length; i++) s += val(xs[i], "sum");
  return record(
    s,
    xs,
    xs.map(() => 1),
  );
}

/**
 * Stop the gradient: the value passes, the gradient does not (torch `.detach()`).
 * Formula: sg[x] = x as a value; ∂sg[x]/∂x = 0.
 * @param x - The operand.
 * @returns The value of x as a constant.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > sg > golden: the value passes and the gradient does not
 * @since 0.1.0
 */
export function sg(x: Scalar): number {
  return val(x, "sg");
}

/**
 * Read the value of a scalar (a node or a constant).
 * @param x - The scalar.
 * @returns Its float64 value.
 * @derivation docs/derivations/reference.md#autodiff
 * @enforcedBy test/verify/autodiff.test.ts > sg > golden: the value passes and the gradient does not
 * @since 0.1.0
 */
export function scalarValue(x: Scalar): number {
  return val(x, "scalarValue");
}
