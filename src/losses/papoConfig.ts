/**
 * The PAPO configuration (docs/derivations/papo.md): a parent policy-loss config (GRPO or DAPO)
 * plus the implicit perception term and the optional double-entropy term, each in one of two
 * published forms. Configs are inert readonly data; `validatePapoConfig` checks them at call entry.
 */
import { fmtValue } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { checkEps } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import { KLEstimator } from "../kl/estimator.js";
import type { PolicyLossConfig, ResolvedPolicyLossConfig } from "./config.js";
import { validatePolicyLossConfig } from "./configValidate.js";

/**
 * The two published forms of PAPO's extra terms: `"trl"` is TRL v0.29.1's `PAPOTrainer`,
 * `"official"` is the authors' verl/EasyR1 code (MikeWangWZHL/PAPO @ fb63bf45).
 *
 * @derivation docs/derivations/papo.md#two-forms
 * @enforcedBy test/losses/papo.golden.test.ts > papoLoss > golden: trl form on a 2x2 ragged batch
 * @enforcedBy test/losses/papo.golden.test.ts > papoLoss > golden: official form on a 2x2 ragged batch
 * @since 0.1.0
 */
export const PapoForm = { TRL: "trl", OFFICIAL: "official" } as const;
/** One of the PAPO form strings. */
export type PapoForm = (typeof PapoForm)[keyof typeof PapoForm];
/** Every PAPO form. */
export const PAPO_FORMS: readonly PapoForm[] = Object.values(PapoForm);

/**
 * The implicit perception term: γ times an aggregate of clamp(k3(δ), 0, clip) with
 * δ = maskedLogprobs − logprobs, subtracted from the loss.
 *
 * @derivation docs/derivations/papo.md#perception-term
 * @enforcedBy test/losses/papo.golden.test.ts > papoLoss > golden: trl form on a 2x2 ragged batch
 * @since 0.1.0
 */
export interface PerceptionConfig {
  /** γ ≥ 0, finite (TRL `perception_loss_weight` 0.1; official `kl_prcp_coef` 0.01 or 0.02). */
  readonly gamma: number;
  /** Upper clamp of the per-token k3 (lower clamp 0), or null for none. TRL hard-codes 0.2. */
  readonly clip: number | null;
  /** Which published form to compute. */
  readonly form: PapoForm;
}

/**
 * The double-entropy term +η1·H(original view) + η2·H(masked view).
 *
 * @derivation docs/derivations/papo.md#double-entropy-term
 * @enforcedBy test/losses/papo.golden.test.ts > papoLoss > golden: official form on a 2x2 ragged batch
 * @since 0.1.0
 */
export interface DoubleEntropyConfig {
  /** η1 ≥ 0, the weight of the original-view entropy. */
  readonly eta1: number;
  /** η2 ≥ 0, the weight of the masked-view entropy. */
  readonly eta2: number;
}

/**
 * A PAPO loss config: the parent's PolicyLossConfig fields (GRPO → PAPO-G, DAPO → PAPO-D) plus
 * the perception and double-entropy terms.
 *
 * @derivation docs/derivations/papo.md#papo-loss
 * @enforcedBy test/losses/papo.registry.test.ts > papo registry > golden: papo_g ships the grpo parent with the official constants
 * @since 0.1.0
 */
export interface PapoConfig extends PolicyLossConfig {
  /** The implicit perception term. */
  readonly perception: PerceptionConfig;
  /** The double-entropy term, or null for none (PAPO-G). */
  readonly doubleEntropy: DoubleEntropyConfig | null;
}

/** A PAPO config after validation. @internal */
export interface ResolvedPapoConfig {
  readonly parent: ResolvedPolicyLossConfig;
  readonly gamma: number;
  readonly clip: number | null;
  readonly form: PapoForm;
  readonly eta1: number;
  readonly eta2: number;
  readonly doubleEntropy: boolean;
}

function object(fn: string, arg: string, x: unknown, what: string): void {
  if (typeof x !== "object" || x === null) {
    throw fail(ConfigError, fn, arg, what, fmtValue(x));
  }
}

/**
 * Validate a PAPO config in this order: the parent policy-loss config (its own rule order), then
 * `perception` (an object; form, γ finite ≥ 0, clip null or finite > 0), then `doubleEntropy`
 * (null/absent, or an object with η1, η2 finite ≥ 0).
 * @internal
 */
