/**
 * Outputs apart from inputs (docs/cli.md#writing-files): before a command reads anything, every
 * path it will write (options with role `output`, output positionals) is resolved (real path,
 * device, inode) against every path it will read (role `input`), and an output that is an input,
 * or lies inside a folder the command reads (a run folder), is an error naming both.
 */
import { type Stats, statSync } from "node:fs";
import { sep } from "node:path";
import { safeText } from "../core/message.js";
import { IoError } from "../errors.js";
import { realTarget } from "../io/_internal/inputs.js";
import { fsPath } from "../platform/fsPath.js";
import type { Command, OptionValues } from "./command.js";

interface Place {
  /** How the user named it: `--batch`, `PATH`. */
  readonly label: string;
  readonly path: string;
}

function stat(path: string): Stats | undefined {
  try {
    return statSync(fsPath(path));
  } catch {
    return undefined;
  }
}

/** The paths a command's arguments name, by role. */
function places(
  cmd: Command,
  values: OptionValues,
  positionals: readonly string[],
): { inputs: Place[]; outputs: Place[] } {
  const inputs: Place[] = [];
  const outputs: Place[] = [];
  for (const [name, spec] of Object.entries(cmd.options)) {
    const v = values[name];
    if (spec.role === undefined || typeof v !== "string" || v === "-" || v === "") continue;
    // `--config @file.json` names a file; inline JSON does not.
    const path = v.startsWith("@") ? v.slice(1) : v;
    (spec.role === "input" ? inputs : outputs).push({ label: `--${name}`, path });
  }
  const roles = cmd.positionalRoles ?? [];
  positionals.forEach((p, i) => {
    const role = roles[Math.min(i, roles.length - 1)] ?? null;
    if (role !== null && p !== "-" && p !== "")
      (role === "input" ? inputs : outputs).push({ label: "PATH", path: p });
  });
  return { inputs, outputs };
}

/**
 * Refuse a command line whose output would replace one of its inputs or land inside a folder it
 * reads.
 *
 * @param fn - The command (`polgrad loss`), named in the error.
 * @throws {IoError} E_IO naming the output, the input and their flags.
 */
export function checkOutputsApart(
  fn: string,
  cmd: Command,
  values: OptionValues,
  positionals: readonly string[],
): void {
  const { inputs, outputs } = places(cmd, values, positionals);
  if (outputs.length === 0 || inputs.length === 0) return;
  for (const out of outputs) {
    const target = realTarget(out.path);
    const os = stat(out.path);
    for (const input of inputs) {
      const is = stat(input.path);
      if (is === undefined) continue;
      const real = realTarget(input.path);
      const same =
        (os !== undefined && os.dev === is.dev && os.ino === is.ino) ||
        (target !== null && target === real);
      const inside =
        is.isDirectory() && target !== null && real !== null && target.startsWith(real + sep);
      if (!same && !inside) continue;
      const what = same
        ? `the ${input.label} ${is.isDirectory() ? "folder" : "file"} it reads`
        : `inside the ${input.label} folder it reads`;
      throw new IoError(
        fn,
        out.label,
        `${fn}: ${out.label} must not be an input of the command (an output never replaces what it reads); got ${safeText(out.path)}, ${what} (${safeText(input.path)})`,
        out.path,
      );
    }
  }
}
