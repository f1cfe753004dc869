/** Render batch and run diagnoses as terminal text (pure: returns text, prints nothing). */

import { g4 } from "../core/pyFormat.js";
import { requireObject, requireString } from "../core/validate.js";
import type { Alarm, BatchDiagnosis } from "../diagnostics/diagnoseBatch.js";
import type { LogsDiagnosis } from "../diagnostics/diagnoseLogs.js";
import type { RunDiagnosis, SeriesSummary } from "../diagnostics/diagnoseRun.js";
import { LOG_QUANTITIES } from "../diagnostics/logs/quantities.js";
import { renderClipText } from "./clipText.js";
import { renderEntropyText } from "./entropyText.js";
import { renderEssText } from "./essText.js";
import { renderLengthBiasText } from "./lengthBiasText.js";
import { renderMismatchText } from "./mismatchText.js";

/**
 * Render one batch's diagnosis: each detector's summary lines, then the skipped detectors.
 *
 * @param d - The batch diagnosis.
 * @param path - The file diagnosed.
 * @returns Text ending with a newline.
 * @enforcedBy test/diagnostics/diagnose.test.ts > diagnoseBatch > golden: every detector runs on a full batch and a missing stream skips exactly its detectors
 * @since 0.1.0
 */
export function renderBatchDiagnosisText(d: BatchDiagnosis, path: string): string {
  requireObject("renderBatchDiagnosisText", "d", d, "a BatchDiagnosis (diagnoseBatch)", [
    "alarms",
    "skipped",
  ]);
  requireString("renderBatchDiagnosisText", "path", path);
  const parts: string[] = [`polgrad diagnose ${path}`, alarmLine(d.alarms), ""];
  if (d.droppedRows !== undefined && d.droppedRows.length > 0)
    parts.push(
      `dropped ${d.droppedRows.length} row(s) with no response token (--empty-rows drop): ${d.droppedRows.join(", ")}`,
    );
  if (d.ess) parts.push(renderEssText(d.ess));
  if (d.mismatch) parts.push(renderMismatchText(d.mismatch));
  // The census text reads only the fractions; the per-token mask is not kept in a diagnosis.
  if (d.clip)
    parts.push(
      renderClipText({
        ...d.clip,
        gradientKilledMask: { rows: 0, cols: 0, data: new Uint8Array(0) },
      }),
    );
  if (d.entropy) parts.push(renderEntropyText(d.entropy));
  if (d.lengthBias) parts.push(renderLengthBiasText(d.lengthBias));
  for (const s of d.skipped) parts.push(`skipped ${s.detector}: ${s.reason}\n`);
  parts.push(alarmLine(d.alarms));
  return parts.map((p) => (p.endsWith("\n") || p === "" ? p : `${p}\n`)).join("");
}

/** The alarm line, at the top and the bottom of a report: every alarm by code and reading. */
function alarmLine(alarms: readonly Alarm[]): string {
  return alarms.length === 0
    ? "alarms: none"
    : `alarms (${alarms.length}): ${alarms.map((a) => `[${a.code}] ${a.message}`).join("; ")}`;
}

function trend(label: string, s: SeriesSummary | null, unit = ""): string | null {
  if (s === null) return null;
  return `${label}: ${g4(s.first.value)}${unit} at step ${s.first.step} -> ${g4(s.last.value)}${unit} at step ${s.last.step} (min ${g4(s.min.value)} at step ${s.min.step}, max ${g4(s.max.value)} at step ${s.max.step}; Theil-Sen slope ${g4(s.slope)} per step)`;
}

/**
 * Render a run's diagnosis: steps and problems, one trend line per detector, the entropy
 * changepoint test, catastrophic tokens, the length-bias CI at the first and last step, the alarms.
 *
 * @param d - The run diagnosis.
 * @returns Text ending with a newline.
 * @enforcedBy test/diagnostics/diagnose.test.ts > diagnoseRun > golden: the demo run fires every detector at its injection point
 * @since 0.1.0
 */
