/**
 * The argument names a TRL GRPO launch takes beside GRPOConfig's own fields, per recorded TRL
 * release: transformers' `TrainingArguments` fields (the union over the recorded transformers
 * wheels) and the fields of the dataclasses TRL's `grpo` script parses (ScriptArguments,
 * GRPOScriptArguments, ModelConfig, DatasetMixtureConfig, any @dataclass of
 * examples/scripts/*grpo*.py), as `tools/record-releases/trlArguments.py` recorded them in
 * `data/trl-arguments.json` (copied to `dist/` by the build). Read on first use and kept, as
 * store.ts reads the release facts: under Node synchronously beside this module
 * (`process.getBuiltinModule("node:fs")`, so no `node:` import is reachable from the browser entry);
 * in a browser the caller passes the parsed file to `loadTrlArguments` first. Browser-safe.
 */
import { fmtValue, mustBe } from "../../core/message.js";
import { oneOf } from "../../core/names.js";
import { fail, IoError } from "../../errors.js";

/** The format of `data/trl-arguments.json`. */
export const TRL_ARGUMENTS_FORMAT = "polgrad-trl-arguments/1";

/** The file name of the recorded TRL argument fields, under `src/conformance/releases/data/`. */
export const TRL_ARGUMENTS_FILE = "trl-arguments.json";

/** Where a key is declared: `TrainingArguments`, or the TRL dataclass's name. */
export interface TrlArgumentKey {
  readonly source: string;
}

interface Run {
  readonly from: string;
  readonly to: string;
}

interface TrlArgumentsData {
  readonly format: string;
  readonly expanded: {
    readonly wheels: number;
    readonly trainingArgumentsRows: number;
    readonly releases: number;
    readonly classRows: number;
    readonly fieldRows: number;
  };
  readonly transformers: {
    readonly wheels: readonly { readonly version: string }[];
    readonly fields: readonly { readonly key: string; readonly runs: readonly Run[] }[];
  };
  readonly trl: {
    readonly releases: readonly { readonly label: string; readonly commit: string }[];
    readonly classes: readonly { readonly class: string; readonly runs: readonly Run[] }[];
    readonly fields: readonly {
      readonly key: string;
      readonly class: string;
      readonly runs: readonly Run[];
    }[];
  };
}

/** The expanded view: TrainingArguments' key union and each release's (key, class) rows. */
interface Expanded {
  readonly labels: readonly string[];
  readonly trainingArguments: readonly string[];
  readonly perRelease: ReadonlyMap<string, readonly (readonly [string, string])[]>;
}

let expanded: Expanded | null = null;
const keysCache = new Map<string, ReadonlyMap<string, TrlArgumentKey>>();

// The folder of the data file: beside this module in src/ (tests) and in dist/ (the package).
// Held in a variable so that a bundler does not take `new URL(…, import.meta.url)` for an asset.
const here: string = import.meta.url;

interface SyncFs {
  readFileSync(path: URL, encoding: "utf8"): string;
}

function readPackageFile(fn: string): unknown {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const fs =
    typeof proc?.getBuiltinModule === "function"
      ? (proc.getBuiltinModule("node:fs") as SyncFs | undefined)
      : undefined;
  if (fs === undefined)
    throw fail(
      IoError,
      fn,
      "label",
      `usable once TRL's argument fields are loaded (without a file system: loadTrlArguments(json of ${TRL_ARGUMENTS_FILE}) first)`,
      "no file system",
    );
  const url = new URL(`data/${TRL_ARGUMENTS_FILE}`, here);
  let text: string;
  try {
    text = fs.readFileSync(url, "utf8");
  } catch (e) {
    throw new IoError(
      fn,
      "label",
      mustBe(
        fn,
        TRL_ARGUMENTS_FILE,
        `a readable file ${url.pathname} (the package's recorded TRL argument fields)`,
        (e as { code?: string }).code ?? String(e),
      ),
      url.pathname,
    );
  }
  return JSON.parse(text) as unknown;
}

/** The indices [from, to] of a run in `order`, or an IoError. */
function span(run: Run, order: ReadonlyMap<string, number>, bad: (got: unknown) => IoError) {
  const a = order.get(run?.from);
  const b = order.get(run?.to);
  if (a === undefined || b === undefined || b < a) throw bad(run);
  return [a, b] as const;
}

