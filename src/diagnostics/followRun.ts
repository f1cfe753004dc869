/**
 * Follow a run folder while it trains (docs/diagnostics/run.md#following-a-run): each poll reads
 * only the steps after the last one diagnosed, merges them into the run's per-step record, and
 * reports each alarm once, the first time it fires. A step file still being written (unreadable
 * at the run's tail) is retried on the next polls before it counts as unreadable. Memory holds one
 * RunStep per step (a few hundred bytes), so a 100k-step run stays within tens of megabytes.
 */
import type { Alarm } from "./diagnoseBatch.js";
import {
  collectRunSteps,
  type DiagnoseRunOptions,
  type RunDiagnosis,
  summarizeRun,
} from "./diagnoseRun.js";
import { mergeRunSteps, type RunSteps } from "./runSteps.js";

/** Polls a tail step may stay unreadable (a writer still at work) before it counts as unreadable. */
export const TAIL_RETRIES = 5;

/** What one poll found. */
export interface FollowUpdate {
  /** Steps diagnosed so far. */
  readonly steps: number;
  /** The newest step diagnosed (null before the first). */
  readonly lastStep: number | null;
  /** Alarms that fired for the first time on this poll. */
  readonly newAlarms: readonly Alarm[];
  /** The run's report after this poll (null before the first readable step). */
  readonly report: RunDiagnosis | null;
}

/** The state of a followed run between polls. */
export class RunFollower {
  private readonly dir: string;
  private readonly options: DiagnoseRunOptions;
  private run: RunSteps | null = null;
  private from = Number.NEGATIVE_INFINITY;
  /** The alarm codes already reported. */
  private readonly seen = new Set<string>();
  private tailTries = new Map<number, number>();

  constructor(dir: string, options: DiagnoseRunOptions = {}) {
    this.dir = dir;
    this.options = options;
  }

  /**
   * Read the steps after the last one diagnosed and report the alarms that fire for the first time.
   * A step that was unreadable at the tail is left for the next poll, up to TAIL_RETRIES polls.
   */
  poll(): FollowUpdate {
    const from = Number.isFinite(this.from) ? this.from : 0;
    let part: RunSteps | null = null;
    try {
      part = collectRunSteps(this.dir, {
        ...this.options,
        steps: { from, to: Number.MAX_SAFE_INTEGER },
      });
    } catch {
      // No step in the range yet (or the folder not created yet): nothing new.
      part = null;
    }
    if (part !== null) part = this.settledPart(part);
    if (part !== null && part.entries.length > 0) {
      this.run = this.run === null ? part : mergeRunSteps("followRun", [this.run, part]);
      const last = (part.entries[part.entries.length - 1] as { step: number }).step;
      this.from = last + 1;
    }
    if (this.run === null || this.run.steps.length === 0)
      return { steps: 0, lastStep: null, newAlarms: [], report: null };
    const report = summarizeRun(this.run, { ...this.options, maxUnreadable: 1 });
    // One report per code: a later step of the same alarm is not new.
    const newAlarms = report.alarms.filter((a) => !this.seen.has(a.code));
    for (const a of newAlarms) this.seen.add(a.code);
    const steps = this.run.steps;
    return {
      steps: steps.length,
      lastStep: (steps[steps.length - 1] as { step: number }).step,
      newAlarms,
      report,
    };
  }

  /** The run's report as it stands (for the summary on exit), or null before any step. */
  summary(): RunDiagnosis | null {
    return this.run === null || this.run.steps.length === 0
      ? null
      : summarizeRun(this.run, this.options);
  }

  /**
   * The part without its unreadable tail (steps after the last diagnosed one that could not be
   * read: a writer may still be at work), unless a tail step has failed TAIL_RETRIES polls.
   */
  private settledPart(part: RunSteps): RunSteps | null {
    const diagnosed = new Set(part.steps.map((s) => s.step));
    const lastGood =
      part.steps.length === 0 ? null : (part.steps[part.steps.length - 1] as { step: number }).step;
    const tail = part.entries
      .map((e) => e.step)
      .filter((s) => !diagnosed.has(s) && (lastGood === null || s > lastGood));
    const waiting = tail.filter((s) => {
      const n = (this.tailTries.get(s) ?? 0) + 1;
      this.tailTries.set(s, n);
      return n < TAIL_RETRIES;
    });
    if (waiting.length === 0) return part;
    const cut = Math.min(...waiting);
    const keep = (s: number) => s < cut;
    const entries = part.entries.filter((e) => keep(e.step));
    if (entries.length === 0) return null;
    return {
      ...part,
      entries,
      steps: part.steps.filter((s) => keep(s.step)),
      unreadable: part.unreadable.filter((p) => p.step === null || keep(p.step)),
      entryProblems: part.entryProblems.filter((p) => p.step === null || keep(p.step)),
      mismatchOverflowSteps: part.mismatchOverflowSteps.filter(keep),
      range: { from: part.range?.from ?? 0, to: cut - 1 },
    };
  }
}