export function renderRunDiagnosisText(d: RunDiagnosis): string {
  requireObject("renderRunDiagnosisText", "d", d, "a RunDiagnosis (diagnoseRun)", [
    "dir",
    "steps",
    "alarms",
    "problems",
    "skipped",
    "series",
  ]);
  const first = d.steps[0];
  const last = d.steps[d.steps.length - 1];
  const lines: string[] = [
    `polgrad diagnose ${d.dir}: ${d.steps.length} step(s) diagnosed${first && last ? ` (steps ${first.step}..${last.step}${d.stride !== null && d.stride > 1 ? `, every ${d.stride} steps` : ""})` : ""}, ${d.problems.length} problem(s)`,
    alarmLine(d.alarms),
  ];
  for (const p of d.problems) lines.push(`  problem: ${p.file}: ${p.message}`);
  for (const s of d.skipped)
    lines.push(`  skipped ${s.detector} on ${s.steps} step(s): ${s.reason}`);
  lines.push("");
  const rows = [
    trend("importance ESS/n (sequence level)", d.series.essRatio),
    trend("rollout-trainer gap std (trainer - rollout)", d.series.mismatchGapStd),
    trend("token entropy estimate", d.series.entropy, " nats"),
    trend("PPO clip census: gradient killed by the clip", d.series.clipKilledFrac),
    trend("zero-advantage tokens (no gradient, not the clip)", d.series.zeroAdvFrac),
    trend("KL to the reference (k3)", d.series.klRef, " nats"),
    trend("reward (mean over the step's sequences)", d.series.rewardMean ?? null),
    trend("reward std (over the step's sequences)", d.series.rewardStd ?? null),
    trend("truncated sequences (fraction)", d.series.truncationRate ?? null),
    trend("length-bias slope", d.series.lengthSlope),
  ];
  for (const r of rows) if (r !== null) lines.push(r);
  const t = d.entropyTrend;
  if (t !== null) {
    lines.push(
      `entropy trend (trailing ${t.window} dumped steps): Theil-Sen slope ${g4(t.slope)} nats per training step, Mann-Kendall p = ${g4(t.mannKendall.pValue)} -> ${t.trendSignificant ? "a significant trend" : "no significant trend"} at alpha ${t.alpha}`,
      `entropy changepoint test on the residual after the trend (CUSUM vs ${t.nPerm} refitted permutations): stat ${g4(t.cusumStat)} vs threshold ${g4(t.threshold)} -> ${t.changepointStep === null ? "no changepoint beyond the trend" : `changepoint after step ${t.changepointStep}`}`,
    );
  }
  const c = d.catastrophic;
  lines.push(
    c.total === 0
      ? "catastrophic tokens: none"
      : `catastrophic tokens: ${c.total} on steps ${c.steps.length > 6 ? `${c.steps.slice(0, 3).join(", ")}, ..., ${c.steps.slice(-2).join(", ")}` : c.steps.join(", ")} at positions ${c.positions.map(([b, tt]) => `(${b}, ${tt})`).join(", ")}`,
  );
  const withCi = d.steps.filter((s) => s.lengthCiLow !== null);
  if (d.lengthBias && withCi.length > 0) {
    const f = withCi[0] as (typeof withCi)[number];
    const l = withCi[withCi.length - 1] as (typeof withCi)[number];
    const ci = (s: typeof f) =>
      `slope ${g4(s.lengthSlope as number)}, 95% CI [${g4(s.lengthCiLow as number)}, ${g4(s.lengthCiHigh as number)}]`;
    const covers = (s: typeof f) =>
      (s.lengthCiLow as number) <= 0 && (s.lengthCiHigh as number) >= 0 ? "covers 0" : "excludes 0";
    lines.push(
      `length bias: at step ${f.step} ${ci(f)} ${covers(f)}; at step ${l.step} ${ci(l)} ${covers(l)}; CI excludes 0 on ${d.lengthBias.stepsExcludingZero} of ${withCi.length} steps${d.lengthBias.firstExcludingZero !== null ? `, first at step ${d.lengthBias.firstExcludingZero}` : ""}`,
    );
  }
  lines.push("");
  lines.push(alarmLine(d.alarms));
  return `${lines.join("\n")}\n`;
}

