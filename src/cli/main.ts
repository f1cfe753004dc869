/**
 * `polgrad` command-line entry: dispatch to one command, parse its options (node:util parseArgs
 * tokens, checked here so that every mistake is one `must be … ; got …` line), and map errors to
 * stderr with exit codes (docs/cli.md): 0 ok, 1 a check failed, 2 bad usage or input, 70
 * internal error, 141 the reader closed the pipe. stdout carries only the result.
 */

import { parseArgs } from "node:util";
import { fmtValue, safeText } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { fail, PolgradError, UsageError } from "../errors.js";
import { guardInputs } from "../io/_internal/inputs.js";
import { cleanUpOnSignals } from "../io/_internal/writeFile.js";
import { recoverArgv } from "./argv.js";
import type { Command, CommandIO, OptionValues } from "./command.js";
import { algorithmsCommand } from "./commands/algorithms.js";
import { contractCommand } from "./commands/contract.js";
import { contractsCommand } from "./commands/contracts.js";
import { coverageCommand } from "./commands/coverage.js";
import { demoRunCommand } from "./commands/demoRun.js";
import { describeCommand } from "./commands/describe.js";
import { deviationsCommand } from "./commands/deviations.js";
import { diagnoseCommand } from "./commands/diagnose.js";
import { driftCommand } from "./commands/drift.js";
import { explainCommand } from "./commands/explain.js";
import { frameworksCommand } from "./commands/frameworks.js";
import { historyCommand } from "./commands/history.js";
import { lossCommand } from "./commands/loss.js";
import { playgroundCommand } from "./commands/playground.js";
import { reportCommand } from "./commands/report.js";
import { vectorsCommand } from "./commands/vectors.js";
import { verifyCommand } from "./commands/verify.js";
import { whichCommand } from "./commands/which.js";
import { processIO, readProcessStdin, renderError } from "./output.js";
import { checkOutputsApart } from "./paths.js";
import { DEFAULT_TEXT_WIDTH, fitText, textWidth } from "./textWidth.js";

/** Every command, in help order. */
export const COMMANDS: readonly Command[] = [
  whichCommand,
  lossCommand,
  verifyCommand,
  diagnoseCommand,
  reportCommand,
  playgroundCommand,
  demoRunCommand,
  explainCommand,
  historyCommand,
  frameworksCommand,
  deviationsCommand,
  vectorsCommand,
  driftCommand,
  contractCommand,
  contractsCommand,
  algorithmsCommand,
  describeCommand,
  coverageCommand,
];

const VERSION = "0.1.0";

/** Render the help text of one command from its option table. */
export function commandHelp(cmd: Command, width: number = DEFAULT_TEXT_WIDTH): string {
  const rows = Object.entries(cmd.options).map(([name, o]) => {
    const flag = `--${name}${o.type === "string" ? ` <${o.argument ?? "value"}>` : ""}`;
    const def = o.default !== undefined ? ` (default: ${o.default})` : "";
    return [flag, `${o.description}${def}`] as const;
  });
  rows.push(["--wide", "do not fit text output to the terminal (or to 100 columns)"]);
  rows.push(["--help", "show this help"]);
  return `${wrapUsage(`Usage: polgrad ${cmd.usage}`, width)}\n\n${fitText(cmd.summary, width)}\n\nOptions:\n${twoColumns(rows, width)}\n`;
}

/**
 * A usage line wrapped between its top-level groups (`[--only D,...]` is never cut inside its
 * brackets), continuation lines indented two columns; a group longer than the width is left to
 * fitText. Each line of a multi-line usage is wrapped on its own.
 */
