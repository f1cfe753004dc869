/**
 * Monte Carlo helpers of the verification harness (docs/derivations/verify.md#monte-carlo): the
 * CLT tolerance z·s/√n, streaming moments merged by Chan et al.'s exact parallel update, and a
 * chunked, seeded Monte Carlo mean with its standard error. All arithmetic is float64.
 */
import { fmtValue } from "../core/message.js";
import type { Rng } from "../core/rng.js";
import { CompensatedSum } from "../core/sum.js";
import { ConfigError, fail, NonFiniteError, ShapeError } from "../errors.js";

/** Options of {@link cltTolerance}. */
export interface CltToleranceOptions {
  /** Number of standard errors allowed. @defaultValue 4 (two-sided miss probability ≈ 6.3e-5) */
  readonly z?: number;
}

/**
 * Return the CLT tolerance of a sample mean: z standard errors.
 *
 * Formula: tol = z·s/√n. With z = 4 a correct mean misses by more than tol with probability
 * 2·(1 − Φ(4)) ≈ 6.3e-5 (asymptotically).
 *
 * @param sampleStd - The (sample or exact) standard deviation s of one draw; finite, ≥ 0.
 * @param n - The number of draws averaged; an integer ≥ 1.
 * @param options - `z`, the number of standard errors (finite, > 0; default 4).
 * @returns z·s/√n.
 * @throws {ConfigError} E_CONFIG when s is negative or non-finite, n is not an integer ≥ 1, or z is
 *   not finite and positive.
 * @derivation docs/derivations/verify.md#monte-carlo
 * @enforcedBy test/verify/mc.test.ts > cltTolerance > golden: z times s over root n
 * @enforcedBy test/verify/mc.test.ts > cltTolerance > rejects: negative or non-finite std, n below 1, non-positive z
 * @since 0.1.0
 */
export function cltTolerance(
  sampleStd: number,
  n: number,
  options: CltToleranceOptions = {},
): number {
  const fn = "cltTolerance";
  if (!(Number.isFinite(sampleStd) && sampleStd >= 0)) {
    throw fail(ConfigError, fn, "sampleStd", "finite and non-negative", fmtValue(sampleStd));
  }
  checkCount(fn, "n", n, 1);
  const z = options.z ?? 4;
  if (!(Number.isFinite(z) && z > 0)) {
    throw fail(ConfigError, fn, "options.z", "finite and positive", fmtValue(z));
  }
  return (z * sampleStd) / Math.sqrt(n);
}

function checkCount(fn: string, arg: string, n: unknown, min: number, why = ""): number {
  if (!(typeof n === "number" && Number.isSafeInteger(n) && n >= min)) {
    throw fail(ConfigError, fn, arg, `an integer >= ${min}${why}`, fmtValue(n));
  }
  return n;
}

/** The sufficient statistics of a sample: count, mean and M2 = Σ (x − mean)². */
export interface MomentStats {
  /** Number of values. */
  readonly count: number;
  /** Their mean (0 when count is 0). */
  readonly mean: number;
  /** Σ (x − mean)² (0 when count ≤ 1). */
  readonly m2: number;
}

/**
 * Streaming mean and variance in float64: values arrive one at a time ({@link RunningMoments.add})
 * or in chunks ({@link RunningMoments.addAll}), and chunk statistics are merged by the exact
 * parallel update of Chan, Golub and LeVeque (1979, "Updating formulae and a pairwise algorithm
 * for computing sample variances"):
 *
 * Formula: with δ = mean_b − mean_a and n = n_a + n_b,
 * mean = mean_a + δ·n_b/n, M2 = M2_a + M2_b + δ²·n_a·n_b/n; variance = max(M2, 0)/(n − 1) (Bessel),
 * stdErr = √(variance/n).
 *
 * @derivation docs/derivations/verify.md#monte-carlo
 * @enforcedBy test/verify/mc.test.ts > RunningMoments > golden: 1, 2, 3, 4 has mean 2.5 and variance 5/3
 * @enforcedBy test/verify/mc.test.ts > RunningMoments > identity: merging chunk statistics equals one pass over the values
 * @since 0.1.0
 */
export class RunningMoments {
  private n = 0;
  private mu = 0;
  private M2 = 0;

  /** Number of values seen. */
  get count(): number {
    return this.n;
  }

  /** The current statistics (count, mean, M2), e.g. to merge into another accumulator. */
  get stats(): MomentStats {
    return { count: this.n, mean: this.mu, m2: this.M2 };
  }

  /**
   * The mean of the values seen.
   * @throws {ConfigError} E_CONFIG when no value has been added.
   */
  get mean(): number {
    checkCount("RunningMoments.mean", "count", this.n, 1, " (add a value first)");
    return this.mu;
  }

  /**
   * The Bessel-corrected variance max(M2, 0)/(n − 1).
   * @throws {ConfigError} E_CONFIG when fewer than 2 values have been added.
   */
  get variance(): number {
    checkCount("RunningMoments.variance", "count", this.n, 2, " for the Bessel-corrected variance");
    return Math.max(this.M2, 0) / (this.n - 1);
  }

  /**
   * The standard error of the mean, √(variance/n).
   * @throws {ConfigError} E_CONFIG when fewer than 2 values have been added.
   */
  get stdErr(): number {
    checkCount("RunningMoments.stdErr", "count", this.n, 2, " for the standard error");
    return Math.sqrt(this.variance / this.n);
  }

