/**
 * A reusable shared-memory arena for everything worker threads touch during one call: the rows of
 * the input streams they are given, the row metadata, their outputs and events, the KL terms. It
 * is the only shared memory a job names, so no call leaves a worker holding memory: a worker's
 * idle isolate rarely collects garbage, and fresh SharedArrayBuffers sent per call stayed alive
 * there (measured: 6 GB resident after a benchmark's few hundred threaded calls). Reuse also
 * spares first touches of fresh memory (about 3 µs per 4 KiB page on this project's machine,
 * docs/performance.md#where-the-time-goes). After a while without calls the arena is let go
 * ({@link SharedArena.releaseWhenIdle}) and the pools stop their idle workers. Views are staggered
 * like the outputs (./outputs.ts).
 * @internal
 */
export class SharedArena {
  private buf: SharedArrayBuffer | null = null;
  private off = 0;

  /** Start a call needing at most `bytes` (views plus staggers); grows the arena when needed. */
  begin(bytes: number): void {
    if (this.buf === null || this.buf.byteLength < bytes) this.buf = new SharedArrayBuffer(bytes);
    this.off = 0;
  }

  private idle: ReturnType<typeof setTimeout> | null = null;

  /** Forget the arena (after a worker was retired mid-call, it may still read the old one). */
  drop(): void {
    this.buf = null;
  }

  /**
   * Call after each use: the arena's memory is let go after `ms` without another call (the
   * worker pools stop their idle workers after as long, so nothing holds it). The timer is
   * unref'd where the platform has that (Node), so it never keeps a process alive.
   */
  releaseWhenIdle(ms: number): void {
    if (this.idle !== null) clearTimeout(this.idle);
    const t = setTimeout(() => this.drop(), ms);
    (t as { unref?: () => void }).unref?.();
    this.idle = t;
  }

  /** Bytes to ask {@link begin} for, for views of these byte lengths. */
  static bytesFor(lengths: readonly number[]): number {
    return lengths.reduce((s, n) => s + align(n) + STAGGER, 0);
  }

  f64(n: number): Float64Array {
    const v = new Float64Array(this.buf as SharedArrayBuffer, this.off, n);
    this.off += align(n * 8) + STAGGER;
    return v;
  }

  i32(n: number): Int32Array {
    const v = new Int32Array(this.buf as SharedArrayBuffer, this.off, n);
    this.off += align(n * 4) + STAGGER;
    return v;
  }

  u8(n: number): Uint8Array {
    const v = new Uint8Array(this.buf as SharedArrayBuffer, this.off, n);
    this.off += align(n) + STAGGER;
    return v;
  }
}

/** Bytes between views (a multiple of 8, not of 64). */
const STAGGER = 520;

function align(bytes: number): number {
  return Math.ceil(bytes / 8) * 8;
}
