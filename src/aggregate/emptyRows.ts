/**
 * The policy for rows with no response token (docs/derivations/aggregation.md#rows-with-no-response-token),
 * shared by policyLoss (`config.emptyRows`) and the weight functions (`options.emptyRows`).
 */
import { oneOf } from "../core/names.js";

/**
 * `reject` (default): a MaskError naming the rows (polgrad 0.2.0's rule); `count`: the row has no
 * term and counts in the row means' B (TRL's `m.sum(−1).clamp(min=1)`, verl's and OpenRLHF's
 * sample means); `drop`: no term, and B counts only the rows with a response token.
 */
export type EmptyRows = "reject" | "count" | "drop";
/** Every empty-rows policy. */
export const EMPTY_ROWS: readonly EmptyRows[] = ["reject", "count", "drop"];

/**
 * The mask rule of an `emptyRows` option of a token-level function (the advantage estimators,
 * broadcasting, PAPO's token terms): `count` and `drop` agree there (no row mean sees B), both
 * allow rows with no response token, which get zeros; absent: `reject`. @internal
 */
export function emptyRowsMaskRule(fn: string, arg: string, v: unknown): "reject" | "allow" {
  if (v === undefined || v === null) return "reject";
  return oneOf(fn, arg, v, EMPTY_ROWS) === "reject" ? "reject" : "allow";
}
