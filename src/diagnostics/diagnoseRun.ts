/**
 * Diagnose a whole run on disk: a run folder of per-step batch files or step folders
 * (io/runFolder.ts: `step_N`, `global_step_N/`, `iter_N`, … in any registered format), read one at a
 * time in step order (docs/diagnostics/run.md#a-run). Per step it
 * keeps only scalars (ESS/n, mismatch spread, catastrophic tokens, entropy, clip census, length
 * slope); across steps it computes trends, so memory stays flat in the number of steps.
 */

import { statSync } from "node:fs";
import { join } from "node:path";
import { fmtValue, mustBe, safeText } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { createRng } from "../core/rng.js";
import { checkObject, requirePath } from "../core/validate.js";
import { ConfigError, fail, IoError, PolgradError } from "../errors.js";
import { ReadScratch } from "../io/_internal/files.js";
import { toPartialBatchAs } from "../io/batch.js";
import type { NameOptions } from "../io/names.js";
import { readTensorsAs, tensorFilesOf } from "../io/readTensors.js";
import {
  dumpGaps,
  type RunProblem,
  type RunScan,
  type RunStepEntry,
  scanRunFolderAs,
} from "../io/runFolder.js";
import { fsPath } from "../platform/fsPath.js";
import {
  type Alarm,
  type DetectorName,
  type DiagnoseOptions,
  diagnoseBatch,
} from "./diagnoseBatch.js";
import { klRefMean } from "./klRef.js";
import { Z_975 } from "./lengthBias.js";
import {
  type LogDetectorOptions,
  type LogDetectorReport,
  runLogDetectors,
} from "./logs/detectors.js";
import { normalQuantile } from "./ols.js";
import { type RewardStats, rewardStats } from "./rewards.js";
import {
  checkEssAlarm,
  checkRange,
  mergeRunSteps,
  RUN_STEPS_KIND,
  type RunStep,
  type RunSteps,
  type StepRange,
  stepSettings,
} from "./runSteps.js";
import { runPrefetcher, runShardRunner, splitSteps } from "./runThreads.js";
import { type SeriesSummary, summarize } from "./seriesSummary.js";
import { type SeriesTrend, seriesTrend } from "./seriesTrend.js";
import { stepSummary, summaryOf } from "./stepSummary.js";
import { MAX_THEIL_SEN_POINTS } from "./trend.js";

export type { RunProblem } from "../io/runFolder.js";
export type { RunStep } from "./runSteps.js";
export type { SeriesSummary } from "./seriesSummary.js";

/** The run-level diagnosis. */
export interface RunDiagnosis {
  readonly dir: string;
  readonly steps: readonly RunStep[];
  /** The dump stride: the most common distance between consecutive steps (null below 2 steps). */
  readonly stride: number | null;
  /** How the steps' names were read: the maps used (and on how many steps), unused tensors, notes. */
  readonly names: RunSteps["names"];
  readonly problems: readonly RunProblem[];
  /** Detectors skipped on some steps: detector, reason, and on how many steps. */
  readonly skipped: RunSteps["skipped"];
  readonly series: {
    readonly essRatio: SeriesSummary | null;
    readonly mismatchGapStd: SeriesSummary | null;
    readonly entropy: SeriesSummary | null;
    readonly clipKilledFrac: SeriesSummary | null;
    readonly zeroAdvFrac: SeriesSummary | null;
    readonly klRef: SeriesSummary | null;
    readonly rewardMean: SeriesSummary | null;
    readonly rewardStd: SeriesSummary | null;
    readonly truncationRate: SeriesSummary | null;
    readonly lengthSlope: SeriesSummary | null;
  };
  /**
   * The entropy series' trend over the trailing window, per training step (Theil–Sen slope with
   * its Mann–Kendall test) and the changepoint test on the residual after that trend.
   */
  readonly entropyTrend: SeriesTrend | null;
  readonly catastrophic: {
    readonly total: number;
    readonly steps: readonly number[];
    readonly positions: readonly (readonly [number, number])[];
  };
  readonly lengthBias: {
    readonly stepsExcludingZero: number;
    readonly firstExcludingZero: number | null;
    readonly lastExcludesZero: boolean;
  } | null;
  /** The family of tests behind the statistical alarms: each finding, and the level each ran at. */
  readonly family: LogDetectorReport;
  /** The alarms that fired (docs/diagnostics/run.md#alarms); the CLI exits 1 iff there is one. */
  readonly alarms: readonly Alarm[];
}

/**
 * Options of {@link diagnoseRun}. `minEffect`, `only` and `skip` name the run's family of tests
 * (entropy_collapse, clip_shift, kl_ref_shift, truncation_shift, length_bias), as the log detectors' options do.
 */
