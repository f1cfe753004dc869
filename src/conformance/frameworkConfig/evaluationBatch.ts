/**
 * The batch `polgrad explain` evaluates a resolved config on when the user gives none: the
 * built-in batch of `polgrad which`, completed with what the config reads and fitted to its
 * micro-batch plan, every step stated (docs/conformance/explain.md#evaluation). Explaining a
 * config never needs a batch; this is only what the explanation's loss is computed on.
 * Browser-safe.
 */
import type { PolicyLossInputs } from "../../losses/policyLoss.js";
import { readsEntropies, readsRollout } from "../frameworks/onAlgebra.js";
import type { FrameworkResolution } from "./resolution.js";

/** A batch to evaluate on, what it is, and how it was completed (one line each). */
export interface EvaluationBatch {
  readonly inputs: PolicyLossInputs;
  readonly name: string;
  /** What was synthesised or tiled, one line each (empty: the built-in batch as it is). */
  readonly notes: readonly string[];
}

/** The most rows a fitted batch may have (a plan that needs more is evaluated on none). */
export const MAX_FITTED_ROWS = 4096;

/** The gap between the old and the rollout logprobs of the synthesised rollout stream. */
export const ROLLOUT_GAP = 0.05;

/** The built-in batch's name as explanations print it. */
export const BUILTIN_NAME = "the built-in batch (ref_logprobs = old_logprobs)";

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** The row count the plan's split needs B to be a multiple of. */
function splitMultiple(res: FrameworkResolution): number {
  const s = res.plan.microBatches;
  return typeof s === "number" ? s : s.rows;
}

function needsRolloutStream(res: FrameworkResolution): boolean {
  return readsRollout(res.plan.config) || res.plan.oldStream === "rollout";
}

function needsEntropyStream(res: FrameworkResolution): boolean {
  return readsEntropies(res.plan.config);
}

/** Row i of the tiled batch is built-in row i mod 4. */
function tile<T>(rows: readonly T[], B: number): T[] {
  return Array.from({ length: B }, (_, i) => rows[i % rows.length] as T);
}

/**
 * The built-in batch (`base`: which's BUILTIN_BATCH, passed in: conformance does not import
 * which) fitted to one or more resolutions (the sides of a diff share one batch):
 *
 * - its B = 4 rows tiled (row i is built-in row i mod 4) to the least common multiple of 4 and
 *   every plan's split (TRL: steps_per_generation micro-batches; verl and OpenRLHF: micro-batches
 *   of that many rows), when 4 does not split;
 * - `rollout_logprobs = old_logprobs − 0.05·(−1)^(b+t)` when a plan reads the rollout stream (IS
 *   weights e^(±0.05), so a correction shows), `entropies = −logprobs` (each token's surprisal)
 *   when a plan has an entropy mask or bonus;
 * - `ref_logprobs = old_logprobs` always (a first step: the reference is the sampling policy).
 *
 * @param base - The built-in batch (rows, logprobs, old logprobs, advantages, mask).
 * @param resolutions - The resolutions to evaluate.
 * @returns The batch, its name, and the notes (null when the plans need more than
 *   MAX_FITTED_ROWS rows: the explanation then says what `--batch` must hold).
 * @derivation docs/conformance/explain.md#evaluation
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > golden: the fitted built-in batch tiles rows and synthesises only what the plan reads
 * @since 0.2.0
 */
export function builtinBatchFor(
  base: PolicyLossInputs,
  resolutions: readonly FrameworkResolution[],
): EvaluationBatch | { readonly tooLarge: number } {
  const adv = base.advantages as readonly number[];
  const rows0 = adv.length;
  let B = rows0;
  for (const r of resolutions) {
    const m = splitMultiple(r);
    B = (B / gcd(B, m)) * m;
  }
  if (B > MAX_FITTED_ROWS) return { tooLarge: B };
  const notes: string[] = [];
  const lp = tile(base.logprobs as readonly (readonly number[])[], B);
  const old = tile(base.oldLogprobs as readonly (readonly number[])[], B);
  const inputs: {
    -readonly [K in keyof PolicyLossInputs]: PolicyLossInputs[K];
  } = {
    logprobs: lp,
    oldLogprobs: old,
    refLogprobs: old,
    advantages: tile(adv, B),
    responseMask: tile(base.responseMask as readonly (readonly boolean[])[], B),
  };
  if (B !== rows0)
    notes.push(
      `its ${rows0} rows tiled to B = ${B} (row i is row i mod ${rows0}) so they split as the config's micro-batches do`,
    );
  if (resolutions.some(needsRolloutStream)) {
    inputs.rolloutLogprobs = old.map((row, b) =>
      row.map((x, t) => x - ROLLOUT_GAP * ((b + t) % 2 === 0 ? 1 : -1)),
    );
    notes.push(
      `rollout_logprobs synthesised as old_logprobs − ${ROLLOUT_GAP}·(−1)^(b+t) (the config reads the rollout's logprobs; give --batch for yours)`,
    );
  }
  if (resolutions.some(needsEntropyStream)) {
    inputs.entropies = lp.map((row) => row.map((x) => -x));
    notes.push(
      "entropies synthesised as −logprobs, each token's surprisal (the config reads entropies; give --batch for yours)",
    );
  }
  return { inputs, name: BUILTIN_NAME, notes };
}
