// Types of bench/floor.mjs, for its test.
import type { BenchBatch } from "./cases.mjs";

/** The five [B, T] outputs the floor pass writes, named as the kernel's. */
export interface FloorOutputs {
  readonly grad: Float64Array;
  readonly objective: Float64Array;
  readonly ratio: Float64Array;
  readonly low: Uint8Array;
  readonly high: Uint8Array;
}

export function floorOutputs(n: number): FloorOutputs;
export function floorPass(batch: BenchBatch, out: FloorOutputs, fresh: boolean): number;
/** The registry's config fields a floor reads (getAlgorithm(name).loss). */
export interface FloorConfig {
  readonly clip: { readonly epsLow: number | null; readonly epsHigh: number } | null;
  readonly kl?: { readonly coef: number } | null;
}
export type FieldsFloor = (
  batch: BenchBatch,
  grad: Float64Array,
  cfg: FloorConfig,
  fresh?: boolean,
) => number;
export function floorPassGrad(
  batch: BenchBatch,
  grad: Float64Array,
  cfg?: FloorConfig,
  fresh?: boolean,
): number;
export const FIELDS_FLOORS: Readonly<Record<"dapo" | "grpo" | "gspo" | "cispo", FieldsFloor>>;