function expand(data: unknown, fn: string): Expanded {
  const bad = (where: string, rule: string) => (got: unknown) =>
    new IoError(
      fn,
      TRL_ARGUMENTS_FILE,
      mustBe(fn, `${TRL_ARGUMENTS_FILE}${where}`, rule, fmtValue(got)),
    );
  const d = data as TrlArgumentsData;
  if (typeof data !== "object" || data === null || d.format !== TRL_ARGUMENTS_FORMAT)
    throw bad(".format", `"${TRL_ARGUMENTS_FORMAT}"`)((d as { format?: unknown } | null)?.format);
  if (
    !Array.isArray(d.transformers?.wheels) ||
    !Array.isArray(d.transformers?.fields) ||
    !Array.isArray(d.trl?.releases) ||
    !Array.isArray(d.trl?.classes) ||
    !Array.isArray(d.trl?.fields)
  )
    throw bad(
      "",
      "an object with transformers.{wheels,fields} and trl.{releases,classes,fields}",
    )(Object.keys(data));
  const versions = new Map(d.transformers.wheels.map((w, i) => [w.version, i]));
  const labels = d.trl.releases.map((r) => r.label);
  const order = new Map(labels.map((l, i) => [l, i]));
  let taRows = 0;
  const trainingArguments = d.transformers.fields.map((f) => {
    for (const run of f.runs) {
      const [a, b] = span(run, versions, bad(`.transformers.fields[${f.key}]`, "a run of wheels"));
      taRows += b - a + 1;
    }
    return f.key;
  });
  let classRows = 0;
  for (const c of d.trl.classes)
    for (const run of c.runs) {
      const [a, b] = span(run, order, bad(`.trl.classes[${c.class}]`, "a run of releases"));
      classRows += b - a + 1;
    }
  const rows: [string, string][][] = labels.map(() => []);
  for (const f of d.trl.fields)
    for (const run of f.runs) {
      const [a, b] = span(run, order, bad(`.trl.fields[${f.key}]`, "a run of releases"));
      for (let i = a; i <= b; i++) rows[i]?.push([f.key, f.class]);
    }
  const got = {
    wheels: d.transformers.wheels.length,
    trainingArgumentsRows: taRows,
    releases: labels.length,
    classRows,
    fieldRows: rows.reduce((n, r) => n + r.length, 0),
  };
  const want = d.expanded;
  if (Object.entries(got).some(([k, v]) => want?.[k as keyof typeof got] !== v))
    throw bad(".expanded", `the counts the data expands to, ${JSON.stringify(got)}`)(want);
  return {
    labels,
    trainingArguments,
    perRelease: new Map(labels.map((l, i) => [l, rows[i] ?? []])),
  };
}

/**
 * Give the parsed `trl-arguments.json` where there is no file system (a browser), e.g. from a
 * bundler's dynamic `import("polgrad/releases/trl-arguments.json")`. Under Node it is read on first
 * use and this is not needed.
 *
 * @param json - The parsed JSON of `data/trl-arguments.json`.
 * @throws {IoError} E_IO when it is not the format `polgrad-trl-arguments/1` or does not expand to
 *   the counts its recorder wrote.
 * @derivation docs/conformance/explain.md#every-key
 * @enforcedBy test/conformance/releases/trlArguments.test.ts > trlArgumentKeys > golden: loadTrlArguments checks the format and the counts
 * @since 0.2.0
 */
export function loadTrlArguments(json: unknown): void {
  expanded = expand(json, "loadTrlArguments");
  keysCache.clear();
}

/**
 * Every key a TRL GRPO launch of release `label` takes beside GRPOConfig's own fields: that
 * release's TRL dataclass fields (source: the class name, `ScriptArguments`, `GRPOScriptArguments`,
 * `ModelConfig`, `DatasetMixtureConfig` or an example script's dataclass), then every
 * `TrainingArguments` field of any recorded transformers wheel not already listed (source
 * `TrainingArguments`). A key GRPOConfig itself declares appears only where one of those classes
 * declares it too.
 *
 * @param label - A TRL release label of `data/trl.json` (`v0.14.0` … `v1.9.0`, `f2cd5771`).
 * @returns The keys in that order, each with its one-word source.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for a label that is not recorded.
 * @throws {IoError} E_IO when the data is not loaded and cannot be read here, or is malformed.
 * @derivation docs/conformance/explain.md#every-key
 * @enforcedBy test/conformance/releases/trlArguments.test.ts > trlArgumentKeys > golden: recorded keys and sources, read from the upstream mirror
 * @since 0.2.0
 */
export function trlArgumentKeys(label: string): ReadonlyMap<string, TrlArgumentKey> {
  const fn = "trlArgumentKeys";
  if (expanded === null) expanded = expand(readPackageFile(fn), fn);
  const hit = keysCache.get(label);
  if (hit !== undefined) return hit;
  const l = oneOf(fn, "label", label, expanded.labels);
  const out = new Map<string, TrlArgumentKey>();
  for (const [key, source] of expanded.perRelease.get(l) ?? [])
    if (!out.has(key)) out.set(key, Object.freeze({ source }));
  const ta = Object.freeze({ source: "TrainingArguments" });
  for (const key of expanded.trainingArguments) if (!out.has(key)) out.set(key, ta);
  keysCache.set(l, out);
  return out;
}

/** Forget the loaded data (tests: the browser path). @internal */
export function _resetTrlArguments(): void {
  expanded = null;
  keysCache.clear();
}
