/**
 * The evaluations behind `polgrad loss --config` / `--algorithm`: a policy-loss or PAPO config
 * (read from polgrad's JSON or the registry) on a batch, returned as the result document the
 * command prints with `--json` (the config in polgrad's JSON, then the result's fields; the
 * command adds the batch's source). Pure: nothing here reads a file or prints.
 */
import type { PolicyLossConfig } from "../losses/config.js";
import { type PapoResult, papoLoss } from "../losses/papo.js";
import type { PapoConfig } from "../losses/papoConfig.js";
import {
  type PolicyLossField,
  type PolicyLossInputs,
  type PolicyLossOptions,
  type PolicyLossResult,
  policyLoss,
} from "../losses/policyLoss.js";
import type { Batch } from "./batch.js";
import {
  type PerceptionJson,
  type PolicyLossConfigJson,
  parseLossConfig,
  parsePolicyLossConfig,
  perceptionToJson,
  policyLossConfigToJson,
} from "./configJson.js";

/** A loss config read from polgrad's JSON: a policy loss, or PAPO when it has a perception block. */
export type LossConfigOfJson =
  | { readonly kind: "policy"; readonly config: PolicyLossConfig }
  | { readonly kind: "papo"; readonly config: PapoConfig; readonly perception: PerceptionJson };

/** A policy loss's result document: the config in polgrad's JSON, then the result's fields. */
export type PolicyLossRun = { readonly config: PolicyLossConfigJson } & PolicyLossResult;

/** A PAPO loss's result document: the algorithm, the form, the parent config, the block, the result. */
export type PapoLossRun = {
  readonly algorithm?: string;
  readonly form: PapoConfig["perception"]["form"];
  readonly config: PolicyLossConfigJson;
  readonly perception: PerceptionJson;
} & PapoResult;

/**
 * The loss config `json` (from `source`) holds: PAPO with a perception block, else exactly the
 * policy-loss parse. @internal
 */
export function lossConfigOfJson(json: unknown, source: string): LossConfigOfJson {
  if (typeof json === "object" && json !== null && Object.hasOwn(json, "perception")) {
    const parsed = parseLossConfig(json, source);
    if (parsed.papo !== null && parsed.perception !== null)
      return { kind: "papo", config: parsed.papo, perception: parsed.perception };
    return { kind: "policy", config: parsed.policy };
  }
  return { kind: "policy", config: parsePolicyLossConfig(json, source) };
}

/** A registered PAPO config with its perception block as the JSON reports it (no preset, no β). @internal */
export function papoOfRegistry(config: PapoConfig): {
  readonly config: PapoConfig;
  readonly perception: PerceptionJson;
} {
  const settings = {
    perception: config.perception,
    doubleEntropy: config.doubleEntropy,
    beta: null,
  };
  return { config, perception: perceptionToJson(settings, null) };
}

/** policyLoss of `config` on `batch` (one thread unless asked), with the config in polgrad's JSON. @internal */
export function policyLossRun(
  config: PolicyLossConfig,
  batch: PolicyLossInputs,
  options: {
    readonly threads: number;
    readonly global: PolicyLossOptions["global"] | undefined;
    /** Only these fields (policyLoss's `fields`); undefined: every field. */
    readonly fields?: ReadonlySet<PolicyLossField> | undefined;
  },
): PolicyLossRun | ({ readonly config: PolicyLossConfigJson } & Partial<PolicyLossResult>) {
  const { threads, global, fields } = options;
  const common = { threads, ...(global === undefined ? {} : { global }) };
  const result =
    fields === undefined
      ? policyLoss(config, batch, common)
      : policyLoss(config, batch, { ...common, fields: [...fields] });
  return { config: policyLossConfigToJson(config), ...result };
}

/**
 * papoLoss of `run.config` on `batch`: the algorithm (when registered), the form, the parent
 * config in polgrad's JSON, the perception block and the result. @internal
 */
export function papoLossRun(
  run: {
    readonly algorithm: string | null;
    readonly config: PapoConfig;
    readonly perception: PerceptionJson;
  },
  batch: Batch,
): PapoLossRun {
  const { config } = run;
  const r = papoLoss(config, {
    ...batch,
    maskedLogprobs: batch.maskedLogprobs as NonNullable<typeof batch.maskedLogprobs>,
    entropies: batch.entropies ?? null,
    maskedEntropies: batch.maskedEntropies ?? null,
  });
  const { perception: _p, doubleEntropy: _d, ...parent } = config;
  return {
    ...(run.algorithm === null ? {} : { algorithm: run.algorithm }),
    form: config.perception.form,
    config: policyLossConfigToJson(parent),
    perception: run.perception,
    ...r,
  };
}
