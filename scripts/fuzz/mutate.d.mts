/** Types of mutate.mjs (the fuzzer's PRNG and mutation strategies). */
export declare function prng(seed: number): () => number;
export declare function pick<T>(rand: () => number, xs: readonly T[]): T;
export declare function int(rand: () => number, n: number): number;
export declare const MAX_INPUT_BYTES: number;
/** One mutation strategy: bytes to bytes (`other`, a corpus entry, is used by splice). */
export type Mutation = (rand: () => number, bytes: Uint8Array, other?: Uint8Array) => Uint8Array;
export declare const MUTATIONS: Readonly<Record<string, Mutation>>;
export declare function mutateBytes(
  rand: () => number,
  bytes: Uint8Array,
  corpus: readonly Uint8Array[],
): Uint8Array;
