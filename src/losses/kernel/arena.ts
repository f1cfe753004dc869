/**
 * A reusable shared-memory arena for everything worker threads touch during one call: the rows of
 * the input streams they are given, the row metadata, their outputs and events, the KL terms. It
 * is the only shared memory a job names, so no call leaves a worker holding memory: a worker's
 * idle isolate rarely collects garbage, and fresh SharedArrayBuffers sent per call stayed alive
 * there (measured: 6 GB resident after a benchmark's few hundred threaded calls). Fresh memory is expensive to first touch (about
 * 3 µs per 4 KiB page on this project's machine, 40 ms for the 53 MB a 256×8192 call's outputs
 * need, docs/performance.md#where-the-time-goes); inputs only live for the call, so their copies
 * reuse the arena's pages from call to call. Views are staggered like the outputs (./outputs.ts).
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

  /** Forget the arena (after a worker was retired mid-call, it may still read the old one). */
  drop(): void {
    this.buf = null;
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
