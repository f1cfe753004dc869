/**
 * TRL's loss semantics per release, read from `trl/trainer/grpo_trainer.py` and `grpo_config.py`
 * at each tag (docs/conformance/releases.md#trl): the facts that change between releases without
 * a config key changing. Each field names the tag where its value starts; keys and defaults come
 * from the recorded facts (src/conformance/releases/data/trl.json), not from here; the eras are
 * ranges of releases (ERAS in eras.ts).
 * @internal
 */
import { atOrAfter, releaseEra } from "./eras.js";
import type { ReleaseRef } from "./releases.js";

/** How `old_per_token_logps` is decided (else `per_token_logps.detach()` stands in: ratio 1). */
export type OldLogpsRule =
  /** v0.14–v0.15: never computed; the ratio is exp(lp − sg[lp]). */
  | "never"
  /** v0.16–v0.17: num_iterations > 1. */
  | "iterations"
  /** v0.18–v0.19: num_iterations > 1 or steps_per_generation > gradient_accumulation_steps. */
  | "iterations_or_spg"
  /** v0.20+: gradient_accumulation_steps % (steps_per_generation × num_iterations) ≠ 0 (v0.23+: or vLLM's IS correction). */
  | "misaligned";

/** One release's semantics. */
export interface TrlEra {
  /** The era, e.g. `S (v1.9.0)`: the letter of docs/conformance/releases.md#trl. */
  readonly name: string;
  /** `loss_type` values accepted; empty: no `loss_type` key (the loss is hard-coded). */
  readonly lossTypes: readonly string[];
  /** The hard-coded loss before `loss_type` existed: v0.14–v0.15 an unclipped seq-mean-token-mean, v0.16 a clipped token mean. */
  readonly hardCoded: "seq_mean_unclipped" | "token_mean_clipped" | null;
  readonly oldLogps: OldLogpsRule;
  /** v0.23+: vLLM's IS correction forces the old logprobs. */
  readonly vllmForcesOld: boolean;
  /** Row and token divisors are `.clamp(min=1.0)` (v0.17+); before, an empty row or batch divides by 0. */
  readonly clampedDivisors: boolean;
  /** num_items_in_batch is clamped at 1 before dividing (v1.9.0+). */
  readonly numItemsClamped: boolean;
  /** num_items_in_batch is counted before mask_truncated_completions masks (v0.22–v1.8). */
  readonly numItemsBeforeTruncationMask: boolean;
  /**
   * Who divides by gradient_accumulation_steps: `trainer` (v0.14–v0.21: transformers' Trainer,
   * every loss type), `trl` (v0.22+: TRL divides grpo, bnpo, dr_grpo, sapo, luspo; dapo, cispo,
   * vespo are normalised by num_items_in_batch instead).
   */
  readonly accumulation: "trainer" | "trl";
  /** Generation: v0.14–v0.16 every micro-step generates its own batch (one micro-batch per file); v0.17+ once per generation batch, split. */
  readonly splitsGeneration: boolean;
  /** v0.22.0–v0.22.1: scale_rewards "group" does not divide by the std (an advantage bug). */
  readonly scaleRewardsInverted: boolean;
  /** The vLLM IS correction: none (before v0.23), `cap` (v0.23–v0.25: token-level truncation at the cap), `modes` (v0.26+). */
  readonly vllmIs: "none" | "cap" | "modes";
  /** The KL term is computed even when β = 0 (v0.14–v0.15; it then adds 0). */
  readonly klAlways: boolean;
}

const T17 = ["grpo", "bnpo", "dr_grpo"];

/**
 * The semantics of a TRL release (eras A–T of docs/conformance/releases.md#trl).
 *
 * @param r - A recorded TRL release.
 * @returns Its era.
 */
export function trlEra(r: ReleaseRef): TrlEra {
  const at = (l: string) => atOrAfter(r, l);
  const lossTypes = !at("v0.17.0")
    ? []
    : [
        ...T17,
        ...(at("v0.22.0") ? ["dapo"] : []),
        ...(at("v0.26.0") ? ["cispo", "sapo"] : []),
        ...(at("v0.28.0") ? ["luspo"] : []),
        ...(at("v1.0.0") ? ["vespo"] : []),
      ];
  const letter = releaseEra(r).name;
  return {
    name: `${letter} (${r.release.label})`,
    lossTypes,
    hardCoded: at("v0.17.0") ? null : at("v0.16.0") ? "token_mean_clipped" : "seq_mean_unclipped",
    oldLogps: !at("v0.16.0")
      ? "never"
      : !at("v0.18.0")
        ? "iterations"
        : !at("v0.20.0")
          ? "iterations_or_spg"
          : "misaligned",
    vllmForcesOld: at("v0.23.0"),
    clampedDivisors: at("v0.17.0"),
    numItemsClamped: at("v1.9.0"),
    numItemsBeforeTruncationMask: at("v0.22.0") && !at("v1.9.0"),
    accumulation: at("v0.22.0") ? "trl" : "trainer",
    splitsGeneration: at("v0.17.0"),
    scaleRewardsInverted: at("v0.22.0") && !at("v0.22.2"),
    vllmIs: at("v0.26.0") ? "modes" : at("v0.23.0") ? "cap" : "none",
    klAlways: !at("v0.16.0"),
  };
}

/** Whether old_per_token_logps is computed under `rule`. */
export function oldLogpsComputed(
  era: TrlEra,
  w: { readonly G: number; readonly spg: number; readonly iters: number; readonly vllmIs: boolean },
): boolean {
  const vllm = era.vllmForcesOld && w.vllmIs;
  switch (era.oldLogps) {
    case "never":
      return false;
    case "iterations":
      return w.iters > 1;
    case "iterations_or_spg":
      return w.iters > 1 || w.spg > w.G;
    case "misaligned":
      return w.G % (w.spg * w.iters) !== 0 || vllm;
  }
}
