/**
 * The evaluations behind `polgrad loss --framework`: a framework model, or a framework config
 * resolved against a release, on a batch, returned as the result document the command prints
 * with `--json` (what was evaluated, then the result's fields; the command adds the batch's
 * source). Pure: nothing here reads a file or prints.
 */
import { type PolicyLossConfigJson, policyLossConfigToJson } from "../io/configJson.js";
import type { PolicyLossInputs } from "../losses/policyLoss.js";
import {
  evaluateResolution,
  type FrameworkResolution,
  type ResolutionResult,
  type ResolvedSetting,
} from "./frameworkConfig/resolution.js";
import type { FrameworkModel, FrameworkResult } from "./frameworks/model.js";

/** A framework model's result document: the model, then the result's fields. */
export type FrameworkModelLoss = {
  readonly framework: Pick<FrameworkModel, "id" | "pin" | "settings" | "description">;
} & FrameworkResult;

/** A framework config's result document: the resolution, the config, the result. */
export interface FrameworkConfigLoss
  extends Pick<
    ResolutionResult,
    "loss" | "gradLogprobs" | "perTokenObjective" | "ratio" | "microBatches"
  > {
  readonly framework: Pick<FrameworkResolution, "ref" | "repo" | "release" | "warnings"> & {
    readonly settings: readonly Pick<ResolvedSetting, "key" | "value" | "source">[];
    readonly batchMeaning: string;
  };
  readonly config: PolicyLossConfigJson;
  readonly terms: readonly Omit<ResolutionResult["terms"][number], "gradLogprobs">[];
}

/** A framework model evaluated on a batch: the model (id, pin, settings, description), the result. @internal */
export function frameworkModelLoss(
  model: FrameworkModel,
  batch: PolicyLossInputs,
): FrameworkModelLoss {
  const r = model.evaluate(batch);
  return {
    framework: {
      id: model.id,
      pin: model.pin,
      settings: model.settings,
      description: model.description,
    },
    ...r,
  };
}

/**
 * A framework config resolved against a release, evaluated on a batch: the resolution (the
 * settings the config set, the warnings, what the batch stands for), the config in polgrad's JSON
 * and the result, the terms without their gradients. @internal
 */
export function frameworkConfigLoss(
  res: FrameworkResolution,
  batch: PolicyLossInputs,
): FrameworkConfigLoss {
  const r = evaluateResolution(res, batch);
  return {
    framework: {
      ref: res.ref,
      repo: res.repo,
      release: res.release,
      settings: res.settings
        .filter((x) => x.source !== "default")
        .map((x) => ({ key: x.key, value: x.value, source: x.source })),
      warnings: res.warnings,
      batchMeaning: res.plan.batchMeaning,
    },
    config: policyLossConfigToJson(res.plan.config),
    loss: r.loss,
    gradLogprobs: r.gradLogprobs,
    perTokenObjective: r.perTokenObjective,
    ratio: r.ratio,
    microBatches: r.microBatches,
    terms: r.terms.map(({ gradLogprobs: _g, ...t }) => t),
  };
}
