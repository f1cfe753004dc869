/**
 * Hard caps on every budget option of the verifiers (docs/cli.md#bounds): a case
 * count, a batch shape and a redraw count are bounded before anything is allocated, so that
 * `cases: 1e9` or a `[1e6, 1e6]` replay is a ConfigError naming the cap, never a V8 heap abort.
 * The `polgrad verify` options share these numbers (docs/cli.md#bounds).
 */
import { fmtValue } from "../core/message.js";
import { requireInteger } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";

/** Most cases one verifier call may run (`cases`, `--cases`). */
export const MAX_VERIFY_CASES = 1000;
/** Largest batch dimension B or T of a drawn or replayed case. */
export const MAX_VERIFY_DIM = 1024;
/** Largest B·T of a drawn or replayed case (gradcheck costs O((B·T)²)). */
export const MAX_VERIFY_CELLS = 4096;
/** Most redraws per case when avoiding kinks (`maxAttempts`). */
export const MAX_VERIFY_ATTEMPTS = 10_000;

/**
 * Return `shape` when it is `[B, T]` with 1 ≤ B, T ≤ {@link MAX_VERIFY_DIM} and
 * B·T ≤ {@link MAX_VERIFY_CELLS}; otherwise throw ConfigError naming the caps.
 *
 * @param fn - The verifier, named in the message.
 * @param arg - The option, e.g. `options.replay.shape`.
 * @param shape - The shape.
 * @returns `shape`.
 * @throws {ConfigError} E_CONFIG when the shape is malformed or over a cap.
 * @derivation docs/cli.md#bounds
 * @enforcedBy test/hardening/bounded.test.ts > verify budgets > regression: cases and replay shapes over their caps are config errors naming the cap
 * @since 0.1.0
 */
export function checkShape(fn: string, arg: string, shape: unknown): readonly [number, number] {
  const ok =
    Array.isArray(shape) &&
    shape.length === 2 &&
    shape.every((d) => Number.isSafeInteger(d) && d >= 1 && d <= MAX_VERIFY_DIM) &&
    (shape[0] as number) * (shape[1] as number) <= MAX_VERIFY_CELLS;
  if (!ok) {
    throw fail(
      ConfigError,
      fn,
      arg,
      `[B, T] with 1 <= B, T <= ${MAX_VERIFY_DIM} and B·T <= ${MAX_VERIFY_CELLS}`,
      fmtValue(shape),
    );
  }
  return shape as unknown as readonly [number, number];
}

/**
 * Check a verifier's whole budget before anything is allocated: every shape of `shapes` and the
 * replay shape with {@link checkShape}, and the case count (default two per shape) with
 * {@link requireInteger} in [1, {@link MAX_VERIFY_CASES}]; returns the case count.
 *
 * @param fn - The verifier, named in the message.
 * @param shapes - `options.shapes` (already defaulted; must be non-empty).
 * @param replay - `options.replay`, when given.
 * @param cases - `options.cases`, when given.
 * @returns The number of cases to run.
 * @throws {ConfigError} E_CONFIG when a shape or the case count breaks a cap.
 * @derivation docs/cli.md#bounds
 * @enforcedBy test/hardening/bounded.test.ts > verify budgets > regression: cases and replay shapes over their caps are config errors naming the cap
 * @since 0.1.0
 */
export function checkVerifyBudget(
  fn: string,
  shapes: readonly unknown[],
  replay: { readonly shape: unknown } | undefined,
  cases: unknown,
): number {
  for (const [i, s] of shapes.entries()) checkShape(fn, `options.shapes[${i}]`, s);
  if (replay) checkShape(fn, "options.replay.shape", replay.shape);
  const n = cases ?? 2 * shapes.length;
  requireInteger(fn, "options.cases", n, 1, MAX_VERIFY_CASES);
  return n;
}
