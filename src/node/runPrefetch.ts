/**
 * The read-ahead of run diagnosis (docs/diagnostics/run.md#read-ahead): one unref'd worker per
 * collection reads the step files in order into a scratch buffer it discards, at most a bounded
 * number of bytes ahead of the collection, so the collection's own reads hit the page cache. It
 * changes no number (the report is computed from the collection's own reads); it only moves the
 * disk's latency off the calling thread. Stopped when the collection ends, however it ends; a
 * worker that cannot start means no read-ahead; under a memory limit without room for its worker
 * (./memoryRoom.ts) none is started. Node only.
 */
import { Worker } from "node:worker_threads";
import type { PrefetchHandle, RunPrefetcher } from "../diagnostics/runThreads.js";
import { addressRoom, RESERVE_BYTES, SMALL_WORKER_BYTES } from "./memoryRoom.js";
import { workerEntry } from "./workerSet.js";

/**
 * The read-ahead worker's V8 limits: it reads into one 1 MiB buffer, so an 8 MiB code range and
 * a 16 MiB heap are ample, and its isolate reserves about a third of a default one's address
 * space (270 against 845 MiB measured).
 */
const LIMITS = {
  codeRangeSizeMb: 8,
  maxOldGenerationSizeMb: 16,
  maxYoungGenerationSizeMb: 2,
  stackSizeMb: 1,
};

/** Runs shorter than this are not worth a worker's start (tens of milliseconds). */
const MIN_FILES = 32;

/** Shared control words: [0] paths the collection is done with, [1] stop, [2] paths read. */
const DONE = 0;
const STOP = 1;

class Prefetcher implements RunPrefetcher {
  /** Paths read ahead in this process, over every collection (tests check it ran). */
  readonly counter: Int32Array = new Int32Array(new SharedArrayBuffer(4));

  start(paths: readonly string[]): PrefetchHandle | null {
    if (paths.length < MIN_FILES) return null;
    // A worker V8 cannot reserve memory for aborts the process: only with room for it.
    if (addressRoom() < SMALL_WORKER_BYTES + RESERVE_BYTES) return null;
    const ctl = new Int32Array(new SharedArrayBuffer(12));
    let worker: Worker;
    try {
      worker = new Worker(workerEntry("prefetchWorker.js", import.meta.url), {
        workerData: { paths: [...paths], ctl, counter: this.counter },
        resourceLimits: LIMITS,
        // The worker needs none of the process's options, and refuses V8 ones.
        execArgv: [],
      });
    } catch {
      return null;
    }
    worker.unref();
    // A worker that fails only loses the read-ahead: the collection reads for itself.
    worker.on("error", () => {});
    let stopped = false;
    return {
      advance(done: number): void {
        Atomics.store(ctl, DONE, done);
        Atomics.notify(ctl, DONE);
      },
      stop(): void {
        if (stopped) return;
        stopped = true;
        Atomics.store(ctl, STOP, 1);
        Atomics.notify(ctl, DONE);
        void worker.terminate().catch(() => {});
      },
    };
  }

  /** Paths read ahead so far in this process. */
  get pathsRead(): number {
    return Atomics.load(this.counter, 0);
  }
}

/** The process's read-ahead (registered by ./registerThreads.ts). */
export const runPrefetch: Prefetcher = new Prefetcher();
