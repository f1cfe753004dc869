/**
 * The softmax bandit (docs/derivations/verify.md#softmax-bandit): a K-armed policy π = softmax(θ)
 * with fixed arm rewards, whose expectations are finite sums. It turns polgrad's per-token
 * gradients ∂loss/∂logprobs into parameter gradients ∂loss/∂θ by the chain rule, so losses can be
 * checked against exact expectations and trained end to end.
 */
import { fmtShape, fmtValue } from "../core/message.js";
import type { Rng } from "../core/rng.js";
import { CompensatedSum } from "../core/sum.js";
import type { Mask, Matrix, MatrixLike, VectorLike } from "../core/tensor.js";
import { checkFiniteAll, toMatrix, toVector } from "../core/validate.js";
import { ConfigError, fail, ShapeError } from "../errors.js";

/**
 * A batch of n one-token "sequences" drawn from a {@link SoftmaxBandit}, in the shapes polgrad's
 * losses read (`[n, 1]` streams, all-true mask).
 *
 * @since 0.1.0
 */
export interface BanditBatch {
  /** `[n]` the arm pulled by each sample. */
  readonly actions: Int32Array;
  /** `[n, 1]` log π_θ(action) at the θ of sampling — the differentiable stream. */
  readonly logprobs: Matrix;
  /** `[n, 1]` a copy of `logprobs` (the sampling policy is the current one: on-policy). */
  readonly oldLogprobs: Matrix;
  /** `[n, 1]` a copy of `logprobs` (replace it to anchor a KL term elsewhere). */
  readonly refLogprobs: Matrix;
  /** `[n, 1]` a copy of `logprobs` (what a rollout engine would report, here exactly). */
  readonly rolloutLogprobs: Matrix;
  /** `[n, 1]` all ones. */
  readonly responseMask: Mask;
  /** `[n, 1]` the policy's entropy H(π_θ) at every sample (one state: the same for each). */
  readonly entropies: Matrix;
  /** `[n]` the reward of each pulled arm. */
  readonly rewards: Float64Array;
}

function column(values: Float64Array): Matrix {
  return { rows: values.length, cols: 1, data: values };
}

/**
 * A K-armed softmax bandit: policy π = softmax(θ) over arms with fixed rewards r.
 *
 * Formula: log π_j = θ_j − log Σ_k e^{θ_k} (evaluated as (θ_j − m) − log Σ_k e^{θ_k − m},
 * m = max θ); J(θ) = Σ_j π_j r_j; ∂ log π_y/∂θ_j = 1[y = j] − π_j.
 * Gradient / stop-gradient: every method evaluates at the current θ. θ is held by reference (when
 * given as a Float64Array), so an optimiser that updates it in place is seen by the next call.
 *
 * @derivation docs/derivations/verify.md#softmax-bandit
 * @enforcedBy test/verify/bandit.test.ts > SoftmaxBandit > golden: probabilities, entropy and policy gradient at theta = (0, log 3)
 * @enforcedBy test/verify/bandit.test.ts > SoftmaxBandit > gradient: closed forms match reverse-mode autodiff
 * @enforcedBy test/verify/bandit.test.ts > SoftmaxBandit > identity: the sample contract and the chain rule to theta
 * @since 0.1.0
 */
export class SoftmaxBandit {
  /** `[K]` logits, held by reference (the array given, when it is a Float64Array). */
  readonly theta: Float64Array;
  /** `[K]` the reward of each arm (a copy of the array given). */
  readonly armRewards: Float64Array;

  /**
   * @param theta - `[K]` finite logits, K ≥ 2. A Float64Array is held by reference; a plain array
   *   is copied.
   * @param armRewards - `[K]` finite arm rewards.
   * @throws {ShapeError} E_SHAPE when θ has fewer than 2 arms or the rewards differ in length.
   * @throws {NonFiniteError} E_NONFINITE when θ or a reward is NaN or infinite.
   */
  constructor(theta: VectorLike, armRewards: VectorLike) {
    const fn = "SoftmaxBandit";
    const t = toVector(fn, "theta", theta);
    if (t.length < 2) {
      throw fail(ShapeError, fn, "theta", "[K] with K >= 2 arms", `shape ${fmtShape([t.length])}`);
    }
    const r = Float64Array.from(toVector(fn, "armRewards", armRewards));
    if (r.length !== t.length) {
      throw fail(
        ShapeError,
        fn,
        "armRewards",
        `the shape of theta ${fmtShape([t.length])}`,
        `shape ${fmtShape([r.length])}`,
      );
    }
    checkFiniteAll(fn, "theta", t);
    checkFiniteAll(fn, "armRewards", r);
    this.theta = t;
    this.armRewards = r;
  }

  /** The number of arms K. */
  get numArms(): number {
    return this.theta.length;
  }

  /** θ after checking it is still finite (an optimiser may have broken it). */
  private currentTheta(fn: string): Float64Array {
    checkFiniteAll(fn, "theta", this.theta);
    return this.theta;
  }

