/**
 * Worker threads for run diagnosis (docs/diagnostics/run.md#threads): persistent, unref'd
 * workers, each collecting one shard of a run per call; driven synchronously (Atomics.wait on a
 * shared counter, then receiveMessageOnPort for each shard's RunSteps), so diagnoseRun stays a
 * plain function. A pool that does not start, or a worker that errs or misses its time budget,
 * leaves its shard to the calling thread (the same report). Written by hand for the reason given
 * in ./threadPool.ts.
 */
import { availableParallelism } from "node:os";
import { MessageChannel, type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import type { StepRange } from "../diagnostics/runSteps.js";
import type { RunShardRunner } from "../diagnostics/runThreads.js";
import { WorkerSet, workerEntry } from "./workerSet.js";

/** A worker that completes no step for this long is taken for stuck. */
const STALL_MS = 60_000;

class RunPool implements RunShardRunner {
  readonly cores: number = Math.max(1, availableParallelism());
  /** Shards the workers collected in this process (tests check the pool is used). */
  workerShards = 0;
  private readonly set = new WorkerSet<MessagePort>(
    workerEntry("runWorker.js", import.meta.url),
    (ctl) => {
      const { port1, port2 } = new MessageChannel();
      port1.unref();
      return {
        workerData: { ctl, port: port2 },
        transferList: [port2],
        extra: port1,
        close: () => port1.close(),
      };
    },
  );

  collect(
    dir: string,
    options: Readonly<Record<string, unknown>>,
    ranges: readonly StepRange[],
    progress: Int32Array,
    own: () => void,
  ): (unknown | null)[] {
    const n = ranges.length;
    const results: (unknown | null)[] = ranges.map(() => null);
    if (n === 0 || !this.set.ensure(n)) {
      own();
      return results;
    }
    Atomics.store(this.set.ctl, 0, 0);
    ranges.forEach((steps, j) => {
      this.set.all[j]?.worker.postMessage({ dir, options: { ...options, steps }, progress });
    });
    own();
    this.set.touch();
    // A watchdog, not a budget: the workers may take as long as the run needs, but if no thread
    // finishes a step for a minute, the unfinished shards are left to this thread.
    if (!this.set.waitFor(0, n, STALL_MS, progress)) return results;
    this.set.all.forEach(({ extra: port }, j) => {
      if (j >= n) return;
      const reply = receiveMessageOnPort(port)?.message as { ok?: unknown } | undefined;
      results[j] = reply !== undefined && "ok" in reply ? reply.ok : null;
      if (results[j] !== null) this.workerShards++;
    });
    return results;
  }
}

/** The process's run-diagnosis pool; its workers start on first use. */
export const runPool: RunShardRunner & { readonly workerShards: number } = new RunPool();
