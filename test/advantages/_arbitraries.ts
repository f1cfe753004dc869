/**
 * fast-check arbitraries and small assertions shared by the advantage tests (not a test file).
 * Padding is filled with the sentinel JUNK = 123 so a mask leak shows up as a wrong value.
 */
import fc from "fast-check";
import { expect } from "vitest";
import type { ErrorCode, PolgradError } from "../../src/errors.js";
import { paddedMasks as kitPaddedMasks } from "../_kit/arbitraries.js";
import {
  expectBitwise as kitExpectBitwise,
  expectClose as kitExpectClose,
} from "../_kit/expect.js";

/** The masked-position sentinel (polgrad's MASKED_JUNK). */
export const JUNK = 123;

/** Fixed fast-check parameters for every property test in this folder. */
export const FC = { seed: 42, numRuns: 200 } as const;

/** A batch of rewards with integer group labels. */
export interface Grouped {
  readonly rewards: number[];
  readonly groupIds: number[];
}

/** Non-contiguous unique labels (0..50), one per group, interleaved by a random permutation. */
function labelled(sizes: readonly number[]): fc.Arbitrary<number[]> {
  return fc
    .uniqueArray(fc.integer({ min: 0, max: 50 }), {
      minLength: sizes.length,
      maxLength: sizes.length,
    })
    .chain((labels) => {
      const ids = labels.flatMap((label, g) =>
        Array.from({ length: sizes[g] as number }, () => label),
      );
      return fc.shuffledSubarray(ids, { minLength: ids.length, maxLength: ids.length });
    });
}

/** Grouped rewards in [−5, 5] with every group of size in [minGroup, maxGroup]. */
export function groupedRewards(minGroup = 2, maxGroup = 4, maxGroups = 4): fc.Arbitrary<Grouped> {
  return fc
    .array(fc.integer({ min: minGroup, max: maxGroup }), { minLength: 1, maxLength: maxGroups })
    .chain(labelled)
    .chain((groupIds) =>
      fc
        .array(fc.double({ min: -5, max: 5, noNaN: true }), {
          minLength: groupIds.length,
          maxLength: groupIds.length,
        })
        .map((rewards) => ({ rewards, groupIds })),
    );
}

/** Rewards k/8 (k ∈ [−64, 64]) with group sizes in {2, 3, 5}, i.e. G − 1 ∈ {1, 2, 4}. */
export function dyadicGroupedRewards(): fc.Arbitrary<Grouped> {
  return fc
    .array(fc.constantFrom(2, 3, 5), { minLength: 1, maxLength: 3 })
    .chain(labelled)
    .chain((groupIds) =>
      fc
        .array(fc.integer({ min: -64, max: 64 }), {
          minLength: groupIds.length,
          maxLength: groupIds.length,
        })
        .map((ks) => ({ rewards: ks.map((k) => k / 8), groupIds })),
    );
}

/** A right-padded `[B, T]` mask (≥ 1 token per row) as nested booleans, with its row lengths. */
export interface PaddedMask {
  readonly mask: boolean[][];
  readonly lengths: number[];
  readonly cols: number;
}

/** Right-padded masks with B ∈ [1, maxB], T ∈ [1, maxT]. */
export function paddedMasks(maxB = 6, maxT = 10): fc.Arbitrary<PaddedMask> {
  return kitPaddedMasks({ maxB, maxT }).map((mask) => ({
    mask,
    lengths: mask.map((row) => row.filter(Boolean).length),
    cols: (mask[0] as boolean[]).length,
  }));
}

/** `[B, T]` values in [lo, hi] at response positions and `junk` at padding. */
export function filled(
  pm: PaddedMask,
  lo: number,
  hi: number,
  junk: number = JUNK,
): fc.Arbitrary<number[][]> {
  const B = pm.lengths.length;
  return fc
    .array(fc.double({ min: lo, max: hi, noNaN: true }), {
      minLength: B * pm.cols,
      maxLength: B * pm.cols,
    })
    .map((flat) =>
      pm.mask.map((row, b) => row.map((on, t) => (on ? (flat[b * pm.cols + t] as number) : junk))),
    );
}

/** Replace the padding of `x` by `junk`. */
export function withJunk(x: number[][], mask: boolean[][], junk: number): number[][] {
  return x.map((row, b) => row.map((v, t) => ((mask[b] as boolean[])[t] ? v : junk)));
}

/** Assert |a − e| ≤ rtol·|e| + atol elementwise (the shared kit's check, positional tolerances). */
export function expectClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  rtol: number,
  atol = 0,
): void {
  kitExpectClose(Array.from(actual), Array.from(expected), { rtol, atol });
}

/** Assert two arrays are identical bit for bit (Object.is per element, so −0 ≠ +0). */
export function expectBitwise(actual: ArrayLike<number>, expected: ArrayLike<number>): void {
  kitExpectBitwise(Array.from(actual), Array.from(expected));
}

/** Assert that `f` throws an instance of `cls` with the given `code` and `arg`. */
export function expectRejects(
  f: () => unknown,
  cls: abstract new (...args: never[]) => PolgradError,
  code: ErrorCode,
  arg: string,
): void {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(cls);
  expect(err).toMatchObject({ code, arg });
}