  /**
   * Add one value (a merge with the one-value statistics (1, x, 0)).
   * @throws {NonFiniteError} E_NONFINITE when x is NaN or infinite.
   */
  add(x: number): void {
    if (!Number.isFinite(x)) {
      throw fail(NonFiniteError, "RunningMoments.add", "x", "finite", fmtValue(x));
    }
    this.merge({ count: 1, mean: x, m2: 0 });
  }

  /**
   * Add a chunk of values: its mean and M2 are computed in two compensated passes, then merged.
   * @throws {NonFiniteError} E_NONFINITE when a value is NaN or infinite.
   */
  addAll(xs: ArrayLike<number>): void {
    this.merge(chunkStats("RunningMoments.addAll", "xs", xs));
  }

  /**
   * Merge another sample's statistics (Chan et al.'s parallel update).
   * @throws {ConfigError} E_CONFIG when the statistics are not a non-negative integer count with
   *   finite mean and non-negative finite M2.
   */
  merge(other: MomentStats): void {
    const fn = "RunningMoments.merge";
    const k = checkCount(fn, "other.count", other.count, 0);
    if (!Number.isFinite(other.mean) || !(Number.isFinite(other.m2) && other.m2 >= 0)) {
      throw fail(ConfigError, fn, "other", "finite with M2 >= 0", fmtValue(other));
    }
    if (k === 0) return;
    const total = this.n + k;
    const delta = other.mean - this.mu;
    this.mu += (delta * k) / total;
    this.M2 += other.m2 + (delta * delta * this.n * k) / total;
    this.n = total;
  }
}

/** Mean and M2 of one chunk by two compensated passes (the chunk's own two-pass statistics). */
function chunkStats(fn: string, arg: string, xs: ArrayLike<number>): MomentStats {
  const s = new CompensatedSum();
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i] as number;
    if (!Number.isFinite(x)) {
      throw fail(NonFiniteError, fn, arg, "finite", `${fmtValue(x)} at index ${i}`);
    }
    s.add(x);
  }
  if (xs.length === 0) return { count: 0, mean: 0, m2: 0 };
  const mean = s.value() / xs.length;
  const q = new CompensatedSum();
  for (let i = 0; i < xs.length; i++) {
    const d = (xs[i] as number) - mean;
    q.add(d * d);
  }
  return { count: xs.length, mean, m2: q.value() };
}

/** Options of {@link mcMean}. */
export interface McMeanOptions {
  /** Largest chunk requested from `fn` at once. @defaultValue 4096 */
  readonly batch?: number;
}

/** A Monte Carlo estimate: the sample mean and its standard error √(s²/n). */
export interface McEstimate {
  /** The sample mean of the n draws. */
  readonly mean: number;
  /** The standard error of the mean, √(s²/n) with s² the Bessel-corrected variance. */
  readonly stdErr: number;
}

/**
 * Estimate E[X] from n seeded draws requested in chunks, with the standard error of the estimate.
 *
 * Formula: draws come from `fn(k, rng)` with k = min(batch, remaining), the same `rng` threaded
 * through every call; each chunk's (k, mean, M2) is merged by Chan et al.'s update (see
 * {@link RunningMoments}); mean = x̄, stdErr = √(max(M2, 0)/(n − 1)/n). The chunking changes only
 * the rounding, not the estimate: on a fixed stream any batch size agrees to ~1e-15.
 *
 * @param fn - Draws k values: `fn(k, rng)` must return exactly k finite numbers.
 * @param n - Total number of draws; an integer ≥ 2 so the standard error is defined.
 * @param rng - The seeded stream (createRng); equal seeds give bitwise-equal estimates.
 * @param options - `batch`, the largest chunk (an integer ≥ 1; default 4096).
 * @returns The mean and its standard error.
 * @throws {ConfigError} E_CONFIG when n is not an integer ≥ 2 or batch not an integer ≥ 1.
 * @throws {ShapeError} E_SHAPE when a chunk does not hold exactly k values.
 * @throws {NonFiniteError} E_NONFINITE when a chunk holds NaN or ±Infinity.
 * @derivation docs/derivations/verify.md#monte-carlo
 * @enforcedBy test/verify/mc.test.ts > mcMean > golden: the stream 1, 2, 3, 4 in chunks of 3
 * @enforcedBy test/verify/mc.test.ts > mcMean > identity: the estimate does not depend on the batch size
 * @enforcedBy test/verify/mc.test.ts > mcMean > identity: equal seeds give bitwise-equal estimates
 * @enforcedBy test/verify/mc.test.ts > mcMean > calibration: normal, uniform and bernoulli means within 4 standard errors
 * @since 0.1.0
 */
export function mcMean(
  fn: (k: number, rng: Rng) => ArrayLike<number>,
  n: number,
  rng: Rng,
  options: McMeanOptions = {},
): McEstimate {
  const name = "mcMean";
  if (typeof fn !== "function") {
    throw fail(ConfigError, name, "fn", "a function (k, rng) => k numbers", typeof fn);
  }
  checkCount(name, "n", n, 2, " so the standard error is defined");
  const batch = checkCount(name, "options.batch", options.batch ?? 4096, 1);
  const acc = new RunningMoments();
  for (let done = 0; done < n; ) {
    const k = Math.min(batch, n - done);
    const chunk = fn(k, rng);
    if (chunk === null || typeof chunk !== "object" || chunk.length !== k) {
      const got =
        chunk === null || typeof chunk !== "object" ? typeof chunk : `${chunk.length} values`;
      throw fail(ShapeError, name, "fn(k, rng)", `${k} values (k = ${k})`, got);
    }
    acc.merge(chunkStats(name, "fn(k, rng)", chunk));
    done += k;
  }
  return { mean: acc.mean, stdErr: acc.stdErr };
}
