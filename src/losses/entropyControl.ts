/**
 * The adaptive entropy coefficient of Skywork-OR1 (He et al. 2025, arXiv 2505.22312, section 3.2.4)
 * as TRL's GRPOTrainer runs it with `use_adaptive_entropy` (docs/derivations/losses.md#adaptive-entropy-coefficient):
 * a controller whose state is the coefficient and the previous optimizer step's entropy. A step
 * applies `coef` only when that entropy is at or below the target (the first step, with no
 * previous entropy, applies 0); after the step the coefficient moves by ±delta toward keeping the
 * entropy above the target, clamped to [min, max].
 */
import { fmtValue } from "../core/message.js";
import { checkFiniteNumber } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";

/** The controller's settings (TRL's names: entropy_target, entropy_coef_delta, entropy_coef_min, entropy_coef_max). */
export interface EntropyControllerConfig {
  /** The target mean per-token entropy, nats. @defaultValue 0.2 (TRL) */
  readonly target?: number;
  /** The step of the coefficient. @defaultValue 0.005 (TRL) */
  readonly delta?: number;
  /** @defaultValue 0 (TRL) */
  readonly min?: number;
  /** @defaultValue 1 (TRL) */
  readonly max?: number;
}

/** The controller's state between optimizer steps. */
export interface EntropyControllerState {
  /** The coefficient (TRL's `entropy_coef`, initially the configured one). */
  readonly coef: number;
  /** The previous step's window entropy; +∞ before the first step (TRL's `_last_world_entropy`). */
  readonly lastEntropy: number;
}

/** TRL's defaults (GRPOConfig at f2cd5771 and v1.9.0). */
export const DEFAULT_ENTROPY_CONTROLLER: Readonly<Required<EntropyControllerConfig>> =
  Object.freeze({ target: 0.2, delta: 0.005, min: 0, max: 1 });

function resolve(fn: string, config: EntropyControllerConfig): Required<EntropyControllerConfig> {
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw fail(ConfigError, fn, "config", "an EntropyControllerConfig object", fmtValue(config));
  }
  const out = { ...DEFAULT_ENTROPY_CONTROLLER };
  for (const k of ["target", "delta", "min", "max"] as const) {
    const v = config[k];
    if (v === undefined) continue;
    out[k] = checkFiniteNumber(fn, `config.${k}`, v);
  }
  if (out.min > out.max) {
    throw fail(ConfigError, fn, "config.min", `at most config.max = ${out.max}`, fmtValue(out.min));
  }
  return out;
}

function checkState(fn: string, state: EntropyControllerState): void {
  if (typeof state !== "object" || state === null) {
    throw fail(
      ConfigError,
      fn,
      "state",
      "an EntropyControllerState {coef, lastEntropy}",
      fmtValue(state),
    );
  }
  checkFiniteNumber(fn, "state.coef", state.coef);
  if (
    typeof state.lastEntropy !== "number" ||
    Number.isNaN(state.lastEntropy) ||
    state.lastEntropy === Number.NEGATIVE_INFINITY
  ) {
    throw fail(
      ConfigError,
      fn,
      "state.lastEntropy",
      "a number or +Infinity (no previous step)",
      fmtValue(state.lastEntropy),
    );
  }
}

/**
 * The coefficient an optimizer step applies (every micro-batch of the step the same one).
 *
 * Formula: c_applied = c if H_prev ≤ target, else 0 (H_prev = +∞ before the first step).
 *
 * @param state - The controller state after the previous step.
 * @param config - Target, delta, min, max (TRL's defaults when absent).
 * @returns The coefficient to put in `config.entropyBonus.coef` for this step.
 * @throws {ConfigError} E_CONFIG for a non-finite setting, min > max, or a malformed state.
 * @derivation docs/derivations/losses.md#adaptive-entropy-coefficient
 * @enforcedBy test/losses/entropy.test.ts > entropy controller > golden: the gate applies the coefficient only after a step at or below the target
 * @enforcedBy test/conformance/frameworks/surrogates.fixtures.test.ts > entropy terms vs verl and TRL > conformance: trl@f2cd5771 entropy-bonus:adaptive:below-target:dapo:token masks and replays to 1e-12
 * @since 0.3.0
 */
export function appliedEntropyCoef(
  state: EntropyControllerState,
  config: EntropyControllerConfig = {},
): number {
  const fn = "appliedEntropyCoef";
  checkState(fn, state);
  const c = resolve(fn, config);
  return state.lastEntropy <= c.target ? state.coef : 0;
}

/**
 * The controller state after an optimizer step whose window (every micro-batch and rank of the
 * step) had `entropySum` = Σ H over `tokenCount` kept tokens.
 *
 * Formula: H = entropySum / max(tokenCount, 1); c' = min(c + δ, max) if H ≤ target, else
 * max(c − δ, min); H_prev' = H.
 *
 * @param state - The state before the step.
 * @param window - Σ H and the token count over the step's window.
 * @param config - Target, delta, min, max (TRL's defaults when absent).
 * @returns The next state.
 * @throws {ConfigError} E_CONFIG for a non-finite setting or window value, a negative count, or a malformed state.
 * @derivation docs/derivations/losses.md#adaptive-entropy-coefficient
 * @enforcedBy test/losses/entropy.test.ts > entropy controller > golden: the gate applies the coefficient only after a step at or below the target
 * @enforcedBy test/conformance/frameworks/surrogates.fixtures.test.ts > entropy terms vs verl and TRL > conformance: trl@f2cd5771 entropy-bonus:adaptive:below-target:dapo:token masks and replays to 1e-12
 * @since 0.3.0
 */
export function entropyControllerStep(
  state: EntropyControllerState,
  window: { readonly entropySum: number; readonly tokenCount: number },
  config: EntropyControllerConfig = {},
): EntropyControllerState {
  const fn = "entropyControllerStep";
  checkState(fn, state);
  const c = resolve(fn, config);
  const { entropySum, tokenCount } = window ?? ({} as typeof window);
  if (typeof entropySum !== "number" || !Number.isFinite(entropySum) || entropySum < 0) {
    throw fail(ConfigError, fn, "window.entropySum", "a finite number ≥ 0", fmtValue(entropySum));
  }
  if (typeof tokenCount !== "number" || !Number.isInteger(tokenCount) || tokenCount < 0) {
    throw fail(ConfigError, fn, "window.tokenCount", "an integer ≥ 0", fmtValue(tokenCount));
  }
  const h = entropySum / Math.max(tokenCount, 1);
  const coef =
    h <= c.target ? Math.min(state.coef + c.delta, c.max) : Math.max(state.coef - c.delta, c.min);
  return { coef, lastEntropy: h };
}
