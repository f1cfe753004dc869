/**
 * The shape of a framework model: a labelled TypeScript model of what one framework's shipped loss
 * code computes at one pinned commit, with its value and closed-form gradient
 * (docs/conformance/frameworks.md).
 */
import type { Matrix } from "../../core/tensor.js";
import type { PolicyLossInputs } from "../../losses/policyLoss.js";

/** The frameworks modelled. */
export type FrameworkName = "verl" | "openrlhf" | "trl";

/** The optional streams a model may read besides logprobs, oldLogprobs, advantages and the mask. */
export type FrameworkStream = "refLogprobs" | "rolloutLogprobs";

/** Where a model's semantics were read: one upstream file at one commit. */
export interface FrameworkPin {
  /** `owner/name` on GitHub, e.g. `verl-project/verl`. */
  readonly repo: string;
  /** The full 40-hex commit the file was read at. */
  readonly commit: string;
  /** The short label used in model ids: an abbreviated commit (`74a718a4`) or a tag (`v1.8.0`). */
  readonly label: string;
  /** Path of the upstream file, e.g. `verl/trainer/ppo/core_algos.py`. */
  readonly path: string;
  /** The upstream function or method the model reproduces, e.g. `compute_policy_loss_vanilla`. */
  readonly function: string;
  /** SHA-256 of the upstream file's bytes at `commit`. */
  readonly sha256: string;
}

/** A frozen framework setting: the value the framework uses by default (null = unset). */
export type FrameworkSettingValue = number | string | boolean | null;

/** What a framework model returns; every `[B, T]` field follows the masked-position contract. */
export interface FrameworkResult {
  /** The scalar loss the framework back-propagates (to minimise). */
  readonly loss: number;
  /** ∂loss/∂logprobs in closed form, `[B, T]`, exactly 0 at padding. */
  readonly gradLogprobs: Matrix;
  /** The per-token loss matrix before aggregation (KL term included where the framework adds it), 0 at padding. */
  readonly perTokenObjective: Matrix;
  /** The importance ratio the surrogate uses (token or sequence), exactly 1 at padding; all ones for KL models. */
  readonly ratio: Matrix;
}

/** A labelled model of one framework loss at one pinned commit. */
export interface FrameworkModel {
  /** `<framework>@<label>:<variant>`, e.g. `verl@74a718a4:vanilla:seq-mean-token-mean`. */
  readonly id: string;
  readonly framework: FrameworkName;
  readonly pin: FrameworkPin;
  /** The variant name, e.g. `vanilla:token-mean`, `ppo:sample`, `dapo:token`. */
  readonly variant: string;
  /** One neutral paragraph: what the model computes and how that differs from the published equation. */
  readonly description: string;
  /** The framework defaults frozen into the model, keyed by the upstream config names. */
  readonly settings: Readonly<Record<string, FrameworkSettingValue>>;
  /** The optional streams `evaluate` requires. */
  readonly needs: readonly FrameworkStream[];
  /** Compute the loss, its gradient w.r.t. logprobs and the per-token diagnostics. */
  readonly evaluate: (inputs: PolicyLossInputs) => FrameworkResult;
}
