// Types of bench/targets.mjs, for its test.

/** One of issue 12's targets judged from a bench document. */
export interface Verdict {
  readonly target: string;
  readonly measured: string;
  /** null: this run did not measure it. */
  readonly met: boolean | null;
}

export function targetVerdicts(doc: unknown): Verdict[];