export interface DiagnoseRunOptions
  extends DiagnoseOptions,
    NameOptions,
    Pick<LogDetectorOptions, "minEffect" | "only" | "skip"> {
  /** Trailing window of the entropy changepoint test (default min(S, 4096, max(20, round(0.6·S)))). */
  readonly window?: number;
  readonly nPerm?: number;
  readonly alpha?: number;
  /** Seed of the permutation test (default 1). */
  readonly seed?: number;
  /** Alarm when the last step's ESS/n is below this (default 0.5). */
  readonly essAlarm?: number;
  /**
   * The largest fraction of a run's steps that may be unreadable (default 0.1): beyond it the run
   * is not diagnosed (an IoError names the count and the first files), since trends over the rest
   * would pass for the run's.
   */
  readonly maxUnreadable?: number;
  /** Only the steps from…to (inclusive) of the run (collectRunSteps; a shard of the run). */
  readonly steps?: StepRange;
  /**
   * Threads for diagnoseRun (Node; docs/diagnostics/run.md#threads): the steps are collected as
   * shards on worker threads and merged exactly, so every count gives the same report. Default:
   * min(cores, ⌊steps / 32⌋), at least 1; a positive integer up to 256.
   */
  readonly threads?: number;
}

/**
 * Diagnose every step of a run folder, one step in memory at a time, and compute the cross-step
 * trends per training step.
 *
 * Formula: steps from scanRunFolder (numbers from the names, so a run dumped every k steps has
 * stride k and no gaps); per step, the tensors' names resolved (resolveNames: a framework's names
 * detected or given) and diagnoseBatch; across steps, Theil–Sen slopes of each series against the
 * step numbers, and on the trailing entropy window seriesTrend: the Theil–Sen trend with its
 * Mann–Kendall test, and the CUSUM permutation changepoint test on the residual after that trend
 * (a steady linear decline is a trend, not a changepoint).
 * Null distributions: docs/diagnostics/*.md; alarms (docs/diagnostics/run.md#alarms) fire on an
 * entropy changepoint beyond the trend, any catastrophic token, a mismatch KL overflow, a
 * last-step ESS/n below `essAlarm`, and a last-step length-slope CI that excludes 0.
 *
 * @param dir - The run folder.
 * @param options - Detector options, name options (names, rename, strict, responseSlice), trend
 *   window/permutations/seed, ESS alarm level, `threads` (steps on worker threads as exactly
 *   merged shards: the same report; docs/diagnostics/run.md#threads).
 * @param onStep - Called after each step (for a progress display; with threads, the count of
 *   every thread's steps).
 * @returns The run diagnosis; unreadable or invalid steps, duplicates and missing dumps are
 *   listed in `problems` and the other steps are still diagnosed. A step is read from the first
 *   of its candidates by name that reads (docs/diagnostics/run.md#run-folder-rules); a worker
 *   that cannot start or dies leaves its steps to the calling thread (the same report;
 *   docs/diagnostics/run.md#threads-under-memory-limits).
 * @throws {IoError} E_IO when `dir` is not a folder, holds no step, or no step could be read and
 *   diagnosed (the message names what was found and why each step was skipped), or when an
 *   allocation outside the readers fails on the calling thread (naming the step).
 * @throws {ConfigError} E_CONFIG for invalid trend options (window ≤ 4096, nPerm ≤ 1e6 and
 *   nPerm·window ≤ 1e8 are capped), a non-object options or a non-function onStep.
 * @throws {OverflowError} E_OVERFLOW when a cross-step slope or trend statistic exceeds float64.
 * @derivation docs/diagnostics/run.md#a-run
 * @enforcedBy test/diagnostics/diagnose.test.ts > diagnoseRun > golden: the demo run fires every detector at its injection point
 * @enforcedBy test/diagnostics/diagnose.test.ts > diagnoseRun > rejects: a corrupt and a missing step are reported by name and the rest is diagnosed
 * @enforcedBy test/diagnostics/hardening.test.ts > diagnoseRun > regression: a rollout gap beyond 709 nats raises an alarm instead of passing as a skipped detector
 * @enforcedBy test/diagnostics/runLayouts.test.ts > diagnoseRun > regression: a run dumped every 10 steps reports slopes per step and no gaps
 * @enforcedBy test/diagnostics/runLayouts.test.ts > diagnoseRun > regression: a folder where every step is unreadable is an error naming each reason
 * @enforcedBy test/diagnostics/runShards.test.ts > run shards > identity: diagnoseRun on 2 and 3 threads equals the one-thread report, and the workers ran
 * @enforcedBy test/diagnostics/runFolders.test.ts > run folder rules > regression: a junk file does not shadow a valid step of the same number; the first candidate by name that reads is diagnosed
 * @enforcedBy test/diagnostics/runThreads.test.ts > run threads > identity: diagnose RUN --json is byte-identical on 1, 2, 3 threads and the default, over a folder with every problem kind
 * @enforcedBy test/diagnostics/runThreads.test.ts > run threads > regression: a worker that runs out of memory leaves its shard to the calling thread, with the same report
 * @since 0.1.0
 */