function wrapUsage(usage: string, width: number): string {
  if (!Number.isFinite(width)) return usage;
  return usage
    .split("\n")
    .map((line) => {
      if (line.length <= width) return line;
      // Top-level groups: split at spaces outside brackets and parentheses (the indent kept).
      const lead = /^ */.exec(line)?.[0] ?? "";
      const groups: string[] = [];
      let depth = 0;
      let start = lead.length;
      for (let i = 0; i < line.length; i++) {
        const c = line[i];
        if (c === "[" || c === "(") depth++;
        else if (c === "]" || c === ")") depth = Math.max(0, depth - 1);
        else if (c === " " && depth === 0) {
          groups.push(line.slice(start, i));
          start = i + 1;
        }
      }
      groups.push(line.slice(start));
      const lines: string[] = [];
      let cur = "";
      for (const g of groups.filter((x) => x !== "")) {
        const next = cur === "" ? g : `${cur} ${g}`;
        if (cur !== "" && `${lines.length === 0 ? lead : `${lead}  `}${next}`.length > width) {
          lines.push(cur);
          cur = g;
        } else cur = next;
      }
      lines.push(cur);
      return fitText(
        lines.map((l, i) => (i === 0 ? `${lead}${l}` : `${lead}  ${l}`)).join("\n"),
        width,
      );
    })
    .join("\n");
}

/**
 * Rows of a help list: the names padded to one column, each description wrapped to `width` and
 * its continuation lines aligned under the description (or, where that leaves under 30 columns,
 * each description on the lines below its name).
 */
function twoColumns(rows: readonly (readonly [string, string])[], width: number): string {
  const w = Math.max(...rows.map(([f]) => f.length));
  const at = 2 + w + 2;
  const room = width - at;
  return rows
    .map(([f, d]) => {
      if (!Number.isFinite(width) || room >= 30) {
        const body = fitText(d, Number.isFinite(width) ? room : width, 0).split("\n");
        return [
          `  ${f.padEnd(w)}  ${body[0]}`,
          ...body.slice(1).map((l) => `${" ".repeat(at)}${l}`),
        ].join("\n");
      }
      return [
        `  ${f}`,
        ...fitText(d, width - 6, 0)
          .split("\n")
          .map((l) => `      ${l}`),
      ].join("\n");
    })
    .join("\n");
}

function mainHelp(width: number = DEFAULT_TEXT_WIDTH): string {
  return `Usage: polgrad <command> [options]\n\n${fitText("Exact semantics of LLM policy-gradient losses, with closed-form float64 gradients.", width)}\n\nCommands:\n${twoColumns(
    COMMANDS.map((c) => [c.name, c.summary] as const),
    width,
  )}\n\n${fitText("Run 'polgrad <command> --help' for a command's options; --wide keeps any command's text output unwrapped. Exit codes: 0 ok, 1 a check failed, 2 bad usage or input.", width)}\n`;
}

const defaultIO: CommandIO = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  stderrIsTTY: process.stderr.isTTY === true,
  ...(process.stdout.isTTY === true ? { columns: process.stdout.columns } : {}),
  readStdin: readProcessStdin,
};

/** Longest name a did-you-mean suggestion is computed for (edit distance is quadratic). */
const MAX_SUGGEST_LENGTH = 64;

/** A value that reads as a number (`-1`, `-0.5`, `-1e3`, `-Infinity`), not as an option. */
const NEGATIVE_NUMBER = /^-(\d|\.\d|Infinity$|NaN$)/;

/**
 * Parse a command's arguments against its option table. Every option is given at most once;
 * a string option takes the next argument as its value unless that looks like an option (a
 * negative number is a value: `--cases -1`); a boolean option takes no value; at most as many
 * positionals as the command takes (the first stray one named), and for a pass-through command
 * the arguments after `--` apart. Every failure is a {@link UsageError} naming the option.
 */
