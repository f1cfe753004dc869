/**
 * Seeded random batches for certifying a loss implementation (polgrad's
 * `polgrad.testing.random_batches`, docs/testing.md#randombatches). Browser-safe.
 */
import { fmtValue } from "../core/message.js";
import { createRng } from "../core/rng.js";
import { checkEps } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";

/** One drawn case: its seed and shape, and the streams as nested rows (PolicyLossInputs-compatible). */
export interface TestBatch {
  /** The case seed: `createRng(seed)` replays the case. */
  readonly seed: number;
  /** The case's index in the run. */
  readonly index: number;
  readonly shape: readonly [number, number];
  readonly logprobs: number[][];
  readonly oldLogprobs: number[][];
  readonly refLogprobs: number[][];
  readonly rolloutLogprobs: number[][];
  /** `[B]` (advantages "row", the default) or `[B, T]` ("token"). */
  readonly advantages: number[] | number[][];
  readonly responseMask: boolean[][];
  /** Per-token entropies U[0.05, 4], drawn after every other stream (a polgrad addition). */
  readonly entropies: number[][];
}

/** Options of {@link randomBatches}. */
export interface RandomBatchOptions {
  /** The master seed (default 0). */
  readonly seed?: number;
  /** Half-width of the old/ref/rollout gaps, ≥ 0 (default 2, polgrad's). */
  readonly maxGap?: number;
  /** `row` (default): `[B]` advantages, as polgrad; `token`: `[B, T]`. */
  readonly advantages?: "row" | "token";
}

/** The default shapes of {@link randomBatches}' callers (polgrad's assert_conforms shapes). */
export const DEFAULT_TEST_SHAPES: readonly (readonly [number, number])[] = [
  [4, 8],
  [2, 12],
];

const FN = "randomBatches";

/** Validate a shape list: a non-empty list of [B, T] with positive integer entries. */
export function checkShapes(
  fn: string,
  arg: string,
  shapes: unknown,
): readonly (readonly [number, number])[] {
  if (!Array.isArray(shapes) || shapes.length === 0)
    throw fail(ConfigError, fn, arg, "a non-empty list of [B, T] pairs", fmtValue(shapes));
  shapes.forEach((s, i) => {
    if (
      !Array.isArray(s) ||
      s.length !== 2 ||
      !s.every((x) => typeof x === "number" && Number.isSafeInteger(x) && x >= 1 && x <= 1 << 20)
    )
      throw fail(
        ConfigError,
        fn,
        `${arg}[${i}]`,
        "a [B, T] pair of integers in 1..1048576",
        fmtValue(s),
      );
  });
  return shapes as readonly (readonly [number, number])[];
}

/**
 * Draw `nCases` seeded ragged batches, cycling through `shapes`. Validation is eager (at the call).
 *
 * Formula: the master rng is createRng(seed); case i uses createRng(caseSeed_i), caseSeed_i its
 * i-th childSeed(), shape shapes[i mod len], and draws in this order (U uniform on [0, 1)): row
 * lengths L_b uniform in 1..T (right-padded mask); logprobs = U·7.9375 − 8 ∈ [−8, −0.0625];
 * old = lp + (2U − 1)·maxGap; ref = lp + (2U − 1)·maxGap; rollout = old + (2U − 1)·maxGap;
 * advantages (2U − 1)·3, `[B]` or `[B, T]`; entropies U[0.05, 4]. Every matrix is drawn row-major,
 * padding included: masked positions hold in-range values, as polgrad's do.
 *
 * @param nCases - Number of cases, an integer ≥ 1 (the cases hold at most 2^22 tokens in all).
 * @param shapes - The `[B, T]` shapes, cycled.
 * @param options - Master seed, gap width, advantage shape.
 * @returns The cases, in order.
 * @throws {ConfigError} E_CONFIG for a bad case count, shape list, seed, gap or advantage shape.
 * @derivation docs/testing.md#randombatches
 * @enforcedBy test/testing/randomBatches.test.ts > randomBatches > property: the draws stay in their documented bounds and a seed replays them
 * @since 0.2.0
 */
