/**
 * polgrad's batch tensor names (docs/io.md#tensor-names): the snake_case names of a batch file,
 * leaf data shared by the batch validator and the name maps.
 */

/** Every tensor name a batch file may hold (polgrad's snake_case). */
export const BATCH_TENSOR_NAMES = [
  "logprobs",
  "old_logprobs",
  "advantages",
  "response_mask",
  "ref_logprobs",
  "rollout_logprobs",
  "values",
  "old_values",
  "returns",
  "entropies",
  "masked_logprobs",
  "masked_entropies",
  "rewards",
  "truncated",
] as const;

/** One batch tensor name. */
export type BatchTensorName = (typeof BATCH_TENSOR_NAMES)[number];

/** The tensors every batch must hold (a policy loss needs all four). */
export const REQUIRED_BATCH_TENSORS: readonly BatchTensorName[] = [
  "logprobs",
  "old_logprobs",
  "advantages",
  "response_mask",
];
