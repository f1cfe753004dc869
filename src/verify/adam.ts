/**
 * A minimal Adam optimiser for the end-to-end bandit checks
 * (docs/derivations/verify.md#claims-checked-by-monte-carlo-and-by-training). It updates a
 * Float64Array of parameters in place, so a {@link SoftmaxBandit} holding that array sees every step.
 */
import { fmtShape, fmtValue } from "../core/message.js";
import { checkFiniteAll } from "../core/validate.js";
import { ConfigError, fail, ShapeError } from "../errors.js";

/** Hyper-parameters of {@link Adam}; the defaults are Kingma and Ba's (and torch's). */
export interface AdamOptions {
  /** Step size α (finite, > 0). */
  readonly lr: number;
  /** First-moment decay β₁ in [0, 1). @defaultValue 0.9 */
  readonly beta1?: number;
  /** Second-moment decay β₂ in [0, 1). @defaultValue 0.999 */
  readonly beta2?: number;
  /** Added to √v̂ in the denominator (finite, ≥ 0). @defaultValue 1e-8 */
  readonly eps?: number;
}

/**
 * Adam (Kingma and Ba 2015, arXiv 1412.6980, Algorithm 1), minimising: one {@link Adam.step} per
 * gradient, parameters updated in place.
 *
 * Formula: m ← β₁m + (1 − β₁)g; v ← β₂v + (1 − β₂)g²; m̂ = m/(1 − β₁ᵗ); v̂ = v/(1 − β₂ᵗ);
 * θ ← θ − α·m̂/(√v̂ + ε). The first step moves every coordinate by α·g/(|g| + ε) ≈ α·sign(g).
 *
 * @derivation docs/derivations/verify.md#claims-checked-by-monte-carlo-and-by-training
 * @enforcedBy test/verify/claims.convergence.test.ts > Adam > golden: the first two steps on a fixed gradient
 * @since 0.1.0
 */
export class Adam {
  /** The parameters, updated in place (the array given). */
  readonly params: Float64Array;
  private readonly lr: number;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly eps: number;
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private t = 0;

  /**
   * @param params - The parameters to update in place.
   * @param options - lr (required), beta1, beta2, eps.
   * @throws {ConfigError} E_CONFIG when a hyper-parameter is out of range.
   */
  constructor(params: Float64Array, options: AdamOptions) {
    const fn = "Adam";
    const check = (arg: string, x: unknown, ok: (v: number) => boolean, rule: string): number => {
      if (!(typeof x === "number" && Number.isFinite(x) && ok(x)))
        throw fail(ConfigError, fn, arg, rule, fmtValue(x));
      return x;
    };
    if (!(params instanceof Float64Array))
      throw fail(ConfigError, fn, "params", "a Float64Array", typeof params);
    this.params = params;
    this.lr = check("options.lr", options.lr, (v) => v > 0, "finite and positive");
    this.beta1 = check("options.beta1", options.beta1 ?? 0.9, (v) => v >= 0 && v < 1, "in [0, 1)");
    this.beta2 = check(
      "options.beta2",
      options.beta2 ?? 0.999,
      (v) => v >= 0 && v < 1,
      "in [0, 1)",
    );
    this.eps = check("options.eps", options.eps ?? 1e-8, (v) => v >= 0, "finite and non-negative");
    this.m = new Float64Array(params.length);
    this.v = new Float64Array(params.length);
  }

  /** Number of steps taken. */
  get steps(): number {
    return this.t;
  }

  /**
   * Take one step against the gradient of the loss being minimised.
   * @param grad - ∂loss/∂params, the same length as params, finite.
   * @throws {ShapeError} E_SHAPE when the length differs from params.
   * @throws {NonFiniteError} E_NONFINITE when the gradient is not finite.
   */
  step(grad: ArrayLike<number>): void {
    const fn = "Adam.step";
    if (grad.length !== this.params.length) {
      throw fail(
        ShapeError,
        fn,
        "grad",
        `the shape of params ${fmtShape([this.params.length])}`,
        `shape ${fmtShape([grad.length])}`,
      );
    }
    checkFiniteAll(fn, "grad", grad);
    this.t += 1;
    const c1 = 1 - this.beta1 ** this.t;
    const c2 = 1 - this.beta2 ** this.t;
    for (let i = 0; i < grad.length; i++) {
      const g = grad[i] as number;
      const m = this.beta1 * (this.m[i] as number) + (1 - this.beta1) * g;
      const v = this.beta2 * (this.v[i] as number) + (1 - this.beta2) * g * g;
      this.m[i] = m;
      this.v[i] = v;
      this.params[i] =
        (this.params[i] as number) - (this.lr * (m / c1)) / (Math.sqrt(v / c2) + this.eps);
    }
  }
}
