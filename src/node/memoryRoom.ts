/**
 * The address space a process may still map under its limits (`ulimit -v`, `ulimit -d`), so that
 * a worker thread is started only where V8 can reserve its isolate: a worker whose isolate cannot
 * reserve memory aborts the whole process ("Fatal process OOM in Failed to reserve virtual memory
 * for CodeRange"), which no handler catches (docs/diagnostics/run.md#threads-under-memory-limits).
 * Linux reads /proc/self; elsewhere, or when it cannot be read, the room is unlimited. Node only.
 */
import { readFileSync } from "node:fs";

const MIB = 2 ** 20;

/**
 * The address space a worker of the pools reserves (measured on Node 20, x64: 365–400 MiB with
 * the 64 MiB code range the pools give their workers, 650–850 MiB with V8's default), rounded up.
 */
export const WORKER_BYTES: number = 512 * MIB;

/** The same for the read-ahead's worker (8 MiB code range, small heap: 270 MiB measured). */
export const SMALL_WORKER_BYTES: number = 320 * MIB;

/** Room kept for the calling thread beyond what it holds now (its heap's growth, a GC). */
export const RESERVE_BYTES: number = 256 * MIB;

/** A soft limit of /proc/self/limits in bytes (Infinity when unlimited or absent). */
function softLimit(limits: string, label: string): number {
  const m = new RegExp(`^${label}\\s+(\\S+)`, "m").exec(limits);
  if (m === null || m[1] === "unlimited") return Number.POSITIVE_INFINITY;
  const v = Number(m[1]);
  return Number.isFinite(v) ? v : Number.POSITIVE_INFINITY;
}

/** A `kB` field of /proc/self/status in bytes (0 when absent). */
function statusBytes(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  return m === null ? 0 : Number(m[1]) * 1024;
}

/**
 * Bytes this process may still map: the smaller of the address-space limit minus VmSize and the
 * data limit minus VmData; Infinity when neither is set or /proc cannot be read. @internal
 */
export function addressRoom(): number {
  let limits: string;
  let status: string;
  try {
    limits = readFileSync("/proc/self/limits", "utf8");
    status = readFileSync("/proc/self/status", "utf8");
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  const as = softLimit(limits, "Max address space") - statusBytes(status, "VmSize");
  const data = softLimit(limits, "Max data size") - statusBytes(status, "VmData");
  return Math.min(as, data);
}
