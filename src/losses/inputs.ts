/**
 * What a policy loss reads: the input tensors' type and its description in messages, in a leaf
 * module that the planner and the loss both import (docs/conventions.md).
 */
import type { MaskLike, MatrixLike, VectorLike } from "../core/tensor.js";

/** The tensors a policy loss reads. `[B, T]` unless noted; padding may hold anything. */
export interface PolicyLossInputs {
  /** Current-policy logprobs of the sampled tokens — the only differentiable stream. */
  readonly logprobs: MatrixLike;
  /** Behaviour-policy logprobs recomputed by the trainer (constant). */
  readonly oldLogprobs: MatrixLike;
  /** `[B]` per-sequence or `[B, T]` per-token advantages (constant). */
  readonly advantages: VectorLike | MatrixLike;
  /** 1 at response tokens, 0 at padding; every row needs at least one response token. */
  readonly responseMask: MaskLike;
  /** Reference-policy logprobs; required iff `config.kl` is set. */
  readonly refLogprobs?: MatrixLike | null;
  /** Logprobs reported by the rollout engine; required iff `config.isCorrection` is set. */
  readonly rolloutLogprobs?: MatrixLike | null;
  /**
   * Per-token entropies of the policy (≥ 0, computed by the caller from its logits); required
   * iff `config.topEntropyQuantile` or `config.entropyBonus` is set.
   */
  readonly entropies?: MatrixLike | null;
}

/** The description of the inputs object in messages. */
export const POLICY_LOSS_INPUTS =
  "a PolicyLossInputs object { logprobs, oldLogprobs, advantages, responseMask, … }";
