/**
 * Whether a worker thread still runs, asked without the event loop: the pools wait for their
 * workers in Atomics.wait, where no 'error' or 'exit' event arrives, so a worker that died (out
 * of memory, terminated) would only be noticed by a time budget. Each worker announces its
 * kernel thread id (Linux: /proc/thread-self), and the caller checks /proc/self/task/<id>.
 * Where there is no /proc the id is 0 and a worker counts as alive (the time budget decides).
 * Node only.
 */
import { existsSync, readlinkSync } from "node:fs";

/** The calling thread's kernel id, or 0 where unknown. @internal */
export function kernelThreadId(): number {
  try {
    const link = readlinkSync("/proc/thread-self");
    const tid = Number(link.slice(link.lastIndexOf("/") + 1));
    return Number.isSafeInteger(tid) && tid > 0 ? tid : 0;
  } catch {
    return 0;
  }
}

/**
 * Announce this thread in `slot` (a worker's first act; `slot` may be absent for a caller that
 * gave none). @internal
 */
export function announceThread(slot: Int32Array | undefined): void {
  if (slot !== undefined) Atomics.store(slot, 0, kernelThreadId());
}

/**
 * Whether the thread announced in `slot` runs: true until it announced, and where ids are
 * unknown. (A thread id is reused only after the kernel's pid space wraps, millions of ids
 * later.) @internal
 */
export function threadAlive(slot: Int32Array): boolean {
  const tid = Atomics.load(slot, 0);
  return tid <= 0 || existsSync(`/proc/self/task/${tid}`);
}