export function diagnoseRun(
  dir: string,
  options: DiagnoseRunOptions = {},
  onStep?: (done: number, total: number) => void,
): RunDiagnosis {
  requirePath("diagnoseRun", "dir", dir);
  const fn = "diagnoseRun";
  const opts = checkObject(fn, "options", options);
  const { threads, ...rest } = opts;
  if (
    threads !== undefined &&
    (typeof threads !== "number" || !Number.isInteger(threads) || threads < 1 || threads > 256)
  ) {
    const rule = "a positive integer at most 256";
    throw fail(ConfigError, fn, "options.threads", rule, fmtValue(threads));
  }
  const runner = runShardRunner();
  // The scan decides the thread count and is then reused by this thread's collection.
  const scan =
    runner === null || rest.steps !== undefined || threads === 1 ? null : scanRunFolderIfAny(dir);
  // Every step number named in the folder, readable or not: the ranges cover them all.
  const stepNumbers = scan === null ? [] : stepNumbersOf(scan.entries);
  let t =
    runner === null || scan === null
      ? 1
      : Math.min(
          threads ?? Math.min(runner.cores, Math.floor(scan.steps.length / 32)),
          stepNumbers.length,
        );
  // Only the workers the process's memory limits leave room for (none: this thread alone).
  if (runner !== null && scan !== null && t > 1)
    t = 1 + runner.available(t - 1, () => largestStepBytes(scan));
  if (runner === null || t <= 1) {
    return summarizeRunAs(fn, [collectRunStepsAs(fn, dir, rest, onStep, scan ?? undefined)], rest);
  }
  // Shards on threads: range 0 here, the others on workers; merged exactly (runThreads.ts).
  // The shards get our progress callback, so the caller's is checked here, as collect checks it.
  checkOnStep(fn, onStep);
  const found = scan as RunScan; // t > 1 only with a scan
  // Contiguous ranges that together cover every step number, so each problem of the folder
  // (an empty step folder between two ranges' steps, past the last) falls in exactly one.
  const ranges = splitSteps(stepNumbers, t);
  const progress = new Int32Array(new SharedArrayBuffer(4));
  const total = stepNumbers.length;
  const shard = (steps: StepRange, reuse?: RunScan): RunSteps =>
    collectRunStepsAs(
      fn,
      dir,
      { ...rest, steps },
      () => {
        Atomics.add(progress, 0, 1);
        onStep?.(Atomics.load(progress, 0), total);
      },
      reuse,
    );
  let own: RunSteps | undefined;
  let failure: unknown;
  const others = runner.collect(dir, rest, ranges.slice(1), progress, () => {
    // Caught and rethrown once the workers are done, so no reply is left behind for a next call.
    try {
      own = shard(ranges[0] as StepRange, found);
    } catch (e) {
      failure = e;
    }
  });
  if (own === undefined) throw failure;
  const parts = [
    own,
    ...others.map((p, j) => (p as RunSteps | null) ?? shard(ranges[j + 1] as StepRange, found)),
  ];
  return summarizeRunAs(fn, parts, rest);
}

/** The scan of `dir`, or null when it cannot be scanned (the one-thread path reports why). */
function scanRunFolderIfAny(dir: string): RunScan | null {
  try {
    const scan = scanRunFolderAs(dir, "diagnoseRun", STEP_FN);
    return scan.steps.length === 0 ? null : scan;
  } catch {
    return null;
  }
}

/** The distinct step numbers of entries in step order. */
function stepNumbersOf(entries: readonly RunStepEntry[]): number[] {
  const out: number[] = [];
  for (const e of entries) if (out[out.length - 1] !== e.step) out.push(e.step);
  return out;
}

/**
 * The bytes of the largest step on disk (a file, or a step folder's tensor files): what a thread
 * holds at a time, for the room a worker needs under a memory limit. 0 for what cannot be stat'ed.
 */
function largestStepBytes(scan: RunScan): number {
  const size = (path: string): number => {
    try {
      return statSync(fsPath(path)).size;
    } catch {
      return 0;
    }
  };
  let most = 0;
  for (const e of scan.steps) {
    let bytes = 0;
    if (e.kind === "file") bytes = size(e.path);
    else {
      try {
        for (const f of tensorFilesOf(STEP_FN, e.path)) bytes += size(join(e.path, f));
      } catch {
        // Unlistable now: the collection reports it.
      }
    }
    most = Math.max(most, bytes);
  }
  return most;
}