export function randomBatches(
  nCases: number,
  shapes: readonly (readonly [number, number])[] = DEFAULT_TEST_SHAPES,
  options: RandomBatchOptions = {},
): TestBatch[] {
  if (!Number.isSafeInteger(nCases) || nCases < 1 || nCases > 1_000_000)
    throw fail(ConfigError, FN, "nCases", "an integer in 1..1000000", fmtValue(nCases));
  const sh = checkShapes(FN, "shapes", shapes);
  // Every case is held as nested rows: at most 2^22 tokens in all (a few hundred MB of arrays).
  let tokens = 0;
  for (let i = 0; i < Math.min(nCases, sh.length); i++) {
    const [B, T] = sh[i] as readonly [number, number];
    tokens += B * T * Math.ceil((nCases - i) / sh.length);
  }
  if (tokens > 2 ** 22)
    throw fail(
      ConfigError,
      FN,
      "nCases",
      "a count whose cases hold at most 4194304 tokens in all",
      `${nCases} cases of ${tokens} tokens`,
    );
  const seed = options.seed ?? 0;
  if (!Number.isSafeInteger(seed))
    throw fail(ConfigError, FN, "options.seed", "a safe integer", fmtValue(seed));
  const maxGap = checkEps(FN, "options.maxGap", options.maxGap ?? 2);
  const advShape = options.advantages ?? "row";
  if (advShape !== "row" && advShape !== "token")
    throw fail(ConfigError, FN, "options.advantages", '"row" or "token"', fmtValue(advShape));
  const master = createRng(seed);
  const out: TestBatch[] = [];
  for (let i = 0; i < nCases; i++) {
    const caseSeed = master.childSeed();
    const shape = sh[i % sh.length] as readonly [number, number];
    out.push(drawCase(i, caseSeed, shape, maxGap, advShape));
  }
  return out;
}

function drawCase(
  index: number,
  seed: number,
  shape: readonly [number, number],
  maxGap: number,
  advShape: "row" | "token",
): TestBatch {
  const rng = createRng(seed);
  const [B, T] = shape;
  const lengths = Array.from({ length: B }, () => rng.int(1, T));
  const responseMask = lengths.map((L) => Array.from({ length: T }, (_, t) => t < L));
  const matrix = (f: (b: number, t: number) => number): number[][] =>
    Array.from({ length: B }, (_, b) => Array.from({ length: T }, (_, t) => f(b, t)));
  const logprobs = matrix(() => rng.uniform() * 7.9375 - 8);
  const gap = () => (2 * rng.uniform() - 1) * maxGap;
  const oldLogprobs = matrix((b, t) => ((logprobs[b] as number[])[t] as number) + gap());
  const refLogprobs = matrix((b, t) => ((logprobs[b] as number[])[t] as number) + gap());
  const rolloutLogprobs = matrix((b, t) => ((oldLogprobs[b] as number[])[t] as number) + gap());
  const advantages =
    advShape === "row"
      ? Array.from({ length: B }, () => (2 * rng.uniform() - 1) * 3)
      : matrix(() => (2 * rng.uniform() - 1) * 3);
  const entropies = matrix(() => rng.uniformIn(0.05, 4));
  return {
    seed,
    index,
    shape: [B, T],
    logprobs,
    oldLogprobs,
    refLogprobs,
    rolloutLogprobs,
    advantages,
    responseMask,
    entropies,
  };
}

/**
 * polgrad's pytest fixture `polgrad_batches` returns the `random_batches` function itself; this is
 * that function under the fixture's name, for a runner's fixture mechanism (vitest's `test.extend`,
 * docs/testing.md#a-test-runner-fixture).
 *
 * @derivation docs/testing.md#a-test-runner-fixture
 * @enforcedBy test/testing/fixture.test.ts > polgradBatches fixture > golden: a vitest fixture hands the test randomBatches itself
 * @since 0.2.0
 */
export const polgradBatches: typeof randomBatches = randomBatches;
