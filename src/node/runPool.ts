/**
 * Worker threads for run diagnosis (docs/diagnostics/run.md#threads): persistent, unref'd
 * workers, each collecting one shard of a run per call; driven synchronously (Atomics.wait on a
 * shared counter, then receiveMessageOnPort for each shard's RunSteps), so diagnoseRun stays a
 * plain function. A pool that does not start, or a worker that errs or misses its time budget,
 * leaves its shard to the calling thread (the same report). Written by hand for the reason given
 * in ./threadPool.ts.
 */
import { availableParallelism } from "node:os";
import {
  MessageChannel,
  type MessagePort,
  receiveMessageOnPort,
  Worker,
} from "node:worker_threads";
import type { StepRange } from "../diagnostics/runSteps.js";
import type { RunShardRunner } from "../diagnostics/runThreads.js";
import { workerExecArgv } from "./threadPool.js";

const START_MS = 10_000;
/** A worker that completes no step for this long is taken for stuck. */
const STALL_MS = 60_000;

function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith(".ts")
    ? new URL("../../dist/node/runWorker.js", here)
    : new URL("./runWorker.js", here);
}

class RunPool implements RunShardRunner {
  readonly cores: number = Math.max(1, availableParallelism());
  /** Shards the workers collected in this process (tests check the pool is used). */
  workerShards = 0;
  private workers: { w: Worker; port: MessagePort }[] = [];
  private readonly ctl = new Int32Array(new SharedArrayBuffer(8));
  private broken = false;

  private ensure(n: number): boolean {
    if (this.broken) return false;
    try {
      for (let i = this.workers.length; i < n; i++) {
        const { port1, port2 } = new MessageChannel();
        const w = new Worker(workerUrl(), {
          workerData: { ctl: this.ctl, port: port2 },
          transferList: [port2],
          execArgv: workerExecArgv(),
        });
        w.unref();
        port1.unref();
        w.on("error", () => this.retire());
        this.workers.push({ w, port: port1 });
      }
    } catch {
      this.retire();
      return false;
    }
    const deadline = Date.now() + START_MS;
    for (;;) {
      const ready = Atomics.load(this.ctl, 1);
      if (ready >= n) return true;
      const left = deadline - Date.now();
      if (left <= 0) {
        this.retire();
        return false;
      }
      Atomics.wait(this.ctl, 1, ready, left);
    }
  }

  private retire(): void {
    this.broken = true;
    for (const { w, port } of this.workers) {
      port.close();
      void w.terminate();
    }
    this.workers = [];
  }

  collect(
    dir: string,
    options: Readonly<Record<string, unknown>>,
    ranges: readonly StepRange[],
    progress: Int32Array,
    own: () => void,
  ): (unknown | null)[] {
    const n = ranges.length;
    const results: (unknown | null)[] = ranges.map(() => null);
    if (n === 0 || !this.ensure(n)) {
      own();
      return results;
    }
    Atomics.store(this.ctl, 0, 0);
    ranges.forEach((steps, j) => {
      (this.workers[j] as { w: Worker }).w.postMessage({
        dir,
        options: { ...options, steps },
        progress,
      });
    });
    own();
    // A watchdog, not a budget: the workers may take as long as the run needs, but if no thread
    // finishes a step for a minute, the unfinished shards are left to this thread.
    let seen = Atomics.load(progress, 0);
    let deadline = Date.now() + STALL_MS;
    for (;;) {
      const done = Atomics.load(this.ctl, 0);
      if (done >= n) break;
      const now = Atomics.load(progress, 0);
      if (now !== seen) {
        seen = now;
        deadline = Date.now() + STALL_MS;
      }
      if (Date.now() >= deadline) {
        this.retire();
        return results;
      }
      Atomics.wait(this.ctl, 0, done, 1_000);
    }
    for (let j = 0; j < n; j++) {
      const m = receiveMessageOnPort((this.workers[j] as { port: MessagePort }).port);
      const reply = m?.message as { ok?: unknown } | undefined;
      results[j] = reply !== undefined && "ok" in reply ? reply.ok : null;
      if (results[j] !== null) this.workerShards++;
    }
    return results;
  }
}

/** The process's run-diagnosis pool; its workers start on first use. */
export const runPool: RunShardRunner & { readonly workerShards: number } = new RunPool();
