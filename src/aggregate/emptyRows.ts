/**
 * The policy for rows with no response token (docs/derivations/aggregation.md#rows-with-no-response-token),
 * shared by policyLoss (`config.emptyRows`) and the weight functions (`options.emptyRows`).
 */

/**
 * `reject` (default): a MaskError naming the rows (polgrad 0.2.0's rule); `count`: the row has no
 * term and counts in the row means' B (TRL's `m.sum(−1).clamp(min=1)`, verl's and OpenRLHF's
 * sample means); `drop`: no term, and B counts only the rows with a response token.
 */
export type EmptyRows = "reject" | "count" | "drop";
/** Every empty-rows policy. */
export const EMPTY_ROWS: readonly EmptyRows[] = ["reject", "count", "drop"];
