/**
 * Text renderings of `polgrad explain` (a framework config's resolution, its nearest algorithm,
 * its loss on a batch), `explain --diff` and `polgrad history` (docs/conformance/explain.md).
 */

import type { ConfigDiff } from "../conformance/frameworkConfig/diff.js";
import type { Explanation } from "../conformance/frameworkConfig/explain.js";
import type { KeyHistory } from "../conformance/frameworkConfig/history.js";
import type { RecordedValue } from "../conformance/releases/types.js";
import { safeText } from "../core/message.js";
import { sig4 } from "../core/pyFormat.js";
import { requireObject } from "../core/validate.js";

/** A recorded value as text: JSON for everything but plain strings. */
export function valueText(v: RecordedValue | undefined): string {
  if (v === undefined) return "(not defined)";
  if (typeof v === "string") return safeText(v, 120);
  return safeText(JSON.stringify(v), 120);
}

/** Render an explanation, with the loss on a batch when one was evaluated. */
export function renderExplainText(
  e: Explanation,
  evaluated:
    | {
        readonly batch: string;
        readonly loss: number;
        readonly microBatches: number;
        /** How the batch was completed or fitted, one line each. */
        readonly notes?: readonly string[];
      }
    | { readonly notEvaluated: string }
    | null,
): string {
  requireObject("renderExplainText", "e", e, "an Explanation (explainResolution)", ["resolution"]);
  requireObject("renderExplainText", "e.resolution", e.resolution, "a FrameworkResolution", [
    "ref",
    "repo",
    "release",
    "settings",
  ]);
  if (evaluated !== null && !("notEvaluated" in evaluated))
    requireObject(
      "renderExplainText",
      "evaluated",
      evaluated,
      "{batch, loss, microBatches}, {notEvaluated} or null",
      ["batch", "loss"],
    );
  const r = e.resolution;
  const out: string[] = [];
  out.push(
    `${r.ref}: ${r.repo} @ ${r.release.commit.slice(0, 12)} (${r.release.tag ?? "untagged"}, ${r.release.date})`,
  );
  out.push("");
  out.push("Settings (loss-relevant):");
  const w = Math.max(...r.settings.map((s) => s.key.length), 4);
  for (const s of r.settings) {
    const src = s.source === "user" ? "set" : s.source;
    out.push(
      `  ${safeText(s.key).padEnd(w)}  ${valueText(s.value).padEnd(14)} ${`[${src}]`.padEnd(10)} ${s.effective ? "" : "(no effect here) "}${s.role}${s.note === undefined ? "" : `; ${s.note}`}`,
    );
  }
  if (r.ignored.length > 0)
    out.push(
      `Ignored (do not affect the loss): ${r.ignored.map((x) => safeText(x.key)).join(", ")}`,
    );
  if (r.skipped.length > 0)
    out.push(`Skipped launcher tokens: ${r.skipped.map((t) => safeText(t)).join(" ")}`);
  out.push("");
  out.push("The loss in polgrad's algebra:");
  const cw = Math.max(...r.algebra.map((a) => a.component.length));
  for (const a of r.algebra) out.push(`  ${a.component.padEnd(cw)}  ${a.text}`);
  out.push(`  batch  ${r.plan.batchMeaning}`);
  out.push("");
  const n = e.nearest;
  out.push(
    `Nearest registered algorithm: ${n.name} (${n.title}${n.arxiv === null ? "" : `, arXiv:${n.arxiv}`}); distance ${n.distance}${e.runnersUp.length > 0 ? `; next: ${e.runnersUp.map((x) => `${x.name} ${x.distance}`).join(", ")}` : ""}`,
  );
  if (n.differences.length === 0) out.push("  no difference from its config");
  for (const d of n.differences)
    out.push(`  ${d.component}: this run ${d.run}; ${n.name} ${d.paper}`);
  if (r.warnings.length > 0) {
    out.push("");
    out.push("Warnings:");
    for (const x of r.warnings)
      out.push(
        `  [${x.code}] ${x.message}${x.deviation === undefined ? "" : ` (deviation ${x.deviation})`}`,
      );
  }
  if (evaluated !== null && "notEvaluated" in evaluated) {
    out.push("");
    out.push(`Not evaluated: ${safeText(evaluated.notEvaluated)}`);
  } else if (evaluated !== null) {
    out.push("");
    out.push(
      `Loss on ${safeText(evaluated.batch)}: ${sig4(evaluated.loss)} (${evaluated.loss}; ${evaluated.microBatches} micro-batch${evaluated.microBatches === 1 ? "" : "es"})`,
    );
    for (const n of evaluated.notes ?? []) out.push(`  ${safeText(n)}`);
  }
  return `${out.join("\n")}\n`;
}

/** Render a diff of two resolutions. */
export function renderDiffText(d: ConfigDiff, batchNotes: readonly string[] = []): string {
  requireObject("renderDiffText", "d", d, "a ConfigDiff (diffExplanations)", [
    "a",
    "b",
    "settings",
    "algebra",
  ]);
  const out: string[] = [`${d.a.label} → ${d.b.label}`];
  if (d.settings.length === 0 && d.algebra.length === 0) out.push("  no loss-relevant difference");
  if (d.settings.length > 0) {
    out.push("Settings:");
    for (const s of d.settings)
      out.push(`  ${safeText(s.key)}: ${valueText(s.a)} → ${valueText(s.b)}`);
  }
  if (d.algebra.length > 0) {
    out.push("The loss:");
    for (const a of d.algebra) {
      out.push(`  ${a.component}:`);
      out.push(`    - ${a.a ?? "(none)"}`);
      out.push(`    + ${a.b ?? "(none)"}`);
    }
  }
  if (d.nearest.a !== d.nearest.b) out.push(`Nearest algorithm: ${d.nearest.a} → ${d.nearest.b}`);
  if (d.loss !== null)
    out.push(
      `Loss on ${safeText(d.loss.batch)}: ${sig4(d.loss.a)} → ${sig4(d.loss.b)} (${d.loss.a} → ${d.loss.b})`,
    );
  if (d.loss === null && batchNotes.length > 0)
    out.push("", `Not evaluated: ${safeText(batchNotes[0] as string)}`);
  else for (const n of batchNotes) out.push(`  ${safeText(n)}`);
  return `${out.join("\n")}\n`;
}

/** Render a key's history over a framework's releases. */
export function renderHistoryText(h: KeyHistory): string {
  requireObject("renderHistoryText", "h", h, "a KeyHistory (keyHistory)", [
    "framework",
    "key",
    "rows",
    "files",
  ]);
  const out: string[] = [`${h.framework} ${safeText(h.key)}: default per release (${h.repo})`];
  const w = Math.max(...h.rows.map((r) => r.label.length), 7);
  for (const r of h.rows) {
    const meaning = r.semantics === null ? "" : `  ${r.semantics}`;
    out.push(
      `  ${r.label.padEnd(w)}  ${r.date}  ${r.defined ? valueText(r.default).padEnd(12) : "(absent)".padEnd(12)}${r.changed ? " *" : "  "}${meaning}`,
    );
  }
  out.push("  * the default or its meaning changed at this release");
  out.push(
    `Provenance: ${h.recordedBy}; each release's ${h.files.join(", ")} at the release's commit (sha256 in --json)`,
  );
  return `${out.join("\n")}\n`;
}
