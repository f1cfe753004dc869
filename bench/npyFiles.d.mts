// Types of bench/npyFiles.mjs, for the tests (test/io/_writers.ts).

/** The dtypes these writers emit, by numpy descr. */
export type NpyDescr = "<f8" | "<f4" | "|u1" | "|b1" | "<i8";

/** One array of an `.npz` archive. */
export interface NpyEntry {
  readonly descr: NpyDescr;
  readonly shape: readonly number[];
  readonly data: ArrayLike<number>;
}

export function npyBytes(
  descr: NpyDescr,
  shape: readonly number[],
  data: ArrayLike<number>,
): Uint8Array;
export function npzBytes(arrays: Readonly<Record<string, NpyEntry>>, deflate?: boolean): Uint8Array;
