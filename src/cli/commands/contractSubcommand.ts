/**
 * One subcommand of `polgrad contract` (check, reduce, …): its options (merged into the command's
 * option table, so help and the CLI contract test see them), its usage line and its action. Each
 * subcommand lives in its own file and is registered once in ./contract.ts.
 */
import type { CommandIO, OptionSpec, OptionValues } from "../command.js";

/** `--contract` and `--vendored`, shared by `contract check` and `contract table`. */
export const ADAPTER_CONTRACT_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  contract: {
    type: "string",
    argument: "NAME|FILE",
    description:
      "check, table: adapter contract, a built-in (papo-g-adapter) or a contract file (docs/schemas/adapter-contract.schema.json)",
  },
  vendored: {
    type: "string",
    argument: "FILE",
    description:
      "check, table: the adapter's vendored copy of the contract's pinned file (a changed copy fails the check)",
  },
};

/** A `polgrad contract <name>` subcommand. */
export interface ContractSubcommand {
  /** The word after `contract`, e.g. `check`. */
  readonly name: string;
  /** Usage line after `polgrad `, e.g. `contract check --checkout PATH [--json]`. */
  readonly usage: string;
  /** The options only this subcommand takes (`--json` is shared and need not be listed). */
  readonly options: Readonly<Record<string, OptionSpec>>;
  /**
   * Run with the parsed options and the positionals after the subcommand word; resolve to the
   * exit code (0 ok, 1 the check failed; errors are exit 2 in main).
   */
  readonly run: (values: OptionValues, args: readonly string[], io: CommandIO) => Promise<number>;
}
