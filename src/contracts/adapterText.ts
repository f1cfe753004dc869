/**
 * Text renderings of adapter-contract results for the CLI (pure: no I/O, no parsing): the check of
 * one checkout and the table over a git directory's tags. The authors' rule and polgrad's stricter
 * checks are printed apart, the stricter ones labelled "ours".
 */

import { requireArrayOf, requireObject } from "../core/validate.js";
import type { AdapterCheckReport, AdapterTable, StricterFinding } from "./adapterTypes.js";

const short = (name: string): string => name.split(".").at(-1) as string;
const upper = (s: string): string => (s === "ok" || s === "identical" ? s : s.toUpperCase());

function stricterLines(findings: readonly StricterFinding[]): string[] {
  return findings.map(
    (s) =>
      `  ${upper(s.status)}  ${s.message}${s.callerSource === null ? "" : ` [${s.callerSource}]`}`,
  );
}

/**
 * Render an adapter check: the contract, the authors' rule per method with their messages, the
 * pinned files as provenance, polgrad's stricter checks (labelled, not deciding) and the verdict.
 *
 * Formula: one block per part; the last line is `contract holds: …` or `CONTRACT BROKEN: …`.
 *
 * @param r - A checkAdapterContract report.
 * @returns The text, ending with a newline.
 * @throws Nothing: rendering never validates or computes.
 * @derivation docs/conformance/adapters.md#checking-a-checkout
 * @enforcedBy test/contracts/adapter.test.ts > contract check --contract > golden: the authors' messages on the v1.1.0 fixture, exit 1
 * @since 0.1.0
 */
export function renderAdapterCheckText(r: AdapterCheckReport): string {
  requireObject("renderAdapterCheckText", "r", r, "an AdapterCheckReport (checkAdapterContract)", [
    "contract",
    "methods",
    "files",
  ]);
  const out = [
    `adapter contract ${r.contract} (version ${r.version}, framework ${r.framework})`,
    `  checkout ${r.checkout}`,
    "authors' rule (decides):",
  ];
  for (const m of r.methods) {
    out.push(`  ${upper(m.status)}  ${m.name}`);
    for (const f of m.failures) out.push(`    ${f}`);
  }
  out.push("pinned files (provenance):");
  for (const f of r.files) {
    const v =
      f.vendored === null
        ? "no vendored copy given (not deciding)"
        : `vendored ${f.vendored.path}: ${upper(f.vendored.status)} (deciding)`;
    out.push(`  ${f.path}${f.ref === null ? "" : ` @ ${f.ref}`}  tree: ${upper(f.tree)}; ${v}`);
  }
  if (r.stricter.length > 0) {
    out.push("ours (stricter checks, reported beside the authors' rule, not deciding):");
    out.push(...stricterLines(r.stricter));
  }
  out.push(
    r.ok
      ? `contract holds: ${r.contract} on ${r.checkout}`
      : `CONTRACT BROKEN: ${r.failures.length} failure${r.failures.length === 1 ? "" : "s"}: ${r.failures.join(" | ")}`,
  );
  return `${out.join("\n")}\n`;
}

/**
 * Render an adapter table: one row per ref (file pin status, each method's verdict, the authors'
 * verdict, then polgrad's stricter columns), the first and last passing refs, and one note per ref
 * where the authors' rule passes but a stricter check does not.
 *
 * Formula: columns ref | <pinned file> | <method>… | authors | ours:<kind>…; cells ok, BROKEN,
 * MISSING, identical, CHANGED, MISMATCH, UNKNOWN.
 *
 * @param t - An adapterTable result.
 * @returns The text, ending with a newline.
 * @throws Nothing: rendering never validates or computes.
 * @derivation docs/conformance/adapters.md#every-tag-at-once
 * @enforcedBy test/contracts/table.test.ts > contract table > golden: text rows, passing range and the unpacking note, exit 0
 * @since 0.1.0
 */
export function renderAdapterTableText(t: AdapterTable): string {
  requireObject("renderAdapterTableText", "t", t, "an AdapterTable (adapterTable)", ["rows"]);
  requireArrayOf(
    "renderAdapterTableText",
    "t.rows",
    t.rows,
    "an array of table rows",
    (r) => typeof r === "object" && r !== null,
  );
  const first = t.rows[0];
  const head = [
    "ref",
    ...(first?.files ?? []).map((f) => f.path.split("/").at(-1) as string),
    ...(first?.methods ?? []).map((m) => short(m.name)),
    "authors",
    ...(first?.stricter ?? []).map((s) => `ours:${s.kind}`),
  ];
  const cells = t.rows.map((r) => [
    r.ref,
    ...r.files.map((f) => upper(f.status)),
    ...r.methods.map((m) => upper(m.status)),
    r.authorsOk ? "pass" : "FAIL",
    ...r.stricter.map((s) => upper(s.status)),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
  const line = (c: readonly string[]) =>
    c
      .map((x, i) => x.padEnd(w[i] ?? 0))
      .join("  ")
      .trimEnd();
  const out = [
    `adapter contract ${t.contract} (version ${t.version}) on every ref of ${t.git}`,
    line(head),
    ...cells.map(line),
  ];
  const range = (p: { firstPassing: string | null; lastPassing: string | null }) =>
    p.firstPassing === null ? "at no ref" : `first at ${p.firstPassing}, last at ${p.lastPassing}`;
  out.push(`authors' rule passes: ${range(t.authors)}`);
  out.push(`authors' rule and ours pass: ${range(t.all)}`);
  for (const r of t.rows) {
    if (!r.authorsOk || r.stricterOk) continue;
    const why = r.stricter.filter((s) => s.status !== "ok").map((s) => s.message);
    out.push(`  ${r.ref}: authors' rule passes; ${why.join("; ")}`);
  }
  return `${out.join("\n")}\n`;
}
