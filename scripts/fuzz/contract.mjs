/**
 * The CLI contract of docs/cli.md#errors-and-exit-codes as a checker, shared by the test runner
 * (test/cli/_run.ts) and the fuzzer (scripts/fuzz/targets.mjs).
 */

/** Longest stderr line the contract allows (src/cli/output.ts MAX_ERROR_LINE). */
/** A notice line (names read, tensors set aside): `polgrad <command>: <text>`, never an error. */
const NOTICE = /^polgrad [a-z][a-z-]*(?: [a-z]+)?: (?!.*\berror\[)/;

export const MAX_LINE = 2000;

const ERROR_LINE = /^error\[E_[A-Z_]+\]: \S/;
// A V8 stack frame (`    at fn (file:///…:12:5)`, `    at node:internal/…`) or Node's crash banner.
const STACK = /^\s+at (?:.* \()?(?:file:|node:|\/)[^)]*:\d+:\d+\)?$|node:internal|^Node\.js v\d/m;
// Raw control characters other than the line feed that separates lines.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * How `run` breaks the CLI contract, as readable strings; empty when it keeps it. Exit code in
 * {0, 1, 2} (and `expected` when given); no stack trace and no raw control character on either
 * stream; on exit 2 stdout is empty and stderr is exactly one `error[E_…]` line plus `Hint:`
 * lines (one JSON line under `--json`); on exit 0 stderr is empty; every stderr line is at most
 * {@link MAX_LINE} characters.
 */
export function contractViolations(run, expected) {
  const out = [];
  if (run.code !== 0 && run.code !== 1 && run.code !== 2) out.push(`exit code ${run.code}`);
  else if (expected !== undefined && run.code !== expected)
    out.push(`exit code ${run.code}, expected ${expected}`);
  for (const [name, text] of [
    ["stdout", run.stdout],
    ["stderr", run.stderr],
  ]) {
    if (STACK.test(text)) out.push(`a stack trace on ${name}`);
    if (CONTROL.test(text)) out.push(`a raw control character on ${name}`);
  }
  const lines = run.stderr === "" ? [] : run.stderr.replace(/\n$/, "").split("\n");
  const longest = Math.max(0, ...lines.map((l) => l.length));
  if (longest > MAX_LINE) out.push(`a stderr line of ${longest} characters`);
  // On success stderr holds at most notices: `polgrad <command>: …` lines (docs/cli.md).
  if (run.code === 0 && lines.some((l) => !NOTICE.test(l)))
    out.push("stderr is not empty on success (beyond notice lines)");
  if (run.code === 2) {
    if (run.stdout !== "") out.push("stdout is not empty on an error");
    if (run.args.includes("--json")) {
      if (lines.length !== 1 || !lines[0]?.startsWith("{"))
        out.push(`stderr is not one JSON line: ${JSON.stringify(run.stderr.slice(0, 300))}`);
    } else if (
      lines.length === 0 ||
      !ERROR_LINE.test(lines[0]) ||
      lines.slice(1).some((l) => !l.startsWith("Hint: "))
    )
      out.push(
        `stderr is not one error line plus hints: ${JSON.stringify(run.stderr.slice(0, 300))}`,
      );
  }
  return out;
}
