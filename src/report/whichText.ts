/** Render a {@link WhichReport} as a terminal table (pure: returns text, prints nothing). */

import { requireObject } from "../core/validate.js";
import type { WhichReport } from "../which/whichTable.js";
import { shareSpread, spread, topIndices } from "./sequenceSummary.js";

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
export function renderWhichText(
  report: WhichReport,
  width: number = Number.POSITIVE_INFINITY,
): string {
  requireObject("renderWhichText", "report", report, "a WhichReport (whichTable)", [
    "batchSize",
    "width",
    "rows",
    "lengths",
  ]);
  const lines: string[] = [];
  const labelW = Math.max(...report.rows.map((r) => r.label.length), "configuration".length);
  const cols = report.lengths.map((L, b) => `seq${b} L=${L}`);
  const colW = Math.max(9, ...cols.map((c) => c.length));
  const tableW = labelW + 14 + cols.length * (colW + 1);
  // One column per sequence while they fit; beyond, a summary per configuration.
  const wide = tableW <= width;
  const s = spread(report.lengths);
  lines.push(
    `one batch, every loss below sees the identical tensors: B=${report.batchSize}, T=${report.width}, N=${report.numTokens} tokens, ${
      wide
        ? `lengths [${report.lengths.join(", ")}]`
        : `lengths ${s.min}..${s.max} (median ${s.median})`
    }`,
  );
  lines.push("");
  if (wide) {
    lines.push(
      `${pad("configuration", labelW)}  ${pad("loss", 12, true)}${cols.map((c) => pad(c, colW + 1, true)).join("")}`,
    );
    lines.push("-".repeat(tableW));
  } else {
    lines.push(
      `${pad("configuration", labelW)}  ${pad("loss", 12, true)}${["mass min", "median", "max"].map((c) => pad(c, 11, true)).join("")}`,
    );
    lines.push("-".repeat(labelW + 14 + 33));
  }
  let previous = report.rows[0]?.source;
  for (const r of report.rows) {
    if (r.source !== previous) {
      lines.push(`${pad("shipped framework losses (models at their pinned heads):", labelW)}`);
      previous = r.source;
    }
    if (wide) {
      const masses = Array.from(r.gradMass, (m) => pad(m.toFixed(5), colW + 1, true)).join("");
      lines.push(`${pad(r.label, labelW)}  ${pad(r.loss.toFixed(8), 12, true)}${masses}`);
    } else {
      const m = spread(r.gradMass);
      lines.push(
        `${pad(r.label, labelW)}  ${pad(r.loss.toFixed(8), 12, true)}${[m.min, m.median, m.max].map((x) => pad(x.toFixed(5), 11, true)).join("")}`,
      );
      const top = topIndices(r.gradMass)
        .map((b) => `s${b} (L=${report.lengths[b]}) ${(r.gradMass[b] as number).toFixed(5)}`)
        .join(", ");
      lines.push(`    top: ${top}`);
    }
  }
  lines.push("");
  if (wide) lines.push("(per-sequence columns: gradient mass sum_t |d loss / d logprobs[b, t]|)");
  else {
    lines.push(
      `(gradient mass sum_t |d loss / d logprobs[b, t]| over the ${report.batchSize} sequences: its spread and the top sequences per configuration; --wide for every column, --json for every number)`,
    );
    lines.push(...sequencesThatMatter(report));
  }
  lines.push("");
  lines.push("cross-checks on this batch (measured loss differences):");
  for (const c of report.crossChecks) {
    lines.push(`  ${c.claim}   |diff| = ${c.absDiff.toExponential(2)}`);
    lines.push(`    source: ${c.explanation}`);
  }
  const g = report.gspo;
  lines.push("");
  if (wide) {
    lines.push(
      `GSPO sequence ratios s = [${Array.from(g.sequenceRatios, (s) => s.toFixed(4)).join(", ")}] vs band [${g.band[0].toFixed(4)}, ${g.band[1].toFixed(4)}]:`,
    );
    lines.push(
      `  rows [${g.killedRows.join(", ")}] lose their whole gradient (clipped on the pessimistic side); rows [${g.flowingRows.join(", ")}] keep it.`,
    );
  } else {
    const r = spread(g.sequenceRatios);
    lines.push(
      `GSPO sequence ratios s: min ${r.min.toFixed(4)}, median ${r.median.toFixed(4)}, max ${r.max.toFixed(4)} vs band [${g.band[0].toFixed(4)}, ${g.band[1].toFixed(4)}]:`,
    );
    lines.push(
      `  ${g.killedRows.length} of ${report.batchSize} rows lose their whole gradient (clipped on the pessimistic side)${g.killedRows.length === 0 ? "" : `, first ${g.killedRows.slice(0, 8).join(", ")}${g.killedRows.length > 8 ? ", ..." : ""}`}; ${g.flowingRows.length} keep it.`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The sequences that matter most, below a summarised table: the longest and the shortest, and
 * those whose share of the gradient differs most between configurations (max − min over the
 * rows of mass_b / Σ mass).
 */
function sequencesThatMatter(report: WhichReport): string[] {
  const B = report.batchSize;
  const byLength = Array.from({ length: B }, (_, b) => b).sort(
    (a, b) => (report.lengths[b] as number) - (report.lengths[a] as number) || a - b,
  );
  const name = (b: number) => `s${b} (L=${report.lengths[b]})`;
  const {
    lo,
    hi,
    spread: spreadOfShare,
  } = shareSpread(
    report.rows.map((r) => r.gradMass),
    B,
  );
  return [
    `longest ${byLength.slice(0, 3).map(name).join(", ")}; shortest ${byLength.slice(-3).reverse().map(name).join(", ")}`,
    `largest disagreement between configurations (share of the gradient, max - min): ${topIndices(
      spreadOfShare,
    )
      .map((b) => `${name(b)} ${(lo[b] as number).toFixed(4)}..${(hi[b] as number).toFixed(4)}`)
      .join(", ")}`,
  ];
}
