import { requireObject } from "../core/validate.js";
/**
 * The one format of verification failures, after fast-check's run reports: a headline, a replay
 * token, the observed-vs-expected lines, then numbered `Hint:` lines (docs/derivations/verify.md).
 */

/** The parts of a failure message. */
export interface FailureParts {
  readonly headline: string;
  readonly replay?: { readonly seed: number; readonly shape?: readonly number[] };
  readonly lines: readonly string[];
  readonly hints: readonly string[];
}

/**
 * Format a verification failure.
 *
 * @param parts - Headline, replay token, detail lines and hints.
 * @returns The multi-line message.
 * @derivation docs/derivations/verify.md#failure-messages
 * @enforcedBy test/verify/gradcheck.test.ts > gradcheck > golden: a correct gradient passes and a dropped factor fails with its replay seed
 * @since 0.1.0
 */
export function formatFailure(parts: FailureParts): string {
  requireObject("formatFailure", "parts", parts, "FailureParts {headline, lines, hints}", [
    "headline",
    "lines",
    "hints",
  ]);
  const lines = [parts.headline];
  if (parts.replay) {
    const shape = parts.replay.shape ? `, shape: [${parts.replay.shape.join(", ")}]` : "";
    lines.push(`  replay: { seed: ${parts.replay.seed}${shape} }`);
  }
  for (const l of parts.lines) lines.push(`  ${l}`);
  parts.hints.forEach((h, i) => {
    lines.push(`Hint: ${i + 1}. ${h}`);
  });
  return lines.join("\n");
}