/**
 * Diagnose the steps of a run folder (all, or those in `options.steps`) and keep what the
 * cross-step report is computed from: the per-step scalars, the entries, the entries' problems,
 * the skip and name counts. Parts of one run collected over disjoint step ranges (a Slurm array,
 * Kubernetes jobs) merge exactly in {@link summarizeRun} (docs/diagnostics/run.md#sharding-a-run).
 *
 * Formula: as {@link diagnoseRun} per step, restricted to the steps s with from ≤ s ≤ to.
 *
 * @param dir - The run folder.
 * @param options - As {@link diagnoseRun}, plus `steps`: an inclusive range of step numbers.
 * @param onStep - Called after each step.
 * @returns The run's per-step part, JSON-able.
 * @throws {IoError} E_IO when `dir` is not a folder or holds no step at all.
 * @throws {ConfigError} E_CONFIG for a bad steps range, options or onStep.
 * @derivation docs/diagnostics/run.md#sharding-a-run
 * @enforcedBy test/diagnostics/runShards.test.ts > run shards > identity: a run diagnosed in shards and merged equals the run diagnosed at once
 * @since 0.1.0
 */
export function collectRunSteps(
  dir: string,
  options: DiagnoseRunOptions = {},
  onStep?: (done: number, total: number) => void,
): RunSteps {
  requirePath("collectRunSteps", "dir", dir);
  return collectRunStepsAs("collectRunSteps", dir, options, onStep);
}

/** The function a step's read and validation errors name, whichever entry point collects it. */
const STEP_FN = "diagnoseRun";

/** Require the progress callback to be a function or undefined. */
function checkOnStep(fn: string, onStep: unknown): void {
  if (onStep !== undefined && typeof onStep !== "function") {
    throw fail(ConfigError, fn, "onStep", "a function or undefined", fmtValue(onStep));
  }
}

/**
 * collectRunSteps for a worker thread of diagnoseRun (src/node/runWorker.ts): a step that fails
 * for want of memory fails the shard instead of being listed, so that the calling thread, which
 * reruns a failed shard, decides it exactly as one thread would (docs/diagnostics/run.md#threads).
 * @internal
 */
export function collectRunShard(
  dir: string,
  options: DiagnoseRunOptions,
  onStep?: (done: number, total: number) => void,
): RunSteps {
  return collectRunStepsAs("collectRunSteps", dir, options, onStep, undefined, true);
}

/** A raw allocation failure of the engine (an ArrayBuffer, a Buffer), not a PolgradError. */
function isAllocationFailure(e: unknown): boolean {
  return (
    (e instanceof RangeError && /allocation failed/i.test(e.message)) ||
    (typeof e === "object" &&
      e !== null &&
      (e as { code?: unknown }).code === "ERR_MEMORY_ALLOCATION_FAILED")
  );
}

/**
 * A step error that may come from this thread's memory rather than the step (a reader's bounded
 * allocation failed: src/io/_internal/ioError.ts allocBytes, decodeUtf8, the element buffers).
 */
function isMemoryRule(e: PolgradError): boolean {
  return / must be small enough to (hold|decode) /.test(e.message);
}

/** What a step's read says about its tensors' names and values. */
type StepNames = ReturnType<typeof toPartialBatchAs>["source"];

/**
 * collectRunSteps as `fn`; `scan` is the folder's scan when the caller made it already;
 * `deferMemory` (a worker's shard) throws a step's memory failure instead of listing it.
 */
