// Types of bench/hostileCases.mjs, for the test that checks its files are the attacks it names.

/** An npz member: [tensor name, numpy descr, bytes per element, data bytes]. */
export type BombMember = readonly [string, string, number, number];

/** The v1.0 `.npy` header of a 1-d array of `count` elements of `descr`. */
export function npyHeader(descr: string, count: number): Uint8Array;
/** An `.npz` of deflated all-zero members (plus a stored u1 `pad.npy` of `padBytes`); its size. */
export function npzBomb(
  path: string,
  members: readonly BombMember[],
  padBytes?: number,
): Promise<number>;
/** A torch.save archive: one F64 element expanded to `elements`, beside `padBytes` of F64 zeros. */
export function ptExpand(path: string, elements: number, padBytes: number): number;
/** A safetensors file whose header lists `n` empty F32 tensors; its size. */
export function stEntries(path: string, n: number): number;
/** A JSON batch of `n` empty arrays; its size. */
export function jsonKeys(path: string, n: number): number;

/** One case of the hostile-file bench. */
export interface HostileCase {
  readonly id: string;
  readonly what: string;
  readonly file: string;
  readonly inside?: boolean;
  readonly make: (path: string) => number | Promise<number>;
}

/** The cases and the files just inside the npz and pt bounds. */
export const HOSTILE_CASES: readonly HostileCase[];
