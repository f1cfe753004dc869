import { requireArrayOf } from "../core/validate.js";

/** Render `polgrad verify` results as text (pure). */

type Check = {
  ok: boolean;
  cases?: number;
  maxLossErr?: number;
  maxGradErr?: number;
  maxRelErr?: number;
  coordinates?: number;
  error?: string;
};

/**
 * Render one line per config and check, then the verdict.
 *
 * @param results - Per config: name, the reference check and the gradcheck reports.
 * @returns Text ending with a newline.
 * @enforcedBy test/cli/verify.test.ts > polgrad verify > golden: every algorithm verifies and the table names both checks
 * @since 0.1.0
 */
export function renderVerifyText(
  results: readonly { name: string; reference: Check; gradcheck: Check; ok: boolean }[],
): string {
  requireArrayOf(
    "renderVerifyText",
    "results",
    results,
    "an array of verify results {name, reference, gradcheck, ok}",
    (r) =>
      typeof r === "object" && r !== null && "name" in r && "reference" in r && "gradcheck" in r,
  );
  const w = Math.max(...results.map((r) => r.name.length), 9);
  const lines: string[] = [];
  for (const r of results) {
    const ref = r.reference.ok
      ? `reference: ${r.reference.cases} cases, max loss err ${(r.reference.maxLossErr ?? 0).toExponential(1)}, max grad err ${(r.reference.maxGradErr ?? 0).toExponential(1)}`
      : `reference: FAILED (${r.reference.error})`;
    const gc = r.gradcheck.ok
      ? `finite differences: ${r.gradcheck.cases} cases, ${r.gradcheck.coordinates} coordinates, max rel err ${(r.gradcheck.maxRelErr ?? 0).toExponential(1)}`
      : `finite differences: FAILED (${r.gradcheck.error})`;
    lines.push(`${r.name.padEnd(w)}  ${r.ok ? "ok    " : "FAILED"}  ${ref}; ${gc}`);
  }
  const failed = results.filter((r) => !r.ok).length;
  lines.push("");
  lines.push(
    failed === 0
      ? `verified: ${results.length} of ${results.length} configs (closed form == exact autodiff reference to 1e-13; == central differences to 1e-6)`
      : `FAILED: ${failed} of ${results.length} configs (details on stderr)`,
  );
  return `${lines.join("\n")}\n`;
}
