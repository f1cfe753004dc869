/**
 * The fields of a policy loss's result (docs/performance.md#fields): what
 * `policyLoss(…, { fields })` and `polgrad loss --fields` may ask for. A module of its own, so the
 * CLI's option table names them without loading the kernel.
 */

/**
 * A field of policyLoss's result: what `options.fields` may ask for. policyLoss.ts checks at
 * compile time that these are exactly the keys of PolicyLossResult.
 */
export type PolicyLossField =
  | "loss"
  | "gradLogprobs"
  | "perTokenObjective"
  | "ratio"
  | "clippedLow"
  | "clippedHigh"
  | "klLoss"
  | "entropyLoss"
  | "gradEntropies";

/** Every field of policyLoss's result, in its order. */
export const POLICY_LOSS_FIELDS: readonly PolicyLossField[] = Object.freeze([
  "loss",
  "gradLogprobs",
  "perTokenObjective",
  "ratio",
  "clippedLow",
  "clippedHigh",
  "klLoss",
  "entropyLoss",
  "gradEntropies",
] as const);
