/**
 * CRC-32C (Castagnoli) and TFRecord's masked form, for TensorBoard event files
 * (docs/diagnostics/logs.md#dependencies says why it is written here). Pure: no `node:` import.
 * @internal
 */

/** The table of the reflected polynomial 0x82F63B78, one byte at a time. */
const CRC_TABLE: Uint32Array = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32C of `bytes[start, end)`. @internal */
export function crc32c(bytes: Uint8Array, start = 0, end: number = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++)
    c = (CRC_TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC-32C of `bytes[start, end)`: ((crc >>> 15) | (crc << 17)) + 0xa282ead8. @internal */
export function maskedCrc32c(bytes: Uint8Array, start = 0, end: number = bytes.length): number {
  const c = crc32c(bytes, start, end);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