function collectRunStepsAs(
  fn: string,
  dir: string,
  options: DiagnoseRunOptions,
  onStep?: (done: number, total: number) => void,
  scan?: RunScan,
  deferMemory = false,
): RunSteps {
  const opts = checkObject(fn, "options", options);
  checkOnStep(fn, onStep);
  checkEssAlarm(fn, opts.essAlarm);
  const range = checkRange(fn, opts.steps);
  const full = scan ?? scanRunFolderAs(dir, fn, STEP_FN);
  if (full.entries.length === 0)
    throw noSteps(fn, { dir, entries: [], entryProblems: full.problems, others: full.others }, []);
  const inRange = (step: number | null): boolean =>
    range === null || step === null || (step >= range.from && step <= range.to);
  // The candidates of each step in the range (docs/diagnostics/run.md#run-folder-rules).
  const groups: RunStepEntry[][] = [];
  for (const e of full.entries) {
    if (!inRange(e.step)) continue;
    const last = groups[groups.length - 1];
    if (last !== undefined && (last[0] as RunStepEntry).step === e.step) last.push(e);
    else groups.push([e]);
  }
  // The scan's problems with a step (duplicates, unreadable entries, gaps) are decided here, per
  // step, from the candidates; those without one (unusable step numbers) are kept as they are.
  const entryProblems: RunProblem[] = full.problems.filter((p) => p.step === null);
  const entries: { step: number; name: string }[] = [];
  const unreadable: RunProblem[] = [];
  const steps: RunStep[] = [];
  const skipCounts = new Map<string, { detector: DetectorName; reason: string; steps: number }>();
  const ignored = new Map<string, number>();
  const notes = new Set<string>();
  const maps = new Map<string, { map: string; detected: boolean; steps: number }>();
  // Steps whose rollout↔trainer gap is so large (|Δ| > 709.78) that the mismatch KL overflows:
  // catastrophic by any threshold, so they raise an alarm rather than pass as a skipped detector.
  const mismatchOverflowSteps: number[] = [];
  // One read buffer for every step file: each step's tensors are done with before the next read.
  const scratch = new ReadScratch();
  // The step files read ahead on another thread (Node), so these reads find the page cache.
  const ahead =
    runPrefetcher()?.start(groups.map((g) => (g.find((c) => !c.unreadable) ?? g[0]).path)) ?? null;
  try {
    groups.forEach((candidates, k) => {
      const step = (candidates[0] as RunStepEntry).step;
      const failed: RunProblem[] = [];
      let used: RunStepEntry | null = null;
      let d: ReturnType<typeof summaryOf> | null = null;
      let klRef: number | null = null;
      let rewards: RewardStats = { rewardMean: null, rewardStd: null, truncationRate: null };
      // The names of the candidate diagnosed, else of the last one whose names resolved.
      let source: StepNames | null = null;
      for (const c of candidates) {
        if (c.unreadable !== undefined) {
          failed.push({ file: c.name, step, message: c.unreadable });
          continue;
        }
        try {
          // Step problems read the same from one pass and from shards: they name diagnoseRun.
          const batch = toPartialBatchAs(
            STEP_FN,
            // Lazy: a tensor the step does not use is never decoded (docs/io.md#lazy-values).
            readTensorsAs(STEP_FN, c.path, {}, scratch, true),
            opts,
          );
          source = batch.source;
          // The fused pass on the plain case; diagnoseBatch (every report, every reason) otherwise.
          d = stepSummary(batch, opts) ?? summaryOf(diagnoseBatch(batch, opts));
          klRef = klRefMean(batch);
          rewards = rewardStats(batch);
          used = c;
          break;
        } catch (e) {
          if (!(e instanceof PolgradError)) {
            if (!isAllocationFailure(e)) throw e;
            const actual = `${String((e as Error).message)} reading ${safeText(c.name)}`;
            const rule = "a run whose steps fit in this process's memory, one at a time";
            throw new IoError(fn, "dir", mustBe(fn, "dir", rule, actual), dir);
          }
          // A worker short of memory leaves the shard to the calling thread.
          if (deferMemory && isMemoryRule(e)) throw e;
          failed.push({ file: c.name, step, message: e.message });
        }
      }
      if (source !== null) {
        const r = source.names;
        const key = `${r.map}\u0000${r.detected}`;
        const m = maps.get(key) ?? { map: r.map, detected: r.detected, steps: 0 };
        m.steps++;
        maps.set(key, m);
        for (const n of r.ignored) ignored.set(n, (ignored.get(n) ?? 0) + 1);
        for (const n of r.notes) notes.add(n);
        // A log-probability above 0 (read as given, docs/io.md#warnings): one note a tensor, the
        // same text from every step and every shard, so the parts merge.
        for (const w of source.warnings)
          notes.add(
            `${w.fileName ?? w.tensor}: log-probabilities above 0 at response positions in some step(s): probabilities or logits stored by mistake?`,
          );
      }
      if (used !== null && d !== null) {
        const from = safeText(used.name);
        if (d.mismatchOverflow) mismatchOverflowSteps.push(step);
        for (const s of d.skipped) {
          const reason = s.reason.replace(/ \(in [^)]*\)$/, "");
          const key = `${s.detector}\u0000${reason}`;
          const entry = skipCounts.get(key) ?? { detector: s.detector, reason, steps: 0 };
          entry.steps++;
          skipCounts.set(key, entry);
        }
        const { skipped: _skipped, mismatchOverflow: _overflow, ...scalars } = d;
        steps.push({ step, file: used.name, ...scalars, klRef, ...rewards });
        // Candidates before the one diagnosed could not be read; those after it are not read.
        for (const f of failed)
          unreadable.push({
            ...f,
            message: `${f.message}; step ${step} is diagnosed from ${from}`,
          });
        for (const c of candidates.slice(candidates.indexOf(used) + 1))
          entryProblems.push({
            file: c.name,
            step,
            message: `step ${step} is also in ${from}; ${safeText(c.name)} is ignored`,
          });
      } else unreadable.push(...failed);
      entries.push({ step, name: (used ?? (candidates[0] as RunStepEntry)).name });
      ahead?.advance(k + 1);
      onStep?.(k + 1, groups.length);
    });
  } finally {
    ahead?.stop();
  }
  return {
    kind: RUN_STEPS_KIND,
    version: 1,
    dir,
    range,
    settings: stepSettings(opts),
    entries,
    steps,
    entryProblems,
    unreadable,
    skipped: [...skipCounts.values()],
    names: {
      maps: [...maps.values()],
      ignored: [...ignored].map(([name, n]) => ({ name, steps: n })),
      notes: [...notes],
    },
    mismatchOverflowSteps,
    others: full.others,
  };
}

