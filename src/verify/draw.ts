/**
 * Seeded random batches for verification: ragged right-padded masks and the four logprob streams,
 * with junk (123) at padding so that a mask leak shows up in every check.
 */

import { createRng } from "../core/rng.js";
import { checkFlag } from "../core/validate.js";
import { checkShape } from "./budget.js";

/** A drawn batch: nested rows, `[B, T]` advantages, junk 123 at padding. */
export interface DrawnBatch {
  readonly logprobs: number[][];
  readonly oldLogprobs: number[][];
  readonly refLogprobs: number[][];
  readonly rolloutLogprobs: number[][];
  readonly advantages: number[][];
  readonly responseMask: boolean[][];
  /** Per-token entropies U[0.05, 4] (drawn after every other stream, so those are as before). */
  readonly entropies: number[][];
}

/** The junk value placed at padding. */
export const PADDING_JUNK = 123;

/**
 * Draw one batch of shape `[B, T]` from `seed`: row lengths uniform in 1..T (all T when not ragged),
 * logprobs U[−6, −0.1], old = lp + U[−1.2, 1.2], ref = lp + U[−1.2, 1.2], rollout = old + U[−0.8, 0.8],
 * advantages U[−3, 3], entropies U[0.05, 4]; every stream holds 123 at padding.
 *
 * @param seed - The case seed (replays the batch exactly).
 * @param shape - `[B, T]`.
 * @param ragged - Draw row lengths (true) or fill every row (false).
 * @returns The batch.
 * @derivation docs/derivations/verify.md#gradcheck
 * @enforcedBy test/verify/gradcheck.test.ts > drawBatch > identity: a seed replays its batch and padding holds the junk
 * @since 0.1.0
 */
export function drawBatch(
  seed: number,
  shape: readonly [number, number],
  ragged = true,
): DrawnBatch {
  checkShape("drawBatch", "shape", shape);
  checkFlag("drawBatch", "ragged", ragged);
  const rng = createRng(seed);
  const [B, T] = shape;
  const lengths = Array.from({ length: B }, () => (ragged ? rng.int(1, T) : T));
  const mask = lengths.map((L) => Array.from({ length: T }, (_, t) => t < L));
  const stream = (f: (b: number, t: number) => number): number[][] =>
    mask.map((row, b) => row.map((on, t) => (on ? f(b, t) : PADDING_JUNK)));
  const logprobs = stream(() => rng.uniformIn(-6, -0.1));
  const oldLogprobs = stream(
    (b, t) => ((logprobs[b] as number[])[t] as number) + rng.uniformIn(-1.2, 1.2),
  );
  const refLogprobs = stream(
    (b, t) => ((logprobs[b] as number[])[t] as number) + rng.uniformIn(-1.2, 1.2),
  );
  const rolloutLogprobs = stream(
    (b, t) => ((oldLogprobs[b] as number[])[t] as number) + rng.uniformIn(-0.8, 0.8),
  );
  const advantages = stream(() => rng.uniformIn(-3, 3));
  const entropies = stream(() => rng.uniformIn(0.05, 4));
  return {
    logprobs,
    oldLogprobs,
    refLogprobs,
    rolloutLogprobs,
    advantages,
    responseMask: mask,
    entropies,
  };
}
