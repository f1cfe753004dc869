/**
 * The one error hierarchy of polgrad. Every error names the public function (`fn`), the argument
 * (`arg`) and carries a stable `code`; the message has one format, built by `core/message.ts`:
 * `<fn>: <arg> must be <rule>; got <actual>`.
 *
 * Tests assert the class, `code` and `arg`; one snapshot per class pins the wording
 * (test/errors.test.ts).
 */

import { mustBe } from "./core/message.js";

/** Stable machine-readable error codes (house style §5.3). */
export type ErrorCode =
  | "E_SHAPE"
  | "E_MASK"
  | "E_NONFINITE"
  | "E_OVERFLOW"
  | "E_CONFIG"
  | "E_UNKNOWN_NAME"
  | "E_IO"
  | "E_USAGE"
  | "E_VERIFY";

/** Base class of every error polgrad throws on purpose. */
export class PolgradError extends Error {
  /** Stable code, e.g. `E_SHAPE`. */
  readonly code: ErrorCode;
  /** The public function that rejected its input, e.g. `policyLoss`. */
  readonly fn: string;
  /** The argument at fault (TS spelling), when there is one. */
  readonly arg: string | undefined;

  constructor(code: ErrorCode, fn: string, arg: string | undefined, message: string) {
    super(message);
    this.name = "PolgradError";
    this.code = code;
    this.fn = fn;
    this.arg = arg;
  }
}

/** A tensor has the wrong rank or a shape that does not match its partner. */
export class ShapeError extends PolgradError {
  constructor(fn: string, arg: string, message: string) {
    super("E_SHAPE", fn, arg, message);
    this.name = "ShapeError";
  }
}

/** A response mask is not 0/1, has the wrong shape, or has a row with no response token. */
export class MaskError extends PolgradError {
  constructor(fn: string, arg: string, message: string) {
    super("E_MASK", fn, arg, message);
    this.name = "MaskError";
  }
}

/** A value that must be finite (at a response position) is NaN or infinite. */
export class NonFiniteError extends PolgradError {
  constructor(fn: string, arg: string, message: string) {
    super("E_NONFINITE", fn, arg, message);
    this.name = "NonFiniteError";
  }
}

/**
 * Finite input whose exact result is not representable in float64: a quantity overflowed (an
 * unclipped ratio exp(710), a k3 KL term exp(1e4), a sum of squares past 1.8e308). Names the
 * quantity and, where there is one, the batch position; never returned as NaN or ±Infinity
 * (docs/conventions.md#numeric-policy).
 */
export class OverflowError extends PolgradError {
  /** The quantity that overflowed, e.g. `ratio` or `klLoss`. */
  readonly quantity: string;
  /** The batch position `[b, t]` (or `[b]`) where it overflowed, when there is one. */
  readonly position: readonly number[] | undefined;

  constructor(fn: string, quantity: string, message: string, position?: readonly number[]) {
    super("E_OVERFLOW", fn, quantity, message);
    this.name = "OverflowError";
    this.quantity = quantity;
    this.position = position;
  }
}

/** A configuration object or scalar option breaks a rule. */
export class ConfigError extends PolgradError {
  constructor(fn: string, arg: string, message: string) {
    super("E_CONFIG", fn, arg, message);
    this.name = "ConfigError";
  }
}

/** A name (algorithm, mode, estimator) is not registered; carries the closest known names. */
export class UnknownNameError extends PolgradError {
  /** Registered names closest to the one given, best first. */
  readonly suggestions: readonly string[];

  constructor(fn: string, arg: string, message: string, suggestions: readonly string[]) {
    super("E_UNKNOWN_NAME", fn, arg, message);
    this.name = "UnknownNameError";
    this.suggestions = suggestions;
  }
}

/** A file could not be read or does not hold a valid batch/config. */
export class IoError extends PolgradError {
  /** The path of the file at fault, when there is one. */
  readonly path: string | undefined;

  constructor(fn: string, arg: string | undefined, message: string, path?: string) {
    super("E_IO", fn, arg, message);
    this.name = "IoError";
    this.path = path;
  }
}

/** A command line is malformed: unknown command or option, missing or invalid value. */
export class UsageError extends PolgradError {
  constructor(fn: string, arg: string | undefined, message: string) {
    super("E_USAGE", fn, arg, message);
    this.name = "UsageError";
  }
}

/**
 * A verification ran and failed (gradcheck, checkGradientFormula). Carries the replay seed and the
 * structured report; the message reads like a property-test failure: headline, replay token,
 * observed vs expected with the tolerance, and numbered `Hint:` lines.
 */
export class VerificationError extends PolgradError {
  /** Seed that replays the failing case, when there is one. */
  readonly seed: number | undefined;
  /** The structured report behind the message. */
  readonly report: unknown;

  constructor(fn: string, message: string, seed?: number, report?: unknown) {
    super("E_VERIFY", fn, undefined, message);
    this.name = "VerificationError";
    this.seed = seed;
    this.report = report;
  }
}

/**
 * The one-line throw of the whole code base: `throw fail(ConfigError, fn, arg, rule, got)` builds
 * the error of class `Kind` with the standard message `<fn>: <arg> must be <rule>; got <got>`
 * (core/message.ts, {@link mustBe}). `got` is already rendered (`fmtValue(x)`, `describeInput(x)`,
 * or words such as `"nothing"`). Classes with more constructor arguments (UnknownNameError's
 * suggestions, OverflowError's position) are built with `new` and {@link mustBe}.
 * @internal
 */
export function fail<E extends PolgradError>(
  Kind: new (fn: string, arg: string, message: string) => E,
  fn: string,
  arg: string,
  rule: string,
  got: string,
): E {
  return new Kind(fn, arg, mustBe(fn, arg, rule, got));
}
