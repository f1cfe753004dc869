/** Types of contract.mjs (the CLI contract checker). */
export declare const MAX_LINE: number;
export declare function contractViolations(
  run: {
    readonly args: readonly string[];
    readonly code: number | null;
    readonly stdout: string;
    readonly stderr: string;
  },
  expected?: 0 | 1 | 2,
): string[];
