/**
 * fast-check arbitraries of the test kit: right-padded ragged masks and logprob / value batches
 * with junk (123, NaN, ±Inf) at padding, so that any mask leak shows up (polgrad's MASKED_JUNK rule).
 */
import fc from "fast-check";

/** The fixed fast-check parameters of the verify suite (raise numRuns with POLGRAD_NUM_RUNS). */
export const FC_PARAMS: { seed: number; numRuns: number } = {
  seed: 20261130,
  numRuns: Number(process.env.POLGRAD_NUM_RUNS ?? 60),
};

/** The junk values written at padding. */
export const JUNK: readonly number[] = [
  123,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
];

/** A ragged batch of the four logprob streams, advantages and a right-padded mask. */
export interface LogprobBatch {
  readonly logprobs: number[][];
  readonly oldLogprobs: number[][];
  readonly refLogprobs: number[][];
  readonly rolloutLogprobs: number[][];
  /** `[B]` or `[B, T]` advantages (the `[B, T]` form holds junk at padding). */
  readonly advantages: number[] | number[][];
  readonly responseMask: boolean[][];
  /** The junk value written at every padding position. */
  readonly junk: number;
}

/** A ragged batch for the value loss. */
export interface ValueBatch {
  readonly values: number[][];
  readonly oldValues: number[][];
  readonly returns: number[][];
  readonly responseMask: boolean[][];
  readonly junk: number;
}

/**
 * Uniform draws on [min, max]. fc.double picks bit patterns, not points of the interval: in [−2, 2]
 * only ~8 % of its draws exceed 0.2 in magnitude, so log-ratio gaps would almost never reach the
 * clip edges. A 2^30-step grid scaled to the interval covers it uniformly (and still shrinks).
 */
const double = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: 0, max: 2 ** 30 }).map((k) => min + ((max - min) * k) / 2 ** 30);

/** Right-padded `[B, T]` masks with at least one response token per row. */
export function paddedMasks({
  minB = 1,
  maxB = 4,
  minT = 1,
  maxT = 8,
}: {
  minB?: number;
  maxB?: number;
  minT?: number;
  maxT?: number;
} = {}): fc.Arbitrary<boolean[][]> {
  return fc
    .tuple(fc.integer({ min: minB, max: maxB }), fc.integer({ min: minT, max: maxT }))
    .chain(([B, T]) =>
      fc
        .array(fc.integer({ min: 1, max: T }), { minLength: B, maxLength: B })
        .map((L) => L.map((l) => Array.from({ length: T }, (_, t) => t < l))),
    );
}

function fill(mask: boolean[][], cells: readonly number[], junk: number): number[][] {
  const T = mask[0].length;
  return mask.map((row, b) => row.map((on, t) => (on ? cells[b * T + t] : junk)));
}

/**
 * Ragged logprob batches: logprobs in [−8, −0.0625]; old and ref = lp ± maxGap; rollout = old ±
 * maxGap; advantages in [−3, 3], `[B]` when `seqAdvantages` (default: either, drawn); junk from
 * `junk` (default all of 123, NaN, ±Inf) at every padding position of every `[B, T]` input.
 */
export function logprobBatches({
  maxB = 4,
  maxT = 8,
  maxGap = 2,
  seqAdvantages,
  junk = JUNK,
}: {
  maxB?: number;
  maxT?: number;
  maxGap?: number;
  seqAdvantages?: boolean;
  junk?: readonly number[];
} = {}): fc.Arbitrary<LogprobBatch> {
  return fc
    .tuple(
      paddedMasks({ maxB, maxT }),
      fc.constantFrom(...junk),
      seqAdvantages === undefined ? fc.boolean() : fc.constant(seqAdvantages),
    )
    .chain(([mask, j, seq]) => {
      const n = mask.length * mask[0].length;
      const cells = (min: number, max: number) =>
        fc.array(double(min, max), { minLength: n, maxLength: n });
      return fc
        .record({
          lp: cells(-8, -0.0625),
          dOld: cells(-maxGap, maxGap),
          dRef: cells(-maxGap, maxGap),
          dRoll: cells(-maxGap, maxGap),
          adv: seq
            ? fc.array(double(-3, 3), { minLength: mask.length, maxLength: mask.length })
            : cells(-3, 3),
        })
        .map(({ lp, dOld, dRef, dRoll, adv }) => {
          const old = lp.map((x, i) => x + dOld[i]);
          return {
            logprobs: fill(mask, lp, j),
            oldLogprobs: fill(mask, old, j),
            refLogprobs: fill(
              mask,
              lp.map((x, i) => x + dRef[i]),
              j,
            ),
            rolloutLogprobs: fill(
              mask,
              old.map((x, i) => x + dRoll[i]),
              j,
            ),
            advantages: seq ? adv : fill(mask, adv, j),
            responseMask: mask,
            junk: j,
          };
        });
    });
}

/** Ragged value batches: old values and returns in [−3, 3], values = old ± 0.6; junk at padding. */
export function valueBatches({
  maxB = 4,
  maxT = 8,
  junk = JUNK,
}: {
  maxB?: number;
  maxT?: number;
  junk?: readonly number[];
} = {}): fc.Arbitrary<ValueBatch> {
  return fc.tuple(paddedMasks({ maxB, maxT }), fc.constantFrom(...junk)).chain(([mask, j]) => {
    const n = mask.length * mask[0].length;
    const cells = (min: number, max: number) =>
      fc.array(double(min, max), { minLength: n, maxLength: n });
    return fc
      .record({ old: cells(-3, 3), dv: cells(-0.6, 0.6), ret: cells(-3, 3) })
      .map(({ old, dv, ret }) => ({
        values: fill(
          mask,
          old.map((x, i) => x + dv[i]),
          j,
        ),
        oldValues: fill(mask, old, j),
        returns: fill(mask, ret, j),
        responseMask: mask,
        junk: j,
      }));
  });
}
