/**
 * The declarative shape of a CLI command: its option table (help text is generated from it) and
 * its action. Commands parse, call the library and render through report/; they hold no numerics.
 */

/** One option of a command: `--name <argument>` with a description and default. */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** Placeholder shown in help, e.g. `FILE` (string options only). */
  readonly argument?: string;
  readonly description: string;
  readonly default?: string;
  readonly short?: string;
  /**
   * A path option's direction: a file or folder the command reads (`input`: `-`, inline JSON and
   * names that are no file are not paths) or one it writes (`output`); docs/cli.md#writing-files.
   */
  readonly role?: "input" | "output";
}

/** Where a command writes: stdout carries only the result, stderr diagnostics. */
export interface CommandIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal (progress bars are drawn only then). */
  readonly stderrIsTTY?: boolean;
  /**
   * Read all of standard input, at most `maxBytes` bytes (`--batch -`, `--config -`); throws an
   * IoError for a terminal, more bytes than allowed, or a read error. Absent: no stdin.
   */
  readonly readStdin?: (maxBytes: number) => Uint8Array;
  /**
   * A notice for people (names read, tensors set aside): one line `polgrad <command>: …`,
   * written to stderr when the command ends without an error (docs/cli.md#output-streams);
   * absent, notices go to stderr at once.
   */
  readonly notice?: (text: string) => void;
  /** The columns of stdout when it is a terminal (text output and help are fitted to them). */
  readonly columns?: number;
  /**
   * The width a command's text output is fitted to (docs/cli.md#width): set by `main` for the
   * command (∞ under `--wide`, `--json` or `--markdown`); renderers that summarise a table that
   * would not fit read it. Absent: 100.
   */
  readonly width?: number;
}

/** Parsed options of one invocation. */
export type OptionValues = Readonly<Record<string, string | boolean | undefined>>;

/** A CLI command. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  /** Usage line after `polgrad `, e.g. `which [--batch FILE] [--json]`. */
  readonly usage: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /**
   * The positional arguments the command takes (e.g. `describe NAME`): at most this many, or per
   * invocation `{max, rule}` from the parsed options (`explain`: two with `--diff`, none without).
   * A further one is a usage error naming it (docs/cli.md#options); absent, none.
   */
  readonly positionals?: number | ((values: OptionValues) => PositionalRule);
  /**
   * Whether the arguments after `--` are handed to {@link Command.run} apart from the positionals
   * (`explain … -- --beta 0.1`: the framework's own arguments); otherwise they are positionals.
   */
  readonly passThrough?: boolean;
  /**
   * Which positionals are paths the command reads or writes, by index (the last entry covers the
   * rest; null: not a path).
   */
  readonly positionalRoles?: readonly ("input" | "output" | null)[];
  /** Run the command; resolve to the exit code (0 ok, 1 a check failed, 2 bad input). */
  readonly run: (
    values: OptionValues,
    positionals: readonly string[],
    io: CommandIO,
    passThrough?: readonly string[],
  ) => Promise<number>;
}

/** How many positional arguments an invocation takes, and the rule a stray one is told. */
export interface PositionalRule {
  readonly max: number;
  /** The `must be` rule of the error, e.g. `none without --diff (the config file is --config FILE)`. */
  readonly rule: string;
}
