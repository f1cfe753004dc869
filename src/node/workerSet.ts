/**
 * A set of persistent worker threads driven synchronously, the part both pools share
 * (./threadPool.ts for policyLoss's row blocks, ./runPool.ts for a run's shards): start workers on
 * first use (unref'd, so they never keep a process alive), wait for each to report ready through
 * the shared control word, and retire the set for good when a worker cannot start or errs. The
 * control array's word 0 counts the jobs done, word 1 the workers ready. Node only.
 */
import { type TransferListItem, Worker } from "node:worker_threads";

/** How long a set may take to start (module loading in each worker). */
const START_MS = 10_000;

/**
 * Idle workers are stopped after this long without a call, so that neither they nor the shared
 * memory their last job named outlive a burst of work (an idle isolate does not collect it); the
 * next call starts them again (tens of milliseconds).
 */
export const IDLE_MS = 30_000;

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

/**
 * The URL of a worker entry next to the pools in the build; from the TypeScript sources (vitest),
 * the built copy (`npm test` builds first), since Node 20 workers do not load TypeScript.
 */
export function workerEntry(name: string, here: string): URL {
  return here.endsWith(".ts")
    ? new URL(`../../dist/node/${name}`, here)
    : new URL(`./${name}`, here);
}

/** Workers of one entry, each with what the pool keeps beside it (`T`, e.g. a message port). */
export class WorkerSet<T> {
  /** [0]: jobs done in the current call; [1]: workers ready. */
  readonly ctl: Int32Array = new Int32Array(new SharedArrayBuffer(8));
  private members: { readonly worker: Worker; readonly extra: T }[] = [];
  private broken = false;

  /**
   * @param url - The worker entry.
   * @param spawn - Builds a worker's data and transfer list and what the pool keeps for it.
   */
  constructor(
    private readonly url: URL,
    private readonly spawn: (ctl: Int32Array) => {
      readonly workerData: unknown;
      readonly transferList: readonly TransferListItem[];
      readonly extra: T;
      readonly close?: () => void;
    },
  ) {}

  private readonly closers: (() => void)[] = [];
  private idle: ReturnType<typeof setTimeout> | null = null;

  /** The members, once {@link ensure} succeeded. */
  get all(): readonly { readonly worker: Worker; readonly extra: T }[] {
    return this.members;
  }

  /** Start workers until there are `n` and all are ready; false when the set cannot be had. */
  ensure(n: number): boolean {
    if (this.broken) return false;
    try {
      for (let i = this.members.length; i < n; i++) {
        const s = this.spawn(this.ctl);
        const options = { workerData: s.workerData, transferList: [...s.transferList] };
        let worker: Worker;
        try {
          worker = new Worker(this.url, { ...options, execArgv: workerExecArgv() });
        } catch (e) {
          // A V8 option of the process (`node --max-old-space-size=…`, `--expose-gc`) is refused
          // by a worker; the worker entry needs none of the process's options, so it starts
          // without them (measured before this: no pool at all under any V8 flag).
          if ((e as { code?: unknown }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw e;
          worker = new Worker(this.url, { ...options, execArgv: [] });
        }
        worker.unref();
        worker.on("error", () => this.retire());
        this.members.push({ worker, extra: s.extra });
        if (s.close !== undefined) this.closers.push(s.close);
      }
    } catch {
      this.retire();
      return false;
    }
    return this.waitFor(1, n, START_MS);
  }

  /**
   * Sleep until control word `word` reaches `n`; false (and the set retired) when it has not after
   * `ms` without progress of `progress` (when given) or in all.
   */
  waitFor(word: number, n: number, ms: number, progress?: Int32Array): boolean {
    let seen = progress === undefined ? 0 : Atomics.load(progress, 0);
    let deadline = Date.now() + ms;
    for (;;) {
      const now = Atomics.load(this.ctl, word);
      if (now >= n) return true;
      if (progress !== undefined) {
        const p = Atomics.load(progress, 0);
        if (p !== seen) {
          seen = p;
          deadline = Date.now() + ms;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        this.retire();
        return false;
      }
      Atomics.wait(this.ctl, word, now, Math.min(left, 1_000));
    }
  }

  /** Call after each use: the workers stop after `ms` (default {@link IDLE_MS}) without another. */
  touch(ms: number = IDLE_MS): void {
    if (this.idle !== null) clearTimeout(this.idle);
    // Unref'd: an idle timer never keeps a process alive.
    this.idle = setTimeout(() => this.stop(), ms);
    this.idle.unref();
  }

  /** Stop every worker; the next {@link ensure} starts new ones. */
  private stop(): void {
    for (const close of this.closers) close();
    for (const { worker } of this.members) void worker.terminate();
    this.members = [];
    this.closers.length = 0;
    Atomics.store(this.ctl, 1, 0);
  }

  /** Stop every worker; the set stays retired (its callers run on their own thread). */
  retire(): void {
    this.broken = true;
    this.stop();
  }
}
