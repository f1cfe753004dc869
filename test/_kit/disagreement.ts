/**
 * Bookkeeping of the measured worst disagreement between closed forms and the reference, per
 * family; printed after a file's tests when POLGRAD_REPORT_DISAGREEMENT is set.
 */
const worst = new Map<string, number>();

/** Record one measured disagreement under `family` (keeps the maximum). */
export function recordDisagreement(family: string, d: number): void {
  worst.set(family, Math.max(worst.get(family) ?? 0, d));
}

/** Print the worst disagreement per family (only when POLGRAD_REPORT_DISAGREEMENT is set). */
export function reportDisagreement(file: string): void {
  if (process.env.POLGRAD_REPORT_DISAGREEMENT === undefined) return;
  for (const [family, d] of [...worst].sort())
    console.log(`[disagreement] ${file} ${family}: ${d.toExponential(3)}`);
}
