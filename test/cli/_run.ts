/**
 * The shared CLI runner of the test suite: run `polgrad` in-process (`main()` with a captured
 * CommandIO, fast) or as the built binary (spawnSync of bin/polgrad.js; `npm test` builds first),
 * and validate every `--json` document it sees against its JSON Schema in docs/schemas/ (ajv,
 * draft 2020-12). A document that fails its schema throws, so no test can pass on one.
 * {@link contractViolations} lists how a run breaks the CLI contract of docs/cli.md.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { contractViolations as check, MAX_LINE } from "../../scripts/fuzz/contract.mjs";
import { main } from "../../src/cli/main.js";
import { MAX_ERROR_LINE } from "../../src/cli/output.js";
import { IoError } from "../../src/errors.js";

if (MAX_LINE !== MAX_ERROR_LINE)
  throw new Error("scripts/fuzz/contract.mjs MAX_LINE must equal MAX_ERROR_LINE");

/** The built binary. */
export const BIN: string = fileURLToPath(new URL("../../bin/polgrad.js", import.meta.url));

/** The folder of the JSON Schemas. */
export const SCHEMA_DIR: string = fileURLToPath(new URL("../../docs/schemas/", import.meta.url));

/** One finished CLI run. */
export interface CliRun {
  readonly args: readonly string[];
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Every schema file name in docs/schemas/. */
export const SCHEMA_FILES: readonly string[] = readdirSync(SCHEMA_DIR)
  .filter((f) => f.endsWith(".schema.json"))
  .sort();

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
for (const f of SCHEMA_FILES) ajv.addSchema(JSON.parse(readFileSync(join(SCHEMA_DIR, f), "utf8")));

/** The compiled validator of one schema file, e.g. `loss.schema.json`. */
export function validatorOf(file: string): ValidateFunction {
  const v = ajv.getSchema(file);
  if (v === undefined) throw new Error(`no schema ${file} in docs/schemas/`);
  return v;
}

/** The schema file of a success document's `command` (`contract check` → contract-check). */
export function schemaFileOf(command: string): string {
  return `${command.replace(/ /g, "-")}.schema.json`;
}

/** How many documents each schema validated in this test file (schemas.test.ts checks coverage). */
export const VALIDATED: Map<string, number> = new Map();

/** Validate one parsed document against `file`; throw with ajv's errors when it fails. */
export function validateDocument(file: string, doc: unknown, where: string): void {
  const v = validatorOf(file);
  if (!v(doc)) {
    const errs = (v.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`);
    throw new Error(`${where}: the document does not validate against ${file}: ${errs.join("; ")}`);
  }
  VALIDATED.set(file, (VALIDATED.get(file) ?? 0) + 1);
}

/**
 * Validate every `--json` document of a run: stdout's success document against its command's
 * schema, each JSON line on stderr against error.schema.json. Throws on the first failure.
 */
export function validateDocuments(run: CliRun): void {
  if (!run.args.includes("--json")) return;
  const where = `polgrad ${run.args.join(" ")}`;
  if (run.stdout !== "") {
    let doc: { command?: unknown };
    try {
      doc = JSON.parse(run.stdout);
    } catch (e) {
      throw new Error(`${where}: stdout is not one JSON document (${(e as Error).message})`);
    }
    validateDocument(schemaFileOf(String(doc.command)), doc, where);
  }
  for (const l of run.stderr.split("\n")) {
    if (!l.startsWith("{")) continue;
    validateDocument("error.schema.json", JSON.parse(l), `${where} (stderr)`);
  }
}

/**
 * A CommandIO that captures what a command writes (for tests that call a command's `run()`
 * directly, on its rejects: no `--json` document is written there).
 */
export function capturedIO(): {
  readonly out: { stdout: string; stderr: string };
  readonly io: { stdout: (t: string) => void; stderr: (t: string) => void };
} {
  const out = { stdout: "", stderr: "" };
  return {
    out,
    io: {
      stdout: (t: string) => {
        out.stdout += t;
      },
      stderr: (t: string) => {
        out.stderr += t;
      },
    },
  };
}

/**
 * Run `main()` in-process with a captured CommandIO; validates `--json` documents. `stdin`, when
 * given, is what `-` reads (bounded like the process's stdin); without it, `-` has no stdin.
 */
export async function runMain(
  args: readonly string[],
  options: { readonly stdin?: Uint8Array; readonly columns?: number } = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const { stdin, columns } = options;
  const code = await main(args, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    stderrIsTTY: false,
    ...(columns === undefined ? {} : { columns }),
    ...(stdin === undefined
      ? {}
      : {
          readStdin: (maxBytes: number) => {
            if (stdin.length > maxBytes)
              throw new IoError(
                "polgrad",
                "stdin",
                `polgrad: stdin must be at most ${maxBytes} bytes; got more`,
                "<stdin>",
              );
            return stdin;
          },
        }),
  });
  const run = { args, code, stdout, stderr };
  validateDocuments(run);
  return run;
}

/** One run of the built binary: also the signal that ended it and whether it timed out. */
export interface BinRun extends CliRun {
  readonly signal: NodeJS.Signals | null;
  /** The child was killed at `timeoutMs` (a hang) or could not be spawned. */
  readonly timedOut: boolean;
}

/**
 * Run the built binary (spawnSync, killed after `timeoutMs`, default 60 s); validates `--json`
 * documents (also those of a run that timed out: a partial document fails its schema).
 */
export function runBin(
  args: readonly string[],
  options: {
    readonly timeoutMs?: number;
    readonly env?: Record<string, string>;
    /** Bytes piped to the child's stdin (default: an empty stdin). */
    readonly input?: Uint8Array;
    /** Another build of the binary (an installed package's bin/polgrad.js). */
    readonly bin?: string;
    readonly cwd?: string;
  } = {},
): BinRun {
  const r = spawnSync(process.execPath, [options.bin ?? BIN, ...args], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    encoding: "utf8",
    input: options.input ?? new Uint8Array(0),
    env: { ...process.env, NO_COLOR: "1", POLGRAD_DEBUG: "", ...options.env },
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 64 * 2 ** 20,
  });
  const run = {
    args,
    code: r.status,
    signal: r.signal,
    stdout: r.stdout,
    stderr: r.stderr,
    timedOut: r.error !== undefined,
  };
  validateDocuments(run);
  return run;
}

/**
 * How `run` breaks the CLI contract (docs/cli.md#errors-and-exit-codes), as readable strings;
 * empty when it keeps it (the checker lives in scripts/fuzz/contract.mjs, shared with the fuzzer).
 */
export function contractViolations(run: CliRun, expected?: 0 | 1 | 2): string[] {
  return check(run, expected);
}

/**
 * A `--json` document's text without `result.source` (the batch's path and format, which differ
 * between two reads of one batch from different files or stdin), for comparing their results.
 */
export function withoutSource(stdout: string): string {
  const doc = JSON.parse(stdout) as { result?: Record<string, unknown> };
  if (doc.result !== undefined) delete doc.result.source;
  return JSON.stringify(doc);
}
