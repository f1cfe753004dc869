/**
 * Give the pure core Node's native helpers in this process: the zip reader's CRC-32 becomes
 * zlib.crc32 (the same function, about 6× the JavaScript loop) and its inflate of a whole member
 * zlib.inflateRawSync bounded by the member's declared size (docs/performance.md#reading-runs).
 * Imported for its effect by ./registerThreads.ts (the root entry and the CLI) and by the run
 * workers (./runWorker.ts), which read step files too. Node only.
 */
import { constants, crc32, inflateRawSync } from "node:zlib";
import { setCrc32, setInflateRaw } from "../io/_internal/zip.js";

/** zlib's CRC-32 of a byte array. @internal */
export const nativeCrc32 = (bytes: Uint8Array): number => crc32(bytes);

/**
 * zlib's raw inflate of `data`, stopped at maxOutputLength (ERR_BUFFER_TOO_LARGE): null when
 * it would exceed `size`, so a member never inflates past its declared size, as fflate's
 * bounded steps guarantee. Throws on invalid deflate data. @internal
 */
export function nativeInflateRaw(data: Uint8Array, size: number, head?: number): Uint8Array | null {
  try {
    if (head === undefined) {
      const b = inflateRawSync(data, { maxOutputLength: Math.max(1, size) });
      return new Uint8Array(b.buffer, b.byteOffset, b.length);
    }
    // A head: inflate a growing prefix of the stream (a sync flush ends a prefix without error)
    // until the head is out.
    for (let k = Math.min(1024, data.length); ; k = Math.min(4 * k, data.length)) {
      const b = inflateRawSync(data.subarray(0, k), {
        maxOutputLength: Math.max(1, size),
        finishFlush: constants.Z_SYNC_FLUSH,
      });
      if (b.length >= head || k === data.length)
        return new Uint8Array(b.buffer, b.byteOffset, Math.min(head, b.length));
    }
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") return null;
    throw e;
  }
}

setCrc32(nativeCrc32);
setInflateRaw(nativeInflateRaw);
