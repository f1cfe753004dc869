/**
 * Argument checks at the public entry of the references: each argument's kind and shape, with the
 * shared validators of core/validate.ts, so that a malformed call is a typed error (issue 31,
 * docs/hardening.md#issue-31-silent-or-untyped). Only the arguments are checked here; the
 * arithmetic that follows reads them with ./inputs.ts and shares nothing with the closed forms.
 * @internal
 */
import {
  advantagesOf,
  requireObject,
  requireRecord,
  toMask,
  toMatrix,
} from "../../core/validate.js";

/**
 * Require `[B, T]` streams of one shape (absent or null ones skipped when `optional`), a mask of
 * that shape, and, when given, `[B]` or `[B, T]` advantages. @internal
 */
export function checkRefStreams(
  fn: string,
  streams: Readonly<Record<string, unknown>>,
  optional: readonly string[],
  mask: readonly [string, unknown],
  advantages?: readonly [string, unknown],
): void {
  let like: { rows: number; cols: number; arg: string } | null = null;
  for (const [arg, x] of Object.entries(streams)) {
    if (x == null && optional.includes(arg)) continue;
    const m = toMatrix(fn, arg, x as never);
    if (like === null) like = { rows: m.rows, cols: m.cols, arg };
    else
      toMask(
        fn,
        { rows: m.rows, cols: m.cols, data: new Uint8Array(m.rows * m.cols) },
        like,
        arg,
        "allow",
      );
  }
  toMask(fn, mask[1] as never, like ?? undefined, mask[0], "allow");
  if (advantages !== undefined && like !== null)
    advantagesOf(fn, advantages[1] as never, like, like.arg, advantages[0]);
}

/** Require a config with the fields every loss config has. @internal */
export function checkRefConfig(fn: string, config: unknown, keys: readonly string[]): void {
  requireObject(fn, "config", config, "a loss config", keys);
}

/** Require the inputs record of policyLossRef or papoRef and check its streams. @internal */
export function checkRefInputs(fn: string, inputs: unknown, extra: readonly string[]): void {
  requireRecord(fn, "inputs", inputs, "an inputs record");
  const x = inputs as Record<string, unknown>;
  const names = [
    "logprobs",
    "oldLogprobs",
    ...extra,
    "refLogprobs",
    "rolloutLogprobs",
    "entropies",
    "maskedEntropies",
  ];
  const streams: Record<string, unknown> = {};
  for (const n of names) streams[`inputs.${n}`] = x[n];
  checkRefStreams(
    fn,
    streams,
    ["inputs.refLogprobs", "inputs.rolloutLogprobs", "inputs.entropies", "inputs.maskedEntropies"],
    ["inputs.responseMask", x.responseMask],
    ["inputs.advantages", x.advantages],
  );
}