  /**
   * The log-probabilities log π_j, by the max-shifted log-sum-exp.
   * @throws {NonFiniteError} E_NONFINITE when θ has become non-finite.
   */
  logProbs(): Float64Array {
    const t = this.currentTheta("SoftmaxBandit.logProbs");
    let m = Number.NEGATIVE_INFINITY;
    for (const x of t) m = Math.max(m, x);
    const s = new CompensatedSum();
    for (const x of t) s.add(Math.exp(x - m));
    const logS = Math.log(s.value());
    return t.map((x) => x - m - logS);
  }

  /**
   * The probabilities π_j = e^{θ_j − m}/Σ_k e^{θ_k − m} (m = max θ; never overflows).
   * @throws {NonFiniteError} E_NONFINITE when θ has become non-finite.
   */
  probs(): Float64Array {
    const t = this.currentTheta("SoftmaxBandit.probs");
    let m = Number.NEGATIVE_INFINITY;
    for (const x of t) m = Math.max(m, x);
    const e = t.map((x) => Math.exp(x - m));
    const s = new CompensatedSum();
    for (const x of e) s.add(x);
    const total = s.value();
    return e.map((x) => x / total);
  }

  /**
   * The entropy H(π) = −Σ_j π_j log π_j (closed form, in nats).
   * @throws {NonFiniteError} E_NONFINITE when θ has become non-finite.
   */
  entropy(): number {
    const p = this.probs();
    const lp = this.logProbs();
    const s = new CompensatedSum();
    for (let j = 0; j < p.length; j++) s.add(-(p[j] as number) * (lp[j] as number));
    return s.value();
  }

  /**
   * The expected reward J(θ) = Σ_j π_j r_j.
   * @throws {NonFiniteError} E_NONFINITE when θ has become non-finite.
   */
  expectedReward(): number {
    const p = this.probs();
    const s = new CompensatedSum();
    for (let j = 0; j < p.length; j++) s.add((p[j] as number) * (this.armRewards[j] as number));
    return s.value();
  }

  /**
   * The exact ascent gradient of J_A(θ) = Σ_k π_k A_k: ∂J_A/∂θ_j = π_j (A_j − Σ_k π_k A_k). It sums
   * to 0 and is unchanged by A + c.
   * @param advantages - `[K]` finite per-arm advantages A.
   * @returns `[K]` the gradient.
   * @throws {ShapeError} E_SHAPE when A is not `[K]`.
   * @throws {NonFiniteError} E_NONFINITE when A (or θ) is not finite.
   */
  exactPolicyGradient(advantages: VectorLike): Float64Array {
    const fn = "SoftmaxBandit.exactPolicyGradient";
    const A = this.armVector(fn, "advantages", advantages);
    const p = this.probs();
    const s = new CompensatedSum();
    for (let k = 0; k < p.length; k++) s.add((p[k] as number) * (A[k] as number));
    const baseline = s.value();
    return p.map((pj, j) => pj * ((A[j] as number) - baseline));
  }

  /**
   * The exact KL(π_θ ‖ π_θ′) = Σ_j π_j (log π_j − log π′_j), both by log-softmax. Exactly 0 when
   * θ′ = θ; clamped at 0 so that rounding never reports a negative KL for nearly equal policies.
   * @param otherTheta - `[K]` finite logits θ′ of the second policy.
   * @returns The KL in nats, ≥ 0.
   * @throws {ShapeError} E_SHAPE when θ′ is not `[K]`.
   * @throws {NonFiniteError} E_NONFINITE when θ′ (or θ) is not finite.
   */
  exactKl(otherTheta: VectorLike): number {
    const fn = "SoftmaxBandit.exactKl";
    const other = new SoftmaxBandit(this.armVector(fn, "otherTheta", otherTheta), this.armRewards);
    const p = this.probs();
    const lp = this.logProbs();
    const lq = other.logProbs();
    const s = new CompensatedSum();
    for (let j = 0; j < p.length; j++)
      s.add((p[j] as number) * ((lp[j] as number) - (lq[j] as number)));
    return Math.max(0, s.value());
  }

  /**
   * Draw n arms i.i.d. from π (one `rng.categorical(π)` per draw) and return the batch.
   * @param n - Number of samples, an integer ≥ 1.
   * @param rng - The seeded stream.
   * @returns The batch; its streams are log π at the current θ.
   * @throws {ConfigError} E_CONFIG when n is not an integer ≥ 1.
   */
  sample(n: number, rng: Rng): BanditBatch {
    return this.batchFor(this.draw("SoftmaxBandit.sample", n, rng));
  }

  /**
   * Draw n arms exactly as {@link SoftmaxBandit.sample} does (same stream consumption, same arms)
   * but return only the count of each arm — the fast path for statistics that depend on a sample
   * only through its arm, whose per-sample values are then identical within an arm.
   * @param n - Number of samples, an integer ≥ 1.
   * @param rng - The seeded stream.
   * @returns `[K]` counts summing to n.
   * @throws {ConfigError} E_CONFIG when n is not an integer ≥ 1.
   */
  sampleCounts(n: number, rng: Rng): Int32Array {
    const actions = this.draw("SoftmaxBandit.sampleCounts", n, rng);
    const counts = new Int32Array(this.numArms);
    for (const a of actions) counts[a] = (counts[a] as number) + 1;
    return counts;
  }