/**
 * The cross-step report of a run from its per-step part, or from the parts of disjoint step
 * ranges of one run.
 *
 * Formula: the parts merged in step order ({@link mergeRunSteps}); then as {@link diagnoseRun}
 * after the per-step pass, the stride and the gaps from the union of the parts' entries. Every
 * cross-step quantity is a function of the ordered per-step records alone, so the report of the
 * merged parts equals that of one pass (docs/diagnostics/run.md#sharding-a-run).
 *
 * @param parts - One RunSteps, or several of one run.
 * @param options - The trend options (window, nPerm, alpha, seed) and essAlarm.
 * @returns The run diagnosis.
 * @throws {IoError} E_IO when no step of the union could be diagnosed.
 * @throws {ConfigError} E_CONFIG when parts overlap, hold no parts, or were collected with other
 *   per-step settings.
 * @derivation docs/diagnostics/run.md#sharding-a-run
 * @enforcedBy test/diagnostics/runShards.test.ts > run shards > identity: a run diagnosed in shards and merged equals the run diagnosed at once
 * @enforcedBy test/diagnostics/runShards.test.ts > run shards > rejects: overlapping shards and shards collected with other settings
 * @since 0.1.0
 */
export function summarizeRun(
  parts: RunSteps | readonly RunSteps[],
  options: DiagnoseRunOptions = {},
): RunDiagnosis {
  const list = Array.isArray(parts) ? (parts as readonly RunSteps[]) : [parts as RunSteps];
  return summarizeRunAs("summarizeRun", list, options);
}

function summarizeRunAs(
  fn: string,
  parts: readonly RunSteps[],
  options: DiagnoseRunOptions,
): RunDiagnosis {
  const opts = checkObject(fn, "options", options);
  const essAlarm = checkEssAlarm(fn, opts.essAlarm);
  const run = mergeRunSteps(fn, parts);
  const { stride, gaps } = dumpGaps(run.entries.map((e) => e.step));
  const steps = run.steps;
  if (steps.length === 0) throw noSteps(fn, run, run.unreadable);
  const maxUnreadable = checkMaxUnreadable(fn, opts.maxUnreadable);
  const unread = run.entries.length - steps.length;
  if (unread > maxUnreadable * run.entries.length)
    throw tooManyUnreadable(fn, run, unread, maxUnreadable);
  const problems = [...run.entryProblems, ...gaps, ...run.unreadable];
  const mismatchOverflowSteps = run.mismatchOverflowSteps;
  const series = (pick: (s: RunStep) => number | null) =>
    steps.flatMap((s) => {
      const v = pick(s);
      return v === null ? [] : [{ step: s.step, value: v }];
    });
  const entropyPoints = series((s) => s.entropy);
  let entropyTrend: RunDiagnosis["entropyTrend"] = null;
  if (entropyPoints.length >= 3) {
    const S = entropyPoints.length;
    const window =
      opts.window ?? Math.min(S, MAX_THEIL_SEN_POINTS, Math.max(20, Math.round(0.6 * S)));
    entropyTrend = seriesTrend(
      entropyPoints.map((p) => p.value),
      entropyPoints.map((p) => p.step),
      {
        window: Math.min(window, S),
        nPerm: opts.nPerm ?? 999,
        alpha: opts.alpha ?? 0.05,
        rng: createRng(opts.seed ?? 1),
      },
      { fn, arg: "entropy series" },
    );
  }
  const catSteps = steps.filter((s) => (s.catastrophicCount ?? 0) > 0);
  const positions = new Map<string, [number, number]>();
  for (const s of catSteps)
    for (const [b, t] of s.catastrophicIndices) positions.set(`${b},${t}`, [b, t]);
  const withCi = steps.filter((s) => s.lengthCiLow !== null && s.lengthCiHigh !== null);
  const excludes = (s: RunStep) => (s.lengthCiLow as number) > 0 || (s.lengthCiHigh as number) < 0;
  const lengthBias =
    withCi.length === 0
      ? null
      : {
          stepsExcludingZero: withCi.filter(excludes).length,
          firstExcludingZero: withCi.find(excludes)?.step ?? null,
          lastExcludesZero: excludes(withCi[withCi.length - 1] as RunStep),
        };
  const essSummary = summarize(series((s) => s.essRatio));
  const family = runFamily(
    opts,
    {
      entropy: entropyPoints,
      clip: series(clipTotal),
      klRef: series((s) => s.klRef ?? null),
      truncation: series((s) => s.truncationRate ?? null),
    },
    withCi.length > 0,
  );
  const alarms: Alarm[] = [];
  for (const f of family.report.findings)
    if (f.alarm) alarms.push({ code: f.detector, message: f.message, step: f.step ?? null });
  const total = catSteps.reduce((a, s) => a + (s.catastrophicCount as number), 0);
  if (total > 0)
    alarms.push({
      code: "catastrophic_tokens",
      message: `${total} catastrophic token(s) on ${catSteps.length} step(s), first at step ${(catSteps[0] as RunStep).step}`,
      step: (catSteps[0] as RunStep).step,
    });
  if (mismatchOverflowSteps.length > 0)
    alarms.push({
      code: "mismatch_overflow",
      message: `rollout/trainer logprob gap beyond 709 nats (the mismatch KL overflows float64) on ${mismatchOverflowSteps.length} step(s), first at step ${mismatchOverflowSteps[0]}`,
      step: mismatchOverflowSteps[0] as number,
    });
  if (essSummary !== null && essSummary.last.value < essAlarm)
    alarms.push({
      code: "ess_low",
      message: `ESS/n ${essSummary.last.value.toFixed(3)} < ${essAlarm} at step ${essSummary.last.step}`,
      step: essSummary.last.step,
    });
  const lengthAlarm = family.lengthBias ? lengthBiasAlarm(withCi, family.report.perTest) : null;
  if (lengthAlarm !== null) alarms.push(lengthAlarm);
  return {
    dir: run.dir,
    steps,
    stride,
    names: run.names,
    problems: problems.sort((a, b) => (a.step ?? -1) - (b.step ?? -1)),
    skipped: run.skipped,
    series: {
      essRatio: essSummary,
      mismatchGapStd: summarize(series((s) => s.mismatchGapStd)),
      entropy: summarize(entropyPoints),
      clipKilledFrac: summarize(series((s) => s.clipKilledFrac)),
      zeroAdvFrac: summarize(series((s) => s.zeroAdvFrac)),
      klRef: summarize(series((s) => s.klRef ?? null)),
      rewardMean: summarize(series((s) => s.rewardMean ?? null)),
      rewardStd: summarize(series((s) => s.rewardStd ?? null)),
      truncationRate: summarize(series((s) => s.truncationRate ?? null)),
      lengthSlope: summarize(series((s) => s.lengthSlope)),
    },
    entropyTrend,
    catastrophic: { total, steps: catSteps.map((s) => s.step), positions: [...positions.values()] },
    lengthBias,
    family: family.report,
    alarms,
  };
}

