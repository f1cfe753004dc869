/**
 * Worker threads for run diagnosis (docs/diagnostics/run.md#threads): persistent, unref'd
 * workers, each collecting one shard of a run per call; driven synchronously (Atomics.wait on a
 * shared counter, then receiveMessageOnPort for each shard's RunSteps), so diagnoseRun stays a
 * plain function. Under a memory limit only the workers the address space has room for start
 * (./memoryRoom.ts). A pool that does not start, or a worker that errs, dies (out of memory: seen
 * at once, ./threadLife.ts) or completes no step for a minute, leaves its shard to the calling
 * thread (the same report). Written by hand for the reason given in ./threadPool.ts.
 */
import { availableParallelism } from "node:os";
import {
  MessageChannel,
  type MessagePort,
  type ResourceLimits,
  receiveMessageOnPort,
} from "node:worker_threads";
import type { StepRange } from "../diagnostics/runSteps.js";
import type { RunShardRunner } from "../diagnostics/runThreads.js";
import { addressRoom, RESERVE_BYTES, SMALL_WORKER_BYTES, WORKER_BYTES } from "./memoryRoom.js";
import { POLL_MS, WorkerSet, workerEntry } from "./workerSet.js";

/** A worker that completes no step for this long is taken for stuck. */
const STALL_MS = 60_000;

/**
 * What a thread holds of a step of `b` bytes at a time: the read buffer, the tensors converted
 * to float64 (twice a float32 file), and the per-row arrays of the detectors.
 */
const stepHold = (b: number): number => 4 * b;

/** A pool of run workers (the process's is {@link runPool}). @internal */
export class RunPool implements RunShardRunner {
  readonly cores: number = Math.max(1, availableParallelism());
  /** Shards the workers collected in this pool (tests check the pool is used). */
  workerShards = 0;
  /** Shards whose worker died or stalled, left to the calling thread (tests check the fallback). */
  lostShards = 0;
  private readonly set: WorkerSet<MessagePort>;

  /** @param limits - The workers' V8 limits instead of the computed ones (tests: a small heap). */
  constructor(limits?: ResourceLimits) {
    this.set = new WorkerSet<MessagePort>(
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
      limits,
    );
  }

  available(n: number, stepBytes: () => number): number {
    const room = addressRoom();
    if (room === Number.POSITIVE_INFINITY) return n;
    const hold = stepHold(stepBytes());
    // The calling thread keeps its reserve, its step and its read-ahead; each worker needs its
    // isolate, its step and its own read-ahead's isolate.
    // Workers already running hold their isolate (in the room measured) and need only the rest.
    let left = room - (RESERVE_BYTES + hold + SMALL_WORKER_BYTES);
    let k = 0;
    while (k < n) {
      left -= (k < this.set.all.length ? 0 : WORKER_BYTES) + hold + SMALL_WORKER_BYTES;
      if (left < 0) break;
      k++;
    }
    return k;
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
    // Each worker's reply, or null for a shard left to this thread: the worker failed, its
    // thread died (out of memory), or (a watchdog, not a budget: the workers may take as long as
    // the run needs) no thread finished a step for a minute.
    const members = this.set.all;
    const replied = ranges.map(() => false);
    let pending = n;
    let seen = Atomics.load(progress, 0);
    let deadline = Date.now() + STALL_MS;
    const take = (j: number): boolean => {
      const port = members[j]?.extra;
      const reply = port === undefined ? undefined : receiveMessageOnPort(port);
      if (reply === undefined) return false;
      const message = reply.message as { ok?: unknown } | undefined;
      results[j] = message !== undefined && "ok" in message ? message.ok : null;
      if (results[j] !== null) this.workerShards++;
      return true;
    };
    let lost = false;
    while (pending > 0) {
      const done = Atomics.load(this.set.ctl, 0);
      for (let j = 0; j < n; j++) {
        if (replied[j]) continue;
        if (take(j)) {
          replied[j] = true;
          pending--;
        } else if (!this.set.alive(j)) {
          // A reply posted just before the thread died is still in the port: look once more.
          if (!take(j)) {
            lost = true;
            this.lostShards++;
          }
          replied[j] = true;
          pending--;
        }
      }
      if (pending === 0) break;
      const p = Atomics.load(progress, 0);
      if (p !== seen) {
        seen = p;
        deadline = Date.now() + STALL_MS;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        lost = true;
        this.lostShards += pending;
        break;
      }
      Atomics.wait(this.set.ctl, 0, done, Math.min(left, POLL_MS));
    }
    // A set that lost a worker is retired (the others stopped too): this process's later runs
    // are collected on the calling thread.
    if (lost) this.set.retire();
    return results;
  }
}

/** The process's run-diagnosis pool; its workers start on first use. */
export const runPool: RunPool = new RunPool();
