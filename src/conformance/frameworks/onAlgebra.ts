/**
 * A framework model's loss as one of our configs (docs/conformance/frameworks.md#models-on-the-algebra):
 * the model validates its inputs under its own id (prepareBatch: the framework's acceptance of rows
 * with no token, zero-filled padding), names the framework's divisor when it would be 0 (upstream
 * divides by 0), and policyLoss evaluates the config, the framework's settings spelled as ours
 * (log-ratio clamps, dual clip, CISPO's cap, SAPO's float32 temperature, empty-row policy, global
 * counts). No model keeps loss arithmetic of its own; the only framework numerics outside the
 * algebra are OpenRLHF's float32 KL estimators (openrlhf.ts).
 * @internal
 */
import type { GlobalNormalizer } from "../../aggregate/effectiveTokenWeights.js";
import { clampedKlValue } from "../../kl/estimator.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import { policyLossAs } from "../../losses/policyLoss.js";
import { type FrameworkBatch, requirePositiveDivisor } from "./batch.js";
import type { FrameworkResult } from "./model.js";

/** The framework's own divisor, checked positive before the evaluation (upstream: 0/0 = NaN). */
export interface FrameworkDivisor {
  readonly value: number;
  readonly name: string;
}

/** Whether a config reads the rollout logprobs (IS correction, rejection, a rollout-sampled OPSM). @internal */
export function readsRollout(config: PolicyLossConfig): boolean {
  return (
    config.isCorrection != null ||
    (config.rejection ?? null) !== null ||
    config.offPolicyMask?.sampling === "rollout"
  );
}

/** Whether a config reads the entropies (a top-entropy mask or an entropy bonus). @internal */
export function readsEntropies(config: PolicyLossConfig): boolean {
  return (config.topEntropyQuantile ?? null) !== null || (config.entropyBonus ?? null) !== null;
}

/**
 * Evaluate `config` on the validated batch under the model's id. With `klInObjective` the
 * per-token KL term (coef·k, the config's clamps) is added to `perTokenObjective`, as frameworks
 * that add the KL before aggregating report it (TRL's per_token_loss). @internal
 */
export function evaluateOnAlgebra(
  batch: FrameworkBatch,
  config: PolicyLossConfig,
  o: {
    readonly global?: GlobalNormalizer;
    readonly divisor?: FrameworkDivisor;
    readonly klInObjective?: boolean;
    /** Per-token entropies (zero-filled at padding) for a top-entropy mask or an entropy bonus. */
    readonly entropies?: Float64Array;
  } = {},
): FrameworkResult {
  const { fn, B: rows, T: cols } = batch;
  if (o.divisor !== undefined) requirePositiveDivisor(fn, o.divisor.value, o.divisor.name);
  const matrix = (data: Float64Array) => ({ rows, cols, data });
  const r = policyLossAs(
    fn,
    config,
    {
      logprobs: matrix(batch.lp),
      oldLogprobs: matrix(batch.old),
      advantages: matrix(batch.adv),
      responseMask: { rows, cols, data: batch.m },
      refLogprobs: config.kl == null ? null : matrix(batch.ref),
      rolloutLogprobs: readsRollout(config) ? matrix(batch.rollout) : null,
      ...(o.entropies === undefined ? {} : { entropies: matrix(o.entropies) }),
    },
    o.global === undefined ? {} : { global: o.global },
  );
  let objective = r.perTokenObjective.data;
  const kl = config.kl ?? null;
  if (o.klInObjective === true && kl !== null) {
    objective = objective.slice();
    const pt = new Float64Array(2);
    const cd = kl.clamp?.delta ?? Number.POSITIVE_INFINITY;
    const cv = kl.clamp?.value ?? Number.POSITIVE_INFINITY;
    for (let i = 0; i < objective.length; i++) {
      if (batch.m[i] !== 1) continue;
      const k = clampedKlValue(
        kl.kind,
        (batch.ref[i] as number) - (batch.lp[i] as number),
        cd,
        cv,
        pt,
      );
      objective[i] = (objective[i] as number) + kl.coef * k;
    }
  }
  return {
    loss: r.loss,
    gradLogprobs: r.gradLogprobs,
    perTokenObjective: matrix(objective),
    ratio: r.ratio,
  };
}
