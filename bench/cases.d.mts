// Types of bench/cases.mjs, for the tests that rebuild the bench's batches.

/** Whether every row is full (`L_b = T`) or ragged (`L_b` uniform on {⌈0.42·T⌉..T}). */
export type Fill = "ragged" | "full";

/** A benchmark batch: `[B, T]` row-major streams, `[B]` advantages, the 0/1 mask. */
export interface BenchBatch {
  readonly B: number;
  readonly T: number;
  readonly fill: Fill;
  readonly seed: number;
  readonly valid: number;
  readonly lengths: Int32Array;
  readonly logprobs: Float64Array;
  readonly oldLogprobs: Float64Array;
  readonly refLogprobs: Float64Array;
  readonly advantages: Float64Array;
  readonly mask: Uint8Array;
}

/** The policyLoss inputs over the batch's typed arrays. */
export interface TypedInputs {
  readonly logprobs: { readonly rows: number; readonly cols: number; readonly data: Float64Array };
  readonly oldLogprobs: {
    readonly rows: number;
    readonly cols: number;
    readonly data: Float64Array;
  };
  readonly refLogprobs: {
    readonly rows: number;
    readonly cols: number;
    readonly data: Float64Array;
  };
  readonly advantages: Float64Array;
  readonly responseMask: {
    readonly rows: number;
    readonly cols: number;
    readonly data: Uint8Array;
  };
}

/** The policyLoss inputs as nested number[][] rows. */
export interface NestedInputs {
  readonly logprobs: number[][];
  readonly oldLogprobs: number[][];
  readonly refLogprobs: number[][];
  readonly advantages: number[];
  readonly responseMask: number[][];
}

export declare const RAGGED_MIN_FRACTION: number;
export declare function uniform(seed: number, stream: number, i: number): number;
export declare function parseSize(text: string): { B: number; T: number };
export declare function makeBatch(B: number, T: number, fill: Fill, seed?: number): BenchBatch;
export declare function typedInputs(batch: BenchBatch): TypedInputs;
export declare function nestedInputs(batch: BenchBatch): NestedInputs;
export declare function writeNpy(
  path: string,
  data: Float64Array | Uint8Array,
  shape: readonly number[],
): void;
export declare function writeBatchNpy(dir: string, batch: BenchBatch): void;
