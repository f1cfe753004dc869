import { fmtValue } from "../core/message.js";
import { ConfigError, fail, OverflowError } from "../errors.js";

/** The settings of {@link adaptiveKlCoef}. */
export interface AdaptiveKLOptions {
  /** The target KL, > 0. */
  readonly target: number;
  /** The horizon (in samples), > 0. */
  readonly horizon: number;
  /** The bound of the proportional error. @defaultValue 0.2 (Ziegler et al.; verl, OpenRLHF) */
  readonly clip?: number;
}

/**
 * One update of the adaptive KL controller (Ziegler et al. 2019, arXiv:1909.08593; verl's and
 * OpenRLHF's `AdaptiveKLController.update`): the coefficient after a step that observed the KL
 * `currentKl` over `nSteps` samples.
 *
 * Formula: e = clip(currentKl/target − 1, −clip, clip), β' = β·(1 + e·nSteps/horizon), evaluated
 * in that order (e·nSteps first, then ÷ horizon) as upstream does, so the result is bitwise
 * theirs. A fixed controller is the identity β' = β. Chain calls for a run.
 * Gradient / stop-gradient: none; the coefficient is a constant to every loss.
 *
 * @param coef - The current coefficient β, finite (upstream's update can make it negative).
 * @param currentKl - The KL observed in the step, finite.
 * @param nSteps - The samples of the step (verl: the batch size), finite and ≥ 0.
 * @param options - `target`, `horizon` and `clip` (default 0.2).
 * @returns The updated coefficient.
 * @throws {ConfigError} E_CONFIG when an argument is not a finite number in its range.
 * @throws {OverflowError} E_OVERFLOW when the updated coefficient exceeds float64.
 * @derivation docs/derivations/kl.md#adaptive-kl-controller
 * @enforcedBy test/kl/klController.test.ts > adaptiveKlCoef > golden: a KL of 9 against a target of 6 clips the error at 0.2
 * @enforcedBy test/kl/klController.test.ts > adaptiveKlCoef > rejects: a non-positive target or horizon and a non-finite kl
 * @enforcedBy test/conformance/frameworks/gaeKlControl.fixtures.test.ts > gae and kl controllers vs verl and OpenRLHF > conformance: verl@1dda039b adaptive_kl_controller replays bitwise
 * @see Ziegler et al. 2019, Fine-Tuning Language Models from Human Preferences, arXiv:1909.08593
 * @since 0.3.0
 */
export function adaptiveKlCoef(
  coef: number,
  currentKl: number,
  nSteps: number,
  options: AdaptiveKLOptions,
): number {
  const fn = "adaptiveKlCoef";
  const num = (arg: string, v: unknown, rule: string, ok: (x: number) => boolean): number => {
    if (typeof v !== "number" || !Number.isFinite(v) || !ok(v))
      throw fail(ConfigError, fn, arg, rule, fmtValue(v));
    return v;
  };
  // Any finite β, negative included: upstream's own update goes negative when e·n/H < −1, and
  // the next update then runs on it (quoted as upstream computes it).
  num("coef", coef, "a finite number", () => true);
  num("currentKl", currentKl, "a finite number", () => true);
  num("nSteps", nSteps, "a finite number >= 0", (x) => x >= 0);
  if (typeof options !== "object" || options === null)
    throw fail(ConfigError, fn, "options", "an object {target, horizon}", fmtValue(options));
  const target = num("options.target", options.target, "a finite number > 0", (x) => x > 0);
  const horizon = num("options.horizon", options.horizon, "a finite number > 0", (x) => x > 0);
  const clip = num("options.clip", options.clip ?? 0.2, "a finite number >= 0", (x) => x >= 0);
  const e = Math.min(Math.max(currentKl / target - 1, -clip), clip);
  const out = coef * (1 + (e * nSteps) / horizon);
  if (!Number.isFinite(out)) {
    throw new OverflowError(
      fn,
      "coef",
      `${fn}: the updated coefficient β·(1 + e·nSteps/horizon) = ${coef}·(1 + ${e}·${nSteps}/${horizon}) exceeds float64`,
    );
  }
  return out;
}