export function validatePapoConfig(fn: string, config: PapoConfig): ResolvedPapoConfig {
  object(fn, "config", config, "a PapoConfig object");
  const parent = validatePolicyLossConfig(fn, config);
  const p = config.perception as PerceptionConfig | null | undefined;
  object(fn, "config.perception", p, "a PerceptionConfig object { gamma, clip, form }");
  const perception = p as PerceptionConfig;
  const form = oneOf(fn, "config.perception.form", perception.form, PAPO_FORMS);
  const gamma = checkEps(fn, "config.perception.gamma", perception.gamma);
  const rawClip = perception.clip ?? null;
  if (
    rawClip !== null &&
    (typeof rawClip !== "number" || !Number.isFinite(rawClip) || rawClip <= 0)
  ) {
    throw fail(
      ConfigError,
      fn,
      "config.perception.clip",
      "a positive finite number or null",
      fmtValue(rawClip),
    );
  }
  const de = config.doubleEntropy ?? null;
  let eta1 = 0;
  let eta2 = 0;
  if (de !== null) {
    object(fn, "config.doubleEntropy", de, "a DoubleEntropyConfig object { eta1, eta2 } or null");
    eta1 = checkEps(fn, "config.doubleEntropy.eta1", de.eta1);
    eta2 = checkEps(fn, "config.doubleEntropy.eta2", de.eta2);
  }
  return { parent, gamma, clip: rawClip, form, eta1, eta2, doubleEntropy: de !== null };
}

/**
 * A deeply frozen copy of a PAPO config (registry constants are inert data). @internal
 */
export function freezePapoConfig(config: PapoConfig): PapoConfig {
  const freeze = <T>(x: T): T => {
    if (typeof x === "object" && x !== null && !Object.isFrozen(x)) {
      for (const k of Object.keys(x)) freeze((x as Record<string, unknown>)[k]);
      Object.freeze(x);
    }
    return x;
  };
  return freeze(structuredClone(config));
}

/**
 * PAPO's settings as a user sets them, apart from the parent: the perception term, the
 * double-entropy term and β, the coefficient of the parent's k3 KL-in-loss term (TRL's `beta`).
 *
 * @derivation docs/derivations/papo.md#settings-and-presets
 * @enforcedBy test/losses/papoConfig.presets.test.ts > withPapoSettings > golden: beta 0 drops the parent's kl term, beta > 0 sets trl's k3 term, null keeps the parent's
 * @since 0.3.0
 */
export interface PapoSettings {
  /** The perception term: γ, the clamp and the form. */
  readonly perception: PerceptionConfig;
  /** The double-entropy weights, or null for no double-entropy term. */
  readonly doubleEntropy: DoubleEntropyConfig | null;
  /**
   * β ≥ 0: the parent's KL term becomes TRL's `β·k3(ref − lp)` added to the per-token loss and
   * aggregated with it (`kl: {kind: "k3", coef: β}`); β = 0 removes the KL term (TRL skips it and
   * loads no reference model); null leaves the parent's KL term as it is.
   */
  readonly beta: number | null;
}

/**
 * The PAPO preset names: TRL v0.29.1's `PAPOConfig` defaults, and the official code's constants
 * (MikeWangWZHL/PAPO @ fb63bf45) for each variant, since its PAPO-G and PAPO-D differ in the
 * double-entropy term.
 *
 * @derivation docs/derivations/papo.md#settings-and-presets
 * @enforcedBy test/losses/papoConfig.presets.test.ts > PAPO_PRESETS > golden: trl_v0_29_1 carries papoconfig's and grpoconfig's v0.29.1 defaults
 * @since 0.3.0
 */
export const PapoPreset = {
  TRL_V0_29_1: "trl_v0_29_1",
  OFFICIAL_PAPO_G: "official_papo_g",
  OFFICIAL_PAPO_D: "official_papo_d",
} as const;
/** One of the PAPO preset names. */
export type PapoPreset = (typeof PapoPreset)[keyof typeof PapoPreset];
/** Every PAPO preset name. */
export const PAPO_PRESET_NAMES: readonly PapoPreset[] = Object.values(PapoPreset);