function parseCommandArgs(
  cmd: Command,
  rest: readonly string[],
): { values: OptionValues; positionals: string[]; passThrough: string[] } {
  const fn = `polgrad ${cmd.name}`;
  const usageError = (arg: string, rule: string, got: string): UsageError =>
    fail(UsageError, fn, arg, rule, got);
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [k, o] of Object.entries(cmd.options))
    options[k] = o.short ? { type: o.type, short: o.short } : { type: o.type };
  const { tokens } = parseArgs({
    args: [...rest],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const terminator = tokens.find((t) => t.kind === "option-terminator")?.index;
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const passThrough: string[] = [];
  for (const tok of tokens) {
    if (tok.kind === "option-terminator") continue;
    if (tok.kind === "positional") {
      if (cmd.passThrough === true && tok.index > (terminator ?? Number.POSITIVE_INFINITY))
        passThrough.push(tok.value);
      else positionals.push(tok.value);
      continue;
    }
    const spec = cmd.options[tok.name];
    const flag = `--${tok.name}`;
    if (spec === undefined || !Object.hasOwn(cmd.options, tok.name)) {
      const raw = tok.rawName;
      const near =
        raw.length <= MAX_SUGGEST_LENGTH
          ? closestNames(raw.replace(/^-+/, ""), Object.keys(cmd.options)).map((n) => `--${n}`)
          : [];
      throw usageError(
        "option",
        `one of ${[...Object.keys(cmd.options).map((n) => `--${n}`), "--help"].join(", ")}`,
        `${fmtValue(raw)}${didYouMean(near)}`,
      );
    }
    if (Object.hasOwn(values, tok.name))
      throw usageError(
        flag,
        "given at most once",
        `it ${tokens.filter((t) => t.kind === "option" && t.name === tok.name).length} times`,
      );
    if (spec.type === "boolean") {
      if (tok.value !== undefined)
        throw usageError(flag, "given without a value", `${flag}=${fmtValue(tok.value)}`);
      values[tok.name] = true;
      continue;
    }
    const placeholder = spec.argument ?? "value";
    if (tok.value === undefined) throw usageError(flag, `followed by ${placeholder}`, "nothing");
    // "-" alone is a value: standard input (--batch -, --config -).
    if (
      !tok.inlineValue &&
      tok.value !== "-" &&
      tok.value.startsWith("-") &&
      !NEGATIVE_NUMBER.test(tok.value)
    )
      throw usageError(
        flag,
        `followed by ${placeholder} (write ${flag}=VALUE for a value that starts with '-')`,
        `the option ${fmtValue(tok.value)}`,
      );
    values[tok.name] = tok.value;
  }
  // Positionals are counted once the options are known (explain takes two with --diff, none
  // without); the first one past the count is named, never dropped.
  const p = cmd.positionals ?? 0;
  const { max, rule } =
    typeof p === "number"
      ? { max: p, rule: p === 0 ? "options only (see --help)" : `at most ${p} (see --help)` }
      : p(values);
  const stray = positionals[max];
  if (stray !== undefined)
    throw usageError("arguments", rule, `the stray argument ${fmtValue(stray)}`);
  return { values, positionals, passThrough };
}

/**
 * Run the CLI on `argv` (without `node` and the script path) and resolve to the exit code.
 *
 * @param argv - The command-line arguments.
 * @param io - Where to write (defaults to process stdout/stderr).
 * @returns The exit code: 0 ok, 1 a check failed, 2 bad usage or input, 70 internal error.
 * @enforcedBy test/cli/cli.test.ts > polgrad cli > rejects: an unknown command exits 2 with a suggestion and empty stdout
 * @enforcedBy test/cli/contract.test.ts > cli contract > rejects: every malformed option is one usage error naming the option
 * @since 0.1.0
 */
export async function main(argv: readonly string[], io: CommandIO = defaultIO): Promise<number> {
  const [name, ...given] = argv;
  const json = argv.includes("--json");
  // --wide is every command's: taken out before the command's own options are parsed (never
  // after `--`, where a pass-through command's arguments are another program's).
  const end = given.indexOf("--");
  const before = end < 0 ? given : given.slice(0, end);
  const wide = before.includes("--wide");
  const rest = wide
    ? [...before.filter((a) => a !== "--wide"), ...(end < 0 ? [] : given.slice(end))]
    : given;
  const width =
    wide || json || rest.includes("--markdown") ? Number.POSITIVE_INFINITY : textWidth(io.columns);
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(mainHelp(textWidth(io.columns)));
    return 0;
  }
  if (name === "--version" || name === "-v") {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  try {
    if (cmd === undefined) {
      const near =
        name.length <= MAX_SUGGEST_LENGTH
          ? closestNames(
              name,
              COMMANDS.map((c) => c.name),
            )
          : [];
      const hint = near.length > 0 ? ` (did you mean '${near[0]}'?)` : "";
      throw new UsageError(
        "polgrad",
        "command",
        `polgrad: command must be one of ${COMMANDS.map((c) => c.name).join(", ")}; got '${safeText(name)}'${hint}`,
      );
    }
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout(commandHelp(cmd, wide ? Number.POSITIVE_INFINITY : textWidth(io.columns)));
      return 0;
    }
    const { values, positionals, passThrough } = parseCommandArgs(cmd, rest);
    // An output never lands on an input: checked before anything is read, and again by the writer
    // against every file the command opens (docs/cli.md#writing-files).
    checkOutputsApart(`polgrad ${cmd.name}`, cmd, values, positionals);
    guardInputs(true);
    // Notices are held until the command ends: printed on success or a failed check, dropped
    // under an error with --json (the error document is then the one stderr line).
    const notices: string[] = [];
    const stdout = Number.isFinite(width) ? (t: string) => io.stdout(fitText(t, width)) : io.stdout;
    const code = await cmd
      .run(
        values,
        positionals,
        { ...io, stdout, width, notice: (t) => notices.push(t) },
        passThrough,
      )
      .catch((err: unknown) => {
        if (!json) for (const n of notices) io.stderr(n);
        throw err;
      });
    for (const n of notices) io.stderr(n);
    guardInputs(false);
    return code;
  } catch (err) {
    guardInputs(false);
    const hints: string[] = [];
    if (err instanceof UsageError)
      hints.push(cmd !== undefined ? `polgrad ${cmd.name} --help` : "polgrad --help");
    if (err instanceof PolgradError && err.arg === "config.normLen") {
      hints.push(
        "set the generation budget with --norm-len N (dr_grpo ships without one on purpose)",
      );
    }
    io.stderr(renderError(err, json, hints, cmd?.name ?? null));
    return err instanceof PolgradError ? 2 : 70;
  }
}

/**
 * Run the CLI as the `polgrad` process: {@link main} on the process streams, then wait until
 * stdout and stderr are flushed. A closed pipe (EPIPE, e.g. `| head`) ends quietly with 141; any
 * other write error is one `error[E_IO]` line on stderr and exit 2 (docs/cli.md#output-streams).
 * An argument Node decoded with U+FFFD for bytes that are not UTF-8 is read again from
 * /proc/self/cmdline ({@link recoverArgv}), so that a file name of any bytes names its file.
 *
 * @param argv - The command-line arguments (without `node` and the script path).
 * @returns The exit status for `process.exitCode`.
 * @enforcedBy test/cli/contract.test.ts > output streams > regression: a reader closing the pipe ends quietly with 141 and no stack trace
 * @enforcedBy test/cli/contract.test.ts > output streams > regression: a full device on stdout is one E_IO line and exit 2
 * @since 0.1.0
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  cleanUpOnSignals();
  const { io, finish } = processIO(
    argv.includes("--json"),
    COMMANDS.find((c) => c.name === argv[0])?.name ?? null,
  );
  let code: number;
  try {
    code = await main(recoverArgv(argv), io);
  } catch (err) {
    io.stderr(renderError(err, false));
    code = 70;
  }
  return finish(code);
}
