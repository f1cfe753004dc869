// Types of bench/_timing.mjs, for its test.

export function timeSync(fn: () => unknown): number;
export function median(xs: readonly number[]): number;

/** One arm of an interleaved measurement: its name and a run returning seconds. */
export interface Arm {
  readonly name: string;
  readonly run: () => number | Promise<number>;
}

export function interleave(
  rounds: number,
  arms: readonly Arm[],
  warmup?: number,
): Promise<Record<string, { readonly times: number[]; readonly median: number }>>;
