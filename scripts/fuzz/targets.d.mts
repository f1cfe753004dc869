/** Types of targets.mjs (the fuzz targets shared by test/fuzz/ and scripts/fuzz.mjs). */
export type Outcome =
  | { readonly kind: "result" }
  | { readonly kind: "typed"; readonly code: string }
  | { readonly kind: "other"; readonly detail: string };

export interface FuzzTarget<I = unknown> {
  readonly name: string;
  readonly seeds: readonly I[];
  mutate(rand: () => number, input: I): I;
  size(input: I): number;
  run(input: I): Promise<Outcome>;
}

export { MAX_INPUT_BYTES, MUTATIONS, mutateBytes, prng } from "./mutate.mjs";
export declare function inputOf<I>(target: FuzzTarget<I>, seed: number, ti: number, i: number): I;
export declare function nonFiniteNumbers(value: unknown): string[];
export declare function makeTargets(
  api: Record<string, unknown>,
  where: { readonly root: string; readonly scratch: string },
): FuzzTarget[];
export declare function classify(
  api: Record<string, unknown>,
  outcome: { readonly threw: boolean; readonly error?: unknown; readonly violations?: string[] },
): Outcome;