/** The four clip quadrants' sum (the fraction outside the band), where the census ran. */
function clipTotal(s: RunStep): number | null {
  const q = [s.clipPosHighFrac, s.clipPosLowFrac, s.clipNegLowFrac, s.clipNegHighFrac];
  return q.some((x) => x === null) ? null : (q as number[]).reduce((a, x) => a + x, 0);
}

/** The run's detector names that --only/--skip and minEffect may name (docs/diagnostics/run.md#alarms). */
const RUN_FAMILY = ["entropy_collapse", "clip_shift", "kl_ref_shift", "truncation_shift"] as const;

/**
 * The run's family of tests (docs/diagnostics/log-detectors.md): the shift tests of the entropy
 * and the clipped fraction, and the last step's length-bias test, sharing α (Bonferroni).
 */
function runFamily(
  opts: DiagnoseRunOptions,
  points: Readonly<
    Record<"entropy" | "clip" | "klRef" | "truncation", readonly { step: number; value: number }[]>
  >,
  withLength: boolean,
): { report: LogDetectorReport; lengthBias: boolean } {
  const { entropy, clip, klRef, truncation } = points;
  const names = [...RUN_FAMILY, "length_bias"];
  for (const [arg, list] of [
    ["only", opts.only ?? []],
    ["skip", opts.skip ?? []],
  ] as const)
    for (const n of list)
      if (!names.includes(n))
        throw fail(
          ConfigError,
          "diagnoseRun",
          arg,
          `names of the run's tests (${names.join(", ")})${didYouMean(closestNames(n, names))}`,
          fmtValue(n),
        );
  const chosen = (d: string) =>
    (opts.only === undefined || opts.only.includes(d)) && !(opts.skip ?? []).includes(d);
  const lengthBias = withLength && chosen("length_bias");
  const of = (metric: string, p: readonly { step: number; value: number }[]) => ({
    metric,
    steps: p.map((x) => x.step),
    values: p.map((x) => x.value),
  });
  const report = runLogDetectors(
    {
      ...(entropy.length > 0 ? { entropy: of("entropy estimate", entropy) } : {}),
      ...(clip.length > 0 ? { clip_total: of("clip census: outside the band", clip) } : {}),
      ...(klRef.length > 0 ? { kl_ref: of("KL to the reference (k3)", klRef) } : {}),
      ...(truncation.length > 0
        ? { truncation_rate: of("truncated sequences (fraction)", truncation) }
        : {}),
    },
    {
      only: RUN_FAMILY.filter(chosen),
      ...(opts.alpha === undefined ? {} : { alpha: opts.alpha }),
      ...(opts.minEffect === undefined ? {} : { minEffect: opts.minEffect }),
      ...(opts.nPerm === undefined ? {} : { nPerm: opts.nPerm }),
      ...(opts.seed === undefined ? {} : { seed: opts.seed }),
      extraTests: lengthBias ? 1 : 0,
    },
  );
  return { report, lengthBias };
}

