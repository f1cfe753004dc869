/**
 * Worker threads for the policy-loss kernel (docs/performance.md#threads): a pool of persistent
 * workers over shared memory, driven synchronously so that policyLoss stays a plain function.
 *
 * The calling thread posts one message per worker (the job's arrays are views of the reused shared
 * arena, src/losses/kernel/arena.ts), runs block 0 itself, then sleeps in Atomics.wait until every
 * worker has added 1 to the control word (./workerSet.ts). A pool that does not start, or a worker
 * that does not finish within its time budget, is retired and its blocks run on the calling
 * thread, which gives the same bits.
 *
 * Written by hand: the npm pools (piscina, workerpool, tinypool) are promise-based, and a
 * synchronous API over Atomics is the point here.
 */
import { availableParallelism } from "node:os";
import {
  BLOCK_FAILED,
  EVENT_SLOTS,
  type RowBlockRunner,
  type SharedPlan,
} from "../losses/kernel/blocks.js";
import { WorkerSet, workerEntry } from "./workerSet.js";

class ThreadPool implements RowBlockRunner {
  readonly cores: number = Math.max(1, availableParallelism());
  /** Blocks the workers ran to completion in this process (tests check the pool is used). */
  workerBlocks = 0;
  private readonly set = new WorkerSet<null>(
    workerEntry("rowWorker.js", import.meta.url),
    (ctl) => ({
      workerData: { ctl },
      transferList: [],
      extra: null,
    }),
  );

  run(job: SharedPlan, own: () => void): void {
    const blocks = job.blocks.length - 1;
    const others = blocks - 1;
    if (others <= 0 || !this.set.ensure(others)) {
      for (let j = 1; j < blocks; j++) job.events[j * EVENT_SLOTS] = BLOCK_FAILED;
      own();
      return;
    }
    Atomics.store(this.set.ctl, 0, 0);
    for (let j = 1; j < blocks; j++) this.set.all[j - 1]?.worker.postMessage({ job, block: j });
    own();
    this.set.touch();
    // Time budget: generous for the largest batches (about 1 µs a position on one core, ×20).
    if (this.set.waitFor(0, others, 10_000 + (job.B * job.T) / 50_000)) {
      for (let j = 1; j < blocks; j++)
        if (job.events[j * EVENT_SLOTS] !== BLOCK_FAILED) this.workerBlocks++;
      return;
    }
    // Unfinished blocks are marked failed; the caller reruns them (the set has retired).
    for (let j = 1; j < blocks; j++) job.events[j * EVENT_SLOTS] = BLOCK_FAILED;
  }
}

/** The process's pool; its workers start on first use. */
export const threadPool: RowBlockRunner & { readonly workerBlocks: number } = new ThreadPool();
