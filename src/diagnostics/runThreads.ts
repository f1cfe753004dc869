/**
 * Run diagnosis on several threads (docs/diagnostics/run.md#threads): the steps are split into
 * contiguous ranges, each collected as a shard (collectRunSteps over a step range) on its own
 * thread, and the shards are merged by the exact merge of sharded runs
 * (docs/diagnostics/run.md#sharding-a-run), so the report is the one-thread report, value for
 * value. This module is pure; the Node entry registers the worker-thread runner
 * (src/node/runPool.ts).
 */
import type { StepRange } from "./runSteps.js";

/** Collects shards of a run on other threads. @internal */
export interface RunShardRunner {
  /** Threads the machine offers (the calling one included). */
  readonly cores: number;
  /**
   * How many of `n` workers may be started now: `n` without a memory limit; under one (`ulimit -v`),
   * those the process's address space leaves room for, each holding a step of `stepBytes()` bytes
   * (called only then), after the calling thread's own. A worker V8 cannot reserve its isolate
   * for aborts the whole process, so none is started without room.
   */
  available(n: number, stepBytes: () => number): number;
  /**
   * Collect `ranges` of `dir` on worker threads while `own()` runs here; return each range's
   * RunSteps (a plain, structured-clone object), or null for a range a worker could not collect
   * (the caller collects it itself). `progress[0]` counts the steps done by every thread.
   */
  collect(
    dir: string,
    options: Readonly<Record<string, unknown>>,
    ranges: readonly StepRange[],
    progress: Int32Array,
    own: () => void,
  ): (unknown | null)[];
}

let runner: RunShardRunner | null = null;

/** Register the runner (the Node entry does). @internal */
export function setRunShardRunner(r: RunShardRunner | null): void {
  runner = r;
}

/** The registered runner, or null. @internal */
export function runShardRunner(): RunShardRunner | null {
  return runner;
}

/**
 * Split sorted, distinct step numbers into at most `n` contiguous ranges of about equal counts,
 * each holding at least one of them, that together cover every number from 0 to
 * Number.MAX_SAFE_INTEGER: a problem of the folder at a step number between two ranges' steps (or
 * past the last) belongs to exactly one range, as it belongs to the one pass. @internal
 */
export function splitSteps(steps: readonly number[], n: number): StepRange[] {
  const k = Math.max(1, Math.min(n, steps.length));
  const out: StepRange[] = [];
  for (let j = 0; j < k; j++) {
    const a = Math.floor((j * steps.length) / k);
    const b = Math.floor(((j + 1) * steps.length) / k);
    out.push({
      from: j === 0 ? 0 : (steps[a] as number),
      to: j === k - 1 ? Number.MAX_SAFE_INTEGER : (steps[b] as number) - 1,
    });
  }
  return out;
}

/**
 * Reads a run's step files ahead of their collection, so that the collection finds them in the
 * page cache (docs/diagnostics/run.md#read-ahead): a run read from disk then costs the larger of
 * the reads and the computation instead of their sum. The data is discarded; nothing it reads
 * reaches a report. The Node entry registers one (src/node/runPrefetch.ts). @internal
 */
export interface RunPrefetcher {
  /** Start reading `paths` (files or step folders) in order; null when not worth it or not possible. */
  start(paths: readonly string[]): PrefetchHandle | null;
}

/** A running read-ahead. @internal */
export interface PrefetchHandle {
  /** The collection is done with the first `done` paths (the read-ahead stays a bounded lead ahead). */
  advance(done: number): void;
  /** Stop reading (idempotent); the collection calls it however it ends. */
  stop(): void;
}

let prefetcher: RunPrefetcher | null = null;

/** Register the read-ahead (the Node entry does). @internal */
export function setRunPrefetcher(p: RunPrefetcher | null): void {
  prefetcher = p;
}

/** The registered read-ahead, or null. @internal */
export function runPrefetcher(): RunPrefetcher | null {
  return prefetcher;
}