/**
 * Render a diagnosis of metric logs: per run its files, the names read (and those not), one
 * trend line per mapped quantity, every detector's finding, then the alarms.
 *
 * @param d - diagnoseLogs' result.
 * @returns The text, newline-terminated.
 * @throws {ConfigError} E_CONFIG when `d` is not a LogsDiagnosis.
 * @derivation docs/diagnostics/logs.md#diagnosing-a-log
 * @enforcedBy test/cli/diagnoseLogs.test.ts > diagnose on metric logs > golden: a TRL output folder, a verl JSONL log and TensorBoard folders (both scalar styles) with an injected collapse exit 1 at its step
 * @since 0.1.0
 */
export function renderLogsDiagnosisText(d: LogsDiagnosis): string {
  requireObject("renderLogsDiagnosisText", "d", d, "a LogsDiagnosis (diagnoseLogs)", [
    "path",
    "runs",
    "alarms",
  ]);
  const lines: string[] = [
    `polgrad diagnose ${d.path}: ${d.runs.length} logged run(s)${d.runs.length > 1 ? `, each tested at alpha ${g4(d.alpha)} / ${d.runs.length}` : ""}`,
  ];
  for (const r of d.runs) {
    const files = r.files.length === 1 ? (r.files[0]?.path ?? "") : `${r.files.length} files`;
    lines.push(
      "",
      `run ${r.run === "" ? "(the path)" : r.run}: ${r.format}, ${files}, ${r.records} record(s), steps ${r.steps.first ?? "-"}..${r.steps.last ?? "-"} (${r.steps.count}), ${r.problemCount} problem(s)${r.rewrites > 0 ? `, ${r.rewrites} rewritten point(s)` : ""}`,
      `  names: ${r.frameworkWhy}${r.release === null ? "" : ` at ${r.release}`}`,
    );
    for (const f of r.files) if (f.note !== undefined) lines.push(`  note: ${f.path}: ${f.note}`);
    for (const p of r.problems) lines.push(`  problem: ${p.file} ${p.at}: ${p.what}`);
    if (r.problemCount > r.problems.length)
      lines.push(`  (${r.problemCount - r.problems.length} more problem(s))`);
    for (const q of LOG_QUANTITIES) {
      const name = r.names.mapped[q];
      if (name === undefined) continue;
      const s = r.series[q];
      lines.push(`  ${q} <- ${name}${s === undefined ? ": no finite point" : `: ${trendOf(s)}`}`);
    }
    for (const a of r.names.ambiguous)
      lines.push(`  ${a.quantity}: not read, ambiguous between ${a.names.join(", ")}`);
    for (const a of r.names.absent)
      lines.push(`  ${a.name}: not read, not logged by this release (${a.quantity})`);
    for (const a of r.names.setAside) lines.push(`  ${a.name}: set aside, ${a.why}`);
    if (r.names.unmappedCount > 0)
      lines.push(
        `  unmapped (${r.names.unmappedCount}): ${r.names.unmapped.slice(0, 12).join(", ")}${r.names.unmappedCount > 12 ? ", ..." : ""}`,
      );
    lines.push(
      `  tests: ${r.family.tests} at level ${g4(r.family.perTest)} each (alpha ${g4(r.family.alpha)})`,
    );
    for (const f of r.family.findings) lines.push(`  ${f.message}`);
  }
  lines.push("", alarmLine(d.alarms));
  return `${lines.join("\n")}\n`;
}

function trendOf(s: SeriesSummary): string {
  return `${g4(s.first.value)} at step ${s.first.step} -> ${g4(s.last.value)} at step ${s.last.step} (min ${g4(s.min.value)}, max ${g4(s.max.value)}; Theil-Sen slope ${g4(s.slope)} per step)`;
}
