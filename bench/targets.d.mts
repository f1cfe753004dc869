// Types of bench/targets.mjs, for its test.

/** One of issue 12's targets judged from a bench document. */
export interface Verdict {
  readonly target: string;
  readonly measured: string;
  /** null: this run did not measure it. */
  readonly met: boolean | null;
  /** The floor pass's best ratio or fraction in this run; null where it bounds nothing. */
  readonly bound: string | null;
  /** Whether the bound passes the target (false: unreachable on this machine); null with no bound. */
  readonly reachable: boolean | null;
}

export function targetVerdicts(doc: unknown): Verdict[];

/** One of issue 36's targets (the fields loss and gradLogprobs) judged from a bench document. */
export interface FieldsVerdict {
  readonly target: string;
  readonly measured: string;
  /** null: this run did not measure it (no peer, no 256x8192 row). */
  readonly met: boolean | null;
  /** The floors' ratios to torch for a torch target (range over rows); null elsewhere. */
  readonly bound: string | null;
  /** Whether every row's floor passes the target (false: unreachable here); null with no bound. */
  readonly reachable: boolean | null;
}

export function fieldsVerdicts(doc: unknown): FieldsVerdict[];

/** Two threads' median over one thread's, at most, for "never slower" (same rounds). */
export const SAME_TIME_WITHIN: number;
