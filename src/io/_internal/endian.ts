/**
 * Whether this machine stores numbers little-endian (every platform Node runs on today): the
 * readers and the writer take a file's bytes as typed arrays in one copy only then. Pure.
 * @internal
 */
export const LITTLE_ENDIAN_HOST: boolean = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
