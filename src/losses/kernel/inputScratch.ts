/**
 * Reused memory for the streams policyLoss converts (nested `number[][]` rows, booleans, other
 * typed arrays) into the float64 and byte arrays the kernel reads (docs/performance.md#nested-input).
 * A converted stream lives only during the call that converted it (no result refers to it), so the
 * next call can write its own over it: that spares first touches of fresh memory, about 3 µs per
 * 4 KiB page on this project's machine, 25 ms of the 38 ms it took to convert two 256×8192 streams.
 *
 * One buffer, views carved in order and staggered like the outputs (./outputs.ts: streams read in
 * the same loop must not share their low address bits). A call that needs more than the buffer
 * holds gets a larger one (views already handed out keep the old one alive until the call ends). A
 * call made while another is converting or running (a getter of an input, a callback, calling
 * policyLoss again) gets fresh memory instead. After a while without calls the buffer is let go.
 * Pure: no `node:` import (the timer is unref'd where the platform has that).
 * @internal
 */

/** Bytes between views (a multiple of 8, not of 64). */
const STAGGER = 520;

/** The buffer is let go after this long without a call that converts. */
const IDLE_MS = 30_000;

export class InputScratch {
  private buf: ArrayBuffer | null = null;
  private off = 0;
  private depth = 0;
  private idle: ReturnType<typeof setTimeout> | null = null;

  /** Start a call: its conversions share the buffer unless a call is already under way. */
  enter(): void {
    this.depth++;
    if (this.depth === 1) this.off = 0;
  }

  /** End a call (in a finally): the buffer is let go after {@link IDLE_MS} without another. */
  exit(): void {
    this.depth--;
    if (this.depth > 0 || this.buf === null) return;
    if (this.idle !== null) clearTimeout(this.idle);
    const t = setTimeout(() => {
      this.buf = null;
      this.idle = null;
    }, IDLE_MS);
    (t as { unref?: () => void }).unref?.();
    this.idle = t;
  }

  /** A float64 array of n elements (contents arbitrary: the caller writes every element). */
  readonly f64 = (n: number): Float64Array => {
    const at = this.take(n * 8);
    return at === null ? new Float64Array(n) : new Float64Array(this.buf as ArrayBuffer, at, n);
  };

  /** A byte array of n elements (contents arbitrary: the caller writes every element). */
  readonly u8 = (n: number): Uint8Array => {
    const at = this.take(n);
    return at === null ? new Uint8Array(n) : new Uint8Array(this.buf as ArrayBuffer, at, n);
  };

  /** The offset of `bytes` more in the buffer, or null for fresh memory (a nested call). */
  private take(bytes: number): number | null {
    if (this.depth !== 1) return null;
    const need = this.off + Math.ceil(bytes / 8) * 8 + STAGGER;
    if (this.buf === null || this.buf.byteLength < need) {
      // Views already handed out this call keep the old buffer; later calls reuse the new one.
      this.buf = new ArrayBuffer(Math.max(need, this.buf === null ? 0 : 2 * this.buf.byteLength));
      this.off = 0;
      return this.take(bytes);
    }
    const at = this.off;
    this.off = need;
    return at;
  }
}
