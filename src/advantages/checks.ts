/**
 * Scalar option checks shared by the advantage estimators (flags, eps, discount factors). Configs
 * are inert data; these run at call entry, after the tensor inputs are validated.
 * @internal
 */
import { fmtValue } from "../core/message.js";
import { ConfigError, fail } from "../errors.js";

/**
 * Require a boolean option.
 * @internal
 */
export function checkFlag(fn: string, arg: string, value: unknown): boolean {
  if (typeof value !== "boolean") {
    throw fail(ConfigError, fn, arg, "a boolean", fmtValue(value));
  }
  return value;
}

/**
 * Require a finite, non-negative `eps` (a regularizer added to a std or a variance).
 * @internal
 */
export function checkEps(fn: string, arg: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw fail(ConfigError, fn, arg, "a finite number >= 0", fmtValue(value));
  }
  return value;
}

/**
 * Require a finite number (GAE's γ and λ; polgrad leaves their range open).
 * @internal
 */
export function checkFiniteNumber(fn: string, arg: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw fail(ConfigError, fn, arg, "a finite number", fmtValue(value));
  }
  return value;
}

/**
 * Throw when a denominator `spread + eps` is 0, i.e. the spread is 0 and `eps` is 0: polgrad would
 * return 0/0 = NaN there; polgrad-ts raises instead (docs/derivations/advantages.md#group-normalization).
 * @internal
 */
export function zeroDenominator(fn: string, arg: string, where: string): ConfigError {
  return fail(ConfigError, fn, arg, `> 0 when ${where}`, "0");
}

/**
 * Require a config object (not null, not a primitive).
 * @internal
 */
export function checkObject<T extends object>(fn: string, arg: string, value: T): T {
  if (typeof value !== "object" || value === null) {
    throw fail(ConfigError, fn, arg, "an object", fmtValue(value));
  }
  return value;
}