/**
 * The last step's length-bias test at the family's per-test level: |slope| / se beyond
 * Φ⁻¹(1 − α_i/2), se recovered from the step's 95 % interval (half-width / Φ⁻¹(0.975)).
 */
function lengthBiasAlarm(withCi: readonly RunStep[], perTest: number): Alarm | null {
  const last = withCi[withCi.length - 1] as RunStep;
  const lo = last.lengthCiLow as number;
  const hi = last.lengthCiHigh as number;
  const slope = last.lengthSlope as number;
  const se = (hi - lo) / (2 * Z_975);
  const z = normalQuantile(1 - perTest / 2);
  if (!(se > 0) || !(Math.abs(slope) > z * se)) return null;
  return {
    code: "length_bias",
    message: `length-bias slope ${Number(slope.toPrecision(4))} at the last step (${last.step}) is ${Number((Math.abs(slope) / se).toPrecision(3))} standard errors from 0, beyond the family's bound ${Number(z.toPrecision(3))} (level ${Number(perTest.toPrecision(3))})`,
    step: last.step,
  };
}

/** Most reasons a "nothing diagnosed" message lists before "and N more". */
const MAX_REASONS = 5;

/**
 * The error of a run folder where no step could be diagnosed (exit 2 in the CLI): what was found
 * and why each step was skipped.
 */
function checkMaxUnreadable(fn: string, v: unknown): number {
  if (v === undefined) return 0.1;
  if (typeof v !== "number" || !(v >= 0 && v <= 1))
    throw fail(ConfigError, fn, "maxUnreadable", "a fraction in [0, 1]", fmtValue(v));
  return v;
}

/** The error of a run whose unreadable steps exceed maxUnreadable of its steps. */
function tooManyUnreadable(fn: string, run: RunSteps, unread: number, max: number): IoError {
  const first = [...run.unreadable, ...run.entryProblems]
    .slice(0, MAX_REASONS)
    .map((p) => `${p.file}: ${p.message.replace(/^[^:]*: /, "")}`)
    .join("; ");
  return runDirError(
    fn,
    run.dir,
    `a run with at most ${Math.round(max * 100)} % of its steps unreadable (maxUnreadable; --max-unreadable)`,
    `${unread} of ${run.entries.length} step(s) in ${safeText(run.dir)} unreadable (${first})`,
  );
}

/** The IoError naming a run folder (`dir`): the rule it breaks and what it holds. */
function runDirError(fn: string, dir: string, rule: string, actual: string): IoError {
  return new IoError(fn, "dir", mustBe(fn, "dir", rule, actual), dir);
}

function noSteps(
  fn: string,
  scan: Pick<RunSteps, "dir" | "entries" | "entryProblems" | "others">,
  unreadable: readonly RunProblem[],
): IoError {
  const listed = (items: readonly string[], count: number) =>
    `${items.slice(0, MAX_REASONS).join("; ")}${count > MAX_REASONS ? `; and ${count - MAX_REASONS} more` : ""}`;
  let actual: string;
  if (scan.entries.length === 0) {
    const skipped = scan.entryProblems.map((p) => `${p.file}: ${p.message}`);
    const others =
      scan.others.count === 0
        ? "nothing else"
        : `only ${listed(
            scan.others.names.map((n) => safeText(n, 60)),
            scan.others.count,
          )}`;
    actual = `no step file or folder in ${safeText(scan.dir)} (${skipped.length > 0 ? `${listed(skipped, skipped.length)}; ` : ""}${others})`;
  } else {
    actual = `${scan.entries.length} step(s) in ${safeText(scan.dir)}, none diagnosed: ${listed(
      unreadable.map((p) => `${p.file}: ${p.message.replace(/^[^:]*: /, "")}`),
      unreadable.length,
    )}`;
  }
  return runDirError(
    fn,
    scan.dir,
    "a run folder with at least one readable step (step_N, step-N, global_step_N/, iter_N: .safetensors, .json, .npy, .npz, .pt)",
    actual,
  );
}
