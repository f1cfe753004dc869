/** Render a {@link WhichReport} as a terminal table (pure: returns text, prints nothing). */

import { requireObject } from "../core/validate.js";
import type { WhichReport } from "../which/whichTable.js";

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

/**
 * Render the disagreement table: one line per configuration with its loss (8 decimals) and the
 * per-sequence gradient masses (5 decimals), then the cross-checks and GSPO's sequence ratios.
 *
 * @param report - The result of whichTable.
 * @returns Multi-line text ending with a newline.
 * @enforcedBy test/report/whichText.test.ts > renderWhichText > golden: built-in table lines
 * @since 0.1.0
 */
export function renderWhichText(report: WhichReport): string {
  requireObject("renderWhichText", "report", report, "a WhichReport (whichTable)", [
    "batchSize",
    "width",
    "rows",
    "lengths",
  ]);
  const lines: string[] = [];
  lines.push(
    `one batch, every loss below sees the identical tensors: B=${report.batchSize}, T=${report.width}, N=${report.numTokens} tokens, lengths [${report.lengths.join(", ")}]`,
  );
  lines.push("");
  const labelW = Math.max(...report.rows.map((r) => r.label.length), "configuration".length);
  const cols = report.lengths.map((L, b) => `seq${b} L=${L}`);
  const colW = Math.max(9, ...cols.map((c) => c.length));
  lines.push(
    `${pad("configuration", labelW)}  ${pad("loss", 12, true)}${cols.map((c) => pad(c, colW + 2, true)).join("")}`,
  );
  lines.push("-".repeat(labelW + 14 + cols.length * (colW + 2)));
  let previous = report.rows[0]?.source;
  for (const r of report.rows) {
    if (r.source !== previous) {
      lines.push(`${pad("shipped framework losses (models at their pinned heads):", labelW)}`);
      previous = r.source;
    }
    const masses = Array.from(r.gradMass, (m) => pad(m.toFixed(5), colW + 2, true)).join("");
    lines.push(`${pad(r.label, labelW)}  ${pad(r.loss.toFixed(8), 12, true)}${masses}`);
  }
  lines.push("");
  lines.push("(per-sequence columns: gradient mass sum_t |d loss / d logprobs[b, t]|)");
  lines.push("");
  lines.push("cross-checks on this batch (measured loss differences):");
  for (const c of report.crossChecks) {
    lines.push(`  ${c.claim}   |diff| = ${c.absDiff.toExponential(2)}`);
    lines.push(`    source: ${c.explanation}`);
  }
  const g = report.gspo;
  lines.push("");
  lines.push(
    `GSPO sequence ratios s = [${Array.from(g.sequenceRatios, (s) => s.toFixed(4)).join(", ")}] vs band [${g.band[0].toFixed(4)}, ${g.band[1].toFixed(4)}]:`,
  );
  lines.push(
    `  rows [${g.killedRows.join(", ")}] lose their whole gradient (clipped on the pessimistic side); rows [${g.flowingRows.join(", ")}] keep it.`,
  );
  return `${lines.join("\n")}\n`;
}