/**
 * The PAPO presets (docs/derivations/papo.md#settings-and-presets cites every constant):
 * - `trl_v0_29_1`: TRL v0.29.1 — trl form, γ = `perception_loss_weight` 0.1
 *   (papo_config.py:52), clamp [0, 0.2] hard-coded (papo_trainer.py:311), η1 = η2 =
 *   `der_loss_weight1/2` 0.03 (papo_config.py:57–58), β = GRPOConfig `beta` 0.0
 *   (grpo_config.py:562), so no KL term;
 * - `official_papo_g` / `official_papo_d`: the official code's constants as registered in
 *   `papoGLoss` / `papoDLoss` — official form, γ = `kl_prcp_coef` 0.01, no clip, double entropy
 *   off (G) or η1 = η2 = 0.03 (D); β null: the parent's KL is the parent's setting, not PAPO's.
 *
 * @derivation docs/derivations/papo.md#settings-and-presets
 * @enforcedBy test/losses/papoConfig.presets.test.ts > PAPO_PRESETS > golden: trl_v0_29_1 carries papoconfig's and grpoconfig's v0.29.1 defaults
 * @enforcedBy test/losses/papoConfig.presets.test.ts > PAPO_PRESETS > identity: the official presets are the registered papo_g and papo_d constants
 * @since 0.3.0
 */
export const PAPO_PRESETS: Readonly<Record<PapoPreset, PapoSettings>> = Object.freeze({
  trl_v0_29_1: Object.freeze({
    perception: Object.freeze({ gamma: 0.1, clip: 0.2, form: PapoForm.TRL }),
    doubleEntropy: Object.freeze({ eta1: 0.03, eta2: 0.03 }),
    beta: 0,
  }),
  official_papo_g: Object.freeze({
    perception: Object.freeze({ gamma: 0.01, clip: null, form: PapoForm.OFFICIAL }),
    doubleEntropy: null,
    beta: null,
  }),
  official_papo_d: Object.freeze({
    perception: Object.freeze({ gamma: 0.01, clip: null, form: PapoForm.OFFICIAL }),
    doubleEntropy: Object.freeze({ eta1: 0.03, eta2: 0.03 }),
    beta: null,
  }),
});

/**
 * A PAPO config from a parent policy-loss config and PAPO settings: the parent's fields, with
 * `kl` replaced as β says (β = 0 → `null`; β > 0 → `{kind: "k3", coef: β, aggregation: null,
 * normLen: null}`, TRL's `per_token_loss + β·per_token_kl` aggregated with the loss; β null → the
 * parent's `kl`), plus `perception` and `doubleEntropy`. No stop-gradient is introduced here; the
 * settings' other values are checked by {@link validatePapoConfig} when the loss is evaluated.
 *
 * @param parent - The parent config (GRPO → PAPO-G, DAPO → PAPO-D, or any other).
 * @param settings - The perception term, the double-entropy term and β.
 * @returns A deeply frozen PapoConfig.
 * @throws {ConfigError} E_CONFIG when β is neither null nor a finite number ≥ 0.
 * @derivation docs/derivations/papo.md#settings-and-presets
 * @enforcedBy test/losses/papoConfig.presets.test.ts > withPapoSettings > golden: beta 0 drops the parent's kl term, beta > 0 sets trl's k3 term, null keeps the parent's
 * @enforcedBy test/losses/papoConfig.presets.test.ts > withPapoSettings > rejects: a negative or non-finite beta
 * @since 0.3.0
 */
export function withPapoSettings(parent: PolicyLossConfig, settings: PapoSettings): PapoConfig {
  const fn = "withPapoSettings";
  object(fn, "settings", settings, "a PapoSettings object { perception, doubleEntropy, beta }");
  const beta = settings.beta ?? null;
  if (beta !== null) checkEps(fn, "settings.beta", beta);
  const kl =
    beta === null
      ? (parent.kl ?? null)
      : beta === 0
        ? null
        : { kind: KLEstimator.K3, coef: beta, aggregation: null, normLen: null };
  return freezePapoConfig({
    ...parent,
    kl,
    perception: settings.perception,
    doubleEntropy: settings.doubleEntropy ?? null,
  });
}
