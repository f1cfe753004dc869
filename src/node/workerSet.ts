/**
 * A set of persistent worker threads driven synchronously, the part both pools share
 * (./threadPool.ts for policyLoss's row blocks, ./runPool.ts for a run's shards): start workers on
 * first use (unref'd, so they never keep a process alive), wait for each to report ready through
 * the shared control word, and retire the set for good when a worker cannot start, errs or dies.
 * The control array's word 0 counts the jobs done, word 1 the workers ready. Under a memory limit
 * a worker is started only with room for it (./memoryRoom.ts), and a worker that dies while the
 * caller waits is seen at once (./threadLife.ts). Node only.
 */
import { type ResourceLimits, type TransferListItem, Worker } from "node:worker_threads";
import { addressRoom, RESERVE_BYTES, WORKER_BYTES } from "./memoryRoom.js";
import { threadAlive } from "./threadLife.js";

/** How long a set may take to start (module loading in each worker). */
const START_MS = 10_000;

/** How often a waiting caller looks whether its workers' threads still run. */
export const POLL_MS = 100;

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

/**
 * The V8 limits of a pool's worker: a 64 MiB code range (V8's default reserves 512 MiB of address
 * space per isolate; a worker's code is a few MiB), and under a memory limit an old generation
 * that fits the room left, so that a worker's heap runs out as a catchable worker error
 * (ERR_WORKER_OUT_OF_MEMORY, the worker alone ends) before the process's address space does
 * (a fatal abort). @internal
 */
export function workerLimits(room: number, starting: number): ResourceLimits {
  if (room === Number.POSITIVE_INFINITY) return { codeRangeSizeMb: 64 };
  const share = (room - RESERVE_BYTES - starting * WORKER_BYTES) / (starting + 1);
  return { codeRangeSizeMb: 64, maxOldGenerationSizeMb: Math.max(64, Math.floor(share / 2 ** 20)) };
}

/** Workers of one entry, each with what the pool keeps beside it (`T`, e.g. a message port). */
export class WorkerSet<T> {
  /** [0]: jobs done in the current call; [1]: workers ready. */
  readonly ctl: Int32Array = new Int32Array(new SharedArrayBuffer(8));
  private members: { readonly worker: Worker; readonly extra: T; readonly life: Int32Array }[] = [];
  private broken = false;

  /**
   * @param url - The worker entry (it calls announceThread of ./threadLife.ts with `workerData.life`).
   * @param spawn - Builds a worker's data and transfer list and what the pool keeps for it; an
   *   object `workerData` gets `life`, the slot the worker announces its thread in.
   * @param limits - The workers' V8 limits, instead of {@link workerLimits} (tests).
   */
  constructor(
    private readonly url: URL,
    private readonly spawn: (ctl: Int32Array) => {
      readonly workerData: unknown;
      readonly transferList: readonly TransferListItem[];
      readonly extra: T;
      readonly close?: () => void;
    },
    private readonly limits: ResourceLimits | undefined = undefined,
  ) {}

  private readonly closers: (() => void)[] = [];
  private idle: ReturnType<typeof setTimeout> | null = null;

  /** The members, once {@link ensure} succeeded. */
  get all(): readonly { readonly worker: Worker; readonly extra: T }[] {
    return this.members;
  }

  /**
   * Start workers until there are `n` and all are ready; false when the set cannot be had: it
   * has retired, a worker could not start (the set retires), or the process's memory limits
   * leave no room for the new ones (nothing is started; a later call may find room).
   */
  ensure(n: number): boolean {
    if (this.broken) return false;
    const starting = n - this.members.length;
    const room = starting > 0 ? addressRoom() : Number.POSITIVE_INFINITY;
    if (starting > 0 && room < starting * WORKER_BYTES + RESERVE_BYTES) return false;
    const resourceLimits = this.limits ?? workerLimits(room, starting);
    try {
      for (let i = this.members.length; i < n; i++) {
        const s = this.spawn(this.ctl);
        const life = new Int32Array(new SharedArrayBuffer(4));
        const workerData =
          typeof s.workerData === "object" && s.workerData !== null
            ? { ...(s.workerData as object), life }
            : s.workerData;
        const options = { workerData, transferList: [...s.transferList], resourceLimits };
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
        this.members.push({ worker, extra: s.extra, life });
        if (s.close !== undefined) this.closers.push(s.close);
      }
    } catch {
      this.retire();
      return false;
    }
    return this.waitFor(1, n, START_MS);
  }

  /** Whether member `j`'s thread still runs (./threadLife.ts; true where that is unknown). */
  alive(j: number): boolean {
    const m = this.members[j];
    return m !== undefined && threadAlive(m.life);
  }

  /**
   * Sleep until control word `word` reaches `n`; false (and the set retired) when a member's
   * thread has died, or when the word has not reached `n` after `ms` without progress of
   * `progress` (when given) or in all.
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
      if (left <= 0 || this.members.some((m) => !threadAlive(m.life))) {
        this.retire();
        return false;
      }
      Atomics.wait(this.ctl, word, now, Math.min(left, POLL_MS));
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
