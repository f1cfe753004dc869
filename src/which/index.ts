/**
 * "Which GRPO am I running?": one batch under the aggregation semantics that share the name, with
 * their losses and per-sequence gradient masses (docs/derivations/variants.md).
 */
export { BUILTIN_BATCH } from "./builtinBatch.js";
export { type WhichCrossCheck, type WhichReport, type WhichRow, whichTable } from "./whichTable.js";
