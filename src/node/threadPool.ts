/**
 * Worker threads for the policy-loss kernel (docs/performance.md#threads): a pool of persistent
 * workers over shared memory, driven synchronously so that policyLoss stays a plain function.
 *
 * The calling thread posts one message per worker (the job's arrays are SharedArrayBuffer views,
 * shared, not copied), runs block 0 itself, then sleeps in Atomics.wait until every worker has
 * added 1 to the control word. Workers are unref'd (they never keep a process alive) and started
 * on first use; a pool that does not start, or a worker that does not finish within its time
 * budget, is retired and its blocks run on the calling thread, which gives the same bits.
 *
 * Written by hand: the npm pools (piscina, workerpool, tinypool) are promise-based, and a
 * synchronous API over Atomics is the point here.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import {
  BLOCK_FAILED,
  EVENT_SLOTS,
  type RowBlockRunner,
  type SharedPlan,
} from "../losses/kernel/blocks.js";

/**
 * The process's options minus those a worker refuses: a worker inherits `execArgv`, and one
 * started from `node --input-type=module -e …` failed to load ("--input-type can only be used
 * with string input"), leaving the pool to time out. @internal
 */
export function workerExecArgv(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a.startsWith("--input-type")) {
      if (a === "--input-type") i++; // its value came as the next argument
      continue;
    }
    out.push(a);
  }
  return out;
}

/** How long a pool may take to start (module loading in each worker). */
const START_MS = 10_000;

/**
 * The worker's entry: next to this module in the build; from the TypeScript sources (vitest), the
 * built copy (`npm test` builds first), since Node 20 workers do not load TypeScript.
 */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith(".ts")
    ? new URL("../../dist/node/rowWorker.js", here)
    : new URL("./rowWorker.js", here);
}

class ThreadPool implements RowBlockRunner {
  readonly cores: number = Math.max(1, availableParallelism());
  /** Blocks the workers ran to completion in this process (tests check the pool is used). */
  workerBlocks = 0;
  private workers: Worker[] = [];
  /** [0]: blocks done in the current job; [1]: workers ready. */
  private readonly ctl = new Int32Array(new SharedArrayBuffer(8));
  private broken = false;

  /** Start workers until there are `n`; false when the pool cannot be had. */
  private ensure(n: number): boolean {
    if (this.broken) return false;
    const have = this.workers.length;
    if (have >= n) return true;
    try {
      for (let i = have; i < n; i++) {
        const w = new Worker(workerUrl(), {
          workerData: { ctl: this.ctl },
          execArgv: workerExecArgv(),
        });
        w.unref();
        w.on("error", () => this.retire());
        this.workers.push(w);
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
    for (const w of this.workers) void w.terminate();
    this.workers = [];
  }

  run(job: SharedPlan, own: () => void): void {
    const blocks = job.blocks.length - 1;
    const others = blocks - 1;
    if (others <= 0 || !this.ensure(others)) {
      for (let j = 1; j < blocks; j++) job.events[j * EVENT_SLOTS] = BLOCK_FAILED;
      own();
      return;
    }
    Atomics.store(this.ctl, 0, 0);
    for (let j = 1; j < blocks; j++) (this.workers[j - 1] as Worker).postMessage({ job, block: j });
    own();
    // Time budget: generous for the largest batches (about 1 µs a position on one core, ×20).
    const deadline = Date.now() + 10_000 + (job.B * job.T) / 50_000;
    for (;;) {
      const done = Atomics.load(this.ctl, 0);
      if (done >= others) {
        for (let j = 1; j < blocks; j++)
          if (job.events[j * EVENT_SLOTS] !== BLOCK_FAILED) this.workerBlocks++;
        return;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        // Unfinished blocks are marked failed; the caller reruns them (and this pool retires).
        for (let j = 1; j < blocks; j++) job.events[j * EVENT_SLOTS] = BLOCK_FAILED;
        this.retire();
        return;
      }
      Atomics.wait(this.ctl, 0, done, left);
    }
  }
}

/** The process's pool; its workers start on first use. */
export const threadPool: RowBlockRunner & { readonly workerBlocks: number } = new ThreadPool();
