/**
 * Renderings of the coverage table (src/conformance/coverage.ts): the Markdown of
 * docs/coverage.md, the plain text `polgrad coverage` prints, and the summary counts.
 */
import {
  COVERAGE,
  COVERAGE_SECTIONS,
  type CoverageRow,
  type CoverageSection,
  type CoverageStatus,
} from "../conformance/coverage.js";
import { policyLossConfigToJson } from "../io/configJson.js";

const MARK: Readonly<Record<CoverageStatus, string>> = {
  expressed: "✔",
  out_of_scope: "out of scope",
  pending: "pending",
};

/** How many rows have each status. */
export function coverageCounts(
  rows: readonly CoverageRow[] = COVERAGE,
): Record<CoverageStatus, number> {
  const out: Record<CoverageStatus, number> = { expressed: 0, out_of_scope: 0, pending: 0 };
  for (const r of rows) out[r.status]++;
  return out;
}

/** The row's "how" cell: the call or config in words, then the config as wire JSON when set. */
function howOf(r: CoverageRow): string {
  if (r.status !== "expressed") return r.reason ?? "";
  const json =
    r.config === undefined ? "" : ` — \`${JSON.stringify(policyLossConfigToJson(r.config))}\``;
  return `${r.how ?? ""}${json}`;
}

function cell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

function sections(rows: readonly CoverageRow[]): [CoverageSection, CoverageRow[]][] {
  return (Object.keys(COVERAGE_SECTIONS) as CoverageSection[]).map((s) => [
    s,
    rows.filter((r) => r.section === s),
  ]);
}

/**
 * docs/coverage.md: a heading, the counts, and one table per section (semantic, verl, OpenRLHF,
 * TRL, status, how / reason). Regenerate with `polgrad coverage --markdown > docs/coverage.md`.
 */
export function renderCoverageMarkdown(rows: readonly CoverageRow[] = COVERAGE): string {
  const c = coverageCounts(rows);
  const out: string[] = [
    "# Coverage of the frameworks' semantics",
    "",
    "Generated from `src/conformance/coverage.ts` by `polgrad coverage --markdown > docs/coverage.md`;",
    "do not edit by hand (test/conformance/coverage.test.ts fails when this file and the table differ).",
    "One row per semantic of the feature table of the framework survey (verl, OpenRLHF, TRL), plus the",
    "upstream behaviours measured beyond it. ✔ rows name the config or call that expresses the",
    "semantic (a policy-loss config is shown as its wire JSON and is run by the coverage test);",
    "out-of-scope rows give the reason; pending rows name the issue item that builds them.",
    "",
    `${rows.length} rows: ${c.expressed} ✔, ${c.out_of_scope} out of scope, ${c.pending} pending.`,
  ];
  for (const [s, list] of sections(rows)) {
    out.push("", `## ${COVERAGE_SECTIONS[s]}`, "");
    out.push("| semantic | verl | OpenRLHF | TRL | polgrad-ts | how / reason |");
    out.push("| --- | --- | --- | --- | --- | --- |");
    for (const r of list) {
      out.push(
        `| ${cell(r.semantic)} | ${cell(r.frameworks.verl)} | ${cell(r.frameworks.openrlhf)} | ${cell(r.frameworks.trl)} | ${MARK[r.status]} | ${cell(howOf(r))} |`,
      );
    }
  }
  return `${out.join("\n")}\n`;
}

/** The plain text of `polgrad coverage`: one line per row under its section, then the counts. */
export function renderCoverageText(rows: readonly CoverageRow[] = COVERAGE): string {
  const out: string[] = [];
  const w = Math.max(...rows.map((r) => r.semantic.length));
  for (const [s, list] of sections(rows)) {
    out.push(`${COVERAGE_SECTIONS[s]}:`);
    for (const r of list) {
      const text = r.status === "expressed" ? (r.how ?? "") : (r.reason ?? "");
      out.push(`  ${r.semantic.padEnd(w)}  ${MARK[r.status].padEnd(12)}  ${text}`);
    }
  }
  const c = coverageCounts(rows);
  out.push(
    `${rows.length} rows: ${c.expressed} expressed, ${c.out_of_scope} out of scope, ${c.pending} pending`,
  );
  return `${out.join("\n")}\n`;
}
