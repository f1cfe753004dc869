/**
 * `polgrad` command-line entry: dispatch to one command, parse its options with node:util
 * parseArgs (strict), and map errors to stderr with exit codes (docs/cli.md): 0 ok, 1 a check
 * failed, 2 bad usage or input, 70 internal error. stdout carries only the result.
 */
import { parseArgs } from "node:util";
import { closestNames } from "../core/names.js";
import { PolgradError, UsageError } from "../errors.js";
import type { Command, CommandIO, OptionValues } from "./command.js";
import { algorithmsCommand } from "./commands/algorithms.js";
import { contractCommand } from "./commands/contract.js";
import { contractsCommand } from "./commands/contracts.js";
import { demoRunCommand } from "./commands/demoRun.js";
import { describeCommand } from "./commands/describe.js";
import { deviationsCommand } from "./commands/deviations.js";
import { diagnoseCommand } from "./commands/diagnose.js";
import { driftCommand } from "./commands/drift.js";
import { frameworksCommand } from "./commands/frameworks.js";
import { lossCommand } from "./commands/loss.js";
import { verifyCommand } from "./commands/verify.js";
import { whichCommand } from "./commands/which.js";
import { renderError } from "./output.js";

/** Every command, in help order. */
export const COMMANDS: readonly Command[] = [
  whichCommand,
  lossCommand,
  verifyCommand,
  diagnoseCommand,
  demoRunCommand,
  frameworksCommand,
  deviationsCommand,
  driftCommand,
  contractCommand,
  contractsCommand,
  algorithmsCommand,
  describeCommand,
];

const VERSION = "0.1.0";

/** Render the help text of one command from its option table. */
export function commandHelp(cmd: Command): string {
  const rows = Object.entries(cmd.options).map(([name, o]) => {
    const flag = `--${name}${o.type === "string" ? ` <${o.argument ?? "value"}>` : ""}`;
    const def = o.default !== undefined ? ` (default: ${o.default})` : "";
    return [flag, `${o.description}${def}`] as const;
  });
  rows.push(["--help", "show this help"]);
  const w = Math.max(...rows.map(([f]) => f.length));
  return `Usage: polgrad ${cmd.usage}\n\n${cmd.summary}\n\nOptions:\n${rows.map(([f, d]) => `  ${f.padEnd(w)}  ${d}`).join("\n")}\n`;
}

function mainHelp(): string {
  const w = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: polgrad <command> [options]\n\nExact semantics of LLM policy-gradient losses, with closed-form float64 gradients.\n\nCommands:\n${COMMANDS.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`).join("\n")}\n\nRun 'polgrad <command> --help' for a command's options. Exit codes: 0 ok, 1 a check failed, 2 bad usage or input.\n`;
}

const defaultIO: CommandIO = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  stderrIsTTY: process.stderr.isTTY === true,
};

/**
 * Run the CLI on `argv` (without `node` and the script path) and resolve to the exit code.
 *
 * @param argv - The command-line arguments.
 * @param io - Where to write (defaults to process stdout/stderr).
 * @returns The exit code: 0 ok, 1 a check failed, 2 bad usage or input, 70 internal error.
 * @enforcedBy test/cli/cli.test.ts > polgrad cli > rejects: an unknown command exits 2 with a suggestion and empty stdout
 * @since 0.1.0
 */
export async function main(argv: readonly string[], io: CommandIO = defaultIO): Promise<number> {
  const [name, ...rest] = argv;
  const json = rest.includes("--json");
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(mainHelp());
    return 0;
  }
  if (name === "--version" || name === "-v") {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  try {
    if (cmd === undefined) {
      const near = closestNames(
        name,
        COMMANDS.map((c) => c.name),
      );
      const hint = near.length > 0 ? ` (did you mean '${near[0]}'?)` : "";
      throw new UsageError(
        "polgrad",
        "command",
        `polgrad: command must be one of ${COMMANDS.map((c) => c.name).join(", ")}; got '${name}'${hint}`,
      );
    }
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout(commandHelp(cmd));
      return 0;
    }
    let values: OptionValues;
    let positionals: string[];
    try {
      const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
      for (const [k, o] of Object.entries(cmd.options))
        options[k] = o.short ? { type: o.type, short: o.short } : { type: o.type };
      const parsed = parseArgs({
        args: [...rest],
        options,
        strict: true,
        allowPositionals: (cmd.positionals ?? 0) > 0,
      });
      values = parsed.values as OptionValues;
      positionals = parsed.positionals;
    } catch (e) {
      const msg =
        e instanceof Error
          ? e.message.replace(/\. To specify a positional argument.*$/s, "")
          : String(e);
      throw new UsageError(`polgrad ${cmd.name}`, undefined, `polgrad ${cmd.name}: ${msg}`);
    }
    return await cmd.run(values, positionals, io);
  } catch (err) {
    const hints: string[] = [];
    if (err instanceof UsageError)
      hints.push(cmd !== undefined ? `polgrad ${cmd.name} --help` : "polgrad --help");
    if (err instanceof PolgradError && err.arg === "config.normLen") {
      hints.push(
        "set the generation budget with --norm-len N (dr_grpo ships without one on purpose)",
      );
    }
    io.stderr(renderError(err, json, hints));
    return err instanceof PolgradError ? 2 : 70;
  }
}