  /**
   * The batch for given arms (no randomness): the enumeration counterpart of
   * {@link SoftmaxBandit.sample}.
   * @param actions - `[n]` arm indices in [0, K), n ≥ 1.
   * @returns The batch at the current θ.
   * @throws {ConfigError} E_CONFIG when an action is not an integer in [0, K) or there is none.
   */
  batchFor(actions: ArrayLike<number>): BanditBatch {
    const a = this.checkActions("SoftmaxBandit.batchFor", "actions", actions);
    const lpArm = this.logProbs();
    const n = a.length;
    const lp = new Float64Array(n);
    const rewards = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      lp[i] = lpArm[a[i] as number] as number;
      rewards[i] = this.armRewards[a[i] as number] as number;
    }
    return {
      actions: a,
      logprobs: column(lp),
      oldLogprobs: column(lp.slice()),
      refLogprobs: column(lp.slice()),
      rolloutLogprobs: column(lp.slice()),
      responseMask: { rows: n, cols: 1, data: new Uint8Array(n).fill(1) },
      entropies: column(new Float64Array(n).fill(this.entropy())),
      rewards,
    };
  }

  /**
   * Map a per-sample gradient ∂L/∂logprobs_i to ∂L/∂θ by the chain rule, at the current θ.
   *
   * Formula: ∂L/∂θ_j = Σ_i G_i (1[y_i = j] − π_j) = S_j − π_j·Σ_k S_k, with S_j = Σ_{i: y_i = j} G_i.
   * With G = 1 this is the sample contract ∂(Σ_i logprobs_i)/∂θ_j = count_j − n·π_j.
   * Evaluate it before updating θ: π is read from the current θ.
   *
   * @param batch - The batch the loss was computed on (its `actions` are used).
   * @param gradLogprobs - `[n, 1]` ∂L/∂logprobs, e.g. a polgrad result's `gradLogprobs`.
   * @returns `[K]` ∂L/∂θ.
   * @throws {ShapeError} E_SHAPE when gradLogprobs is not `[n, 1]`.
   * @throws {NonFiniteError} E_NONFINITE when gradLogprobs is not finite.
   * @throws {ConfigError} E_CONFIG when an action is not an integer in [0, K).
   */
  thetaGradient(batch: BanditBatch, gradLogprobs: MatrixLike): Float64Array {
    const fn = "SoftmaxBandit.thetaGradient";
    const a = this.checkActions(fn, "batch.actions", batch.actions);
    const G = toMatrix(fn, "gradLogprobs", gradLogprobs);
    if (G.rows !== a.length || G.cols !== 1) {
      throw fail(
        ShapeError,
        fn,
        "gradLogprobs",
        `[n, 1] = ${fmtShape([a.length, 1])}`,
        `shape ${fmtShape([G.rows, G.cols])}`,
      );
    }
    checkFiniteAll(fn, "gradLogprobs", G.data);
    const K = this.numArms;
    const perArm = Array.from({ length: K }, () => new CompensatedSum());
    for (let i = 0; i < a.length; i++)
      (perArm[a[i] as number] as CompensatedSum).add(G.data[i] as number);
    const S = perArm.map((s) => s.value());
    const total = new CompensatedSum();
    for (const x of S) total.add(x);
    const sum = total.value();
    const p = this.probs();
    return p.map((pj, j) => (S[j] as number) - pj * sum);
  }

  private draw(fn: string, n: number, rng: Rng): Int32Array {
    if (!(typeof n === "number" && Number.isSafeInteger(n) && n >= 1)) {
      throw fail(ConfigError, fn, "n", "an integer >= 1", fmtValue(n));
    }
    const p = this.probs();
    const actions = new Int32Array(n);
    for (let i = 0; i < n; i++) actions[i] = rng.categorical(p);
    return actions;
  }

  private armVector(fn: string, arg: string, x: VectorLike): Float64Array {
    const v = toVector(fn, arg, x);
    if (v.length !== this.numArms) {
      throw fail(
        ShapeError,
        fn,
        arg,
        `[K] = ${fmtShape([this.numArms])}`,
        `shape ${fmtShape([v.length])}`,
      );
    }
    checkFiniteAll(fn, arg, v);
    return v;
  }

  private checkActions(fn: string, arg: string, actions: ArrayLike<number>): Int32Array {
    const K = this.numArms;
    if (actions === null || typeof actions !== "object" || actions.length < 1) {
      throw fail(ConfigError, fn, arg, "a non-empty list of arm indices", fmtValue(actions));
    }
    const out = new Int32Array(actions.length);
    for (let i = 0; i < actions.length; i++) {
      const y = actions[i] as number;
      if (!(Number.isInteger(y) && y >= 0 && y < K)) {
        throw fail(
          ConfigError,
          fn,
          arg,
          `arm indices in [0, ${K})`,
          `${fmtValue(y)} at index ${i}`,
        );
      }
      out[i] = y;
    }
    return out;
  }
}
